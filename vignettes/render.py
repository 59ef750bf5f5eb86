"""Execute a vignette script and write it as Markdown with its printed output and figures.

A vignette is a Python script in jupytext's "percent" format: cells start
with ``# %%`` (code) or ``# %% [markdown]`` (text, each line starting with
``# ``). The renderer runs the code cells in order in one namespace, with
matplotlib's Agg backend; after each cell it writes the figures the cell left
open as ``<name>_files/fig-<k>.png`` and closes them. The document
``<name>.md`` holds the text, the code, its printed output (with the
warnings it raised, each once) and the images.

A vignette that cannot run here (data absent) prints why and calls
``sys.exit(0)``; the document then ends with that message.

Usage::

    python vignettes/render.py vignettes/01_getting_started.py [--out vignettes/rendered] [--quick]
    python vignettes/render.py --all

``--quick`` sets ``CSVM_VIGNETTE_QUICK=1``, which the vignettes read to use
smaller sizes (the test suite renders every vignette that way).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUT = HERE / "rendered"
QUICK_VARIABLE = "CSVM_VIGNETTE_QUICK"
_CELL = re.compile(r"^# %%(?P<kind> \[markdown\])?.*$")


@dataclass(frozen=True)
class Cell:
    kind: str  # "code" or "markdown"
    source: str


@dataclass(frozen=True)
class Rendered:
    """What a rendering produced: the document, its figures, and whether the vignette ran to its end."""

    document: Path
    figures: tuple[Path, ...]
    completed: bool
    seconds: float


def parse_cells(text: str) -> list[Cell]:
    """Split a percent-format script into cells (text before the first marker is dropped)."""
    cells: list[Cell] = []
    kind, lines = None, []
    for line in text.splitlines():
        match = _CELL.match(line)
        if match:
            if kind is not None:
                cells.append(Cell(kind, "\n".join(lines).strip("\n")))
            kind, lines = ("markdown" if match.group("kind") else "code"), []
        elif kind is not None:
            lines.append(line)
    if kind is not None:
        cells.append(Cell(kind, "\n".join(lines).strip("\n")))
    return [c for c in cells if c.source.strip()]


def _markdown(source: str) -> str:
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in source.splitlines())


def render(script: Path, out_dir: Path = DEFAULT_OUT, *, quick: bool = False) -> Rendered:
    """Run ``script`` cell by cell and write ``out_dir/<name>.md`` with figures in ``<name>_files/``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    script = Path(script).resolve()
    name = script.stem
    figure_dir = out_dir / f"{name}_files"
    figure_dir.mkdir(parents=True, exist_ok=True)
    for old in figure_dir.glob("fig-*.png"):
        old.unlink()
    plt.close("all")  # figures left open by the caller (e.g. an earlier test in the process) are not the vignette's
    previous = os.environ.get(QUICK_VARIABLE)
    os.environ[QUICK_VARIABLE] = "1" if quick else "0"
    sys.path.insert(0, str(REPO))
    namespace: dict[str, object] = {"__name__": "__main__", "__file__": str(script)}
    parts: list[str] = []
    figures: list[Path] = []
    completed = True
    started = time.perf_counter()
    try:
        for index, cell in enumerate(parse_cells(script.read_text(encoding="utf-8"))):
            if cell.kind == "markdown":
                parts.append(_markdown(cell.source))
                continue
            parts.append(f"```python\n{cell.source}\n```")
            buffer = io.StringIO()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("default")
                try:
                    with contextlib.redirect_stdout(buffer):
                        exec(compile(cell.source, f"{script.name} [cell {index}]", "exec"), namespace)
                except SystemExit as stop:
                    if stop.code not in (None, 0):
                        raise
                    completed = False
            notes = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
            output = "\n".join([buffer.getvalue().rstrip(), *notes]).strip("\n")
            if output:
                parts.append(f"```text\n{output}\n```")
            for number in plt.get_fignums():
                path = figure_dir / f"fig-{len(figures) + 1}.png"
                plt.figure(number).savefig(path, dpi=90, bbox_inches="tight")
                figures.append(path)
                parts.append(f"![figure {len(figures)}]({figure_dir.name}/{path.name})")
            plt.close("all")
            if not completed:
                parts.append("*The vignette stopped here (see the message above).*")
                break
    finally:
        sys.path.remove(str(REPO))
        if previous is None:
            os.environ.pop(QUICK_VARIABLE, None)
        else:
            os.environ[QUICK_VARIABLE] = previous
    seconds = time.perf_counter() - started
    mode = "reduced size (CSVM_VIGNETTE_QUICK=1)" if quick else "full size"
    parts.append(
        f"---\n*Rendered from `vignettes/{script.name}` by `python vignettes/render.py` at {mode}; "
        f"the code ran in {seconds:.0f} s.*"
    )
    document = out_dir / f"{name}.md"
    document.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return Rendered(document, tuple(figures), completed, seconds)


def vignette_scripts() -> list[Path]:
    """The vignette scripts of this folder, in order (``NN_name.py``)."""
    return sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", type=Path, help="vignette scripts (default with --all: every one)")
    parser.add_argument("--all", action="store_true", help="render every vignette of this folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder ({DEFAULT_OUT.relative_to(REPO)})")
    parser.add_argument("--quick", action="store_true", help="reduced sizes, as in the test suite")
    args = parser.parse_args(argv)
    scripts = vignette_scripts() if args.all else args.scripts
    if not scripts:
        parser.error("name vignette scripts or use --all")
    for script in scripts:
        result = render(script, args.out, quick=args.quick)
        status = "complete" if result.completed else "stopped early"
        print(f"{script.name}: {result.document} ({len(result.figures)} figures, {result.seconds:.0f} s, {status})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
