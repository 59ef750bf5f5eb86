#!/usr/bin/env bash
# Run the R-facing tests and print one line "R-tests: N passed, N failed".
#
# 1. The rpy2-based pytest files (and the other r_bridge / r_api tests, as a
#    check of the old numpy/pandas stack) inside the venv that
#    r_bridge/setup_r_env.sh makes (run that first).
# 2. The testthat suite of the R package csvmstats, installed into a
#    temporary library, with reticulate using that venv's Python.
# Exits non-zero when a test failed or nothing ran.
set -uo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CSVM_R_VENV:-$repo_root/.venv-r}"
if [[ ! -x "$venv/bin/python" ]]; then
    echo "run_r_tests: no venv at $venv; run r_bridge/setup_r_env.sh first" >&2
    exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# rpy2 is installed without its compiled API module; say so once, not per import.
export RPY2_CFFI_MODE=ABI
export RETICULATE_PYTHON="$venv/bin/python"

echo "== pytest (rpy2, venv $venv)"
(cd "$repo_root" && "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$work/pytest.xml" \
    tests/test_r_bridge_rpy2.py tests/test_r_bridge_convert.py tests/test_r_bridge_export.py tests/test_r_api.py)

echo "== testthat (R package csvmstats)"
mkdir -p "$work/library"
if ! R CMD INSTALL --no-test-load --library="$work/library" "$repo_root/r_bridge/csvmstats" >"$work/install.log" 2>&1; then
    cat "$work/install.log" >&2
    echo "R-tests: 0 passed, 1 failed"
    exit 1
fi
R_LIBS="$work/library" Rscript - "$repo_root/r_bridge/csvmstats/tests/testthat" "$work/testthat.counts" <<'EOF'
arguments <- commandArgs(trailingOnly = TRUE)
results <- as.data.frame(testthat::test_dir(arguments[1], package = "csvmstats", load_package = "installed",
                                            stop_on_failure = FALSE, reporter = "summary"))
failed <- results$failed > 0 | results$error
skipped <- results$skipped & !failed
writeLines(as.character(c(sum(!failed & !skipped), sum(failed), sum(skipped))), arguments[2])
EOF

"$venv/bin/python" - "$work/pytest.xml" "$work/testthat.counts" <<'EOF'
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

passed = failed = skipped = 0
junit = Path(sys.argv[1])
if junit.is_file():
    for suite in ElementTree.parse(junit).getroot().iter("testsuite"):
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0))
        passed += int(suite.get("tests", 0)) - bad - skip
        failed += bad
        skipped += skip
else:
    failed += 1
counts = Path(sys.argv[2])
if counts.is_file():
    r_passed, r_failed, r_skipped = (int(line) for line in counts.read_text().split())
    passed, failed, skipped = passed + r_passed, failed + r_failed, skipped + r_skipped
else:
    failed += 1
print(f"R-tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
EOF
