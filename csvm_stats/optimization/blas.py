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
(whether it returns or raises). Scikit-learn's KMeans limits BLAS the same way.

The limit is set on the libraries directly, from whichever thread starts
the first fit. threadpoolctl itself lets only one Python thread (the first
that ever limited OpenBLAS, usually the main thread) change OpenBLAS's
pthreads pool, and silently ignores limits set from other threads; a fit in
a worker thread then factorised its kernel matrix with two BLAS threads,
whose ``eigh`` rounds differently, and its decision values differed from the
same fit run serially by up to 1e-6. With the direct setting a fit in a thread
gives bit-identical decision values (``tests/test_hostile_inputs.py``).
BLAS libraries built with OpenMP keep per-thread limits; a fit in a thread
limits only its own thread there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache, wraps
from typing import ParamSpec, TypeVar

from threadpoolctl import ThreadpoolController

P = ParamSpec("P")
R = TypeVar("R")


class _Limiter:
    """Set the BLAS libraries' thread counts to ``limits``; ``restore_original_limits`` puts the old counts back."""

    def __init__(self, libraries: list, limits: int) -> None:
        self.saved = [(lib, lib.get_num_threads()) for lib in libraries]
        for lib in libraries:
            _set_threads(lib, limits)

    def restore_original_limits(self) -> None:
        for lib, count in self.saved:
            if count is not None:
                _set_threads(lib, count)


def _set_threads(lib, count: int) -> None:
    # threadpoolctl's public setter ignores calls from any thread but the first that used it (see above)
    setter = getattr(lib, "_real_set_num_threads", None) or lib.set_num_threads
    setter(count)


class _BlasLibraries:
    """The BLAS libraries of the process, limited from any thread."""

    def __init__(self) -> None:
        self.libraries = [lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]

    def limit(self, limits: int, user_api: str = "blas") -> _Limiter:
        return _Limiter(self.libraries, limits)


@cache
def _controller() -> _BlasLibraries:
    """The BLAS libraries loaded in this process (found once, on the first fit)."""
    return _BlasLibraries()


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
