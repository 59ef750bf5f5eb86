"""Access to an embedded R through rpy2, started lazily on first use.

Nothing here assembles R code from strings: R functions are looked up in
their namespaces and called with rpy2 vectors as arguments.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from csvm_stats.exceptions import CSVMError


class RUnavailableError(CSVMError, ImportError):
    """R or rpy2 is not installed, or R cannot be started from Python.

    Examples
    --------
    >>> from r_bridge import RUnavailableError
    >>> issubclass(RUnavailableError, ImportError)
    True
    """


#: rpy2-rinterface 3.6.6 and later call R_getVar, which Debian's R 4.2 lacks ("undefined symbol"); such an R
#: needs this pin (the ``[r]`` extra carries it).
RPY2_FOR_OLD_R = "rpy2-rinterface>=3.6,<3.6.6"


@functools.cache
def rinterface() -> Any:
    """rpy2's low-level interface with R initialised; raises RUnavailableError.

    rpy2 is imported in its ABI mode (``RPY2_CFFI_MODE=ABI`` unless set):
    this module uses only the low-level interface, and the default mode
    prints "Error importing in API mode" on every start when rpy2's compiled
    module is absent.
    """
    os.environ.setdefault("RPY2_CFFI_MODE", "ABI")
    try:
        import rpy2.rinterface as ri
    except Exception as error:  # ImportError, or rpy2 failing to locate libR
        raise RUnavailableError(_rpy2_advice(error)) from error
    ri.initr()
    return ri


def _rpy2_advice(error: Exception) -> str:
    """What to install when rpy2 cannot be imported, naming the pin an older R needs."""
    detail = f"{type(error).__name__}: {error}"
    if "undefined symbol" in str(error):
        return (
            "rpy2 needs a newer R than the one installed (the R library lacks the symbol named below); "
            f"install the last rpy2 that supports this R: pip install '{RPY2_FOR_OLD_R}' (or upgrade R). ({detail})"
        )
    return (
        "this needs R and rpy2: install R (apt-get install r-base-core) and "
        f"pip install 'csvm-stats[r]', which pins {RPY2_FOR_OLD_R} ({detail})"
    )


def r_available() -> bool:
    """Whether R can be used from this Python process.

    Returns
    -------
    bool
        True when rpy2 loads and R starts.

    Examples
    --------
    >>> from r_bridge import r_available
    >>> isinstance(r_available(), bool)
    True
    """
    try:
        rinterface()
    except RUnavailableError:
        return False
    return True


def r_function(name: str, namespace: str = "base") -> Any:
    """The R function ``namespace::name``."""
    ri = rinterface()
    environment = ri.baseenv.find("getNamespace")(ri.StrSexpVector([namespace]))
    return environment.find(name)


@functools.cache
def r_version() -> tuple[int, int, int]:
    """The version of the embedded R as (major, minor, patch), from ``R.Version()``."""
    info = r_function("R.Version")()
    fields = dict(zip(info.names, info))
    minor, _, patch = str(fields["minor"][0]).partition(".")
    return int(fields["major"][0]), int(minor), int(patch or 0)


def r_string(value: str) -> Any:
    """A length-one R character vector."""
    return rinterface().StrSexpVector([value])


def r_flag(value: bool) -> Any:
    """A length-one R logical vector."""
    return rinterface().BoolSexpVector([value])


def has_r_package(package: str) -> bool:
    """Whether R can load the namespace of ``package`` (``requireNamespace``)."""
    found = r_function("requireNamespace")(r_string(package), quietly=r_flag(True))
    return bool(found[0])


def environment_objects(environment: Any) -> dict[str, Any]:
    """The objects of an R environment, by name, in sorted order."""
    names = r_function("ls")(environment, **{"all.names": r_flag(True)})
    return {str(name): environment[str(name)] for name in names}


def new_environment() -> Any:
    """A fresh R environment (its parent is R's global environment)."""
    return r_function("new.env")(parent=rinterface().globalenv)
