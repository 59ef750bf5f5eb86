"""A model read from a file: :class:`SavedModel` predicts as the fit did and carries its report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.optimization.kernels import FeatureMap
from csvm_stats.preprocessing.design import LabelCoding, Standardizer
from csvm_stats.preprocessing.validation import check_feature_table, check_unique_columns
from csvm_stats.probability.score_model import ProbabilityModel
from csvm_stats.probability.venn_abers import VennAbers, merge

if TYPE_CHECKING:
    from csvm_stats.preprocessing.formula import FormulaDesign

@dataclass(frozen=True)
class SavedModel:
    """A CSVM loaded from a model file: it predicts, and it carries the fit's report.

    ``decision_function`` and ``predict`` take a DataFrame (through the
    formula when the model had one; else by the design column names) or, for
    a model fitted on arrays, an (n, p) array.

    Parameters
    ----------
    columns : tuple of str
        The design column names.
    coding : LabelCoding
        The labels and the positive class.
    scaler : Standardizer
        The column centring and scaling of the fit.
    feature_map : FeatureMap
        The kernel's feature map (identity for the linear kernel).
    coef : numpy.ndarray
        Coefficients on the feature map.
    intercept : float
        The intercept (after guarantee mode if that was used).
    formula : FormulaDesign or None
        The checked formula, rebuilt from column look-ups.
    report : dict
        The fit's report (summary text, rates, statements, seed, ...).
    library_version : str
        The csvm-stats that wrote the file.
    calibration : VennAbers or None
        The Venn-Abers predictor of the fit.
    calibration_method : str or None
        ``"held-out"`` or ``"cross-fitted"``.
    probability_model : ProbabilityModel or None
        The logistic score and its recalibration, Platt's sigmoid or beta calibration
        (``csvm_stats.probability.score_model.ProbabilityModel``) that give
        the point probabilities (both routes); ``None`` in files written before
        a route used it (the Venn-Abers merge of the decision function is used then).

    Examples
    --------
    >>> import os, tempfile
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> from csvm_stats.interfaces.persistence import load_model, save_model
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
    >>> saved = load_model(path)
    >>> saved.random_state
    0
    """

    columns: tuple[str, ...]
    coding: LabelCoding
    scaler: Standardizer
    feature_map: FeatureMap
    coef: np.ndarray
    intercept: float
    formula: FormulaDesign | None
    report: dict[str, Any]
    library_version: str
    calibration: VennAbers | None = None
    calibration_method: str | None = None
    probability_model: ProbabilityModel | None = None

    def design_matrix(self, newdata: Any) -> pd.DataFrame:
        """New data as the model's design columns, index kept; missing columns are an error.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.

        Returns
        -------
        pandas.DataFrame
            The design columns, index kept.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> saved.design_matrix(X.head(2)).shape
        (2, 30)
        """
        if self.formula is not None:
            design = self.formula.transform(newdata)
            if tuple(map(str, design.columns)) != self.columns:
                raise DataError(
                    f"the new data give design columns {list(map(str, design.columns))}, but the model was fitted "
                    f"on {list(self.columns)}; check the factor columns' levels."
                )
            return design
        if isinstance(newdata, pd.DataFrame):
            check_unique_columns(newdata, "the new data")
            missing = [c for c in self.columns if c not in newdata.columns]
            if missing:
                raise DataError(f"the new data lack the column(s) {missing} the model was fitted on.")
            frame = newdata[list(self.columns)]
        else:
            check_feature_table(newdata, "the new data")
            values = np.asarray(newdata, dtype=float)
            if values.ndim != 2 or values.shape[1] != len(self.columns):
                raise DataError(f"the new data must have {len(self.columns)} columns, got shape {values.shape}.")
            frame = pd.DataFrame(values, columns=list(self.columns))
        non_numeric = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
        if non_numeric:
            raise DataError(f"the column(s) {non_numeric} must be numeric.")
        frame = frame.astype(float)
        if not np.isfinite(frame.to_numpy()).all():
            raise DataError("the new data have missing or infinite values; remove or impute them first.")
        return frame

    def decision_function(self, newdata: Any) -> pd.Series:
        """f(x) (positive class when >= 0), indexed like the data.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.

        Returns
        -------
        pandas.Series
            f(x) per row.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> bool((saved.decision_function(X) == res.decision_function(X)).all())
        True
        """
        design = self.design_matrix(newdata)
        phi = self.feature_map.transform(self.scaler.transform(design.to_numpy()))
        return pd.Series(phi @ self.coef + self.intercept, index=design.index, name="decision")

    def predict(self, newdata: Any) -> pd.Series:
        """Predicted labels in the original coding, indexed like the data.

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.

        Returns
        -------
        pandas.Series
            Predicted labels, indexed like the data.

        Raises
        ------
        csvm_stats.exceptions.DataError
            ``newdata`` lacks a column or has text in a numeric one.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> saved.predict(X.head(2)).shape
        (2,)
        """
        decision = self.decision_function(newdata)
        return self.coding.decode(decision.to_numpy(), index=decision.index)

    def predict_proba(self, newdata: Any, *, interval: bool = False) -> pd.Series | pd.DataFrame:
        """Venn-Abers P(positive | x) as the fit gave it (``interval=True``: columns p0, p1, p).

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns (through the formula when the
            model had one); an (n, p) array for a model fitted on arrays.
        interval : bool, default False
            Return the columns ``p0``, ``p1`` and ``p``.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            P(positive | x) per row, or the interval and the point probability
            (the probability model's P; the Venn-Abers merge only for
            Neyman-Pearson fits and model files older than the probability model).

        Raises
        ------
        csvm_stats.exceptions.DataError
            Bad ``newdata``, or a file saved without a calibration.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> path = save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm"))
        >>> saved = load_model(path)
        >>> list(saved.predict_proba(X.head(2), interval=True).columns)
        ['p0', 'p1', 'p']
        """
        if self.calibration is None:
            raise DataError(
                "this model file holds no probability calibration (written before calibrations were saved, or "
                "fitted on too few points for one); refit and save the model again to get probabilities."
            )
        design = self.design_matrix(newdata)
        phi = self.feature_map.transform(self.scaler.transform(design.to_numpy()))
        if self.probability_model is None:  # a file from before its route used the probability model
            p0, p1 = self.calibration.interval(phi @ self.coef + self.intercept)
            p = merge(p0, p1)
        else:
            p0, p1 = self.calibration.interval(self.probability_model.interval_score(phi))
            p = self.probability_model.predict(phi)
        if interval:
            return pd.DataFrame({"p0": p0, "p1": p1, "p": p}, index=design.index)
        return pd.Series(p, index=design.index, name=f"P({self.coding.positive!r})")

    def predict_interval(self, newdata: Any) -> pd.DataFrame:
        """The Venn-Abers interval and the point probability, as the fit's ``predict_interval``.

        ``predict_proba(newdata, interval=True)``: columns ``p0``, ``p1`` and ``p``
        (for several classes, a ``(p0|p1|p, class)`` column each).

        Parameters
        ----------
        newdata : DataFrame or array-like
            Rows with the model's predictor columns.

        Returns
        -------
        pandas.DataFrame
            One row per row of ``newdata``.

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> saved = load_model(save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm")))
        >>> list(saved.predict_interval(X.head(3)).columns)
        ['p0', 'p1', 'p']
        """
        return self.predict_proba(newdata, interval=True)

    def summary(self) -> str:
        """The fit's summary as printed when it was saved (``summary_text``; ``print(saved.summary())``).

        Returns
        -------
        str
            The text summary (a loaded model keeps its text, not the summary object).

        Examples
        --------
        >>> import os, tempfile
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> from csvm_stats.interfaces.persistence import load_model, save_model
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> saved = load_model(save_model(res, os.path.join(tempfile.mkdtemp(), "model.csvm")))
        >>> saved.summary() == str(res.summary())
        True
        """
        return self.summary_text

    @property
    def params(self) -> pd.Series | pd.DataFrame | None:
        """The fit's coefficients (as ``CSVMResults.params``; one column per class for several classes).

        ``None`` in files written before the report kept them.
        """
        params = self.report.get("params")
        if params is None:
            return None
        if params and all(isinstance(v, dict) for v in params.values()):
            return pd.DataFrame(params)
        return pd.Series(params, name="coef", dtype=float)

    @property
    def summary_text(self) -> str:
        """The summary of the fit, as printed when it was saved."""
        return self.report["summary_text"]

    @property
    def rates(self) -> pd.DataFrame:
        """The rate table of the fit (as ``CSVMResults.rates``)."""
        return pd.DataFrame.from_dict(self.report["rates"], orient="index")

    @property
    def statements(self) -> pd.Series:
        """The confidence statements of the fit."""
        return pd.Series(self.report["statements"], name="statement")

    @property
    def selected_features(self) -> pd.Series | None:
        """A sparse CSVM's selected features and coefficients (original units); ``None`` otherwise."""
        selection = self.report.get("selection")
        if selection is None:
            return None
        return pd.Series(selection["features"], name="coef", dtype=float)

    @property
    def random_state(self) -> int | None:
        """The seed of the fit (pass it to ``fit`` to repeat it); ``None`` for files written before it was kept."""
        return self.report.get("random_state")

    @property
    def sample_roles(self) -> pd.Series | None:
        """Each fitted row's role (``CSVMResults.sample_roles``, row labels as text); ``None`` in older files."""
        roles = self.report.get("sample_roles")
        return None if roles is None else pd.Series(roles["roles"], index=roles["rows"], name="sample", dtype=object)
