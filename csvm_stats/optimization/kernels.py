r"""Kernel functions and the factorised feature map used to solve kernel CSVMs.

A kernel CSVM is solved as a linear CSVM on an explicit feature map. On the
reference points R = I u J the Gram matrix is factorised as

.. math:: K = U \Lambda U^\top = \Phi \Phi^\top, \qquad \Phi = U \Lambda^{1/2},

keeping the eigenpairs whose eigenvalue exceeds a relative tolerance (the
numerical rank r). A new point x maps to
:math:`\phi(x) = \Lambda^{-1/2} U^\top k(x)` with :math:`k(x) = K(R, x)`, so that
:math:`\phi(x_i)^\top \phi(x_j) = K(x_i, x_j)` on R and every decision function
:math:`w^\top \phi(x) + b` is a kernel expansion over R. When r equals the
numerical rank the map is exact; a user-chosen smaller ``rank`` keeps only the
r largest eigenpairs (a Nystroem-type approximation) and is flagged as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from csvm_stats.exceptions import DataError
from csvm_stats.optimization.blas import one_blas_thread

KernelFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]
KERNELS: tuple[str, ...] = ("linear", "rbf", "poly")
RELATIVE_EIGEN_TOL = 1e-10


@dataclass(frozen=True)
class Kernel:
    """A kernel with its parameters resolved to numbers.

    ``rbf``: :math:`\\exp(-\\gamma \\|x - x'\\|^2)`; ``poly``:
    :math:`(\\gamma x^\\top x' + c_0)^d`; ``linear``: :math:`x^\\top x'`; or any
    callable returning the Gram matrix ``K[i, j] = k(X[i], Y[j])``.
    """

    name: str
    gamma: float | None = None
    degree: int = 3
    coef0: float = 1.0
    function: KernelFunction | None = field(default=None, compare=False)

    @property
    def is_linear(self) -> bool:
        return self.name == "linear"

    def __call__(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        if self.name == "linear":
            return linear_kernel(X, Y)
        if self.name == "rbf":
            return rbf_kernel(X, Y, gamma=self.gamma)
        if self.name == "poly":
            return polynomial_kernel(X, Y, degree=self.degree, gamma=self.gamma, coef0=self.coef0)
        assert self.function is not None
        K = np.asarray(self.function(X, Y), dtype=float)
        if K.shape != (X.shape[0], Y.shape[0]):
            raise DataError(
                f"the kernel callable returned shape {K.shape}; it must return the Gram matrix of shape "
                f"({X.shape[0]}, {Y.shape[0]})."
            )
        return K

    def describe(self) -> str:
        """One-line description, e.g. ``rbf(gamma=0.0333)``."""
        if self.name == "linear":
            return "linear"
        if self.name == "rbf":
            return f"rbf(gamma={self.gamma:.4g})"
        if self.name == "poly":
            return f"poly(degree={self.degree}, gamma={self.gamma:.4g}, coef0={self.coef0:g})"
        return f"callable({getattr(self.function, '__name__', 'kernel')})"


def resolve_kernel(
    kernel: str | KernelFunction | Kernel,
    X: np.ndarray,
    *,
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 1.0,
) -> Kernel:
    """Turn a kernel name or callable into a :class:`Kernel` with numeric gamma.

    ``gamma="scale"`` is scikit-learn's rule :math:`1 / (p \\, \\mathrm{Var}(X))`
    computed on the reference data ``X``.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return Kernel("callable", function=kernel)
    if kernel not in KERNELS:
        raise DataError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}.")
    if kernel == "linear":
        return Kernel("linear")
    if isinstance(gamma, str):
        if gamma != "scale":
            raise DataError(f"gamma must be a positive number or 'scale', got {gamma!r}.")
        var = float(np.var(X)) if X.size else 0.0
        g = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    else:
        g = float(gamma)
        if not g > 0:
            raise DataError(f"gamma must be positive, got {gamma!r}.")
    if kernel == "poly" and (int(degree) != degree or degree < 1):
        raise DataError(f"degree must be a positive integer, got {degree!r}.")
    return Kernel(kernel, gamma=g, degree=int(degree), coef0=float(coef0))


@dataclass(frozen=True)
class FeatureMap:
    """Map from input space to the space in which the CSVM is solved.

    For the linear kernel this is the identity (``reference`` is ``None``).
    Otherwise ``transform(X) = K(X, reference) @ projection`` with
    ``projection = U_r Lambda_r^{-1/2}``.
    """

    kernel: Kernel
    reference: np.ndarray | None = field(default=None, repr=False)
    projection: np.ndarray | None = field(default=None, repr=False)
    rank: int = 0
    numerical_rank: int = 0
    exact: bool = True

    @one_blas_thread  # one BLAS thread always: the rounding of K(X, R) @ P must not depend on other fits
    def transform(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if self.reference is None:
            return X
        return self.kernel(X, self.reference) @ self.projection

    def expansion_coefficients(self, coef: np.ndarray) -> np.ndarray | None:
        """Coefficients a with ``w'phi(x) = sum_t a_t K(x_t, x)`` over the reference points."""
        if self.projection is None:
            return None
        return self.projection @ coef


def linear_map(n_features: int, rank: int | None = None, numerical_rank: int | None = None) -> FeatureMap:
    """The identity feature map of the linear kernel (``rank`` < numerical rank: approximate)."""
    r = n_features if rank is None else rank
    nr = n_features if numerical_rank is None else numerical_rank
    return FeatureMap(Kernel("linear"), rank=r, numerical_rank=nr, exact=r == nr)


def factorise(kernel: Kernel, reference: np.ndarray, rank: int | None = None) -> tuple[FeatureMap, np.ndarray]:
    """Factorise the Gram matrix on ``reference``; return the map and Phi on the reference rows.

    Eigenvalues below ``RELATIVE_EIGEN_TOL * max eigenvalue`` are treated as zero
    (numerical rank). ``rank`` smaller than the numerical rank truncates and
    marks the map as approximate. The linear kernel keeps the identity map
    unless there are more columns than reference rows (or a rank is asked
    for): then the factorisation of X X' has at most n columns, and since the
    optimal w lies in the span of the rows, solving on it loses nothing.
    """
    if kernel.is_linear and rank is None and reference.shape[1] <= reference.shape[0]:
        return linear_map(reference.shape[1]), reference
    K = kernel(reference, reference)
    K = 0.5 * (K + K.T)
    eigval, eigvec = np.linalg.eigh(K)
    order = np.argsort(eigval)[::-1]
    eigval, eigvec = eigval[order], eigvec[:, order]
    if eigval[0] < -RELATIVE_EIGEN_TOL * max(1.0, abs(eigval[-1])):
        raise DataError("the kernel matrix has no positive eigenvalue; use a positive semi-definite kernel.")
    tol = RELATIVE_EIGEN_TOL * eigval[0]
    numerical_rank = int(np.sum(eigval > tol))
    if eigval[-1] < -1e-6 * eigval[0]:
        raise DataError(
            f"the kernel matrix is not positive semi-definite (smallest eigenvalue {eigval[-1]:.3g}); "
            "a CSVM needs a Mercer kernel."
        )
    r = numerical_rank
    if rank is not None:
        if int(rank) != rank or rank < 1:
            raise DataError(f"rank must be a positive integer or None, got {rank!r}.")
        r = min(int(rank), numerical_rank)
    lam = eigval[:r]
    U = eigvec[:, :r]
    phi = U * np.sqrt(lam)
    projection = U / np.sqrt(lam)
    fmap = FeatureMap(kernel, reference, projection, rank=r, numerical_rank=numerical_rank, exact=r == numerical_rank)
    return fmap, phi
