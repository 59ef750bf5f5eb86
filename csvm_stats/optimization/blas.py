"""One BLAS thread while a CSVM is fitted (:func:`one_blas_thread`).

A kernel fit's BLAS work is the eigendecomposition of the n x n kernel
matrix (:func:`csvm_stats.optimization.kernels.factorise`) and small
products; the node QPs are single-threaded numba code. OpenBLAS threads spin
while they wait, and that time is CPU time: on the 2-core test machine under
load, ``eigh`` of an RBF kernel matrix took 2.5-4x the CPU seconds (and
1.5-3x the wall seconds) with its default 2 threads than with one, at
n = 300, 558, 1000 and 2000, and a Wisconsin RBF fit at exact rank 1.1-4.8
CPU-s instead of 0.4 (``benchmarks/node_qp.py --gram``, ``results/node_qp_gram.md``).

The limit is process-wide while a fit runs (threadpoolctl sets the BLAS
libraries' global thread count; it is not thread-local): BLAS calls of other
Python threads run on one thread meanwhile. The previous counts come back
when the fit returns or raises. Scikit-learn's KMeans limits BLAS the same way.
"""

from __future__ import annotations

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


def one_blas_thread(func: Callable[P, R]) -> Callable[P, R]:
    """Run ``func`` with every BLAS library limited to one thread; the previous limits come back after."""

    @wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with _controller().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return run
