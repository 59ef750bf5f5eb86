r"""Two Gaussian classes whose true rates are known in closed form, for validity checks.

Positives are :math:`N(\mu_+, I_d)` and negatives :math:`N(\mu_-, I_d)` with
:math:`\mu_\pm = \pm(\Delta/2) u`, :math:`u = (e_1 + \dots + e_k)/\sqrt k`:
the first k = ``informative`` coordinates carry the signal (k = 1 by
default), the others are noise, and the classes stay :math:`\Delta` apart. For the linear rule "positive when
:math:`w^\top x + b \ge 0`",

.. math::

    \mathrm{TPR} = \Phi\!\left(\frac{w^\top \mu_+ + b}{\|w\|}\right), \qquad
    \mathrm{TNR} = \Phi\!\left(-\frac{w^\top \mu_- + b}{\|w\|}\right),

and the accuracy is their mixture with the positive share as weight. A
confidence statement about a fitted classifier can therefore be checked
against the truth in every repetition of a simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm


@dataclass(frozen=True)
class GaussianClasses:
    """Two unit-covariance Gaussian classes ``distance`` apart in ``dim`` dimensions.

    The mean difference lies on the first ``informative`` coordinates.
    """

    dim: int = 2
    distance: float = 2.0
    positive_share: float = 0.5
    informative: int = 1

    def mean(self, label: int) -> np.ndarray:
        """Class mean for label +1 or -1."""
        mu = np.zeros(self.dim)
        mu[: self.informative] = label * self.distance / 2 / np.sqrt(self.informative)
        return mu

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` points with exactly ``round(n * positive_share)`` positives: (X, y in {-1, +1})."""
        n_pos = int(round(n * self.positive_share))
        y = np.r_[np.ones(n_pos), -np.ones(n - n_pos)]
        X = rng.standard_normal((n, self.dim)) + np.where(y[:, None] > 0, self.mean(1), self.mean(-1))
        return X, y

    def true_rates(self, coef: np.ndarray, intercept: float) -> dict[str, float]:
        """True TPR, TNR and accuracy of the rule ``coef' x + intercept >= 0`` (module docstring)."""
        norm_w = float(np.linalg.norm(coef))
        if norm_w == 0:
            positive = 1.0 if intercept >= 0 else 0.0
            tpr, tnr = positive, 1.0 - positive
        else:
            tpr = float(norm.cdf((coef @ self.mean(1) + intercept) / norm_w))
            tnr = float(norm.cdf(-(coef @ self.mean(-1) + intercept) / norm_w))
        acc = self.positive_share * tpr + (1 - self.positive_share) * tnr
        return {"tpr": tpr, "tnr": tnr, "acc": acc}
