#!/usr/bin/env bash
# Prepare everything the R-facing tests need; safe to run again (idempotent).
#
# 1. Debian's R 4.2.2 with reticulate, testthat, mlbench, MASS, broom, e1071, and knitr, rmarkdown
#    and pandoc to render the R Markdown vignette (apt, no recommends).
# 2. A separate Python venv, <repo>/.venv-r, that fits that old R stack:
#    rpy2-rinterface < 3.6.6 (the last releases that build against R 4.2)
#    and numpy < 2 (reticulate 1.28 cannot convert numpy 2 arrays), with a
#    pandas that supports that numpy, plus this project installed editable.
# The main environment (numpy 2, pandas 3) is left untouched.
#
# Environment: CSVM_R_VENV overrides the venv location.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CSVM_R_VENV:-$repo_root/.venv-r}"
python_bin="${CSVM_R_PYTHON:-python3}"

apt_packages=(r-base-core r-cran-reticulate r-cran-testthat r-cran-mlbench r-cran-mass r-cran-broom r-cran-e1071 r-cran-knitr r-cran-rmarkdown pandoc)
missing=()
for package in "${apt_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if ((${#missing[@]})); then
    echo "setup_r_env: installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

python_requirements=(
    "rpy2-rinterface>=3.6,<3.6.6"
    "rpy2-robjects>=3.6,<3.6.6"
    "numpy>=1.24,<2"
    "pandas>=2.0,<2.3"
    "rdata>=0.11"
    "pytest>=8"
)
# The stamp records what was installed; a changed requirement list or
# pyproject.toml triggers a reinstall, an unchanged one costs nothing.
stamp_content="$(printf '%s\n' "${python_requirements[@]}"; cat "$repo_root/pyproject.toml" "${BASH_SOURCE[0]}")"
stamp_file="$venv/.csvm-r-env-stamp"
if [[ -x "$venv/bin/python" && -f "$stamp_file" ]] && [[ "$(cat "$stamp_file")" == "$stamp_content" ]]; then
    echo "setup_r_env: $venv is up to date"
    exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
    echo "setup_r_env: creating $venv"
    "$python_bin" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "${python_requirements[@]}"
# Install the project against those pins: the constraint keeps pip from
# upgrading numpy/pandas to versions reticulate 1.28 cannot read.
constraints="$(mktemp)"
printf '%s\n' "numpy<2" "pandas<2.3" "rpy2-rinterface<3.6.6" "rpy2-robjects<3.6.6" >"$constraints"
install_log="$(mktemp)"
trap 'rm -f "$constraints" "$install_log"' EXIT
# setuptools' deprecation banners are noise here; show the log only on failure.
# The compat editable mode puts the work tree on sys.path, so packages and
# modules added later are importable without reinstalling.
if ! "$venv/bin/python" -m pip install -q -c "$constraints" --config-settings editable_mode=compat \
    -e "$repo_root" >"$install_log" 2>&1; then
    cat "$install_log" >&2
    exit 1
fi
RPY2_CFFI_MODE=ABI "$venv/bin/python" - <<'EOF'
from importlib.metadata import version
import rpy2.rinterface  # noqa: F401  (fails loudly if rpy2 cannot embed R)
names = ("numpy", "pandas", "rpy2-rinterface", "rpy2-robjects")
print("setup_r_env: " + ", ".join(f"{name} {version(name)}" for name in names))
EOF
printf '%s' "$stamp_content" >"$stamp_file"
