"""Every notebook in notebooks/ runs top to bottom (its code cells, in order, in one namespace).

Executing the cells directly keeps Jupyter out of the dependencies while still catching a
notebook that the API has left behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(notebook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(notebook.parent)
    cells = json.loads(notebook.read_text())["cells"]
    namespace: dict[str, object] = {"__name__": "__notebook__"}
    for number, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        exec(compile(source, f"{notebook.name}[cell {number}]", "exec"), namespace)
