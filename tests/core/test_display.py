"""What a notebook shows of Scores, a Dataset and a comparison table: compact, complete, escaped.

The last line of a Jupyter cell is displayed through ``_repr_html_`` (and ``repr`` in a console):
a Scores object shows its tables' shapes, the families that ran and those skipped with the
reason, the preset and where it came from, in well under 1,000 characters whatever the data;
names from the data are escaped, never markup.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval.stats import compare, display
from tests.html_text import parsed

HOSTILE = "<script>alert(1)</script>\x1b[31m"
SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture(scope="module")
def sample_scores() -> mas_eval.Scores:
    return mas_eval.score(mas_eval.Dataset.open(SAMPLE))


def test_scores_repr_is_a_compact_summary(sample_scores: mas_eval.Scores) -> None:
    text = repr(sample_scores)
    assert len(text) < 1000
    lines = text.splitlines()
    assert lines[0] == f"<Scores: {len(sample_scores)} tables>"
    assert "spec" in text and "decision, diagnosis, answers" in text
    assert "outcomes: the Dataset has no 'outcomes' table" in text  # skipped, with the reason
    for name, frame in sample_scores.tables.items():
        assert any(line.split()[:1] == [name] and f"{frame.height:,} rows x {frame.width} columns" in line
                   for line in lines), name  # fmt: skip


def test_scores_repr_stays_short_with_many_tables_and_long_names() -> None:
    tables = {f"table_{i}_{'x' * 200}": pl.DataFrame({"a": [1]}) for i in range(40)}
    scores = mas_eval.Scores(tables={"runs": pl.DataFrame({"run_id": ["r"]}), **tables}, skipped={"f": "y" * 5000})
    assert len(repr(scores)) < 1000
    assert "and 29 more tables" in repr(scores)


def test_scores_html_shows_the_same_facts(sample_scores: mas_eval.Scores) -> None:
    page = parsed(sample_scores._repr_html_())
    text = " ".join(page.text)
    assert "table" in page.tags and "script" not in page.tags
    for name, frame in sample_scores.tables.items():
        assert name in text and f"{frame.height:,}" in text
    assert "outcomes: the Dataset has no 'outcomes' table" in text


def test_written_scores_name_their_source(sample_scores: mas_eval.Scores, tmp_path: Path) -> None:
    opened = mas_eval.Scores.open(sample_scores.write(tmp_path / "scores"))
    (line,) = [line for line in repr(opened).splitlines() if line.split()[0] == "source"]
    assert str(tmp_path / "scores").startswith(line.split(maxsplit=1)[1].rstrip("…"))


def test_dataset_repr_and_html(tmp_path: Path) -> None:
    ds = mas_eval.Dataset.open(SAMPLE)
    text = repr(ds)
    assert len(text) < 1000
    assert text.splitlines()[0] == f"<Dataset: {len(ds.table_names)} tables>"
    rows = dict(ds.summary().select("table", "rows").iter_rows())
    for name in ds.table_names:
        assert f"{rows[name]:,} rows x" in text, name
    assert str(SAMPLE) in text or "data/sample" in text
    page = parsed(ds._repr_html_())
    assert all(name in " ".join(page.text) for name in ds.table_names)
    sharded = mas_eval.simulate(60, seed=1).write(tmp_path / "sharded", shards=3)
    (line,) = [line for line in repr(mas_eval.Dataset.open(sharded)).splitlines() if line.split()[0] == "shards"]
    assert line.split() == ["shards", "3"]


def test_hostile_names_are_escaped_in_html_and_shown_as_escapes_in_text() -> None:
    scores = mas_eval.Scores(
        tables={"runs": pl.DataFrame({"run_id": ["r"]})}, preset=HOSTILE, skipped={HOSTILE: HOSTILE}
    )
    ds_html = scores._repr_html_()
    page = parsed(ds_html)
    assert "script" not in page.tags
    assert "<script>" not in ds_html and "&lt;script&gt;" in ds_html
    assert "\x1b" not in ds_html and "\x1b" not in repr(scores)
    assert "\\x1b[31m" in repr(scores)


def comparison() -> pl.DataFrame:
    runs = pl.DataFrame({
        "task": [HOSTILE] * 6 + ["b"] * 4,
        "system": ["mas"] * 3 + ["single"] * 3 + ["mas", "mas", "single", "single"],
        "dqs": [0.8, 0.7, 0.9, 0.6, 0.5, 0.65, 0.5, 0.5, 0.5, 0.5],
    })  # fmt: skip
    return compare(runs, "dqs", by="task")


def test_display_shows_a_comparison_as_the_terminal_does() -> None:
    table = comparison()
    shown = display(table)
    assert shown.table is table  # the frame is untouched: compare still returns a plain DataFrame
    assert type(table) is pl.DataFrame
    text = repr(shown)
    header = text.splitlines()[0].split()
    assert header[:3] == ["task", "metric", "note"] and "95%" in header and "p_adj" in header
    first = next(row for row in table.to_dicts() if row["task"] == HOSTILE)
    ci = f"[{first['ci_low']:.4f}, {first['ci_high']:.4f}]"
    assert ci in text
    assert f"{first['p_adjusted']:.3f} *" in text  # adjusted p as a p-value, starred when significant
    assert "[1] " in text  # the degenerate group's warning, as a numbered note
    assert "\x1b" not in text and "\\x1b[31m" in text


def test_display_html_escapes_names_and_keeps_the_cells() -> None:
    html = display(comparison())._repr_html_()
    page = parsed(html)
    assert "script" not in page.tags and "&lt;script&gt;" in html
    text = "".join(page.text)
    assert "95% CI" in text and "p_adj" in text and "[1] " in text


def test_display_refuses_a_frame_that_is_no_comparison() -> None:
    with pytest.raises(mas_eval.SchemaError, match="display: table"):
        display(pl.DataFrame({"a": [1]}))
