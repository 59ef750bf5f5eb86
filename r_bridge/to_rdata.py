"""Write :class:`~r_bridge.rtree.RNode` trees as R's ``.rds`` files without R.

The tree is rebuilt as the parse tree of the pure-Python ``rdata`` package
and written with its XDR serialiser (R's own binary format), so the file is
read in R by plain ``readRDS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from r_bridge.rtree import RNode, RType

_UTF8_FLAG = 1 << 3
_ASCII_FLAG = 1 << 6
#: R's double NA: a quiet NaN whose low word is 1954.
_NA_REAL = np.array([0x7FF00000000007A2], dtype=np.uint64).view(np.float64)[0]
_TYPE_NAMES = {
    RType.LOGICAL: "LGL",
    RType.INTEGER: "INT",
    RType.DOUBLE: "REAL",
    RType.COMPLEX: "CPLX",
    RType.CHARACTER: "STR",
    RType.LIST: "VEC",
}


def write_rds(node: RNode, path: str | Path) -> None:
    """Serialise ``node`` to ``path`` as a gzip-compressed, version 3 ``.rds`` file."""
    import rdata
    from rdata.parser import RData, RExtraInfo, RVersions

    versions = RVersions(format=3, serialized=0x40202, minimum=0x30500)
    rdata.unparser.unparse_file(
        Path(path), RData(versions, RExtraInfo(encoding="UTF-8"), _robject(node)), file_format="xdr", file_type="rds"
    )


def _info(type_name: str, *, is_object: bool = False, attributes: bool = False, tag: bool = False, gp: int = 0) -> Any:
    from rdata.parser import RObjectInfo, RObjectType

    return RObjectInfo(
        type=RObjectType[type_name], object=is_object, attributes=attributes, tag=tag, gp=gp, reference=0
    )


def _char(text: str | None) -> Any:
    from rdata.parser import RObject

    if text is None:
        return RObject(_info("CHAR"), None, None)
    encoded = text.encode("utf-8")
    flag = _ASCII_FLAG if text.isascii() else _UTF8_FLAG
    return RObject(_info("CHAR", gp=flag), encoded, None)


def _symbol(name: str) -> Any:
    from rdata.parser import RObject

    return RObject(_info("SYM"), _char(name), None)


def _attribute_pairlist(attributes: dict[str, RNode]) -> Any:
    from rdata.parser import RObject

    cell = RObject(_info("NILVALUE"), None, None)
    for name, value in reversed(list(attributes.items())):
        cell = RObject(_info("LIST", tag=True), (_robject(value), cell), None, _symbol(name))
    return cell


def _robject(node: RNode) -> Any:
    from rdata.parser import RObject

    if node.rtype is RType.NULL:
        return RObject(_info("NILVALUE"), None, None)
    attributes = _attribute_pairlist(node.attributes) if node.attributes else None
    info = _info(_TYPE_NAMES[node.rtype], is_object="class" in node.attributes, attributes=bool(node.attributes))
    if node.rtype is RType.LIST:
        value: Any = [_robject(child) for child in node.values]
    elif node.rtype is RType.CHARACTER:
        value = [_char(None if missing else text) for text, missing in zip(node.values, node.na, strict=True)]
    elif node.rtype is RType.LOGICAL:
        value = np.ma.masked_array(node.values.astype(bool), mask=node.na.copy())
    elif node.rtype is RType.INTEGER:
        value = np.ma.masked_array(node.values.astype(np.int32), mask=node.na.copy())
    elif node.rtype is RType.DOUBLE:
        value = np.where(node.na, _NA_REAL, node.values)
    else:
        value = np.where(node.na, complex(_NA_REAL, _NA_REAL), node.values)
    return RObject(info, value, attributes)
