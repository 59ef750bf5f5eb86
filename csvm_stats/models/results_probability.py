r"""Probabilities of a two-class CSVM fit: the calibrated default and the paper's bootstrap ensembles.

:class:`ProbabilityResults` is the part of
:class:`~csvm_stats.models.results.CSVMResults` that answers
``predict_proba``, ``predict_interval``, ``calibration`` and
``probability_threshold``; it reads the fit's ``model``, ``split``,
``scaler``, ``engine_fit``, ``intercept``, ``fitted_features``,
``_fitted_decision`` and ``_features`` (what
:class:`~csvm_stats.probability.fit_calibration.Calibration` reads too).

* ``method="venn-abers"`` (default): :func:`~csvm_stats.probability.fit_calibration.calibrate`
  (held-out when H has both classes, else cross-fitted);
* ``"ebb" | "cebb1" | "cebb2"``: the paper's ensembles of B bootstrap SVMs over a
  grid of C, fitted on :math:`I \cup J` only;
* ``"ebb-va"``: EBB calibrated by Venn-Abers on its out-of-bag probabilities.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.probability.ebb import EBB
from csvm_stats.probability.fit_calibration import Calibration, calibrate

#: Values of ``predict_proba(method=...)``: the calibrated default and the paper's ensembles.
PROBABILITY_METHODS: tuple[str, ...] = ("venn-abers", "ebb", "cebb1", "cebb2", "ebb-va")


class ProbabilityResults:
    """The probability part of a two-class CSVM's results (module docstring); the subclass keeps ``_ensembles``."""

    _ensembles: dict[tuple[str, int, int], EBB]

    @property
    def probability_variant(self) -> str:
        """The bootstrap ensemble of the same kind as this fit (:mod:`csvm_stats.probability.ebb`).

        ``"ebb"`` without a rate constraint, ``"cebb1"`` (moved threshold) with
        exactly one of tpr_min / tnr_min, ``"cebb2"`` (CSVM fits) otherwise.
        """
        targets = self.model.targets
        if not targets:
            return "ebb"
        if len(targets) == 1 and "acc" not in targets:
            return "cebb1"
        return "cebb2"

    @cached_property
    def calibration(self) -> Calibration:
        """The calibration behind the default :meth:`predict_proba` (:mod:`csvm_stats.probability.fit_calibration`).

        A logistic probability model, recalibrated: on I u J u H with the
        Venn-Abers interval on H of the same regression fitted on I u J alone
        (the mean of its cross-validation fold models, not a refit) when H has
        enough points of both classes, else on I u J, cross-fitted (recalibration and
        interval on its out-of-fold scores; no CSVM refit).
        """
        return calibrate(self)

    @property
    def ready_calibration(self) -> Calibration | None:
        """:attr:`calibration`, or None when the data are too few for one (``predict_proba`` then says why)."""
        try:
            return self.calibration
        except DataError:
            return None

    def probability_ensemble(
        self, *, variant: str | None = None, n_bootstrap: int = 500, random_state: int = 0, n_jobs: int | None = None
    ) -> EBB:
        """A fitted EBB / CEBB1 / CEBB2 ensemble (fitted once per variant, n_bootstrap and seed).

        ``variant`` defaults to :attr:`probability_variant`; ``"ebb-va"`` is
        EBB calibrated on its out-of-bag probabilities (:mod:`csvm_stats.probability.ebb`). The ensemble is
        fitted on the training and anchor samples, standardised as the CSVM
        was, with the CSVM's kernel, the paper's C grid and EBB's defaults
        (all theta), and with the model's targets, alpha and bound for the
        CEBB variants. The held-out sample is not used.

        Parameters
        ----------
        variant : {"ebb", "cebb1", "cebb2", "ebb-va"} or None
            The ensemble; ``None`` is :attr:`probability_variant`.
        n_bootstrap : int, default 500
            Bootstrap samples per C.
        random_state : int, default 0
            Seed of the bootstrap samples.
        n_jobs : int or None
            joblib workers.

        Returns
        -------
        csvm_stats.EBB
            The fitted ensemble (cached per variant, size and seed).

        Raises
        ------
        csvm_stats.exceptions.DataError
            An unknown variant.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> ensemble = res.probability_ensemble(variant="ebb", n_bootstrap=10)
        >>> type(ensemble).__name__
        'EBB'
        """
        variant = self.probability_variant if variant is None else variant
        key = (variant, n_bootstrap, random_state)
        if key not in self._ensembles:
            rows = np.concatenate([self.split.train, self.split.anchor])
            X = self.scaler.transform(self.model.exog.to_numpy()[rows])
            targets = {f"{rate}_min": p0 for rate, p0 in self.model.targets.items()} if variant not in ("ebb", "ebb-va") else {}
            ensemble = EBB(
                kernel=self.engine_fit.feature_map.kernel,
                n_bootstrap=n_bootstrap,
                variant="ebb" if variant == "ebb-va" else variant,
                calibration="venn-abers" if variant == "ebb-va" else None,
                alpha=self.model.alpha,
                bound=self.model.bound,
                n_jobs=n_jobs,
                random_state=random_state,
                progress=False,
                **targets,
            )
            self._ensembles[key] = ensemble.fit(X, self.model.y[rows])
        return self._ensembles[key]

    def predict_proba(
        self,
        newdata: Any = None,
        *,
        method: str = "venn-abers",
        interval: bool = False,
        n_bootstrap: int = 500,
        random_state: int = 0,
        n_jobs: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """P(y = positive class | x), indexed like the data.

        ``method="venn-abers"`` (default): the probability of
        :attr:`calibration`; with ``interval=True`` a DataFrame with the
        Venn-Abers interval ``p0``, ``p1`` and the point probability ``p``.
        One of p0, p1 is a calibrated probability in Venn's sense; the
        interval is not a confidence interval for the true P(y | x). On the
        held-out route ``p`` comes from the probability model beside the rule
        and need not lie in [p0, p1], nor agree with the rule's class
        (``calibration.rule`` counts how often); without a held-out sample
        (cross-fitted route) the same model's recalibration and interval are fitted on
        its out-of-fold scores, and the interval has no finite-sample guarantee.
        ``method="ebb" | "cebb1" | "cebb2"``: the paper's bootstrap ensembles
        (:meth:`probability_ensemble`; ``n_bootstrap``, ``random_state`` and
        ``n_jobs`` apply to them only); these have no interval.
        ``method="ebb-va"``: EBB calibrated by Venn-Abers on its out-of-bag
        probabilities (not in the paper), with an interval.

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns (through the formula when the
            model has one); ``None`` gives the rows the model was built on.
        method : {"venn-abers", "ebb", "cebb1", "cebb2", "ebb-va"}, default "venn-abers"
            Which probabilities.
        interval : bool, default False
            Return the interval ``p0``, ``p1`` and the point probability ``p``
            (Venn-Abers methods): the probability model's P; the Venn-Abers merge
            only for Neyman-Pearson fits and model files older than the
            probability model.
        n_bootstrap : int, default 500
            Bootstrap samples per C of the EBB ensembles.
        random_state : int, default 0
            Seed of the EBB ensembles.
        n_jobs : int or None
            joblib workers for the EBB ensembles.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            P(positive | x) per row; with ``interval=True`` the columns ``p0``, ``p1``, ``p``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            An unknown method, an interval for a method without one, or bad ``newdata``.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> p = res.predict_proba(X.head(3))
        >>> bool(((p >= 0) & (p <= 1)).all())
        True
        """
        design = self.model.exog if newdata is None else self.model.design_matrix(newdata)
        name = f"P({self.model.coding.positive!r})"
        if method == "venn-abers":
            if newdata is None:
                features, f = self.fitted_features, self._fitted_decision
            else:
                features = self._features(design.to_numpy())
                f = features @ self.engine_fit.coef + self.intercept
            p0, p1, p = self.calibration.predict(features, f)
            if interval:
                return pd.DataFrame({"p0": p0, "p1": p1, "p": p}, index=design.index)
            return pd.Series(p, index=design.index, name=name)
        if method not in PROBABILITY_METHODS:
            raise DataError(f"method must be one of {PROBABILITY_METHODS}, got {method!r}.")
        if interval and method != "ebb-va":
            raise DataError(
                f"method={method!r} gives point probabilities only; interval=True needs method='venn-abers' or 'ebb-va'."
            )
        ensemble = self.probability_ensemble(
            variant=method, n_bootstrap=n_bootstrap, random_state=random_state, n_jobs=n_jobs
        )
        Xs = self.scaler.transform(design.to_numpy())
        p = ensemble.predict_proba(Xs)[:, 1]
        if interval:
            p0, p1 = ensemble.predict_interval(Xs).T
            return pd.DataFrame({"p0": p0, "p1": p1, "p": p}, index=design.index)
        return pd.Series(p, index=design.index, name=name)

    def predict_interval(self, newdata: Any = None) -> pd.DataFrame:
        """The Venn-Abers interval ``p0 <= p1`` and the probability ``p`` of the positive class (:meth:`predict_proba`).

        Parameters
        ----------
        newdata : DataFrame, array-like or None
            Rows with the model's predictor columns (through the formula when the
            model has one); ``None`` gives the rows the model was built on.

        Returns
        -------
        pandas.DataFrame
            Columns ``p0 <= p1`` and ``p`` (the :meth:`predict_proba` value: the
            recalibrated logistic score, which may lie outside ``[p0, p1]``), one
            row per row of ``newdata``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a predictor column or has text in a numeric one.

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> list(res.predict_interval(X.head(3)).columns)
        ['p0', 'p1', 'p']
        """
        return self.predict_proba(newdata, interval=True)

    @property
    def probability_threshold(self) -> NoReturn:
        """Always a :class:`~csvm_stats.exceptions.DataError` for a CSVM: P is not a function of f(x).

        The probabilities come from a model beside the rule (both routes), so
        no threshold t on P reproduces the rule; ``calibration.rule`` says how
        the rule and P relate (how often the rule and P >= 1/2 disagree).
        """
        r = self.calibration.rule
        raise DataError(
            "the probabilities come from a model beside the rule, so the rule is not a threshold on P; "
            f"see calibration.rule (the rule differs from P >= 1/2 on {r.disagree} of {r.n} {r.sample} points)."
        )

