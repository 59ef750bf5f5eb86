"""Errors raised by csvm-stats.

Every error says what went wrong and what to do about it. Data problems are
``ValueError`` subclasses so that scikit-learn style callers catch them as
usual.
"""

from __future__ import annotations


class CSVMError(Exception):
    """Base class of all csvm-stats errors."""


class DataError(CSVMError, ValueError):
    """The data cannot be used as given (NaN, one class, unseen level, ...)."""


class InfeasibleConstraintsError(CSVMError):
    """No classifier of the chosen family meets the requested rate constraints."""


class SolverUnavailableError(CSVMError, ImportError):
    """The requested solver backend is not installed or not licensed."""


class NoSolutionError(CSVMError):
    """The solver stopped (time limit, error) without any feasible solution."""


class SolverError(CSVMError):
    """The solver failed for a reason other than infeasibility or time."""


class LicenseLimitError(SolverError):
    """The Gurobi licence cannot take a model of this size."""


class FormulaError(DataError):
    """A formula that is not in the grammar of :mod:`csvm_stats.preprocessing.formula_grammar` or names absent columns."""


class DegenerateRuleWarning(UserWarning):
    """The fitted rule is constant (w numerically zero, or one label for every anchor or held-out point)."""


class InputLimitError(DataError):
    """An input exceeds a documented size cap (formula terms, model-file keys, CSV cells, R file bytes).

    Every cap is a named module constant or parameter, and the message says
    which one and how to raise it for an input you trust.
    """


class InputFileError(DataError):
    """A path that cannot be read as a data, model or R file: a device, a FIFO, a directory, unreadable."""


class MissingFileError(InputFileError, FileNotFoundError):
    """A path that does not exist (also a :class:`FileNotFoundError`)."""


class FormulaLimitError(FormulaError, InputLimitError):
    """A formula that would expand past :data:`~csvm_stats.preprocessing.formula_grammar.MAX_TERMS` terms."""
