"""Pages of the csvm-stats documentation that are made at build time.

* :func:`render_vignettes` executes the Python vignettes (``vignettes/0*.py``)
  with the project's renderer (``vignettes/render.py``, the one
  ``tests/test_vignettes.py`` uses) into ``docs/examples/``: text, code, what
  the code printed and its figures. ``CSVM_VIGNETTE_QUICK`` (set to ``1`` by
  ``conf.py`` unless given) chooses reduced or full size. A vignette whose
  data set is absent here (SRBCT and car live in ``../shared/data``) is left
  out and the gallery's index says which and why.
* :func:`render_rd_pages` renders the R package's Rd files with R's own
  ``tools::Rd2HTML`` into ``docs/r_reference/``; where ``Rscript`` is absent
  the index page says so.

Both run once per build, before Sphinx reads the sources, and only write
files that are ignored by git.
"""

from __future__ import annotations

import html
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
REPO = DOCS.parent
VIGNETTES = REPO / "vignettes"
#: The shared data sets: ``$CSVM_DATA_DIR`` when set (as ``csvm_stats.data.datasets.data_dir`` reads it), else ``../shared/data``.
SHARED = Path(os.environ.get("CSVM_DATA_DIR") or REPO.parent / "shared" / "data")
RD_DIR = REPO / "r_bridge" / "csvmstats" / "man"

#: Data a vignette reads besides scikit-learn's embedded sets, as tests/test_vignettes.py checks them.
NEEDS = {
    "03_srbct_from_r": ("srbct",),
    "04_sparse_srbct": ("srbct",),
    "05_multiclass": ("srbct", "car"),
}


def _renderer():
    spec = importlib.util.spec_from_file_location("vignette_render", VIGNETTES / "render.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look the module up there
    spec.loader.exec_module(module)
    return module


def _missing_data(name: str) -> list[str]:
    if not os.environ.get("CSVM_SRBCT_PATH") and (SHARED / "srbct" / "SRBCT.rda").is_file():
        os.environ["CSVM_SRBCT_PATH"] = str(SHARED / "srbct" / "SRBCT.rda")  # where vignettes 03 and 04 read it
    srbct = os.environ.get("CSVM_SRBCT_PATH")
    missing = []
    for folder in NEEDS.get(name, ()):
        if folder == "srbct" and srbct and Path(srbct).is_file():
            continue
        if not (SHARED / folder).is_dir():
            missing.append(str(SHARED / folder))
    return missing


def _title(document: Path) -> str:
    for line in document.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return document.stem


def render_vignettes(out: Path) -> None:
    """Execute every vignette into ``out`` (Markdown and figures) and write the gallery's index."""
    quick = os.environ.get("CSVM_VIGNETTE_QUICK", "1") != "0"
    reuse = os.environ.get("CSVM_DOCS_REUSE_EXAMPLES") == "1"  # developers' shortcut: keep earlier renderings
    if out.exists() and not reuse:
        shutil.rmtree(out)  # no rendering of an earlier build (of a vignette skipped now) may stay behind
    out.mkdir(parents=True, exist_ok=True)
    render = _renderer()
    rendered, skipped = [], []
    for script in render.vignette_scripts():
        missing = _missing_data(script.stem)
        if missing:
            skipped.append((script.name, missing))
            (out / f"{script.stem}.md").unlink(missing_ok=True)
            shutil.rmtree(out / f"{script.stem}_files", ignore_errors=True)
            continue
        document = out / f"{script.stem}.md"
        if not (reuse and document.is_file()):
            result = render.render(script, out, quick=quick)
            if not result.completed:
                raise RuntimeError(f"vignette {script.name} stopped before its end; see {result.document}")
        rendered.append((script.stem, _title(document)))
    size = "reduced size (`CSVM_VIGNETTE_QUICK=1`)" if quick else "full size (`CSVM_VIGNETTE_QUICK=0`)"
    lines = [
        "# Gallery of examples",
        "",
        "The Python vignettes of `vignettes/`, executed when this site was built, at " + size + ",",
        "with what the code printed and the figures it drew. Each is a script in jupytext's percent",
        "format: run it with `python vignettes/<name>.py`, or open it as a notebook with jupytext.",
        "The R Markdown vignettes of the R package are in `vignettes/*.Rmd`.",
        "",
    ]
    if skipped:
        lines += ["Left out of this build because their data set is absent on the machine that built it:", ""]
        lines += [f"* `vignettes/{name}`: needs {', '.join(f'`{m}`' for m in missing)}" for name, missing in skipped]
        lines += [""]
    lines += ["```{toctree}", ":maxdepth: 1", "", *[stem for stem, _ in rendered], "```", ""]
    (out / "index.md").write_text("\n".join(lines), encoding="utf-8")


_RD_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
for (f in args[-1]) {
  name <- sub("[.]Rd$", "", basename(f))
  rd <- tools::parse_Rd(f)
  title <- paste(unlist(rd[sapply(rd, attr, "Rd_tag") == "\\title"]), collapse = "")
  tools::Rd2HTML(f, out = file.path(out, paste0(name, ".html")), package = "csvmstats")
  cat(name, "\t", gsub("[\r\n]+", " ", title), "\n", sep = "")
}
"""


def render_rd_pages(out: Path) -> None:
    """Render the R package's Rd pages with ``tools::Rd2HTML`` into ``out`` (one page per Rd file)."""
    if out.exists():
        shutil.rmtree(out)
    (out / "_html").mkdir(parents=True)
    rd_files = sorted(RD_DIR.glob("*.Rd"))
    rscript = shutil.which("Rscript")
    head = ["R package reference", "===================", ""]
    if rscript is None:
        body = ["This build was made on a machine without R (``Rscript`` was not found), so the Rd pages",
                "of the R package ``csvmstats`` (``r_bridge/csvmstats/man``) were not rendered here.",
                "Install R (``r_bridge/setup_r_env.sh`` installs Debian's R 4.2) and build again,",
                "or read them in R with ``help(package = 'csvmstats')``.", ""]
        (out / "index.rst").write_text("\n".join(head + body), encoding="utf-8")
        return
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as script:
        script.write(_RD_SCRIPT)
    try:
        done = subprocess.run([rscript, "--vanilla", script.name, str(out / "_html"), *map(str, rd_files)],
                              capture_output=True, text=True, timeout=300, check=False)
    finally:
        os.unlink(script.name)
    if done.returncode != 0:
        raise RuntimeError(f"tools::Rd2HTML failed:\n{done.stderr[-3000:]}")
    names = []
    for line in done.stdout.splitlines():
        name, _, title = line.partition("\t")
        names.append(name)
        page = (out / "_html" / f"{name}.html").read_text(encoding="utf-8")
        # The body of R's help page, without its header table and title (the page heading carries them)
        # and without the KaTeX script R loads from a CDN (\eqn{} shows as its TeX source, which reads fine).
        body = page.split('<div class="container">', 1)[1].rsplit("</div>", 1)[0]
        fragment = re.sub(r"<table[^>]*>.*?</table>\s*<h2>.*?</h2>", "", body, count=1, flags=re.S)
        # Links between the package's own pages point at R's help server; point them at these pages.
        fragment = re.sub(r'href="(?:\.\./\.\./csvmstats/help/|\.\./help/)?([A-Za-z0-9_.]+)\.html"',
                          r'href="\1.html"', fragment)
        fragment = re.sub(r'href="\.\./\.\./[^"]*"', 'href="#"', fragment)
        (out / "_html" / f"{name}.html").write_text(fragment, encoding="utf-8")
        heading = f"{name}: {title.strip()}"
        page = [heading, "=" * len(heading), "", ".. raw:: html", f"   :file: _html/{name}.html", ""]
        (out / f"{name}.rst").write_text("\n".join(page), encoding="utf-8")
    version = subprocess.run([rscript, "--version"], capture_output=True, text=True).stderr.strip().splitlines()
    body = [
        "The help pages of the R package ``csvmstats`` (``r_bridge/csvmstats/man/*.Rd``), rendered when this",
        f"site was built by R's own ``tools::Rd2HTML`` ({html.escape(version[0] if version else 'R')}).",
        "In R, the same pages are ``?csvm``, ``?predict.csvm`` and so on.", "",
        ".. toctree::", "   :maxdepth: 1", "", *[f"   {name}" for name in names], "",
    ]
    (out / "index.rst").write_text("\n".join(head + body), encoding="utf-8")


def _init_signature(app, what, name, obj, options, signature, return_annotation):
    """Show ``__init__``'s signature for a class whose ``__new__`` only dispatches (``CSVM``).

    ``CSVM.__new__(cls, endog, exog, **kwargs)`` picks the model form (two
    classes or several) and Python then runs that form's ``__init__``; autodoc
    would otherwise print the dispatcher's ``(endog, exog, **kwargs)``.
    """
    if what != "class" or "__new__" not in vars(obj) or "__init__" not in vars(obj):
        return None
    parameters = [parameter.replace(annotation=inspect.Parameter.empty)  # autodoc_typehints = "none"
                  for parameter in list(inspect.signature(obj.__init__).parameters.values())[1:]]
    return str(inspect.Signature(parameters)), return_annotation


def _on_builder_inited(app) -> None:
    render_vignettes(DOCS / "examples")
    render_rd_pages(DOCS / "r_reference")


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("autodoc-process-signature", _init_signature)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
