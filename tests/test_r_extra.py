"""The ``[r]`` extra and rsession's advice name the rpy2 pin an old R (Debian's 4.2) needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from r_bridge import rsession

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

REPO = Path(__file__).resolve().parents[1]


def test_the_r_extra_carries_the_rpy2_pin():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert rsession.RPY2_FOR_OLD_R in extras["r"]
    assert not any(requirement.startswith("rpy2>") or requirement == "rpy2" for requirement in extras["r"])


def test_an_rpy2_built_for_a_newer_r_gets_the_exact_pin():
    error = OSError("/usr/lib/R/lib/libR.so: undefined symbol: R_getVar")
    advice = rsession._rpy2_advice(error)
    assert "pip install 'rpy2-rinterface>=3.6,<3.6.6'" in advice
    assert "R_getVar" in advice
    assert "csvm-stats[r]" not in advice


def test_a_missing_rpy2_names_the_extra_and_its_pin():
    advice = rsession._rpy2_advice(ModuleNotFoundError("No module named 'rpy2'"))
    assert "pip install 'csvm-stats[r]'" in advice and rsession.RPY2_FOR_OLD_R in advice
