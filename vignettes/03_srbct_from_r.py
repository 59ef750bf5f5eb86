# %% [markdown]
# # SRBCT: R data in, a CSVM out, and back to R
#
# SRBCT (Khan et al. 2001) holds the expression of 2308 genes in 83 small
# round blue cell tumours of four kinds. It is distributed as an R data file
# by the R package plsgenomics. This vignette reads it with `r_bridge`
# (through R when R and rpy2 are present, else with the pure-Python `rdata`
# reader), fits a CSVM on the binary problem of the EBB paper (EWS, the
# largest class, negative; BL, NB and RMS positive), and writes the fit as an
# R object that R reads without Python.
#
# With 83 samples for 2308 genes this is the opposite of Wisconsin: every
# statement is made from a handful of points, and the summary says so.

# %%
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

QUICK = os.environ.get("CSVM_VIGNETTE_QUICK") == "1"
REPO = Path(__file__).resolve().parents[1]
rda = Path(os.environ.get("CSVM_SRBCT_PATH", REPO.parent / "shared" / "data" / "srbct" / "SRBCT.rda"))
if not rda.is_file():
    print(f"SRBCT.rda is not at {rda}; set CSVM_SRBCT_PATH to the file (pkg/data/SRBCT.rda of plsgenomics) to run this vignette.")
    sys.exit(0)
print(f"reading {rda.name}")

# %% [markdown]
# ## The R object
#
# `load_rdata` returns the objects of an `.rda` file by name, as R's `load()`
# would; the SRBCT object is an R list of the expression matrix `X`, the
# class codes `Y` and the gene annotations.

# %%
from r_bridge import load_rdata, srbct

raw = load_rdata(rda)["SRBCT"]
print({name: type(value).__name__ for name, value in raw.items()})
print("X:", np.shape(raw["X"]), " Y codes:", sorted(set(np.asarray(raw["Y"]).astype(int).tolist())))

# %% [markdown]
# `srbct()` turns it into one data frame: columns `X1..X2308`, the tumour
# type, plsgenomics' own train/test split (rows 1-65 / 66-83) and the binary
# label `y`.

# %%
data = srbct(path=rda)
print(pd.crosstab(data["tumour"], data["split"], margins=True))
data["class"] = np.where(data["y"] > 0, "non-EWS", "EWS")

# %% [markdown]
# ## A CSVM that must recognise 90% of the non-EWS tumours
#
# The test rows (66-83) are the held-out sample; the 65 training rows are
# split, stratified and seeded, into the training sample I and the anchor
# sample J. With 2308 genes and 65 rows the engine solves the linear CSVM
# exactly in the 65-dimensional span of the rows and maps the solution back
# to one coefficient per gene.

# %%
from csvm_stats.models.model import CSVM

genes = data.filter(regex=r"^X\d+$")
train_rows = np.flatnonzero(data["split"] == "train")
test_rows = np.flatnonzero(data["split"] == "test")
rng = np.random.default_rng(0)
anchor = np.concatenate([
    rng.choice(rows, size=len(rows) // 3, replace=False)
    for rows in (train_rows[data["y"].to_numpy()[train_rows] > 0], train_rows[data["y"].to_numpy()[train_rows] < 0])
])
samples = {"train": np.setdiff1d(train_rows, anchor), "anchor": np.sort(anchor), "holdout": test_rows}
model = CSVM(data["class"], genes, tpr_min=0.9, bound="binomial", positive="non-EWS", samples=samples)
res = model.fit(random_state=0, time_limit=30 if QUICK else 120)
summary = str(res.summary())
print(summary[: summary.index("Coefficients")])  # then 2308 gene coefficients, then the notes:
print(summary[summary.index("[1]"):])
print("largest standardised gene coefficients:")
print(res.params_standardized.drop("Intercept").abs().sort_values(ascending=False).head(8).round(4))

# %% [markdown]
# The anchor sample has too few non-EWS tumours for the binomial margin to
# stay below 1, so every one of them had to be classified correctly (the
# footer says so), and 12 held-out positives can only support a weak lower
# bound however well the classifier does. The predictions on the 18 test
# tumours:

# %%
test = data.iloc[test_rows]
print(pd.crosstab(test["tumour"].astype(str), res.predict(genes.iloc[test_rows]).rename("predicted")))

# %% [markdown]
# ## Probabilities for the test tumours
#
# The bootstrap ensemble of the same kind as the fit (CEBB1, because one class
# rate is required) is fitted on the training and anchor rows:

# %%
import matplotlib.pyplot as plt

proba = res.predict_proba(genes.iloc[test_rows], n_bootstrap=20 if QUICK else 200, random_state=0)
print(pd.DataFrame({"tumour": test["tumour"].astype(str), "P(non-EWS)": proba.round(2)}).to_string())

fig, ax = plt.subplots(figsize=(6, 3))
kinds = list(data["tumour"].cat.categories)
for k, kind in enumerate(kinds):
    values = proba[test["tumour"].to_numpy() == kind]
    ax.scatter(values, np.full(values.size, k) + np.linspace(-0.15, 0.15, values.size), s=40,
               color="tab:red" if kind == "EWS" else "tab:blue")
ax.axvline(0.5, color="0.5", ls=":")
ax.set(yticks=range(len(kinds)), yticklabels=kinds, xlim=(-0.05, 1.05), xlabel="P(non-EWS | x)",
       title="Test tumours: bootstrap probability of non-EWS")

# %% [markdown]
# ## Back to R
#
# `r_bridge.save_rds` writes the fit as an R object of class `csvm_fit`
# (coefficients, rate table, statements, summary text) that `readRDS` reads
# in R without Python; `csvm_stats.interfaces.persistence.save_model` writes the
# model file that `csvm-stats predict` uses.

# %%
from r_bridge import save_rds

with tempfile.TemporaryDirectory() as folder:
    rds = save_rds(res, Path(folder) / "srbct_fit.rds")
    print(f"wrote {rds.name} ({rds.stat().st_size} bytes)")
    if shutil.which("Rscript"):
        shown = subprocess.run(
            ["Rscript", "-e", f"fit <- readRDS('{rds}'); print(class(fit)); print(names(fit)); cat(fit$statements, sep = '\\n')"],
            capture_output=True, text=True, timeout=120,
        )
        print(shown.stdout or shown.stderr)
    else:
        print("Rscript is not installed here; in R: fit <- readRDS('srbct_fit.rds')")
