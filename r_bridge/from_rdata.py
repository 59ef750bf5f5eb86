"""Read ``.rda``/``.RData``/``.rds`` files without R, through the bounded reader.

The files are parsed by :mod:`r_bridge.rds_reader` (our own reader of R's
serialisation format, with caps on bytes, lengths, nesting and items) into
:class:`~r_bridge.rtree.RNode` values, so that the same converter serves
this route and the rpy2 route.
"""

from __future__ import annotations

from pathlib import Path

from r_bridge.rds_reader import DEFAULT_LIMITS, ReadLimits, parse_rdata, parse_rds
from r_bridge.rtree import RNode


def read_rdata_file(path: str | Path, limits: ReadLimits = DEFAULT_LIMITS) -> dict[str, RNode]:
    """The objects stored in an ``.rda``/``.RData`` file, by name (R's ``load``)."""
    return parse_rdata(Path(path), limits)


def read_rds_file(path: str | Path, limits: ReadLimits = DEFAULT_LIMITS) -> RNode:
    """The single object stored in an ``.rds`` file (R's ``readRDS``)."""
    return parse_rds(Path(path), limits)
