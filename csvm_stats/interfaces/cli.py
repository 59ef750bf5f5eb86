"""The ``csvm-stats`` command line: ``fit``, ``predict`` and ``demo``.

::

    csvm-stats demo                                  # Wisconsin, TPR >= 0.9, summary
    csvm-stats fit data.csv -f "y ~ ." --tpr-min 0.95 --save model.csvm
    csvm-stats fit data.parquet -f "y ~ . - id" --tnr-min 0.9 --format html -o report.html
    csvm-stats predict model.csvm new.csv -o predictions.csv

Data files are CSV (``.csv``, ``.txt``; ``.tsv`` tab-separated) or Parquet
(``.parquet``, ``.pq``); a repeated column name in the header is an error
(pandas would rename it ``a.1``). Formulas are parsed by our own grammar
(:mod:`csvm_stats.preprocessing.formula_grammar`), never evaluated. Output files may not be
input files. Predictions are CSV in which a text cell starting with ``=``,
``+``, ``-`` or ``@`` gets a leading ``'`` so that spreadsheet programs do
not run it as a formula. Saved models use the non-pickle format of
:mod:`csvm_stats.interfaces.persistence`. Exit codes (:data:`EXIT_CODES`): 0 success,
2 bad command-line usage, 3 a file that cannot be read or written (data or
model), 4 a bad formula, 5 data that cannot be used, 6 infeasible rate
constraints, 7 the solver found no solution, is unavailable or failed.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats._version import __version__
from csvm_stats.exceptions import (
    DataError,
    FormulaError,
    InfeasibleConstraintsError,
    NoSolutionError,
    SolverError,
    SolverUnavailableError,
)
from csvm_stats.exceptions import InputFileError, InputLimitError, warn_at_caller
from csvm_stats.interfaces.cli_options import CSVM_DEFAULTS
from csvm_stats.preprocessing.csv_scan import scan_csv
from csvm_stats.preprocessing.paths import check_input_file
from csvm_stats.preprocessing.validation import check_integer, check_random_state, check_time_limit
from csvm_stats.preprocessing.wording import front_end

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_FILE = 3
EXIT_FORMULA = 4
EXIT_DATA = 5
EXIT_INFEASIBLE = 6
EXIT_SOLVER = 7
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_USAGE: "bad command-line usage",
    EXIT_FILE: "a data or model file cannot be read or written",
    EXIT_FORMULA: "the formula cannot be parsed or names columns that are not in the data",
    EXIT_DATA: "the data cannot be used (missing values, one class, unseen levels, ...)",
    EXIT_INFEASIBLE: "the rate constraints are infeasible",
    EXIT_SOLVER: "the solver found no solution in time, is unavailable, or failed",
}
CSV_SUFFIXES = (".csv", ".txt", ".tsv")
PARQUET_SUFFIXES = (".parquet", ".pq")
OUTPUT_FORMATS = ("text", "html", "json")


class FileProblem(Exception):
    """A file that cannot be read or written (exit code 3)."""


def check_formula(formula: str, data: pd.DataFrame) -> None:
    """Parse ``formula`` against the data's columns with our grammar (never evaluated); raise :class:`FormulaError`."""
    from csvm_stats.preprocessing.formula_grammar import parse_formula

    parse_formula(formula, [str(c) for c in data.columns])


# ---------------------------------------------------------------------- files
def _header_row(path: Path, sep: str) -> list[str]:
    """The column names exactly as the file's first row has them (pandas would rename a repeat to ``a.1``)."""
    header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
    return [str(v) for v in header.iloc[0]] if len(header) else []


def _check_cells(data: pd.DataFrame, path: Path) -> None:
    """Refuse columns of lists, dicts or structs (Parquet allows them; CSVM needs one value per cell)."""
    nested = []
    for name in data.columns:
        column = data[name]
        if isinstance(column.dtype, pd.ArrowDtype) and column.dtype.pyarrow_dtype.num_fields > 0:
            nested.append(str(name))
        elif column.dtype == object and column.map(lambda v: isinstance(v, (list, tuple, dict, set, np.ndarray))).any():
            nested.append(str(name))
    if nested:
        raise DataError(
            f"{str(path)!r}: column(s) {nested} hold lists or structures, not one number or label per cell; "
            "flatten them into ordinary columns first."
        )


_SEPARATORS = {";": "';'", "\t": "tabs", ",": "','", "|": "'|'"}


def _check_header(names: list[str], data: pd.DataFrame, path: Path, suffix: str) -> pd.DataFrame:
    """Refuse a header that was read with the wrong separator, or that has a cell without a name (review r11 F7);
    pandas' row index (a first column without a name holding 0, 1, 2, ...) becomes the rows' labels.

    A file separated by ';' (Excel's CSV where the decimal mark is a comma) or by tabs but named .csv
    reads as one column whose name holds every name; pandas would call an empty header cell
    'Unnamed: 0' and ``y ~ .`` would make it a predictor. ``df.to_csv(path)`` writes the index that way, so
    that column is read as ``pd.read_csv(path, index_col=0)`` would, with a warning saying so.
    """
    empty = [i for i, name in enumerate(names) if not name.strip()]
    if not empty:
        return data
    first = data.iloc[:, 0] if data.shape[1] else None
    if empty == [0] and first is not None and len(first) and pd.api.types.is_integer_dtype(first.dtype) and (
            first.to_numpy() == np.arange(len(first))).all():
        warn_at_caller(
            f"{str(path)!r}: the first column has no name in the header and holds the row numbers 0, 1, 2, ... (the "
            "row index that pandas' to_csv writes); it is read as the rows' labels, not as data. Write the file "
            "with to_csv(..., index=False) to leave it out.",
            UserWarning,
        )
        return data.set_axis(first.to_numpy(), axis=0).iloc[:, 1:]
    last = data.iloc[:, -1] if data.shape[1] == len(names) else None
    if empty == [len(names) - 1] and last is not None and last.isna().all():
        raise DataError(
            f"{str(path)!r}: every line ends with a separator (the header's last cell, column {len(names)}, is empty and "
            "so is that column); remove the trailing separators."
        )
    where = ", ".join(f"column {i + 1}" + (f" (after {names[i - 1]!r})" if i and names[i - 1].strip() else "")
                      for i in empty)
    raise DataError(
        f"{str(path)!r}: {where} of the header {'has' if len(empty) == 1 else 'have'} no name; every column needs "
        "one (an unnamed column would enter 'y ~ .' as a predictor named by pandas). Give it a name in the header "
        "row, or delete the column."
    )


def _check_separator(names: list[str], path: Path, suffix: str) -> None:
    """Refuse a header read as one column whose name holds another separator (';', tabs, ...)."""
    sep = "\t" if suffix == ".tsv" else ","
    if len(names) == 1 and suffix in CSV_SUFFIXES:
        for other, word in _SEPARATORS.items():
            parts = [part for part in names[0].split(other) if part.strip()]
            if other != sep and len(parts) >= 2:
                decimal = " and '.' as the decimal mark" if other == ";" else ""
                fix = ("name it .tsv (or save it as .parquet)" if other == "\t" else
                       f"save it with ',' separators{decimal} (or as .tsv or .parquet)")
                raise FileProblem(
                    f"{str(path)!r} has a single column named {names[0]!r}: it looks separated by {word}, but a "
                    f"{suffix} file is read with {_SEPARATORS[sep]} as separator. To read it, {fix}."
                )


def read_table(path: str | Path, text_columns: Sequence[str] = ()) -> pd.DataFrame:
    """A CSV or Parquet file as a DataFrame (format from the suffix).

    ``text_columns`` of a CSV file are read as text, not as numbers when
    they look like numbers (a saved model's factor columns, whose levels
    are text: a batch whose levels are all "0" is still that factor).

    Repeated column names (in the CSV header row or the Parquet schema) and
    columns of lists or structs are errors, never renamed or passed on. A
    path that is not a regular file (a directory, FIFO, device, broken link)
    is refused by kind, and a CSV file is first checked against the caps of
    :mod:`csvm_stats.preprocessing.csv_scan` (line, cell and column counts).
    """
    try:
        path = check_input_file(path, "data file")
    except InputFileError as error:
        raise FileProblem(str(error)) from None
    suffix = path.suffix.lower()
    if suffix not in CSV_SUFFIXES + PARQUET_SUFFIXES:
        raise FileProblem(
            f"cannot tell the format of {str(path)!r}; use a file ending in "
            f"{', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)}."
        )
    try:
        if suffix in CSV_SUFFIXES:
            sep = "\t" if suffix == ".tsv" else ","
            try:
                scan_csv(path, sep)
            except (InputFileError, InputLimitError) as error:
                raise FileProblem(str(error)) from None
            names = _header_row(path, sep)
            _check_separator(names, path, suffix)  # before reading rows that may not fit the header
            data = pd.read_csv(path, sep=sep, dtype={c: str for c in text_columns if c in names} or None)
        else:
            data = pd.read_parquet(path)
            names = [str(c) for c in data.columns]
    except pd.errors.EmptyDataError:
        raise FileProblem(f"{str(path)!r} is empty: it has no header row and 0 rows.") from None
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError, ImportError) as error:
        raise FileProblem(f"cannot read {str(path)!r} as {suffix[1:]}: {error}") from None
    data = _check_header(names, data, path, suffix)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise DataError(f"{str(path)!r} has duplicated column name(s) {repeated}; give every column its own name.")
    _check_cells(data, path)
    return data


def _same_file(a: str | Path, b: str | Path) -> bool:
    a, b = Path(a), Path(b)
    if a.exists() and b.exists():
        return a.samefile(b)
    return a.resolve() == b.resolve()


def check_outputs(inputs: dict[str, str | None], outputs: dict[str, str | None]) -> None:
    """Refuse an output path that is an input file or another output (it would be overwritten)."""
    named = [(what, path) for what, path in inputs.items() if path is not None]
    for what, path in outputs.items():
        if path is None:
            continue
        for other, existing in named:
            if _same_file(path, existing):
                raise FileProblem(f"{what} {path!r} is the same file as the {other}; it would be overwritten. Choose another path.")
        named.append((what, path))


#: A text cell starting with one of these is run as a formula by spreadsheet programs.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: Any) -> Any:
    """A text cell that a spreadsheet would run as a formula, prefixed with ``'`` (numbers unchanged)."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def _escaped(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text cell (and text row label) escaped by :func:`escape_cell`."""
    out = table.copy()
    for name in out.columns:
        if out[name].dtype == object or isinstance(out[name].dtype, (pd.CategoricalDtype, pd.StringDtype)):
            out[name] = out[name].astype(object).map(escape_cell)
    out.index = out.index.map(escape_cell)
    return out


class OutputClosed(FileProblem):
    """Standard output cannot be written (a full device, a closed pipe); exit code 3, no traceback."""


def _write(text: str, output: str | None) -> None:
    if output is None:
        try:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            raise OutputClosed("standard output was closed before all output was written (broken pipe).") from None
        except OSError as error:
            raise OutputClosed(f"cannot write to standard output: {error.strerror or error}.") from None
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise FileProblem(f"cannot write {output!r}: {error}") from None


# ---------------------------------------------------------------------- fit
def _positive_label(data: pd.DataFrame, formula: str, label: str | None) -> Any:
    """The response value whose text is ``label`` (labels read from files may be numbers)."""
    if label is None:
        return None
    from csvm_stats.preprocessing.formula import response_name

    response = response_name(formula)
    if response not in data.columns:
        return label  # the model reports the missing column
    matches = [v for v in pd.unique(data[response].dropna()) if str(v) == label]
    if not matches:
        levels = sorted(map(str, pd.unique(data[response].dropna())))
        raise DataError(f"{label!r} is not a value of the response {response!r} (values: {levels[:6]}).")
    return matches[0]


def _recall_pair(value: str) -> tuple[str, float]:
    """``CLASS=P`` from ``--recall-min``."""
    label, sep, number = value.rpartition("=")
    if not sep or not label:
        raise argparse.ArgumentTypeError(f"expected CLASS=P (e.g. BL=0.9), got {value!r}")
    return label, _probability(number)


def _recall_targets(data: pd.DataFrame, formula: str, pairs: list[tuple[str, float]] | None) -> dict[Any, float] | None:
    """``--recall-min`` pairs with each class text turned into the response's value."""
    if not pairs:
        return None
    targets: dict[Any, float] = {}
    for label, p in pairs:
        value = _positive_label(data, formula, label)
        if value in targets:
            raise DataError(f"--recall-min names the class {label!r} twice.")
        targets[value] = p
    return targets


def _gamma(value: str) -> float | str:
    if value == "scale":
        return value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"gamma must be a positive number or 'scale', got {value!r}") from None


GUARANTEE_RATES = ("tpr", "tnr")


def _guarantee_rate(value: str) -> str | bool:
    """The rate named after ``--guarantee`` (the bare flag is ``True``: argparse's ``const``, or the empty value
    :func:`_bare_guarantee` writes)."""
    if value == "":
        return True
    if value not in GUARANTEE_RATES:
        raise argparse.ArgumentTypeError(f"--guarantee takes tpr or tnr (or no value), got {value!r}")
    return value


def fit_command(args: argparse.Namespace) -> int:
    from csvm_stats.models.model import CSVM
    from csvm_stats.interfaces.persistence import results_report, save_model

    check_outputs({"data file": args.data}, {"output (-o)": args.output, "model file (--save)": args.save})
    data = read_table(args.data)
    check_formula(args.formula, data)
    if args.method == "np":  # the Neyman-Pearson route: csvm_stats/interfaces/np_cli.py
        from csvm_stats.interfaces.np_cli import np_fit

        recall = _recall_targets(data, args.formula, args.recall_min)
        return np_fit(args, data, _positive_label(data, args.formula, args.positive), recall, _write)
    if args.estimator is not None:
        raise DataError("--estimator chooses the learner of the Neyman-Pearson route; add --method np, or leave it "
                        "out to fit the CSVM.")
    for name, default in CSVM_DEFAULTS.items():  # argparse leaves them None so that --method np can tell "given"
        if getattr(args, name) is None:
            setattr(args, name, default)
    model = CSVM.from_formula(
        args.formula,
        data,
        tpr_min=args.tpr_min,
        tnr_min=args.tnr_min,
        acc_min=args.acc_min,
        alpha=args.alpha,
        bound=args.bound,
        kernel=args.kernel,
        C=args.C,
        gamma=args.gamma,
        degree=args.degree,
        positive=_positive_label(data, args.formula, args.positive),
        fractions=tuple(args.fractions),
        penalty=args.penalty,
        max_features=args.max_features,
        screen=args.screen,
        recall_min=_recall_targets(data, args.formula, args.recall_min),
    )
    results = model.fit(
        solver=args.solver, time_limit=args.time_limit, random_state=args.seed, guarantee=args.guarantee
    )
    if args.format == "json":
        text = json.dumps(results_report(results), indent=2, allow_nan=False)
    elif args.format == "html":
        text = results.summary().as_html()
    else:
        text = str(results.summary())
    _write(text, args.output)
    if args.save:
        try:
            save_model(results, args.save)
        except OSError as error:
            raise FileProblem(f"cannot write the model to {args.save!r}: {error}") from None
        print(f"Model saved to {args.save}", file=sys.stderr)
    return EXIT_OK


# ---------------------------------------------------------------------- predict
def predict_command(args: argparse.Namespace) -> int:
    from csvm_stats.interfaces.persistence import ModelFileError, load_model

    try:
        model = load_model(args.model)
    except ModelFileError as error:
        raise FileProblem(str(error)) from None
    check_outputs({"model file": args.model, "data file": args.data}, {"output": args.output})
    levels = model.formula.factor_levels() if model.formula is not None else {}
    # a factor fitted on text levels is read as text, whatever the batch's values look like (review r7 F6)
    data = read_table(args.data, [c for c, lv in levels.items() if all(isinstance(v, str) for v in lv)])
    if data.shape[0] == 0:
        raise DataError(f"{str(args.data)!r} has a header but no rows; there is nothing to predict.")
    decision = model.decision_function(data)
    if isinstance(decision, pd.DataFrame):  # several classes: one score column per class
        scores = decision.rename(columns=lambda c: f"score_{c}")
        table = pd.concat([model.predict(data).rename("predicted"), scores], axis=1)
        if args.proba:  # columns p0_<class>, p1_<class> (one-vs-rest intervals) and p_<class> (sum to 1)
            proba = model.predict_proba(data, interval=True)
            proba.columns = [f"{stat}_{c}" for stat, c in proba.columns]
            table = table.join(proba)
    else:
        table = pd.DataFrame(
            {"predicted": model.coding.decode(decision.to_numpy(), index=decision.index), "decision": decision}
        )
        if args.proba:
            table = table.join(model.predict_proba(data, interval=True))
    _write(_escaped(table).to_csv(index_label="row", float_format="%.10g"), args.output)
    return EXIT_OK


# ---------------------------------------------------------------------- demo
def demo_command(args: argparse.Namespace) -> int:
    """CSVM with a required TPR on Wisconsin; then the plain SVM (same C, same rows) on the same held-out sample."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from csvm_stats.inference.certification import count_correct, level_percent
    from csvm_stats.data.datasets import load_dataset
    from csvm_stats.models.model import CSVM

    X, labels = load_dataset("wisconsin")
    data = X.assign(diagnosis=pd.Categorical(np.where(labels > 0, "benign", "malignant")))
    print(
        "csvm-stats demo: Wisconsin breast cancer (569 tumours, 30 features; scikit-learn's copy).\n"
        f"Goal: a linear classifier that finds at least {args.tpr_min:.0%} of the malignant tumours (the positive\n"
        "class; missing one is the costly error), as accurate on the benign ones as that allows, with a\n"
        f"statement about its true positive rate that holds with {level_percent(args.alpha)} confidence.\n"
    )
    started = time.perf_counter()
    options = {"tpr_min": args.tpr_min, "alpha": args.alpha, "bound": args.bound, "positive": "malignant"}
    fit_options = {"solver": args.solver, "time_limit": args.time_limit, "random_state": args.seed}
    model = CSVM.from_formula("diagnosis ~ .", data, **options)
    results = model.fit(**fit_options)
    seconds = time.perf_counter() - started
    print(_demo_echo(options, fit_options))
    print(results.summary(), end="\n\n")

    split = results.split
    fit_rows = np.concatenate([split.train, split.anchor])
    design = model.exog.to_numpy()
    plain = make_pipeline(StandardScaler(), SVC(kernel="linear", C=model.C / 2))
    plain.fit(design[fit_rows], model.y[fit_rows])
    y_hold = model.y[split.holdout]
    decisions = {
        f"plain SVM (SVC, C = {model.C / 2:g}, trained on I and J)": plain.decision_function(design[split.holdout]),
        f"CSVM, TPR >= {args.tpr_min:g}": results.decision_function().to_numpy()[split.holdout],
    }
    rows = {}
    for name, decision in decisions.items():
        n_pos, tp = count_correct(y_hold, decision, "tpr")
        n_neg, tn = count_correct(y_hold, decision, "tnr")
        rows[name] = {"held-out TPR": f"{tp}/{n_pos} = {tp / n_pos:.3f}", "held-out TNR": f"{tn}/{n_neg} = {tn / n_neg:.3f}"}
    print("Held-out comparison (the same held-out tumours for both):")
    print(pd.DataFrame.from_dict(rows, orient="index").to_string())
    print(
        f"\nCSVM fitted in {seconds:.1f} s with {results.solver.backend}. Try: csvm-stats demo --seed 1, "
        "or csvm-stats fit --help."
    )
    return EXIT_OK


def _demo_echo(options: dict[str, Any], fit_options: dict[str, Any]) -> str:
    """The Python session equivalent to the demo's fit, with every option it passed (review r8 F17)."""
    def keywords(values: dict[str, Any]) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in values.items())

    return (
        ">>> from csvm_stats import CSVM\n"
        f">>> model = CSVM.from_formula('diagnosis ~ .', data, {keywords(options)})\n"
        f">>> res = model.fit({keywords(fit_options)})\n"
        ">>> print(res.summary())\n"
    )


# ---------------------------------------------------------------------- parser
def _format_warning(message, category, filename, lineno, line=None) -> str:
    """Warnings as one readable line, without the source line of the library."""
    return f"csvm-stats: warning: {message}\n"


def _checked(check: Any, convert: Any) -> Any:
    """An argparse type: ``convert`` the text, then ``check`` it with :mod:`csvm_stats.preprocessing.validation`."""

    def parse(text: str) -> Any:
        try:
            return check(convert(text))
        except (ValueError, DataError) as error:
            raise argparse.ArgumentTypeError(str(error) if isinstance(error, DataError) else f"not a number: {text!r}") from None

    return parse


def _probability(value: str) -> float:
    try:
        p = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {value!r}") from None
    if not 0 < p < 1:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {value!r}")
    return p


_SECONDS = _checked(check_time_limit, float)
_SEED = _checked(check_random_state, int)
_MAX_FEATURES = _checked(lambda value: check_integer(value, "--max-features"), int)
_SCREEN = _checked(lambda value: check_integer(value, "--screen"), int)


def build_parser() -> argparse.ArgumentParser:
    codes = "\n".join(f"  {code}  {meaning}" for code, meaning in EXIT_CODES.items())
    parser = argparse.ArgumentParser(
        prog="csvm-stats",
        description="Constrained SVMs with required true positive / true negative rates and held-out confidence statements.",
        epilog=f"exit codes:\n{codes}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"csvm-stats {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{fit,predict,demo}")

    fit = commands.add_parser("fit", help="fit a CSVM to a CSV or Parquet file and print its summary",
                              description="Fit a CSVM to a CSV or Parquet file and print (or write) its summary.")
    fit.add_argument("data", help="CSV (.csv, .tsv) or Parquet (.parquet) file, one row per observation")
    fit.add_argument("-f", "--formula", required=True, help="model formula, e.g. 'y ~ .' or 'y ~ . - id'")
    rates = fit.add_argument_group("required rates (any combination)")
    rates.add_argument("--tpr-min", type=_probability, help="required true positive rate")
    rates.add_argument("--tnr-min", type=_probability, help="required true negative rate")
    rates.add_argument("--acc-min", type=_probability, help="required accuracy")
    rates.add_argument("--alpha", type=_probability, default=0.05, help="level of margins and statements (0.05)")
    rates.add_argument("--bound", choices=("hoeffding", "binomial", "none"),
                       help="margin added to the required rates on the anchor sample (hoeffding)")
    rates.add_argument("--positive", help="label of the positive class (default: the second level)")
    rates.add_argument("--recall-min", type=_recall_pair, action="append", metavar="CLASS=P",
                       help="required recall of one class (repeat for several; the multiclass CSVM), e.g. BL=0.9")
    rates.add_argument("--guarantee", nargs="?", const=True, default=None, type=_guarantee_rate, metavar="{tpr,tnr}",
                       help="set the intercept on the held-out sample so that a required class rate is guaranteed: "
                            "the single one of --tpr-min and --tnr-min (bare flag), or the one named (tpr or tnr, "
                            "needed when both are required); with --recall-min (bare flag only): shift the "
                            "constrained classes' offsets so all recalls hold jointly")
    svm = fit.add_argument_group("classifier")
    svm.add_argument("--method", choices=("csvm", "np"), default="csvm",
                     help="csvm (default), or np: the Neyman-Pearson route around --estimator (threshold set on H)")
    svm.add_argument("--estimator", choices=("logistic", "svc", "hgb"),
                     help="the learner of --method np (logistic)")
    svm.add_argument("--kernel", choices=("linear", "rbf", "poly"), help="kernel of the CSVM (linear)")
    svm.add_argument("-C", "--C", dest="C", type=float, help="cost C of the objective w'w + C sum(xi) (1)")
    svm.add_argument("--gamma", type=_gamma, help="rbf/poly gamma, a number or 'scale' (scale)")
    svm.add_argument("--degree", type=int, help="poly degree (3)")
    svm.add_argument("--fractions", type=float, nargs=3, default=(0.5, 0.25, 0.25), metavar=("TRAIN", "ANCHOR", "HOLDOUT"),
                     help="shares of the rows for the training, anchor and held-out samples (0.5 0.25 0.25)")
    sparse = fit.add_argument_group("feature selection (linear kernel)")
    sparse.add_argument("--penalty", choices=("l2", "l1"),
                        help="l1: the L1-norm CSVM min ||w||_1 + C sum(xi), a sparse MILP (l2)")
    sparse.add_argument("--max-features", type=_MAX_FEATURES, metavar="S",
                        help="at most S non-zero coefficients (the cardinality-constrained L2 CSVM)")
    sparse.add_argument("--screen", type=_SCREEN, metavar="K",
                        help="columns the --max-features MIQP keeps (default: all up to 60, else max(5 S, 50))")
    solve = fit.add_argument_group("solver")
    solve.add_argument("--solver", choices=("auto", "scip", "gurobi", "highs"), help="the CSVM's solver (auto)")
    solve.add_argument("--time-limit", type=_SECONDS, help="seconds (300)")
    solve.add_argument("--seed", type=_SEED, default=0, help="seed of the sample split and the solver (0)")
    out = fit.add_argument_group("output")
    out.add_argument("--format", choices=OUTPUT_FORMATS, default="text", help="summary as text, html or json (text)")
    out.add_argument("-o", "--output", help="write the summary to this file instead of standard output")
    out.add_argument("--save", metavar="MODEL", help="save the fitted model to this file (for `csvm-stats predict`)")
    fit.set_defaults(handler=fit_command)

    predict = commands.add_parser("predict", help="predict new data with a saved model",
                                  description="Predict the rows of a CSV or Parquet file with a saved model; "
                                              "writes CSV with columns row, predicted, decision (and p0, p1, p "
                                              "with --proba) for a two-class model, and row, predicted, "
                                              "score_<class> for every class (and p0_<class>, p1_<class>, "
                                              "p_<class> with --proba) for a model of several classes.")
    predict.add_argument("model", help="model file written by `csvm-stats fit --save`")
    predict.add_argument("data", help="CSV or Parquet file with the predictor columns")
    predict.add_argument("-o", "--output", help="write the predictions to this CSV file instead of standard output "
                         "(text cells starting with =, +, -, @ are written with a leading ' so that spreadsheets "
                         "show them as text instead of running them as formulas)")
    predict.add_argument("--proba", action="store_true",
                         help="add the probability of the positive class p and its Venn-Abers interval p0, p1 "
                              "(several classes: p0_<class>, p1_<class> and p_<class> for every class)")
    predict.set_defaults(handler=predict_command)

    demo = commands.add_parser("demo", help="CSVM with a required TPR on the Wisconsin breast cancer data",
                               description="Fit a CSVM with a required true positive rate on the Wisconsin data "
                                           "shipped with scikit-learn, print its summary and compare with the plain SVM.")
    demo.add_argument("--tpr-min", type=_probability, default=0.9, help="required true positive rate (0.9)")
    demo.add_argument("--alpha", type=_probability, default=0.05, help="level (0.05)")
    demo.add_argument("--bound", choices=("hoeffding", "binomial", "none"), default="binomial",
                      help="margin (binomial: exact; hoeffding needs 150 anchor positives for 0.9)")
    demo.add_argument("--solver", choices=("auto", "scip", "gurobi"), default="auto")
    demo.add_argument("--time-limit", type=_SECONDS, default=60.0, help="seconds (60)")
    demo.add_argument("--seed", type=_SEED, default=0, help="seed of the sample split (0)")
    demo.set_defaults(handler=demo_command)
    return parser


def _bare_guarantee(argv: list[str]) -> list[str]:
    """``--guarantee`` followed by an existing file written as ``--guarantee=`` (the bare flag), so that argparse does
    not take the data file of ``--guarantee data.csv`` as its value (any other next word is its value: tpr, tnr, or
    an error naming them)."""
    return [
        "--guarantee=" if token == "--guarantee" and k + 1 < len(argv) and argv[k + 1] not in GUARANTEE_RATES
        and os.path.exists(argv[k + 1]) else token
        for k, token in enumerate(argv)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (see :data:`EXIT_CODES`).

    Parameters
    ----------
    argv : sequence of str or None
        The arguments (``None``: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 success, 2 usage error, 3 model-file error, and the
        others of :data:`EXIT_CODES`.

    Examples
    --------
    >>> from csvm_stats.interfaces.cli import main
    >>> main(["--version"])  # doctest: +SKIP
    csvm-stats 0.1.0
    """
    parser = build_parser()
    args = parser.parse_args(_bare_guarantee(sys.argv[1:] if argv is None else list(argv)))
    warnings.formatwarning = _format_warning
    try:
        with front_end("cli"):  # messages name options as flags (--guarantee tpr), not Python keywords
            code = args.handler(args)
        sys.stdout.flush()
        return code
    except (OutputClosed, BrokenPipeError) as error:
        _silence_stdout()
        closed = isinstance(error, BrokenPipeError)
        detail = "standard output was closed before all output was written (broken pipe)." if closed else error
        message, code = f"file error: {detail}", EXIT_FILE
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EPIPE, errno.EIO):
            raise
        _silence_stdout()
        message, code = f"file error: cannot write to standard output: {error.strerror}.", EXIT_FILE
    except FileProblem as error:
        message, code = f"file error: {error}", EXIT_FILE
    except FormulaError as error:
        message, code = f"formula error: {error}", EXIT_FORMULA
    except InfeasibleConstraintsError as error:
        message, code = f"infeasible constraints: {error}", EXIT_INFEASIBLE
    except (NoSolutionError, SolverUnavailableError, SolverError) as error:
        message, code = f"solver: {error}", EXIT_SOLVER
    except DataError as error:
        message, code = f"data error: {error}", EXIT_DATA
    print(f"csvm-stats {args.command}: {message}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail again with a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass


if __name__ == "__main__":
    sys.exit(main())
