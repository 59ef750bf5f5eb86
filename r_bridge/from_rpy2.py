"""Translate objects of an embedded R (rpy2's low-level ``rinterface``) into RNodes.

rpy2 hands integer and logical ``NA`` over as -2147483648 and character
``NA`` as a placeholder object; here every ``NA`` becomes an entry of the
node's mask, so the converter in :mod:`r_bridge.to_pandas` sees the same
thing it sees for files read without R.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from csvm_stats.exceptions import DataError
from r_bridge.rtree import NA_INTEGER, RNode, RType, atomic, r_double_na_mask, strings


def _flat_values(sexp: Any, dtype: type) -> np.ndarray:
    """The vector's data in R's order (an array's memoryview has R's dims, column-major)."""
    return np.asarray(sexp.memoryview(), dtype=dtype).ravel(order="F").copy()


def node_from_sexp(sexp: Any) -> RNode:
    """The :class:`RNode` of an rpy2 ``Sexp`` (vectors, lists and NULL)."""
    import rpy2.rinterface as ri

    kind = sexp.typeof
    if kind == ri.RTYPES.NILSXP:
        return RNode(RType.NULL)
    attributes = {str(name): node_from_sexp(sexp.do_slot(str(name))) for name in sexp.list_attrs()}
    if kind in (ri.RTYPES.LGLSXP, ri.RTYPES.INTSXP):
        values = _flat_values(sexp, np.int32)
        rtype = RType.LOGICAL if kind == ri.RTYPES.LGLSXP else RType.INTEGER
        return atomic(rtype, values, values == NA_INTEGER, attributes)
    if kind == ri.RTYPES.REALSXP:
        values = _flat_values(sexp, np.float64)
        return atomic(RType.DOUBLE, values, r_double_na_mask(values), attributes)
    if kind == ri.RTYPES.CPLXSXP:
        values = np.array([complex(z) for z in sexp], dtype=np.complex128)
        return atomic(RType.COMPLEX, values, r_double_na_mask(np.real(values)), attributes)
    if kind == ri.RTYPES.STRSXP:
        return strings([None if value is ri.NA_Character else str(value) for value in sexp], attributes)
    if kind in (ri.RTYPES.VECSXP, ri.RTYPES.EXPRSXP):
        return RNode(RType.LIST, tuple(node_from_sexp(child) for child in sexp), None, attributes)
    raise DataError(
        f"R objects of type {kind.name} (functions, environments, S4 objects, ...) cannot be "
        "converted to pandas; keep only data in the object"
    )
