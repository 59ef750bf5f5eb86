"""Errors raised by csvm-stats.

Every error says what went wrong and what to do about it. Data problems are
``ValueError`` subclasses so that scikit-learn style callers catch them as
usual.
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class CSVMError(Exception):
    """Base class of all csvm-stats errors.

    Examples
    --------
    >>> from csvm_stats.exceptions import CSVMError, DataError
    >>> issubclass(DataError, CSVMError)
    True
    """


class DataError(CSVMError, ValueError):
    """The data cannot be used as given (NaN, one class, unseen level, ...).

    Examples
    --------
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.exceptions import DataError
    >>> try:
    ...     CSVM([0, 1, 0, 1], [[1.0], [2.0], [3.0], [4.0]], tpr_min=1.5)
    ... except DataError as error:
    ...     print(type(error).__name__)
    DataError
    """


class InfeasibleConstraintsError(CSVMError):
    """No classifier of the chosen family meets the requested rate constraints.

    Examples
    --------
    >>> from csvm_stats.exceptions import CSVMError, InfeasibleConstraintsError
    >>> issubclass(InfeasibleConstraintsError, CSVMError)
    True
    """


class SolverUnavailableError(CSVMError, ImportError):
    """The requested solver backend is not installed or not licensed.

    Examples
    --------
    >>> from csvm_stats.exceptions import SolverUnavailableError
    >>> issubclass(SolverUnavailableError, ImportError)
    True
    """


class NoSolutionError(CSVMError):
    """The solver stopped (time limit, error) without any feasible solution.

    Examples
    --------
    >>> from csvm_stats.exceptions import CSVMError, NoSolutionError
    >>> issubclass(NoSolutionError, CSVMError)
    True
    """


class SolverError(CSVMError):
    """The solver failed for a reason other than infeasibility or time.

    Examples
    --------
    >>> from csvm_stats.exceptions import LicenseLimitError, SolverError
    >>> issubclass(LicenseLimitError, SolverError)
    True
    """


class LicenseLimitError(SolverError):
    """The Gurobi licence cannot take a model of this size.

    Examples
    --------
    >>> from csvm_stats.exceptions import LicenseLimitError, SolverError
    >>> issubclass(LicenseLimitError, SolverError)
    True
    """


class FormulaError(DataError):
    """A formula that is not in the grammar of :mod:`csvm_stats.preprocessing.formula_grammar` or names absent columns.

    Examples
    --------
    >>> import pandas as pd
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.exceptions import FormulaError
    >>> data = pd.DataFrame({"y": [0, 1, 0, 1], "x": [1.0, 2.0, 3.0, 4.0]})
    >>> try:
    ...     CSVM.from_formula("y ~ __import__('os').getcwd()", data, tpr_min=0.5)
    ... except FormulaError:
    ...     print("refused")
    refused
    """


class DegenerateRuleWarning(UserWarning):
    """The fitted rule is constant (w numerically zero, or one label for every anchor or held-out point).

    Examples
    --------
    >>> from csvm_stats.exceptions import DegenerateRuleWarning
    >>> issubclass(DegenerateRuleWarning, UserWarning)
    True
    """


class InputLimitError(DataError):
    """An input exceeds a documented size cap (formula terms, model-file keys, CSV cells, R file bytes).

    Every cap is a named module constant, environment variable or parameter,
    checked before the work it bounds, and the message says which one and how
    to raise it for an input you trust (the caps are listed in the user
    guide's "Formulas as data, and bad input" page).

    Examples
    --------
    >>> import pandas as pd
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.exceptions import InputLimitError
    >>> data = pd.DataFrame({c: [0.0, 1.0, 2.0, 3.0] for c in "abcdefghijklmnop"}).assign(y=[0, 1, 0, 1])
    >>> try:   # 2**16 terms, refused before expanding them
    ...     CSVM.from_formula("y ~ a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p", data, tpr_min=0.5)
    ... except InputLimitError:
    ...     print("refused")
    refused
    """


class InputFileError(DataError):
    """A path that cannot be read as a data, model or R file: a device, a FIFO, a directory, unreadable.

    Examples
    --------
    >>> import tempfile
    >>> from csvm_stats.exceptions import InputFileError
    >>> from csvm_stats.preprocessing.paths import check_input_file
    >>> try:
    ...     check_input_file(tempfile.mkdtemp(), "data file")   # a directory
    ... except InputFileError:
    ...     print("refused")
    refused
    """


class MissingFileError(InputFileError, FileNotFoundError):
    """A path that does not exist (also a :class:`FileNotFoundError`).

    Examples
    --------
    >>> from csvm_stats.exceptions import MissingFileError
    >>> issubclass(MissingFileError, FileNotFoundError)
    True
    """


class FormulaLimitError(FormulaError, InputLimitError):
    """A formula that would expand past :data:`~csvm_stats.preprocessing.formula_grammar.MAX_TERMS` terms.

    The terms are counted before each ``*``, ``:``, ``**`` or ``+`` step
    expands them. The cap is ``MAX_TERMS`` (10,000) or the number of data
    columns plus one, whichever is larger, so ``y ~ .`` always works; for a
    formula you trust, assign a larger
    ``csvm_stats.preprocessing.formula_grammar.MAX_TERMS``.

    Examples
    --------
    >>> from csvm_stats.exceptions import FormulaError, FormulaLimitError, InputLimitError
    >>> issubclass(FormulaLimitError, FormulaError) and issubclass(FormulaLimitError, InputLimitError)
    True
    """


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue a warning attributed to the first frame outside csvm_stats (the user's line, not the library's)."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2 is the caller of this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)
