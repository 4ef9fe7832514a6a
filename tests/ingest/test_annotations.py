"""Ingest of failure-mode annotations: ``ingest_annotations`` and ``mas-eval ingest --format annotations``.

Real data: Who&When's hand-crafted failure logs (``tests/data/annotations/who_when``, MIT; the
README says what was kept). MAST's own annotation files could not be had here (only on Hugging
Face); their two layouts are written in the tests as MAST's dataset card and files describe them.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from mas_eval import Dataset
from mas_eval.data.taxonomies import mode_of, modes
from mas_eval.errors import IngestError, InvalidParameterError
from mas_eval.ingest import ingest_annotations
from mas_eval.ingest.annotations import WHO_WHEN_MODE
from tests.promises import assert_unchanged, run, tree

DATA = Path(__file__).parents[1] / "data" / "annotations"
WHO_WHEN = DATA / "who_when"


def _csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _dataset(folder: Path) -> Path:
    """A Dataset of four runs: two systems on two cases, written to ``folder``."""
    runs = pl.DataFrame(
        {"run_id": ["m1", "m2", "s1", "s2"], "system": ["mas", "mas", "single", "single"], "case_id": ["q1", "q2"] * 2}
    )
    outcomes = pl.DataFrame({"run_id": ["m1", "s1"], "name": ["match"] * 2, "value": [1.0, 0.0]})
    Dataset.from_frames(runs=runs, outcomes=outcomes).write(folder)
    return folder


# -- Who&When: real annotations -----------------------------------------------------------------


def test_who_when_hand_crafted_logs_reproduce_the_papers_counts_and_most_blamed_agent() -> None:
    """Who&When (Zhang et al., ICML 2025): 58 hand-crafted Magentic-One failure logs, 30 on GAIA and 28 on
    AssistantBench (the paper's Table 5); the agent most often the decisive error's is WebSurfer (its Figure 6
    and section 4.6: "consistent with the ground truth (agent 3)", agent 3 being WebSurfer)."""
    result = ingest_annotations({WHO_WHEN / "Hand-Crafted": "Magentic-One"})
    ds = result.dataset
    runs, annotations = ds.collect("runs"), ds.collect("annotations")
    assert (result.runs, annotations.height) == (58, 58)
    assert runs["system"].unique().to_list() == ["Magentic-One"]
    assert annotations["mode"].unique().to_list() == [WHO_WHEN_MODE]
    assert annotations["present"].all() and annotations["annotator"].unique().to_list() == ["Who&When"]
    # GAIA's questions have levels 1-3; AssistantBench's logs here have none (Table 5: 30 and 28).
    levels = runs["metadata"].map_elements(lambda m: json.loads(m).get("level"), return_dtype=pl.String)
    assert (levels.is_in(["1", "2", "3"]).sum(), levels.is_null().sum()) == (30, 28)
    blamed = annotations.group_by("agent_id").len().sort("len", descending=True)
    assert blamed.row(0) == ("WebSurfer", 31)
    # The step of the decisive error is kept as the annotation's round, as the log writes it.
    first = annotations.filter(pl.col("run_id") == "Hand-Crafted/1").row(0, named=True)
    assert (first["agent_id"], first["round"]) == ("WebSurfer", "12")
    assert runs.filter(pl.col("run_id") == "Hand-Crafted/1")["target"].item() == "Renzo Gracie Jiu-Jitsu Wall Street"


def test_who_when_system_defaults_to_the_folder_and_the_annotator_can_be_named() -> None:
    result = ingest_annotations(WHO_WHEN / "Algorithm-Generated", annotator="experts")
    annotations = result.dataset.collect("annotations").sort("run_id")
    assert result.dataset.collect("runs")["system"].unique().to_list() == ["Algorithm-Generated"]
    assert annotations.select("run_id", "agent_id", "round", "annotator").rows() == [
        ("Algorithm-Generated/1", "Excel_Expert", "0", "experts"),
        ("Algorithm-Generated/21", "Lyrics_Expert", "0", "experts"),
    ]


# -- CSV: long and wide --------------------------------------------------------------------------


def test_a_long_csv_with_mapped_columns_joins_a_dataset_which_stays_as_it_was(tmp_path: Path) -> None:
    ds_folder = _dataset(tmp_path / "ds")
    before = tree(ds_folder)
    table = _csv(
        tmp_path / "labels.csv",
        "trace,failure,rater,label,agent\nm1,1.3,ann_a,yes,coder\nm1,1.3,ann_b,no,\ns2,FM-2.6,ann_a,TRUE,solo\n",
    )
    columns = {"run_id": "trace", "mode": "failure", "annotator": "rater", "present": "label", "agent_id": "agent"}
    result = ingest_annotations(table, tmp_path / "out", into=ds_folder, columns=columns, taxonomy="mast")
    assert_unchanged(before, ds_folder)
    out = Dataset.open(tmp_path / "out")
    assert set(out.table_names) == {"runs", "outcomes", "annotations"}
    assert out.collect("outcomes").height == 2 and result.runs == 4
    assert out.collect("annotations").select(
        "run_id", "mode", "annotator", "present", "agent_id", "category"
    ).rows() == [
        ("m1", "1.3 Step repetition", "ann_a", True, "coder", "System design issues"),
        ("m1", "1.3 Step repetition", "ann_b", False, None, "System design issues"),
        ("s2", "2.6 Reasoning-action mismatch", "ann_a", True, "solo", "Inter-agent misalignment"),
    ]


def test_a_wide_csv_has_one_column_per_mode_and_blank_cells_are_not_annotations(tmp_path: Path) -> None:
    table = _csv(
        tmp_path / "wide.csv",
        "run_id,system,case_id,annotator,1.1,1.3,custom\nr1,mas,q1,a,1,0,\nr2,single,q1,a,0,,true\n",
    )
    ds = ingest_annotations(table).dataset
    rows = ds.collect("annotations").select("run_id", "mode", "present").rows()
    assert rows == [("r1", "1.1", True), ("r1", "1.3", False), ("r2", "1.1", False), ("r2", "custom", True)]
    assert ds.collect("runs").select("run_id", "system", "case_id").rows() == [
        ("r1", "mas", "q1"),
        ("r2", "single", "q1"),
    ]


def test_a_csv_names_its_system_per_path_and_the_annotator_by_option(tmp_path: Path) -> None:
    table = _csv(tmp_path / "w.csv", "run_id,case_id,1.1\nr1,q1,1\n")
    ds = ingest_annotations({table: "debate"}, annotator="judge").dataset
    assert ds.collect("runs")["system"].item() == "debate"
    assert ds.collect("annotations")["annotator"].item() == "judge"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("run_id,mode,present,case_id,system\nr1,1.1,1,q,s\n", "no column gives the annotator"),
        ("run_id,annotator,present,mode\nr1,a,1,1.1\n", "no column gives case_id"),
        ("mode,annotator,present,case_id,system\n1.1,a,1,q,s\n", "no column gives run_id"),
        ("run_id,annotator,case_id,system\nr1,a,q,s\n", "no mode column"),
    ],
)
def test_a_csv_missing_what_it_needs_is_one_clear_error(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(IngestError, match=says):
        ingest_annotations(_csv(tmp_path / "t.csv", text))


def test_map_names_only_annotation_columns_and_the_taxonomy_must_be_shipped(tmp_path: Path) -> None:
    table = _csv(tmp_path / "t.csv", "run_id,1.1\nr1,1\n")
    with pytest.raises(InvalidParameterError, match="'score' is not an annotation column"):
        ingest_annotations(table, columns={"score": "x"})
    with pytest.raises(InvalidParameterError, match="taxonomy='trail' is not one shipped"):
        ingest_annotations(table, taxonomy="trail")  # type: ignore[arg-type]


# -- MAST's JSON layouts -------------------------------------------------------------------------


def _mast_trace(trace_id: int, key: str, flags: dict[str, object]) -> dict[str, object]:
    """A record of MAST-Data's MAD_full_dataset.json, as its dataset card lists the fields."""
    return {
        "mas_name": "ChatDev",
        "llm_name": "GPT-4o",
        "benchmark_name": "ProgramDev",
        "trace_id": trace_id,
        "trace": {"key": key, "index": trace_id, "trajectory": "[INFO] ..."},
        "mast_annotation": flags,
    }


def test_mast_per_trace_flags_become_annotations_with_the_taxonomys_labels(tmp_path: Path) -> None:
    flags = {m.code: 0 for m in modes("mast")} | {"1.3": 1, "3.3": 1}
    records = [_mast_trace(3, "ChatDev_ProgramDev_GPT4o", flags), _mast_trace(4, "ChatDev_ProgramDev_GPT4o", {})]
    records[1]["mast_annotation"] = dict.fromkeys(flags)  # the judge gave no label: nulls, not zeros
    path = tmp_path / "MAD_full_dataset.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    ds = ingest_annotations(path, taxonomy="mast").dataset
    annotations = ds.collect("annotations")
    assert annotations.height == 14 and set(annotations["run_id"]) == {"ChatDev_ProgramDev_GPT4o/3"}
    assert annotations.filter(pl.col("present"))["mode"].sort().to_list() == [
        "1.3 Step repetition",
        "3.3 Incorrect verification",
    ]
    assert annotations["annotator"].unique().to_list() == ["mast_annotation"]
    run = ds.collect("runs").row(0, named=True)
    assert (run["system"], run["task"], run["variant"], run["case_id"]) == (
        "ChatDev",
        "ProgramDev",
        "GPT-4o",
        "ChatDev_ProgramDev_GPT4o/3",
    )


def test_mast_human_labels_per_annotator_with_nan_for_a_label_not_given(tmp_path: Path) -> None:
    """MAD_human_labelled_dataset.json: per trace a list of {"failure mode": "<code> <name>\\n\\n<definition>",
    "annotator_1": bool, ...}; a missing label is the bare token NaN (which Python's json reads)."""
    text = (
        '[{"round": "Generlazability", "mas_name": "AG2", "benchmark_name": "GSM-Plus", "trace_id": 15, '
        '"trace": "...", "annotations": ['
        '{"failure mode": "1.1 Disobey Task Specification\\n\\nThis error ...", '
        '"annotator_1": true, "annotator_2": true, "annotator_3": false}, '
        '{"failure mode": "2.4 Information Witholding\\n\\n...", '
        '"annotator_1": false, "annotator_2": false, "annotator_3": NaN}]}]'
    )
    path = tmp_path / "MAD_human_labelled_dataset.json"
    path.write_text(text, encoding="utf-8")
    ds = ingest_annotations(path, taxonomy="mast").dataset
    rows = ds.collect("annotations").select("mode", "annotator", "present").rows()
    assert rows == [
        ("1.1 Disobey task specification", "annotator_1", True),
        ("1.1 Disobey task specification", "annotator_2", True),
        ("1.1 Disobey task specification", "annotator_3", False),
        ("2.4 Information withholding", "annotator_1", False),
        ("2.4 Information withholding", "annotator_2", False),
    ]
    assert json.loads(ds.collect("runs")["metadata"].item()) == {"round": "Generlazability"}


def test_a_mode_of_an_earlier_draft_is_not_taken_for_the_mode_of_its_number() -> None:
    # MAST's first agreement round numbered "Inconsistency between reasoning and action" 1.2.
    assert mode_of("1.2 Inconsistency between reasoning and action", "mast") is None
    assert mode_of("1.2", "mast").name == "Disobey role specification"  # type: ignore[union-attr]


def test_json_in_none_of_the_layouts_names_its_keys(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[{"id": 1, "labels": []}]', encoding="utf-8")
    with pytest.raises(IngestError, match=r"record 1: is in none of the layouts read here \(its keys: id, labels\)"):
        ingest_annotations(path)


# -- skip_invalid, and the command line ----------------------------------------------------------


def test_skip_invalid_sets_aside_duplicates_bad_flags_and_runs_described_twice(tmp_path: Path) -> None:
    table = _csv(
        tmp_path / "t.csv",
        "run_id,system,case_id,annotator,mode,present\n"
        "r1,mas,q1,a,1.1,1\n"
        "r1,mas,q1,a,1.1,0\n"  # the same run, mode and annotator again
        "r1,mas,q1,b,1.1,maybe\n"  # not a boolean
        "r1,single,q1,c,1.1,1\n"  # r1 said to be another system's
        "r2,single,q1,a,1.1,0\n",
    )
    result = ingest_annotations(table, skip_invalid=True)
    reasons = [reason for _, reason in result.skipped]
    assert len(reasons) == 3
    assert reasons[0].startswith("row 3: field 'present' is 'maybe', not a boolean")
    assert any("run r1 is of system single, case q1 here, but of system mas" in r for r in reasons)
    assert any("run r1, mode 1.1, annotator a is annotated twice (first at" in r and "row 1)" in r for r in reasons)
    assert result.dataset.collect("annotations").select("run_id", "annotator", "present").rows() == [
        ("r1", "a", True),
        ("r2", "a", False),
    ]


def test_an_annotation_the_dataset_holds_already_is_refused(tmp_path: Path) -> None:
    ds_folder = _dataset(tmp_path / "ds")
    table = _csv(tmp_path / "t.csv", "run_id,annotator,mode,present\nm1,a,x,1\n")
    ingest_annotations(table, tmp_path / "once", into=ds_folder)
    with pytest.raises(IngestError, match="annotator a is annotated in the Dataset already"):
        ingest_annotations(table, tmp_path / "twice", into=tmp_path / "once")
    assert not (tmp_path / "twice").exists()


def test_the_command_line_joins_annotations_onto_a_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds_folder = _dataset(tmp_path / "ds")
    table = _csv(tmp_path / "t.csv", "run_id,1.1,2.3\nm1,1,0\ns1,0,1\n")
    done = run(
        capsys, "ingest", "--format", "annotations", table, "--into", ds_folder, "--annotator", "judge",
        "--taxonomy", "mast", "--out", tmp_path / "out",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert "annotations 4" in done.out
    annotations = Dataset.open(tmp_path / "out").collect("annotations")
    assert annotations["mode"].unique().sort().to_list() == ["1.1 Disobey task specification", "2.3 Task derailment"]
