"""R data sets and R data files as pandas objects.

``load_dataset`` runs R's ``utils::data()`` for a package's data set;
``load_rdata`` and ``load_rds`` read ``.rda``/``.RData``/``.rds`` files with
the bounded pure-Python reader :mod:`r_bridge.rds_reader` by default, which
reads only data, refuses functions, environments and promises, and keeps
within :class:`~r_bridge.rds_reader.ReadLimits` (decompressed bytes, compact
sequence length, items, nesting; pass ``limits=ReadLimits(...)`` to raise
them for a file you trust). Both convert through
:func:`r_bridge.to_pandas.to_python` (types and NA as documented there).

Reading a file through R (``engine="r"``) runs R's ``load()``/``readRDS()``,
which on R before 4.4.0 restore a crafted promise that runs arbitrary code
when the object is used (CVE-2024-27322); rpy2 uses it at once. So
``engine="r"`` is refused on R < 4.4.0 unless the caller says the file is
trusted (``trusted=True``: a file you wrote yourself).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from csvm_stats.exceptions import DataError
from csvm_stats.preprocessing.paths import check_input_file
from r_bridge import rsession
from r_bridge.from_rdata import read_rdata_file, read_rds_file
from r_bridge.from_rpy2 import node_from_sexp
from r_bridge.rds_reader import DEFAULT_LIMITS, ReadLimits
from r_bridge.rtree import RNode
from r_bridge.to_pandas import to_python

Engine = Literal["auto", "r", "python"]
#: First R release whose unserialize no longer restores promises (CVE-2024-27322).
R_FIXED_VERSION = (4, 4, 0)


def load_dataset(name: str, package: str | None = None) -> Any:
    """An R data set, as R's ``data(name, package = package)`` gives it, in pandas form.

    With ``package=None`` R searches its attached packages (``datasets``,
    ``utils``, ...). ``name`` may be an object (``"beaver1"``) or the file
    that holds it (``"beavers"``): the object of that name is returned, or,
    for a file of several objects, a dict of them by name. Needs R and rpy2.

    Parameters
    ----------
    name : str
        The object or file name, as ``data()`` takes it.
    package : str or None
        The R package; ``None`` searches the attached ones.

    Returns
    -------
    object
        A DataFrame (or Series, array, dict of them) converted from R.

    Raises
    ------
    r_bridge.RUnavailableError
        R or rpy2 cannot be used from this process (``pip install -e '.[r]'``).
    csvm_stats.exceptions.DataError
        No name given, or R has no such data set.

    Examples
    --------
    >>> from r_bridge import load_dataset
    >>> mtcars = load_dataset("mtcars")  # doctest: +SKIP
    >>> mtcars.shape  # doctest: +SKIP
    (32, 11)
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

    Parameters
    ----------
    package : str or None
        The R package; ``None``: the attached ones.

    Returns
    -------
    dict of str to str
        Object name to the name ``data()`` loads it by.

    Raises
    ------
    r_bridge.RUnavailableError
        R or rpy2 cannot be used from this process (``pip install -e '.[r]'``).

    Examples
    --------
    >>> from r_bridge import available_datasets
    >>> "mtcars" in available_datasets("datasets")  # doctest: +SKIP
    True
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


def load_rdata(
    path: str | Path, engine: Engine = "python", *, trusted: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> dict[str, Any]:
    """The objects of an ``.rda``/``.RData`` file by name, as R's ``load()`` restores them.

    ``engine="python"`` (the default; ``"auto"`` is the same) reads the file
    with the library's own bounded reader of R's serialisation
    (:mod:`r_bridge.rds_reader`), which never runs anything from the file.
    ``engine="r"`` loads it through R (rpy2); on R < 4.4.0 that can run
    code hidden in the file (CVE-2024-27322), so it is refused there unless
    ``trusted=True`` says the file is one you trust. Both engines give the
    same types and values. ``limits`` caps what the Python reader does
    (:class:`~r_bridge.rds_reader.ReadLimits`; an
    :class:`~csvm_stats.exceptions.InputLimitError` names the cap passed).

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.rda`` / ``.RData`` file.
    engine : {"python", "auto", "r"}, default "python"
        ``"python"`` (and ``"auto"``): the library's own bounded pure-Python
        reader of R's serialisation (:mod:`r_bridge.rds_reader`), which never
        runs anything from the file; ``"r"``: R's own loader through rpy2.
    trusted : bool, default False
        Allow ``engine="r"`` on R < 4.4.0 (CVE-2024-27322) for a file you trust.
    limits : ReadLimits, default DEFAULT_LIMITS
        Caps of the Python reader (decompressed bytes, elements, strings and
        list items, nodes, nesting depth); pass a larger
        ``ReadLimits(max_bytes=..., ...)`` for a large file you trust.

    Returns
    -------
    dict
        The objects by name, in pandas form.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    csvm_stats.exceptions.DataError
        The file is not a readable R data file, or ``engine="r"`` is refused
        on R < 4.4.0 without ``trusted``.
    ValueError
        An unknown ``engine``.

    Examples
    --------
    >>> from r_bridge import load_rdata
    >>> objects = load_rdata("SRBCT.rda")  # doctest: +SKIP
    >>> sorted(objects)  # doctest: +SKIP
    ['SRBCT']
    """
    nodes = read_rdata_nodes(path, engine, trusted=trusted, limits=limits)
    return {name: to_python(node) for name, node in nodes.items()}


def load_rds(
    path: str | Path, engine: Engine = "python", *, trusted: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> Any:
    """The object of an ``.rds`` file, as R's ``readRDS()`` restores it (engines and limits as in :func:`load_rdata`).

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.rds`` file.
    engine : {"python", "auto", "r"}, default "python"
        ``"python"`` (and ``"auto"``): the library's own bounded pure-Python
        reader of R's serialisation (:mod:`r_bridge.rds_reader`), which never
        runs anything from the file; ``"r"``: R's own loader through rpy2.
    trusted : bool, default False
        Allow ``engine="r"`` on R < 4.4.0 (CVE-2024-27322) for a file you trust.
    limits : ReadLimits, default DEFAULT_LIMITS
        Caps of the Python reader (decompressed bytes, elements, strings and
        list items, nodes, nesting depth); pass a larger
        ``ReadLimits(max_bytes=..., ...)`` for a large file you trust.

    Returns
    -------
    object
        The object in pandas form (lists become dicts).

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    csvm_stats.exceptions.DataError
        The file is not a readable ``.rds`` file, or ``engine="r"`` is refused
        on R < 4.4.0 without ``trusted``.
    ValueError
        An unknown ``engine``.

    Examples
    --------
    >>> import os, tempfile
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from r_bridge import load_rds, save_rds
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> path = save_rds(res, os.path.join(tempfile.mkdtemp(), "fit.rds"))
    >>> fit = load_rds(path)
    >>> isinstance(fit, dict)
    True
    """
    return to_python(read_rds_node(path, engine, trusted=trusted, limits=limits))


def read_rds_node(
    path: str | Path, engine: Engine = "python", *, trusted: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> RNode:
    """The object of an ``.rds`` file as an :class:`RNode` tree (see :func:`load_rds`)."""
    path = _checked_path(path, engine)
    if engine != "r":
        return read_rds_file(path, limits)
    check_r_engine(path, trusted)
    return node_from_sexp(rsession.r_function("readRDS")(rsession.r_string(str(path))))


def _checked_path(path: str | Path, engine: Engine) -> Path:
    if engine not in ("auto", "r", "python"):
        raise ValueError(f"engine must be 'auto', 'r' or 'python', not {engine!r}")
    return check_input_file(path, "R data file")


def check_r_engine(path: Path, trusted: bool) -> None:
    """Refuse reading ``path`` through R before 4.4.0 (CVE-2024-27322) unless the file is ``trusted``."""
    if trusted:
        return
    version = rsession.r_version()
    if version < R_FIXED_VERSION:
        raise DataError(
            f"refusing to read {str(path)!r} with R {'.'.join(map(str, version))}: R before 4.4.0 runs code "
            "hidden in a crafted R data file when it is loaded (CVE-2024-27322). Read it with "
            "engine='python' (the default, which never runs code from the file), upgrade R to 4.4.0 or "
            "later, or, only for a file you trust, pass trusted=True."
        )


def read_rdata_nodes(
    path: str | Path, engine: Engine = "python", *, trusted: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> dict[str, RNode]:
    """The objects of an R data file as :class:`RNode` trees (see :func:`load_rdata`)."""
    path = _checked_path(path, engine)
    if engine != "r":
        return read_rdata_file(path, limits)
    check_r_engine(path, trusted)
    environment = rsession.new_environment()
    rsession.r_function("load")(rsession.r_string(str(path)), envir=environment)
    return {name: node_from_sexp(value) for name, value in rsession.environment_objects(environment).items()}
