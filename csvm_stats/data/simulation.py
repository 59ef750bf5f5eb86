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


@dataclass(frozen=True)
class BinaryClasses:
    r"""Binary predictors, independent within each class: :math:`P(x_k = 1 \mid y = \pm 1) = p^\pm_k`.

    There are only :math:`2^d` distinct points, so many points share a score
    and a threshold set on scores has ties. The true rates of any rule are
    exact sums over the :math:`2^d` configurations
    (:meth:`true_rates_of`), computed with the rule's own decision values.
    """

    p_positive: tuple[float, ...] = (0.7, 0.65, 0.6, 0.55, 0.55)
    p_negative: tuple[float, ...] = (0.35, 0.4, 0.45, 0.5, 0.45)
    positive_share: float = 0.5

    @property
    def dim(self) -> int:
        return len(self.p_positive)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` points with exactly ``round(n * positive_share)`` positives: (X in {0, 1}, y in {-1, +1})."""
        n_pos = int(round(n * self.positive_share))
        y = np.r_[np.ones(n_pos), -np.ones(n - n_pos)]
        p = np.where(y[:, None] > 0, np.asarray(self.p_positive), np.asarray(self.p_negative))
        return (rng.random((n, self.dim)) < p).astype(float), y

    def configurations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All :math:`2^d` points and their probabilities in each class: (X, P(x | +), P(x | -))."""
        X = ((np.arange(2**self.dim)[:, None] >> np.arange(self.dim)) & 1).astype(float)

        def prob(p: tuple[float, ...]) -> np.ndarray:
            q = np.asarray(p)
            return np.prod(np.where(X > 0, q, 1 - q), axis=1)

        return X, prob(self.p_positive), prob(self.p_negative)

    def true_rates_of(self, decision: np.ndarray) -> dict[str, float]:
        """True TPR, TNR and accuracy of a rule from its decision values on :meth:`configurations`."""
        _, p_pos, p_neg = self.configurations()
        positive = decision >= 0
        tpr, tnr = float(p_pos[positive].sum()), float(p_neg[~positive].sum())
        return {"tpr": tpr, "tnr": tnr, "acc": self.positive_share * tpr + (1 - self.positive_share) * tnr}
