"""r_bridge through an embedded R (rpy2): R data sets, R's load() and fits sent to R.

These tests need R and rpy2; r_bridge/run_r_tests.sh runs them in the venv
made by r_bridge/setup_r_env.sh. Without rpy2 or R they are skipped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("rpy2.rinterface", reason="rpy2 is not installed (run r_bridge/setup_r_env.sh for the R venv)")

from csvm_stats.interfaces import r_api
from csvm_stats.exceptions import DataError
from r_bridge import load_dataset, load_rdata, load_rds, r_available, rsession, save_rds, srbct, to_r
from r_bridge.from_rpy2 import node_from_sexp
from r_bridge.to_pandas import to_python

if not r_available():
    pytest.skip("R cannot be started from rpy2 (is r-base-core installed?)", allow_module_level=True)

SRBCT_FILE = Path(__file__).resolve().parents[2] / "shared" / "data" / "srbct" / "SRBCT.rda"


def r_call(name: str, *args, namespace: str = "base", **kwargs):
    return rsession.r_function(name, namespace)(*args, **kwargs)


def r_dataset_object(name: str, package: str):
    """The R object itself, for computing reference values in R."""
    environment = rsession.new_environment()
    r_call(
        "data", list=rsession.r_string(name), package=rsession.r_string(package), envir=environment, namespace="utils"
    )
    return environment[name]


def missing_counts_in_r(r_frame) -> list[int]:
    counts = r_call("colSums", r_call("is.na", r_frame))
    return [int(v) for v in counts]


def resaved_through_file(r_object, tmp_path: Path, name: str) -> pd.DataFrame:
    """Save the R object with R's save() and read it back without R (rdata)."""
    environment = rsession.new_environment()
    environment[name] = r_object
    path = tmp_path / f"{name}.rda"
    r_call("save", list=rsession.r_string(name), file=rsession.r_string(str(path)), envir=environment)
    return load_rdata(path, engine="python")[name]


def test_mtcars_row_names_and_values(tmp_path):
    mtcars = load_dataset("mtcars")
    assert mtcars.shape == (32, 11) and mtcars.index[0] == "Mazda RX4"
    assert (mtcars.dtypes == "float64").all()
    means = [float(v) for v in r_call("colMeans", r_dataset_object("mtcars", "datasets"))]
    np.testing.assert_allclose(mtcars.mean().to_numpy(), means)
    resaved = resaved_through_file(r_dataset_object("mtcars", "datasets"), tmp_path, "mtcars")
    pd.testing.assert_frame_equal(resaved, mtcars)


def test_iris_factor_becomes_categorical(tmp_path):
    iris = load_dataset("iris", package="datasets")
    assert iris["Species"].dtype == "category"
    assert list(iris["Species"].cat.categories) == ["setosa", "versicolor", "virginica"]
    assert iris["Species"].value_counts().tolist() == [50, 50, 50]
    assert isinstance(iris.index, pd.RangeIndex)
    pd.testing.assert_frame_equal(resaved_through_file(r_dataset_object("iris", "datasets"), tmp_path, "iris"), iris)


def test_airquality_integer_na_is_missing_not_a_sentinel(tmp_path):
    air = load_dataset("airquality")
    assert air["Ozone"].dtype == "Int32" and air["Ozone"].min() > 0
    assert air.isna().sum().tolist() == missing_counts_in_r(r_dataset_object("airquality", "datasets"))
    assert air["Ozone"].isna().sum() == 37
    pd.testing.assert_frame_equal(
        resaved_through_file(r_dataset_object("airquality", "datasets"), tmp_path, "airquality"), air
    )


def test_logical_and_character_na_from_r():
    ri = rsession.rinterface()
    values = r_call("c", ri.BoolSexpVector([True, False]), ri.NA_Logical)
    assert to_python(node_from_sexp(values)).isna().tolist() == [False, False, True]
    words = r_call("c", rsession.r_string("a"), ri.StrSexpVector([ri.NA_Character]))
    converted = to_python(node_from_sexp(words))
    assert converted.dtype == "string" and converted.isna().tolist() == [False, True]


def test_mlbench_breast_cancer_ordered_factors_and_na(tmp_path):
    if not rsession.has_r_package("mlbench"):
        pytest.skip("R package mlbench is not installed (apt-get install r-cran-mlbench)")
    cancer = load_dataset("BreastCancer", package="mlbench")
    assert cancer.shape == (699, 11)
    assert cancer["Cl.thickness"].cat.ordered and not cancer["Class"].cat.ordered
    assert list(cancer["Class"].cat.categories) == ["benign", "malignant"]
    assert cancer["Id"].dtype == "string"
    assert cancer.isna().sum().tolist() == missing_counts_in_r(r_dataset_object("BreastCancer", "mlbench"))
    assert cancer["Bare.nuclei"].isna().sum() == 16
    back = resaved_through_file(r_dataset_object("BreastCancer", "mlbench"), tmp_path, "BreastCancer")
    pd.testing.assert_frame_equal(back, cancer)


def test_data_sets_stored_under_a_file_name():
    beavers = load_dataset("beavers")
    assert set(beavers) == {"beaver1", "beaver2"}
    pd.testing.assert_frame_equal(load_dataset("beaver1"), beavers["beaver1"])


def test_unknown_data_set_and_package_are_clear_errors():
    with pytest.raises(DataError, match="'no_such_data' was not found"):
        load_dataset("no_such_data", package="datasets")
    with pytest.raises(DataError, match=r"R package 'no\.such\.pkg' is not installed"):
        load_dataset("x", package="no.such.pkg")


@pytest.mark.skipif(not SRBCT_FILE.is_file(), reason=f"SRBCT.rda not found at {SRBCT_FILE}")
def test_srbct_through_r_and_through_the_fallback_are_identical():
    through_r = load_rdata(SRBCT_FILE, engine="r", trusted=True)["SRBCT"]
    through_python = load_rdata(SRBCT_FILE, engine="python")["SRBCT"]
    for key in ("X", "gene.names"):
        pd.testing.assert_frame_equal(through_r[key], through_python[key], check_exact=True)
    pd.testing.assert_series_equal(through_r["Y"], through_python["Y"], check_exact=True)
    assert through_r["X"].shape == (83, 2308)
    frame = srbct(SRBCT_FILE)
    assert frame["tumour"].value_counts().to_dict() == {"EWS": 29, "RMS": 25, "NB": 18, "BL": 11}


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(160, 2))
    labels = np.where(x[:, 1] + 0.5 * rng.normal(size=160) > 0, "pos", "neg")
    options = {"tpr_min": 0.8, "bound": "binomial", "random_state": 4, "time_limit": 20.0}
    return r_api.fit(x, ["a", "b"], labels, "pos", options)["results"]


def test_to_r_gives_a_csvm_fit_object_in_r(results):
    fit = to_r(results)
    assert list(r_call("class", fit)) == ["csvm_fit"]
    element = dict(zip(fit.names, fit, strict=True))
    np.testing.assert_array_equal(list(element["coef"]), results.params.to_numpy()[:-1])
    rates = element["rates"]
    assert list(r_call("class", rates)) == ["data.frame"]
    assert list(r_call("rownames", rates)) == ["tpr", "tnr", "acc", "bacc"]
    met = dict(zip(rates.names, rates, strict=True))["met"]
    assert list(r_call("typeof", met)) == ["logical"]
    assert str(element["summary_text"][0]) == r_api.export(results)["summary_text"]


def test_to_r_of_a_multiclass_fit_has_r_matrices(tmp_path):
    """Review r8 F10: to_r/save_rds of a multiclass fit failed with "only vectors can be sent to R here"."""
    rng = np.random.default_rng(8)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    labels = np.repeat(np.array(["ant", "bee", "cat"]), 50)
    x = centres[np.repeat(np.arange(3), 50)] + rng.normal(size=(150, 2))
    options = {"bound": "binomial", "random_state": 2, "time_limit": 20.0}
    mc = r_api.fit(x, ["a", "b"], labels, None, options)["results"]
    fit = to_r(mc)
    element = dict(zip(fit.names, fit, strict=True))
    assert list(r_call("dim", element["coef"])) == [2, 3]
    assert list(r_call("colnames", element["coef"])) == ["ant", "bee", "cat"]
    values = np.array(list(element["coef"]), dtype=float).reshape((2, 3), order="F")  # R: column-major
    np.testing.assert_array_equal(values, r_api.export(mc)["coef"])
    assert list(r_call("dim", element["confusion"])) == [3, 3]
    path = save_rds(mc, tmp_path / "mc.rds")
    assert bool(r_call("identical", r_call("readRDS", rsession.r_string(str(path))), fit)[0])


def test_save_rds_is_read_by_r_as_the_same_object(results, tmp_path):
    path = save_rds(results, tmp_path / "fit.rds")
    from_file = r_call("readRDS", rsession.r_string(str(path)))
    assert bool(r_call("identical", from_file, to_r(results))[0])
    through_r = load_rds(path, engine="r", trusted=True)
    through_python = load_rds(path, engine="python")
    pd.testing.assert_frame_equal(through_r["rates"], through_python["rates"])


def test_starting_r_prints_no_api_mode_noise(tmp_path):
    """rsession imports rpy2 in ABI mode: no "Error importing in API mode" on stderr."""
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key != "RPY2_CFFI_MODE"}
    done = subprocess.run(
        [sys.executable, "-c", "from r_bridge import rsession; rsession.rinterface(); print('started')"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "started" in done.stdout
    assert "API mode" not in done.stderr
