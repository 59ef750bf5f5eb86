"""Read ``.rda``/``.RData``/``.rds`` files without R, through ``rdata``'s parser.

Only the parser of the pure-Python ``rdata`` package is used; its parse tree
is translated into :class:`~r_bridge.rtree.RNode` values so that the same
converter serves this route and the rpy2 route.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from csvm_stats.exceptions import DataError
from r_bridge.rtree import NA_INTEGER, RNode, RType, atomic, r_double_na_mask, strings

_LATIN1_FLAG = 1 << 2
_ATOMIC_TYPES = {"LGL": RType.LOGICAL, "INT": RType.INTEGER, "REAL": RType.DOUBLE, "CPLX": RType.COMPLEX}


def read_rdata_file(path: str | Path) -> dict[str, RNode]:
    """The objects stored in an ``.rda``/``.RData`` file, by name (R's ``load``)."""
    cell = _parse(path).object
    objects: dict[str, RNode] = {}
    while _resolve(cell).info.type.name == "LIST":
        cell = _resolve(cell)
        head, rest = cell.value
        objects[_symbol_name(cell.tag)] = _node(head)
        cell = rest
    if not objects:
        raise DataError(f"{str(path)!r} holds no named R objects (is it an .rds file? use readRDS in R)")
    return objects


def read_rds_file(path: str | Path) -> RNode:
    """The single object stored in an ``.rds`` file (R's ``readRDS``)."""
    return _node(_parse(path).object)


def _parse(path: str | Path) -> Any:
    try:
        import rdata
    except ImportError as error:
        raise ImportError("reading R files without R needs the 'rdata' package: pip install 'csvm-stats[r]'") from error
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"R data file {str(path)!r} does not exist")
    try:
        return rdata.parser.parse_file(path)
    except Exception as error:  # rdata raises several types for unreadable input
        raise DataError(f"{str(path)!r} is not a readable R data file: {error}") from error


def _resolve(obj: Any) -> Any:
    """Follow a back-reference (R's REFSXP) to the object it stands for."""
    while obj.info.type.name == "REF":
        obj = obj.referenced_object
    return obj


def _symbol_name(tag: Any) -> str:
    symbol = _resolve(tag)
    return _decode_char(_resolve(symbol.value))


def _decode_char(char: Any) -> str | None:
    if char.value is None:
        return None
    encoding = "latin-1" if char.info.gp & _LATIN1_FLAG else "utf-8"
    return bytes(char.value).decode(encoding)


def _attributes(obj: Any) -> dict[str, RNode]:
    attributes: dict[str, RNode] = {}
    cell = obj.attributes
    while cell is not None and _resolve(cell).info.type.name == "LIST":
        cell = _resolve(cell)
        head, rest = cell.value
        attributes[_symbol_name(cell.tag)] = _node(head)
        cell = rest
    return attributes


def _node(obj: Any) -> RNode:
    obj = _resolve(obj)
    kind = obj.info.type.name
    if kind in ("NILVALUE", "NIL"):
        return RNode(RType.NULL)
    attributes = _attributes(obj)
    if kind in _ATOMIC_TYPES:
        rtype = _ATOMIC_TYPES[kind]
        data = np.ma.getdata(obj.value)
        mask = np.ma.getmaskarray(obj.value)
        if rtype is RType.DOUBLE:
            mask = mask | r_double_na_mask(data)
        elif rtype is RType.COMPLEX:
            mask = mask | r_double_na_mask(np.real(data))
        elif rtype in (RType.INTEGER, RType.LOGICAL):
            data = data.astype(np.int32)
            mask = mask | (data == NA_INTEGER)
        return atomic(rtype, data, mask, attributes)
    if kind == "STR":
        return strings([_decode_char(_resolve(char)) for char in obj.value], attributes)
    if kind in ("VEC", "EXPR"):
        return RNode(RType.LIST, tuple(_node(child) for child in obj.value), None, attributes)
    raise DataError(
        f"R objects of type {kind} (functions, environments, S4 objects, ...) cannot be "
        "converted to pandas; keep only data in the file"
    )
