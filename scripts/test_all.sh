#!/usr/bin/env bash
# Install everything the project needs and run the whole test suite.
#
# 1. This package with its test and docs extras into the current Python
#    (numpy 2, pandas 3: the library's own environment), and Debian's
#    chromium, in which tests/test_docs.py opens the built documentation.
# 2. R 4.2 from Debian and a separate, constrained Python venv for the
#    R-facing tests (r_bridge/setup_r_env.sh), then those tests; they print
#    "R-tests: N passed, N failed".
# 3. The main pytest suite last (it also builds the documentation with
#    sphinx -W, tests/test_docs.py), so the output ends with pytest's summary.
# Exits non-zero if either part failed.
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
python="${PYTHON:-python3}"

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
"$python" -m pip install -q -e ".[test,docs]" || { echo "test_all: pip install failed" >&2; exit 1; }

if ! command -v chromium >/dev/null 2>&1; then
    echo "test_all: installing chromium with apt-get (the docs' browser test)"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } \
        || echo "test_all: installing chromium failed; tests/test_docs.py will skip its browser test and say so"
fi

r_status=0
if bash r_bridge/setup_r_env.sh; then
    bash r_bridge/run_r_tests.sh || r_status=$?
else
    echo "test_all: setting up R failed"
    echo "R-tests: 0 passed, 1 failed"
    r_status=1
fi

"$python" -m pytest -q -p no:cacheprovider tests
py_status=$?
if [[ $py_status -ne 0 || $r_status -ne 0 ]]; then
    exit 1
fi
