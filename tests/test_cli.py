"""The csvm-stats command line end to end on temporary files, and the saved-model format's safety."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from csvm_stats.interfaces.cli import (
    EXIT_DATA,
    EXIT_FILE,
    EXIT_FORMULA,
    EXIT_INFEASIBLE,
    EXIT_OK,
    EXIT_USAGE,
    main,
)
from csvm_stats.exceptions import DataError
from csvm_stats.models.model import CSVM
from csvm_stats.interfaces.persistence import ModelFileError, load_model, save_model

FORMULA = "y ~ . - id"


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "x1": rng.normal(size=n),
            "x2": rng.normal(size=n),
            "grp": rng.choice(["a", "b", "c"], n),
        }
    )
    signal = frame["x1"] + 0.5 * frame["x2"] + 0.4 * (frame["grp"] == "b") + 0.7 * rng.normal(size=n)
    frame["y"] = np.where(signal > 0, "pos", "neg")
    return frame


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    train = tmp_path / "train.csv"
    _frame(160, 1).to_csv(train, index=False)
    new = tmp_path / "new.parquet"
    _frame(40, 2).drop(columns="y").to_parquet(new)
    return {"train": train, "new": new, "dir": tmp_path}


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_fit_prints_summary_and_save_then_predict_matches_the_fit(files, capsys):
    model_file = files["dir"] / "model.csvm"
    code, out, err = _run(
        ["fit", files["train"], "-f", FORMULA, "--tpr-min", "0.8", "--bound", "binomial", "--positive", "pos",
         "--save", model_file],
        capsys,
    )
    assert code == EXIT_OK, err
    assert "Constrained SVM (CSVM) Results" in out and "Confidence statements" in out
    assert "grp[T.b]" in out and model_file.is_file()

    code, out, err = _run(["predict", model_file, files["new"]], capsys)
    assert code == EXIT_OK, err
    predicted = pd.read_csv(io.StringIO(out), index_col="row")
    assert list(predicted.columns) == ["predicted", "decision"]

    data = pd.read_csv(files["train"])
    fitted = CSVM.from_formula(FORMULA, data, tpr_min=0.8, bound="binomial", positive="pos").fit(random_state=0)
    new = pd.read_parquet(files["new"])
    assert predicted["predicted"].tolist() == fitted.predict(new).tolist()
    np.testing.assert_allclose(predicted["decision"], fitted.decision_function(new), rtol=1e-9, atol=1e-9)


def test_fit_writes_json_and_html(files, capsys):
    json_file, html_file = files["dir"] / "report.json", files["dir"] / "report.html"
    code, _, err = _run(["fit", files["train"], "-f", FORMULA, "--tnr-min", "0.8", "--format", "json", "-o", json_file], capsys)
    assert code == EXIT_OK, err
    report = json.loads(json_file.read_text())
    assert set(report["rates"]) == {"tpr", "tnr", "acc", "bacc"} and report["solver"]["status"] == "optimal"
    assert report["rates"]["tnr"]["method"] == "clopper-pearson" and report["rates"]["tpr"]["upper"] is not None
    n_negative = int((pd.read_csv(files["train"])["y"] == "neg").sum())
    assert report["rates"]["tnr"]["heldout_n"] == pytest.approx(n_negative / 4, abs=1)
    code, _, err = _run(["fit", files["train"], "-f", FORMULA, "--format", "html", "-o", html_file], capsys)
    assert code == EXIT_OK, err
    assert "<table" in html_file.read_text()


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["fit", "{dir}/absent.csv", "-f", FORMULA], EXIT_FILE, "does not exist"),
        (["fit", "{dir}/train.xlsx", "-f", FORMULA], EXIT_FILE, "does not exist"),
        (["fit", "{train}", "-f", "y ~ x1 +"], EXIT_FORMULA, "cannot parse"),
        (["fit", "{train}", "-f", "y ~ nothere"], EXIT_FORMULA, "nothere"),
        (["fit", "{train}", "-f", "y ~ x1", "--positive", "maybe"], EXIT_DATA, "maybe"),
        (["fit", "{train}", "-f", "y ~ x1", "--tpr-min", "0.99", "--tnr-min", "0.99", "--bound", "none"],
         EXIT_INFEASIBLE, "infeasible"),
        (["predict", "{dir}/absent.csvm", "{new}"], EXIT_FILE, "does not exist"),
    ],
)
def test_errors_have_distinct_exit_codes_and_say_what_is_wrong(files, capsys, argv, code, message):
    argv = [a.format(dir=files["dir"], train=files["train"], new=files["new"]) for a in argv]
    got, _, err = _run(argv, capsys)
    assert got == code
    assert message in err and "Traceback" not in err


def test_missing_values_and_unknown_format_are_reported(files, capsys):
    bad = files["dir"] / "na.csv"
    bad.write_text("x1,x2,y\n1,2,a\n3,,b\n4,5,a\n")
    code, _, err = _run(["fit", bad, "-f", "y ~ ."], capsys)
    assert code == EXIT_DATA and "missing values" in err
    odd = files["dir"] / "data.xlsx"
    odd.write_text("not a table")
    code, _, err = _run(["fit", odd, "-f", "y ~ ."], capsys)
    assert code == EXIT_FILE and "cannot tell the format" in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fit", "data.csv"])
    assert stop.value.code == EXIT_USAGE
    with pytest.raises(SystemExit) as stop:
        main(["fit", "data.csv", "-f", "y ~ .", "--tpr-min", "1.5"])
    assert stop.value.code == EXIT_USAGE


def test_entry_point_runs_as_a_process(files):
    done = subprocess.run(
        [sys.executable, "-m", "csvm_stats", "predict", str(files["dir"] / "absent.csvm"), str(files["new"])],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == EXIT_FILE
    assert "csvm-stats predict: file error" in done.stderr


# ---------------------------------------------------------------------- the saved format
@pytest.fixture()
def saved(files) -> tuple[Path, pd.DataFrame]:
    data = pd.read_csv(files["train"])
    results = CSVM.from_formula(FORMULA, data, tpr_min=0.8, bound="binomial", kernel="rbf").fit(random_state=0)
    path = save_model(results, files["dir"] / "rbf.csvm")
    new = pd.read_parquet(files["new"])
    assert load_model(path).predict(new).tolist() == results.predict(new).tolist()
    return path, new


def _rewrite(path: Path, target: Path, *, metadata=None, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, "w") as copy:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == "model.json" and metadata is not None:
                meta = json.loads(body)
                metadata(meta)
                body = json.dumps(meta).encode()
            copy.writestr(info.filename, body)
        for name, body in (extra or {}).items():
            copy.writestr(name, body)
    return target


class _Payload:
    """Unpickling this would create the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_pickle_inside_the_archive_is_refused_without_running(saved, tmp_path):
    path, _ = saved
    marker = tmp_path / "pwned"
    buffer = io.BytesIO()
    np.save(buffer, np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(tmp_path / "evil.csvm", "w") as copy:
        for info in source.infolist():
            body = buffer.getvalue() if info.filename == "arrays/coef.npy" else source.read(info.filename)
            copy.writestr(info.filename, body)
    with pytest.raises(ModelFileError, match="arrays/coef.npy"):
        load_model(tmp_path / "evil.csvm")
    assert not marker.exists()


def test_a_pickle_file_is_not_a_model(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "model.csvm"
    evil.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ModelFileError, match="not a ZIP archive"):
        load_model(evil)
    assert not marker.exists()


def test_a_formula_term_with_python_code_is_never_evaluated(saved, tmp_path):
    path, _ = saved
    marker = tmp_path / "pwned"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"

    def inject(meta):
        meta["formula"]["terms"].append([code])

    with pytest.raises(ModelFileError, match="builds the design columns"):  # refused at load, never at predict
        load_model(_rewrite(path, tmp_path / "code.csvm", metadata=inject))
    assert not marker.exists()

    def backtick(meta):
        meta["formula"]["terms"].append(["x1` + np.log(`x2"])

    with pytest.raises(ModelFileError, match="bad column name"):
        load_model(_rewrite(path, tmp_path / "tick.csvm", metadata=backtick))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(format_version=99), "format version 99"),
        (lambda m: m.update(format="something-else"), "format is"),
        (lambda m: m["kernel"].update(name="callable"), "kernel.name"),
        (lambda m: m["labels"].update(positive="other"), "labels.positive"),
    ],
)
def test_tampered_metadata_is_refused(saved, tmp_path, change, message):
    path, _ = saved
    with pytest.raises(ModelFileError, match=message):
        load_model(_rewrite(path, tmp_path / "tampered.csvm", metadata=change))


def test_unexpected_members_are_refused(saved, tmp_path):
    path, _ = saved
    with pytest.raises(ModelFileError, match="unexpected member"):
        load_model(_rewrite(path, tmp_path / "extra.csvm", extra={"run_me.py": b"print('hi')"}))


def test_formula_with_python_expressions_cannot_be_saved(files):
    data = pd.read_csv(files["train"])
    results = CSVM.from_formula("y ~ x1 + np.exp(x2)", data, safe=False).fit(random_state=0)
    with pytest.raises(DataError, match="Python expressions"):
        save_model(results, files["dir"] / "expr.csvm")


def test_demo_fits_wisconsin_and_compares_with_the_plain_svm(capsys):
    code, out, err = _run(["demo", "--time-limit", "60", "--seed", "0", "--solver", "scip"], capsys)
    assert code == EXIT_OK, err
    # the echoed session is the fit it ran, options included (review r8 F17)
    assert ">>> res = model.fit(solver='scip', time_limit=60.0, random_state=0)" in out
    assert "tpr_min=0.9, alpha=0.05, bound='binomial', positive='malignant')" in out
    assert re.search(r"^Positive class +'malignant'$", out, flags=re.MULTILINE)
    assert "Confidence statements" in out and "Held-out comparison" in out
    assert "plain SVM" in out and "CSVM, TPR >= 0.9" in out


def test_guarantee_mode_from_the_command_line(files, capsys):
    code, out, err = _run(
        ["fit", files["train"], "-f", FORMULA, "--tpr-min", "0.8", "--bound", "binomial", "--guarantee", "--format", "json"],
        capsys,
    )
    assert code == EXIT_OK, err
    assert json.loads(out)["rates"]["tpr"]["method"] == "order statistic"
    # the bare flag before the data file: the file is not taken as the flag's value (review r9 F2)
    code, out, err = _run(["fit", "-f", FORMULA, "--tpr-min", "0.8", "--bound", "binomial", "--format", "json",
                           "--guarantee", files["train"]], capsys)
    assert code == EXIT_OK, err
    assert json.loads(out)["rates"]["tpr"]["method"] == "order statistic"


def test_guarantee_names_the_rate_when_two_are_required(files, capsys):
    """--guarantee tpr / tnr chooses the rate (review r8 F12); the bare flag with two rates says how, in CLI flags."""
    both = ["fit", files["train"], "-f", FORMULA, "--tpr-min", "0.6", "--tnr-min", "0.5", "--bound", "binomial",
            "--format", "json"]
    code, _, err = _run([*both, "--guarantee"], capsys)
    assert code == EXIT_DATA
    assert "say which rate to guarantee: --guarantee tpr or --guarantee tnr" in err
    assert "guarantee=" not in err and "tpr_min" not in err
    for rate, other in (("tpr", "tnr"), ("tnr", "tpr")):
        code, out, err = _run([*both, "--guarantee", rate], capsys)
        assert code == EXIT_OK, err
        report = json.loads(out)["rates"]
        assert report[rate]["method"] == "order statistic" and report[other]["method"] != "order statistic"
    code, _, err = _run(["fit", files["train"], "-f", FORMULA, "--tnr-min", "0.6", "--guarantee", "tpr"], capsys)
    assert code == EXIT_DATA and "--guarantee tpr needs --tpr-min, the rate to guarantee" in err
    with pytest.raises(SystemExit) as stop:
        main(["fit", str(files["train"]), "-f", FORMULA, "--tpr-min", "0.7", "--guarantee", "fpr"])
    assert stop.value.code == EXIT_USAGE
    assert "--guarantee takes tpr or tnr" in capsys.readouterr().err


def test_predict_help_names_the_columns_of_two_class_and_multiclass_models(files, capsys):
    """The help states both layouts (review r8 F13); the files written have the columns it names."""
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "row, predicted, decision (and p0, p1, p with --proba) for a two-class model" in help_text
    assert "row, predicted, score_<class> for every class (and p0_<class>, p1_<class>, p_<class>" in help_text
    model_file, out = files["dir"] / "mc.csvm", files["dir"] / "mc.csv"
    code, _, err = _run(["fit", files["train"], "-f", "grp ~ x1 + x2", "--recall-min", "a=0.5", "--bound", "none",
                         "--save", model_file], capsys)
    assert code == EXIT_OK, err
    code, _, err = _run(["predict", model_file, files["new"], "--proba", "-o", out], capsys)
    assert code == EXIT_OK, err
    classes = ["a", "b", "c"]
    assert list(pd.read_csv(out).columns) == ["row", "predicted", *(f"{s}_{c}" for s in ("score", "p0", "p1", "p")
                                                                     for c in classes)]


def test_predict_reads_a_text_factor_as_text_when_a_batch_looks_like_numbers(files, capsys):
    """Review r7 F6: a batch whose levels were all "0" (or codes "01", "02") was read as numbers and refused."""
    rng = np.random.default_rng(0)
    n = 200
    nodes = rng.choice(["0", "1-3", "4+"], n)
    code = rng.choice(["01", "02", "x3"], n)
    x = rng.normal(size=n)
    y = np.where(x + 1.5 * (nodes == "4+") + rng.normal(size=n) > 0.5, "relapse", "none")
    train, model_file = files["dir"] / "nodes.csv", files["dir"] / "nodes.csvm"
    pd.DataFrame({"x": x, "nodes": nodes, "code": code, "y": y}).to_csv(train, index=False)
    status, _, err = _run(["fit", train, "-f", "y ~ .", "--tpr-min", "0.6", "--bound", "none", "--save", model_file],
                          capsys)
    assert status == EXIT_OK, err
    saved = load_model(model_file)
    batches = {"zeros": (["0", "0", "0"], ["01", "02", "01"]), "mixed": (["0", "4+", "1-3"], ["x3", "01", "02"])}
    for name, (batch_nodes, batch_code) in batches.items():
        batch = pd.DataFrame({"x": [0.1, -0.5, 1.2], "nodes": batch_nodes, "code": batch_code})
        path, out = files["dir"] / f"{name}.csv", files["dir"] / f"{name}_pred.csv"
        batch.to_csv(path, index=False)
        status, _, err = _run(["predict", model_file, path, "-o", out], capsys)
        assert status == EXIT_OK, err
        np.testing.assert_allclose(pd.read_csv(out)["decision"], saved.decision_function(batch).to_numpy(), rtol=1e-9)
    unseen = files["dir"] / "unseen.csv"
    pd.DataFrame({"x": [0.1], "nodes": ["4"], "code": ["01"]}).to_csv(unseen, index=False)
    status, _, err = _run(["predict", model_file, unseen], capsys)
    assert status == EXIT_DATA and "['4'] not seen" in err


def _tiny(files) -> pd.DataFrame:
    """Six rows, two positives: the held-out sample of seed 1 has none."""
    return pd.read_csv(files["train"]).iloc[:6].assign(y=["pos", "neg", "pos", "neg", "neg", "neg"])


def test_errors_name_command_line_flags_not_python_keywords(files, capsys):
    """Advice in CLI errors names the CLI's flags (review r8 F5, F12): no fractions=, samples=, recall_min={...}."""
    tiny = files["dir"] / "tiny.csv"
    _tiny(files).to_csv(tiny, index=False)
    code, _, err = _run(["fit", tiny, "-f", "y ~ x1", "--tpr-min", "0.8", "--seed", "1"], capsys)
    assert code == EXIT_DATA and "share (--fractions)" in err, err
    assert "samples" not in err and "fractions=" not in err
    code, _, err = _run(["fit", files["train"], "-f", "grp ~ x1 + x2", "--tpr-min", "0.8"], capsys)
    assert code == EXIT_DATA
    # review r11 F8: the response's classes are named, and the advice uses the flags
    assert "the response 'grp' has 3 classes: 'a' (" in err and "--tpr-min needs exactly two classes" in err, err
    assert re.search(r"--recall-min [abc]=0\.9 \.\.\. instead", err), err
    assert "recall_min" not in err
    code, _, err = _run(["fit", files["train"], "-f", "grp ~ x1 + x2", "--recall-min", "a=0.6", "--guarantee", "tnr"],
                        capsys)
    assert code == EXIT_DATA and "guarantee mode covers every constrained class at once: --guarantee." in err


def test_python_messages_keep_python_keywords(files):
    data = pd.read_csv(files["train"])
    with pytest.raises(DataError, match=r"guarantee='tpr' or guarantee='tnr'"):
        CSVM.from_formula(FORMULA, data, tpr_min=0.7, tnr_min=0.6).fit(guarantee=True)
    with pytest.raises(DataError, match=r"share \(fractions=\) or pass samples=\."):
        CSVM.from_formula("y ~ x1", _tiny(files), tpr_min=0.8).fit(random_state=1)


# ---------------------------------------------------------------------- probabilities in model files
def test_saved_model_keeps_the_calibration_and_predict_proba_gives_it(files, capsys):
    data = pd.read_csv(files["train"])
    results = CSVM.from_formula(FORMULA, data, tpr_min=0.8, bound="binomial").fit(random_state=0)
    path = save_model(results, files["dir"] / "proba.csvm")
    new = pd.read_parquet(files["new"])
    loaded = load_model(path)
    assert loaded.calibration_method == results.calibration.method
    np.testing.assert_array_equal(loaded.predict_proba(new, interval=True).to_numpy(),
                                  results.predict_proba(new, interval=True).to_numpy())
    code, out, _ = _run(["predict", path, files["new"], "--proba"], capsys)
    assert code == EXIT_OK
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == ["row", "predicted", "decision", "p0", "p1", "p"]
    np.testing.assert_allclose(table["p"], results.predict_proba(new).to_numpy(), rtol=1e-9)


def test_a_file_with_one_probability_score_still_loads_and_a_half_interval_score_is_refused(files, tmp_path):
    """Files written before the interval score was separated from P's score use prob_coef for both."""
    data = _frame(240, 3)  # H of 60 rows: the held-out route
    results = CSVM.from_formula(FORMULA, data, tpr_min=0.8, bound="binomial").fit(random_state=0)
    assert results.calibration.method == "held-out"
    path = save_model(results, files["dir"] / "proba2.csvm")
    with zipfile.ZipFile(path) as source:
        assert "arrays/prob_interval_coef.npy" in source.namelist()

    def one_score(meta):
        del meta["calibration"]["model"]["interval_intercept"]

    old = tmp_path / "old.csvm"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(old, "w") as copy:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == "model.json":
                meta = json.loads(body)
                one_score(meta)
                body = json.dumps(meta).encode()
            if info.filename != "arrays/prob_interval_coef.npy":
                copy.writestr(info.filename, body)
    loaded = load_model(old)
    model = loaded.probability_model
    assert model.interval_coef is None
    new = pd.read_parquet(files["new"])
    np.testing.assert_allclose(loaded.predict_proba(new).to_numpy(), results.predict_proba(new).to_numpy(), rtol=1e-12)
    with pytest.raises(ModelFileError, match="interval_intercept and prob_interval_coef"):
        load_model(_rewrite(path, tmp_path / "half.csvm", metadata=one_score))


def test_the_recalibration_curvature_is_saved_read_and_checked(files, tmp_path):
    """k of P = sigmoid(a eta + k g(eta) + b) round-trips; absent means 0; |k| > a (not increasing) is refused."""
    data = _frame(240, 3)
    results = CSVM.from_formula(FORMULA, data, tpr_min=0.8, bound="binomial").fit(random_state=0)
    model = results.calibration.model
    k = model.slope / 2
    results.calibration = dataclasses.replace(results.calibration, model=dataclasses.replace(model, curvature=k))
    path = save_model(results, files["dir"] / "bent.csvm")
    loaded = load_model(path)
    assert loaded.probability_model.curvature == k
    new = pd.read_parquet(files["new"])
    np.testing.assert_allclose(loaded.predict_proba(new).to_numpy(), results.predict_proba(new).to_numpy(), rtol=1e-12)

    def flat(meta):
        del meta["calibration"]["model"]["curvature"]

    plain = load_model(_rewrite(path, tmp_path / "plain.csvm", metadata=flat))
    assert plain.probability_model.curvature == 0.0
    assert plain.probability_model.predict(np.zeros((1, model.coef.size))) == pytest.approx(
        1 / (1 + np.exp(-(model.slope * model.intercept + model.offset))))

    def steep(meta):
        meta["calibration"]["model"]["curvature"] = 2 * meta["calibration"]["model"]["slope"]

    with pytest.raises(ModelFileError, match="curvature"):
        load_model(_rewrite(path, tmp_path / "steep.csvm", metadata=steep))


def test_a_score_that_does_not_rank_saves_and_loads(files, tmp_path):
    """A negative Platt slope (the out-of-fold scores of pure noise) is a legal model: k = 0 is not checked
    against it."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame(rng.standard_normal((60, 3)), columns=["x1", "x2", "x3"]).assign(
        y=np.where(rng.random(60) < 0.5, "case", "control"))
    results = CSVM.from_formula("y ~ x1 + x2 + x3", data).fit(random_state=0)
    model = results.calibration.model
    if model.slope >= 0:  # make it negative: the check must not depend on which way noise fell
        results.calibration = dataclasses.replace(
            results.calibration, model=dataclasses.replace(model, slope=-abs(model.slope) - 0.1, curvature=0.0))
    path = save_model(results, files["dir"] / "noise.csvm")
    loaded = load_model(path)
    assert loaded.probability_model.slope < 0 and loaded.probability_model.curvature == 0.0
    np.testing.assert_allclose(loaded.predict_proba(data).to_numpy(), results.predict_proba(data).to_numpy(),
                               rtol=1e-12)


def test_tampered_calibration_is_refused(files, tmp_path):
    data = pd.read_csv(files["train"])
    results = CSVM.from_formula(FORMULA, data, tpr_min=0.8, bound="binomial").fit(random_state=0)
    path = save_model(results, files["dir"] / "proba.csvm")

    def drop_method(meta):
        meta["calibration"]["method"] = "magic"

    with pytest.raises(ModelFileError, match="calibration.method"):
        load_model(_rewrite(path, tmp_path / "bad_cal.csvm", metadata=drop_method))

    def no_calibration(meta):
        meta["calibration"] = None

    with pytest.raises(ModelFileError, match="calibration arrays without calibration metadata"):
        load_model(_rewrite(path, tmp_path / "orphan.csvm", metadata=no_calibration))


def test_pandas_index_column_is_read_as_row_labels_with_a_warning_in_fit_and_predict(tmp_path, capsys):
    """Review r12 F1: refusing the unnamed 0, 1, 2, ... column (r11 F7) broke df.to_csv(path) files, the most
    common CSV a Python user writes, in predict and with explicit formulas; it is now read as index_col=0 would."""
    plain, indexed = tmp_path / "plain.csv", tmp_path / "indexed.csv"
    _frame(160, 1).to_csv(plain, index=False)
    _frame(160, 1).to_csv(indexed)
    new_plain, new_indexed = tmp_path / "new_plain.csv", tmp_path / "new_indexed.csv"
    _frame(30, 2).drop(columns="y").to_csv(new_plain, index=False)
    _frame(30, 2).drop(columns="y").to_csv(new_indexed)
    import warnings

    outputs = {}
    for name, train, new in (("plain", plain, new_plain), ("indexed", indexed, new_indexed)):
        model, out = tmp_path / f"{name}.csvm", tmp_path / f"{name}_pred.csv"
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert _run(["fit", train, "-f", "y ~ .", "--tpr-min", "0.7", "--seed", "0", "--save", model], capsys)[0] == 0
            assert _run(["predict", model, new, "-o", out], capsys)[0] == 0
        labels = [w for w in seen if "read as the rows' labels, not as data" in str(w.message)]
        assert len(labels) == (2 if name == "indexed" else 0)
        outputs[name] = pd.read_csv(out)
    pd.testing.assert_frame_equal(outputs["plain"], outputs["indexed"])
