r"""Several Gaussian classes whose per-class recalls are known in closed form.

Class k is :math:`N(\mu_k, I_d)`. For the argmax rule of scores
:math:`f_l(x) = w_l^\top x + b_l`, a point :math:`x = \mu_k + z` of class k is
classified k when :math:`(w_k - w_l)^\top z \ge -c_l` for every :math:`l \ne k`,
with :math:`c_l = (w_k - w_l)^\top\mu_k + b_k - b_l`. With A the matrix of the
rows :math:`a_l = w_k - w_l`, :math:`u = -Az \sim N(0, AA^\top)`, so

.. math:: R_k = P(u \le c) = \Phi_{K-1}(c;\, 0, AA^\top),

a (K-1)-variate normal distribution function (ties have probability 0). A
confidence statement about a fitted rule can be checked against the truth
in every repetition of a simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import multivariate_normal, norm

CDF_ABSEPS = 1e-7


@dataclass(frozen=True)
class GaussianMulticlass:
    """Unit-covariance Gaussian classes with the given means (one row per class)."""

    means: np.ndarray

    @property
    def n_classes(self) -> int:
        return self.means.shape[0]

    def sample(self, n_per_class: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n_per_class`` points of each class: (X, class positions)."""
        y = np.repeat(np.arange(self.n_classes), n_per_class)
        return self.means[y] + rng.standard_normal((y.size, self.means.shape[1])), y

    def true_recalls(self, W: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The recall of every class under the argmax rule of ``W x + b`` (module docstring)."""
        out = np.empty(self.n_classes)
        for k in range(self.n_classes):
            rivals = np.arange(self.n_classes) != k
            A = W[k] - W[rivals]
            c = A @ self.means[k] + b[k] - b[rivals]
            flat = np.linalg.norm(A, axis=1) == 0  # a rival with the same direction: a constant comparison
            if np.any(flat & (c < 0)):
                out[k] = 0.0
                continue
            A, c = A[~flat], c[~flat]
            if c.size == 0:
                out[k] = 1.0
            elif c.size == 1:
                out[k] = float(norm.cdf(c[0] / np.linalg.norm(A[0])))
            else:
                cov = A @ A.T
                out[k] = float(multivariate_normal.cdf(
                    c, mean=np.zeros(c.size), cov=cov, allow_singular=True, abseps=CDF_ABSEPS, releps=CDF_ABSEPS,
                    rng=np.random.default_rng(0)))
        return out
