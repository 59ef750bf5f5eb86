# %% [markdown]
# # Getting started: a classifier that must find 90% of the malignant tumours
#
# A plain support vector machine balances its two kinds of error as the data
# happen to make it. Often one error is worse: here, calling a malignant
# tumour benign. The constrained SVM (CSVM) lets you *require* a true positive
# rate, `tpr_min`, and still maximises the margin among the classifiers that
# meet it. csvm-stats then tells you, on data the fit never saw, what can be
# said about the true rate with 95% confidence.
#
# Data: the Wisconsin breast cancer data shipped with scikit-learn (569
# tumours, 30 features). Positive class: malignant.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from csvm_stats.data.datasets import load_dataset
from csvm_stats.models.model import CSVM

QUICK = os.environ.get("CSVM_VIGNETTE_QUICK") == "1"  # smaller sizes when the test suite runs this

X, labels = load_dataset("wisconsin")
data = X.assign(diagnosis=pd.Categorical(np.where(labels > 0, "benign", "malignant")))
print(data.shape)
print(data["diagnosis"].value_counts())

# %% [markdown]
# ## Fit
#
# `CSVM.from_formula` works like statsmodels: a formula, a data frame, then
# `fit()`, which returns a results object. The rows are split (stratified,
# seeded) into three samples:
#
# * the **training** sample I (half), on which the hinge loss is minimised;
# * the **anchor** sample J (a quarter), on which the required rate is imposed;
# * the **held-out** sample H (a quarter), which the optimisation never sees
#   and on which the confidence statement is made.
#
# `bound="binomial"` turns the required 0.9 into a required count on the
# anchor sample with the exact binomial margin (the paper's Hoeffding margin,
# `bound="hoeffding"`, needs 150 anchor positives before it drops below 1).

# %%
model = CSVM.from_formula("diagnosis ~ .", data, tpr_min=0.9, bound="binomial", positive="malignant")
res = model.fit(random_state=0, time_limit=60)
print(res.summary())

# %% [markdown]
# How to read it:
#
# * **required** is the number of anchor positives that must be classified
#   correctly (52 of 53 here); **anchor (in-sample)** shows that the fit meets
#   it. That is *not* a confidence statement: the hyperplane was chosen to
#   meet it.
# * **held-out** is the rate on tumours the fit never saw, and **lower 95%**
#   the exact (Clopper-Pearson) lower confidence bound on the true rate. The
#   sentence under *Confidence statements* is the claim you can make.
#
# The same numbers are available as data:

# %%
print(res.rates[["target", "required", "anchor_correct", "anchor_n", "heldout_correct", "heldout_n", "lower", "certified"]])
print()
print(res.statements["tpr"])

# %% [markdown]
# ## ROC curve, the constrained region and the operating points
#
# The green band is where the requirement TPR >= 0.9 holds. The markers are
# the fitted classifier (threshold 0) on the anchor and on the held-out
# sample; the bar under the held-out point reaches down to its 95% lower
# bound. Wisconsin is easy, so the interesting part is the top-left corner.

# %%
from csvm_stats.reporting.plotting import plot_roc

fig, axes = plt.subplots(1, 2, figsize=(12, 5))
plot_roc(res, ax=axes[0])
plot_roc(res, ax=axes[1])
axes[1].set(xlim=(-0.01, 0.3), ylim=(0.7, 1.01), title="the same, top-left corner")
axes[1].get_legend().remove()
fig.tight_layout()

# %% [markdown]
# ## What does the requirement cost?
#
# One CSVM per required rate, all on the same three samples: as the required
# TPR rises, the true negative rate (benign tumours correctly called benign)
# falls. The dotted green line is the held-out lower bound on the TPR.

# %%
from csvm_stats.reporting.plotting import TradeoffDisplay

targets = [0.8, 0.95] if QUICK else [0.8, 0.85, 0.9, 0.93, 0.95, 0.97]
tradeoff = TradeoffDisplay.from_formula(
    "diagnosis ~ .", data, targets=targets, rate="tpr", bound="binomial", positive="malignant",
    fit_options={"time_limit": 60},
)
print(tradeoff.table.round(3).to_string(index=False))
tradeoff.plot()

# %% [markdown]
# ## A guarantee instead of a bound
#
# The held-out bound describes the classifier you got. If you need the rule
# itself to guarantee `P(true TPR >= 0.9) >= 95%`, use guarantee mode: the
# direction w is the CSVM's, and the intercept is set on the held-out
# positives by the order-statistic rule (the Neyman-Pearson umbrella
# algorithm). The summary then reports the guarantee and what it cost on the
# negatives.

# %%
guaranteed = model.fit(random_state=0, time_limit=60, guarantee=True)
print(guaranteed.statements["tpr"])
print(guaranteed.guarantee_cost)

# %% [markdown]
# ## The same estimator in scikit-learn
#
# `CSVMClassifier` follows scikit-learn's contract, so it goes into pipelines,
# grid searches and `cross_validate`. Its positive class is `classes_[1]`
# (here "malignant", the alphabetically second label). The outer
# cross-validation below measures how often the requirement holds on unseen
# folds.

# %%
from sklearn.metrics import make_scorer, recall_score
from sklearn.model_selection import StratifiedKFold, cross_validate

from csvm_stats.interfaces.sklearn import CSVMClassifier

y = data["diagnosis"].astype(str).to_numpy()
clf = CSVMClassifier(tpr_min=0.9, bound="binomial", random_state=0, time_limit=60)
scoring = {
    "TPR": make_scorer(recall_score, pos_label="malignant"),
    "TNR": make_scorer(recall_score, pos_label="benign"),
}
folds = 3 if QUICK else 5
scores = cross_validate(clf, X.to_numpy(), y, cv=StratifiedKFold(folds, shuffle=True, random_state=0), scoring=scoring)
print(pd.DataFrame({"TPR": scores["test_TPR"], "TNR": scores["test_TNR"]}).round(3).to_string())

# %% [markdown]
# ## Save, load, predict - and the command line
#
# Fitted models are saved in a documented, versioned, non-pickle format (a ZIP
# of JSON and `.npy` arrays): loading a model never runs code from the file.

# %%
import tempfile
from pathlib import Path

from csvm_stats.interfaces.persistence import load_model, save_model

with tempfile.TemporaryDirectory() as folder:
    path = save_model(res, Path(folder) / "wisconsin.csvm")
    loaded = load_model(path)
    new = data.drop(columns="diagnosis").iloc[:5]
    print(pd.DataFrame({"fitted": res.predict(new), "loaded": loaded.predict(new), "decision": loaded.decision_function(new).round(3)}))

# %% [markdown]
# The same from the shell:
#
# ```bash
# csvm-stats demo                      # this vignette's fit, in one command
# csvm-stats fit tumours.csv -f "diagnosis ~ ." --tpr-min 0.9 --bound binomial --positive malignant --save model.csvm
# csvm-stats predict model.csvm new_tumours.csv -o predictions.csv
# ```
