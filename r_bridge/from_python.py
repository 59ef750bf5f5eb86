"""Plain Python values to :class:`~r_bridge.rtree.RNode` trees (the way out to R).

Only what a fitted model's export needs, with R's usual shapes:
``None`` -> ``NULL``; ``bool``/``int``/``float``/``str`` and numpy arrays
of those kinds -> logical/integer/double/character vectors (``NaN`` in a
double vector -> R's ``NA``, ``None`` in a string array -> ``NA``); a 2-d
numpy array -> R matrix (column-major, with ``dimnames`` when built by
:func:`matrix_node`); an :class:`RNode` -> itself; ``dict``
-> named list; ``list``/``tuple`` -> unnamed list; a ``pandas.Series`` ->
named vector (nullable boolean/integer keep their ``NA``); a
``pandas.DataFrame`` of such columns -> ``data.frame`` with its index as row
names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from r_bridge.rtree import RNode, RType, atomic, strings


def node_from_python(value: Any) -> RNode:
    """The R object for ``value`` (see the module docstring)."""
    if value is None:
        return RNode(RType.NULL)
    if isinstance(value, RNode):
        return value
    if isinstance(value, pd.DataFrame):
        return data_frame_node(value)
    if isinstance(value, pd.Series):
        node = series_node(value)
        return RNode(node.rtype, node.values, node.na, {"names": strings([str(i) for i in value.index])})
    if isinstance(value, dict):
        keys = [str(key) for key in value]
        return RNode(RType.LIST, tuple(node_from_python(v) for v in value.values()), None, {"names": strings(keys)})
    if isinstance(value, (list, tuple)):
        return RNode(RType.LIST, tuple(node_from_python(v) for v in value))
    array = np.asarray(value)
    if array.ndim == 2:
        return matrix_node(array)
    return vector_node(array)


def matrix_node(
    array: np.ndarray,
    row_names: Any = None,
    column_names: Any = None,
    axis_names: tuple[str, str] | None = None,
) -> RNode:
    """An R matrix from a 2-d numpy array: its values in R's column-major order with a ``dim``
    attribute, and ``dimnames`` when row or column names are given (``axis_names`` names the
    two dimensions, as R's ``dimnames = list(true = ..., predicted = ...)``)."""
    array = np.asarray(array)
    if array.ndim != 2:
        raise DataError(f"a matrix for R needs a 2-d array, got one of shape {array.shape}")
    node = vector_node(array.reshape(-1, order="F"))
    attributes = {"dim": atomic(RType.INTEGER, np.array(array.shape, dtype=np.int32), np.zeros(2, dtype=bool))}
    if row_names is not None or column_names is not None:
        names = [None if labels is None else strings([str(label) for label in labels])
                 for labels in (row_names, column_names)]
        for labels, size in zip(names, array.shape, strict=True):
            if labels is not None and len(labels) != size:
                raise DataError(f"{len(labels)} names for a matrix dimension of size {size}")
        dimnames = tuple(RNode(RType.NULL) if labels is None else labels for labels in names)
        extra = {"names": strings(list(axis_names))} if axis_names is not None else {}
        attributes["dimnames"] = RNode(RType.LIST, dimnames, None, extra)
    return RNode(node.rtype, node.values, node.na, attributes)


def vector_node(array: np.ndarray) -> RNode:
    """An atomic R vector from a 0-d or 1-d numpy array."""
    if array.ndim > 1:
        raise DataError(f"only vectors and matrices can be sent to R here, got an array of shape {array.shape}")
    array = array.reshape(-1)
    if array.dtype.kind == "b":
        return atomic(RType.LOGICAL, array.astype(np.int32), np.zeros(array.size, dtype=bool))
    if array.dtype.kind in "iu":
        if array.size and (array.max() > np.iinfo(np.int32).max or array.min() <= np.iinfo(np.int32).min):
            return atomic(RType.DOUBLE, array.astype(np.float64), np.zeros(array.size, dtype=bool))
        return atomic(RType.INTEGER, array.astype(np.int32), np.zeros(array.size, dtype=bool))
    if array.dtype.kind == "f":
        values = array.astype(np.float64)
        return atomic(RType.DOUBLE, values, np.isnan(values))
    if array.dtype.kind in "UO":
        items = [None if _is_missing(item) else str(item) for item in array.tolist()]
        return strings(items)
    raise DataError(f"cannot send numpy dtype {array.dtype} to R")


def series_node(series: pd.Series) -> RNode:
    """An atomic vector from a Series; pandas' nullable booleans and integers keep their NA."""
    missing = series.isna().to_numpy()
    if isinstance(series.dtype, pd.BooleanDtype):
        values = series.fillna(False).to_numpy(dtype=np.int32)
        return atomic(RType.LOGICAL, values, missing)
    if isinstance(series.dtype, pd.api.extensions.ExtensionDtype) and pd.api.types.is_integer_dtype(series.dtype):
        return atomic(RType.INTEGER, series.fillna(0).to_numpy(dtype=np.int32), missing)
    if pd.api.types.is_string_dtype(series.dtype) or series.dtype == object:
        items = zip(series.to_numpy(dtype=object), missing, strict=True)
        return strings([None if gone else str(item) for item, gone in items])
    return vector_node(series.to_numpy())


def _is_missing(item: Any) -> bool:
    return item is None or item is pd.NA or (isinstance(item, float) and np.isnan(item))


def data_frame_node(frame: pd.DataFrame) -> RNode:
    """A ``data.frame`` with the frame's columns and its index (as strings) as row names."""
    columns = tuple(series_node(frame[column]) for column in frame.columns)
    attributes = {
        "names": strings([str(c) for c in frame.columns]),
        "class": strings(["data.frame"]),
        "row.names": strings([str(i) for i in frame.index]),
    }
    return RNode(RType.LIST, columns, None, attributes)
