"""The answer simulator: reproducible, valid, shaped as asked, paired by item, and with the effect it plants."""

from __future__ import annotations

import inspect
import re
from collections import Counter

import polars as pl
import pytest

from mas_eval.errors import InvalidParameterError
from mas_eval.simulation.answers import (
    ANSWER_FILLERS,
    CATEGORIES,
    ENTITIES,
    EVIDENCE,
    FACTS,
    FALLACIES,
    GENERIC_FACTS,
    RATIONALE_FILLERS,
    SLOT_CATEGORIES,
    STRUCTURE,
    TEMPLATES,
    simulate_answers,
)

TEXTS = ("prediction", "rationale", "reference", "reference_rationale")
#: Every way an entity is written -> (category, the entity's name).
FORMS = {
    form: (category, entry if isinstance(entry, str) else entry[0])
    for category in CATEGORIES
    for entry in ENTITIES[category]
    for form in ((entry,) if isinstance(entry, str) else entry)
}
ENTITY = re.compile(
    r"(?<![\w-])(" + "|".join(re.escape(f) for f in sorted(FORMS, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)
LOWER_FORMS = {form.lower(): named for form, named in FORMS.items()}
#: MedAISure's lexicon and token map (tests/data/medaisure_behaviour.md): each is one of the forms, or in one.
MEDAISURE_TERMS = (
    "pneumonia", "sepsis", "stroke", "copd", "asthma", "diabetes", "mi", "myocardial infarction", "heart failure",
    "antibiotics", "oxygen", "ventilation", "insulin", "surgery", "iv fluids", "amoxicillin", "ceftriaxone",
    "azithromycin", "heparin", "aspirin", "fever", "cough", "dyspnea", "tachycardia", "hypotension",
    "shortness of breath", "chest pain", "wbc", "lactate", "troponin", "glucose", "white blood cell", "sob",
    "leukocytosis",
)  # fmt: skip
STRUCTURE_MARKERS = ("because", "therefore", "thus", "hence", "so", "in conclusion", "first", "second", "third", "step")
EVIDENCE_MARKERS = (
    "lab", "wbc", "lactate", "troponin", "imaging", "xray", "x-ray", "ct", "scan", "vitals", "fever", "tachycardia",
    "hypotension", "finding", "study", "source", "evidence",
)  # fmt: skip
FALLACY_MARKERS = (
    "correlation implies causation", "post hoc", "begs the question", "circular reasoning", "non sequitur",
    "because i say", "everyone knows", "obviously true",
)  # fmt: skip
FACT_KEYWORDS = ("antibiotic", "infiltrate", "fluids", "ekg", "aspirin", "heparin")


def _entities(text: str) -> set[str]:
    """The entities (by name) that ``text`` names, on word boundaries, whatever the case."""
    return {LOWER_FORMS[m.lower()][1] for m in ENTITY.findall(text)}


def _normalised(text: str) -> str:
    """MedAISure's normalisation: lower case, one space, the 15 punctuation characters deleted."""
    text = re.sub(r"\s+", " ", text.lower()).strip()
    return re.sub(r"[.,!?;:\-()\[\]{}'\"]", "", text)


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.!?]) ", text)


def _steps(text: str) -> list[str]:
    return [s for s in _sentences(text) if s.startswith(STRUCTURE)]


@pytest.fixture(scope="module")
def small() -> dict[str, pl.DataFrame]:
    return simulate_answers(60, seed=11, items=(10, 20)).validate().frames()


def test_same_seed_gives_identical_tables_and_another_seed_other_data(small: dict[str, pl.DataFrame]) -> None:
    again = simulate_answers(60, seed=11, items=(10, 20)).frames()
    assert list(again) == list(small) == ["runs", "answers"]
    for name, frame in small.items():
        assert frame.equals(again[name]), name
    other = simulate_answers(60, seed=12, items=(10, 20)).frames()
    for column in (*TEXTS, "reference_diagnosis"):
        assert not other["answers"][column].equals(small["answers"][column]), column


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"items": (1, 1), "entities": (1, 1), "answer_chars": 1, "tasks": ("qa",)},
        {"mas_share": 0.3, "entities": (10, 10), "effect": -1.0, "answer_chars": 2000},
        {"items": (3, 9), "entities": (6, 8), "effect": 1.0, "tasks": ["a", "b", "c", "d"]},
    ],
)
def test_every_table_validates(kwargs: dict[str, object]) -> None:
    ds = simulate_answers(30, seed=1, **kwargs).validate()  # type: ignore[arg-type]
    assert ds.table_names == ["runs", "answers"]
    answers = ds.collect("answers")
    # Every column is filled but the specialty: the simulator gives none.
    assert answers.drop("specialty").select(pl.all().null_count()).row(0) == (0,) * (answers.width - 1)
    assert answers["specialty"].null_count() == answers.height


def test_the_note_is_the_reference_rationale_and_the_label_right_as_often_as_the_run_is_good() -> None:
    answers = simulate_answers(200, seed=4, items=(5, 10), effect=1.0).collect("answers")
    runs = simulate_answers(200, seed=4, items=(5, 10), effect=1.0).collect("runs")
    assert (answers["note"] == answers["reference_rationale"]).all()
    right = (
        answers.join(runs.select("run_id", "system"), on="run_id")
        .group_by("system")
        .agg((pl.col("predicted_diagnosis") == pl.col("reference_diagnosis")).mean().alias("right"))
    )
    share = dict(right.iter_rows())
    assert 0 < share["single"] < share["mas"] == 1.0  # effect 1 makes every MAS answer right


def test_runs_items_and_texts_are_as_asked(small: dict[str, pl.DataFrame]) -> None:
    runs, answers = small["runs"], small["answers"]
    assert runs.group_by("system").len().sort("system").rows() == [("mas", 30), ("single", 30)]
    assert runs["run_id"].to_list()[:2] == ["r0000001", "r0000002"]
    assert answers["item_id"].to_list()[0] == "q0000001"
    per_run = answers.group_by("run_id").agg(n=pl.len(), tasks=pl.col("task").unique())
    assert per_run["n"].is_between(10, 20).all()
    assert per_run["tasks"].list.len().unique().to_list() == [1]
    assert set(answers["task"]) <= {"diagnostic_reasoning", "clinical_summarization", "patient_communication"}
    tasks = runs.join(per_run.with_columns(pl.col("tasks").list.first()), on="run_id")
    assert (tasks["task"] == tasks["tasks"]).all()
    calls = runs.join(answers.group_by("run_id").len(), on="run_id")
    single, mas = calls.filter(pl.col("system") == "single"), calls.filter(pl.col("system") == "mas")
    assert (single["api_calls"] == single["len"]).all()
    assert ((mas["api_calls"] % mas["len"]) == 0).all()
    assert (mas["api_calls"] // mas["len"]).is_between(4, 16).all()
    assert mas["iterations"].is_between(1, 3).all() and (single["iterations"] == 1).all()
    assert mas["cost_usd"].mean() > single["cost_usd"].mean() and (runs["tokens"] > 0).all()
    for column in TEXTS:
        assert answers[column].str.len_chars().mean() == pytest.approx(300, rel=0.06), column
    # A reference names 2-5 entities, the first being its diagnosis.
    for reference, diagnosis in answers.select("reference", "reference_diagnosis").iter_rows():
        named = [LOWER_FORMS[m.lower()] for m in ENTITY.findall(reference)]
        assert 2 <= len(named) <= 5
        assert [category for category, _ in named] == list(SLOT_CATEGORIES[: len(named)])
        assert named[0][1].lower() == diagnosis.lower()


def test_every_item_is_answered_by_both_systems_with_the_same_references(small: dict[str, pl.DataFrame]) -> None:
    answers = small["answers"].join(small["runs"].select("run_id", "system", "case_id"), on="run_id")
    shared = ["task", "reference", "reference_rationale", "reference_diagnosis", "case_id"]
    per_item = answers.group_by("item_id").agg(pl.col("system").sort(), *(pl.col(c).n_unique() for c in shared))
    assert per_item.height == answers.filter(pl.col("system") == "mas").height
    assert all(systems == ["mas", "single"] for systems in per_item["system"].to_list())
    assert per_item.select(shared).unique().rows() == [(1,) * len(shared)]
    # Uneven shares: every case still run by both systems, the frequent one repeating cases.
    ds = simulate_answers(50, seed=3, mas_share=0.7, items=(2, 3))
    runs = ds.collect("runs")
    assert runs.group_by("system").len().sort("system").rows() == [("mas", 35), ("single", 15)]
    systems = runs.group_by("case_id").agg(pl.col("system").unique().sort())
    assert systems.height == 15
    assert all(s == ["mas", "single"] for s in systems["system"].to_list())
    answers = ds.collect("answers").join(runs, on="run_id")
    assert answers.group_by("item_id").agg(pl.col("reference").n_unique())["reference"].max() == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runs": 1}, "runs=1 is invalid; runs must be an integer in [2, 250000]"),
        ({"runs": 2.5}, "runs must be an integer in [2, 250000]"),
        ({"seed": -1}, "seed=-1 is invalid"),
        ({"effect": 1.5}, "effect must be a number in [-1, 1]"),
        ({"effect": float("nan")}, "effect must be a number in [-1, 1]"),
        ({"mas_share": 1.0}, "mas_share must be a number in (0, 1)"),
        ({"items": (0, 3)}, "items must be a (min, max) pair of integers in [1, 1000000]"),
        ({"items": (5, 3)}, "with min <= max"),
        ({"entities": (0, 2)}, "entities must be a (min, max) pair of integers >= 1"),
        ({"entities": (2, 11)}, "up to 11 entities per reference answer, but it names at most 10"),
        ({"tasks": ()}, "tasks must be a non-empty list of distinct, non-empty task names"),
        ({"tasks": ("a", "a")}, "tasks must be a non-empty list of distinct"),
        ({"tasks": "qa"}, "tasks='qa' is invalid"),
        ({"answer_chars": 0}, "answer_chars must be an integer in [1, 10000]"),
        ({"progress": 3}, "progress must be a callable"),
        ({"runs": 3, "mas_share": 0.9}, "too few for every case to be run by both systems"),
    ],
)
def test_bad_parameters_are_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    arguments = {"runs": 10, "seed": 0, **kwargs}
    with pytest.raises(InvalidParameterError, match=re.escape(message)) as info:
        simulate_answers(**arguments)  # type: ignore[arg-type]
    assert str(info.value).startswith("simulate_answers: ")


def test_progress_reports_each_table() -> None:
    seen: list[str] = []
    simulate_answers(4, seed=0, items=(5, 5), progress=seen.append)
    assert seen[0].startswith("answers: 20 rows, ")
    assert seen[1] == "runs: 4 rows"


def test_the_vocabularies_hold_what_the_notes_say() -> None:
    # Every MedAISure lexicon term is written by some form, and no form names another entity.
    for term in MEDAISURE_TERMS:
        assert any(re.search(rf"\b{term}\b", form.lower()) for form in FORMS), term
    for form, (_, name) in FORMS.items():
        assert _entities(form) == {name}, form
    # Only the entity sentences name entities; only the steps and fallacies hold reasoning markers.
    others = [*ANSWER_FILLERS, *RATIONALE_FILLERS, *FALLACIES, *STRUCTURE, *EVIDENCE, *GENERIC_FACTS]
    others += [template.replace("{}", "x") for templates in TEMPLATES.values() for template in templates]
    assert not [text for text in others if _entities(text)]
    for filler in RATIONALE_FILLERS:
        text = _normalised(filler)
        assert not [m for m in (*STRUCTURE_MARKERS, *EVIDENCE_MARKERS, *FALLACY_MARKERS, *FACT_KEYWORDS) if m in text]
    for structure in STRUCTURE:
        assert any(m in _normalised(structure) for m in STRUCTURE_MARKERS), structure
    for evidence in EVIDENCE:
        assert any(m in _normalised(evidence) for m in EVIDENCE_MARKERS), evidence
    for fallacy in FALLACIES:
        assert sum(m in _normalised(fallacy) for m in FALLACY_MARKERS) == 1, fallacy
    for facts in FACTS.values():
        assert all(
            any(k in _normalised(fact) for k in (*FACT_KEYWORDS, "xray", "lactate", "troponin")) for fact in facts
        )


@pytest.mark.parametrize("effect", [0.1, 0.0, -0.25])
def test_the_mas_reproduces_each_reference_entity_and_step_more_often_by_effect(effect: float) -> None:
    # 1,000 items, each answered once by each system.
    ds = simulate_answers(20, seed=5, effect=effect, items=(100, 100))
    answers = ds.collect("answers").join(ds.collect("runs").select("run_id", "system"), on="run_id")
    assert answers["item_id"].n_unique() == 1000
    found: dict[str, list[bool]] = {"mas": [], "single": []}
    steps: dict[str, list[int]] = {"mas": [0, 0], "single": [0, 0]}
    wrong: Counter[str] = Counter()
    fallacies = Counter[str]()
    for system, prediction, rationale, reference, reference_rationale in answers.select(
        "system", "prediction", "rationale", "reference", "reference_rationale"
    ).iter_rows():
        expected, predicted = _entities(reference), _entities(prediction)
        found[system] += [name in predicted for name in expected]
        wrong.update(LOWER_FORMS[name.lower()][0] for name in predicted - expected)
        kept = Counter(_steps(reference_rationale)) & Counter(_steps(rationale))
        steps[system][0] += sum(kept.values())
        steps[system][1] += len(_steps(reference_rationale))
        fallacies[system] += any(f in rationale for f in FALLACIES)
    recall = {system: sum(hits) / len(hits) for system, hits in found.items()}
    assert recall["mas"] - recall["single"] == pytest.approx(effect, abs=0.035)
    assert 0.45 < recall["single"] < 0.65
    step_recall = {system: kept / total for system, (kept, total) in steps.items()}
    assert step_recall["mas"] - step_recall["single"] == pytest.approx(effect, abs=0.05)
    # Wrong entities: only diagnoses (p = 0.3) and medications (0.2), at the same rates in both systems.
    assert set(wrong) == {"diagnoses", "medications"}
    assert wrong["diagnoses"] / 2000 == pytest.approx(0.3, abs=0.03)
    assert wrong["medications"] / 2000 == pytest.approx(0.2, abs=0.03)
    assert fallacies["mas"] / 1000 == pytest.approx(0.15, abs=0.035)
    assert fallacies["single"] / 1000 == pytest.approx(0.15, abs=0.035)


def test_the_defaults_satisfy_their_own_constraints() -> None:
    constraints = simulate_answers.__parameter_constraints__  # type: ignore[attr-defined]
    parameters = inspect.signature(simulate_answers).parameters
    for name, allowed in constraints.items():
        default = parameters[name].default
        if default is not inspect.Parameter.empty:
            assert any(c.is_satisfied_by(default) for c in allowed), (name, default)
