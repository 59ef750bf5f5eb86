"""``csvm-stats fit --method np --estimator logistic|svc|hgb``: the Neyman-Pearson route from the command line.

:func:`np_fit` is called by :func:`csvm_stats.interfaces.cli.fit_command`
with the parsed arguments: it fits
:class:`csvm_stats.models.neyman_pearson.NeymanPearson` (``--tpr-min``,
``--tnr-min`` or ``--recall-min``; ``--alpha``, ``--positive``,
``--fractions``, ``--seed``) and writes the summary (text or HTML) or a
JSON report. Options that belong to the CSVM only (``--acc-min``,
``--guarantee``, ``--bound``, ``--kernel``, ``-C``, ``--gamma``,
``--degree``, feature selection, the solver) are refused with a message,
never ignored, also when given at their default value (argparse gives
them ``None`` when absent: :mod:`csvm_stats.interfaces.cli_options`).
``--save`` writes a model file when the learner's score is
linear (``logistic``; :mod:`csvm_stats.interfaces.np_files`) and refuses the others with the reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import pandas as pd

from csvm_stats.exceptions import DataError
from csvm_stats.interfaces.cli_options import CSVM_DEFAULTS, CSVM_OPTIONAL
from csvm_stats.interfaces.np_files import np_report
from csvm_stats.models.neyman_pearson import NeymanPearson

#: The default learner of ``--method np`` (``--estimator`` absent).
DEFAULT_ESTIMATOR = "logistic"


def np_fit(args: argparse.Namespace, data: pd.DataFrame, positive: Any, recall_min: dict[Any, float] | None,
           write: Callable[[str, str | None], None]) -> int:
    """Fit the route for ``csvm-stats fit --method np`` and write its report with ``write(text, output)``."""
    given = [name for name in (*CSVM_DEFAULTS, *CSVM_OPTIONAL) if getattr(args, name) is not None]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") if name != "C" else "-C" for name in given)
        raise DataError(
            f"{flags} belong to the CSVM; the Neyman-Pearson route (--method np) takes --estimator, the required "
            "rate (--tpr-min, --tnr-min or --recall-min), --alpha, --positive, --fractions, --seed and --save."
        )
    kwargs: dict[str, Any] = {"recall_min": recall_min} if recall_min else {
        "tpr_min": args.tpr_min, "tnr_min": args.tnr_min, "positive": positive}
    estimator = DEFAULT_ESTIMATOR if args.estimator is None else args.estimator
    model = NeymanPearson.from_formula(args.formula, data, estimator, alpha=args.alpha,
                                       fractions=tuple(args.fractions), **kwargs)
    results = model.fit(random_state=args.seed)
    if args.format == "json":
        text = json.dumps(np_report(results), indent=2, allow_nan=False)
    elif args.format == "html":
        text = results.summary().as_html()
    else:
        text = str(results.summary())
    if args.save:
        results.save(args.save)  # a DataError (exit 5) with the reason for a learner that cannot be saved safely
    write(text, args.output)
    if args.save:
        print(f"Model saved to {args.save}", file=sys.stderr)
    return 0
