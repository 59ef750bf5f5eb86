"""R data sets and R data files as pandas objects.

``load_dataset`` runs R's ``utils::data()`` for a package's data set;
``load_rdata`` is R's ``load()`` for ``.rda``/``.RData`` files, with a
pure-Python reader when R is not available. Both convert through
:func:`r_bridge.to_pandas.to_python` (types and NA as documented there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from csvm_stats.exceptions import DataError
from r_bridge import rsession
from r_bridge.from_rdata import read_rdata_file, read_rds_file
from r_bridge.from_rpy2 import node_from_sexp
from r_bridge.rtree import RNode
from r_bridge.to_pandas import to_python

Engine = Literal["auto", "r", "python"]


def load_dataset(name: str, package: str | None = None) -> Any:
    """An R data set, as R's ``data(name, package = package)`` gives it, in pandas form.

    With ``package=None`` R searches its attached packages (``datasets``,
    ``utils``, ...). ``name`` may be an object (``"beaver1"``) or the file
    that holds it (``"beavers"``): the object of that name is returned, or,
    for a file of several objects, a dict of them by name. Needs R and rpy2.
    """
    if not name:
        raise DataError("give the name of an R data set, e.g. load_dataset('mtcars')")
    if package is not None and not rsession.has_r_package(package):
        raise DataError(
            f"R package {package!r} is not installed; install it in R "
            f"(install.packages({package!r}) or the distribution's r-cran-{package.lower()})"
        )
    listed = available_datasets(package)
    if name not in listed:
        where = f"package {package!r}" if package else "the attached R packages"
        raise DataError(f"R data set {name!r} was not found in {where}; see data(package = ...) in R")
    environment = rsession.new_environment()
    arguments: dict[str, Any] = {"list": rsession.r_string(listed[name]), "envir": environment}
    if package is not None:
        arguments["package"] = rsession.r_string(package)
    rsession.r_function("data", "utils")(**arguments)
    objects = rsession.environment_objects(environment)
    if name in objects:
        return to_python(node_from_sexp(objects[name]))
    return {key: to_python(node_from_sexp(value)) for key, value in objects.items()}


def available_datasets(package: str | None = None) -> dict[str, str]:
    """The data sets R's ``data()`` knows in ``package`` (or the attached ones).

    Maps each object name to the name ``data()`` loads it by: an item listed
    as ``"beaver1 (beavers)"`` is the object ``beaver1`` of the file ``beavers``.
    """
    arguments = {"package": rsession.r_string(package)} if package is not None else {}
    listing = rsession.r_function("data", "utils")(**arguments)
    results = listing[listing.names.index("results")]
    n_rows = int(results.do_slot("dim")[0])
    item_column = list(results.do_slot("dimnames")[1]).index("Item")
    items = [str(results[item_column * n_rows + row]) for row in range(n_rows)]
    listed: dict[str, str] = {}
    for item in items:
        object_name, _, file_name = item.partition(" (")
        listed[object_name] = file_name.rstrip(")") or object_name
        listed.setdefault(listed[object_name], listed[object_name])
    return listed


def load_rdata(path: str | Path, engine: Engine = "auto") -> dict[str, Any]:
    """The objects of an ``.rda``/``.RData`` file by name, as R's ``load()`` restores them.

    ``engine="r"`` loads through R (rpy2), ``"python"`` through the pure-Python
    ``rdata`` reader, ``"auto"`` uses R when it is available and ``rdata``
    otherwise. Both engines give the same types and values.
    """
    return {name: to_python(node) for name, node in read_rdata_nodes(path, engine).items()}


def load_rds(path: str | Path, engine: Engine = "auto") -> Any:
    """The object of an ``.rds`` file, as R's ``readRDS()`` restores it (engines as in :func:`load_rdata`)."""
    return to_python(read_rds_node(path, engine))


def read_rds_node(path: str | Path, engine: Engine = "auto") -> RNode:
    """The object of an ``.rds`` file as an :class:`RNode` tree (see :func:`load_rds`)."""
    path = _checked_path(path, engine)
    if _use_python(engine):
        return read_rds_file(path)
    return node_from_sexp(rsession.r_function("readRDS")(rsession.r_string(str(path))))


def _checked_path(path: str | Path, engine: Engine) -> Path:
    if engine not in ("auto", "r", "python"):
        raise ValueError(f"engine must be 'auto', 'r' or 'python', not {engine!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"R data file {str(path)!r} does not exist")
    return path


def _use_python(engine: Engine) -> bool:
    return engine == "python" or (engine == "auto" and not rsession.r_available())


def read_rdata_nodes(path: str | Path, engine: Engine = "auto") -> dict[str, RNode]:
    """The objects of an R data file as :class:`RNode` trees (see :func:`load_rdata`)."""
    path = _checked_path(path, engine)
    if _use_python(engine):
        return read_rdata_file(path)
    environment = rsession.new_environment()
    rsession.r_function("load")(rsession.r_string(str(path)), envir=environment)
    return {name: node_from_sexp(value) for name, value in rsession.environment_objects(environment).items()}
