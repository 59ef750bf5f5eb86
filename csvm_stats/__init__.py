"""csvm-stats: constrained support vector machines with rate guarantees.

The data flow is formula -> design -> optimisation problem -> solver backend
-> results -> summary; each step has its own module. The main entry points:

* :class:`CSVM` (``csvm_stats.models.model``): ``CSVM.from_formula("y ~ .", data,
  tpr_min=0.9).fit()`` returns a :class:`CSVMResults` with ``summary()``.
* :class:`EBB` (``csvm_stats.probability.ebb``): bootstrap posterior probabilities.
* :class:`CSVMClassifier` (``csvm_stats.interfaces.sklearn``): the scikit-learn estimator.
* :func:`fit_csvm` (``csvm_stats.optimization.engine``): the array-level solver kernel.
"""

from csvm_stats._version import __version__

from csvm_stats.probability.ebb import EBB
from csvm_stats.optimization.engine import fit_csvm
from csvm_stats.models.model import CSVM
from csvm_stats.models.results import CSVMResults
from csvm_stats.interfaces.sklearn import CSVMClassifier
from csvm_stats.interfaces.neyman_pearson import NeymanPearsonClassifier
from csvm_stats.models.routes import compare_routes
# The problem forms beyond two classes register themselves with CSVM(...) and the model files:
from csvm_stats.multiclass.model import MulticlassCSVM
from csvm_stats.multiclass import persistence as _multiclass_files  # noqa: F401  (registers the file form)

__all__ = [
    "CSVM", "CSVMClassifier", "CSVMResults", "EBB", "MulticlassCSVM", "NeymanPearsonClassifier", "compare_routes", "fit_csvm",
    "__version__",
]
