"""The documentation site builds with warnings as errors, and its pages render in a browser.

The build is the documented command, ``python -m sphinx -W --keep-going -b html docs <out>``,
run once per session into a temporary folder: it executes the Python vignettes at reduced
size (``CSVM_VIGNETTE_QUICK=1``) and the executed user-guide pages, renders the R package's
Rd pages with ``tools::Rd2HTML`` where R is installed, and validates the public API's
docstrings with numpydoc. Measured on the shared 2-core development machine under a load
average of about 16 (eight engineers' jobs): the whole file, build included, took 8 min 41 s
of wall-clock time (about 2 CPU-minutes; most of it the vignettes and the executed pages),
the doctest examples about 35 s of it. With the rest of the suite (about 11 minutes) that keeps
the CI run well inside its 90-minute budget.

The browser test opens the built index page and the ``CSVM`` API page in headless Chromium
(Debian's ``chromium``, which ``scripts/test_all.sh`` installs), checks their headings in the
rendered DOM and that the browser logged no console error, and takes a screenshot.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
NEEDED = ("sphinx", "pydata_sphinx_theme", "numpydoc", "myst_nb", "ipykernel")
MISSING = [name for name in NEEDED if importlib.util.find_spec(name) is None]

needs_sphinx = pytest.mark.skipif(
    bool(MISSING), reason=f"the docs extra is not installed (missing {', '.join(MISSING)}): pip install -e '.[docs]'"
)

#: Public names that must have an API page (autosummary), by the page's file name.
PUBLIC = [
    "csvm_stats.CSVM", "csvm_stats.CSVMResults", "csvm_stats.MulticlassCSVM",
    "csvm_stats.multiclass.results.MulticlassResults", "csvm_stats.sparse.results.SparseCSVMResults",
    "csvm_stats.CSVMClassifier", "csvm_stats.EBB", "csvm_stats.fit_csvm",
    "csvm_stats.probability.calibrated.VennAbersClassifier", "csvm_stats.probability.venn_abers.VennAbers",
    "csvm_stats.sparse.stability.stability_selection", "csvm_stats.sparse.stability.StabilitySelection",
    "csvm_stats.sparse.path.sparsity_path", "csvm_stats.models.tuning.nested_cv",
    "csvm_stats.models.tuning.choose_sparsity", "csvm_stats.models.tuning.nested_cv_sparsity",
    "csvm_stats.interfaces.persistence.save_model", "csvm_stats.interfaces.persistence.load_model",
    "csvm_stats.interfaces.persistence.SavedModel",
    "csvm_stats.inference.certification.umbrella_intercept",  # user_guide/guarantee.md links it
]
USER_GUIDE = [
    "getting_started", "getting_started_r", "requirements", "statements", "guarantee", "probabilities",
    "multiclass", "sparse", "tuning", "solvers", "model_files_cli", "r_package", "safety", "scaling_out",
    "comparison", "papers", "performance",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.setdefault("CSVM_VIGNETTE_QUICK", "1")
    env.pop("CSVM_DOCS_REUSE_EXAMPLES", None)  # the test renders every vignette afresh
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(DOCS), str(out)],
                          capture_output=True, text=True, timeout=3600, env=env, cwd=REPO)
    assert done.returncode == 0, f"sphinx -W failed:\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    return out


@needs_sphinx
def test_the_build_has_every_page(site):
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    for name in USER_GUIDE:
        assert f"user_guide/{name}.html" in pages, name
    for name in PUBLIC:
        assert f"api/generated/{name}.html" in pages, name
    assert "examples/index.html" in pages and "r_reference/index.html" in pages
    text_pages = [p for p in pages if not p.startswith(("_", "genindex", "search"))]
    assert len(text_pages) >= 15


@needs_sphinx
def test_executed_pages_show_output_and_figures(site):
    getting_started = (site / "user_guide" / "getting_started.html").read_text()
    assert "held-out" in getting_started and "cell_output" in getting_started
    assert "Traceback" not in getting_started
    performance = (site / "user_guide" / "performance.html").read_text()
    assert performance.count("<img") >= 4  # scaling curves, validity, calibration diagrams
    examples = sorted((site / "examples").glob("0*.html"))
    assert examples, "no vignette was rendered"
    for page in examples:
        html = page.read_text()
        assert "<img" in html and "Traceback" not in html, page.name
    for image in (site / "_images").glob("*.png"):
        assert image.stat().st_size > 2_000, image.name


@needs_sphinx
def test_r_reference_pages(site):
    index = (site / "r_reference" / "index.html").read_text()
    if shutil.which("Rscript") is None:
        assert "without R" in index
        return
    for name in ("csvm", "predict.csvm", "summary.csvm", "install_python"):
        html = (site / "r_reference" / f"{name}.html").read_text()
        assert "Arguments" in html or "Usage" in html, name
        assert "<h2>NA</h2>" not in html and "<h3>NA</h3>" not in html, name  # every Rd section rendered


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _open(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    return subprocess.run([_chromium(), *flags, *extra, page.as_uri()], capture_output=True, text=True, timeout=120)


#: Chromium's stderr line for a message of the page's console (``...:INFO:CONSOLE:1] "text", source: ...``);
#: it prints console.log, console.error and uncaught exceptions alike, so every console message counts
#: except the theme's own informational ones (pydata-sphinx-theme logs "[PST]: Changed to light mode ...").
_CONSOLE = re.compile(r':CONSOLE(?::|\()\d+\)?\] "(?P<text>.*)", source: (?P<source>\S+)')


def _console_errors(stderr: str) -> list[str]:
    messages = [m for m in map(_CONSOLE.search, stderr.splitlines()) if m]
    return [f"{m['text']} ({m['source']})" for m in messages if not m["text"].startswith("[PST]: ")]


def test_console_messages_are_read():
    """The console check sees an error and an uncaught exception in Chromium's own log format."""
    log = ('[682:682:1202/072727.388068:INFO:CONSOLE:1] "boom", source: file:///tmp/bad.html (1)\n'
           '[682:682:1202/072727.394560:INFO:CONSOLE:1] "Uncaught ReferenceError: f is not defined", source: file:///b (1)\n'
           '[1:1:1202/072805.660270:INFO:CONSOLE:1] "[PST]: Changed to light mode using the light theme.", source: x.js (1)\n'
           '[1:1:1202/072718.625418:ERROR:dbus/bus.cc:405] Failed to connect to the bus')
    assert _console_errors(log) == ["boom (file:///tmp/bad.html)", "Uncaught ReferenceError: f is not defined (file:///b)"]


@needs_sphinx
@pytest.mark.parametrize(("page", "heading"), [("index.html", "csvm-stats"), ("api/generated/csvm_stats.CSVM.html", "CSVM")])
def test_pages_render_in_chromium(site, tmp_path, page, heading):
    if _chromium() is None:
        pytest.skip("chromium is not installed (scripts/test_all.sh installs Debian's chromium)")
    done = _open(site / page, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    headings = re.findall(r"<h1[^>]*>(.*?)</h1>", dom, flags=re.S)
    assert any(heading in re.sub(r"<[^>]+>", "", h) for h in headings), headings
    assert 'class="bd-header' in dom or "bd-header" in dom  # the theme's header was rendered
    errors = _console_errors(done.stderr)
    assert not errors, errors
    shot = tmp_path / "page.png"
    taken = _open(site / page, tmp_path, f"--screenshot={shot}", "--window-size=1280,900")
    assert taken.returncode == 0 and shot.stat().st_size > 20_000


def _modules_with_examples() -> list[str]:
    """Modules of csvm_stats and r_bridge whose docstrings hold doctest examples."""
    names = []
    for package in ("csvm_stats", "r_bridge"):
        for path in sorted((REPO / package).rglob("*.py")):
            if "    >>> " in path.read_text(encoding="utf-8"):
                names.append(".".join(path.relative_to(REPO).with_suffix("").parts))
    return names


@pytest.mark.parametrize("module_name", _modules_with_examples())
def test_docstring_examples_run(module_name):
    """Every ``Examples`` section of the public API runs and prints what it shows (examples that
    need R or a data file outside the repository are marked ``+SKIP`` in the docstring)."""
    import doctest
    import importlib
    import warnings

    module = importlib.import_module(module_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a warning is not an example's output; the tests of each module check them
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {module_name} failed"


@pytest.mark.skipif(importlib.util.find_spec("numpydoc") is None, reason="numpydoc is not installed (the docs extra)")
def test_csvm_documents_every_parameter():
    """``CSVM``'s docstring documents exactly the parameters of ``CSVM.__init__``.

    numpydoc's own check cannot see them: ``CSVM.__new__`` dispatches to the model form, so the class's
    signature is the dispatcher's (docs/conf.py excludes ``CSVM`` from numpydoc's validation for that).
    """
    import inspect

    from numpydoc.docscrape import ClassDoc

    from csvm_stats import CSVM

    documented = {name.strip() for item in ClassDoc(CSVM, config={"show_class_members": False})["Parameters"]
                  for name in item.name.split(",")}
    expected = set(inspect.signature(CSVM.__init__).parameters) - {"self"}
    assert documented == expected
