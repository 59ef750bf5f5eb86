r"""A bounded reader of R's serialisation format (``.rds``, ``.rda``), data only.

R files come from outside, so they are read as data by this module's own
parser of R's XDR serialisation (format versions 2 and 3), which never
runs anything and never trusts a number in the file:

* **Decompression in a stream with a byte cap.** gzip, bzip2 and xz files
  are decompressed chunk by chunk; more than :attr:`ReadLimits.max_bytes`
  decompressed bytes is a :class:`~csvm_stats.exceptions.InputLimitError`
  (a 1.5 KB bz2 file can hold 2 GiB of zeros).
* **Every declared length is checked against the bytes left** before
  anything is allocated: a vector of ``n`` doubles needs ``8 n`` bytes, a
  string of ``n`` bytes ``n`` bytes. A negative length, a length past the
  end of the data, or a long length above 2^52 is an
  :class:`RFormatError` naming the byte offset.
* **Compact sequences** (R's ALTREP ``compact_intseq``/``compact_realseq``,
  e.g. ``saveRDS(1:2000000000)`` in 103 bytes) are expanded only up to
  :attr:`ReadLimits.max_elements` elements.
* **Nesting** deeper than :attr:`ReadLimits.max_depth`, more than
  :attr:`ReadLimits.max_items` strings in all (each a Python object of ~60
  bytes) and more than :attr:`ReadLimits.max_nodes` list elements and
  attributes in all (each becomes a pandas object when converted) are refused.
* Only data types are read: NULL, logical, integer, double, complex,
  character, lists, pairlists (attributes, the objects of an ``.rda``)
  and the ALTREP wrappers R writes for them. Functions, environments,
  promises, language objects, S4 objects and external pointers are an
  :class:`RFormatError` naming the type.

A file you trust that is larger than the caps is read by passing larger
limits, e.g. ``load_rds(path, limits=ReadLimits(max_bytes=2**32,
max_elements=2**30, max_items=2**26))``.
"""

from __future__ import annotations

import bz2
import lzma
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from csvm_stats.exceptions import DataError, InputLimitError
from r_bridge.rtree import NA_INTEGER, RNode, RType, atomic, r_double_na_mask, strings


class RFormatError(DataError):
    """An R file that is not a readable R data file (damaged, truncated, inconsistent, or holding code).

    Examples
    --------
    >>> from r_bridge import RFormatError
    >>> from csvm_stats.exceptions import DataError
    >>> issubclass(RFormatError, DataError)
    True
    """


@dataclass(frozen=True)
class ReadLimits:
    """Caps on what one R file may make this reader do (raise them for a file you trust).

    Every cap is checked before the work it limits: a declared length is
    compared with the bytes left and with the cap before anything is
    allocated, and decompression stops once ``max_bytes`` is exceeded. Past a
    cap the reader raises :class:`~csvm_stats.exceptions.InputLimitError`
    naming the field to raise.

    Parameters
    ----------
    max_bytes : int, default 2**27
        Decompressed bytes of the file (128 MiB).
    max_elements : int, default 2**25
        Elements of one compact (ALTREP) sequence expanded in memory
        (256 MiB of doubles).
    max_items : int, default 2**22
        Strings in the whole file.
    max_nodes : int, default 2**17
        List elements and attributes in the whole file.
    max_depth : int, default 100
        Nesting depth of lists and attributes.

    Examples
    --------
    >>> from r_bridge import ReadLimits
    >>> limits = ReadLimits(max_bytes=2**30)   # 1 GiB, for a large file you trust
    >>> limits.max_bytes, limits.max_depth
    (1073741824, 100)
    >>> # r_bridge.load_rds("big.rds", limits=limits)
    """

    max_bytes: int = 2**27
    max_elements: int = 2**25
    max_items: int = 2**22
    max_nodes: int = 2**17
    max_depth: int = 100


DEFAULT_LIMITS = ReadLimits()
_RAISE = "if you trust the file, pass limits=r_bridge.ReadLimits({field}=...) to load_rds/load_rdata"

# SEXP types (R's Rinternals.h) and serialisation pseudo-types (serialize.c)
_NIL, _SYM, _LIST, _CHAR = 0, 1, 2, 9
_LGL, _INT, _REAL, _CPLX, _STR, _VEC, _EXPR = 10, 13, 14, 15, 16, 19, 20
_REF, _NILVALUE, _ALTREP, _ATTRLIST = 255, 254, 238, 239
_TYPE_NAMES = {
    3: "closure (function)", 4: "environment", 5: "promise (CVE-2024-27322)", 6: "language object",
    7: "special function", 8: "builtin function", 17: "dots", 18: "any", 21: "byte code",
    22: "external pointer", 23: "weak reference", 24: "raw vector", 25: "S4 object",
    253: "global environment", 252: "unbound value", 251: "missing argument", 250: "base namespace",
    249: "namespace", 248: "package environment", 247: "persistent reference", 246: "class reference",
    245: "generic reference", 244: "byte-code reference", 242: "empty environment", 241: "base environment",
    240: "language object with attributes",
}
_MAX_LONG_LENGTH = 2**52  # R's R_XLEN_T_MAX
_UTF8, _LATIN1, _BYTES = 1 << 3, 1 << 2, 1 << 1
_ATOMIC = {_LGL: (RType.LOGICAL, ">i4", 4), _INT: (RType.INTEGER, ">i4", 4),
           _REAL: (RType.DOUBLE, ">f8", 8), _CPLX: (RType.COMPLEX, ">f8", 16)}


_NULL = RNode(RType.NULL)  # shared: a list of a million NULLs holds one object


def _decompressor(head: bytes):
    if head[:2] == b"\x1f\x8b":
        return "gzip", lambda: zlib.decompressobj(wbits=31)
    if head[:3] == b"BZh":
        return "bzip2", bz2.BZ2Decompressor
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz", lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    return None, None


def read_bytes(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> bytes | bytearray:
    """The file's serialised bytes, decompressed in a stream of at most ``limits.max_bytes`` bytes."""
    cap = limits.max_bytes
    with open(path, "rb") as stream:
        head = stream.read(6)
        kind, make = _decompressor(head)
        if kind is None:  # read(n) allocates n bytes at once: ask for no more than the file has
            size = os.fstat(stream.fileno()).st_size
            data = head + stream.read(max(0, min(cap + 1, size) - len(head)))
            if len(data) > cap:
                raise InputLimitError(
                    f"{str(path)!r} is larger than {cap} bytes (ReadLimits.max_bytes); {_RAISE.format(field='max_bytes')}."
                )
            return data
        return _inflate(stream, head, kind, make, cap, str(path))


_PIECE = 1 << 22  # decompress at most 4 MiB per call, so a bomb never allocates past the cap


def _inflate(stream, head: bytes, kind: str, make, cap: int, path: str) -> bytearray:
    """Decompress ``stream`` (``head`` already read) into at most ``cap`` bytes, piece by piece."""
    out = bytearray()  # grows in place (realloc), and is returned without a copy
    decompressor = make()
    pending = head
    while True:
        if pending:
            data, pending = pending, b""
        elif kind == "gzip" and decompressor.unconsumed_tail:
            data = decompressor.unconsumed_tail
        elif kind != "gzip" and not decompressor.eof and not decompressor.needs_input:
            data = b""
        else:
            data = stream.read(1 << 16)
            if not data:
                break
        try:
            piece = decompressor.decompress(data, min(cap + 1 - len(out), _PIECE))
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as error:
            raise RFormatError(
                f"{path!r} is not a readable R data file: its {kind} data are damaged "
                f"after {len(out)} decompressed bytes ({error})"
            ) from None
        out += piece
        if len(out) > cap:
            raise InputLimitError(
                f"{path!r} decompresses to more than {cap} bytes (ReadLimits.max_bytes; a small "
                f"compressed file can hold gigabytes); {_RAISE.format(field='max_bytes')}."
            )
        if decompressor.eof:
            tail = decompressor.unused_data or stream.read(1 << 16)
            if not tail.strip(b"\x00"):
                return out
            decompressor, pending = make(), tail  # another stream follows (concatenated files)
    raise RFormatError(f"{path!r} is not a readable R data file: its {kind} data end early (truncated)")


class _Reader:
    """R's ``ReadItem`` over a byte buffer, every length checked against the bytes left."""

    def __init__(self, data: bytes | bytearray, path: str, limits: ReadLimits, offset: int) -> None:
        self.data, self.path, self.limits, self.pos = data, path, limits, offset
        self.refs: list[object] = []
        self.items = 0
        self.nodes = 0
        self.depth = 0

    # -- primitives
    def error(self, what: str, at: int | None = None) -> RFormatError:
        where = self.pos if at is None else at
        return RFormatError(f"{self.path!r} is not a readable R data file: {what} at byte offset {where}")

    def need(self, count: int, what: str) -> None:
        left = len(self.data) - self.pos
        if count > left:
            raise self.error(f"{what} needs {count} bytes but only {left} are left (truncated or inconsistent file)")

    def int(self) -> int:
        self.need(4, "an integer")
        (value,) = struct.unpack_from(">i", self.data, self.pos)
        self.pos += 4
        return value

    def length(self, what: str) -> int:
        at = self.pos
        n = self.int()
        if n == -1:
            upper, lower = self.int(), self.int()
            if upper < 0 or lower < 0:
                raise self.error(f"the long length of {what} is negative", at)
            n = (upper << 32) + lower
            if n > _MAX_LONG_LENGTH:
                raise self.error(f"{what} declares {n} elements, more than R allows (2^52)", at)
        elif n < 0:
            raise self.error(f"{what} declares the negative length {n}", at)
        return n

    def count_nodes(self, n: int) -> None:
        self.nodes += n
        if self.nodes > self.limits.max_nodes:
            raise InputLimitError(
                f"{self.path!r} holds more than {self.limits.max_nodes} list elements and attributes "
                f"(ReadLimits.max_nodes) by byte offset {self.pos}; {_RAISE.format(field='max_nodes')}."
            )

    def count_items(self, n: int) -> None:
        self.items += n
        if self.items > self.limits.max_items:
            raise InputLimitError(
                f"{self.path!r} holds more than {self.limits.max_items} strings (ReadLimits.max_items) by byte "
                f"offset {self.pos}; {_RAISE.format(field='max_items')}."
            )

    # -- items
    def item(self) -> object:
        """One serialised item: an RNode, or ("sym", name) / ("pairlist", [(tag, node)], attrs) internals."""
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise InputLimitError(
                f"{self.path!r} nests objects deeper than {self.limits.max_depth} (ReadLimits.max_depth) at byte "
                f"offset {self.pos}; {_RAISE.format(field='max_depth')}."
            )
        try:
            return self._item()
        finally:
            self.depth -= 1

    def _item(self) -> object:
        at = self.pos
        flags = self.int()
        kind, levels, has_attr = flags & 0xFF, flags >> 12, bool(flags & (1 << 9))
        if kind in (_NILVALUE, _NIL):
            return _NULL
        if kind == _REF:
            index = flags >> 8 or self.int()
            if not 1 <= index <= len(self.refs):
                raise self.error(f"a reference to object {index} of {len(self.refs)}", at)
            return self.refs[index - 1]
        if kind == _SYM:
            name = self.item()
            if not isinstance(name, tuple) or name[0] != "char":
                raise self.error("a symbol whose name is not a string", at)
            symbol = ("sym", name[1])
            self.refs.append(symbol)
            return symbol
        if kind == _CHAR:
            return ("char", self.char(levels))
        if kind in (_LIST, _ATTRLIST):
            return self.pairlist(flags)
        if kind in _ATOMIC:
            node = self.atomic(kind)
        elif kind == _STR:
            node = self.strings()
        elif kind in (_VEC, _EXPR):
            n = self.length("a list")
            self.need(4 * n, f"a list of {n} elements")
            self.count_nodes(n)
            node = RNode(RType.LIST, tuple(self.node() for _ in range(n)), None, {})
        elif kind == _ALTREP:
            return self.altrep(at)
        else:
            name = _TYPE_NAMES.get(kind, f"unknown type {kind}")
            raise self.error(
                f"it holds an R {name}, and only data (vectors, lists, factors, data frames) are read; "
                "keep only data in the file", at
            )
        if has_attr:
            node = RNode(node.rtype, node.values, node.na, self.attributes())
        return node

    def node(self) -> RNode:
        at = self.pos
        return self.as_node(self.item(), at)

    def as_node(self, value: object, at: int) -> RNode:
        """An item as an R object: a pairlist becomes a list; a bare symbol or string is an error."""
        if isinstance(value, RNode):
            return value
        if isinstance(value, tuple) and value[0] == "pairlist":
            return RNode(RType.LIST, tuple(self.as_node(v, at) for _, v in value[1]), None, value[2])
        raise self.error("a symbol or string where an R object was expected", at)

    def char(self, levels: int) -> str | None:
        at = self.pos
        n = self.int()
        if n == -1:
            return None
        if n < 0:
            raise self.error(f"a string declares the negative length {n}", at)
        self.need(n, f"a string of {n} bytes")
        raw = self.data[self.pos : self.pos + n]
        self.pos += n
        if levels & (_LATIN1 | _BYTES) and not levels & _UTF8:
            return raw.decode("latin-1")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self.error(f"a string that is not valid UTF-8 ({error.reason} at its byte {error.start})", at) from None

    def atomic(self, kind: int) -> RNode:
        rtype, dtype, width = _ATOMIC[kind]
        n = self.length(f"a {rtype.value} vector")
        self.need(width * n, f"a {rtype.value} vector of {n} elements")
        raw = np.frombuffer(self.data, dtype=dtype, count=n * width // np.dtype(dtype).itemsize, offset=self.pos)
        self.pos += width * n
        return _atomic_node(rtype, raw)

    def strings(self) -> RNode:
        n = self.length("a character vector")
        self.count_items(n)
        self.need(8 * n, f"a character vector of {n} elements")
        values: list[str | None] = []
        for _ in range(n):
            at = self.pos
            flags = self.int()
            if flags & 0xFF != _CHAR:
                raise self.error(f"an element of a character vector has type {flags & 0xFF}, not a string", at)
            values.append(self.char(flags >> 12))
        return strings(values)

    def pairlist(self, flags: int) -> tuple:
        """A pairlist (R's attributes, an .rda's objects) read iteratively along its CDR."""
        entries: list[tuple[str | None, object]] = []
        attributes: dict[str, RNode] = {}
        while True:
            kind, has_attr, has_tag = flags & 0xFF, bool(flags & (1 << 9)), bool(flags & (1 << 10))
            if kind in (_NILVALUE, _NIL):
                break
            if kind not in (_LIST, _ATTRLIST):  # a dotted pair (R's deferred_string state ends in an integer)
                self.pos -= 4
                entries.append((None, self.item()))
                break
            self.count_nodes(1)
            if has_attr:
                attributes.update(self.attributes())
            tag = None
            if has_tag:
                symbol = self.item()
                if not (isinstance(symbol, tuple) and symbol[0] == "sym"):
                    raise self.error("a pairlist tag that is not a symbol")
                tag = symbol[1]
            entries.append((tag, self.item()))
            flags = self.int()
        return ("pairlist", entries, attributes)

    def attributes(self) -> dict[str, RNode]:
        at = self.pos
        value = self.item()
        if not (isinstance(value, tuple) and value[0] == "pairlist"):
            raise self.error("attributes that are not a pairlist", at)
        if any(tag is None for tag, _ in value[1]):
            raise self.error("an attribute without a name", at)
        return {tag: self.as_node(item, at) for tag, item in value[1]}

    def altrep(self, at: int) -> RNode:
        info = self.item()
        state = self.item()
        attr = self.item()
        if not (isinstance(info, tuple) and info[0] == "pairlist" and info[1]):
            raise self.error("an ALTREP object without class information", at)
        klass = _altrep_class(info)
        attributes: dict[str, RNode] = {}
        if isinstance(attr, tuple) and attr[0] == "pairlist":
            attributes = {tag: self.as_node(item, at) for tag, item in attr[1] if tag is not None}
        if klass in ("compact_intseq", "compact_realseq"):
            node = self.sequence(klass, state, at)
        elif klass.startswith("wrap_"):
            if not (isinstance(state, RNode) and state.rtype is RType.LIST and len(state) == 2):
                raise self.error(f"an ALTREP {klass} whose state is not list(x, meta)", at)
            node = state.values[0]  # type: ignore[index]
        elif klass == "deferred_string":
            node = self.deferred(state, at)
        else:
            raise self.error(f"an ALTREP object of class {klass!r}, which this reader does not know", at)
        if attributes:
            node = RNode(node.rtype, node.values, node.na, {**node.attributes, **attributes})
        return node

    def sequence(self, klass: str, state: object, at: int) -> RNode:
        if not (isinstance(state, RNode) and state.rtype is RType.DOUBLE and len(state) == 3):
            raise self.error(f"an ALTREP {klass} whose state is not (length, start, step)", at)
        n, start, step = (float(v) for v in state.values)  # type: ignore[union-attr]
        if not (np.isfinite([n, start, step]).all() and n >= 0 and n == int(n)):
            raise self.error(f"an ALTREP {klass} with the state ({n}, {start}, {step})", at)
        if n > self.limits.max_elements:
            raise InputLimitError(
                f"{self.path!r} holds a compact sequence of {int(n)} elements (at byte offset {at}), more than "
                f"ReadLimits.max_elements = {self.limits.max_elements} would expand in memory; "
                f"{_RAISE.format(field='max_elements')}."
            )
        values = start + step * np.arange(int(n), dtype=np.float64)
        if klass == "compact_intseq":
            if step not in (1.0, -1.0) or values.size and max(abs(values[0]), abs(values[-1])) > 2**31 - 1:
                raise self.error(f"an ALTREP compact_intseq with the state ({n}, {start}, {step})", at)
            return atomic(RType.INTEGER, values.astype(np.int32), np.zeros(values.size, bool))
        return atomic(RType.DOUBLE, values, np.zeros(values.size, bool))

    def deferred(self, state: object, at: int) -> RNode:
        if not (isinstance(state, tuple) and state[0] == "pairlist" and state[1]):
            raise self.error("an ALTREP deferred_string whose state is not a pairlist", at)
        source = self.as_node(state[1][0][1], at)
        if source.rtype is RType.INTEGER:
            text = [None if na else str(int(v)) for v, na in zip(source.values, source.na)]  # type: ignore[arg-type]
        elif source.rtype is RType.DOUBLE:
            text = [None if na else _r_double(float(v)) for v, na in zip(source.values, source.na)]  # type: ignore[arg-type]
        else:
            raise self.error(f"an ALTREP deferred_string of a {source.rtype.value} vector", at)
        self.count_items(len(text))
        return strings(text)


def _r_double(value: float) -> str:
    """R's ``as.character`` of a double: 15 significant digits, fixed notation unless scientific is shorter."""
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.14e}".split("e")
    digits = len(mantissa.replace("-", "").replace(".", "").rstrip("0")) or 1
    scientific = f"{value:.{digits - 1}e}"
    fixed = f"{value:.{max(0, digits - 1 - int(exponent))}f}"
    return fixed if len(fixed) <= len(scientific) else scientific


def _altrep_class(info: tuple) -> str:
    """The class name of an ALTREP object from its info pairlist (class symbol, package symbol, type)."""
    head = info[1][0][1]
    return head[1] if isinstance(head, tuple) and head[0] == "sym" else ""


def _atomic_node(rtype: RType, raw: np.ndarray) -> RNode:
    if rtype is RType.DOUBLE:
        values = raw.astype(np.float64)
        return atomic(rtype, values, r_double_na_mask(values))
    if rtype is RType.COMPLEX:
        pairs = raw.astype(np.float64)
        values = np.empty(pairs.size // 2, dtype=np.complex128)
        values.real, values.imag = pairs[0::2], pairs[1::2]
        return atomic(rtype, values, r_double_na_mask(pairs[0::2]))
    values = raw.astype(np.int32)
    return atomic(rtype, values, values == NA_INTEGER)


def _header(reader: _Reader) -> None:
    data = reader.data
    if data[reader.pos : reader.pos + 2] in (b"A\n", b"B\n"):
        raise reader.error(
            "it is in R's ASCII or native binary serialisation; re-save it with saveRDS(x) or save(...) "
            "and their default (XDR) format"
        )
    if data[reader.pos : reader.pos + 2] != b"X\n":
        raise reader.error("it does not start with R's serialisation header")
    reader.pos += 2
    version = reader.int()
    reader.int()
    reader.int()
    if version == 3:
        n = reader.int()
        if not 0 <= n <= 64:
            raise reader.error(f"a native-encoding name of {n} bytes")
        reader.need(n, "the native-encoding name")
        reader.pos += n
    elif version != 2:
        raise reader.error(f"serialisation format version {version} (R writes 2 and 3)")


def parse_rds(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> RNode:
    """The object of an ``.rds`` file (R's ``readRDS``), read within ``limits``."""
    data = read_bytes(path, limits)
    if data[:4] in (b"RDX2", b"RDX3", b"RDA2", b"RDA3"):
        raise RFormatError(
            f"{str(path)!r} is an .rda/.RData file (R's save()), which holds named objects; read it with "
            "r_bridge.load_rdata, not load_rds"
        )
    reader = _Reader(data, str(path), limits, 0)
    _header(reader)
    node = reader.node()
    _check_end(reader)
    return node


def parse_rdata(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> dict[str, RNode]:
    """The named objects of an ``.rda``/``.RData`` file (R's ``load``), read within ``limits``."""
    data = read_bytes(path, limits)
    if data[:5] not in (b"RDX2\n", b"RDX3\n"):
        if data[:2] == b"X\n":
            raise RFormatError(
                f"{str(path)!r} is an .rds file (R's saveRDS()), which holds one unnamed object; read it with "
                "r_bridge.load_rds, not load_rdata"
            )
        raise RFormatError(f"{str(path)!r} is not a readable R data file: it does not start with RDX2 or RDX3")
    reader = _Reader(data, str(path), limits, 5)
    _header(reader)
    at = reader.pos
    value = reader.item()
    if not (isinstance(value, tuple) and value[0] == "pairlist"):
        raise reader.error("its top level is not a list of named objects", at)
    objects: dict[str, RNode] = {}
    for tag, node in value[1]:
        if tag is None:
            raise reader.error("an object without a name", at)
        objects[tag] = reader.as_node(node, at)
    _check_end(reader)
    if not objects:
        raise RFormatError(f"{str(path)!r} holds no named R objects")
    return objects


def _check_end(reader: _Reader) -> None:
    left = len(reader.data) - reader.pos
    if left:
        raise reader.error(f"{left} bytes follow the end of the object (an inconsistent length or a damaged file)")
