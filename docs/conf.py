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
#   RT03       a Returns entry has a description
#   SS01       a summary line exists
# Left out, with the reason:
#   EX01 (Examples section): every public entry point is exercised by an executed example in the
#        gallery or the user guide (built with the docs, so it runs); short doctest examples are
#        kept where they are self-contained.
#   SA01 (See Also), ES01 (extended summary): optional in numpydoc's standard.
#   RT01/YD01 for properties and methods returning None: numpydoc flags them though there is no value.
#   PR06/RT02/GL02/GL03/SS03/SS05/SS06/GL01: formatting preferences (type spelling, line wrapping,
#        imperative mood) that do not change what the reader learns.
numpydoc_validation_checks = {"GL06", "GL07", "GL08", "PR01", "PR02", "PR03", "PR10", "RT03", "SS01"}
# Names whose docstrings predate this site and do not yet pass the checks above (mostly PR01:
# parameters described in prose rather than in a Parameters section). Each is excluded by its
# exact name, so any new public name is validated; remove a name here when its docstring is fixed.
DOCSTRINGS_PENDING = [
    "csvm_stats.CSVM",
    "csvm_stats.CSVM.anchor_targets",
    "csvm_stats.CSVM.design_matrix",
    "csvm_stats.CSVM.fit",
    "csvm_stats.CSVM.from_formula",
    "csvm_stats.CSVMClassifier",
    "csvm_stats.CSVMClassifier.decision_function",
    "csvm_stats.CSVMClassifier.fit",
    "csvm_stats.CSVMClassifier.predict",
    "csvm_stats.CSVMClassifier.predict_interval",
    "csvm_stats.CSVMClassifier.predict_proba",
    "csvm_stats.CSVMResults",
    "csvm_stats.CSVMResults.decision_function",
    "csvm_stats.CSVMResults.predict",
    "csvm_stats.CSVMResults.predict_interval",
    "csvm_stats.CSVMResults.predict_proba",
    "csvm_stats.CSVMResults.probability_ensemble",
    "csvm_stats.CSVMResults.summary",
    "csvm_stats.EBB",
    "csvm_stats.EBB.bootstrap_scores",
    "csvm_stats.EBB.fit",
    "csvm_stats.EBB.predict",
    "csvm_stats.EBB.predict_interval",
    "csvm_stats.EBB.predict_proba",
    "csvm_stats.EBB.proba_by_theta",
    "csvm_stats.MulticlassCSVM",
    "csvm_stats.MulticlassCSVM.class_name",
    "csvm_stats.MulticlassCSVM.fit",
    "csvm_stats.data.datasets.dataset_info",
    "csvm_stats.data.datasets.load_classes",
    "csvm_stats.data.datasets.load_dataset",
    "csvm_stats.fit_csvm",
    "csvm_stats.inference.bounds.binomial_min_n",
    "csvm_stats.inference.bounds.clopper_pearson_interval",
    "csvm_stats.inference.bounds.clopper_pearson_lower",
    "csvm_stats.inference.bounds.hoeffding_min_n",
    "csvm_stats.interfaces.cli.main",
    "csvm_stats.interfaces.persistence.SavedModel",
    "csvm_stats.interfaces.persistence.SavedModel.decision_function",
    "csvm_stats.interfaces.persistence.SavedModel.design_matrix",
    "csvm_stats.interfaces.persistence.SavedModel.predict",
    "csvm_stats.interfaces.persistence.SavedModel.predict_proba",
    "csvm_stats.interfaces.persistence.load_model",
    "csvm_stats.interfaces.persistence.save_model",
    "csvm_stats.models.tuning.CSVMSpec",
    "csvm_stats.models.tuning.Grid",
    "csvm_stats.models.tuning.NestedCVResult",
    "csvm_stats.models.tuning.RateRequirement",
    "csvm_stats.models.tuning.RateRequirement.target",
    "csvm_stats.models.tuning.SparsityChoice",
    "csvm_stats.models.tuning.choose_sparsity",
    "csvm_stats.models.tuning.nested_cv",
    "csvm_stats.models.tuning.nested_cv_sparsity",
    "csvm_stats.multiclass.results.MulticlassResults",
    "csvm_stats.multiclass.results.MulticlassResults.confusion_matrix",
    "csvm_stats.multiclass.results.MulticlassResults.csvm_scores",
    "csvm_stats.multiclass.results.MulticlassResults.decision_function",
    "csvm_stats.multiclass.results.MulticlassResults.predict",
    "csvm_stats.multiclass.results.MulticlassResults.predict_interval",
    "csvm_stats.multiclass.results.MulticlassResults.predict_proba",
    "csvm_stats.multiclass.results.MulticlassResults.summary",
    "csvm_stats.probability.calibrated.VennAbersClassifier.fit",
    "csvm_stats.probability.calibrated.VennAbersClassifier.predict",
    "csvm_stats.probability.calibrated.VennAbersClassifier.predict_interval",
    "csvm_stats.probability.calibrated.VennAbersClassifier.predict_proba",
    "csvm_stats.probability.venn_abers.VennAbers",
    "csvm_stats.probability.venn_abers.VennAbers.fit",
    "csvm_stats.probability.venn_abers.VennAbers.interval",
    "csvm_stats.probability.venn_abers.VennAbers.predict",
    "csvm_stats.probability.venn_abers.VennAbers.slots",
    "csvm_stats.probability.venn_abers.VennAbers.threshold",
    "csvm_stats.reporting.plotting.plot_bootstrap_scores",
    "csvm_stats.reporting.plotting.plot_reliability",
    "csvm_stats.reporting.plotting.plot_roc",
    "csvm_stats.reporting.plotting.plot_selection_stability",
    "csvm_stats.reporting.plotting.plot_sparsity_path",
    "csvm_stats.reporting.plotting.plot_tradeoff",
    "csvm_stats.reporting.plotting.reliability_curve",
    "csvm_stats.sparse.path.SparsityPath",
    "csvm_stats.sparse.path.sparsity_path",
    "csvm_stats.sparse.results.SparseCSVMResults",
    "csvm_stats.sparse.results.SparseCSVMResults.selection_stability",
    "csvm_stats.sparse.results.SparseCSVMResults.summary",
    "csvm_stats.sparse.stability.StabilitySelection",
    "csvm_stats.sparse.stability.selection_frequencies",
    "csvm_stats.sparse.stability.stability_selection",
    "r_bridge.available_datasets",
    "r_bridge.load_dataset",
    "r_bridge.load_rdata",
    "r_bridge.load_rds",
    "r_bridge.save_rds",
    "r_bridge.srbct",
    "r_bridge.srbct_genes",
    "r_bridge.to_r",
]
numpydoc_validation_exclude = {
    r"\.__init__$", r"\._[a-z]", r"\.get_params$", r"\.set_params$", r"\.set_.*_request$",
    *(f"^{name.replace('.', chr(92) + '.')}$" for name in DOCSTRINGS_PENDING),
}

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
