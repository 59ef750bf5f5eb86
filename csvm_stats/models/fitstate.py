"""What a CSVM fit hands to its results: the model's specification and the fitted state.

:class:`~csvm_stats.models.model.CSVM` builds a :class:`FittedState` and passes it to
:class:`~csvm_stats.models.results.CSVMResults`; the results read the model only
through :class:`ModelSpec`, the attributes listed there. So the import graph
is a tree: ``model -> results -> fitstate``, and ``results`` never imports
``model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from csvm_stats.inference.bounds import AdjustedTarget
from csvm_stats.inference.certification import UmbrellaIntercept
from csvm_stats.preprocessing.design import LabelCoding, SampleSplit, Standardizer
from csvm_stats.optimization.engine import CSVMFit
from csvm_stats.preprocessing.formula import FormulaDesign


class ModelSpec(Protocol):
    """The part of a model that its results read (``CSVM`` has all of it)."""

    exog: pd.DataFrame
    y: np.ndarray
    coding: LabelCoding
    targets: dict[str, float]
    alpha: float
    bound: str
    C: float
    standardize: bool
    formula: FormulaDesign | None

    @property
    def exog_names(self) -> list[str]: ...

    def design_matrix(self, newdata: Any) -> pd.DataFrame: ...


@dataclass(frozen=True)
class FittedState:
    """One fit of a model.

    ``split`` the rows of I, J and H; ``scaler`` the column standardisation;
    ``engine_fit`` the solved CSVM (w and the CSVM's own intercept);
    ``adjusted`` the required anchor counts per constrained rate; ``umbrella``
    the guarantee-mode intercept (``None`` otherwise); ``random_state`` the
    seed that made the split and seeded the solver (drawn when the caller
    passed none, so that every fit can be repeated); ``fit_options`` the
    other keyword arguments of the solve (time limit, gap, threads, clock,
    warm start, the seed), so that a refit on other rows (the several-class
    cross-fitted calibration, :mod:`csvm_stats.probability.refits`) repeats
    this fit exactly.
    """

    model: ModelSpec
    split: SampleSplit
    scaler: Standardizer
    engine_fit: CSVMFit
    adjusted: Mapping[str, AdjustedTarget]
    umbrella: UmbrellaIntercept | None
    random_state: int
    fit_options: Mapping[str, Any]


#: Drawn seeds lie in [0, SEED_RANGE): every backend accepts them (Gurobi's Seed stops at 2e9).
SEED_RANGE = 10**9


def resolve_seed(random_state: int | None) -> int:
    """``random_state`` itself, or, when it is ``None``, a fresh seed in [0, SEED_RANGE).

    The drawn seed comes from the operating system's entropy
    (:class:`numpy.random.SeedSequence`) and is stored in the results, printed
    in the summary and saved in model files, so a fit without a seed can be
    repeated exactly by passing the stored one.
    """
    if random_state is None:
        return int(np.random.SeedSequence().entropy % SEED_RANGE)
    return int(random_state)
