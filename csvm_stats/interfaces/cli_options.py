"""The options of ``csvm-stats fit`` that belong to the CSVM alone, and their defaults.

argparse gives each of them ``None`` when it is absent from the command
line. :func:`csvm_stats.interfaces.cli.fit_command` fills in
:data:`CSVM_DEFAULTS` for a CSVM fit; ``--method np``
(:func:`csvm_stats.interfaces.np_cli.np_fit`) refuses every one that is not
``None``, so an option typed at its default value (``--bound hoeffding``) is
refused as well instead of being ignored.
"""

from __future__ import annotations

from typing import Any

#: CSVM-only options of ``fit`` with the value a CSVM fit uses when the option is absent.
CSVM_DEFAULTS: dict[str, Any] = {
    "guarantee": False, "bound": "hoeffding", "kernel": "linear", "C": 1.0, "gamma": "scale", "degree": 3,
    "penalty": "l2", "solver": "auto", "time_limit": 300.0,
}
#: CSVM-only options that are ``None`` in the model too when absent.
CSVM_OPTIONAL: tuple[str, ...] = ("acc_min", "max_features", "screen")
