"""Every vignette executes at reduced size and renders to Markdown with its figures."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VIGNETTES = REPO / "vignettes"
SRBCT = Path(os.environ.get("CSVM_SRBCT_PATH", REPO.parent / "shared" / "data" / "srbct" / "SRBCT.rda"))


def _renderer():
    spec = importlib.util.spec_from_file_location("vignette_render", VIGNETTES / "render.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


render = _renderer()
#: Figures each vignette draws at reduced size.
EXPECTED_FIGURES = {
    "01_getting_started": 2, "02_probabilities": 6, "03_srbct_from_r": 1, "04_sparse_srbct": 3, "05_multiclass": 2,
    "06_choosing_a_route": 2,
}


def test_every_vignette_is_listed():
    assert {p.stem for p in render.vignette_scripts()} == set(EXPECTED_FIGURES)


@pytest.mark.parametrize("name", sorted(EXPECTED_FIGURES))
def test_vignette_executes_and_renders(name, tmp_path):
    if name in ("03_srbct_from_r", "04_sparse_srbct") and not SRBCT.is_file():
        pytest.skip(f"SRBCT.rda is absent ({SRBCT}); set CSVM_SRBCT_PATH to run this vignette")
    if name == "05_multiclass" and not all((REPO.parent / "shared" / "data" / d).is_dir() for d in ("srbct", "car")):
        pytest.skip("../shared/data (SRBCT and car) is absent; the multiclass vignette reads both from there")
    result = render.render(VIGNETTES / f"{name}.py", tmp_path, quick=True)
    assert result.completed
    text = result.document.read_text()
    assert "Traceback" not in text
    assert len(result.figures) == EXPECTED_FIGURES[name]
    for figure in result.figures:
        assert figure.stat().st_size > 5_000
        assert f"({figure.parent.name}/{figure.name})" in text


def test_renderer_splits_percent_cells():
    cells = render.parse_cells("ignored\n# %% [markdown]\n# # Title\n# text\n# %%\nx = 1\n\n# %%\nprint(x)\n")
    assert [c.kind for c in cells] == ["markdown", "code", "code"]
    assert render._markdown(cells[0].source) == "# Title\ntext"


def render_r_markdown(output_dir: Path, output_format: str, name: str = "csvmstats-intro") -> subprocess.CompletedProcess:
    """Render the R Markdown vignette ``name`` with rmarkdown (package installed into a temporary library)."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        pytest.skip("Rscript is not installed (r_bridge/setup_r_env.sh installs it)")
    check = subprocess.run([rscript, "-e", "cat(all(sapply(c('reticulate', 'rmarkdown', 'knitr'), requireNamespace, quietly = TRUE)), rmarkdown::pandoc_available())"],
                           capture_output=True, text=True, timeout=60)
    if check.stdout.strip() != "TRUE TRUE":
        pytest.skip("reticulate, rmarkdown, knitr or pandoc is missing (r_bridge/setup_r_env.sh installs them)")
    venv_python = Path(os.environ.get("CSVM_R_VENV", REPO / ".venv-r")) / "bin" / "python"
    if not venv_python.is_file():
        pytest.skip("Debian's reticulate needs the numpy<2 Python venv made by r_bridge/setup_r_env.sh; none found")
    library = output_dir / "library"
    library.mkdir(parents=True, exist_ok=True)
    install = subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", f"--library={library}",
                              str(REPO / "r_bridge" / "csvmstats")], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-2000:]
    env = {**os.environ, "R_LIBS": str(library), "RETICULATE_PYTHON": str(venv_python), "RPY2_CFFI_MODE": "ABI"}
    render = (f"rmarkdown::render('{VIGNETTES / f'{name}.Rmd'}', output_format = {output_format}, "
              f"output_dir = '{output_dir}', intermediates_dir = '{output_dir}', knit_root_dir = '{output_dir}', quiet = TRUE)")
    return subprocess.run([rscript, "-e", render], capture_output=True, text=True, timeout=900, env=env, cwd=output_dir)


@pytest.mark.r
@pytest.mark.slow
def test_r_markdown_vignette_renders(tmp_path):
    done = render_r_markdown(tmp_path, "rmarkdown::html_vignette()")
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    html = (tmp_path / "csvmstats-intro.html").read_text()
    assert "Confidence statements" in html and "<img" in html


@pytest.mark.r
@pytest.mark.slow
def test_r_session_vignette_renders(tmp_path):
    """The biostatistician's session: BreastCancer and Pima with update, subset, NA, saveRDS, broom, glm, e1071."""
    done = render_r_markdown(tmp_path, "rmarkdown::html_vignette()", "csvmstats-session")
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    html = (tmp_path / "csvmstats-session.html").read_text()
    for expected in ("With 95% confidence", "random_state", "e1071_svm", "no variance-covariance matrix"):
        assert expected in html, expected


def test_figures_left_open_before_rendering_are_not_the_vignettes(tmp_path):
    """A figure an earlier test left open is closed, not counted as the vignette's (the suite runs in one process)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.figure()
    script = tmp_path / "one_figure.py"
    script.write_text("# %%\nimport matplotlib.pyplot as plt\nplt.plot([0, 1])\n", encoding="utf-8")
    result = render.render(script, tmp_path / "out", quick=True)
    assert result.completed and len(result.figures) == 1
