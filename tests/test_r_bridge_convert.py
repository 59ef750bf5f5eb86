"""r_bridge without R: the pure-Python reader, the converter and SRBCT from its file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from csvm_stats.exceptions import DataError
from r_bridge import load_rdata, srbct, srbct_genes
from r_bridge.rtree import NA_INTEGER, RNode, RType, atomic, r_double_na_mask, strings
from r_bridge.to_pandas import to_python

FIXTURE = Path(__file__).parent / "test_r_bridge_data" / "na_types.rda"
SRBCT_FILE = Path(__file__).resolve().parents[2] / "shared" / "data" / "srbct" / "SRBCT.rda"
needs_srbct = pytest.mark.skipif(
    not SRBCT_FILE.is_file(), reason=f"SRBCT.rda not found at {SRBCT_FILE} (the shared data folder is absent)"
)


@pytest.fixture(scope="module")
def fixture_objects() -> dict:
    return load_rdata(FIXTURE, engine="python")


def test_data_frame_types_and_missing_values(fixture_objects):
    frame = fixture_objects["frame"]
    assert list(frame.index) == ["r1", "r2", "r3"]
    assert frame.dtypes.astype(str).to_dict() == {
        "int": "Int32",
        "dbl": "float64",
        "lgl": "boolean",
        "chr": "string",
        "fct": "category",
        "ord": "category",
        "day": "datetime64[us]",
    }
    assert frame.isna().to_numpy().tolist() == [
        [False, False, False, False, False, False, False],
        [True, True, True, True, True, False, True],
        [False, True, False, False, False, True, False],
    ]
    assert frame["int"].tolist()[::2] == [1, 3]
    assert frame["lgl"].tolist()[::2] == [True, False]
    assert frame["chr"].tolist()[::2] == ["a", "c"]
    assert list(frame["fct"].cat.categories) == ["u", "v", "w"]
    assert not frame["fct"].cat.ordered and frame["ord"].cat.ordered
    assert list(frame["ord"].cat.categories) == ["lo", "hi"]
    assert frame["day"].iloc[2] == pd.Timestamp("2020-03-01")


def test_automatic_row_names_become_a_range_index(fixture_objects):
    assert isinstance(fixture_objects["auto_rows"].index, pd.RangeIndex)
    assert fixture_objects["auto_rows"]["x"].tolist() == [2.5, 3.5]


def test_matrices_keep_dimnames_and_column_major_order(fixture_objects):
    mat = fixture_objects["mat"]
    assert list(mat.index) == ["a", "b"] and list(mat.columns) == ["x", "y", "z"]
    np.testing.assert_array_equal(mat.to_numpy(), [[1, np.nan, 5], [2, 4, 6]])
    int_mat = fixture_objects["int_mat"]
    assert (int_mat.dtypes == "Int32").all()
    assert int_mat.isna().to_numpy().tolist() == [[False, False], [True, False]]
    assert int_mat.iloc[0].tolist() == [1, 3]


def test_lists_become_dicts_or_lists(fixture_objects):
    nested = fixture_objects["nested"]
    assert set(nested) == {"a", "b", "e"}
    assert nested["a"].tolist() == [1, 2, 3]
    assert nested["b"]["c"].tolist() == ["z"]
    assert nested["b"]["d"].isna().all() and nested["b"]["d"].dtype == "boolean"
    assert nested["e"] is None
    unnamed = fixture_objects["unnamed"]
    assert isinstance(unnamed, list) and unnamed[1].tolist() == ["two"]


def test_named_vectors_complex_and_date_times(fixture_objects):
    named = fixture_objects["named_int"]
    assert list(named.index) == ["p", "q"] and named.iloc[0] == 1 and pd.isna(named.iloc[1])
    cplx = fixture_objects["cplx"]
    assert cplx.iloc[0] == 1 + 2j and np.isnan(cplx.iloc[1])
    stamp = fixture_objects["stamp"]
    assert stamp.iloc[0] == pd.Timestamp("2021-06-01 12:30:00", tz="UTC") and pd.isna(stamp.iloc[1])


def test_r_double_na_is_told_apart_from_nan():
    r_na = np.array([0x7FF00000000007A2], dtype=np.uint64).view(np.float64)[0]
    assert r_double_na_mask(np.array([1.0, r_na, np.nan])).tolist() == [False, True, False]


def test_rpy2_style_integer_sentinels_become_missing():
    values = np.array([5, NA_INTEGER], dtype=np.int32)
    series = to_python(atomic(RType.INTEGER, values, values == NA_INTEGER))
    assert series.dtype == "Int32" and series.isna().tolist() == [False, True]
    logical = to_python(atomic(RType.LOGICAL, values[::-1], (values == NA_INTEGER)[::-1]))
    assert logical.dtype == "boolean" and logical.isna().tolist() == [True, False]


def test_duplicated_list_names_are_an_error_not_a_silent_overwrite():
    node = RNode(RType.LIST, (strings(["a"]), strings(["b"])), None, {"names": strings(["k", "k"])})
    with pytest.raises(DataError, match="duplicated names"):
        to_python(node)


def test_factor_codes_outside_the_levels_are_an_error():
    codes = np.array([1, 3], dtype=np.int32)
    node = atomic(RType.INTEGER, codes, [False, False], {"levels": strings(["a", "b"]), "class": strings(["factor"])})
    with pytest.raises(DataError, match="outside its levels"):
        to_python(node)


@pytest.mark.filterwarnings("ignore:Unknown file type", "ignore:Wrong extension")
def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_rdata(tmp_path / "absent.rda", engine="python")
    garbage = tmp_path / "garbage.rda"
    garbage.write_bytes(b"not an R file at all")
    with pytest.raises(DataError, match="not a readable R data file"):
        load_rdata(garbage, engine="python")
    with pytest.raises(ValueError, match="engine must be"):
        load_rdata(FIXTURE, engine="julia")


@needs_srbct
def test_srbct_from_its_file_without_r():
    data = load_rdata(SRBCT_FILE, engine="python")["SRBCT"]
    assert data["X"].shape == (83, 2308)
    assert data["X"].to_numpy().sum() == pytest.approx(173353.7164, abs=1e-6)
    assert not data["X"].isna().any().any()
    assert data["Y"].value_counts().to_dict() == {1.0: 29, 4.0: 25, 3.0: 18, 2.0: 11}
    assert data["gene.names"].shape == (2308, 2)
    assert data["gene.names"]["Gene.Description"].cat.categories.size == 1938


@needs_srbct
def test_srbct_frame_and_binary_rule(monkeypatch):
    monkeypatch.setenv("CSVM_SRBCT_PATH", str(SRBCT_FILE))
    frame = srbct(binary=True)
    assert frame.shape == (83, 2308 + 3)
    assert frame["tumour"].value_counts().to_dict() == {"EWS": 29, "RMS": 25, "NB": 18, "BL": 11}
    assert frame["split"].value_counts().to_dict() == {"train": 65, "test": 18}
    assert (frame.loc[frame["split"] == "test"].index == np.arange(65, 83)).all()
    assert ((frame["y"] == -1) == (frame["tumour"] == "EWS")).all()
    assert "y" not in srbct(SRBCT_FILE, binary=False).columns
    genes = srbct_genes(SRBCT_FILE)
    assert list(genes.index[:2]) == ["X1", "X2"] and len(genes) == 2308


def test_srbct_without_any_source_says_how_to_get_it(monkeypatch):
    monkeypatch.delenv("CSVM_SRBCT_PATH", raising=False)
    monkeypatch.setattr("r_bridge.rsession.r_available", lambda: False)
    with pytest.raises(DataError, match=r"plsgenomics.*CSVM_SRBCT_PATH"):
        srbct()
