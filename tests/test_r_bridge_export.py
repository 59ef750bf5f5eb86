"""r_bridge.save_rds: a fitted model as an R "csvm_fit" object, written and read back without R."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from csvm_stats.interfaces import r_api
from r_bridge import load_rds, save_rds
from r_bridge.export import fit_node
from r_bridge.from_python import node_from_python
from r_bridge.rtree import RType
from r_bridge.to_pandas import to_python


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(160, 2))
    labels = np.where(x[:, 0] + 0.5 * rng.normal(size=160) > 0, "pos", "neg")
    options = {"tpr_min": 0.8, "bound": "binomial", "random_state": 2, "time_limit": 20.0}
    return r_api.fit(x, ["a", "b"], labels, "pos", options)["results"]


def test_fit_node_is_a_classed_list_with_a_rate_data_frame(results):
    node = fit_node(results)
    assert node.rtype is RType.LIST and node.classes == ["csvm_fit"]
    names = node.attribute_strings("names")
    rates = node.values[names.index("rates")]
    assert rates.classes == ["data.frame"]
    met = rates.values[rates.attribute_strings("names").index("met")]
    assert met.rtype is RType.LOGICAL


def test_save_rds_reads_back_with_the_same_values(results, tmp_path):
    path = save_rds(results, tmp_path / "fit.rds")
    back = load_rds(path, engine="python")
    exported = r_api.export(results)
    np.testing.assert_array_equal(back["coef"].to_numpy(), exported["coef"])
    assert back["intercept"].iloc[0] == exported["intercept"]
    assert back["coef_names"].tolist() == ["a", "b"]
    assert back["summary_text"].iloc[0] == exported["summary_text"]
    assert list(back["rates"].index) == ["tpr", "tnr", "acc", "bacc"]
    assert back["rates"]["met"].dtype == "boolean"
    assert bool(back["rates"]["met"].iloc[0]) == bool(results.rates.loc["tpr", "met"])
    assert back["statements"].index.tolist() == ["tpr", "tnr", "acc", "bacc"]
    assert back["solver"]["status"].iloc[0] == results.solver.status.value


@pytest.fixture(scope="module")
def multiclass_results():
    rng = np.random.default_rng(3)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    labels = np.repeat(np.array(["ant", "bee", "cat"]), 60)
    x = centres[np.repeat(np.arange(3), 60)] + rng.normal(size=(180, 2))
    options = {"bound": "binomial", "random_state": 2, "time_limit": 20.0}
    return r_api.fit(x, ["a", "b"], labels, None, options)["results"]


def test_a_multiclass_fit_is_saved_with_its_matrices(multiclass_results, tmp_path):
    """Review r8 F10: save_rds of a multiclass fit failed with "only vectors can be sent to R here"."""
    path = save_rds(multiclass_results, tmp_path / "mc.rds")
    back = load_rds(path, engine="python")
    exported = r_api.export(multiclass_results)
    classes = ["ant", "bee", "cat"]
    assert bool(back["multiclass"].iloc[0])
    # coef: a features x classes matrix with row and column names, in the right (column-major) layout
    assert list(back["coef"].index) == ["a", "b"] and list(back["coef"].columns) == classes
    np.testing.assert_array_equal(back["coef"].to_numpy(), exported["coef"])
    np.testing.assert_array_equal(back["coef_standardized"].to_numpy(), exported["coef_standardized"])
    assert back["intercept"].index.tolist() == classes
    np.testing.assert_array_equal(back["intercept"].to_numpy(), exported["intercept"])
    assert list(back["confusion"].index) == classes and list(back["confusion"].columns) == classes
    np.testing.assert_array_equal(back["confusion"].to_numpy(), exported["confusion"])
    assert list(back["rates"].index) == classes
    assert back["statements"].index.tolist() == classes
    assert back["summary_text"].iloc[0] == exported["summary_text"]


def test_matrices_keep_their_layout_and_dimnames():
    from r_bridge.from_python import matrix_node

    values = np.arange(6.0).reshape(2, 3)
    node = matrix_node(values, ["r1", "r2"], ["x", "y", "z"], ("true", "predicted"))
    assert node.values.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert node.attributes["dim"].values.tolist() == [2, 3]
    assert node.attributes["dimnames"].attribute_strings("names") == ["true", "predicted"]
    back = to_python(node)
    np.testing.assert_array_equal(back.to_numpy(), values)
    assert list(back.index) == ["r1", "r2"] and list(back.columns) == ["x", "y", "z"]
    # a plain 2-d array is a matrix without dimnames
    assert to_python(node_from_python(values)).to_numpy().tolist() == values.tolist()


def test_python_values_keep_their_missing_entries():
    frame = pd.DataFrame(
        {
            "flag": pd.array([True, None], dtype="boolean"),
            "count": pd.array([1, None], dtype="Int32"),
            "value": [0.5, np.nan],
            "label": ["x", None],
        },
        index=["r1", "r2"],
    )
    back = to_python(node_from_python(frame))
    assert back.isna().to_numpy().tolist() == [[False] * 4, [True] * 4]
    assert back.loc["r1"].tolist() == [True, 1, 0.5, "x"]


def test_what_needs_r_says_so_when_r_is_absent(results, monkeypatch):
    import builtins

    from r_bridge import RUnavailableError, load_dataset, r_available, rsession, to_r

    real_import = builtins.__import__

    def import_without_rpy2(name, *args, **kwargs):
        if name.startswith("rpy2"):
            raise ImportError("No module named 'rpy2'")
        return real_import(name, *args, **kwargs)

    rsession.rinterface.cache_clear()
    monkeypatch.setattr(builtins, "__import__", import_without_rpy2)
    try:
        assert not r_available()
        with pytest.raises(RUnavailableError, match=r"needs R and rpy2.*csvm-stats\[r\]"):
            to_r(results)
        with pytest.raises(RUnavailableError, match="needs R and rpy2"):
            load_dataset("mtcars")
    finally:
        monkeypatch.undo()
        rsession.rinterface.cache_clear()
