"""``python -m csvm_stats`` runs the ``csvm-stats`` command line."""

import sys

from csvm_stats.interfaces.cli import main

sys.exit(main())
