"""Multiclass fits in model files and on the command line."""

from __future__ import annotations

import json
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from csvm_stats.inference.bounds import CappedTargetWarning
from csvm_stats.interfaces.cli import EXIT_DATA, EXIT_OK, main
from csvm_stats.models.model import CSVM
from csvm_stats.multiclass.persistence import SavedMulticlassModel
from csvm_stats.interfaces.persistence import ModelFileError, load_model, save_model


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    kind = rng.choice(["apple", "pear", "plum"], n)
    centre = pd.Series(kind).map({"apple": 0.0, "pear": 2.0, "plum": 4.0}).to_numpy()
    return pd.DataFrame({
        "x1": centre + rng.normal(size=n),
        "x2": 0.5 * centre + rng.normal(size=n),
        "grp": rng.choice(["a", "b"], n),
        "fruit": kind,
    })


@pytest.fixture(scope="module")
def fitted():
    data = _frame(150, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        res = CSVM.from_formula("fruit ~ .", data, recall_min={"pear": 0.8}, bound="binomial").fit(
            random_state=0, solver="scip")
    return data, res


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_save_and_load_predict_exactly_as_the_fit(tmp_path, kernel):
    data = _frame(120, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        res = CSVM.from_formula("fruit ~ .", data, recall_min={"plum": 0.8}, kernel=kernel).fit(
            random_state=2, solver="scip")
    path = save_model(res, tmp_path / "fruit.csvm")
    loaded = load_model(path)
    assert isinstance(loaded, SavedMulticlassModel)
    new = _frame(30, 9)
    pd.testing.assert_frame_equal(loaded.decision_function(new), res.decision_function(new), check_exact=False, atol=1e-10)
    assert loaded.predict(new).astype(str).equals(res.predict(new).astype(str))
    assert loaded.summary_text == str(res.summary())
    assert loaded.confusion.to_numpy().sum() == res.split.holdout.size
    assert loaded.random_state == res.random_state
    assert set(loaded.report["params"]) == {"apple", "pear", "plum"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("intercept", [0.0, 0.0], "intercept must list 3 numbers"),
     ("kind", "several", "kind 'several' is not one this csvm-stats reads")],
)
def test_tampered_multiclass_file_is_refused(tmp_path, fitted, field, value, message):
    _, res = fitted
    path = save_model(res, tmp_path / "m.csvm")
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    metadata = json.loads(members["model.json"])
    metadata[field] = value
    members["model.json"] = json.dumps(metadata).encode()
    bad = tmp_path / "bad.csvm"
    with zipfile.ZipFile(bad, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFileError, match=message):
        load_model(bad)


def test_cli_fit_with_recall_min_save_and_predict(tmp_path, capsys):
    data = _frame(150, 3)
    train, new = tmp_path / "train.csv", tmp_path / "new.csv"
    data.to_csv(train, index=False)
    data.drop(columns="fruit").head(12).to_csv(new, index=False)
    model, summary, predictions = tmp_path / "m.csvm", tmp_path / "s.json", tmp_path / "p.csv"
    code = main(["fit", str(train), "-f", "fruit ~ .", "--recall-min", "pear=0.8", "--recall-min", "plum=0.7",
                 "--bound", "none", "--solver", "scip", "--format", "json", "-o", str(summary), "--save", str(model)])
    assert code == EXIT_OK
    report = json.loads(summary.read_text())
    assert set(report["rates"]) == {"apple", "pear", "plum"} and "confusion" in report
    assert main(["predict", str(model), str(new), "-o", str(predictions)]) == EXIT_OK
    table = pd.read_csv(predictions)
    assert list(table.columns) == ["row", "predicted", "score_apple", "score_pear", "score_plum"]
    scores = table[["score_apple", "score_pear", "score_plum"]].to_numpy()
    assert (table["predicted"].to_numpy() == np.array(["apple", "pear", "plum"])[scores.argmax(1)]).all()
    assert main(["fit", str(train), "-f", "fruit ~ .", "--recall-min", "banana=0.8"]) == EXIT_DATA
    assert "banana" in capsys.readouterr().err


def test_r_entry_points_take_several_classes():
    from csvm_stats.interfaces import r_api
    from csvm_stats.multiclass.r_entry import fit_multiclass

    data = _frame(120, 4)
    x = data[["x1", "x2"]].to_numpy()
    labels = data["fruit"].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CappedTargetWarning)
        plain = r_api.fit(x, ["x1", "x2"], labels, "plum", {"random_state": 0, "solver": "scip"})
        constrained = fit_multiclass(x, ["x1", "x2"], labels, ["pear"], [0.8], {"random_state": 0, "solver": "scip"})
    exported = r_api.export(constrained["results"])
    assert exported["multiclass"] and exported["coef"].shape == (2, 3) and exported["intercept"].shape == (3,)
    assert list(exported["levels"]) == ["apple", "pear", "plum"] and exported["confusion"].shape == (3, 3)
    assert exported["rates"]["target"][1] == 0.8
    out = r_api.predict(plain["results"], x[:5], ["class", "decision"])
    assert out["decision"].shape == (5, 3)
    assert list(out["class"]) == list(np.array(["apple", "pear", "plum"])[out["decision"].argmax(1)])


def test_loaded_params_keep_the_class_labels(tmp_path):
    """The report stores class keys as text; a loaded model's params map them back (integer classes 0, 1, 2 came
    back as '0', '1', '2' and params[1] raised KeyError; review r9 F5)."""
    rng = np.random.default_rng(0)
    n = 240
    y = rng.integers(0, 3, n)
    X = pd.DataFrame(rng.normal(size=(n, 2)) + y[:, None], columns=["a", "b"]).assign(k=y)
    fit = CSVM.from_formula("k ~ a + b", X, recall_min={0: 0.6}, bound="none").fit(random_state=0, time_limit=30)
    loaded = load_model(save_model(fit, tmp_path / "m.csvm"))
    pd.testing.assert_frame_equal(loaded.params, fit.params)
    assert loaded.params.columns.name == "class" and loaded.params[1].equals(fit.params[1])
