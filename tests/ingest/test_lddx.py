"""Ingest of Local-DDx result files (``ddx_results_*.json``): ingest_lddx and `mas-eval ingest --format lddx`.

The 16 files in ``../shared/fixtures/lddx`` are real Local-DDx outputs (Baglecake/Local-DDx,
MIT License, Copyright (c) 2025 Baglecake): 5 of v6 (July 9, 2025) and 11 of v8.5 (July 18).
Broken inputs are made in a temporary folder from copies of them; the fixtures are only read.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.cli import main
from mas_eval.data.vocabulary import FINAL_ROUND, TEAM
from mas_eval.errors import IngestError, OutputError, OutputExistsError
from mas_eval.ingest import LddxIngestResult, ingest_lddx
from mas_eval.ingest.lddx import EVALUATION_FIELDS
from tests.conftest import LDDX, needs_lddx

pytestmark = needs_lddx
FILES = sorted(LDDX.glob("ddx_results_*.json"))
V6 = LDDX / "ddx_results_Case_1_20250709_215657.json"  # archive/previous_versions (v6)
V8 = LDDX / "ddx_results_Case_1_20250718_031718.json"  # v8/Transcripts/v8_5
DUPLICATE_NAMES = LDDX / "ddx_results_Case_9_20250718_044213.json"  # two agents named "Dr. David Kim"


def _json(file: Path) -> dict[str, Any]:
    return json.loads(file.read_text(encoding="utf-8"))


def _write(folder: Path, name: str, doc: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def run_cli(*args: str | Path) -> int:
    with pytest.raises(SystemExit) as exited:
        main([str(a) for a in args])
    return int(exited.value.code or 0)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> LddxIngestResult:
    """Every fixture, ingested once for the tests that only read."""
    return ingest_lddx(LDDX, tmp_path_factory.mktemp("lddx") / "ds")


# -- every fixture ----------------------------------------------------------------------------


def test_every_fixture_ingests_into_a_valid_dataset(ingested: LddxIngestResult) -> None:
    assert len(FILES) == 16
    assert sum("_20250709_" in f.name for f in FILES) == 5  # both generations are there
    assert (ingested.runs, ingested.files, ingested.skipped) == (16, tuple(FILES), ())
    ds = Dataset.open(ingested.out).validate()
    assert ds.table_names == ["runs", "agents", "ddx", "ground_truth", "messages", "interventions", "reported"]
    manifest = json.loads((ingested.out / "_dataset.json").read_text(encoding="utf-8"))
    assert manifest["tables"] == ds.table_names
    runs = ds.collect("runs")
    assert runs["run_id"].to_list() == sorted(f.stem for f in FILES)
    assert runs["system"].unique().to_list() == ["mas"]
    expected = {f.stem: (_json(f)["case_id"], _json(f)["full_transcript"]["sequence_metadata"]) for f in FILES}
    for run_id, case_id, seconds in runs.select("run_id", "case_id", "seconds").rows():
        assert case_id == expected[run_id][0]
        assert seconds == expected[run_id][1]["total_execution_time"]
    # The Dataset's stances are the schema's, and every round key of the files is a round.
    assert set(ds.collect("ddx")["stance"].drop_nulls()) == {"proposed", "final", "critical"}
    rounds = {r for f in FILES for r in _json(f)["full_transcript"]["rounds"]}
    assert set(ds.collect("messages")["round"]) == rounds


def test_the_warnings_name_the_file_and_the_json_path(ingested: LddxIngestResult) -> None:
    name = str(DUPLICATE_NAMES)
    assert (
        f"{name}: $.full_transcript.agents: 2 agents are named 'Dr. David Kim' (Emergency Medicine, Gastroenterology); "
        "the file keys responses by name, so they are one agent here, with the last one's role"
    ) in ingested.warnings
    assert (
        f"{name}: $.full_transcript.rounds.team_independent_differentials.metadata.all_diagnoses: "
        "lists 3 diagnoses no response gives; two agents are named 'Dr. David Kim', so they are taken as the "
        "other Dr. David Kim's and added to that name's differential"
    ) in ingested.warnings
    independent = ingested.dataset.collect("ddx").filter(
        run_id=DUPLICATE_NAMES.stem, round="team_independent_differentials"
    )
    recorded = _json(DUPLICATE_NAMES)["full_transcript"]["rounds"]["team_independent_differentials"]["metadata"]
    assert independent["mentions"].sum() == len(recorded["all_diagnoses"]) == recorded["total_diagnoses"]
    # The 3 attributed diagnoses come from no response, so carry no evidence: Dr. Reed reads the kept response only.
    kept = _json(DUPLICATE_NAMES)["full_transcript"]["rounds"]["team_independent_differentials"]["responses"]
    kim = independent.filter(agent_id="Dr. David Kim")
    assert kim.filter(pl.col("evidence").is_not_null()).sort("rank")["diagnosis"].to_list() == list(
        kept["Dr. David Kim"]["structured_data"]
    )
    assert kim.filter(pl.col("evidence").is_null()).height == 3
    agents = ingested.dataset.collect("agents").filter(run_id=DUPLICATE_NAMES.stem, agent_id="Dr. David Kim")
    assert agents["role"].to_list() == ["Gastroenterology"]
    assert all(w.split(": ")[1].startswith("$") for w in ingested.warnings)


def _independent(rnd: dict[str, Any]) -> dict[str, list[str]]:
    """Each agent's independent differential as Local-DDx reads it: structured_data, else diagnoses_by_agent."""
    lists = {}
    for agent, response in rnd["responses"].items():
        structured = response["structured_data"]
        if structured:
            lists[agent] = list(structured)
        else:
            lists[agent] = [d["diagnosis"] for d in rnd["metadata"]["diagnoses_by_agent"][agent]]
    return lists


@pytest.mark.parametrize("file", [V6, V8], ids=["v6", "v8"])
def test_rows_per_table_match_counts_taken_from_the_json(ingested: LddxIngestResult, file: Path) -> None:
    doc = _json(file)
    rounds = doc["full_transcript"]["rounds"]
    ds = ingested.dataset
    frames = {
        name: ds.collect(name).filter(pl.col("run_id") == file.stem)
        for name in ds.table_names
        if name != "ground_truth"
    }
    names = [a["name"] for a in doc["full_transcript"]["agents"]]
    assert frames["agents"].select("agent_id", "role").rows() == sorted(
        (a["name"], a["specialty"]) for a in doc["full_transcript"]["agents"]
    )
    assert frames["messages"].height == sum(len(r["responses"]) for r in rounds.values())
    for name, rnd in rounds.items():
        turns = frames["messages"].filter(round=name).sort("turn")
        assert turns["turn"].to_list() == list(range(1, len(rnd["responses"]) + 1))
        assert turns["text"].to_list() == [r["content"] for r in rnd["responses"].values()]
        assert set(turns["agent_id"]) <= set(names)
    truth = ds.collect("ground_truth").filter(case_id=doc["case_id"])
    assert sorted(truth["diagnosis"]) == sorted(set(doc["ground_truth_diagnoses"]))
    assert frames["interventions"].height == len(set(rounds["symptom_management"]["metadata"]["interventions"]))

    ddx = frames["ddx"]

    def rows(round_: str, agent: str | None = None) -> pl.DataFrame:
        selected = ddx.filter(round=round_)
        return selected if agent is None else selected.filter(agent_id=agent)

    independent = _independent(rounds["team_independent_differentials"])
    assert rows("team_independent_differentials").height == sum(len(set(v)) for v in independent.values())
    # Mentions add up to the file's own count of the round's diagnoses.
    assert (
        rows("team_independent_differentials")["mentions"].sum()
        == rounds["team_independent_differentials"]["metadata"]["total_diagnoses"]
    )
    for agent, listed in independent.items():
        ranked = rows("team_independent_differentials", agent).sort("rank")
        assert ranked["diagnosis"].to_list() == list(dict.fromkeys(listed))
    refinements = rounds["refinement_and_justification"]["metadata"]
    by_agent = refinements.get("agent_contributions") or Counter(r["agent"] for r in refinements["all_refinements"])
    for agent, count in by_agent.items():  # v6 records each agent's number of refinements; v8 names the agent
        assert (rows("refinement_and_justification", agent)["mentions"].sum() or 0) == count
    votes = rounds["post_debate_voting"]["metadata"]["all_rankings"]
    assert rows("post_debate_voting").height == sum(len(set(r)) for r in votes.values())
    for agent, ranking in votes.items():
        assert rows("post_debate_voting", agent).sort("rank")["diagnosis"].to_list() == list(dict.fromkeys(ranking))
    critical = rounds["cant_miss"]["metadata"]["critical_diagnoses"]
    team = rows("cant_miss", TEAM).sort("rank")
    assert team.select("diagnosis", "mentions").rows() == [(c["diagnosis"], c["mention_count"]) for c in critical]
    assert team["evidence"].to_list() == [c["all_reasons"] for c in critical]
    per_agent = sum(len(r["structured_data"] or {}) for r in rounds["cant_miss"]["responses"].values())
    assert rows("cant_miss").height - team.height == per_agent
    assert rows("master_list_generation")["mentions"].sum() == len(
        rounds["master_list_generation"]["metadata"]["master_diagnoses"]
    )
    final = rows(FINAL_ROUND, TEAM).sort("rank")
    assert final.select("diagnosis", "stance").rows() == [(d, "final") for d in doc["final_diagnoses"]]
    assert ddx.height == sum(rows(r).height for r in [*rounds, FINAL_ROUND])

    reported = frames["reported"]
    labels = reported.filter(source="label")
    assert labels.height == len(doc["true_positives"]) + len(doc["false_positives"]) + len(doc["false_negatives"])
    assert reported.filter(source="credibility").height == len(doc["credibility_scores"])
    assert reported.filter(source="tempo").height == len(doc["round_completion"]["tempo_scores"])
    responses = reported.filter(pl.col("source").str.ends_with(".responses"), name="confidence_score")
    assert responses.height == frames["messages"].height


def _reported(ds: Dataset, run_id: str, source: str) -> dict[tuple[str, int], tuple[float | None, str | None]]:
    frame = ds.collect("reported").filter(run_id=run_id, source=source)
    return {
        (name, item): (value, text) for name, item, value, text in frame.select("name", "item", "value", "text").rows()
    }


@pytest.mark.parametrize("file", FILES, ids=lambda f: f.stem.removeprefix("ddx_results_"))
def test_reported_values_are_the_files_numbers(ingested: LddxIngestResult, file: Path) -> None:
    doc = _json(file)
    ds = ingested.dataset
    evaluation = _reported(ds, file.stem, "evaluation")
    for field in EVALUATION_FIELDS:
        assert evaluation[(field, 0)] == (doc[field], None)
    assert evaluation[("evaluation_method", 0)] == (None, doc["evaluation_method"])
    assert evaluation[("ai_enhanced_matching", 0)] == (1.0, "true")
    credibility = _reported(ds, file.stem, "credibility")
    assert credibility == {(agent, 0): (score, None) for agent, score in doc["credibility_scores"].items()}
    tempo = _reported(ds, file.stem, "tempo")
    assert tempo == {(name, 0): (score, None) for name, score in doc["round_completion"]["tempo_scores"].items()}
    completion = _reported(ds, file.stem, "round_completion")
    assert completion[("debate_quality", 0)][0] == doc["round_completion"]["debate_quality"]
    # Labels: a later reproduction decodes the pairs and compares them with its own.
    labels = ds.collect("reported").filter(run_id=file.stem, source="label").sort("name", "item")
    pairs = labels.filter(name="TP").select(
        pl.col("text").str.json_decode(pl.Struct({"ground_truth": pl.String, "system": pl.String}))
    )
    assert pairs.to_series().to_list() == doc["true_positives"]
    assert labels.filter(name="FP")["text"].to_list() == doc["false_positives"]
    assert labels.filter(name="FN")["text"].to_list() == doc["false_negatives"]
    rankings = _reported(ds, file.stem, "specialist_performance.specialist_rankings")
    for i, ranked in enumerate(doc["specialist_performance"]["specialist_rankings"], start=1):
        assert rankings[("name", i)] == (None, ranked["name"])
        assert rankings[("final_score", i)] == (ranked["final_score"], None)
    borda = _reported(ds, file.stem, "post_debate_voting.borda_scores")
    assert borda == {
        (d, 0): (float(p), None)
        for d, p in doc["full_transcript"]["rounds"]["post_debate_voting"]["metadata"]["borda_scores"].items()
    }


def test_v6_and_v8_specifics_are_mapped(ingested: LddxIngestResult) -> None:
    ds = ingested.dataset
    ddx = ds.collect("ddx")
    # v6: the independent differential comes from diagnoses_by_agent; its free-text reasoning stays in
    # the message, so evidence is null (no structured differential: credibility's text path).
    v6 = _json(V6)["full_transcript"]["rounds"]
    first = v6["team_independent_differentials"]["metadata"]["diagnoses_by_agent"]["Dr. Olivia Chen"][0]
    row = ddx.filter(run_id=V6.stem, round="team_independent_differentials", agent_id="Dr. Olivia Chen", rank=1)
    assert row.select("diagnosis", "stance", "mentions", "evidence").row(0) == (
        first["diagnosis"],
        "proposed",
        1,
        None,
    )
    # v6: a refinement is attributed to the agent whose response it quotes; its diagnosis is the line's head.
    refinement = v6["refinement_and_justification"]["metadata"]["all_refinements"][0]
    author = next(
        k for k, r in v6["refinement_and_justification"]["responses"].items() if r["content"] == refinement["content"]
    )
    row = ddx.filter(run_id=V6.stem, round="refinement_and_justification", agent_id=author, rank=1)
    assert row.select("diagnosis", "evidence").row(0) == ("Acute Kidney Injury (AKI)", [refinement["recommendation"]])
    # v8: structured_data is the differential (keys in order, values the evidence) ...
    v8 = _json(V8)["full_transcript"]["rounds"]
    structured = v8["team_independent_differentials"]["responses"]["Dr. Anya Sharma"]["structured_data"]
    rows = ddx.filter(run_id=V8.stem, round="team_independent_differentials", agent_id="Dr. Anya Sharma").sort("rank")
    assert rows.select("diagnosis", "evidence").rows() == list(structured.items())
    # ... the debate's sub-round responses "<agent>_round<n>" are the agent's, in the file's order ...
    debate = ds.collect("messages").filter(run_id=V8.stem, round="refinement_and_justification").sort("turn")
    keys = list(v8["refinement_and_justification"]["responses"])
    assert debate["agent_id"].to_list() == [k.rsplit("_round", 1)[0] for k in keys]
    debate_reported = _reported(ds, V8.stem, "refinement_and_justification.responses")
    assert (
        debate_reported[("confidence_score", 2)][0]
        == v8["refinement_and_justification"]["responses"][keys[1]]["confidence_score"]
    )
    # ... and a refinement names its agent, diagnosis, stance and reasoning.
    refinement = v8["refinement_and_justification"]["metadata"]["all_refinements"][0]
    row = ddx.filter(
        run_id=V8.stem,
        round="refinement_and_justification",
        agent_id=refinement["agent"],
        diagnosis=refinement["diagnosis"],
    )
    assert row.select("stance", "rank", "evidence").row(0) == ("proposed", 1, [refinement["reasoning"]])
    assert _reported(ds, V8.stem, "refinement_and_justification.all_refinements")[("confidence", 1)] == (None, "HIGH")


def test_repeats_in_one_list_are_merged_with_a_warning(ingested: LddxIngestResult) -> None:
    file = LDDX / "ddx_results_Case_6_20250718_041219.json"
    refinements = _json(file)["full_transcript"]["rounds"]["refinement_and_justification"]["metadata"][
        "all_refinements"
    ]
    rows = ingested.dataset.collect("ddx").filter(run_id=file.stem, round="refinement_and_justification")
    assert rows.height == len({(r["agent"], r["diagnosis"]) for r in refinements}) == 3
    assert rows["mentions"].to_list() == [2, 2, 2]
    assert rows.sort("rank")["rank"].to_list() == [1, 2, 3]
    assert rows["evidence"].list.len().to_list() == [2, 2, 2]
    assert (
        f"{file}: $.full_transcript.rounds.refinement_and_justification: 3 diagnosis(es) repeated in the same "
        "agent's list; merged (mentions counts the repeats)" in ingested.warnings
    )


# -- a small hand-made file -------------------------------------------------------------------


def _minimal(case_id: str = "Case X", truth: list[str] | None = None) -> dict[str, Any]:
    """A Local-DDx result with one round, two agents, and none of the optional parts."""
    response = {"content": "", "structured_data": None, "confidence_score": 0.5}
    return {
        "case_id": case_id,
        "final_diagnoses": ["flu", "cold"],
        "ground_truth_diagnoses": truth if truth is not None else ["flu", "flu"],
        "full_transcript": {
            "agents": [{"name": "Dr. A", "specialty": "Internal Medicine"}, {"name": "Dr. B", "specialty": None}],
            "rounds": {
                "team_independent_differentials": {
                    "responses": {
                        "Dr. A": {**response, "content": "1. flu", "structured_data": {"flu": ["fever", "cough"]}},
                        "Dr. B": {**response, "content": "1. cold\n2. cold"},
                    },
                    "metadata": {
                        "diagnoses_by_agent": {
                            "Dr. B": [{"diagnosis": "cold", "reasoning": "sneezing"}, {"diagnosis": "cold"}]
                        },
                        "total_diagnoses": 3,
                    },
                }
            },
        },
    }


def test_a_minimal_file_gives_exact_rows_and_warns_of_what_it_lacks(tmp_path: Path) -> None:
    file = _write(tmp_path / "in", "ddx_results_mini.json", _minimal())
    result = ingest_lddx(file)  # no out: the Dataset stays in memory
    assert result.out is None and not (tmp_path / "ds").exists()
    ds = result.dataset.validate()
    assert ds.collect("runs").select("run_id", "system", "case_id", "seconds").rows() == [
        ("ddx_results_mini", "mas", "Case X", None)
    ]
    assert ds.collect("agents").select("agent_id", "role").rows() == [("Dr. A", "Internal Medicine"), ("Dr. B", None)]
    assert ds.collect("ddx").drop("run_id").rows() == [
        ("final", "team", "cold", "final", 2, 1, None),
        ("final", "team", "flu", "final", 1, 1, None),
        ("team_independent_differentials", "Dr. A", "flu", "proposed", 1, 1, ["fever", "cough"]),
        ("team_independent_differentials", "Dr. B", "cold", "proposed", 1, 2, None),
    ]
    assert ds.collect("ground_truth").rows() == [("Case X", "flu")]
    assert ds.collect("messages").select("agent_id", "turn", "text").rows() == [
        ("Dr. A", 1, "1. flu"),
        ("Dr. B", 2, "1. cold\n2. cold"),
    ]
    assert "interventions" not in ds
    reported = ds.collect("reported").select("source", "name", "item", "value", "text").rows()
    assert ("team_independent_differentials", "total_diagnoses", 0, 3.0, None) in reported
    assert ("team_independent_differentials.responses", "confidence_score", 2, 0.5, None) in reported
    assert ("agents", "specialty", 2, None, None) in reported
    warned = "\n".join(result.warnings)
    for missing in (
        "$.tp_count",
        "$.true_positives",
        "$.credibility_scores",
        "$.round_completion",
        "$.full_transcript.sequence_metadata",
        "$.full_transcript.rounds.cant_miss",
    ):
        assert f"{file}: {missing}: missing" in warned
    assert f"{file}: $.full_transcript.agents[1].specialty: expected a string, got null; the role is null" in warned


def test_non_finite_numbers_and_unknown_speakers_are_kept_with_warnings(tmp_path: Path) -> None:
    doc = _minimal()
    doc["tp_rate"] = math.nan
    doc["full_transcript"]["rounds"]["team_independent_differentials"]["responses"]["Dr. C"] = {"content": "hello"}
    file = tmp_path / "ddx_results_nan.json"
    file.write_text(json.dumps(doc), encoding="utf-8")  # Python writes NaN, as Local-DDx's json.dump would
    result = ingest_lddx([file])
    assert _reported(result.dataset, file.stem, "evaluation")[("tp_rate", 0)] == (None, "nan")
    assert f"{file}: $.tp_rate: nan is not a finite number; recorded as text" in result.warnings
    assert ("Dr. C", None) in result.dataset.collect("agents").select("agent_id", "role").rows()
    assert any("'Dr. C' is not in $.full_transcript.agents" in w for w in result.warnings)


# -- files that cannot be ingested ------------------------------------------------------------


def _broken(doc: dict[str, Any], case: str) -> dict[str, Any]:
    rounds = doc["full_transcript"]["rounds"]
    if case == "no transcript":
        del doc["full_transcript"]
    elif case == "transcript not available":
        doc["full_transcript"] = {"note": "Transcript not available"}
    elif case == "no results":
        return {"error": "No evaluation results available"}
    elif case == "empty round":
        rounds["cant_miss"]["responses"] = {}
    elif case == "no independent round":
        del rounds["team_independent_differentials"]
    elif case == "misspelt":
        doc["full_transcrpt"] = doc.pop("full_transcript")
    elif case == "agents not a list":
        doc["full_transcript"]["agents"] = "Dr. A"
    elif case == "no content":
        del rounds["cant_miss"]["responses"]["Dr. Olivia Chen"]["content"]
    return doc


BROKEN = {
    "no transcript": "$.full_transcript: missing; fix the file, or pass skip_invalid=True",
    "transcript not available": "$.full_transcript: holds no transcript: Local-DDx wrote 'Transcript not available' instead",  # noqa: E501
    "no results": "$: holds no results: Local-DDx wrote 'No evaluation results available' instead",
    "empty round": "$.full_transcript.rounds.cant_miss.responses: the round has no responses",
    "no independent round": "$.full_transcript.rounds.team_independent_differentials: missing",
    "misspelt": "$.full_transcript: missing (the file has 'full_transcrpt': misspelt?)",
    "agents not a list": "$.full_transcript.agents: expected an array, got a string",
    "no content": '$.full_transcript.rounds.cant_miss.responses["Dr. Olivia Chen"].content: missing',
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_file_is_named_with_the_json_path_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    file = _write(tmp_path / "in", "ddx_results_broken.json", _broken(_json(V6), case))
    before = _digest(tmp_path / "in")
    with pytest.raises(IngestError) as raised:
        ingest_lddx([file], tmp_path / "out" / "ds")
    assert str(raised.value).startswith(f"{file}: {BROKEN[case]}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # no output, no staging folder, no parent folder
    assert _digest(tmp_path / "in") == before


def test_a_truncated_file_is_named(tmp_path: Path) -> None:
    text = V8.read_text(encoding="utf-8")
    file = tmp_path / "in" / "ddx_results_truncated.json"
    file.parent.mkdir()
    file.write_text(text[: len(text) // 3], encoding="utf-8")
    with pytest.raises(
        IngestError,
        match=r"ddx_results_truncated\.json: is truncated: the JSON stops before it is complete "
        r"\(.* at line \d+, column \d+\); fix the file, or pass skip_invalid=True",
    ):
        ingest_lddx(tmp_path / "in", tmp_path / "ds")
    file.write_text("{not json}", encoding="utf-8")
    with pytest.raises(IngestError, match=r"ddx_results_truncated\.json: is not valid JSON \(Expecting property name"):
        ingest_lddx(file, tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_two_files_with_different_ground_truth_for_a_case_are_refused(tmp_path: Path) -> None:
    first = _write(tmp_path / "in", "ddx_results_a.json", _minimal(truth=["flu", "sepsis"]))
    second = _write(tmp_path / "in", "ddx_results_b.json", _minimal(truth=["flu", "cold"]))
    with pytest.raises(IngestError) as raised:
        ingest_lddx(tmp_path / "in", tmp_path / "ds")
    assert str(raised.value) == (
        f"{second}: $.ground_truth_diagnoses: case 'Case X' has a different ground truth in {first} "
        "(only here: ['cold']; only there: ['sepsis']); make the two files' ground truth agree, "
        "or pass skip_invalid=True to skip this file"
    )
    assert not (tmp_path / "ds").exists()
    # The same ground truth in another order and with repeats is the same ground truth.
    _write(tmp_path / "in", "ddx_results_b.json", _minimal(truth=["sepsis", "flu", "flu"]))
    truth = ingest_lddx(tmp_path / "in").dataset.collect("ground_truth")
    assert truth.rows() == [("Case X", "flu"), ("Case X", "sepsis")]


def test_a_file_name_given_twice_is_refused(tmp_path: Path) -> None:
    first = _write(tmp_path / "a", "ddx_results_x.json", _minimal())
    second = _write(tmp_path / "b", "ddx_results_x.json", _minimal())
    with pytest.raises(
        IngestError, match=f"{second}: its run_id 'ddx_results_x' \\(the file name\\) is also that of {first}"
    ):
        ingest_lddx([first, second])
    assert ingest_lddx([first, tmp_path / "a"]).runs == 1  # the same file twice is read once


def test_missing_paths_and_empty_folders_are_named(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"missing\.json: no such file or folder"):
        ingest_lddx([tmp_path / "missing.json"])
    with pytest.raises(IngestError, match=r": no ddx_results_\*\.json files in this folder"):
        ingest_lddx([tmp_path])
    with pytest.raises(IngestError, match="no input given"):
        ingest_lddx([])


def test_skip_invalid_ingests_the_other_files_and_lists_the_skipped(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    good = [_write(inputs, f.name, _json(f)) for f in (V6, V8)]
    truncated = inputs / "ddx_results_Case_1_truncated.json"
    truncated.write_text(V6.read_text(encoding="utf-8")[:1000], encoding="utf-8")
    conflicting = _write(inputs, "ddx_results_Case_1_zz.json", {**_json(V6), "ground_truth_diagnoses": ["x"]})
    empty = _write(inputs, "ddx_results_empty.json", _broken(_json(V6), "empty round"))
    result = ingest_lddx(inputs, tmp_path / "ds", skip_invalid=True)
    assert result.runs == 2 and result.files == tuple(good)
    assert [(file, reason.split(":")[0]) for file, reason in result.skipped] == [
        (truncated, "is truncated"),
        (conflicting, "$.ground_truth_diagnoses"),
        (empty, "$.full_transcript.rounds.cant_miss.responses"),
    ]
    assert Dataset.open(tmp_path / "ds").validate().collect("runs")["run_id"].to_list() == [f.stem for f in good]
    with pytest.raises(
        IngestError, match=r"no Local-DDx result could be ingested \(1 file\(s\) skipped: .*is truncated"
    ):
        ingest_lddx(truncated, tmp_path / "ds2", skip_invalid=True)


# -- the output -------------------------------------------------------------------------------


def test_the_output_may_not_be_an_input_and_needs_overwrite(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    file = _write(inputs, "ddx_results_mini.json", _minimal())
    before = _digest(inputs)
    for given, out, how in (
        (inputs, inputs, "is"),
        (inputs, inputs / "ds", "lies inside"),
        (file, file, "is"),
        (file, tmp_path, "holds"),
    ):
        with pytest.raises(OutputError, match=f"the output {how} the input"):
            ingest_lddx(given, out, overwrite=True)
    assert _digest(inputs) == before
    out = tmp_path / "ds"
    ingest_lddx(file, out)
    with pytest.raises(OutputExistsError, match="pass overwrite=True"):
        ingest_lddx(file, out)
    _write(inputs, "ddx_results_mini2.json", _minimal())
    assert ingest_lddx(inputs, out, overwrite=True).runs == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "in"]


# -- the command line -------------------------------------------------------------------------


def test_cli_ingests_a_folder_and_prints_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ds"
    assert run_cli("ingest", "--format", "lddx", LDDX, "--out", out) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"ingested 16 runs from 16 Local-DDx file(s) into {out}: runs 16, agents 136, ")
    assert "reported " in printed.splitlines()[0]
    assert f"warning: {DUPLICATE_NAMES}: $.full_transcript.agents: 2 agents are named 'Dr. David Kim'" in printed
    assert run_cli("validate", out) == 0


def test_cli_errors_are_one_line_and_skip_invalid_continues(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in"
    _write(inputs, V8.name, _json(V8))
    truncated = inputs / "ddx_results_truncated.json"
    truncated.write_text(V8.read_text(encoding="utf-8")[:500], encoding="utf-8")
    assert run_cli("ingest", "--format", "lddx", inputs, "--out", tmp_path / "ds") == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith(f"error: {truncated}: is truncated") and error.rstrip().endswith(
        "pass --skip-invalid to skip the files that cannot be read"
    )
    assert not (tmp_path / "ds").exists()
    assert run_cli("ingest", "--format", "lddx", inputs, "--out", tmp_path / "ds", "--skip-invalid") == 0
    printed = capsys.readouterr().out
    assert printed.startswith("ingested 1 runs from 1 Local-DDx file(s)")
    assert f"skipped {truncated}: is truncated" in printed
    assert run_cli("ingest", "--format", "xml", inputs, "--out", tmp_path / "x") == 2
    assert "ingest: --format='xml' is invalid; --format must be one of 'jsonl', 'lddx'" in capsys.readouterr().err
    assert run_cli("ingest", "--format", "lddx", inputs, "--out", tmp_path / "x", "--rejects", tmp_path / "r") == 2
    assert "--rejects applies to --format jsonl only" in capsys.readouterr().err
    assert run_cli("ingest", "--format", "lddx", inputs, "--out", inputs / "ds") == 2
    assert "the output lies inside the input" in capsys.readouterr().err
