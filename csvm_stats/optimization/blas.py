"""One BLAS thread while a CSVM is fitted (:func:`one_blas_thread`).

A kernel fit's BLAS work is the eigendecomposition of the n x n kernel
matrix (:func:`csvm_stats.optimization.kernels.factorise`) and small
products; the node QPs are single-threaded numba code. OpenBLAS threads spin
while they wait, and that time is CPU time: on the 2-core test machine under
load, ``eigh`` of an RBF kernel matrix took 1.9x (n = 300) to 20x (n = 1000)
the CPU seconds with its default 2 threads than with one, and a Wisconsin
RBF fit at exact rank 2.76 CPU-s (median of 2) instead of 0.48
(``benchmarks/node_qp.py --gram``, ``results/node_qp_gram.md``).

The limit is process-wide while a fit runs (threadpoolctl sets the BLAS
libraries' global thread count; it is not thread-local): BLAS calls of other
Python threads run on one thread meanwhile. Fits that overlap in threads
(``nested_cv(..., backend="threading")``) share one limit: the first to
start sets it, the last to end restores the counts from before the first
(whether it returns or raises). OpenBLAS may ignore a limit set from a
worker thread (measured: after the main thread has set and restored one), so
fits in threads may keep BLAS's threads. Scikit-learn's KMeans limits BLAS the
same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache, wraps
from typing import ParamSpec, TypeVar

from threadpoolctl import ThreadpoolController

P = ParamSpec("P")
R = TypeVar("R")


@cache
def _controller() -> ThreadpoolController:
    """The BLAS libraries loaded in this process (found once, on the first fit)."""
    return ThreadpoolController()


class _SharedLimit:
    """One BLAS thread while any fit runs: set when the first fit enters, restored when the last one leaves.

    (Each fit entering threadpoolctl's limiter on its own would save the limit
    another running fit had set, and restore one thread for good.)
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.limiter = None

    def __enter__(self) -> None:
        with self.lock:
            if self.running == 0:
                self.limiter = _controller().limit(limits=1, user_api="blas")
            self.running += 1

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.running -= 1
            if self.running == 0:
                self.limiter.restore_original_limits()
                self.limiter = None


_LIMIT = _SharedLimit()


def one_blas_thread(func: Callable[P, R]) -> Callable[P, R]:
    """Run ``func`` with every BLAS library limited to one thread (shared by overlapping calls, see above)."""

    @wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with _LIMIT:
            return func(*args, **kwargs)

    return run
