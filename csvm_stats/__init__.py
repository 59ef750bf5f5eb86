"""csvm-stats: constrained support vector machines with rate guarantees.

The data flow is formula -> design -> optimisation problem -> solver backend
-> results -> summary; each step has its own module. The main entry points:

* :class:`CSVM` (``csvm_stats.model``): ``CSVM.from_formula("y ~ .", data,
  tpr_min=0.9).fit()`` returns a :class:`CSVMResults` with ``summary()``.
* :class:`EBB` (``csvm_stats.ebb``): bootstrap posterior probabilities.
* :class:`CSVMClassifier` (``csvm_stats.sklearn``): the scikit-learn estimator.
* :func:`fit_csvm` (``csvm_stats.engine``): the array-level solver kernel.
"""

from csvm_stats.ebb import EBB
from csvm_stats.engine import fit_csvm
from csvm_stats.model import CSVM
from csvm_stats.results import CSVMResults
from csvm_stats.sklearn import CSVMClassifier

__version__ = "0.1.0"
__all__ = ["CSVM", "CSVMClassifier", "CSVMResults", "EBB", "fit_csvm", "__version__"]
