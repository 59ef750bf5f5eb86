"""Shapes, class coding and error messages of ``csvm_stats.data.datasets``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from csvm_stats.data.datasets import (
    DATA_DIR_ENV,
    dataset_info,
    list_datasets,
    load_dataset,
    numeric_codes,
)
from csvm_stats.exceptions import DataError

SHARED = Path(__file__).resolve().parents[2] / "shared"
needs_shared = pytest.mark.skipif(
    not (SHARED / "data").is_dir(),
    reason=f"shared data folder {SHARED / 'data'} is absent (set {DATA_DIR_ENV} to run)",
)

# name: (rows, columns, positives, negatives, missing cells), from PROVENANCE.md
EXPECTED = {
    "adult": (48842, 14, 37155, 11687, 6465),
    "australian": (690, 14, 383, 307, 0),
    "banknote": (1372, 4, 762, 610, 0),
    "car": (1728, 6, 518, 1210, 0),
    "cervical": (858, 32, 803, 55, 3622),
    "churn": (3150, 13, 2655, 495, 0),
    "german": (1000, 24, 700, 300, 0),
    "german_categorical": (1000, 20, 700, 300, 0),
    "heart": (270, 13, 150, 120, 0),
    "leukemia": (72, 7129, 47, 25, 0),
    "srbct": (83, 2308, 54, 29, 0),
    "votes": (435, 16, 267, 168, 392),
}


def _check(name: str, rows: int, cols: int, pos: int, neg: int, missing: int) -> None:
    X, y = load_dataset(name)
    assert X.shape == (rows, cols)
    assert y.name == "y" and set(np.unique(y)) == {-1, 1}
    assert (int((y == 1).sum()), int((y == -1).sum())) == (pos, neg)
    assert int(X.isna().sum().sum()) == missing
    assert X.index.equals(y.index)
    assert y.attrs["positive"] == dataset_info(name).positive


def test_wisconsin_needs_no_shared_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "nowhere"))
    _check("wisconsin", 569, 30, 357, 212, 0)


@needs_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shapes_and_classes_match_provenance(name):
    _check(name, *EXPECTED[name])


@needs_shared
def test_votes_keeps_question_marks_as_missing_categories():
    X, _ = load_dataset("votes")
    assert all(list(X[c].cat.categories) == ["n", "y"] for c in X.columns)
    raw = (SHARED / "data/votes/house-votes-84.data").read_text().count("?")
    assert int(X.isna().sum().sum()) == raw


@needs_shared
def test_srbct_ews_is_negative():
    X, y = load_dataset("srbct")
    assert (y == -1).sum() == 29  # EWS, code 1 in SRBCT$Y
    assert X.iloc[:, 0].notna().all() and X.min().min() > 0


@needs_shared
def test_numeric_codes_restores_australian_file_values():
    X, _ = load_dataset("australian")
    assert isinstance(X["A4"].dtype, pd.CategoricalDtype)
    numeric = numeric_codes(X)
    assert all(pd.api.types.is_float_dtype(numeric[c]) for c in numeric.columns)
    raw = pd.read_csv(SHARED / "data/australian/australian.dat", sep=r"\s+", header=None)
    np.testing.assert_array_equal(numeric.to_numpy(), raw.iloc[:, :14].to_numpy(dtype=float))


@needs_shared
def test_numeric_codes_refuses_text_levels():
    X, _ = load_dataset("votes")
    with pytest.raises(DataError, match="non-numeric levels"):
        numeric_codes(X)


def test_missing_data_folder_names_path_and_override(monkeypatch, tmp_path):
    missing = tmp_path / "no_such_dir"
    monkeypatch.setenv(DATA_DIR_ENV, str(missing))
    with pytest.raises(DataError) as info:
        load_dataset("german")
    assert str(missing) in str(info.value) and DATA_DIR_ENV in str(info.value)


def test_missing_file_names_provenance(monkeypatch, tmp_path):
    (tmp_path / "heart").mkdir()
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(DataError, match="PROVENANCE.md"):
        load_dataset("heart")


def test_unknown_name_lists_choices():
    with pytest.raises(DataError, match="wisconsin"):
        load_dataset("iris")
    assert "votes" in list_datasets()
