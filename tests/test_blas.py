"""One BLAS thread during a CSVM fit (csvm_stats.optimization.blas)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from csvm_stats.multiclass import engine as multiclass_engine
from csvm_stats.optimization import blas, engine
from csvm_stats.optimization.blas import one_blas_thread


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_blas_thread_limits_blas_inside_and_restores_the_limits_after():
    before = blas_threads()
    inside = one_blas_thread(blas_threads)()
    assert inside and all(n == 1 for n in inside)
    assert blas_threads() == before


def test_the_previous_blas_limits_come_back_when_the_function_raises():
    before = blas_threads()

    @one_blas_thread
    def fails() -> None:
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError, match="inside"):
        fails()
    assert blas_threads() == before


class FakeBlas:
    """A process-wide thread count with threadpoolctl's limiter semantics (save on limit, restore the saved)."""

    def __init__(self) -> None:
        self.threads = 4

    def limit(self, limits: int, user_api: str) -> FakeBlas.Limiter:
        return FakeBlas.Limiter(self, limits)

    class Limiter:
        def __init__(self, blas: FakeBlas, limits: int) -> None:
            self.blas, self.saved = blas, blas.threads
            blas.threads = limits

        def restore_original_limits(self) -> None:
            self.blas.threads = self.saved


def test_calls_overlapping_in_threads_share_one_limit_and_the_last_restores_it(monkeypatch):
    """Call A starts, B starts, A returns while B runs, B returns (as nested_cv(backend="threading") runs fits):
    one thread until the last call returns, then the count from before (each call limiting on its own would save
    A's limit in B and restore one thread for good). A fake library: OpenBLAS ignores limits set from some threads."""
    fake = FakeBlas()
    monkeypatch.setattr(blas, "_controller", lambda: fake)
    entered = {"a": threading.Event(), "b": threading.Event()}
    release = {"a": threading.Event(), "b": threading.Event()}
    seen: dict[str, int] = {}

    @one_blas_thread
    def call(name: str) -> None:
        entered[name].set()
        release[name].wait(10)
        seen[name] = fake.threads

    first = threading.Thread(target=call, args=("a",))
    second = threading.Thread(target=call, args=("b",))
    first.start()
    entered["a"].wait(10)
    second.start()
    entered["b"].wait(10)
    release["a"].set()
    first.join(10)
    b_alone = fake.threads
    release["b"].set()
    second.join(10)
    assert seen == {"a": 1, "b": 1} and b_alone == 1
    assert fake.threads == 4


def test_fit_csvm_factorises_the_kernel_with_one_blas_thread(monkeypatch):
    before = blas_threads()
    seen: list[list[int]] = []
    factorise = engine.factorise

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return factorise(*args, **kwargs)

    monkeypatch.setattr(engine, "factorise", spy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    engine.fit_csvm(X[:20], y[:20], X[20:], y[20:], kernel="rbf", min_counts={"tpr": 1}, solver="bnb")
    assert seen and all(n == 1 for n in seen[0])
    assert blas_threads() == before


def test_fit_multiclass_csvm_factorises_the_kernel_with_one_blas_thread(monkeypatch):
    before = blas_threads()
    seen: list[list[int]] = []
    factorise = multiclass_engine.factorise

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return factorise(*args, **kwargs)

    monkeypatch.setattr(multiclass_engine, "factorise", spy)
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], 10)
    X = rng.normal(size=(30, 2)) + 3.0 * np.c_[np.cos(2.1 * y), np.sin(2.1 * y)]
    train = np.arange(30) % 2 == 0
    multiclass_engine.fit_multiclass_csvm(X[train], y[train], X[~train], y[~train], 3, kernel="rbf",
                                          min_counts={0: 1}, solver="scip")
    assert seen and all(n == 1 for n in seen[0])
    assert blas_threads() == before
