"""The SRBCT gene-expression data (Khan et al. 2001) as one pandas DataFrame.

The data are those of the R package plsgenomics (``data(SRBCT)``): an R list
with ``X`` (83 x 2308 expression levels), ``Y`` (class codes 1..4) and
``gene.names``. Rows 1-65 are plsgenomics' training samples, 66-83 its test
samples.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from r_bridge import rsession
from r_bridge.datasets import load_dataset, load_rdata

#: Tumour names of the class codes 1..4 of ``SRBCT$Y``.
TUMOURS = ("EWS", "BL", "NB", "RMS")
#: The class coded negative by the binary rule: EWS, the largest class.
NEGATIVE_TUMOUR = "EWS"
#: Number of plsgenomics' training samples (the first rows).
N_TRAIN = 65
PATH_VARIABLE = "CSVM_SRBCT_PATH"


def srbct(path: str | Path | None = None, binary: bool = True) -> pd.DataFrame:
    """SRBCT with one row per sample.

    Columns: ``X1`` ... ``X2308`` (expression levels, in the order of the
    plsgenomics matrix; the gene annotations are in :func:`srbct_genes`),
    ``tumour`` (categorical EWS, BL, NB, RMS), ``split`` (categorical
    ``train`` for rows 1-65, ``test`` for rows 66-83) and, when ``binary``,
    ``y``: -1 for EWS (the largest class) and +1 for the three others, the
    rule of the EBB paper for turning several classes into two.

    Source: plsgenomics in R when it is installed, else the ``SRBCT.rda``
    file at ``path``, else the file named by the environment variable
    ``CSVM_SRBCT_PATH``.

    Parameters
    ----------
    path : str, pathlib.Path or None
        The ``SRBCT.rda`` file when plsgenomics is not installed in R.
    binary : bool, default True
        Add the column ``y`` (-1 for EWS, +1 for the others).

    Returns
    -------
    pandas.DataFrame
        83 rows: the genes, ``tumour``, ``split`` (and ``y``).

    Raises
    ------
    csvm_stats.exceptions.DataError
        Neither R's plsgenomics, ``path`` nor ``CSVM_SRBCT_PATH`` gives the
        data, or the file does not hold the object ``SRBCT``.

    Examples
    --------
    >>> from r_bridge import srbct
    >>> frame = srbct("SRBCT.rda")  # doctest: +SKIP
    >>> frame["tumour"].value_counts().to_dict()  # doctest: +SKIP
    {'EWS': 29, 'RMS': 25, 'NB': 18, 'BL': 11}
    """
    raw = _raw_srbct(path)
    expression = np.asarray(raw["X"], dtype=np.float64)
    codes = np.asarray(raw["Y"], dtype=np.float64)
    if expression.ndim != 2 or expression.shape[0] != codes.shape[0]:
        raise DataError(f"SRBCT X has shape {expression.shape} but Y has {codes.shape[0]} entries")
    if not np.isin(codes, np.arange(1, len(TUMOURS) + 1)).all():
        raise DataError(f"SRBCT Y must hold the class codes 1..4, found {sorted(set(codes.tolist()))}")
    frame = pd.DataFrame(expression, columns=[f"X{j + 1}" for j in range(expression.shape[1])])
    frame["tumour"] = pd.Categorical.from_codes(codes.astype(int) - 1, categories=list(TUMOURS))
    split = np.where(np.arange(len(frame)) < N_TRAIN, "train", "test")
    frame["split"] = pd.Categorical(split, categories=["train", "test"])
    if binary:
        frame["y"] = np.where(frame["tumour"] == NEGATIVE_TUMOUR, -1, 1)
    return frame


def srbct_genes(path: str | Path | None = None) -> pd.DataFrame:
    """The gene annotations (``Image.Id.``, ``Gene.Description``) indexed by column name.

    Parameters
    ----------
    path : str, pathlib.Path or None
        As in :func:`srbct`.

    Returns
    -------
    pandas.DataFrame
        ``Image.Id.`` and ``Gene.Description`` indexed by ``X1`` ... ``X2308``.

    Raises
    ------
    csvm_stats.exceptions.DataError
        As in :func:`srbct`.

    Examples
    --------
    >>> from r_bridge import srbct_genes
    >>> srbct_genes("SRBCT.rda").shape  # doctest: +SKIP
    (2308, 2)
    """
    genes = _raw_srbct(path)["gene.names"].reset_index(drop=True)
    genes.index = pd.Index([f"X{j + 1}" for j in range(len(genes))], name="column")
    return genes


def _raw_srbct(path: str | Path | None) -> dict[str, Any]:
    if path is None and rsession.r_available() and rsession.has_r_package("plsgenomics"):
        return load_dataset("SRBCT", package="plsgenomics")
    file = path if path is not None else os.environ.get(PATH_VARIABLE)
    if file is None:
        raise DataError(
            "SRBCT is not available: install the R package plsgenomics, or pass the path of "
            f"its SRBCT.rda (pkg/data/SRBCT.rda in the plsgenomics sources) as path=, or set {PATH_VARIABLE}"
        )
    objects = load_rdata(file)
    if "SRBCT" not in objects:
        raise DataError(f"{str(file)!r} holds {sorted(objects)}, not the R object 'SRBCT'")
    return objects["SRBCT"]
