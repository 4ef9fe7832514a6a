"""Local-DDx v8.6 result files: the independent round read from ``metadata.all_diagnoses``.

The four files in ``tests/data/lddx_v8_6`` are real Local-DDx v8.6 outputs (Baglecake/Local-DDx,
``v8/Transcripts/v8_6``, MIT License, Copyright (c) 2025 Baglecake; see the README there). Their
responses carry no ``structured_data`` and their metadata no ``diagnoses_by_agent``: the
diagnoses Local-DDx parsed from the agents' texts are only in ``all_diagnoses``, each item naming
its agent, and Local-DDx's TempoScore of the round is ``1 + 0.1 * len(all_diagnoses)``
(``ddx_synthesis_v6.py``, ``TempoScoreCalculator._calculate_independent_tempo``, reading
``total_diagnoses = len(all_diagnoses)`` as ``ddx_rounds_v6.py`` sets it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.ingest import LddxIngestResult, ingest_lddx
from mas_eval.scoring.reproduction import reproduce

DATA = Path(__file__).parents[1] / "data" / "lddx_v8_6"
FILES = sorted(DATA.glob("ddx_results_*.json"))
INDEPENDENT = "team_independent_differentials"


def _json(file: Path) -> dict[str, Any]:
    return json.loads(file.read_text(encoding="utf-8"))


def _unwrapped(text: str) -> str:
    found = re.fullmatch(r"\*\*(.+)\*\*|\[(.+)\]", text.strip())
    return (found[1] or found[2]).strip() if found else text.strip()


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> LddxIngestResult:
    return ingest_lddx(DATA, tmp_path_factory.mktemp("lddx_v8_6") / "ds")


def test_the_files_are_those_the_readme_names() -> None:
    assert [f.name for f in FILES] == [
        "ddx_results_Case_10_20250719_032153.json",
        "ddx_results_Case_22_20250719_075737.json",
        "ddx_results_Case_29_20250719_183018.json",
        "ddx_results_Case_3_20250719_214301.json",
    ]
    for file in FILES:
        rnd = _json(file)["full_transcript"]["rounds"][INDEPENDENT]
        assert all(r["structured_data"] is None for r in rnd["responses"].values())
        assert "diagnoses_by_agent" not in rnd["metadata"]


@pytest.mark.parametrize("file", FILES, ids=lambda f: f.stem.removeprefix("ddx_results_"))
def test_each_agent_s_differential_is_its_all_diagnoses_items(ingested: LddxIngestResult, file: Path) -> None:
    metadata = _json(file)["full_transcript"]["rounds"][INDEPENDENT]["metadata"]
    listed: dict[str, list[str]] = {}
    for item in metadata["all_diagnoses"]:
        listed.setdefault(item["agent"], []).append(_unwrapped(item["diagnosis"]))
    rows = ingested.dataset.collect("ddx").filter(run_id=file.stem, round=INDEPENDENT)
    assert set(rows["agent_id"]) == set(listed)
    for agent, names in listed.items():
        mine = rows.filter(agent_id=agent).sort("rank")
        assert mine["diagnosis"].to_list() == list(dict.fromkeys(names))
        assert mine["mentions"].to_list() == [names.count(n) for n in dict.fromkeys(names)]
    # Parsed from free text: no evidence lists, so Dr. Reed scores these agents by their text.
    assert rows["evidence"].is_null().all()
    assert rows["stance"].to_list() == ["proposed"] * rows.height
    assert (rows["mentions"].sum() or 0) == len(metadata["all_diagnoses"]) == metadata["total_diagnoses"]


def test_values_read_by_hand_from_the_files(ingested: LddxIngestResult) -> None:
    ddx = ingested.dataset.collect("ddx").filter(round=INDEPENDENT)
    gupta = ddx.filter(run_id="ddx_results_Case_10_20250719_032153", agent_id="Dr. Rajiv Gupta").sort("rank")
    assert gupta["diagnosis"].to_list() == [  # "**Hemothorax with Pulmonary Contusion**", ... in the file
        "Hemothorax with Pulmonary Contusion",
        "Pneumothorax",
        "Acute Myocardial Infarction (AMI)",
        "Hypovolemic Shock",
        "Fractured Ribs",
    ]
    green = ddx.filter(run_id="ddx_results_Case_22_20250719_075737").sort("rank")
    assert green.select("agent_id", "diagnosis", "mentions").rows() == [
        ("Dr. Michael R. Green", "Primary diagnosis", 1),
        ("Dr. Michael R. Green", "Secondary diagnosis", 1),
        ("Dr. Michael R. Green", "Tertiary diagnosis", 1),
        ("Dr. Michael R. Green", "Additional diagnosis if relevant", 2),  # listed twice, merged
    ]
    assert ddx.filter(run_id="ddx_results_Case_29_20250719_183018").is_empty()
    case_3 = ddx.filter(run_id="ddx_results_Case_3_20250719_214301")
    assert dict(case_3.group_by("agent_id").agg(pl.col("mentions").sum()).rows()) == {
        "Dr. Michael Gao": 4,
        "Dr. Emily Johnson": 3,
        "Dr. Lisa Rodriguez": 5,
    }


def test_agents_without_a_recorded_differential_are_named_in_one_warning(ingested: LddxIngestResult) -> None:
    file = DATA / "ddx_results_Case_29_20250719_183018.json"
    agents = list(_json(file)["full_transcript"]["rounds"][INDEPENDENT]["responses"])
    about = [w for w in ingested.warnings if w.startswith(f"{file}: ") and "give no differential" in w]
    assert len(about) == 1
    assert about[0].startswith(f"{file}: $.full_transcript.rounds.{INDEPENDENT}.metadata: {len(agents)} agent(s)")
    assert all(repr(agent) in about[0] for agent in agents)


def test_every_tempo_score_and_credibility_reproduces(ingested: LddxIngestResult) -> None:
    result = reproduce(Dataset.open(ingested.out), "lddx-v8")
    summary = {(m, b): (r, n) for m, b, n, r in result.summary.select("metric", "basis", "items", "reproduced").rows()}
    assert summary[("tempo_score", "messages")] == (28, 28)  # 4 files x 7 rounds
    reproduced, items = summary[("credibility", "messages")]
    assert reproduced == items == sum(len(_json(f)["credibility_scores"]) for f in FILES)
    # The independent round's value, recorded and recomputed: 1 + 0.1 x the items of all_diagnoses.
    rounds = result.scores["rounds"].filter(round=INDEPENDENT)
    recomputed = dict(rounds.select("run_id", "tempo_score").rows())
    assert recomputed == pytest.approx(
        {
            "ddx_results_Case_3_20250719_214301": 2.2,
            "ddx_results_Case_10_20250719_032153": 1.5,
            "ddx_results_Case_22_20250719_075737": 1.5,
            "ddx_results_Case_29_20250719_183018": 1.0,
        },
        abs=1e-12,
    )
    for file in FILES:
        recorded = _json(file)["round_completion"]["tempo_scores"][INDEPENDENT]
        assert recomputed[file.stem] == pytest.approx(recorded, abs=1e-12)
