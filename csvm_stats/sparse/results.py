r"""Results of a sparse CSVM fit: the selected features, stability and honest notes.

:class:`SparseCSVMResults` is a :class:`~csvm_stats.models.results.CSVMResults`
(the same predictions, rate table and held-out statements) with the feature
selection added. The selection, like the hyperplane, was computed from the
training and anchor samples I and J only; the held-out sample H played no
part, so the decision rule is fixed given I and J and the Clopper-Pearson
statements on H hold exactly as for the full-feature CSVM (the validity
simulation in ``benchmarks/sparse_simulation.py`` checks it).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from csvm_stats.models.results import CSVMResults
from csvm_stats.optimization.solvers import SolverOptions
from csvm_stats.reporting.plain import screening_text, selection_caption
from csvm_stats.reporting.summary import Summary, build_summary

SELECTION_NOTE = (
    "The features were selected with the training and anchor samples only; the held-out sample played no "
    "part, so the held-out statements hold for the selected classifier exactly as for a full-feature CSVM."
)


class SparseCSVMResults(CSVMResults):
    """A fitted sparse CSVM (``penalty="l1"`` or ``max_features``); see :class:`~csvm_stats.CSVMResults`.

    Parameters
    ----------
    state : FittedState
        What the fit hands over, with the selection.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from csvm_stats import CSVM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
    >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
    >>> res = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2).fit(random_state=0)
    >>> len(res.selected_features) <= 2
    True
    """

    @property
    def route(self) -> str:  # type: ignore[override]
        """``"l1"`` (L1-norm CSVM) or ``"cardinality"`` (L2 CSVM with at most s features)."""
        return "cardinality" if self.engine_fit.max_features is not None else "l1"

    @cached_property
    def selected_features(self) -> pd.DataFrame:  # type: ignore[override]
        """The features with a non-zero coefficient, largest standardised coefficient first.

        Columns ``coef`` (original units) and ``coef_std`` (standardised
        columns, comparable across features).
        """
        idx = self.engine_fit.selected
        names = self.model.exog_names
        frame = pd.DataFrame(
            {"coef": self.params.to_numpy()[idx], "coef_std": self.engine_fit.coef[idx]},
            index=pd.Index([names[k] for k in idx], name="feature"),
        )
        return frame.iloc[np.argsort(-np.abs(frame["coef_std"].to_numpy()), kind="stable")]

    @property
    def n_selected(self) -> int:  # type: ignore[override]
        return int(self.engine_fit.selected.size)

    @property
    def exact(self) -> bool:  # type: ignore[override]
        """False when screening made the cardinality route a heuristic (:mod:`csvm_stats.sparse.model`)."""
        screening = self.engine_fit.screening
        return screening is None or screening.exact

    @cached_property
    def warnings(self) -> list[str]:
        notes = list(super().warnings)
        screening = self.engine_fit.screening
        if screening is not None and not screening.exact:
            notes.append(
                f"Screening kept {screening.rule}; the solution is optimal among subsets of those columns only, "
                f"a heuristic for the cardinality-constrained CSVM over all {screening.n_features} columns "
                "(pass screen= the number of columns for the exact problem)."
            )
        notes.append(SELECTION_NOTE)
        return notes

    def selection_stability(
        self,
        *,
        n_bootstrap: int = 100,
        random_state: int = 0,
        n_jobs: int | None = None,
        solver: str = "auto",
        time_limit: float | None = None,
        mip_gap: float | None = None,
        clock: str | None = None,
    ) -> pd.DataFrame:
        """How often each feature is chosen over ``n_bootstrap`` refits (:mod:`csvm_stats.sparse.stability`).

        Same route, C, required anchor counts and screening as this fit; the
        resamples come from I and J, standardised as this fit was. Each refit
        is solved with ``solver``, ``time_limit``, ``mip_gap`` and ``clock``
        as :meth:`~csvm_stats.CSVM.fit` takes them; those left
        ``None`` are the fit's own (``fit_options``), as are its threads
        and seed. A refit stopped at its limit contributes its incumbent's
        selection.

        Parameters
        ----------
        n_bootstrap : int, default 100
            Bootstrap refits.
        random_state : int, default 0
            Seed of the resamples.
        n_jobs : int or None
            joblib workers (any backend).
        solver : str, default "auto"
            Backend of the refits.
        time_limit, mip_gap : float or None
            Per-refit limit and gap (``None``: the fit's own).
        clock : {"wall", "cpu"} or None
            What ``time_limit`` counts (``None``: the fit's own).

        Returns
        -------
        pandas.DataFrame
            One row per feature: ``frequency``, ``count``, ``refits``.

        Raises
        ------
        csvm_stats.exceptions.DataError
            Invalid options, or every refit failed.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from csvm_stats import CSVM
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
        >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
        >>> res = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2).fit(random_state=0)
        >>> table = res.selection_stability(n_bootstrap=3)
        >>> "frequency" in table.columns
        True
        """
        from csvm_stats.sparse.stability import selection_frequencies

        X = self.scaler.transform(self.model.exog.to_numpy())
        y = self.model.y
        fit = self.engine_fit
        fit_kwargs = {
            "penalty": fit.penalty, "max_features": fit.max_features, "C": fit.C, "min_counts": dict(fit.min_counts),
            "screen": None if fit.screening is None else int(fit.screening.candidates.size),
            "solver": solver, "options": self._refit_options(time_limit=time_limit, mip_gap=mip_gap, clock=clock),
        }
        table = selection_frequencies(
            X[self.split.train], y[self.split.train], X[self.split.anchor], y[self.split.anchor],
            self.model.exog_names, fit_kwargs, n_bootstrap=n_bootstrap, random_state=random_state, n_jobs=n_jobs,
        )
        table["in_fit"] = table.index.isin(self.selected_features.index)
        return table

    def _refit_options(self, **given: float | str | None) -> SolverOptions:
        """The fit's solver options (:attr:`fit_options`), with the ``given`` ones that are not ``None``."""
        own = self.fit_options
        options = {"time_limit": own["time_limit"], "mip_gap": own["mip_gap"], "threads": own["threads"],
                   "seed": own["random_state"], "clock": own["clock"]}
        return SolverOptions(**{**options, **{key: value for key, value in given.items() if value is not None}})

    def summary(self, *, timing: bool = True, detail: bool = False) -> Summary:
        """The CSVM summary with the selected features (never an all-zero row) and the screening note.

        Parameters
        ----------
        timing : bool, default True
            Include the solve time.
        detail : bool, default False
            Add the internal terms (anchor counts, margin, solver).

        Returns
        -------
        csvm_stats.reporting.summary.Summary
            The summary, with the selected features.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from csvm_stats import CSVM
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(160, 12)), columns=[f"g{j}" for j in range(12)])
        >>> y = np.where(X["g0"] + X["g1"] + 0.3 * rng.normal(size=160) > 0, "case", "control")
        >>> res = CSVM(y, X, tpr_min=0.8, bound="binomial", positive="case", max_features=2).fit(random_state=0)
        >>> isinstance(res.summary(timing=False).as_text(), str)
        True
        """
        fit, p = self.engine_fit, len(self.model.exog_names)
        route = (
            f"L2 CSVM with at most {fit.max_features} features" if self.route == "cardinality"
            else "L1-norm CSVM (min ||w||_1 + C sum xi)"
        )
        table = self.selected_features.rename(columns={"coef_std": "coef (standardised)"})
        intercept = pd.DataFrame({"coef": [self.params["Intercept"]], "coef (standardised)": [self.intercept]},
                                 index=["Intercept"])
        caption = selection_caption(self.n_selected, p, f"{route}; decision f(x) >= 0 means positive")
        notes = (screening_text(fit.screening),) if self.exact else ()  # else self.warnings has the screening note
        return build_summary(
            self, timing=timing, detail=detail, coefficients=(caption, pd.concat([table, intercept])),
            selection_notes=notes, title="Sparse constrained SVM (CSVM) Results",
        )
