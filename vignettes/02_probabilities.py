# %% [markdown]
# # Probabilities you can trust: a probability model beside the rule, Venn-Abers intervals, EBB on request
#
# An SVM gives a score, not a probability. csvm-stats gives two kinds:
#
# * **by default**, on the path most users take (`CSVM.from_formula(...,
#   tpr_min=...).fit()` with its default split into a training sample I, an
#   anchor sample J and a held-out sample H), a **probability model fitted
#   beside the rule**: penalised logistic regression on the same columns (or
#   the same kernel feature map) over all the rows, I, J and H, its penalty
#   chosen by cross-validated log loss, recalibrated on out-of-fold scores
#   by a sigmoid (or by beta calibration when Akaike's criterion prefers
#   it). With it comes an interval [p0, p1]: the inductive
#   **Venn-Abers** predictor (Vovk and Petej 2014), calibrated on H, of the
#   same regression fitted on I and J alone (the mean of its
#   cross-validation fold models, not a refit), so that neither that score
#   nor the rule's direction saw H. One of p0, p1 is a
#   calibrated probability in Venn's sense (among points given that value, the
#   share of positives equals it); [p0, p1] is **not** a confidence interval
#   for the true P(y = 1 | x);
# * **on request**, the EBB paper's bootstrap ensembles, EBB, CEBB1 and
#   CEBB2, exactly as published (`predict_proba(method="ebb")`, or the `EBB`
#   estimator).
#
# Data: Wisconsin, positive class malignant, split once into a training and a
# test part. All probabilities below are judged on the test part.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from csvm_stats import CSVM
from csvm_stats.probability.calibration import brier_scores, calibrated_svc, probability_scores
from csvm_stats.data.datasets import load_dataset
from csvm_stats.probability.ebb import EBB
from csvm_stats.reporting.plotting import plot_reliability

QUICK = os.environ.get("CSVM_VIGNETTE_QUICK") == "1"
B = 30 if QUICK else 500  # bootstrap samples per C (the paper: 500)

X, labels = load_dataset("wisconsin")
y = -labels.to_numpy()  # +1 = malignant
X_train, X_test, y_train, y_test = train_test_split(X.to_numpy(), y, test_size=0.4, stratify=y, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
print(f"training: {len(y_train)} ({int((y_train > 0).sum())} malignant); test: {len(y_test)} ({int((y_test > 0).sum())} malignant)")

# %% [markdown]
# ## The default, from a formula with a requirement
#
# A CSVM that must find 95% of the malignant tumours, fitted from a data
# frame and a formula as most users do. The summary says how the
# probabilities were made, on how many points, and how the class rule reads
# on the probability scale; its detail view (`detail=True`, printed here) adds
# how the logistic score becomes P (the recalibration and its slope).

# %%
columns = [f"x{j + 1}" for j in range(X_train.shape[1])]
train = pd.DataFrame(X_train, columns=columns).assign(malignant=(y_train > 0).astype(int))
test = pd.DataFrame(X_test, columns=columns)
res = CSVM.from_formula("malignant ~ .", train, tpr_min=0.95, bound="binomial").fit(random_state=0)
print(res.summary(detail=True).tables[0].to_string())
print(res.calibration.rule_statement("malignant"))

# %%
interval = res.predict_interval(test)
interval["called malignant"] = res.predict(test).to_numpy() == 1
print(interval.sort_values("p").iloc[::len(interval) // 12].round(3).to_string())
called, more_probable = interval["called malignant"], interval["p"] >= 0.5
print(f"test tumours called malignant with P < 1/2: {int((called & ~more_probable).sum())}; "
      f"called benign with P >= 1/2: {int((~called & more_probable).sum())} (of {len(interval)})")

# %% [markdown]
# The rule and the probability answer different questions. The rule was fitted
# to find 95% of the malignant tumours, so it calls malignant some tumours
# whose probability is below 1/2, on purpose; the probability model is fitted
# for calibration alone, so P is not a function of the rule's decision value
# and there is no single probability threshold that reproduces the rule. The
# summary counts how often the two disagree on H, and the table above on the
# test tumours. The point probability p need not lie inside [p0, p1]: the
# interval is the Venn-Abers statement about the score fitted without H,
# calibrated on H; the point probability is a smoother fit that uses every
# row. Without a requirement (`CSVMClassifier()`, or `fractions=(1, 0, 0)`)
# there is no held-out sample; the same probability model is then cross-fitted:
# its recalibration and interval are fitted on its own out-of-fold scores (no CSVM
# refit; the interval then has no finite-sample guarantee), and the summary
# counts the disagreements on every row (`benchmarks/probabilities_crossfit.py`).

# %% [markdown]
# ## Against the truth: three simulated worlds
#
# Real labels cannot tell us the true probability; simulations can. Three
# truths, as in `benchmarks/probabilities.py` (which repeats each 20 times and
# adds five more): a **logistic** truth (x ~ N(0, I5), P = sigmoid(a'x)), a
# **nearly separable** one (the same with a steep sigmoid) and a **radial**
# one (x ~ N(0, I2), P = sigmoid(2.5 (|x|^2 - 1.39)), RBF kernel). One
# repetition each, n = 300 training points: the default probabilities of
# `CSVM.from_formula("y ~ .", data, tpr_min=0.9).fit()`, the paper's EBB (all
# C values), Platt scaling of the tuned SVM fitted on the same 300 rows, and
# logistic regression (quadratic terms for the radial truth). One reliability
# diagram per truth, and the mean squared error to the true probability.

# %%
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from csvm_stats.probability.calibration import tune_svc
from csvm_stats.probability.ebb import DEFAULT_C_GRID


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


a = np.array([1.5, -1.0, 1.0, -0.5, 0.5])
truths = {
    "logistic": (5, lambda Z: sigmoid(Z @ a), "linear"),
    "nearly separable": (5, lambda Z: sigmoid(8 * Z @ (a / np.linalg.norm(a))), "linear"),
    "radial": (2, lambda Z: sigmoid(2.5 * ((Z**2).sum(axis=1) - 1.39)), "rbf"),
}
n_test = 2000 if QUICK else 20000
errors = {}
fig, axes = plt.subplots(1, 3, figsize=(16, 5))
for ax, (truth, (dim, prob, kernel)) in zip(axes, truths.items()):
    rng = np.random.default_rng(1000)
    Z_train, Z_test = rng.standard_normal((300, dim)), rng.standard_normal((n_test, dim))
    t_train, t_test = prob(Z_train), prob(Z_test)
    v_train = np.where(rng.random(300) < t_train, 1, -1)
    v_test = np.where(rng.random(n_test) < t_test, 1, -1)
    frame = pd.DataFrame(Z_train, columns=[f"z{j + 1}" for j in range(dim)]).assign(y=(v_train > 0).astype(int))
    new = pd.DataFrame(Z_test, columns=[f"z{j + 1}" for j in range(dim)])
    default = CSVM.from_formula("y ~ .", frame, tpr_min=0.9, kernel=kernel).fit(random_state=0)
    gamma = 1 / (dim * Z_train.var()) if kernel == "rbf" else "scale"
    C = tune_svc(Z_train, v_train, DEFAULT_C_GRID, kernel=kernel, gamma=gamma, folds=5)
    ebb_truth = EBB(kernel=kernel, n_bootstrap=20 if QUICK else 100, random_state=0, progress=False,
                    **({"gamma_grid": [gamma]} if kernel == "rbf" else {})).fit(Z_train, v_train)
    platt = calibrated_svc("platt", C, kernel=kernel, gamma=gamma).fit(Z_train, v_train)
    logistic = LogisticRegression(max_iter=5000)
    if kernel == "rbf":
        logistic = make_pipeline(PolynomialFeatures(2), StandardScaler(), logistic)
    logistic.fit(Z_train, v_train)
    probs = {
        "default (tpr_min=0.9)": default.predict_proba(new).to_numpy(),
        "EBB (paper)": ebb_truth.predict_proba(Z_test)[:, 1],
        "Platt (tuned SVM)": platt.predict_proba(Z_test)[:, 1],
        "logistic regression": logistic.predict_proba(Z_test)[:, 1],
    }
    errors[truth] = {m: probability_scores(v_test, p, t_test)["mse_true"] for m, p in probs.items()}
    plot_reliability(v_test, probs, ax=ax)
    ax.set_title(f"{truth} truth ({kernel} kernel)")
fig.tight_layout()
print("mean squared error to the true probability")
print(pd.DataFrame(errors).T.round(4).to_string())

# %% [markdown]
# EBB's vote shares pile up near 0 and 1 (its curve bends away from the
# diagonal at both ends): a bootstrap vote measures how unsure the fitted
# boundary is, not how noisy the labels are. The default probabilities follow
# the diagonal like Platt's; logistic regression, the right model for the
# logistic truth, is best there. The 20-repetition averages over eight truths
# and eleven data sets, and the targets they are held to, are in
# `benchmarks/results/probabilities.md`. There, on
# `CSVM.from_formula("y ~ .", data, tpr_min=0.9).fit()` with its default
# split: the default's mean squared error to the true probability was 0.11 to
# 0.97 times tuned Platt's on all eight truths (20 repetitions, 20,000 test
# points each); mean P was within 0.005 of the prevalence at 10% and 15%
# positives; its Brier score was within 1.05 times the better of Platt and
# isotonic on 9 of 11 data sets (means over 3 splits; the target is 9). The
# misses are srbct and leukemia, whose held-out samples are too small, so
# they take the cross-fitted route; there isotonic scores 0 on some of the
# 15-17 test rows, and the default is 1.84 times the better baseline on
# leukemia (1.03 times Platt's). Banknote, a miss before, is at 0.96 since
# the recalibration may bend into beta calibration, whose two tails have
# their own slopes. Building the model took 9.4% of a linear Wisconsin fit's
# CPU time and 8.7% of an RBF one's (after the first fit of a session, which
# also loads the compiled code; the target is at most 10%).

# %% [markdown]
# ## EBB, as published
#
# EBB (Ensembled Bootstrap-Based probabilities) fits the SVM on B bootstrap
# samples of the training data for each C of a grid, and estimates
#
#     P(y = +1 | x, C) = share of the B bootstrap scores of x that are >= 0,
#
# then averages over the C values weighted by how well they predict out of
# bag. The grid is the paper's C in 2^-5..2^5 (objective w'w + C sum(xi));
# the reliability of each C is its mean out-of-bag accuracy, and `rho_` are
# the weights. The default keeps every C (`eps = inf`, the paper's headline
# EBB); `eps = 0` keeps the best C only.

# %%
ebb = EBB(n_bootstrap=B, random_state=0, progress=False).fit(X_train, y_train)
weights = ebb.theta_grid_.assign(reliability=ebb.reliability_, rho=ebb.rho_)
print(weights.round(4).to_string(index=False))
p_ebb = ebb.predict_proba(X_test)[:, 1]

# %% [markdown]
# ## One instance's bootstrap scores
#
# The EBB paper's Figure 3: the histogram of one test instance's B scores
# under the chosen C. The share to the right of 0 is its probability of being
# malignant. We pick the test tumour whose probability is closest to 1/2 -
# the kind of case where a probability says more than a class.

# %%
from csvm_stats.reporting.plotting import plot_bootstrap_scores

uncertain = int(np.argmin(np.abs(p_ebb - 0.5)))
print(f"test tumour {uncertain}: P(malignant) = {p_ebb[uncertain]:.2f}, truly {'malignant' if y_test[uncertain] > 0 else 'benign'}")
plot_bootstrap_scores(ebb, X_test, uncertain)

# %% [markdown]
# Why the bootstrap and not the folds of a cross-validation, which also give
# many fits? The paper's Figure 2: the scores of the same tumour from the k
# fits of a k-fold cross-validation (the SVM with EBB's chosen C). As k grows
# the training parts share almost every point, the fits agree, and the scores
# collapse onto one value - the share of positive scores tends to 0 or 1 and
# says nothing about the uncertainty.

# %%
from sklearn.model_selection import KFold
from sklearn.svm import SVC

from csvm_stats.reporting.plotting import BootstrapScoreDisplay

chosen_C = float(ebb.theta_grid_["C"].iloc[int(np.argmax(ebb.rho_))])
fold_counts = (10, 50) if QUICK else (20, 100, 300)
fig, axes = plt.subplots(1, len(fold_counts), figsize=(5 * len(fold_counts), 4))
for ax, k in zip(axes, fold_counts):
    scores = np.array([
        SVC(kernel="linear", C=chosen_C / 2).fit(X_train[part], y_train[part]).decision_function(X_test[[uncertain]])[0]
        for part, _ in KFold(k, shuffle=True, random_state=0).split(X_train)
    ])
    BootstrapScoreDisplay(scores, 0.0, f"C = {chosen_C:g}", f"{k}-fold CV").plot(ax)
    ax.set_title(f"k = {k} folds")
fig.tight_layout()

# %% [markdown]
# With bootstrap samples instead, the histogram fills in as B grows and the
# estimate settles (the paper's Figure 3 shows B = 20, 100, 500):

# %%
sizes = (10, 30) if QUICK else (20, 100, 500)
fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4))
for ax, size in zip(axes, sizes):
    small = EBB(n_bootstrap=size, random_state=1, progress=False).fit(X_train, y_train)
    plot_bootstrap_scores(small, X_test, uncertain, ax=ax)
    ax.set_title(f"B = {size}")
fig.tight_layout()

# %% [markdown]
# ## Calibration against Platt scaling and isotonic regression
#
# Brier score = mean squared difference between the probability and the 0/1
# outcome (lower is better), overall and per class. Platt scaling is
# scikit-learn's `CalibratedClassifierCV(SVC(), ensemble=False)`, with the
# SVC's C set to the C EBB weighted most (scikit-learn's C is half ours).
# "default" is the default of the CSVM fitted above (with its TPR
# requirement), "EBB-VA" EBB calibrated by Venn-Abers on its out-of-bag
# probabilities (`EBB(calibration="venn-abers")`, not in the paper).

# %%
best_C = float(ebb.theta_grid_["C"].iloc[int(np.argmax(ebb.rho_))])
ebb_va = EBB(n_bootstrap=B, random_state=0, progress=False, calibration="venn-abers").fit(X_train, y_train)
methods = {"default": res.predict_proba(test).to_numpy(), "EBB": p_ebb, "EBB-VA": ebb_va.predict_proba(X_test)[:, 1]}
for method in ("platt", "isotonic"):
    model = calibrated_svc(method, best_C).fit(X_train, y_train)
    methods[method] = model.predict_proba(X_test)[:, 1]
table = pd.DataFrame({name: vars(brier_scores(y_test, p)) for name, p in methods.items()}).T
print(table.round(4))

# %%
from csvm_stats.reporting.plotting import plot_reliability

plot_reliability(y_test, methods, n_bins=5 if QUICK else 10)

# %% [markdown]
# Most tumours are far from the boundary, so every method puts most of its
# points near 0 or 1 (the large markers); the methods differ on the few
# points in between.
#
# ## CEBB1: probabilities that respect a required rate
#
# Suppose every malignant tumour with P(malignant) < 1/2 would be sent home.
# CEBB1 moves the score threshold to the left until at least the required
# share of the malignant training tumours gets P >= 1/2: here 99%, taken as a
# plain share as in the paper (`bound="none"`), i.e. 126 of the 127
# malignant training tumours. The paper's Figure 6: the same
# instance, its scores, and the moved threshold.

# %%
cebb1 = EBB(n_bootstrap=B, variant="cebb1", tpr_min=0.99, bound="none", random_state=0, progress=False).fit(X_train, y_train)
print(f"threshold moved from 0 to {cebb1.threshold_:.3f}; training malignant with P >= 1/2: {cebb1.training_share_:.3f}")
p_cebb1 = cebb1.predict_proba(X_test)[:, 1]
plot_bootstrap_scores(cebb1, X_test, uncertain)

# %%
def rates(p: np.ndarray) -> dict[str, float]:
    called = p >= 0.5
    return {"TPR": called[y_test > 0].mean(), "TNR": (~called)[y_test < 0].mean(), "Brier": brier_scores(y_test, p).overall}


print(pd.DataFrame({"EBB": rates(p_ebb), "CEBB1 (TPR >= 0.99)": rates(p_cebb1)}).T.round(3))

# %% [markdown]
# The higher true positive rate is paid for in true negatives and in the
# Brier score: the CEBB1 probabilities are deliberately shifted towards
# "malignant", so they are no longer calibrated - they answer a different
# question ("could this be malignant?").
#
# ## From a fitted CSVM or a scikit-learn estimator
#
# A CSVM's results give the ensemble of the same kind
# (`predict_proba(method=...)`), and `CSVMClassifier(probability="ebb" |
# "cebb1" | "cebb2")` fits one alongside the classifier. By default
# (`probability="venn-abers"`) its `predict_proba` gives the default
# probabilities above; with `probability=False` it has no `predict_proba` at all.

# %%
from csvm_stats.interfaces.sklearn import CSVMClassifier

clf = CSVMClassifier(tpr_min=0.9, bound="binomial", probability="cebb1", n_bootstrap=B, random_state=0).fit(X_train, y_train)
print("classes:", clf.classes_, "- predict_proba columns follow them")
print(np.round(clf.predict_proba(X_test[:5]), 3))
print("predict_proba by default:", hasattr(CSVMClassifier(), "predict_proba"),
      "- with probability=False:", hasattr(CSVMClassifier(probability=False), "predict_proba"))
