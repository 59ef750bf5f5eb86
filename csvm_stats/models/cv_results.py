"""The records of a nested cross-validation: per-fold rows, their seeds, and :class:`NestedCVResult`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from csvm_stats.models.cv_specs import Rates


def _fold_seed(*parts: int) -> int:
    """A seed for one fold from the user's seed and the fold's position (worker-independent)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def _row(k: int, model: str, pair: tuple[float, float], rates: Rates | None, seconds: float, solves: int) -> dict:
    nan = math.nan
    return dict(
        fold=k, model=model, C=pair[0], gamma=pair[1],
        tpr=rates.tpr if rates else nan, tnr=rates.tnr if rates else nan, acc=rates.acc if rates else nan,
        seconds=seconds, miqp_solves=solves, status="ok", message="",
    )


@dataclass(frozen=True)
class NestedCVResult:
    """Per-fold results of :func:`~csvm_stats.models.tuning.nested_cv` and their summary.

    ``folds`` has one row per (outer fold, model) with the chosen C and gamma,
    the outer-test TPR, TNR and accuracy, ``seconds`` spent in the final fit
    (for the CSVM the solver's wall time of the outer solve) and, for CSVM rows, the baseline rate
    (``rate0``), the target ``p0``, the required anchor count out of
    ``anchor_n``, whether the margin was capped at all anchor points, the rate
    reached on the anchor sample, the solver status and time, and the number
    of MIQP solves; ``fold_cpu_seconds`` is the CPU time of the whole outer
    fold (same value on each of its rows; a measure of work that does not
    depend on how busy the machine was). ``splits`` are the outer (train,
    test) positions.

    Parameters
    ----------
    folds : pandas.DataFrame
        One row per (outer fold, model).
    splits : list of tuple of numpy.ndarray
        The outer (train, test) positions.
    protocol : str
        ``"fast"``, ``"paper"`` or ``"sparse"``.
    wall_time : float
        Seconds the whole run took.

    Examples
    --------
    >>> import numpy as np
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.models.tuning import CSVMSpec, Grid, RateRequirement, nested_cv
    >>> X, y = load_dataset("wisconsin")
    >>> spec = CSVMSpec(RateRequirement("tpr", minimum=0.9), bound="binomial")
    >>> result = nested_cv(X, np.asarray(y), [spec], grid=Grid((1.0,), (0.03125,)), outer_folds=3,
    ...                    inner_folds=2, progress=False)
    >>> len(result.splits)
    3
    """

    folds: pd.DataFrame
    splits: list[tuple[np.ndarray, np.ndarray]] = field(repr=False)
    protocol: str
    wall_time: float

    def summary(self) -> pd.DataFrame:
        """Mean and sample SD over outer folds of TPR, TNR, accuracy per model, plus effort.

        Returns
        -------
        pandas.DataFrame
            One row per model: mean and SD of TPR, TNR and accuracy, and the effort.

        Examples
        --------
        >>> import numpy as np
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.models.tuning import Grid, nested_cv
        >>> X, y = load_dataset("wisconsin")
        >>> result = nested_cv(X, np.asarray(y), grid=Grid((1.0,), (0.03125,)), outer_folds=3, inner_folds=2, progress=False)
        >>> len(result.summary())
        1
        """
        grouped = self.folds.groupby("model", sort=False)
        table = grouped[["tpr", "tnr", "acc"]].agg(["mean", "std"])
        table.columns = [f"{rate}_{stat}" for rate, stat in table.columns]
        table["folds_ok"] = grouped["tpr"].count()
        table["miqp_solves"] = grouped["miqp_solves"].sum()
        table["solve_seconds"] = grouped["seconds"].sum()
        if "capped" in self.folds:
            table["capped_folds"] = grouped["capped"].apply(lambda c: int(c.fillna(False).astype(bool).sum()))
        return table

    @property
    def cpu_seconds(self) -> float:
        """CPU time of all outer folds (the work, whatever the machine's load)."""
        return float(self.folds.groupby("fold")["fold_cpu_seconds"].first().sum())

    @property
    def miqp_solves(self) -> int:
        """Total number of CSVM (MIQP) solves behind these results."""
        return int(self.folds["miqp_solves"].sum())

