"""A fast version of benchmarks/validity.py: the statements hold against a known truth.

Two Gaussian classes give every hyperplane's true TPR in closed form. Over
``REPS`` independent data sets the held-out Clopper-Pearson statement and the
guarantee-mode statement may fail in at most a share alpha of them; the test
allows binomial noise up to the one-sided 99.9% limit, so a valid procedure
fails it with probability below 0.001 per statement. ``bound="none"`` makes
the anchor sample carry no margin at all, the hardest case for the statements.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from csvm_stats.models.model import CSVM
from csvm_stats.data.simulation import GaussianClasses

REPS = 40
ALPHA = 0.1
P0 = 0.8
POPULATION = GaussianClasses(dim=2, distance=2.0)
LIMIT = int(binom.ppf(0.999, REPS, ALPHA))


def true_tpr(res) -> float:
    w, b = res.params.to_numpy()[:-1], float(res.params.iloc[-1])
    return POPULATION.true_rates(w, b)["tpr"]


@pytest.fixture(scope="module")
def repetitions() -> list[dict[str, float]]:
    out = []
    for seed in range(REPS):
        X, y = POPULATION.sample(120, np.random.default_rng(1000 + seed))
        model = CSVM(y, X, tpr_min=P0, alpha=ALPHA, bound="none")
        plain = model.fit(random_state=seed, time_limit=30, threads=1)
        sure = model.fit(random_state=seed, guarantee=True, time_limit=30, threads=1)
        out.append(
            {
                "true": true_tpr(plain),
                "lower": plain.rates.loc["tpr", "lower"],
                "true_guarantee": true_tpr(sure),
            }
        )
    return out


def test_heldout_lower_bound_fails_at_most_alpha(repetitions):
    failures = sum(r["true"] < r["lower"] for r in repetitions)
    assert failures <= LIMIT


def test_guarantee_mode_fails_at_most_alpha(repetitions):
    failures = sum(r["true_guarantee"] < P0 for r in repetitions)
    assert failures <= LIMIT

