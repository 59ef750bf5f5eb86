"""The papers' benchmark data sets as ``(X, y)`` pairs with ``y`` in {-1, +1}.

``load_dataset(name)`` returns the attributes as a pandas DataFrame and the
label as a pandas Series of -1/+1 (same index). The positive class follows the
papers (see each folder's PROVENANCE.md and ``/work/shared/NOTES.md``):

* two-class data: positive = majority class (the CSVM paper's rule);
* three or more classes: negative = the largest class, positive = the rest
  (the EBB paper's rule: srbct, car).

Categorical attributes are returned as pandas ``Categorical`` columns and
missing values (``?`` in the UCI files) as NaN. Nothing is imputed, encoded or
scaled here: the EBB paper imputes (median / mode), builds dummies and
standardises inside each cross-validation fold, on the training part only,
which ``csvm_stats.models.tuning.FoldPreprocessor`` does. ``numeric_codes`` turns
categorical columns whose levels are numbers back into those numbers, which is
how the CSVM paper treated australian (14 attributes, Table 2).

The files are read from ``<repo>/../shared/data/<name>/`` or from the folder
named by the environment variable ``CSVM_DATA_DIR``; wisconsin ships with
scikit-learn and needs neither.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError

DATA_DIR_ENV = "CSVM_DATA_DIR"
"""Environment variable that overrides the location of the shared data folder."""


def data_dir() -> Path:
    """Folder holding one sub-folder per data set.

    ``$CSVM_DATA_DIR`` when set, else ``<repo>/../shared/data``.
    """
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3] / "shared" / "data"


def _data_file(folder: str, filename: str) -> Path:
    """Path of one shared data file, or a DataError saying where it was looked for."""
    root = data_dir()
    if not root.is_dir():
        raise DataError(
            f"data folder {root} does not exist; the data set '{folder}' is read from "
            f"{root}/{folder}/. Point the environment variable {DATA_DIR_ENV} at the "
            "folder that holds the data set sub-folders."
        )
    path = root / folder / filename
    if not path.is_file():
        raise DataError(
            f"data file {path} is missing; see {root / folder / 'PROVENANCE.md'} for its "
            f"source, or set {DATA_DIR_ENV} to a folder that has it."
        )
    return path


@dataclass(frozen=True)
class DatasetInfo:
    """What a data set is and which of its classes is coded +1."""

    name: str
    description: str
    positive: str
    negative: str
    source: str


@dataclass(frozen=True)
class _Dataset:
    info: DatasetInfo
    read: Callable[[], tuple[pd.DataFrame, pd.Series]]
    is_positive: Callable[[pd.Series], pd.Series]


def _categorical(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Return ``frame`` with ``columns`` as unordered pandas Categoricals."""
    out = frame.copy()
    for column in columns:
        out[column] = pd.Categorical(out[column])
    return out


def _read_wisconsin() -> tuple[pd.DataFrame, pd.Series]:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    labels = bunch.target.map({0: "malignant", 1: "benign"})
    return bunch.data.astype(float), labels


_AUSTRALIAN_CATEGORICAL = ["A1", "A4", "A5", "A6", "A8", "A9", "A11", "A12"]


def _read_australian() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(_data_file("australian", "australian.dat"), sep=r"\s+", header=None)
    raw.columns = [f"A{k}" for k in range(1, 15)] + ["class"]
    X = raw.drop(columns="class").astype(float)
    return _categorical(X, _AUSTRALIAN_CATEGORICAL), raw["class"]


def _read_german_numeric() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(_data_file("german", "german.data-numeric"), sep=r"\s+", header=None)
    raw.columns = [f"V{k}" for k in range(1, 25)] + ["class"]
    return raw.drop(columns="class").astype(float), raw["class"]


def _read_german_categorical() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(_data_file("german", "german.data"), sep=r"\s+", header=None)
    raw.columns = [f"A{k}" for k in range(1, 21)] + ["class"]
    X = raw.drop(columns="class")
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    X[numeric] = X[numeric].astype(float)
    return _categorical(X, categorical), raw["class"]


_HEART_COLUMNS = [
    "age", "sex", "chest_pain", "resting_bp", "cholesterol", "fasting_sugar",
    "resting_ecg", "max_heart_rate", "exercise_angina", "oldpeak", "slope",
    "major_vessels", "thal",
]
_HEART_CATEGORICAL = [
    "sex", "chest_pain", "fasting_sugar", "resting_ecg", "exercise_angina", "slope", "thal",
]


def _read_heart() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(_data_file("heart", "heart.dat"), sep=r"\s+", header=None)
    raw.columns = _HEART_COLUMNS + ["class"]
    X = raw.drop(columns="class").astype(float)
    return _categorical(X, _HEART_CATEGORICAL), raw["class"]


def _read_banknote() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(
        _data_file("banknote", "data_banknote_authentication.txt"), header=None
    )
    raw.columns = ["variance", "skewness", "curtosis", "entropy", "class"]
    return raw.drop(columns="class").astype(float), raw["class"]


def _read_votes() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(
        _data_file("votes", "house-votes-84.data"), header=None, na_values=["?"],
        keep_default_na=False,
    )
    raw.columns = ["party"] + [f"vote{k}" for k in range(1, 17)]
    X = raw.drop(columns="party")
    for column in X.columns:
        X[column] = pd.Categorical(X[column], categories=["n", "y"])
    return X, raw["party"]


def _read_srbct() -> tuple[pd.DataFrame, pd.Series]:
    import warnings

    import rdata

    path = _data_file("srbct", "SRBCT.rda")
    with warnings.catch_warnings():
        # The file declares no string encoding; its only strings are gene names.
        warnings.filterwarnings("ignore", message="Unknown encoding", category=UserWarning)
        srbct = rdata.read_rda(path)["SRBCT"]
    X = pd.DataFrame(
        np.asarray(srbct["X"], dtype=float),
        columns=[f"gene{k}" for k in range(1, 2309)],
    )
    codes = pd.Series(np.asarray(srbct["Y"], dtype=int))
    labels = codes.map({1: "EWS", 2: "BL", 3: "NB", 4: "RMS"})
    if labels.isna().any():
        raise DataError(f"{path}: class codes outside 1..4: {sorted(set(codes) - {1, 2, 3, 4})}")
    return X, labels


def _read_leukemia() -> tuple[pd.DataFrame, pd.Series]:
    parts = []
    for filename in ("data_set_ALL_AML_train.csv.gz", "data_set_ALL_AML_independent.csv.gz"):
        raw = pd.read_csv(_data_file("leukemia", filename))
        values = raw.set_index("Gene Accession Number").drop(columns="Gene Description")
        values = values.loc[:, ~values.columns.str.startswith("call")]
        parts.append(values.T)
    X = pd.concat(parts)
    X.index = X.index.astype(int)
    X = X.sort_index().astype(float)
    X.columns.name = None
    actual = pd.read_csv(_data_file("leukemia", "actual.csv")).set_index("patient")["cancer"]
    if not X.index.equals(actual.index.sort_values()):
        raise DataError("leukemia: patients in the expression files and actual.csv differ")
    labels = actual.loc[X.index]
    X.index = labels.index = pd.RangeIndex(len(X))
    return X, labels


def _read_churn() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(_data_file("churn", "Customer_Churn.csv"))
    return raw.drop(columns="Churn").astype(float), raw["Churn"]


_CERVICAL_TARGETS = ["Hinselmann", "Schiller", "Cytology", "Biopsy"]


def _read_cervical() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(
        _data_file("cervical", "risk_factors_cervical_cancer.csv"), na_values=["?"],
        keep_default_na=False,
    )
    return raw.drop(columns=_CERVICAL_TARGETS).astype(float), raw["Biopsy"]


def _read_car() -> tuple[pd.DataFrame, pd.Series]:
    raw = pd.read_csv(_data_file("car", "car.data"), header=None)
    raw.columns = ["buying", "maint", "doors", "persons", "lug_boot", "safety", "class"]
    X = raw.drop(columns="class")
    return _categorical(X, list(X.columns)), raw["class"]


_ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
    "hours_per_week", "native_country",
]


def _read_adult() -> tuple[pd.DataFrame, pd.Series]:
    parts = [
        pd.read_csv(
            _data_file("adult", filename), header=None, sep=", ", engine="python",
            na_values=["?"], keep_default_na=False,
        )
        for filename in ("adult.data.gz", "adult.test.gz")
    ]
    raw = pd.concat(parts, ignore_index=True)
    raw.columns = _ADULT_COLUMNS + ["income"]
    X = raw.drop(columns="income")
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    X[numeric] = X[numeric].astype(float)
    return _categorical(X, categorical), raw["income"].str.rstrip(".")


def _equals(value: object) -> Callable[[pd.Series], pd.Series]:
    return lambda labels: labels == value


def _differs(value: object) -> Callable[[pd.Series], pd.Series]:
    return lambda labels: labels != value


_REGISTRY: dict[str, _Dataset] = {
    "wisconsin": _Dataset(
        DatasetInfo("wisconsin", "Breast Cancer Wisconsin (Diagnostic), 569 x 30",
                    "benign (357)", "malignant (212)", "sklearn.datasets.load_breast_cancer"),
        _read_wisconsin, _equals("benign")),
    "australian": _Dataset(
        DatasetInfo("australian", "Statlog Australian credit, 690 x 14 (8 categorical codes)",
                    "class 0 (383)", "class 1 (307)", "australian/australian.dat"),
        _read_australian, _equals(0)),
    "german": _Dataset(
        DatasetInfo("german", "Statlog German credit, numeric version, 1000 x 24",
                    "good, class 1 (700)", "bad, class 2 (300)", "german/german.data-numeric"),
        _read_german_numeric, _equals(1)),
    "german_categorical": _Dataset(
        DatasetInfo("german_categorical",
                    "Statlog German credit, original 20 attributes (13 categorical)",
                    "good, class 1 (700)", "bad, class 2 (300)", "german/german.data"),
        _read_german_categorical, _equals(1)),
    "heart": _Dataset(
        DatasetInfo("heart", "Statlog heart, 270 x 13 (7 categorical)",
                    "absence, class 1 (150)", "presence, class 2 (120)", "heart/heart.dat"),
        _read_heart, _equals(1)),
    "banknote": _Dataset(
        DatasetInfo("banknote", "Banknote authentication, 1372 x 4",
                    "class 0 (762)", "class 1 (610)",
                    "banknote/data_banknote_authentication.txt"),
        _read_banknote, _equals(0)),
    "votes": _Dataset(
        DatasetInfo("votes", "Congressional voting records 1984, 435 x 16 (y/n, '?' = NaN)",
                    "democrat (267)", "republican (168)", "votes/house-votes-84.data"),
        _read_votes, _equals("democrat")),
    "srbct": _Dataset(
        DatasetInfo("srbct", "Small round blue cell tumours (Khan 2001), 83 x 2308",
                    "BL, NB, RMS (54)", "EWS, the largest class (29)", "srbct/SRBCT.rda"),
        _read_srbct, _differs("EWS")),
    "leukemia": _Dataset(
        DatasetInfo("leukemia", "Golub ALL/AML gene expression, 72 x 7129",
                    "ALL (47)", "AML (25)", "leukemia/*.csv.gz + actual.csv"),
        _read_leukemia, _equals("ALL")),
    "churn": _Dataset(
        DatasetInfo("churn", "Iranian telecom churn, 3150 x 13",
                    "non-churn, 0 (2655)", "churn, 1 (495)", "churn/Customer_Churn.csv"),
        _read_churn, _equals(0)),
    "cervical": _Dataset(
        DatasetInfo("cervical", "Cervical cancer risk factors, 858 x 32, target Biopsy",
                    "Biopsy 0 (803)", "Biopsy 1 (55)",
                    "cervical/risk_factors_cervical_cancer.csv"),
        _read_cervical, _equals(0)),
    "car": _Dataset(
        DatasetInfo("car", "Car evaluation, 1728 x 6 categorical",
                    "acc, good, vgood (518)", "unacc, the largest class (1210)", "car/car.data"),
        _read_car, _differs("unacc")),
    "adult": _Dataset(
        DatasetInfo("adult", "Adult census income, train + test, 48842 x 14",
                    "<=50K (37155)", ">50K (11687)", "adult/adult.data.gz + adult.test.gz"),
        _read_adult, _equals("<=50K")),
}


def list_datasets() -> list[str]:
    """Names accepted by ``load_dataset``, in alphabetical order.

    Returns
    -------
    list of str
        The names.

    Examples
    --------
    >>> from csvm_stats.data.datasets import list_datasets
    >>> "wisconsin" in list_datasets()
    True
    """
    return sorted(_REGISTRY)


def dataset_info(name: str) -> DatasetInfo:
    """Description, positive and negative class and source file of a data set.

    Parameters
    ----------
    name : str
        A data set of :func:`list_datasets`.

    Returns
    -------
    DatasetInfo
        Description, positive and negative class, source file.

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown name.

    Examples
    --------
    >>> from csvm_stats.data.datasets import dataset_info
    >>> dataset_info("wisconsin").positive
    'benign (357)'
    """
    return _lookup(name).info


def _lookup(name: str) -> _Dataset:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise DataError(
            f"unknown data set {name!r}; choose one of {', '.join(list_datasets())}"
        ) from None


def load_dataset(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """Load a benchmark data set as ``(X, y)``.

    ``X`` is a DataFrame (numeric columns float, categorical columns pandas
    Categorical, missing values NaN); ``y`` is an int Series named ``"y"`` with
    +1 for the positive class and -1 for the negative class, as fixed by
    ``dataset_info(name).positive``. ``y.attrs["positive"]`` and
    ``y.attrs["negative"]`` repeat that description.

    Parameters
    ----------
    name : str
        ``"wisconsin"`` (embedded, from scikit-learn) or a data set of
        :func:`list_datasets` (read from ``$CSVM_DATA_DIR`` or ``../shared/data``).

    Returns
    -------
    tuple of (pandas.DataFrame, pandas.Series)
        The predictors and the -1/+1 labels.

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown name, or the data file is absent (the message says where it looked).

    Examples
    --------
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> X.shape, sorted(y.unique().tolist())
    ((569, 30), [-1, 1])
    """
    dataset = _lookup(name)
    X, labels = dataset.read()
    positive = dataset.is_positive(labels).to_numpy(dtype=bool)
    y = pd.Series(np.where(positive, 1, -1), index=X.index, name="y")
    y.attrs["positive"] = dataset.info.positive
    y.attrs["negative"] = dataset.info.negative
    return X.reset_index(drop=True), y.reset_index(drop=True)


def load_classes(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """Load a data set as ``(X, labels)`` with its own class labels, before the two-class rule.

    SRBCT keeps its four tumour types (EWS, BL, NB, RMS) and car its four
    ratings (unacc, acc, good, vgood); the labels are a Categorical named
    ``"class"`` with the levels in order of appearance in :data:`CLASS_ORDER`
    when one is listed, else sorted.

    Parameters
    ----------
    name : str
        A data set of :func:`list_datasets`.

    Returns
    -------
    tuple of (pandas.DataFrame, pandas.Series)
        The predictors and the class labels (a Categorical named ``"class"``).

    Raises
    ------
    csvm_stats.exceptions.DataError
        An unknown name, or the data file is absent.

    Examples
    --------
    >>> from csvm_stats.data.datasets import load_classes
    >>> X, labels = load_classes("wisconsin")
    >>> labels.name
    'class'
    """
    X, labels = _lookup(name).read()
    order = CLASS_ORDER.get(name) or sorted(pd.unique(labels).tolist())
    classes = pd.Series(pd.Categorical(labels, categories=order), name="class")
    return X.reset_index(drop=True), classes.reset_index(drop=True)


#: Level order of the multiclass labels of :func:`load_classes` (the source's coding order).
CLASS_ORDER: dict[str, list[str]] = {"srbct": ["EWS", "BL", "NB", "RMS"], "car": ["unacc", "acc", "good", "vgood"]}


def numeric_codes(X: pd.DataFrame) -> pd.DataFrame:
    """Replace categorical columns whose levels are numbers by those numbers.

    The CSVM paper used australian's StatLog codes as numbers (14 attributes
    in its Table 2). Categorical columns with non-numeric levels are an error:
    they have no numeric code to return.
    """
    out = X.copy()
    for column in X.columns:
        if isinstance(X[column].dtype, pd.CategoricalDtype):
            levels = X[column].cat.categories
            if not pd.api.types.is_numeric_dtype(levels):
                raise DataError(
                    f"column {column!r} has non-numeric levels {list(levels)[:5]}; "
                    "encode it with dummies (tuning.FoldPreprocessor) instead"
                )
            out[column] = X[column].astype(float)
    return out
