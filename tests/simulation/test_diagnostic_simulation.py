"""The diagnosis simulator: reproducible, valid, shaped as asked, paired, and with the effect it plants."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.data.vocabulary import CANT_MISS, DEBATE, FINAL_ROUND, INDEPENDENT, ROUNDS, SYMPTOM_MANAGEMENT, VOTING
from mas_eval.errors import InvalidParameterError
from mas_eval.metrics.diagnosis.collaboration import HIGH_VALUE_KEYWORDS, STRUCTURED_MARKERS, keyword_hits
from mas_eval.metrics.diagnosis.equivalence import match_pairs
from mas_eval.metrics.diagnosis.labels import LABELS, classify, intervention_keywords, label_counts
from mas_eval.simulation.diagnosis import (
    DIAGNOSES,
    EXCLUSIONS,
    FINDINGS,
    LINE_FINDINGS,
    MARKERS,
    OPENERS,
    OTHER_ACTIONS,
    PLAIN,
    REASONING,
    SYMPTOMS,
    TREAT_ENDINGS,
    TREAT_VERBS,
    _vocabulary,
    simulate_diagnosis,
)
from tests.oracles.equivalence import SHIPPED

SMALL = {"agents": (3, 5), "responses": 16, "response_chars": 400}
NAMES = [name for group in DIAGNOSES.values() for name in group]
#: Every fragment a message or an intervention is made of, but the diagnoses and the exclusion sentences.
FRAGMENTS = [
    *(text for texts in OPENERS.values() for text in texts), *MARKERS, *PLAIN, *REASONING, *LINE_FINDINGS,
    *FINDINGS, *SYMPTOMS, *TREAT_VERBS, *TREAT_ENDINGS, *OTHER_ACTIONS,
]  # fmt: skip
EXCLUSION_WORDS = ("exclude", "unlikely", "rule out", "less likely", "tier 4")


@pytest.fixture(scope="module")
def small() -> dict[str, pl.DataFrame]:
    return simulate_diagnosis(120, seed=11, **SMALL).validate().frames()


def test_same_seed_gives_identical_tables_and_another_seed_other_data(small: dict[str, pl.DataFrame]) -> None:
    again = simulate_diagnosis(120, seed=11, **SMALL).frames()
    assert list(again) == list(small)
    for name, frame in small.items():
        assert frame.equals(again[name]), name
    other = simulate_diagnosis(120, seed=12, **SMALL).frames()
    assert not other["ddx"].equals(small["ddx"])
    assert not other["messages"].equals(small["messages"])
    assert not other["ground_truth"].equals(small["ground_truth"])


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"agents": (2, 2), "rounds": 3, "responses": 1, "response_chars": 1, "ground_truth": (1, 1), "tasks": 1},
        {"rounds": 5, "mas_share": 0.3, "ground_truth": (8, 8), "effect": -0.3},
        {"rounds": 6, "agents": (12, 14), "responses": 80, "effect": 1.0},
    ],
)
def test_every_table_validates(kwargs: dict[str, object]) -> None:
    kwargs = {"response_chars": 200, **kwargs}
    ds = simulate_diagnosis(30, seed=1, **kwargs).validate()
    assert ds.table_names == ["runs", "agents", "ddx", "ground_truth", "messages", "interventions"]


def test_teams_rounds_and_message_lengths_are_as_asked() -> None:
    ds = simulate_diagnosis(200, seed=4, agents=(5, 9), responses=30, response_chars=1500)
    runs = ds.collect("runs").select("run_id", "system")
    agents = ds.collect("agents").join(runs, on="run_id").group_by("run_id", "system").len()
    assert agents.filter(pl.col("system") == "single")["len"].unique().to_list() == [1]
    assert agents.filter(pl.col("system") == "mas")["len"].is_between(5, 9).all()
    assert agents.filter(pl.col("system") == "mas")["len"].n_unique() > 1

    messages = ds.collect("messages").join(runs, on="run_id")
    per_run = messages.group_by("run_id", "system").agg(pl.col("round").unique().sort(), n=pl.len())
    mas, single = (per_run.filter(pl.col("system") == s) for s in ("mas", "single"))
    assert mas.height == single.height == 100
    assert all(rounds == sorted(ROUNDS) for rounds in mas["round"].to_list())
    assert all(rounds == sorted([INDEPENDENT, SYMPTOM_MANAGEMENT]) for rounds in single["round"].to_list())
    assert mas["n"].unique().to_list() == [30]
    lengths = messages["text"].str.len_chars()
    assert lengths.mean() == pytest.approx(1500, rel=0.05)
    assert lengths.min() >= 0.6 * 1500
    assert lengths.max() <= 1.4 * 1500

    ddx = ds.collect("ddx").join(runs, on="run_id")
    single_rounds = ddx.filter(pl.col("system") == "single")["round"].unique().sort().to_list()
    assert single_rounds == sorted([FINAL_ROUND, INDEPENDENT])
    team = ddx.filter(pl.col("agent_id") == "team")
    assert team.filter(pl.col("round") == FINAL_ROUND)["stance"].unique().to_list() == ["final"]
    assert team.filter(pl.col("round") == CANT_MISS)["stance"].unique().to_list() == ["critical"]
    assert ddx.filter(pl.col("round") == DEBATE)["stance"].unique().sort().to_list() == ["excluded", "proposed"]
    votes = ddx.filter(pl.col("round") == VOTING)
    assert votes["rank"].is_between(1, 3).all()
    # Each agent's list, and each team list, is ranked 1..n without gaps.
    ranks = ddx.group_by("run_id", "round", "agent_id").agg(ok=pl.col("rank").sort() == pl.int_range(1, pl.len() + 1))
    assert ranks.filter(pl.col("round") != DEBATE)["ok"].list.all().all()


def test_fewer_rounds_leave_out_the_later_ones() -> None:
    ds = simulate_diagnosis(40, seed=2, rounds=4, response_chars=100)
    assert sorted(ds.collect("messages")["round"].unique()) == sorted(ROUNDS[:4])
    assert sorted(ds.collect("ddx")["round"].unique()) == sorted([*ROUNDS[2:4], FINAL_ROUND])


def test_every_case_is_run_by_both_systems_and_shares_its_ground_truth(small: dict[str, pl.DataFrame]) -> None:
    runs = small["runs"]
    systems = runs.group_by("case_id").agg(pl.col("system").unique().sort())
    assert systems.height == 60
    assert all(s == ["mas", "single"] for s in systems["system"].to_list())
    truth = small["ground_truth"].group_by("case_id").len()
    assert sorted(truth["case_id"]) == sorted(systems["case_id"])
    assert truth["len"].is_between(2, 5).all()
    assert set(small["ground_truth"]["diagnosis"]) <= set(NAMES)
    assert set(runs["task"]) == {"ddx1", "ddx2"}
    uneven = simulate_diagnosis(50, seed=3, mas_share=0.7, **SMALL).collect("runs")
    assert uneven.group_by("system").len().sort("system").rows() == [("mas", 35), ("single", 15)]
    assert uneven.filter(pl.col("system") == "single")["case_id"].n_unique() == 15
    assert set(uneven.filter(pl.col("system") == "mas")["case_id"]) == set(uneven["case_id"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runs": 1}, "runs=1 is invalid; runs must be an integer in [2, 330000]"),
        ({"seed": -1}, "seed=-1 is invalid"),
        ({"effect": 1.5}, "effect must be a number in [-1, 1]"),
        ({"mas_share": 0.0}, "mas_share must be a number in (0, 1)"),
        ({"agents": (1, 3)}, "agents must be a (min, max) pair of integers in [2, 1000]"),
        ({"agents": (5, 3)}, "with min <= max"),
        ({"rounds": 2}, "rounds must be an integer in [3, 7]"),
        ({"rounds": 8}, "rounds must be an integer in [3, 7]"),
        ({"responses": 0}, "responses must be an integer in [1, 100000]"),
        ({"response_chars": 0}, "response_chars must be an integer in [1, 20000]"),
        ({"ground_truth": (0, 2)}, "ground_truth must be a (min, max) pair of integers >= 1"),
        ({"ground_truth": (2, 9)}, "up to 9 ground-truth diagnoses per case, but a specialty has 8"),
        ({"tasks": 0}, "tasks must be an integer in [1, 330000]"),
        ({"progress": 3}, "progress must be a callable"),
        ({"runs": 3, "mas_share": 0.9}, "too few for every case to be run by both systems"),
    ],
)
def test_bad_parameters_are_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    arguments = {"runs": 10, "seed": 0, **kwargs}
    with pytest.raises(InvalidParameterError, match=re.escape(message)) as info:
        simulate_diagnosis(**arguments)  # type: ignore[arg-type]
    assert str(info.value).startswith("simulate_diagnosis: ")


def _synonyms() -> dict[str, str]:
    """Lowercase term -> lowercase canonical name, read straight from the shipped CSV."""
    with SHIPPED.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("#")))
    return {term.lower(): canonical.lower() for term, canonical in rows[1:]}


def _names(written: str, synonyms: dict[str, str]) -> set[str]:
    """What a final-list string names: itself, its parenthesised abbreviation, and their canonical names."""
    found = re.fullmatch(r"(.*?)\s*(?:\((.*)\))?", written.lower())
    assert found is not None
    names = {found.group(1).replace("-", " ")}
    if found.group(2):
        names.add(found.group(2))
    return names | {synonyms[n] for n in names if n in synonyms}


@pytest.mark.parametrize("effect", [0.15, 0.0])
def test_the_mas_finds_each_ground_truth_more_often_by_effect(effect: float) -> None:
    ds = simulate_diagnosis(2000, seed=7, effect=effect, responses=8, response_chars=60)
    runs = ds.collect("runs")
    final = ds.collect("ddx").filter(pl.col("round") == FINAL_ROUND)
    truth = ds.collect("ground_truth")
    synonyms = _synonyms()
    listed: dict[str, list[str]] = defaultdict(list)
    for run_id, diagnosis in final.select("run_id", "diagnosis").iter_rows():
        listed[run_id].append(diagnosis)
    truth_of: dict[str, list[str]] = defaultdict(list)
    for case_id, diagnosis in truth.iter_rows():
        truth_of[case_id].append(diagnosis)
    found: dict[str, list[bool]] = {"mas": [], "single": []}
    written_otherwise = 0
    for run_id, system, case_id in runs.select("run_id", "system", "case_id").iter_rows():
        named = [_names(d, synonyms) for d in listed[run_id]]
        for diagnosis in truth_of[case_id]:
            hit = any(diagnosis.lower().replace("-", " ") in n for n in named)
            found[system].append(hit)
            written_otherwise += hit and diagnosis not in listed[run_id]
    share = {system: sum(hits) / len(hits) for system, hits in found.items()}
    assert share["mas"] - share["single"] == pytest.approx(effect, abs=0.04)
    assert 0.3 < share["single"] < 0.6
    assert written_otherwise > 0.2 * sum(found["mas"] + found["single"])

    # The labels (preset "spec") see the same difference in recall.
    counts = label_counts(classify(ds), runs).join(runs.select("run_id", "system"), on="run_id")
    recall = counts.group_by("system").agg(
        (pl.col("tp") / (pl.col("tp") + pl.col("fn") + pl.col("ae") + pl.col("tm_sm"))).mean()
    )
    by_system = dict(recall.rows())
    assert by_system["mas"] - by_system["single"] == pytest.approx(effect, abs=0.04)


def test_every_label_and_both_kinds_of_debate_response_occur() -> None:
    ds = simulate_diagnosis(300, seed=5, response_chars=800)
    labels = classify(ds)
    assert set(labels["label"].cast(pl.String)) == set(LABELS)
    assert {"exact", "synonym"} <= set(labels["tier"].drop_nulls().cast(pl.String))
    debate = ds.collect("messages").filter(pl.col("round") == DEBATE)
    text = pl.col("text")
    marked = pl.any_horizontal([text.str.contains(m, literal=True) for m in STRUCTURED_MARKERS])
    high_value = (keyword_hits(text.str.to_lowercase(), HIGH_VALUE_KEYWORDS) >= 3) | marked
    assert 0.3 < debate.select(high_value.mean()).item() < 0.85


def test_the_vocabulary_plants_labels_only_where_meant() -> None:
    vocabulary = _vocabulary()
    forms = vocabulary.forms.to_list()
    assert len(set(forms)) == len(forms)
    assert all(text.isascii() for text in [*forms, *FRAGMENTS, *(t for pair in EXCLUSIONS for t in pair)])
    for fragment in FRAGMENTS:
        lowered = fragment.lower()
        assert not any(word in lowered for word in EXCLUSION_WORDS), fragment
        assert not any(name.lower() in lowered for name in NAMES), fragment
    for sentence in PLAIN:
        assert not any(k in sentence.lower() for k in HIGH_VALUE_KEYWORDS), sentence
    for sentence in REASONING:
        assert sum(k in sentence.lower() for k in HIGH_VALUE_KEYWORDS) == 1, sentence
    # A ground truth's exclusion pattern never fires on another diagnosis's sentence.
    for name in NAMES:
        others = [f for i, f in enumerate(forms) if vocabulary.names[_owner(vocabulary, i)] != name]
        assert not any(name.lower() in other.lower() for other in others), name
    # No intervention but the ones planted for a ground truth treats one of DIAGNOSES.
    table = intervention_keywords()
    treating = table.filter(pl.col("diagnosis").str.to_lowercase().is_in([n.lower() for n in NAMES]))["keyword"]
    for text in [*SYMPTOMS, *OTHER_ACTIONS, *TREAT_VERBS, *TREAT_ENDINGS]:
        assert not any(k in text.lower() for k in treating), text


def _owner(vocabulary: object, form: int) -> int:
    starts = vocabulary.form_start  # type: ignore[attr-defined]
    return int((starts <= form).sum()) - 1


def test_forms_of_one_diagnosis_match_and_of_two_never() -> None:
    vocabulary = _vocabulary()
    frame = pl.DataFrame(
        {"form": vocabulary.forms, "owner": [_owner(vocabulary, i) for i in range(len(vocabulary.forms))]}
    )
    pairs = match_pairs(frame, frame, left_on="form", right_on="form")
    owner = dict(frame.rows())
    pairs = pairs.with_columns(
        same=pl.col("left").replace_strict(owner) == pl.col("right").replace_strict(owner),
        tier=pl.col("tier").cast(pl.String),
    )
    assert set(pairs.filter("same")["tier"]) <= {"exact", "synonym"}
    assert set(pairs.filter(~pl.col("same"))["tier"]) == {"unmatched"}


def test_progress_names_every_table() -> None:
    seen: list[str] = []
    simulate_diagnosis(10, seed=0, progress=seen.append, **SMALL)
    assert [s.split(":")[0] for s in seen] == ["messages", "runs", "agents", "ddx", "ground_truth", "interventions"]
    assert "MB of text" in seen[0]


def test_the_command_line_simulates_either_kind(tmp_path: Path) -> None:
    from mas_eval.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["simulate", "--kind", "diagnosis", "--runs", "40", "--seed", "2", "--out", str(tmp_path / "dx")])
    assert exited.value.code == 0
    ds = Dataset.open(tmp_path / "dx").validate()
    assert {"ddx", "messages", "ground_truth", "interventions"} <= set(ds.table_names)
    assert ds.collect("runs").height == 40
    with pytest.raises(SystemExit) as exited:
        main(["simulate", "--kind", "diagnoses", "--out", str(tmp_path / "bad")])
    assert exited.value.code == 2 and not (tmp_path / "bad").exists()
