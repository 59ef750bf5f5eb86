"""Input paths checked before any byte is read: what the path is, named when it is not a file.

``str``, ``bytes`` (decoded with :func:`os.fsdecode`, as the operating
system does) and :class:`os.PathLike` paths are accepted. A path that is not
a regular file is refused with its kind named: a directory, a named pipe
(FIFO; reading one blocks until a writer appears), a character or block
device (``/dev/null``, ``/dev/zero``, which is endless), a socket, a
symbolic link to any of these or to nothing, or a file that cannot be read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from csvm_stats.exceptions import InputFileError, MissingFileError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO), which would block until something writes to it"),
    (stat.S_ISCHR, "a character device (such as /dev/null or /dev/zero, which never ends)"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def as_path(path: Any, what: str = "file") -> Path:
    """``path`` as a :class:`~pathlib.Path`: str, bytes or os.PathLike; anything else is an error naming its type."""
    if isinstance(path, (bytes, bytearray)):
        path = os.fsdecode(bytes(path))
    if not isinstance(path, (str, os.PathLike)):
        raise InputFileError(f"the {what} path must be a string or a pathlib.Path, got {type(path).__name__}.")
    path = Path(path)
    if "\x00" in str(path):
        raise InputFileError(f"the {what} path {str(path)!r} contains a NUL character, which no file name can.")
    return path


def check_input_file(path: Any, what: str = "file") -> Path:
    """``path`` if it names a readable regular file (through symlinks); else an error naming what it is."""
    path = as_path(path, what)
    link = f" (a symbolic link to {os.readlink(path)!r})" if path.is_symlink() else ""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise MissingFileError(f"{what} {str(path)!r}{link} does not exist.") from None
    except PermissionError:
        raise InputFileError(f"{what} {str(path)!r}{link} cannot be read: permission denied.") from None
    except OSError as error:
        raise InputFileError(f"{what} {str(path)!r}{link} cannot be read: {error.strerror or error}.") from None
    for test, kind in _KINDS:
        if test(mode):
            raise InputFileError(f"{what} {str(path)!r}{link} is {kind}, not a regular file; give the path of a file.")
    if not os.access(path, os.R_OK):
        raise InputFileError(f"{what} {str(path)!r}{link} cannot be read: permission denied.")
    return path
