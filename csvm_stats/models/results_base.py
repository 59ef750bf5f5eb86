r"""What every fitted CSVM (two classes, several classes, sparse) answers the same way.

:class:`FitResults` is the shared base of
:class:`~csvm_stats.models.results.CSVMResults` (and its sparse subclass) and
:class:`~csvm_stats.multiclass.results.MulticlassResults`, as statsmodels'
``DiscreteResults`` is of ``BinaryResults`` and ``MultinomialResults``. It
owns the names a user types whatever the model form:

* :meth:`FitResults.confusion_matrix` ``(sample)``: counts on the training,
  requirement (anchor) or held-out sample, rows the true class, columns the
  predicted class, both labelled with the class labels in their own dtype;
* :attr:`FitResults.sample_roles`: a Series indexed like the data saying
  which rows were ``"training"``, ``"anchor"`` (the requirement sample) and
  ``"held-out"`` (``"unused"`` for rows an explicit ``samples=`` left out);
* :attr:`FitResults.requirements`: one row per requirement, keyed by the
  class label it is about (``"all points"`` for an accuracy requirement);
* :data:`RATE_COLUMNS`: the columns every ``rates`` table has;
* ``selected_features``, ``n_selected``, ``exact``, ``route``: ``None`` for a
  fit without feature selection, filled in by the forms that select.

A subclass provides ``model`` (with ``y`` as class codes and ``coding``),
``split``, ``adjusted``, :attr:`classes` and :meth:`_true_and_predicted`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from csvm_stats.inference.bounds import clopper_pearson_interval

#: The three samples of a fit, by the names ``confusion_matrix`` takes.
SAMPLES: tuple[str, ...] = ("train", "anchor", "holdout")
#: Other spellings a user may type for a sample.
SAMPLE_ALIASES = {"training": "train", "requirement": "anchor", "held-out": "holdout", "heldout": "holdout"}
#: The value of :attr:`FitResults.sample_roles` for each sample.
ROLES = {"train": "training", "anchor": "anchor", "holdout": "held-out"}
#: A row of the data in no sample (an explicit ``samples=`` may leave rows out).
UNUSED = "unused"
#: What each sample is, in one line (the summary's "Samples" section).
ROLE_TEXT = {
    "train": "fits the rule",
    "anchor": "the rule was required to meet the requirements on these rows, so their rates are in-sample, "
              "not evidence about new data",
    "holdout": "never used to fit the rule: every confidence statement comes from these rows",
}
#: What the held-out sample is in guarantee mode (``fit(guarantee=True)``), where its rows of the guaranteed
#: class(es) set the intercept (two classes) or the offsets (several classes).
GUARANTEE_HOLDOUT_TEXT = {
    "binary": "its {units} set the intercept (guarantee mode), so the {rate} they certify holds by construction "
              "(order statistic), and the accuracy, balanced accuracy, PPV and NPV get no interval; the other "
              "class's rows were not used to fit the rule and give its interval",
    "multiclass": "its rows of the guaranteed class(es) set the offsets (guarantee mode), so the recalls they "
                  "certify hold by construction (order statistic), and the precision (PPV), accuracy and balanced "
                  "accuracy get no interval; the other classes' rows were not used to fit the rule and give their "
                  "recall bounds",
}
#: Columns of every fit's ``rates`` table (two classes: one row per rate; several: one per class).
RATE_COLUMNS: tuple[str, ...] = (
    "target", "adjusted", "bound", "required", "anchor_n", "anchor_correct", "anchor_rate", "met",
    "heldout_n", "heldout_correct", "heldout_rate", "lower", "upper", "joint_lower", "method", "certified",
)


def sample_name(sample: str) -> str:
    """``"train"``, ``"anchor"`` or ``"holdout"`` for ``sample`` or one of its aliases; else a ValueError."""
    name = SAMPLE_ALIASES.get(sample, sample) if isinstance(sample, str) else sample
    if name not in SAMPLES:
        raise ValueError(
            f"sample must be one of {SAMPLES} (or {sorted(SAMPLE_ALIASES)}), got {sample!r}."
        )
    return name


#: The ``method`` of a predictive value without interval because the held-out sample set the rule (guarantee mode).
NOT_INDEPENDENT_PV = "none (H set the rule)"


def predictive_rows(matrix: np.ndarray, alpha: float, independent: bool = True) -> list[dict[str, Any]]:
    r"""Per class k of a held-out confusion matrix (rows true, columns predicted): the predictive value
    :math:`P(\text{true } k \mid \text{called } k)` = ``matrix[k, k] / matrix[:, k].sum()`` with its exact two-sided
    (1 - alpha) Clopper-Pearson interval, and the class's held-out ``prevalence``.

    The calls of class k are independent Bernoulli trials given the rule, so the interval is exact; it is
    about a population with the held-out sample's class mix. ``independent=False`` (guarantee mode: the
    held-out rows set the rule) gives no interval.
    """
    total = int(matrix.sum())
    rows = []
    for k in range(matrix.shape[0]):
        n, correct = int(matrix[:, k].sum()), int(matrix[k, k])
        if not independent:
            lower, upper, method = np.nan, np.nan, NOT_INDEPENDENT_PV
        elif n == 0:
            lower, upper, method = np.nan, np.nan, "none (no such calls on held-out)"
        else:
            (lower, upper), method = clopper_pearson_interval(correct, n, alpha), "clopper-pearson 2-sided"
        rows.append({"heldout_n": n, "heldout_correct": correct, "heldout_rate": correct / n if n else np.nan,
                     "lower": lower, "upper": upper, "method": method,
                     "prevalence": matrix[k].sum() / total if total else np.nan})
    return rows


class FitResults:
    """The base every CSVM results object shares (module docstring).

    ``confusion_matrix(sample)``, ``sample_roles``, ``requirements``,
    ``min_counts``, ``classes``, ``predictive_values`` and the selection
    attributes have the same names and shapes on
    :class:`~csvm_stats.models.results.CSVMResults`,
    :class:`~csvm_stats.sparse.results.SparseCSVMResults` and
    :class:`~csvm_stats.multiclass.results.MulticlassResults`.

    Examples
    --------
    >>> from csvm_stats import CSVM
    >>> from csvm_stats.data.datasets import load_dataset
    >>> X, y = load_dataset("wisconsin")
    >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
    >>> res.sample_roles.value_counts().sort_index().to_dict()
    {'anchor': 142, 'held-out': 142, 'training': 285}
    >>> res.requirements.index.tolist()
    [1]
    """

    model: Any
    split: Any
    adjusted: dict[Any, Any]

    # ------------------------------------------------------------------ what subclasses give
    @property
    def classes(self) -> list[Any]:
        """The class labels in their own dtype, in the order of the confusion matrix."""
        raise NotImplementedError

    def _true_and_predicted(self, sample: str) -> tuple[np.ndarray, np.ndarray]:
        """Positions in :attr:`classes` of the true and the predicted class of ``sample``'s rows."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared
    def confusion_matrix(self, sample: str = "holdout") -> pd.DataFrame:
        """Counts on ``sample`` (``"train"``, ``"anchor"``, ``"holdout"``): rows the true, columns the predicted class.

        Both axes are labelled with the class labels in their own dtype
        (axis names ``true`` and ``predicted``).

        Parameters
        ----------
        sample : str, default "holdout"
            ``"train"``, ``"anchor"`` or ``"holdout"`` (also ``"training"``,
            ``"requirement"``, ``"held-out"``).

        Returns
        -------
        pandas.DataFrame
            K x K counts (binary: the positive class first).

        Examples
        --------
        >>> from csvm_stats import CSVM
        >>> from csvm_stats.data.datasets import load_dataset
        >>> X, y = load_dataset("wisconsin")
        >>> res = CSVM(y, X, tpr_min=0.9, bound="binomial").fit(random_state=0)
        >>> int(res.confusion_matrix("held-out").to_numpy().sum())
        142
        """
        true, predicted = self._true_and_predicted(sample_name(sample))
        K = len(self.classes)
        counts = np.zeros((K, K), dtype=int)
        np.add.at(counts, (true, predicted), 1)
        labels = self.classes
        return pd.DataFrame(counts, index=pd.Index(labels, name="true"), columns=pd.Index(labels, name="predicted"))

    @property
    def sample_roles(self) -> pd.Series:
        """Which rows were training, anchor (requirement sample) or held-out; indexed like the data.

        Values ``"training"``, ``"anchor"``, ``"held-out"``, and ``"unused"``
        for a row in no sample (possible with an explicit ``samples=``).
        """
        roles = np.full(len(self.model.y), UNUSED, dtype=object)
        for name in SAMPLES:
            roles[getattr(self.split, name)] = ROLES[name]
        return pd.Series(roles, index=self.model.exog.index, name="sample", dtype=object)

    def _requirement_rows(self) -> list[tuple[Any, str, Any]]:
        """(key, what, adjusted target) per requirement; the subclass names its keys."""
        raise NotImplementedError

    @property
    def requirements(self) -> pd.DataFrame:
        """One row per requirement, indexed by the class label it is about (``"all points"`` for accuracy).

        Columns: ``rate`` (what is required, in words), ``target`` (the
        required rate), ``anchor_n`` (the requirement sample's points it is
        counted on), ``required`` (how many of them the rule had to get
        right, with the margin), ``adjusted`` (``required / anchor_n``) and
        ``capped`` (the target needed more points than there are).
        """
        rows = {
            key: {"rate": what, "target": adj.target, "anchor_n": adj.n, "required": adj.count,
                  "adjusted": adj.adjusted, "capped": bool(adj.capped)}
            for key, what, adj in self._requirement_rows()
        }
        columns = ["rate", "target", "anchor_n", "required", "adjusted", "capped"]
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns) if rows else pd.DataFrame(columns=columns)
        frame.index.name = "requirement"
        return frame

    @property
    def min_counts(self) -> dict[Any, int]:
        """The required correct counts on the requirement sample, keyed as :attr:`requirements`."""
        return {key: int(row["required"]) for key, row in self.requirements.iterrows()}

    # feature selection: None unless the form selected (sparse results override)
    selected_features: pd.DataFrame | None = None
    n_selected: int | None = None
    exact: bool | None = None
    route: str | None = None
