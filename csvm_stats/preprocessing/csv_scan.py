"""A CSV file checked in a stream before pandas parses it: line, cell and column caps, text only.

pandas' C parser holds a whole cell and a whole line in memory, with overheads: a CSV with one
100 MB cell took 3.3 GB. :func:`scan_csv` reads the file once with Python's :mod:`csv` module,
line by line (``readline`` with a length limit), and refuses

* a physical line longer than :data:`CSV_MAX_LINE` characters, a cell (a quoted cell may span
  lines) longer than :data:`CSV_MAX_CELL` and a row of more than :data:`CSV_MAX_COLUMNS` columns,
  with an :class:`~csvm_stats.exceptions.InputLimitError` naming the cap;
* text that is not UTF-8 and NUL bytes (a binary file), with an
  :class:`~csvm_stats.exceptions.InputFileError`.

The caps are raised for a file you trust with the environment variables
``CSVM_STATS_CSV_MAX_LINE``, ``CSVM_STATS_CSV_MAX_CELL`` and ``CSVM_STATS_CSV_MAX_COLUMNS``
(read at each call). Memory stays below a few times the line cap.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from csvm_stats.exceptions import InputFileError, InputLimitError

#: Caps on a CSV file read by the command line, checked in a stream before pandas parses it: characters in
#: one physical line, in one cell (a quoted cell may span lines) and columns in one row. A CSV with a
#: 100 MB cell took 3.3 GB in pandas. Raise them for a file you trust with the environment variables
#: CSVM_STATS_CSV_MAX_LINE, CSVM_STATS_CSV_MAX_CELL and CSVM_STATS_CSV_MAX_COLUMNS.
CSV_MAX_LINE = 8 * 2**20
CSV_MAX_CELL = 2**20
CSV_MAX_COLUMNS = 100_000


def _cap(name: str, default: int) -> int:
    value = os.environ.get(f"CSVM_STATS_CSV_{name}")
    if value is None:
        return default
    if not value.isdigit() or int(value) < 1:
        raise InputFileError(f"the environment variable CSVM_STATS_CSV_{name} must be a positive whole number, got {value!r}.")
    return int(value)


def _bounded_lines(stream: Any, path: Path, max_line: int) -> Any:
    number = 0
    while True:
        line = stream.readline(max_line + 1)
        if not line:
            return
        number += 1
        if len(line) > max_line:
            raise InputLimitError(
                f"{str(path)!r}: line {number} is longer than {max_line} characters (CSVM_STATS_CSV_MAX_LINE); "
                "is it really a CSV file? For a file you trust, raise the cap with that environment variable."
            )
        if "\x00" in line:
            raise InputFileError(f"{str(path)!r}: line {number} contains a NUL byte; is it a binary file rather than CSV text?")
        yield line


def scan_csv(path: Path, sep: str) -> None:
    """Check a CSV file's line, cell and column counts against the caps, in a stream (bounded memory)."""
    max_line, max_cell, max_columns = _cap("MAX_LINE", CSV_MAX_LINE), _cap("MAX_CELL", CSV_MAX_CELL), _cap(
        "MAX_COLUMNS", CSV_MAX_COLUMNS
    )
    previous = csv.field_size_limit(max_cell)
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            reader = csv.reader(_bounded_lines(stream, path, max_line), delimiter=sep)
            for row in reader:
                if len(row) > max_columns:
                    raise InputLimitError(
                        f"{str(path)!r}: row {reader.line_num} has {len(row)} columns, more than {max_columns} "
                        "(CSVM_STATS_CSV_MAX_COLUMNS); for a file you trust, raise that environment variable."
                    )
    except csv.Error as error:
        if "field larger than field limit" in str(error):
            raise InputLimitError(
                f"{str(path)!r}: a cell near line {reader.line_num} is longer than {max_cell} characters "
                "(CSVM_STATS_CSV_MAX_CELL); for a file you trust, raise that environment variable."
            ) from None
        raise InputFileError(f"cannot read {str(path)!r} as CSV near line {reader.line_num}: {error}") from None
    except UnicodeDecodeError as error:
        raise InputFileError(
            f"{str(path)!r} is not UTF-8 text (byte {error.object[error.start:error.start + 1]!r} is invalid in "
            "UTF-8); save it as UTF-8 CSV."
        ) from None
    finally:
        csv.field_size_limit(previous)
