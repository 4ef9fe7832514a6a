"""plots.item_scores: an answer-level metric per task and system."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mas_eval import plots
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.scoring.scores import Scores
from tests.plots.test_plots import by_gid, colour_of, legend_texts

TASKS = ["diagnostic_reasoning", "clinical_summarization", "patient_communication"]


def _items(n: int = 60, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "run_id": [f"r{i % 4}" for i in range(n)],
            "system": ["mas", "single"] * (n // 2),
            "task": [
                ["diagnostic_reasoning", "clinical_summarization", "patient_communication"][i % 3] for i in range(n)
            ],
            "item_id": [f"q{i // 2}" for i in range(n)],
            "clinical_accuracy": rng.uniform(0, 1, n),
        }
    )


def test_one_box_per_system_and_task_in_the_system_colours() -> None:
    items = _items()
    fig = plots.item_scores(items)
    colours = plots.system_colours(["mas", "single"])
    for system in ("mas", "single"):
        boxes = by_gid(fig, f"box:{system}")
        assert len(boxes) == items["task"].n_unique()
        assert {colour_of(b) for b in boxes} == {colours[system].lower()}
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == sorted(items["task"].unique().to_list())
    assert legend_texts(fig)[:2] == ["mas", "single"]


def test_the_subsample_is_counted_in_answers() -> None:
    fig = plots.item_scores(_items(300), max_points=100)
    assert fig.axes[0].get_legend().get_title().get_text() == "100 of 300 answers shown as points"


def test_scores_are_read_through_their_items_table() -> None:
    items = _items()
    scores = Scores(tables={"runs": items.select("run_id", "system").unique(), "items": items})
    assert len(by_gid(plots.item_scores(scores), "box:mas")) == 3
    with pytest.raises(SchemaError, match=r"no 'items' table .* 'answers' table"):
        plots.item_scores(Scores(tables={"runs": items.select("run_id", "system").unique()}))


def test_bad_input_is_one_clear_error() -> None:
    with pytest.raises(SchemaError, match="item_scores: items"):
        plots.item_scores(_items(), "reasoning_quality")
    with pytest.raises(DataError, match="item_scores: items has no rows with a value of 'clinical_accuracy'"):
        plots.item_scores(_items().with_columns(clinical_accuracy=pl.lit(None, pl.Float64)))
    with pytest.raises(InvalidParameterError, match="items must be a Polars DataFrame"):
        plots.item_scores([1, 2, 3])
    with pytest.raises(InvalidParameterError, match="kind='pie' is invalid"):
        plots.item_scores(_items(), kind="pie")
