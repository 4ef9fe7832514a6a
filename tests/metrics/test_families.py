"""A metric family registered from a test needs no change to scoring, Scores, the manifest, the CLI,
``compare`` or the report's generic sections: a family is its definition and one line registering it.

The toy family counts each run's messages (turns) at least ``min_turn_chars`` long: a run
column ``n_turns`` and a table of its own, ``speakers`` (turns per agent).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import polars as pl
import pytest

import mas_eval
from mas_eval import Dataset, InvalidParameterError, Scores
from mas_eval.cli import main
from mas_eval.constraints import Interval
from mas_eval.metrics import family as families
from mas_eval.metrics.codes import KeyCodes
from mas_eval.metrics.registry import Metric, OutputTable, columns
from mas_eval.presets import Params, param
from tests.conftest import tiny_frames


@dataclass(frozen=True)
class RunLengthParams(Params):
    section: ClassVar[str] = "run_length"
    where: ClassVar[str] = "score"

    min_turn_chars: int = param(0, Interval(int, 0))


def _compute(tables: Mapping[str, pl.LazyFrame], params: RunLengthParams, codes: KeyCodes) -> dict[str, pl.LazyFrame]:
    kept = tables["messages"].filter(pl.col("text").str.len_chars() >= params.min_turn_chars)
    counts = kept.group_by("run_id").agg(n_turns=pl.len())
    return {
        # One row per run (the Family contract): runs without messages get null.
        "runs": tables["runs"].select("run_id").join(counts, on="run_id", how="left").sort("run_id"),
        "speakers": kept.group_by("run_id", "agent_id").agg(turns=pl.len()).sort("run_id", "agent_id"),
    }


TOY = families.Family(
    name="run_length",
    needs=("runs", "messages"),
    reads=(),
    params=RunLengthParams,
    compute=_compute,
    description="Turns per run (a test's toy family).",
    columns=(
        Metric("n_turns", "runs", "Messages of at least min_turn_chars characters.", 0, None),
        Metric("turns", "speakers", "An agent's messages of at least min_turn_chars.", 1, None),
    ),
    # messages.agent_id reaches compute as a code (metrics.codes.LABEL_COLUMNS), decoded on output.
    output_tables=(OutputTable("speakers", (("agent_id", "agent_id"),), "Turns per agent of a run."),),
    headline=("n_turns",),
    compared=("n_turns",),
)


@pytest.fixture
def toy() -> Iterator[families.Family]:
    families.register(TOY)
    try:
        yield TOY
    finally:
        families.unregister("run_length")


def with_messages() -> Dataset:
    messages = pl.DataFrame(
        {
            "run_id": ["r1", "r1", "r1", "r2"],
            "round": ["debate"] * 4,
            "agent_id": ["a1", "a2", "a1", "a1"],
            "turn": [1, 2, 3, 1],
            "text": ["I agree.", "Evidence favours x over y.", "ok", "Shelter in place."],
        }
    )
    return Dataset.from_frames(**tiny_frames(), messages=messages)


def test_a_registered_family_runs_and_adds_its_columns_and_table(toy: families.Family) -> None:
    scores = mas_eval.score(with_messages())
    assert scores.ran == ["decision", "process", "run_length"]
    assert scores.skipped == {
        "diagnosis": "the Dataset has no 'ddx' table",
        "answers": "the Dataset has no 'answers' table",
        "outcomes": "the Dataset has no 'outcomes' table",
    }
    runs = scores.runs
    assert runs.columns[-1] == "n_turns" and runs.columns[-2] == columns("runs", "process")[-1]
    # r3 has no messages: a run the family has no row for gets null.
    assert dict(zip(runs["run_id"], runs["n_turns"], strict=True)) == {"r1": 3, "r2": 1, "r3": None}
    assert scores["speakers"].select("run_id", "agent_id", "turns").rows() == [("r1", "a1", 2), ("r1", "a2", 1),
                                                                              ("r2", "a1", 1)]  # fmt: skip
    assert scores.speakers.columns[:5] == ["run_id", "system", "case_id", "task", "variant"]


def test_its_parameters_come_from_score_and_are_checked(toy: families.Family) -> None:
    scores = mas_eval.score(with_messages(), min_turn_chars=5)
    assert scores.params["min_turn_chars"] == 5 and scores.params["gt_boost"] == 0.9
    assert scores.runs["n_turns"].to_list() == [2, 1, None]
    with pytest.raises(
        InvalidParameterError, match=r"min_turn_chars=-1 is invalid; min_turn_chars must be an integer >= 0"
    ):
        mas_eval.score(with_messages(), min_turn_chars=-1)


def test_a_family_without_its_tables_is_recorded_as_skipped(toy: families.Family, tmp_path: Path) -> None:
    scores = mas_eval.score(Dataset.from_frames(**tiny_frames()))
    assert scores.ran == ["decision"]
    assert scores.skipped == {
        "diagnosis": "the Dataset has no 'ddx' table",
        "answers": "the Dataset has no 'answers' table",
        "outcomes": "the Dataset has no 'outcomes' table",
        "process": "the Dataset has no 'messages' or 'usage' or 'tool_calls' table",
        "run_length": "the Dataset has no 'messages' table",
    }
    assert "n_turns" not in scores.runs.columns and "speakers" not in scores
    back = Scores.open(scores.write(tmp_path / "scores"))
    assert back.skipped == scores.skipped
    manifest = json.loads((tmp_path / "scores" / "_scores.json").read_text(encoding="utf-8"))
    assert manifest["families"] == {
        "ran": ["decision"],
        "skipped": {
            "diagnosis": "the Dataset has no 'ddx' table",
            "answers": "the Dataset has no 'answers' table",
            "outcomes": "the Dataset has no 'outcomes' table",
            "process": "the Dataset has no 'messages' or 'usage' or 'tool_calls' table",
            "run_length": "the Dataset has no 'messages' table",
        },
    }


def test_written_read_back_and_driven_from_the_cli(
    toy: families.Family, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = with_messages().write(tmp_path / "ds")
    with pytest.raises(SystemExit) as exited:
        main(["score", str(folder), "--out", str(tmp_path / "s"), "--set", "min_turn_chars=5"])
    assert exited.value.code in (0, None)
    back = Scores.open(tmp_path / "s")
    assert back.names == ["runs", "agents", "alternatives", "conflicts", "agent_process", "speakers"]
    assert back.runs["n_turns"].to_list() == [2, 1, None] and back.params["min_turn_chars"] == 5
    assert back.ran == ["decision", "process", "run_length"]
    assert "speakers" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["score", str(folder), "--out", str(tmp_path / "t"), "--set", "min_turn_chars=-2"])
    assert exited.value.code == 2
    assert not (tmp_path / "t").exists()


def test_names_must_stay_unique(toy: families.Family) -> None:
    with pytest.raises(ValueError, match="already registered"):
        families.register(TOY)
    clash = families.Family("clash", ("runs",), (), RunLengthParams, _compute)
    with pytest.raises(ValueError, match="min_turn_chars already belong to another family"):
        families.register(clash)
    assert [f.name for f in families.families()] == [
        "decision", "diagnosis", "answers", "outcomes", "process", "run_length",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "broken",
    [
        lambda frame: frame.filter(pl.col("n_turns").is_not_null()),  # rows for some runs only
        lambda frame: frame.sort("run_id", descending=True),  # every run, in the wrong order
    ],
    ids=["some runs", "wrong order"],
)
def test_a_runs_frame_breaking_the_contract_is_an_error_naming_the_family(broken: object) -> None:
    def compute(tables: Mapping[str, pl.LazyFrame], params: RunLengthParams, codes: KeyCodes) -> dict:
        return {"runs": broken(_compute(tables, params, codes)["runs"])}  # type: ignore[operator]

    families.register(families.Family("sloppy", ("runs", "messages"), (), RunLengthParams, compute))
    try:
        with pytest.raises(RuntimeError, match="family 'sloppy' returned a runs frame that is not one row per run"):
            mas_eval.score(with_messages())
    finally:
        families.unregister("sloppy")


def _paired_with_messages(runs: int = 40) -> Dataset:
    """A simulated decision Dataset whose runs also have messages: more turns for the MAS runs."""
    ds = mas_eval.simulate(runs, seed=3)
    run_ids = ds["runs"].select("run_id", "system").collect()
    turns = run_ids.with_columns(n=pl.when(pl.col("system") == "mas").then(4).otherwise(2)).select(
        "run_id", pl.int_ranges(0, pl.col("n") + pl.col("run_id").str.len_chars() % 3).alias("turn")
    )
    messages = turns.explode("turn").select(
        "run_id",
        pl.lit("debate").alias("round"),
        pl.format("a{}", pl.col("turn") % 2).alias("agent_id"),
        pl.col("turn").cast(pl.Int64),
        pl.lit("A turn long enough to count.").alias("text"),
    )
    return Dataset.from_frames(**{name: ds.collect(name) for name in ds.table_names}, messages=messages)


def test_compare_and_the_reports_generic_sections_take_its_columns(toy: families.Family, tmp_path: Path) -> None:
    from mas_eval.report import build

    scores = mas_eval.score(_paired_with_messages())
    assert "n_turns" in scores.runs.columns
    table = mas_eval.compare(scores.runs, "n_turns", pair_on="case_id")
    assert table["metric"].to_list() == ["n_turns"] and table["difference"].item() > 0

    report = build(Scores.open(scores.write(tmp_path / "scores")))
    # headline: its declared headline column (a family that ran and has values), with its registry description
    assert "n_turns" in report.section("headline").tables[0].frame["metric"].to_list()
    about = dict(report.tables["headline_columns"].select("metric", "what it is").iter_rows())
    assert about["n_turns"] == "Messages of at least min_turn_chars characters."
    # the default comparison: the columns every family declares it compares, its own among them
    compared = report.section("comparison").tables[0].frame
    assert set(compared["metric"]) == {"dqs", "decision_confidence", "n_turns"}
    assert report.provenance["parameters"]["comparison"]["metrics"] == ["dqs", "decision_confidence", "n_turns"]
    assert not report.section("forest").omitted


def test_without_it_the_report_neither_headlines_nor_compares_its_columns(tmp_path: Path) -> None:
    # The same data with the toy family not registered: nothing of it reaches the report.
    from mas_eval.report import build

    report = build(mas_eval.score(_paired_with_messages()))
    assert "n_turns" not in report.section("headline").tables[0].frame["metric"].to_list()
    assert set(report.section("comparison").tables[0].frame["metric"]) == {"dqs", "decision_confidence"}
