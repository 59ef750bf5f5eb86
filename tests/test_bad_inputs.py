"""The bad-input matrix: every wrong input is a clear error that names the problem (issue 10).

Table-driven, across the five entry points: the Python API (CSVM,
from_formula, fit, predict), the scikit-learn estimator, the command line
(exit code and message), model files and the R bridge. Every row asserts the
error type (or exit code) AND a pattern the message must contain; no row may
give a result, a traceback or a raw error of numpy, pandas, formulaic, SCIP or
zipfile.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from csvm_stats.interfaces.cli import EXIT_DATA, EXIT_FILE, EXIT_FORMULA, EXIT_USAGE, main
from csvm_stats.probability.ebb import EBB
from csvm_stats.exceptions import DataError, FormulaError
from csvm_stats.models.model import CSVM
from csvm_stats.multiclass.model import MulticlassCSVM
from csvm_stats.interfaces.persistence import ModelFileError, load_model, save_model
from csvm_stats.interfaces.sklearn import CSVMClassifier
from csvm_stats.optimization.solvers.base import SolverOptions

DATA_DIR = Path(__file__).parent / "test_r_bridge_data"


def make_frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {"x1": rng.normal(size=n), "x2": rng.normal(size=n), "grp": rng.choice(["a", "b", "c"], n)}
    )
    frame["y"] = np.where(frame["x1"] + 0.5 * rng.normal(size=n) > 0, "pos", "neg")
    return frame


@dataclass
class Ctx:
    """What the rows act on: data, files in a temporary folder, a fitted model and its file."""

    frame: pd.DataFrame
    folder: Path
    results: Any
    model_file: Path
    estimator: CSVMClassifier

    @property
    def X(self) -> np.ndarray:
        return self.frame[["x1", "x2"]].to_numpy()

    @property
    def labels(self) -> np.ndarray:
        return self.frame["y"].to_numpy()

    def model(self, **kwargs: Any) -> CSVM:
        return CSVM.from_formula("y ~ x1 + x2", self.frame, **kwargs)

    def file(self, name: str, content: str | bytes) -> Path:
        path = self.folder / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path


@pytest.fixture(scope="module")
def ctx(tmp_path_factory) -> Ctx:
    folder = tmp_path_factory.mktemp("bad_inputs")
    frame = make_frame()
    results = CSVM.from_formula("y ~ x1 + x2 + grp", frame, tpr_min=0.7, bound="none").fit(random_state=0, time_limit=60)
    model_file = save_model(results, folder / "model.csvm")
    frame.to_csv(folder / "train.csv", index=False)
    frame.drop(columns="y").to_csv(folder / "new.csv", index=False)
    estimator = CSVMClassifier(tpr_min=0.7, bound="none", time_limit=60, random_state=0).fit(
        frame[["x1", "x2"]].to_numpy(), frame["y"].to_numpy()
    )
    return Ctx(frame, folder, results, model_file, estimator)


# ---------------------------------------------------------------------- Python API
FIT = {"time_limit": 30}


def _fit(**kwargs: Any) -> Callable[[Ctx], Any]:
    return lambda c: c.model(tpr_min=0.7, bound="none").fit(**{**FIT, **kwargs})


def _model(**kwargs: Any) -> Callable[[Ctx], Any]:
    return lambda c: c.model(**kwargs)


def _array_model(c: Ctx) -> Any:
    path = c.folder / "array.csvm"
    if not path.exists():
        save_model(CSVM(c.labels, c.X, tpr_min=0.7, bound="none").fit(random_state=0, time_limit=30), path)
    return load_model(path)


API_CASES: list[tuple[str, Callable[[Ctx], Any], type[Exception], str]] = [
    ("tpr_min above 1", _model(tpr_min=1.5), DataError, "tpr_min"),
    ("tnr_min zero", _model(tnr_min=0.0), DataError, "tnr_min"),
    ("acc_min text", _model(acc_min="high"), DataError, "acc_min"),
    ("alpha NaN", _model(alpha=float("nan")), DataError, "alpha"),
    ("alpha 1", _model(alpha=1.0), DataError, "alpha"),
    ("bound misspelt", _model(bound="chernof"), DataError, "bound must be one of"),
    ("C negative", _model(C=-1.0), DataError, "C must be a positive number"),
    ("C NaN", _model(C=float("nan")), DataError, "C must be a positive number"),
    ("C bool", _model(C=True), DataError, "C must be a positive number"),
    ("kernel misspelt", _model(kernel="rbff"), DataError, r"kernel must be one of .*did you mean 'rbf'"),
    ("kernel a number", _model(kernel=3), DataError, "kernel must be one of"),
    ("gamma negative rbf", _model(kernel="rbf", gamma=-5), DataError, "gamma must be a positive number"),
    ("gamma negative linear", _model(gamma=-5), DataError, "gamma must be a positive number"),
    ("gamma with linear kernel", _model(gamma=0.5), DataError, "gamma=0.5 has no effect with kernel='linear'"),
    ("degree with rbf kernel", _model(kernel="rbf", degree=7), DataError, "degree=7 has no effect with kernel='rbf'"),
    ("degree with linear kernel", _model(degree=2), DataError, "degree=2 has no effect with kernel='linear'"),
    ("coef0 with rbf kernel", _model(kernel="rbf", coef0=5), DataError, "coef0=5 has no effect with kernel='rbf'"),
    ("gamma with callable kernel", _model(kernel=lambda a, b: a @ b.T, gamma=0.5), DataError,
     "gamma=0.5 has no effect with a callable kernel"),
    ("degree with a multiclass linear fit", lambda c: MulticlassCSVM.from_formula(
        "grp ~ x1 + x2", c.frame, recall_min={"a": 0.5}, degree=5), DataError, "degree=5 has no effect"),
    ("gamma text", _model(kernel="rbf", gamma="auto"), DataError, "gamma must be a positive number or 'scale'"),
    ("gamma NaN", _model(kernel="rbf", gamma=float("nan")), DataError, "gamma must be"),
    ("degree zero", _model(kernel="poly", degree=0), DataError, "degree must be a whole number"),
    ("degree fraction", _model(kernel="poly", degree=2.5), DataError, "degree must be a whole number"),
    ("degree bool", _model(kernel="poly", degree=True), DataError, "degree must be a whole number"),
    ("coef0 NaN", _model(kernel="poly", coef0=float("nan")), DataError, "coef0 must be a finite number"),
    ("rank zero", _model(kernel="rbf", rank=0), DataError, "rank must be None or a whole number"),
    ("big_m negative", _model(big_m=-1), DataError, "big_m must be None or a positive number"),
    ("standardize text", _model(standardize="yes"), DataError, "standardize must be True or False"),
    ("fractions not summing to 1", _model(fractions=(0.5, 0.5, 0.5)), DataError, "fractions"),
    ("fractions text", _model(fractions=("a", "b", "c")), DataError, "fractions must be three numbers"),
    ("alpha text", _model(alpha="0.05"), DataError, "alpha must be a number"),
    ("positive not a label", _model(positive="maybe"), DataError, "maybe"),
    ("time_limit negative", _fit(time_limit=-1), DataError, "time_limit must be a non-negative number of seconds"),
    ("time_limit NaN", _fit(time_limit=float("nan")), DataError, "time_limit must be a non-negative number of seconds"),
    ("time_limit infinite", _fit(time_limit=float("inf")), DataError, "time_limit"),
    ("time_limit bool", _fit(time_limit=True), DataError, "time_limit"),
    ("time_limit text", _fit(time_limit="10"), DataError, "time_limit"),
    ("mip_gap negative", _fit(mip_gap=-1), DataError, r"mip_gap must be a relative gap in \[0, 1\)"),
    ("mip_gap NaN", _fit(mip_gap=float("nan")), DataError, "mip_gap"),
    ("threads zero", _fit(threads=0), DataError, "threads must be None or a whole number"),
    ("threads fraction", _fit(threads=1.5), DataError, "threads"),
    ("random_state text", _fit(random_state="abc"), DataError, "random_state must be None or a whole number .* text 'abc'"),
    ("random_state negative", _fit(random_state=-1), DataError, "random_state must be"),
    ("random_state too large", _fit(random_state=2**40), DataError, "random_state must be .* 2147483647"),
    ("random_state fraction", _fit(random_state=1.5), DataError, "random_state"),
    ("solver misspelt", _fit(solver="scipp"), DataError, r"solver must be one of .*did you mean 'scip'"),
    ("verbose text", _fit(verbose="yes"), DataError, "verbose must be True or False"),
    ("warm_start number", _fit(warm_start=1), DataError, "warm_start must be True or False"),
    ("guarantee unknown rate", _fit(guarantee="fpr"), DataError, "guarantee must be"),
    ("solver options: threads bool", lambda c: SolverOptions(threads=True), DataError, "threads"),
    ("solver options: gap bool", lambda c: SolverOptions(mip_gap=False), DataError, "mip_gap"),
    ("EBB time_limit NaN", lambda c: EBB(time_limit=float("nan"), n_bootstrap=5).fit(c.X, c.labels), DataError, "time_limit"),
    ("empty data", lambda c: CSVM.from_formula("y ~ .", c.frame.iloc[:0]), DataError, "0 rows"),
    ("empty exog", lambda c: CSVM(c.labels[:0], c.X[:0]), DataError, "0 rows"),
    ("duplicated column names", lambda c: CSVM.from_formula("y ~ x1", c.frame.rename(columns={"x2": "x1"})),
     DataError, r"duplicated column name\(s\) \['x1'\]"),
    ("duplicated exog names", lambda c: CSVM(c.labels, pd.DataFrame(c.X, columns=["a", "a"])), DataError, "duplicated"),
    ("endog and exog lengths", lambda c: CSVM(c.labels[:-1], c.X), DataError, "rows"),
    ("exog three-dimensional", lambda c: CSVM(c.labels, c.X[:, :, None]), DataError, "two-dimensional"),
    ("text column in exog", lambda c: CSVM(c.labels, c.frame[["x1", "grp"]]), DataError, r"non-numeric column\(s\) \['grp'\]"),
    ("NaN in exog", lambda c: CSVM(c.labels, np.where(np.arange(240).reshape(120, 2) == 7, np.nan, c.X)), DataError, "missing"),
    ("NaN in a predictor", lambda c: CSVM.from_formula("y ~ x1", c.frame.assign(x1=np.nan)), DataError, "missing values"),
    ("None in the response", lambda c: CSVM.from_formula("y ~ x1", c.frame.assign(y=[None] + list(c.labels[1:]))),
     DataError, "missing value"),
    ("one class", lambda c: CSVM.from_formula("y ~ x1", c.frame.assign(y="pos")), DataError, "class"),
    ("data not a frame", lambda c: CSVM.from_formula("y ~ x1", c.X), DataError, "DataFrame"),
    ("formula code payload", lambda c: CSVM.from_formula("y ~ x1 + {__import__('os').getcwd()}", c.frame),
     FormulaError, "braces hold Python code"),
    ("formula call", lambda c: CSVM.from_formula("y ~ np.log(x1)", c.frame), FormulaError, "function calls"),
    ("formula absent column", lambda c: CSVM.from_formula("y ~ age", c.frame), FormulaError, "'age'"),
    ("formula absent response", lambda c: CSVM.from_formula("outcome ~ .", c.frame), FormulaError, "response 'outcome'"),
    ("formula not a string", lambda c: CSVM.from_formula(None, c.frame), FormulaError, "string"),
    ("predict lacks a column", lambda c: c.results.predict(c.frame.drop(columns=["x2", "y"])), DataError,
     r"lacks the column\(s\) \['x2'\]"),
    ("predict text in a numeric column", lambda c: c.results.predict(c.frame.assign(x1="high")), DataError,
     "column 'x1' holds non-numeric values"),
    ("predict unseen level", lambda c: c.results.predict(c.frame.assign(grp="zzz")), DataError, "not seen"),
    ("predict NaN", lambda c: c.results.predict(c.frame.assign(x2=np.nan)), DataError, "missing values"),
    ("predict an array for a formula model", lambda c: c.results.predict(c.X), DataError, "DataFrame"),
    ("loaded array model: text in new data", lambda c: _array_model(c).predict(np.array([["1", "high"]], dtype=object)),
     DataError, r"column\(s\) \[1\]"),
    ("loaded array model: duplicated columns", lambda c: _array_model(c).predict(pd.DataFrame([[1.0, 2.0]], columns=["x1", "x1"])),
     DataError, "duplicated"),
    ("predict duplicated columns", lambda c: c.results.predict(pd.concat([c.frame, c.frame[["x1"]]], axis=1)),
     DataError, "duplicated"),
]


@pytest.mark.parametrize(("name", "action", "error", "message"), API_CASES, ids=[c[0] for c in API_CASES])
def test_python_api(ctx, name, action, error, message):
    with pytest.raises(error, match=message):
        action(ctx)


# ---------------------------------------------------------------------- scikit-learn estimator
def _est_fit(X: Callable[[Ctx], Any] | None = None, y: Callable[[Ctx], Any] | None = None, **params: Any):
    def act(c: Ctx) -> Any:
        estimator = CSVMClassifier(**{"time_limit": 30, **params})
        return estimator.fit(c.X if X is None else X(c), c.labels if y is None else y(c))

    return act


ESTIMATOR_CASES: list[tuple[str, Callable[[Ctx], Any], type[Exception], str]] = [
    ("text column in X", _est_fit(X=lambda c: c.frame[["x1", "grp"]]), DataError, r"non-numeric column\(s\) \['grp'\]"),
    ("text values in an object array", _est_fit(X=lambda c: c.frame[["x1", "grp"]].to_numpy()), DataError,
     r"column\(s\) \[1\]"),
    ("None in y", _est_fit(y=lambda c: np.array([None, *c.labels[1:]], dtype=object)), DataError,
     r"1 missing label\(s\) .* position\(s\) \[0\]"),
    ("NaN in y", _est_fit(y=lambda c: np.r_[np.nan, (c.labels[1:] == "pos").astype(float)]), DataError, "missing label"),
    ("three classes with tpr_min", _est_fit(y=lambda c: np.r_[["other"], c.labels[1:]], tpr_min=0.9), DataError, "binary"),
    ("one class", _est_fit(y=lambda c: np.full(len(c.labels), "pos")), DataError, "one class"),
    ("time_limit NaN", _est_fit(time_limit=float("nan")), DataError, "time_limit"),
    ("time_limit negative", _est_fit(time_limit=-5), DataError, "time_limit"),
    ("mip_gap negative", _est_fit(mip_gap=-1), DataError, "mip_gap"),
    ("random_state text", _est_fit(random_state="abc"), DataError, "random_state"),
    ("random_state negative", _est_fit(random_state=-3), DataError, "random_state"),
    ("kernel misspelt", _est_fit(kernel="lineer"), DataError, "did you mean 'linear'"),
    ("gamma negative with linear kernel", _est_fit(gamma=-2.0), DataError, "gamma must be a positive number"),  # unused values are ignored as in SVC, bad ones refused
    ("solver misspelt", _est_fit(solver="gurobbi"), DataError, "did you mean 'gurobi'"),
    ("probability variant", _est_fit(probability="platt"), DataError, "probability must be"),
    ("anchor_size", _est_fit(tpr_min=0.8, anchor_size=1.5), DataError, "anchor_size"),
    ("holdout_size text", _est_fit(tpr_min=0.8, holdout_size="a"), DataError, "holdout_size .* must be numbers"),
    ("predict text column", lambda c: c.estimator.predict(c.frame[["x1", "grp"]]), DataError, r"\['grp'\]"),
    ("predict wrong width", lambda c: c.estimator.predict(c.X[:, :1]), ValueError, "features"),
    ("predict before fit", lambda c: CSVMClassifier().predict(c.X), Exception, "not fitted"),
]


@pytest.mark.parametrize(("name", "action", "error", "message"), ESTIMATOR_CASES, ids=[c[0] for c in ESTIMATOR_CASES])
def test_scikit_learn_estimator(ctx, name, action, error, message):
    with pytest.raises(error, match=message):
        action(ctx)


# ---------------------------------------------------------------------- command line
def _parquet_with_lists(c: Ctx) -> Path:
    path = c.folder / "lists.parquet"
    c.frame.assign(tags=[[1, 2]] * len(c.frame)).to_parquet(path)
    return path


def _damaged_model(c: Ctx) -> Path:
    data = bytearray(c.model_file.read_bytes())
    with zipfile.ZipFile(c.model_file) as archive:  # a byte inside model.json's compressed data, not an ignored field
        info = archive.getinfo("model.json")
    data[info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2] ^= 0x55
    return c.file("damaged.csvm", bytes(data))


TRAIN = "{folder}/train.csv"
CLI_CASES: list[tuple[str, Callable[[Ctx], list[str]], int, str]] = [
    ("data is a directory", lambda c: ["fit", str(c.folder), "-f", "y ~ ."], EXIT_FILE, "is a directory"),
    ("data file missing", lambda c: ["fit", str(c.folder / "absent.csv"), "-f", "y ~ ."], EXIT_FILE, "does not exist"),
    ("data file empty", lambda c: ["fit", str(c.file("empty.csv", "")), "-f", "y ~ ."], EXIT_FILE, "is empty"),
    ("unknown suffix", lambda c: ["fit", str(c.file("data.xlsx", "x")), "-f", "y ~ ."], EXIT_FILE, "cannot tell the format"),
    ("duplicated CSV header", lambda c: ["fit", str(c.file("dup.csv", "a,a,y\n1,2,p\n3,4,q\n")), "-f", "y ~ ."],
     EXIT_DATA, r"duplicated column name\(s\) \['a'\]"),
    ("header only", lambda c: ["fit", str(c.file("header.csv", "x1,y\n")), "-f", "y ~ ."], EXIT_DATA, "0 rows"),
    ("numbers with a ? code", lambda c: ["fit", str(c.file("qmark.csv", "x1,x2,y\n" + "".join(
        f"{i % 7},{'?' if i == 3 else i},{'p' if i % 2 else 'q'}\n" for i in range(40)))), "-f", "y ~ ."], EXIT_DATA,
     r"column 'x2' holds text, but 39 of its 40 distinct values are numbers, the others \['\?'\].*leave those cells empty"),
    ("parquet list column", lambda c: ["fit", str(_parquet_with_lists(c)), "-f", "y ~ x1"], EXIT_DATA, r"\['tags'\] hold lists"),
    ("formula payload", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ {open('x','w')}"], EXIT_FORMULA,
     "braces hold Python code"),
    ("formula attribute chain", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ x1.__class__"], EXIT_FORMULA,
     "'x1.__class__'"),
    ("formula absent column", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ age"], EXIT_FORMULA, "'age'"),
    ("time limit NaN", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--time-limit", "nan"], EXIT_USAGE,
     "time_limit"),
    ("time limit negative", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--time-limit", "-5"],
     EXIT_USAGE, "time_limit"),
    ("seed text", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--seed", "abc"], EXIT_USAGE, "--seed"),
    ("seed negative", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--seed", "-1"], EXIT_USAGE,
     "random_state"),
    ("gamma with linear", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--gamma", "0.5"], EXIT_DATA,
     "--gamma 0.5 has no effect with --kernel linear"),
    ("degree with linear", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--degree", "7"], EXIT_DATA,
     "--degree 7 has no effect with --kernel linear; leave --degree out or use --kernel poly"),
    ("max-features with l1", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ x1 + x2", "--penalty", "l1",
                                         "--max-features", "1"], EXIT_DATA,
     "--max-features is the cardinality route of the L2 CSVM; use it with --penalty l2. It is not offered with "
     "--penalty l1"),
    ("max-features above the columns", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ x1 + x2",
                                                   "--max-features", "5"], EXIT_DATA,
     "--max-features 5 exceeds the 2 columns; lower it."),
    ("degree with rbf", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--kernel", "rbf", "--degree", "7"],
     EXIT_DATA, "--degree 7 has no effect with --kernel rbf"),
    ("gamma negative", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--kernel", "rbf", "--gamma", "-5"],
     EXIT_DATA, "gamma must be"),
    ("C NaN", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "-C", "nan"], EXIT_DATA, "C must be"),
    ("tpr above 1", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--tpr-min", "2"], EXIT_USAGE,
     "between 0 and 1"),
    ("output equals input", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "-o", TRAIN.format(folder=c.folder)],
     EXIT_FILE, "same file as the data file"),
    ("save equals input", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--save", TRAIN.format(folder=c.folder)],
     EXIT_FILE, "same file as the data file"),
    ("positive not a label", lambda c: ["fit", TRAIN.format(folder=c.folder), "-f", "y ~ .", "--positive", "maybe"],
     EXIT_DATA, "'maybe'"),
    ("predict output equals model", lambda c: ["predict", str(c.model_file), str(c.folder / "new.csv"), "-o", str(c.model_file)],
     EXIT_FILE, "same file as the model file"),
    ("predict output equals data", lambda c: ["predict", str(c.model_file), str(c.folder / "new.csv"), "-o",
                                              str(c.folder / "new.csv")], EXIT_FILE, "same file as the data file"),
    ("predict missing model", lambda c: ["predict", str(c.folder / "absent.csvm"), str(c.folder / "new.csv")], EXIT_FILE,
     "does not exist"),
    ("predict damaged model", lambda c: ["predict", str(_damaged_model(c)), str(c.folder / "new.csv")], EXIT_FILE,
     "model file"),
    ("predict text in a numeric column",
     lambda c: ["predict", str(c.model_file), str(c.file("text.csv", "x1,x2,grp\nhigh,1,a\n"))], EXIT_DATA,
     "column 'x1' holds non-numeric values"),
    ("predict missing column", lambda c: ["predict", str(c.model_file), str(c.file("nox2.csv", "x1,grp\n1,a\n"))],
     EXIT_DATA, r"\['x2'\]"),
]


@pytest.mark.parametrize(("name", "argv", "code", "message"), CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_command_line(ctx, capsys, name, argv, code, message):
    with pytest.raises(SystemExit) if code == EXIT_USAGE else _no_raise() as caught:
        got = main(argv(ctx))
    err = capsys.readouterr().err
    got = caught.value.code if code == EXIT_USAGE else got
    assert got == code, err
    assert pd.Series([err]).str.contains(message, regex=True).iloc[0], err
    assert "Traceback" not in err


class _no_raise:
    def __enter__(self) -> _no_raise:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False


def test_prediction_cells_that_spreadsheets_would_run_are_escaped(ctx, capsys):
    frame = make_frame().assign(y=lambda f: np.where(f["y"] == "pos", "=HYPERLINK(\"http://x\")", "@neg"))
    train = ctx.folder / "evil_labels.csv"
    frame.to_csv(train, index=False)
    model = ctx.folder / "evil.csvm"
    assert main(["fit", str(train), "-f", "y ~ x1 + x2", "--save", str(model), "--time-limit", "30"]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(ctx.folder / "new.csv")]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(out["predicted"]) <= {"'=HYPERLINK(\"http://x\")", "'@neg"}
    assert (out["decision"] < 0).any()  # numbers stay numbers, negative ones unescaped


# ---------------------------------------------------------------------- model files
def _rewrite(c: Ctx, name: str, edit: Callable[[dict], None] | None = None,
             members: Callable[[dict[str, bytes]], None] | None = None) -> Path:
    with zipfile.ZipFile(c.model_file) as archive:
        content = {n: archive.read(n) for n in archive.namelist()}
    if edit is not None:
        meta = json.loads(content["model.json"])
        edit(meta)
        content["model.json"] = json.dumps(meta).encode()
    if members is not None:
        members(content)
    path = c.folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in content.items():
            archive.writestr(member, data)
    return path


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


MODEL_FILE_CASES: list[tuple[str, Callable[[Ctx], Path], str]] = [
    ("not a zip", lambda c: c.file("plain.csvm", "hello"), "not a ZIP archive"),
    ("a directory", lambda c: c.folder, "is a directory"),
    ("missing", lambda c: c.folder / "nothing.csvm", "does not exist"),
    ("truncated", lambda c: c.file("trunc.csvm", c.model_file.read_bytes()[:-40]), "model file"),
    ("bit flip", _damaged_model, "model file"),
    ("no model.json", lambda c: _rewrite(c, "nojson.csvm", members=lambda m: m.pop("model.json")), "no model.json"),
    ("unexpected member", lambda c: _rewrite(c, "extra.csvm", members=lambda m: m.update({"run.py": b"x"})), "unexpected"),
    ("model.json not JSON", lambda c: _rewrite(c, "notjson.csvm", members=lambda m: m.update({"model.json": b"{"})),
     "not JSON"),
    ("format version", lambda c: _rewrite(c, "v2.csvm", lambda m: m.update(format_version=2)), "format version 2"),
    ("intercept bool", lambda c: _rewrite(c, "bool.csvm", lambda m: m.update(intercept=False)), "intercept must be a number"),
    ("intercept text", lambda c: _rewrite(c, "text.csvm", lambda m: m.update(intercept="1")), "intercept must be a number"),
    ("columns repeated", lambda c: _rewrite(c, "cols.csvm", lambda m: m.update(columns=["x1", "x1", "x2", "grp[T.c]"])),
     "columns"),
    ("label not of its dtype", lambda c: _rewrite(c, "lab.csvm", lambda m: m["labels"].update(dtype="int")),
     "labels.levels must be of labels.dtype"),
    ("kernel name", lambda c: _rewrite(c, "kern.csvm", lambda m: m["kernel"].update(name="sigmoid")), "kernel.name"),
    ("int64 array", lambda c: _rewrite(c, "int.csvm", members=lambda m: m.update({"arrays/coef.npy": _npy(np.arange(4))})),
     "must be float64"),
    ("object array", lambda c: _rewrite(c, "obj.csvm", members=lambda m: m.update(
        {"arrays/coef.npy": _npy(np.array([object()], dtype=object))})), "must be float64"),
    ("NaN in an array", lambda c: _rewrite(c, "nan.csvm", members=lambda m: m.update(
        {"arrays/coef.npy": _npy(np.array([np.nan, 1.0, 1.0, 1.0]))})), "non-finite"),
    ("formula term with code", lambda c: _rewrite(c, "code.csvm", lambda m: m["formula"]["terms"].append(["x1` + {x}"])),
     "bad column name"),
]


@pytest.mark.parametrize(("name", "make", "message"), MODEL_FILE_CASES, ids=[c[0] for c in MODEL_FILE_CASES])
def test_model_files(ctx, name, make, message):
    with pytest.raises(ModelFileError, match=message):
        load_model(make(ctx))


# ---------------------------------------------------------------------- R bridge
def _r_api_fit(c: Ctx, **changes: Any) -> Any:
    from csvm_stats.interfaces import r_api

    arguments = {"x": c.X, "column_names": ["x1", "x2"], "labels": list(c.labels), "positive": "pos",
                 "options": {"tpr_min": 0.7, "bound": "none", "time_limit": 30.0}}
    arguments.update(changes)
    return r_api.fit(**arguments)


def _old_r(c: Ctx, monkeypatch: pytest.MonkeyPatch) -> Any:
    from r_bridge import load_rdata, rsession

    monkeypatch.setattr(rsession, "r_version", lambda: (4, 2, 2))
    return load_rdata(DATA_DIR / "na_types.rda", engine="r")


R_CASES: list[tuple[str, Callable[..., Any], type[Exception], str]] = [
    ("rdata directory", lambda c, mp: __import__("r_bridge").load_rdata(c.folder), DataError, "is a directory"),
    ("rdata missing", lambda c, mp: __import__("r_bridge").load_rdata(c.folder / "no.rda"), FileNotFoundError, "does not exist"),
    ("rdata garbage", lambda c, mp: __import__("r_bridge").load_rdata(c.file("junk.rda", b"junk" * 10)), DataError,
     "not a readable R data file"),
    ("rdata crafted promise", lambda c, mp: __import__("r_bridge").load_rdata(DATA_DIR / "promise.RData"), DataError,
     "not a readable R data file"),
    ("rdata engine unknown", lambda c, mp: __import__("r_bridge").load_rdata(DATA_DIR / "na_types.rda", engine="julia"),
     ValueError, "engine must be"),
    ("rdata engine r on R 4.2", _old_r, DataError, r"CVE-2024-27322.*trusted=True"),
    ("srbct file without SRBCT", lambda c, mp: __import__("r_bridge").srbct(DATA_DIR / "na_types.rda"), DataError,
     "not the R object 'SRBCT'"),
    ("r_api unknown option", lambda c, mp: _r_api_fit(c, options={"tpr_minn": 0.7}), DataError, "tpr_minn"),
    ("r_api labels count", lambda c, mp: _r_api_fit(c, labels=list(c.labels[:-1])), DataError, "labels"),
    ("r_api time_limit NaN", lambda c, mp: _r_api_fit(c, options={"tpr_min": 0.7, "time_limit": float("nan")}), DataError,
     "time_limit"),
    ("r_api gamma with linear", lambda c, mp: _r_api_fit(c, options={"gamma": 0.5}), DataError, "no effect"),
    ("r_api kernel misspelt", lambda c, mp: _r_api_fit(c, options={"kernel": "radial"}), DataError, "kernel must be"),
]


@pytest.mark.filterwarnings("ignore:Unknown file type", "ignore:Wrong extension")
@pytest.mark.parametrize(("name", "action", "error", "message"), R_CASES, ids=[c[0] for c in R_CASES])
def test_r_bridge(ctx, monkeypatch, name, action, error, message):
    pytest.importorskip("rdata")
    with pytest.raises(error, match=message):
        action(ctx, monkeypatch)


def test_the_matrix_has_at_least_80_cases():
    total = len(API_CASES) + len(ESTIMATOR_CASES) + len(CLI_CASES) + len(MODEL_FILE_CASES) + len(R_CASES)
    assert total >= 80, total
