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
    elif node.rtype is RType.CHARACTER:
        sexp = ri.StrSexpVector([ri.NA_Character if missing else text for text, missing in zip(node.values, node.na)])
    elif node.rtype is RType.LOGICAL:
        sexp = ri.BoolSexpVector([ri.NA_Logical if missing else bool(v) for v, missing in zip(node.values, node.na)])
    elif node.rtype is RType.INTEGER:
        sexp = ri.IntSexpVector([ri.NA_Integer if missing else int(v) for v, missing in zip(node.values, node.na)])
    elif node.rtype is RType.DOUBLE:
        sexp = ri.FloatSexpVector([ri.NA_Real if missing else float(v) for v, missing in zip(node.values, node.na)])
    else:
        sexp = ri.ComplexSexpVector([ri.NA_Complex if missing else complex(v) for v, missing in zip(node.values, node.na)])
    set_attribute = r_function("attr<-")
    for name, value in node.attributes.items():
        sexp = set_attribute(sexp, which=r_string(name), value=sexp_from_node(value))
    return sexp
