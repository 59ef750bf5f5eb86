"""A fitted CSVM as an R object of class ``"csvm_fit"``, readable in R without Python.

The object is the named list of :func:`csvm_stats.interfaces.r_api.export` (the values
the R package ``csvmstats`` copies at fit time), with the rate table as a
``data.frame`` whose row names are the rates and whose ``met``/``certified``
columns are logical. ``print()`` of it in R shows the summary text once
``csvmstats`` is loaded; without the package it is an ordinary list
(``x$coef``, ``x$rates``, ``cat(x$summary_text)``).

A multiclass fit (``x$multiclass`` is ``TRUE``) has the same fields with one
column per class: ``coef`` and ``coef_standardized`` are (features x classes)
matrices with ``dimnames``, ``intercept`` is named by class, ``confusion`` is
the held-out (true x predicted) count matrix, and the rate table has one row
per class (its recall); ``coef()`` in R gives the (1 + features) x classes
matrix with the intercepts in the first row, as for a multiclass ``csvm()``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from csvm_stats.interfaces import r_api
from r_bridge.from_python import matrix_node, node_from_python
from r_bridge.rtree import RNode, strings

if TYPE_CHECKING:
    from csvm_stats.models.results import CSVMResults

R_CLASS = "csvm_fit"


def fit_node(results: CSVMResults) -> RNode:
    """The :class:`RNode` of the ``csvm_fit`` object for ``results``."""
    exported = r_api.export(results)
    # The model file's bytes serve csvmstats fits (predict after readRDS); a csvm_fit only prints,
    # and the ZIP's time stamps would make two exports of one fit differ.
    del exported["model_file"]
    rates = pd.DataFrame(exported["rates"], index=list(exported["rate_names"]))
    for column in ("met", "certified"):
        rates[column] = pd.array([pd.NA if np.isnan(v) else bool(v) for v in rates[column]], dtype="boolean")
    exported["rates"] = rates
    exported["statements"] = pd.Series(exported["statements"], index=exported["rate_names"])
    if exported.get("multiclass"):
        _multiclass_matrices(exported)
    node = node_from_python(exported)
    return dataclasses.replace(node, attributes={**node.attributes, "class": strings([R_CLASS])})


def _multiclass_matrices(exported: dict[str, Any]) -> None:
    """A multiclass export's matrices as R matrices with row and column names, in place."""
    classes = [str(c) for c in exported["levels"]]
    coef_names = [str(c) for c in exported["coef_names"]]
    for key in ("coef", "coef_standardized"):
        values = np.asarray(exported[key], dtype=np.float64)
        if values.size:
            exported[key] = matrix_node(values.reshape(len(coef_names), len(classes)), coef_names, classes)
        else:  # a kernel fit has no standardised coefficients
            exported[key] = np.empty(0)
    exported["intercept"] = pd.Series(np.asarray(exported["intercept"], dtype=np.float64), index=classes)
    exported["confusion"] = matrix_node(
        np.asarray(exported["confusion"], dtype=np.float64), classes, classes, ("true", "predicted")
    )


def to_r(results: CSVMResults) -> Any:
    """The fitted model as an rpy2 R object of class ``"csvm_fit"`` (needs R and rpy2).

    Parameters
    ----------
    results : CSVMResults
        A fitted model.

    Returns
    -------
    rpy2 object
        An R list of class ``"csvm_fit"``.

    Raises
    ------
    r_bridge.RUnavailableError
        R or rpy2 cannot be used from this process (``pip install -e '.[r]'``).

    Examples
    --------
    >>> from r_bridge import to_r
    >>> fit = to_r(res)  # doctest: +SKIP
    """
    from r_bridge.to_rpy2 import sexp_from_node

    return sexp_from_node(fit_node(results))


def save_rds(results: CSVMResults, path: str | Path) -> Path:
    """Write the ``csvm_fit`` object to an ``.rds`` file (R's ``readRDS`` reads it); no R needed.

    Parameters
    ----------
    results : CSVMResults
        A fitted model.
    path : str or pathlib.Path
        The ``.rds`` file to write.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    OSError
        The file cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from r_bridge import load_rds, save_rds
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> path = save_rds(res, os.path.join(tempfile.mkdtemp(), "fit.rds"))
    >>> path.suffix
    '.rds'
    """
    from r_bridge.to_rdata import write_rds

    path = Path(path)
    write_rds(fit_node(results), path)
    return path
