"""R data files are data: the pure-Python reader by default, R's load() refused on R < 4.4.0 (CVE-2024-27322)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from csvm_stats.exceptions import DataError
from r_bridge import load_rdata, load_rds, rsession, srbct
from r_bridge.datasets import R_FIXED_VERSION

PROMISE = Path(__file__).parent / "test_r_bridge_data" / "promise.RData"
MARKER = "csvm-stats-cve-marker"


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch) -> Path:
    """Run in an empty folder, where the crafted file's payload would create MARKER."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def no_r_call(monkeypatch):
    """Any call into R fails the test: the refusal must come before R is asked to read the file."""

    def forbidden(*args, **kwargs):
        raise AssertionError("R was asked to read the file")

    monkeypatch.setattr(rsession, "r_function", forbidden)


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript is not installed")
def test_the_fixture_really_runs_code_when_r_loads_it(in_tmp):
    """The crafted file is a real exploit on this R (or harmless on a fixed one)."""
    code = f'e <- new.env(); load("{PROMISE}", envir = e); invisible(get("p", envir = e))'
    subprocess.run(["Rscript", "-e", code], cwd=in_tmp, capture_output=True, timeout=120, check=False)
    version = subprocess.run(
        ["Rscript", "-e", "cat(as.character(getRversion() < '4.4.0'))"], capture_output=True, text=True, timeout=120
    ).stdout
    if version.strip() == "TRUE":
        assert (in_tmp / MARKER).exists()


@pytest.mark.filterwarnings("ignore:Unknown file type", "ignore:Wrong extension")
@pytest.mark.parametrize("engine", ["python", "auto", None])
def test_the_default_reader_refuses_the_crafted_file_and_runs_nothing(in_tmp, no_r_call, engine):
    kwargs = {} if engine is None else {"engine": engine}
    with pytest.raises(DataError, match="not a readable R data file"):
        load_rdata(PROMISE, **kwargs)
    assert not (in_tmp / MARKER).exists()


@pytest.mark.filterwarnings("ignore:Unknown file type", "ignore:Wrong extension")
def test_srbct_reads_its_file_with_the_python_reader(in_tmp, no_r_call, monkeypatch):
    monkeypatch.setattr(rsession, "r_available", lambda: True)  # even when R is there
    monkeypatch.setattr(rsession, "has_r_package", lambda name: False)
    with pytest.raises(DataError, match="not a readable R data file"):
        srbct(PROMISE)
    assert not (in_tmp / MARKER).exists()


@pytest.mark.parametrize("reader", [load_rdata, load_rds])
def test_the_r_engine_is_refused_before_r_4_4_0_naming_the_cve_and_the_opt_in(in_tmp, no_r_call, monkeypatch, reader):
    monkeypatch.setattr(rsession, "r_version", lambda: (4, 2, 2))
    with pytest.raises(DataError, match="CVE-2024-27322") as caught:
        reader(PROMISE, engine="r")
    message = str(caught.value)
    assert "R 4.2.2" in message and "trusted=True" in message and "engine='python'" in message
    assert not (in_tmp / MARKER).exists()


def test_the_r_engine_is_allowed_from_r_4_4_0_and_for_a_trusted_file(monkeypatch):
    from r_bridge.datasets import check_r_engine

    monkeypatch.setattr(rsession, "r_version", lambda: R_FIXED_VERSION)
    check_r_engine(PROMISE, trusted=False)
    monkeypatch.setattr(rsession, "r_version", lambda: (4, 3, 3))
    check_r_engine(PROMISE, trusted=True)
    with pytest.raises(DataError, match="CVE-2024-27322"):
        check_r_engine(PROMISE, trusted=False)


def test_a_directory_is_not_an_r_data_file(tmp_path):
    with pytest.raises(DataError, match="is a directory"):
        load_rdata(tmp_path)
