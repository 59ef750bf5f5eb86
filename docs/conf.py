"""Sphinx configuration of the csvm-stats documentation.

Build (after ``pip install -e '.[docs]'``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

What is generated at build time, never committed:

* ``api/generated/``: one page per public name (autosummary);
* ``examples/``: the Python vignettes (``vignettes/0*.py``) executed by the
  project's own renderer (``vignettes/render.py``) at reduced size
  (``CSVM_VIGNETTE_QUICK=1``, as ``tests/test_vignettes.py`` does; set
  ``CSVM_VIGNETTE_QUICK=0`` for full size) with their figures;
* ``r_reference/``: the R package's Rd pages rendered by ``tools::Rd2HTML``;
* the executed pages (``user_guide/*.md`` with code cells, the performance
  page) run in a Jupyter kernel through myst-nb, so they show what the code
  prints at build time and the numbers of the committed ``benchmarks/results``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(DOCS / "_ext"))
# The kernels myst-nb starts import this checkout, and the vignettes run at reduced size unless told otherwise.
os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
os.environ.setdefault("CSVM_VIGNETTE_QUICK", "1")
# tqdm.auto warns in a Jupyter kernel without ipywidgets ("IProgress not found"); the executed pages
# run in such a kernel but show no progress bars, so that warning would only be build-machine noise.
os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), "ignore:IProgress not found"]))

import csvm_stats  # noqa: E402

project = "csvm-stats"
author = "the csvm-stats authors"
copyright = "2026, the csvm-stats authors"
release = csvm_stats.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    "csvm_docs",  # docs/_ext/csvm_docs.py: vignettes, Rd pages
]

exclude_patterns = ["_build", "conf.py", "_ext", "**.ipynb_checkpoints", "examples/*_files"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["csvm.css"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}

# --- API reference -----------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True
# numpydoc validation of the public API (what autosummary documents), warnings fail the -W build.
# The checks kept are the ones a reader of the reference relies on:
#   GL06/GL07  unknown or misordered sections (a misspelt "Return" section silently disappears)
#   GL08       the object has a docstring
#   PR01/PR02  every parameter is documented and every documented parameter exists
#   PR03       parameters are documented in signature order
#   PR10       "name : type" has its space before the colon (otherwise the type is lost)
#   RT01/RT03  a function that returns something has a Returns section, and each entry a description
#   SS01       a summary line exists
#   EX01       an Examples section exists (tests/test_docs.py runs every example as a doctest)
# Left out, with the reason:
#   SA01 (See Also), ES01 (extended summary): optional in numpydoc's standard.
#   PR06/RT02/GL02/GL03/SS03/SS05/SS06/GL01/PR08/PR09: formatting preferences (type spelling, line
#        wrapping, imperative mood, capitalisation) that do not change what the reader learns.
#   PR04/PR05/PR07 (a type, no trailing period in a type, a description for every parameter): the
#        docstrings group parameters that share one description ("tpr_min, tnr_min, acc_min : ...").
numpydoc_validation_checks = {"GL06", "GL07", "GL08", "PR01", "PR02", "PR03", "PR10", "RT01", "RT03", "SS01", "EX01"}
# csvm_stats.CSVM is validated by hand: CSVM.__new__(cls, endog, exog, **kwargs) dispatches to the
# model form (two classes or several) before that form's __init__ runs, so inspect.signature (and with
# it numpydoc's PR01/PR02) sees the dispatcher's (endog, exog, **kwargs) instead of the documented
# parameters; the page shows __init__'s signature (docs/_ext/csvm_docs.py) and tests/test_docs.py
# checks that every parameter of CSVM.__init__ is documented.
DOCSTRINGS_CHECKED_ELSEWHERE = ["csvm_stats.CSVM"]
numpydoc_validation_exclude = {
    r"\.__init__$", r"\._[a-z]", r"\.get_params$", r"\.set_params$", r"\.set_.*_request$",
    *(f"^{name.replace('.', chr(92) + '.')}$" for name in DOCSTRINGS_CHECKED_ELSEWHERE),
}

# Every Python cross-reference must resolve (a reference Sphinx cannot resolve is otherwise shown
# as plain code without a word; review r10 F-xref): with -W an unresolved one fails the build.
# The names below have no page on purpose; a reference to them renders as code, not a link.
nitpicky = True
nitpick_ignore = [
    # The summary object every summary() returns: statsmodels' summary2.Summary with captioned tables
    # (csvm_stats/reporting/document.py); statsmodels has no intersphinx inventory here, and the
    # summary() pages say what the object offers (as_text, as_html, as_latex, tables).
    ("py:class", "csvm_stats.reporting.summary.Summary"),
    # Module constants named in docstrings (limits, exit codes, registries) have no page; the
    # docstring that names one gives its value or meaning.
    ("py:data", "CLASS_ORDER"),  # csvm_stats/data/datasets.py
    ("py:data", "EXIT_CODES"),  # csvm_stats/interfaces/cli.py
    ("py:data", "MAX_JSON_DEPTH"),  # csvm_stats/interfaces/model_format.py
    ("py:data", "MAX_JSON_KEYS"),  # csvm_stats/interfaces/model_format.py
    ("py:data", "csvm_stats.preprocessing.formula_grammar.MAX_TERMS"),  # csvm_stats/exceptions.py
    ("py:data", "csvm_stats.models.learners.LEARNERS"),  # csvm_stats/models/routes.py
    # csvm_stats/models/np_base.py (another developer's file in review r10): NPResultsBase's `classes`
    # attribute is described in its docstring, not an attribute page.
    ("py:attr", "classes"),
    # fit_csvm's `budget` parameter: the whole-fit time budget is internal (csvm_stats/optimization/budget.py,
    # described on the solvers page), with no API page.
    ("py:class", "csvm_stats.optimization.budget.FitBudget"),
]
nitpick_ignore_regex = [
    # The site documents public names, not modules: a docstring's :mod:`csvm_stats.optimization.budget`
    # points the reader at the source file.
    ("py:mod", r"(csvm_stats|r_bridge)(\..+)?"),
]

# --- executed pages (myst-nb) ----------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("CSVM_DOCS_EXECUTE", "cache")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
nb_kernel_rgx_aliases = {".*": "python3"}

# --- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"csvm-stats {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_show_sourcelink = False
