"""Every notebook in notebooks/ runs top to bottom (its code cells, in order, in one namespace).

Executing the cells directly keeps Jupyter out of the dependencies while still catching a
notebook that the API has left behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import mas_eval

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _quickstart(namespace: dict[str, object]) -> None:
    ds, scores, crisis = namespace["ds"], namespace["scores"], namespace["crisis"]
    assert isinstance(scores, mas_eval.Scores) and scores.ran == ["decision"]
    assert scores.runs.height == ds.summary().filter(pl.col("table") == "runs")["rows"].item()
    assert namespace["headline"]["system"].to_list() == ["mas", "single"]
    assert (crisis.preset, crisis.params["gt_boost"], crisis.params["er"]) == (
        "crisis-mas-poc",
        None,
        "weighted_average",
    )


#: What each notebook must have computed, checked on its namespace after the last cell.
CHECKS = {"quickstart.ipynb": _quickstart}


def test_there_are_notebooks_and_each_is_checked() -> None:
    assert NOTEBOOKS
    assert {path.name for path in NOTEBOOKS} == set(CHECKS)


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
    CHECKS[notebook.name](namespace)
