"""The report's "Failure modes" section (``mas_eval.report.failures``): there when the Dataset given has
annotations, absent otherwise; its table is ``failure_rates``' and its figure the heat map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import mas_eval
from mas_eval.ingest import ingest_annotations
from mas_eval.report import build
from mas_eval.report.failures import failures_section, has_annotations

WHO_WHEN = Path(__file__).parents[1] / "data" / "annotations" / "who_when"


@pytest.fixture(scope="module")
def annotated() -> mas_eval.Dataset:
    """A MAS and a single agent on 40 cases, two annotators' labels of two modes; the MAS repeats steps often."""
    ds = mas_eval.simulate_outcomes(80, epochs=1, seed=3)
    runs = ds.collect("runs")
    rng = np.random.default_rng(2)
    rows = []
    for run, system in runs.select("run_id", "system").rows():
        for mode, p in (
            ("1.1 Disobey task specification", 0.2),
            ("1.3 Step repetition", 0.8 if system == "mas" else 0.1),
        ):
            truth = bool(rng.random() < p)
            rows += [(run, mode, who, truth if rng.random() < 0.95 else not truth) for who in ("a", "b")]
    annotations = pl.DataFrame(rows, schema=["run_id", "mode", "annotator", "present"], orient="row")
    return mas_eval.Dataset.from_frames(**{name: ds.collect(name) for name in ds.table_names}, annotations=annotations)


def test_the_section_holds_the_rates_the_heat_map_and_what_differs(annotated: mas_eval.Dataset) -> None:
    section = failures_section(annotated, "mas", "single")
    assert [t.name for t in section.tables] == ["failure_rates"]
    assert section.tables[0].frame.equals(mas_eval.stats.failure_rates(annotated))
    [figure] = section.figures
    assert figure.name == "failure_modes" and "paired difference mas − single" in figure.caption
    drawn = [t.get_text() for t in figure.figure.axes[0].texts if t.get_gid() == "failure_difference"]
    assert drawn[1].endswith("pp*")  # step repetition: the planted difference, significant after Holm
    assert any("1.3 Step repetition (+" in line and "after Holm's correction" in line for line in section.text)
    assert any("Agreement of the 2 annotators over 160 labelled (run, mode) pairs" in line for line in section.text)


def test_build_adds_the_section_only_for_a_dataset_with_annotations_and_one_system_is_said() -> None:
    assert not has_annotations(None) and not has_annotations(mas_eval.simulate_outcomes(20, epochs=1, seed=1))
    who_when = ingest_annotations({WHO_WHEN / "Hand-Crafted": "Magentic-One"}).dataset
    report = build(mas_eval.score(who_when), dataset=who_when)
    assert [s.key for s in report.sections][-3:] == ["failures", "not_in_data", "provenance"]
    section = report.section("failures")
    assert section.text[1] == "No paired comparison of the failure modes: no annotated run of mas or of single."
    assert section.text[2] == "One annotator labelled the runs: no agreement to measure."
    assert section.tables[0].frame.select("system", "n", "present").row(0) == ("Magentic-One", 58, 58)
    assert section.figures[0].caption == "Failure-mode rates by system."
