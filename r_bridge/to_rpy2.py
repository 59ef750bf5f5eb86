"""Build objects of an embedded R (rpy2) from :class:`~r_bridge.rtree.RNode` trees.

The reverse of :mod:`r_bridge.from_rpy2`: masked entries become R's ``NA``
of the vector's type, attributes are set through R's own ``attr<-`` (which
treats ``names``, ``row.names``, ``dim`` and ``class`` as R does).
"""

from __future__ import annotations

from typing import Any

from r_bridge.rsession import r_function, r_string, rinterface
from r_bridge.rtree import RNode, RType


def sexp_from_node(node: RNode) -> Any:
    """The rpy2 ``Sexp`` for ``node``."""
    ri = rinterface()
    if node.rtype is RType.NULL:
        return ri.NULL
    if node.rtype is RType.LIST:
        sexp = ri.ListSexpVector([sexp_from_node(child) for child in node.values])
    else:
        vector_type, missing_value, convert = {
            RType.CHARACTER: (ri.StrSexpVector, ri.NA_Character, str),
            RType.LOGICAL: (ri.BoolSexpVector, ri.NA_Logical, bool),
            RType.INTEGER: (ri.IntSexpVector, ri.NA_Integer, int),
            RType.DOUBLE: (ri.FloatSexpVector, ri.NA_Real, float),
            RType.COMPLEX: (ri.ComplexSexpVector, ri.NA_Complex, complex),
        }[node.rtype]
        items = zip(node.values, node.na, strict=True)
        sexp = vector_type([missing_value if missing else convert(value) for value, missing in items])
    set_attribute = r_function("attr<-")
    for name, value in node.attributes.items():
        sexp = set_attribute(sexp, which=r_string(name), value=sexp_from_node(value))
    return sexp
