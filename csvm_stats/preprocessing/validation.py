"""Checks of the fit and predict parameters, in one place.

:class:`~csvm_stats.models.model.CSVM`, :class:`~csvm_stats.interfaces.sklearn.CSVMClassifier`
and the command line call these functions, so every entry point refuses the
same bad values with the same message, which names the parameter, the value
and what is allowed. Booleans are never accepted as numbers (``True`` is not a
time limit), NaN and infinities never as limits, and a misspelt name gets a
did-you-mean suggestion.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.optimization.kernels import KERNELS as KERNEL_NAMES
from csvm_stats.preprocessing.wording import current_front_end, option
#: Seeds go to numpy and to the solvers' integer seed parameters (SCIP's is a C int).
MAX_SEED = 2**31 - 1


def did_you_mean(value: Any, choices: Sequence[str]) -> str:
    """`` (did you mean 'rbf'?)`` for a near miss among ``choices``, else an empty string."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value.lower(), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; else an error naming the choices and the nearest one."""
    if not isinstance(value, str) or value not in choices:
        raise DataError(f"{name} must be one of {tuple(choices)}, got {value!r}{did_you_mean(value, choices)}.")
    return value


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, type(None))) and not _is_numpy_bool(value)


def _is_numpy_bool(value: Any) -> bool:
    return type(value).__name__ == "bool" and type(value).__module__ == "numpy"


def check_positive(value: Any, name: str, what: str = "a positive number") -> float:
    """A finite number > 0 (not a bool, not NaN)."""
    if not _is_real(value) or not math.isfinite(float(value)) or float(value) <= 0:
        raise DataError(f"{name} must be {what}, got {value!r}.")
    return float(value)


def check_integer(value: Any, name: str, low: int = 1, high: int | None = None, none: bool = False) -> int | None:
    """A whole number in [low, high] (``None`` too when ``none``); 2.0 is accepted, 2.5 and True are not."""
    if value is None and none:
        return None
    ok = _is_real(value) and math.isfinite(float(value)) and float(value) == int(value)
    if not ok or int(value) < low or (high is not None and int(value) > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise DataError(f"{name} must be {'None or ' if none else ''}a whole number {span}, got {value!r}.")
    return int(value)


def check_flag(value: Any, name: str) -> bool:
    """``True`` or ``False`` (numpy booleans too); 0/1 and strings are refused."""
    if not isinstance(value, bool) and not _is_numpy_bool(value):
        raise DataError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def check_time_limit(value: Any) -> float:
    """Seconds the solver may run: a finite number >= 0 (0 stops at the first check, with or without a solution)."""
    if not _is_real(value) or not math.isfinite(float(value)) or float(value) < 0:
        raise DataError(f"time_limit must be a non-negative number of seconds (for example 300), got {value!r}.")
    return float(value)


def check_mip_gap(value: Any) -> float:
    """The relative optimality gap at which the search stops: a number in [0, 1)."""
    if not _is_real(value) or not 0 <= float(value) < 1:
        raise DataError(f"mip_gap must be a relative gap in [0, 1) (for example 1e-4), got {value!r}.")
    return float(value)


def check_random_state(value: Any) -> int | None:
    """``None`` (a seed is drawn) or a whole number from 0 to :data:`MAX_SEED`."""
    if isinstance(value, str):
        raise DataError(f"random_state must be None or a whole number from 0 to {MAX_SEED}, got the text {value!r}.")
    return check_integer(value, "random_state", low=0, high=MAX_SEED, none=True)


def check_kernel(kernel: Any) -> Any:
    """A kernel name of :data:`KERNEL_NAMES` or a callable ``k(X, Z) -> Gram matrix``."""
    if callable(kernel):
        return kernel
    if not isinstance(kernel, str) or kernel not in KERNEL_NAMES:
        raise DataError(
            f"kernel must be one of {KERNEL_NAMES} or a callable k(X, Z), got {kernel!r}"
            f"{did_you_mean(kernel, KERNEL_NAMES)}."
        )
    return kernel


#: Each kernel parameter's default and the kernels that use it.
KERNEL_PARAMETERS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "gamma": ("scale", ("rbf", "poly")), "degree": (3, ("poly",)), "coef0": (1.0, ("poly",)),
}


def check_kernel_options(kernel: Any, gamma: Any, degree: Any, coef0: Any, rank: Any) -> None:
    """The kernel and its parameters; a parameter the kernel does not use must keep its default.

    ``gamma`` is ``"scale"`` or a positive number and is used by rbf and poly
    only (so ``kernel="linear"`` with a numeric gamma is an error, not ignored);
    ``degree`` is a whole number >= 1 and ``coef0`` a finite number, both used
    by poly only (so a ``degree`` other than 3 or a ``coef0`` other than 1 with
    another kernel is an error too); ``rank`` is ``None`` or a whole number >= 1.
    A callable kernel uses none of gamma, degree and coef0.
    """
    check_kernel(kernel)
    if isinstance(gamma, str):
        if gamma != "scale":
            raise DataError(f"gamma must be a positive number or 'scale', got {gamma!r}{did_you_mean(gamma, ['scale'])}.")
    else:
        check_positive(gamma, "gamma", "a positive number or 'scale'")
    check_integer(degree, "degree", low=1, high=100)
    if not _is_real(coef0) or not math.isfinite(float(coef0)):
        raise DataError(f"coef0 must be a finite number, got {coef0!r}.")
    check_integer(rank, "rank", low=1, none=True)
    for parameter, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
        default, users = KERNEL_PARAMETERS[parameter]
        if value == default or (not callable(kernel) and kernel in users):
            continue
        used = "a callable kernel" if callable(kernel) else option("kernel", kernel)
        keep = f"leave {parameter} at {default!r}" if current_front_end() == "python" else f"leave {option(parameter)} out"
        raise DataError(
            f"{option(parameter, value)} has no effect with {used}; {keep} or use "
            f"{' or '.join(option('kernel', u) for u in users)}."
        )


def check_big_m(value: Any) -> float | None:
    """``None`` (proven per-point bounds) or a positive finite big-M constant."""
    return None if value is None else check_positive(value, "big_m", "None or a positive number")


def check_solver_options(*, time_limit: Any, mip_gap: Any, threads: Any, verbose: Any, seed: Any) -> None:
    """The options every solver backend honours (called by :class:`~csvm_stats.optimization.solvers.base.SolverOptions`)."""
    check_time_limit(time_limit)
    check_mip_gap(mip_gap)
    check_integer(threads, "threads", low=1, none=True)
    check_flag(verbose, "verbose")
    check_integer(seed, "the solver seed (random_state)", low=0, high=MAX_SEED)


def check_fit_options(*, solver: Any, solver_names: Sequence[str], random_state: Any, warm_start: Any) -> None:
    """The options of ``CSVM.fit`` that do not go into the solver options, each error naming its parameter."""
    check_choice(solver, "solver", solver_names)
    check_random_state(random_state)
    check_flag(warm_start, "warm_start")


def check_feature_table(X: Any, name: str = "X") -> None:
    """Refuse text (or other non-numeric) feature columns by name, before numpy's conversion error.

    A DataFrame names its non-numeric columns; an array of objects names the
    column positions holding values that are not numbers. Booleans count as numeric.
    """
    complex_array = isinstance(X, np.ndarray) and np.iscomplexobj(X)
    if complex_array or (isinstance(X, pd.DataFrame) and any(pd.api.types.is_complex_dtype(t) for t in X.dtypes)):
        raise DataError(  # "Complex data not supported" is scikit-learn's wording, which its checks expect
            f"Complex data not supported: {name} holds complex numbers, whose imaginary part would be dropped; "
            "give the real and imaginary parts (or the modulus) as separate real columns."
        )
    if isinstance(X, pd.DataFrame):
        check_unique_columns(X, name)
        bad = [str(c) for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))]
        if bad:
            raise DataError(f"{name} has non-numeric column(s) {bad[:10]}; code them as numbers first.")
        return
    values = np.asarray(X, dtype=object) if not isinstance(X, np.ndarray) else X
    if values.dtype != object or values.ndim != 2:
        return
    bad_columns = []
    for j in range(values.shape[1]):
        try:
            np.asarray(values[:, j], dtype=np.float64)
        except ValueError:  # text; a TypeError (a dict, a list) is numpy's to report, as scikit-learn expects
            bad_columns.append(j)
    if bad_columns:
        raise DataError(f"{name} has non-numeric values in column(s) {bad_columns[:10]} (0-based); code them as numbers.")


def check_unique_columns(frame: pd.DataFrame, name: str = "data") -> None:
    """Refuse repeated column names (one of the columns would be used silently)."""
    names = pd.Index([str(c) for c in frame.columns])
    repeated = sorted(set(names[names.duplicated()]))
    if repeated:
        raise DataError(f"{name} has duplicated column name(s) {repeated}; give every column its own name.")


def check_labels_present(y: Any, name: str = "y") -> None:
    """Refuse missing labels (None, NaN, pd.NA), naming how many and the first positions."""
    missing = pd.isna(pd.Series(np.asarray(y, dtype=object).ravel() if not isinstance(y, pd.Series) else y)).to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise DataError(
            f"{name} has {rows.size} missing label(s) (None or NaN), at position(s) {rows[:5].tolist()}; "
            "remove those rows or give them a label."
        )
