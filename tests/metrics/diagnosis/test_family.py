"""The diagnosis family inside ``score()``: its columns beside the decision ones, against the oracles."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval import Dataset
from mas_eval.errors import InvalidParameterError
from mas_eval.metrics.diagnosis.scores import COUNTS, SCORES
from mas_eval.metrics.registry import columns
from tests.conftest import LDDX, needs_lddx
from tests.metrics.diagnosis.test_labels import expected, frames, many_runs
from tests.oracles import diagnosis as score_oracle

V6_DATE = "_20250709_"
# Each example scores a whole Dataset (about 0.2 s of fixed cost): fewer than the labels test draws.
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def dataset_of(runs: list) -> Dataset:
    """The labels test's tables as a Dataset: runs get a system, messages a speaker and turn."""
    tables = frames(runs)
    tables["runs"] = tables["runs"].with_columns(system=pl.lit("mas"))
    tables["messages"] = tables["messages"].with_columns(
        agent_id=pl.lit("a1"), turn=pl.int_range(pl.len()).over("run_id")
    )
    return Dataset.from_frames(**tables)


def oracle_counts(labels: set, preset: str) -> dict[str, int]:
    side_of_tp = "ground_truth"  # label_counts counts TP on the ground-truth side under both rule sets
    count = {name: 0 for name in COUNTS}
    for side, _dx, label, *_ in labels:
        if label == "TP":
            count["tp"] += side == side_of_tp
        else:
            count[label.lower().replace("-", "_")] += 1
    return count


@SETTINGS
@given(many_runs, st.sampled_from(["spec", "lddx-v6", "lddx-v8"]))
def test_score_run_columns_equal_the_oracle(runs, preset):
    got = mas_eval.score(dataset_of(runs), label_rules=preset).runs
    by_run = {row["run_id"]: row for row in got.iter_rows(named=True)}
    for rid, run in runs:
        row = by_run[rid]
        if not (run.final or run.truth or run.critical or run.excluded):
            # No ddx row and no ground truth: not a diagnostic run, so nothing is counted.
            assert all(row[name] is None for name in (*COUNTS, *SCORES)), rid
            continue
        counts = oracle_counts(expected(run, preset), preset)
        want = counts | score_oracle.scores(**counts, preset=preset)
        for name in (*COUNTS, *SCORES):
            if want[name] is None:
                assert row[name] is None, (rid, name)
            else:
                assert row[name] == pytest.approx(want[name], abs=1e-12), (rid, name)


@SETTINGS
@given(many_runs, st.sampled_from(["spec", "lddx-v6", "lddx-v8"]))
def test_label_partition_holds_in_scores(runs, preset):
    scores = mas_eval.score(dataset_of(runs), label_rules=preset)
    runs_out = scores.runs
    final = scores["labels"].filter(pl.col("side") == "system").group_by("run_id").len("n_final")
    joined = runs_out.join(final, on="run_id", how="left").with_columns(pl.col("n_final").fill_null(0))
    caa_gt = preset == "lddx-v6"
    for row in joined.filter(pl.col("tp").is_not_null()).iter_rows(named=True):
        gt_side = row["tp"] + row["fn"] + row["ae"] + row["tm_sm"] + (row["caa"] if caa_gt else 0)
        assert gt_side == row["total_gt"]
        if not caa_gt:
            assert row["tp"] + row["fp"] + row["caa"] == row["n_final"]


def test_runs_without_diagnosis_rows_have_null_diagnosis_columns() -> None:
    decision = mas_eval.simulate(20, seed=3)
    tables = {name: decision.collect(name) for name in decision.table_names}
    first = tables["runs"]["run_id"].sort()[0]
    case = tables["runs"].filter(pl.col("run_id") == first)["case_id"].item()
    tables["ddx"] = pl.DataFrame(
        {"run_id": [first], "round": ["final"], "agent_id": ["team"], "diagnosis": ["Sepsis"], "stance": ["final"]}
    )
    tables["ground_truth"] = pl.DataFrame({"case_id": [case], "diagnosis": ["sepsis"]})
    scores = mas_eval.score(Dataset.from_frames(**tables))
    assert scores.ran == ["decision", "diagnosis"]
    runs = scores.runs
    assert runs.filter(pl.col("run_id") == first).select("tp", "total_gt", "traditional_recall").row(0) == (1, 1, 1.0)
    other = runs.filter(pl.col("case_id") != case)
    assert other.select(pl.all_horizontal(pl.col(*COUNTS, *SCORES).is_null()).all()).item()
    # The decision metrics are untouched by the second family (up to summation order: score's Notes).
    alone = mas_eval.score(decision).runs
    assert_frame_equal(runs.select(alone.columns), alone, rel_tol=1e-12, abs_tol=1e-12)


def test_agents_table_holds_both_families_columns() -> None:
    ds = mas_eval.simulate(6, seed=5)
    tables = {name: ds.collect(name) for name in ds.table_names}
    agent = tables["agents"].sort("run_id", "agent_id").row(0, named=True)
    tables["messages"] = pl.DataFrame(
        {
            "run_id": [agent["run_id"], agent["run_id"]],
            "round": ["refinement_and_justification"] * 2,
            "agent_id": [agent["agent_id"], "newcomer"],
            "turn": [0, 1],
            "text": ["The evidence and clinical findings; I recommend a plan.", "short"],
        }
    )
    tables["ddx"] = pl.DataFrame(schema={"run_id": pl.String, "round": pl.String, "agent_id": pl.String,
                                         "diagnosis": pl.String})  # fmt: skip
    scores = mas_eval.score(Dataset.from_frames(**tables))
    agents = scores["agents"]
    assert agents.columns[-5:] == ["insight", "synthesis", "action", "valence", "credibility"]
    assert agents.columns[5:] == ["agent_id", *columns("agents")]
    row = agents.filter((pl.col("run_id") == agent["run_id"]) & (pl.col("agent_id") == agent["agent_id"]))
    assert row["confidence"].item() is not None and row["credibility"].item() > 0
    newcomer = agents.filter(pl.col("agent_id") == "newcomer")
    assert newcomer["confidence"].item() is None and newcomer["credibility"].item() == 0.0  # "short": no keyword
    assert newcomer["system"].item() is not None  # a row only the second family has still gets its run's ids
    assert agents.equals(agents.sort("run_id", "agent_id"))


def tied_rank_tables() -> dict[str, pl.DataFrame]:
    """Three simulated runs, the first with diagnosis tables in which agent g ranks two diagnoses
    with evidence both 2nd (its 1st has none): the row-order property suite's example, cut down."""
    ds = mas_eval.simulate(3, seed=5)
    tables = {name: ds.collect(name) for name in ds.table_names}
    run = tables["runs"]["run_id"].sort()[0]
    independent, voting = "team_independent_differentials", "post_debate_voting"
    tables["ddx"] = pl.DataFrame(
        [
            (run, independent, "g", "heart attack", 1, None),
            (run, independent, "g", "Pneumonia", 2, ["fever"]),
            (run, independent, "g", "Opioid overdose", 2, ["rales", "fever"]),
            (run, independent, "h", "Pneumonia", 1, ["fever"]),
            (run, voting, "g", "Pneumonia", 1, None),
            (run, voting, "g", "Opioid overdose", 2, None),
            (run, voting, "h", "Opioid overdose", 1, None),
        ],
        schema={
            "run_id": pl.String,
            "round": pl.String,
            "agent_id": pl.String,
            "diagnosis": pl.String,
            "rank": pl.Int64,
            "evidence": pl.List(pl.String),
        },
        orient="row",
    )
    tables["messages"] = pl.DataFrame(
        {
            "run_id": [run] * 3,
            "round": [independent, independent, voting],
            "agent_id": ["g", "h", "g"],
            "turn": [0, 1, 2],
            "text": ["I recommend a plan.", "The evidence suggests pneumonia.", "Agreed."],
        }
    )
    return tables


def test_credibility_and_vote_ignore_row_order_when_an_agent_ranks_two_diagnoses_equal() -> None:
    # g's action score (and, through its credibility, the vote's points) took the evidence of
    # whichever of its two 2nd-ranked rows came first.
    tables = tied_rank_tables()
    reversed_rows = {name: frame.reverse() for name, frame in tables.items()}
    got, again = (mas_eval.score(Dataset.from_frames(**t)) for t in (tables, reversed_rows))
    for name in ("agents", "consensus_ddx"):
        assert_frame_equal(got[name], again[name])
    run = tables["ddx"]["run_id"][0]
    g = got["agents"].filter((pl.col("run_id") == run) & (pl.col("agent_id") == "g"))
    # "Opioid overdose" (2 items: 20) sorts before "Pneumonia" (1 item: 10); "Agreed." scores 0.
    assert g["action"].item() == (20.0 + 0.0) / 2


@needs_lddx
@pytest.mark.parametrize("preset", ["spec", "lddx-v6", "lddx-v8"])
def test_fixtures_score_under_every_preset(preset: str) -> None:
    from mas_eval.ingest import ingest_lddx

    scores = mas_eval.score(ingest_lddx([LDDX]).dataset, preset)
    assert scores.ran == ["decision", "diagnosis", "process"]  # its transcripts: how the agents worked
    assert scores.runs.height == 16 and scores["rounds"].height == 16 * 7
    assert scores.runs["traditional_recall"].is_not_null().all()
    assert scores["consensus_ddx"].group_by("run_id").agg(pl.col("rank").max())["rank"].max() <= 10
    tempo = scores["rounds"].filter(pl.col("round") == "team_independent_differentials")["tempo_score"]
    if preset != "spec":  # every mention counted: never below the unique count of the spec
        assert tempo.min() > 1.0


@needs_lddx
def test_recorded_tempo_and_v6_credibility_are_reproduced_through_score() -> None:
    from mas_eval.ingest import ingest_lddx

    ds = ingest_lddx([LDDX]).dataset
    scores = mas_eval.score(ds, "lddx-v6")
    reported = ds.collect("reported")
    tempo = reported.filter(source="tempo").select("run_id", round="name", recorded="value")
    tempo = tempo.join(scores["rounds"], on=["run_id", "round"], how="left")
    assert tempo.height == 112 and ((tempo["recorded"] - tempo["tempo_score"]).abs() <= 1e-12).all()
    cred = reported.filter(source="credibility").select("run_id", agent_id="name", recorded="value")
    cred = cred.join(scores["agents"], on=["run_id", "agent_id"], how="left").filter(
        pl.col("run_id").str.contains(V6_DATE, literal=True)
    )
    assert cred.height == 43 and ((cred["recorded"] - cred["credibility"]).abs() <= 1e-6).all()


def test_compare_pairs_mas_and_single_on_the_diagnosis_columns() -> None:
    rows = []
    for case in range(12):
        for system, found in (("mas", 2 + case % 2), ("single", 1 + case % 2)):
            rows.append((f"{system}-{case}", system, f"c{case}", found))
    runs = pl.DataFrame(rows, schema=["run_id", "system", "case_id", "found"], orient="row")
    truth = [(f"c{case}", dx) for case in range(12) for dx in ("Sepsis", "Pneumonia", "Dehydration", "Gout")]
    final = [
        (run_id, "final", "team", dx, "final")
        for run_id, _, _, found in rows
        for dx in ("Sepsis", "Pneumonia", "Dehydration", "Gout", "Asthma")[: found + 1]
    ]
    ds = Dataset.from_frames(
        runs=runs.drop("found"),
        ground_truth=pl.DataFrame(truth, schema=["case_id", "diagnosis"], orient="row"),
        ddx=pl.DataFrame(final, schema=["run_id", "round", "agent_id", "diagnosis", "stance"], orient="row"),
    )
    metrics = ["traditional_recall", "clinical_reasoning_quality", "diagnostic_safety", "system_safety_coverage"]
    table = mas_eval.compare(mas_eval.score(ds), metrics, pair_on="case_id")
    assert table["metric"].to_list() == metrics
    recall = table.filter(pl.col("metric") == "traditional_recall")
    assert recall["difference"].item() == pytest.approx(0.25)  # one more of four found in every case
    assert recall["n_pairs"].item() == 12


def test_user_tables_extend_the_shipped_ones(tmp_path: Path) -> None:
    ds = Dataset.from_frames(
        runs=pl.DataFrame({"run_id": ["r"], "system": ["mas"], "case_id": ["c"]}),
        ground_truth=pl.DataFrame({"case_id": ["c", "c"], "diagnosis": ["Podagra", "Zebra fever"]}),
        ddx=pl.DataFrame(
            {"run_id": ["r"], "round": ["final"], "agent_id": ["team"], "diagnosis": ["Gout"], "stance": ["final"]}
        ),
        interventions=pl.DataFrame({"run_id": ["r"], "text": ["start zebrafix"]}),
    )
    plain = mas_eval.score(ds).runs.row(0, named=True)
    synonyms, treatments = tmp_path / "syn.csv", tmp_path / "int.csv"
    synonyms.write_text("term,canonical\npodagra,gout\n", encoding="utf-8")
    treatments.write_text("keyword,diagnosis\nzebrafix,zebra fever\n", encoding="utf-8")
    extended = mas_eval.score(ds, synonyms_file=str(synonyms), interventions_file=str(treatments)).runs
    row = extended.row(0, named=True)
    assert (plain["tp"], plain["tm_sm"]) == (0, 0)
    assert (row["tp"], row["tm_sm"], row["fn"]) == (1, 1, 0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"synonyms_file": "/nonexistent/syn.csv"}, "synonyms_file='/nonexistent/syn.csv': no such file"),
        ({"equivalence_threshold": 1.5}, "equivalence_threshold=1.5 is invalid"),
        ({"label_rules": "lddx"}, "label_rules='lddx' is invalid"),
        ({"caa_mentions": 0}, "caa_mentions=0 is invalid"),
    ],
)
def test_bad_parameters_are_one_clear_error(overrides: dict, message: str) -> None:
    ds = Dataset.from_frames(
        runs=pl.DataFrame({"run_id": ["r"], "system": ["mas"], "case_id": ["c"]}),
        ddx=pl.DataFrame({"run_id": ["r"], "round": ["final"], "agent_id": ["team"], "diagnosis": ["Gout"]}),
    )
    with pytest.raises(InvalidParameterError, match=message.replace("(", r"\(")):
        mas_eval.score(ds, **overrides)


def test_a_bad_csv_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "syn.csv"
    bad.write_bytes(b"\xff\xfe\x00garbage\x00\n\x01")
    ds = Dataset.from_frames(
        runs=pl.DataFrame({"run_id": ["r"], "system": ["mas"], "case_id": ["c"]}),
        ddx=pl.DataFrame({"run_id": ["r"], "round": ["final"], "agent_id": ["team"], "diagnosis": ["Gout"]}),
    )
    with pytest.raises(Exception, match=r"syn\.csv") as caught:
        mas_eval.score(ds, synonyms_file=str(bad))
    assert isinstance(caught.value, mas_eval.errors.MasEvalError)
