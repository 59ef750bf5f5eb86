"""Options named in messages as the caller writes them: Python keywords or command-line flags.

An error that gives advice ("say which rate to guarantee: guarantee='tpr'")
must name the option in the syntax of the front end the user is on. The
library writes such advice with :func:`option` (and :func:`has_option` for an
option only some front ends have); the front end in use is a context variable,
``"python"`` unless a front end sets another with :func:`front_end`. The
command line (:func:`csvm_stats.interfaces.cli.main`) runs every command inside
``front_end("cli")``, so the same message reads ``--guarantee tpr`` there.

>>> option("guarantee", "tpr"), option("recall_min", {"a": 0.9, "b": 0.8})
("guarantee='tpr'", "recall_min={'a': 0.9, 'b': 0.8}")
>>> with front_end("cli"):
...     option("guarantee", "tpr"), option("recall_min", {"a": 0.9, "b": 0.8}), has_option("samples")
('--guarantee tpr', '--recall-min a=0.9 --recall-min b=0.8', False)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: The front ends :func:`front_end` knows.
FRONT_ENDS: tuple[str, ...] = ("python", "cli")

#: Python keyword -> command-line flag; ``None``: the command line has no such option.
CLI_FLAGS: dict[str, str | None] = {
    "tpr_min": "--tpr-min", "tnr_min": "--tnr-min", "acc_min": "--acc-min", "recall_min": "--recall-min",
    "alpha": "--alpha", "bound": "--bound", "guarantee": "--guarantee", "kernel": "--kernel", "C": "-C",
    "gamma": "--gamma", "degree": "--degree", "coef0": None, "rank": None, "big_m": None, "positive": "--positive",
    "fractions": "--fractions", "samples": None, "penalty": "--penalty", "max_features": "--max-features",
    "screen": "--screen", "solver": "--solver", "time_limit": "--time-limit", "random_state": "--seed",
    "standardize": None, "mip_gap": None, "threads": None, "verbose": None, "warm_start": None,
}

_NO_VALUE = object()
_front_end: ContextVar[str] = ContextVar("csvm_stats_front_end", default="python")


@contextmanager
def front_end(name: str) -> Iterator[None]:
    """Word the messages raised inside the ``with`` block for front end ``name`` (one of :data:`FRONT_ENDS`)."""
    if name not in FRONT_ENDS:
        raise ValueError(f"front end must be one of {FRONT_ENDS}, got {name!r}")
    token = _front_end.set(name)
    try:
        yield
    finally:
        _front_end.reset(token)


def current_front_end() -> str:
    """The front end messages are worded for now."""
    return _front_end.get()


def has_option(name: str) -> bool:
    """Whether the current front end has option ``name`` (the command line has no ``samples``, for one)."""
    return _front_end.get() == "python" or CLI_FLAGS.get(name) is not None


def option_name(name: str) -> str:
    """Option ``name`` itself, as the current front end spells it (``tpr_min`` or ``--tpr-min``)."""
    flag = CLI_FLAGS.get(name)
    return name if _front_end.get() == "python" or flag is None else flag


def option(name: str, value: Any = _NO_VALUE, *, more: bool = False) -> str:
    """Option ``name`` (set to ``value`` when given) as the user of the current front end writes it.

    ``more`` marks a mapping value as an example of several entries (``{'label': 0.9, ...}``).
    On the command line ``True`` is the bare flag, a mapping one ``flag KEY=VALUE`` per
    entry (``--recall-min a=0.9 --recall-min b=0.8``) and a sequence its items; an
    option the command line lacks keeps its Python spelling.
    """
    flag = CLI_FLAGS.get(name)
    if _front_end.get() == "python" or flag is None:
        if value is _NO_VALUE:
            return f"{name}="
        if isinstance(value, Mapping) and more:
            items = ", ".join(f"{k!r}: {v!r}" for k, v in value.items())
            return f"{name}={{{items}, ...}}"
        return f"{name}={value!r}"
    if value is _NO_VALUE or value is True:
        return flag
    if isinstance(value, Mapping):
        return " ".join([f"{flag} {k}={v}" for k, v in value.items()] + (["..."] if more else []))
    if isinstance(value, (list, tuple)):
        return " ".join([flag, *(str(v) for v in value)])
    return f"{flag} {value}"


def enlarge_share(sample: str) -> str:
    """The advice for a sample (``"anchor"``, ``"held-out"``) that lacks a class: its share, or an explicit split."""
    advice = f"enlarge the {sample} share ({option('fractions')})"
    return f"{advice} or pass {option('samples')}" if has_option("samples") else advice
