"""BenchmarkReport (the MedAISure metrics overview): MedAISure's report read (placeholders kept and flagged), the
combined score added, and the JSON, Markdown and HTML exports; the two commands that use it."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from mas_eval.cli import main
from mas_eval.errors import (
    DataError,
    InvalidParameterError,
    OutputError,
    OutputExistsError,
    SchemaError,
    UnreadableFileError,
)
from mas_eval.report import BenchmarkReport, DetailedResult, read_medaisure_report
from tests.conftest import FIXTURES, run_cli_process

FIXTURE = FIXTURES / "medaisure" / "b95deaa7.json"
needs_medaisure = pytest.mark.skipif(not FIXTURE.is_file(), reason=f"{FIXTURE} is not beside this clone (CI has it)")

SECTIONS = ["overall", "tasks", "details", "metadata"]
TITLES = ["Overall Scores", "Task Scores", "Detailed Results", "Metadata"]
PAYLOAD = "<script>alert(1)</script>"
WEIGHTS = {"diagnostics": 0.4, "safety": 0.3, "communication": 0.2, "summarization": 0.1}
WEIGHTS_ARG = "diagnostics=0.4,safety=0.3,communication=0.2,summarization=0.1"


def run_cli(*args: str | Path) -> int:
    with pytest.raises(SystemExit) as exited:
        main([str(a) for a in args])
    return int(exited.value.code or 0)


class _Page(HTMLParser):
    """Tags, sections, the combined-score block's position, the URLs a browser would load, and the text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.sections: list[str] = []
        self.headings: list[str] = []
        self.urls: list[str] = []
        self.combined_at: int | None = None
        self.text: list[str] = []
        self._in_h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "section":
            self.sections.append(str(values["id"]))
        if values.get("id") == "combined":
            self.combined_at = len(self.sections)
        self._in_h2 = tag == "h2"
        self.urls += [str(v) for k, v in attrs if k in ("src", "href", "xlink:href", "data", "action") and v]

    def handle_endtag(self, tag: str) -> None:
        self._in_h2 = False if tag == "h2" else self._in_h2

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_h2:
            self.headings.append(data)


def _page(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def _items(prediction: str = "pneumonia") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": ["r1", "r1", "r1", "r1"],
            "item_id": ["q1", "q2", "q3", "s1"],
            "task": ["qa", "qa", "qa", "summary"],
            "prediction": [prediction, "flu", "asthma", "short note"],
            "reference": ["pneumonia", "covid", "asthma", "long note"],
            "clinical_accuracy": [1.0, 0.0, 0.5, 0.9],
            "reasoning_quality": [0.6, 0.2, 0.4, None],
            "rouge_l": [None, None, None, 0.3],
        }
    )


@pytest.fixture
def report() -> BenchmarkReport:
    return BenchmarkReport.from_items(
        _items(), model_id="mas-v1", timestamp=datetime(2025, 9, 6, 4, 28, 54, 577703, tzinfo=UTC)
    )


# -- MedAISure's own report -------------------------------------------------------------------


@needs_medaisure
def test_medaisure_report_is_read_with_its_placeholders_kept_and_flagged() -> None:
    original = json.loads(FIXTURE.read_text(encoding="utf-8"))
    report = read_medaisure_report(FIXTURE)
    assert report.model_id == "sshleifer/tiny-gpt2" and report.schema_version == 1
    assert report.timestamp == datetime(2025, 9, 6, 4, 28, 54, 577703, tzinfo=UTC)
    assert report.overall_scores == original["overall_scores"]
    assert report.task_scores == original["task_scores"]
    assert report.metadata == original["metadata"]
    # Both tasks' evaluations failed: MedAISure wrote 0.0 placeholders; none is dropped, each is flagged.
    assert [r.task_id for r in report.detailed_results] == [
        "patient_communication_basic",
        "patient_communication_triage",
    ]
    assert all(r.placeholder for r in report.detailed_results)
    assert report.flagged_results == report.detailed_results
    assert report.placeholder_tasks == list(original["task_scores"])
    first = report.detailed_results[0]
    assert first.metrics_results == {"rouge_l": 0.0, "clinical_relevance": 0.0}
    assert "metrics_results values must be finite numbers" in str(first.error)
    assert first.flag == "Placeholder result due to evaluation failure: 1 validation error for EvaluationResult"


@needs_medaisure
def test_medaisure_report_written_as_json_keeps_every_field() -> None:
    original = json.loads(FIXTURE.read_text(encoding="utf-8"))
    written = json.loads(read_medaisure_report(FIXTURE).to_json())
    # Only the timestamps' spelling changes ("2025-09-06 04:28:54..." becomes ISO 8601's "T").
    for document in (original, written):
        document.pop("timestamp")
        for result in document["detailed_results"]:
            result.pop("timestamp")
    assert written == original


def test_a_legacy_placeholder_without_an_error_is_flagged_too() -> None:
    note = "Placeholder result - no tasks completed successfully"
    result = DetailedResult(task_id="unknown", metrics_results={"score": 0.0}, metadata={"note": note})
    assert result.placeholder and result.error is None and result.flag == note
    assert not DetailedResult(task_id="qa", metadata={"note": "fine"}).placeholder
    # Kept in a report (its model filled in, as MedAISure names it per result), and read back equal.
    report = BenchmarkReport(model_id="m", task_scores={"unknown": {"score": 0.0}}, detailed_results=[result])
    assert result.model_id == "m" and report.placeholder_tasks == ["unknown"]
    assert BenchmarkReport.from_dict(json.loads(report.to_json())) == report


# -- per-task means, overall mean, combined score ---------------------------------------------


def test_from_items_takes_per_task_means_and_the_mean_across_tasks(report: BenchmarkReport) -> None:
    assert report.task_scores == {
        "qa": {"clinical_accuracy": 0.5, "reasoning_quality": pytest.approx(0.4, abs=1e-15)},
        "summary": {"clinical_accuracy": 0.9, "rouge_l": 0.3},
    }
    # The mean of the task means, (0.5 + 0.9)/2, not the mean of the four items (0.6).
    assert report.overall_scores == pytest.approx({"clinical_accuracy": 0.7, "reasoning_quality": 0.4, "rouge_l": 0.3})
    qa = report.detailed_results[0]
    assert qa.task_id == "qa" and qa.metadata == {"items": 3}
    assert qa.model_outputs[0] == {"run_id": "r1", "item_id": "q1", "prediction": "pneumonia"}
    assert qa.inputs[0] == {"run_id": "r1", "item_id": "q1", "reference": "pneumonia"}
    assert not report.flagged_results


def test_add_combined_score_writes_it_per_task_and_overall(report: BenchmarkReport) -> None:
    result = report.add_combined_score(WEIGHTS)
    # qa: diagnostics 0.5, communication 0.4: (0.4*0.5 + 0.2*0.4)/0.6 = 0.28/0.6 = 0.46667
    # summary: diagnostics 0.9, summarization 0.3: (0.4*0.9 + 0.1*0.3)/0.5 = 0.39/0.5 = 0.78
    assert report.task_scores["qa"]["combined_score"] == pytest.approx(0.28 / 0.6, abs=1e-15)
    assert report.task_scores["summary"]["combined_score"] == pytest.approx(0.78, abs=1e-15)
    assert report.overall_scores["combined_score"] == pytest.approx((0.28 / 0.6 + 0.78) / 2, abs=1e-15)
    assert result.overall == report.overall_scores["combined_score"]
    assert report.metadata["combined_weights"] == WEIGHTS
    assert report.metadata["combined_metric_name"] == "combined_score"
    assert report.metadata["combined_renormalize_missing"] is True
    # Again, without renormalisation: replaced, not added beside (0.28 and 0.39).
    report.add_combined_score(WEIGHTS, renormalize_missing=False)
    assert report.task_scores["qa"]["combined_score"] == pytest.approx(0.28, abs=1e-15)
    assert report.overall_scores["combined_score"] == pytest.approx((0.28 + 0.39) / 2, abs=1e-15)
    # A weight on a category no task has: no task gets a value, and none is left behind.
    report.add_combined_score({"safety": 1.0})
    assert "combined_score" not in report.overall_scores
    assert all("combined_score" not in scores for scores in report.task_scores.values())
    with pytest.raises(InvalidParameterError, match="'rouge_l' is already a metric of the report"):
        report.add_combined_score(WEIGHTS, "rouge_l")
    with pytest.raises(
        InvalidParameterError, match=r"BenchmarkReport.add_combined_score: metric_name=' ' is invalid; .*a non-empty"
    ):
        report.add_combined_score(WEIGHTS, " ")


def _medaisure_combined_report() -> BenchmarkReport:
    """From MedAISure tests/test_report_combined_outputs_test.py (_make_report_with_combined)."""
    report = BenchmarkReport(
        model_id="test-model", task_scores={"t1": {"diagnostics": 0.8, "safety": 0.6}, "t2": {"diagnostics": 0.4}}
    )
    report.add_combined_score({"diagnostics": 0.5, "safety": 0.5}, metric_name="combined_score")
    return report


def test_the_report_records_and_shows_where_each_combined_value_came_from() -> None:
    report = _medaisure_combined_report()
    assert report.task_scores["t1"]["combined_score"] == pytest.approx(0.7, abs=1e-12)
    assert report.task_scores["t2"]["combined_score"] == pytest.approx(0.4, abs=1e-12)
    assert report.metadata["combined_sources"] == {
        "t1": {"diagnostics": "task value", "safety": "task value"},
        "t2": {"diagnostics": "task value"},
    }
    mixed = BenchmarkReport(model_id="m", task_scores={"qa": {"accuracy": 0.5, "clinical_accuracy": 0.7}})
    mixed.add_combined_score({"diagnostics": 1.0})
    markdown = mixed.to_markdown()
    assert "| task | key | value from |" in markdown
    assert "| qa | diagnostics | category mean of \\[accuracy, clinical_accuracy\\] |" in markdown
    page = _Page()
    page.feed(mixed.to_html())
    text = " ".join(page.text)
    assert "category mean of [accuracy, clinical_accuracy]" in text and "value from" in text


@pytest.mark.parametrize("render", ["to_json", "to_markdown", "to_html"])
def test_every_format_holds_the_combined_score(render: str) -> None:
    # From MedAISure tests/test_report_combined_outputs_test.py:
    # test_json_report_contains_combined_score, test_markdown_..., test_html_... (the CSV one: test_csv_*)
    report = _medaisure_combined_report()
    text = getattr(report, render)()
    assert "combined_score" in text
    if render == "to_json":
        payload = json.loads(text)
        assert "combined_score" in payload["overall_scores"]
        assert all("combined_score" in scores for scores in payload["task_scores"].values())
    else:
        assert "Overall Scores" in text


# -- JSON --------------------------------------------------------------------------------------


def test_json_round_trips_exactly(report: BenchmarkReport, tmp_path: Path) -> None:
    report.add_combined_score(WEIGHTS)
    report.task_scores["qa"]["tiny"] = 5e-324  # digits JSON must keep
    report.overall_scores["third"] = 0.1 + 0.2
    path = report.write(tmp_path / "report.json")
    loaded = BenchmarkReport.read(path)
    assert loaded == report
    assert_frame_equal(loaded.task_table, report.task_table, check_exact=True)
    assert_frame_equal(loaded.overall_table, report.overall_table, check_exact=True)
    assert loaded.task_scores["qa"]["tiny"] == 5e-324 and loaded.overall_scores["third"] == 0.1 + 0.2
    assert json.loads(path.read_text(encoding="utf-8"))["schema_version"] == 1


@needs_medaisure
def test_json_of_medaisure_report_round_trips(tmp_path: Path) -> None:
    report = read_medaisure_report(FIXTURE)
    assert BenchmarkReport.read(report.write(tmp_path / "r.json")) == report


# -- Markdown ----------------------------------------------------------------------------------


def test_markdown_has_the_sections_with_the_combined_score_on_top(report: BenchmarkReport) -> None:
    report.add_combined_score(WEIGHTS)
    text = report.to_markdown()
    positions = [text.index(f"\n## {title}\n") for title in TITLES]
    assert positions == sorted(positions)
    top = text[: positions[0]]
    assert f"**combined_score: {(0.28 / 0.6 + 0.78) / 2:.4f}**" in top
    assert "Weights: diagnostics 0.4 (40%), safety 0.3 (30%), communication 0.2 (20%), summarization 0.1 (10%)" in top
    assert "| **combined_score** | **0.6233** |" in text
    assert "| task | combined_score | clinical_accuracy | reasoning_quality | rouge_l | flag |" in text
    assert "1. input: {&quot;run_id&quot;" not in text and '1. input: {"run_id": "r1"' in text


@needs_medaisure
def test_markdown_warns_of_placeholder_tasks() -> None:
    text = read_medaisure_report(FIXTURE).to_markdown()
    assert "> **Warning:** 2 of 2 task(s) hold only placeholder results" in text
    assert "| patient_communication_basic | 0.0000 | 0.0000 | 0.0000 | placeholder (evaluation failed) |" in text
    assert "**combined_score" not in text  # the file has none


# -- HTML --------------------------------------------------------------------------------------


@needs_medaisure
def test_html_holds_every_section_and_fetches_nothing() -> None:
    report = read_medaisure_report(FIXTURE)
    report.add_combined_score(WEIGHTS)
    text = report.to_html()
    page = _page(text)
    assert page.sections == SECTIONS
    assert page.headings == TITLES
    assert page.combined_at == 0, "the combined score comes before the first section"
    assert not {"script", "link", "img", "iframe", "object", "embed"} & set(page.tags)
    assert page.urls and all(url.startswith("#") for url in page.urls), page.urls
    assert "url(" not in text and "@import" not in text
    body = " ".join(page.text)
    assert "Warning: 2 of 2 task(s) hold only placeholder results" in body
    assert "Placeholder result due to evaluation failure" in body


def test_html_escapes_every_user_supplied_string() -> None:
    items = _items(prediction=PAYLOAD).with_columns(task=pl.lit(PAYLOAD), item_id=pl.lit(f'q"{PAYLOAD}'))
    report = BenchmarkReport.from_items(items, model_id=PAYLOAD, metadata={PAYLOAD: PAYLOAD})
    report.task_scores[PAYLOAD][PAYLOAD] = 0.5
    report.overall_scores[PAYLOAD] = 0.5
    report.add_combined_score({"diagnostics": 1.0}, PAYLOAD + "x")
    report.detailed_results[0].metadata.update(error=PAYLOAD)
    html = report.to_html()
    assert PAYLOAD not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    page = _page(html)
    assert "script" not in page.tags
    assert page.sections == SECTIONS
    assert PAYLOAD in " ".join(page.text), "the prediction is shown, as text"
    markdown = report.to_markdown()
    assert PAYLOAD not in markdown and "&lt;script&gt;" in markdown


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        (None, UnreadableFileError, "no such file; pass a MedAISure report JSON"),
        ("", UnreadableFileError, "is empty"),
        ("{", UnreadableFileError, r":1: not valid JSON"),
        (b"\xff\xfe{}", UnreadableFileError, "not UTF-8 text"),
        ("[1, 2]", SchemaError, "is list, not an object of report fields"),
        ('{"overall_scores": {}}', SchemaError, "not a MedAISure BenchmarkReport \\(no 'model_id'\\)"),
        ('{"model_id": ""}', SchemaError, "model_id is ''; it must be a non-empty string"),
        ('{"model_id": "m", "task_scores": {"t": {"acc": "high"}}}', SchemaError, r"\['acc'\] is 'high', not a num"),
        ('{"model_id": "m", "overall_scores": {"acc": NaN}}', DataError, r"\['acc'\] is nan; scores must be finite"),
        ('{"model_id": "m", "detailed_results": [{"inputs": []}]}', SchemaError, r"\[0\] has no 'task_id'"),
        ('{"model_id": "m", "detailed_results": {}}', SchemaError, "detailed_results is dict, not a list"),
        ('{"model_id": "m", "timestamp": "yesterday"}', SchemaError, "timestamp is 'yesterday', not an ISO 8601"),
        ('{"model_id": "m", "schema_version": 2}', SchemaError, "schema_version is 2, newer than"),
    ],
)
def test_a_bad_report_file_is_one_clear_error_naming_it(
    tmp_path: Path, content: str | bytes | None, error: type[Exception], message: str
) -> None:
    path = tmp_path / "report.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(error, match=message) as raised:
        read_medaisure_report(path)
    assert str(path) in str(raised.value)


def test_a_bad_report_object_is_refused() -> None:
    with pytest.raises(DataError, match=r"BenchmarkReport.overall_scores\['m'\] is inf"):
        BenchmarkReport(model_id="m", overall_scores={"m": math.inf})
    with pytest.raises(DataError, match="metadata cannot be written as JSON"):
        BenchmarkReport(model_id="m", metadata={"when": datetime.now(UTC)})
    with pytest.raises(SchemaError, match=r"detailed_results\[0\] is dict, not a DetailedResult"):
        BenchmarkReport(model_id="m", detailed_results=[{"task_id": "t"}])  # type: ignore[list-item]


def test_writing_refuses_a_bad_suffix_an_existing_file_and_the_input(report: BenchmarkReport, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"r\.pdf: a benchmark report is written as \.json, \.md, \.html"):
        report.write(tmp_path / "r.pdf")
    (tmp_path / "r.html").write_text("old", encoding="utf-8")
    with pytest.raises(OutputExistsError, match="already exists"):
        report.write(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == "old"
    with pytest.raises(OutputError, match="the output is the input"):
        report.write(tmp_path / "r.html", overwrite=True, inputs=[tmp_path / "r.html"])
    assert report.write(tmp_path / "r.html", overwrite=True).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


# -- the command line --------------------------------------------------------------------------


def _report_file(tmp_path: Path) -> Path:
    """t1 has every category, t2 two, t3 one, t4 none (tests/report/test_combined_score.py's hand computation)."""
    tasks = {
        "t1": {"clinical_accuracy": 0.9, "accuracy": 0.7, "safety": 0.6, "reasoning_quality": 0.5, "rouge_l": 0.2},
        "t2": {"clinical_accuracy": 0.8, "rouge_l": 0.4, "clinical_relevance": 0.6},
        "t3": {"coherence": 0.3},
        "t4": {"bleu": 0.5},
    }
    path = tmp_path / "in.json"
    BenchmarkReport(model_id="m", task_scores=tasks).write(path)
    return path


def test_combined_score_cli_prints_and_writes_the_hand_computed_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _report_file(tmp_path)
    assert run_cli("combined-score", source, "--weights", WEIGHTS_ARG, "--out", tmp_path / "out.json") == 0
    printed = capsys.readouterr().out
    assert "combined_score overall: 0.5533 over 3 task(s)" in printed  # (0.62 + 0.74 + 0.3)/3
    assert "no weighted category, so no combined_score, in task(s): t4" in printed
    written = BenchmarkReport.read(tmp_path / "out.json")
    assert {t: s.get("combined_score") for t, s in written.task_scores.items()} == pytest.approx(
        {"t1": 0.62, "t2": 0.74, "t3": 0.3, "t4": None}, abs=1e-15
    )
    assert written.metadata["combined_weights"] == WEIGHTS
    args = ["--weights", WEIGHTS_ARG, "--no-renormalize", "--name", "combo", "--out", tmp_path / "plain.md"]
    assert run_cli("combined-score", source, *args) == 0
    assert "combo overall: 0.3500 over 3 task(s)" in capsys.readouterr().out  # (0.62 + 0.37 + 0.06)/3
    text = (tmp_path / "plain.md").read_text(encoding="utf-8")
    assert "**combo: 0.3500** (mean over 3 of 4 task(s); a missing category counts 0)" in text


@needs_medaisure
def test_benchmark_report_writes_each_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for suffix in (".json", ".md", ".html"):
        out = tmp_path / f"report{suffix}"
        assert run_cli("benchmark-report", FIXTURE, "--out", out) == 0
        printed = capsys.readouterr().out
        assert "wrote the benchmark report of sshleifer/tiny-gpt2 (2 task(s), 2 detailed result(s))" in printed
        assert "2 placeholder result(s) kept and flagged" in printed
        assert out.is_file()
    assert BenchmarkReport.read(tmp_path / "report.json") == read_medaisure_report(FIXTURE)


@pytest.mark.subprocess
def test_ingest_of_a_medaisure_report_points_to_benchmark_report(tmp_path: Path) -> None:
    # A MedAISure report is a model's scores per task, not runs: `ingest` wrote it as a report, never a Dataset.
    source = _report_file(tmp_path)
    done = run_cli_process("ingest", "--format", "medaisure", source, "--out", tmp_path / "r.json")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ingest: a MedAISure report (--format medaisure)") and "makes no Dataset" in line
    assert line.endswith("mas-eval benchmark-report REPORT --out OUT")
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--weights", "diagnostics=-0.4"], "weight diagnostics=-0.4 is invalid"),
        (["--weights", "diagnostics=inf"], "weight diagnostics=inf is invalid"),
        (["--weights", "diagnostics=0,safety=0"], "sum to 0"),
        (["--weights", "diagnostic=1"], "weights name 'diagnostic', neither a category"),
        (["--weights", "diagnostics"], "'diagnostics' is not key=number"),
        (["--weights", "diagnostics=1", "--name", "rouge_l"], "'rouge_l' is already a metric of the report"),
        (["--weights", "diagnostics=1", "--out", "{tmp}/r.pdf"], "a benchmark report is written as .json, .md"),
        (["--weights", "diagnostics=1", "--out", "{source}"], "the output is the input"),
        (["--weights", "diagnostics=1", "--out", "{tmp}/exists.json"], "already exists; pass --overwrite"),
    ],
)
def test_combined_score_cli_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    source = _report_file(tmp_path)
    (tmp_path / "exists.json").write_text("old", encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [a.format(tmp=tmp_path, source=source) for a in args]
    assert run_cli("combined-score", source, *argv) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()) and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "exists.json").read_text(encoding="utf-8") == "old"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{fixture}", "{fixture}", "--out", "{tmp}/r.json"], "Got unexpected extra argument"),
        (["{fixture}", "--out", "{tmp}/r"], "a benchmark report is written as .json, .md, .html"),
        (["{fixture}", "--out", "{fixture}"], "the output is the input"),
        (["{tmp}/missing.json", "--out", "{tmp}/r.json"], "missing.json: no such file"),
        (["{tmp}/bad.json", "--out", "{tmp}/r.json"], "bad.json:1: not valid JSON"),
    ],
)
def test_benchmark_report_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    fixture = _report_file(tmp_path)
    argv = [a.format(tmp=tmp_path, fixture=fixture) for a in args]
    assert run_cli("benchmark-report", *argv) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()) and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r").exists()


@pytest.mark.subprocess
def test_combined_score_cli_in_a_fresh_process(tmp_path: Path) -> None:
    source = _report_file(tmp_path)
    done = run_cli_process("combined-score", source, "--weights", WEIGHTS_ARG)
    assert done.returncode == 0, done.stderr
    assert "combined_score overall: 0.5533 over 3 task(s)" in done.stdout
    assert "t1" in done.stdout and "0.6200" in done.stdout
    done = run_cli_process("combined-score", source, "--weights", "safety=nan", "--out", tmp_path / "o.json")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: weight safety=nan is invalid; weight safety must be a number >= 0"
    ]
    assert not (tmp_path / "o.json").exists()


@needs_medaisure
def test_combined_score_cli_names_the_categories_no_task_has(capsys: pytest.CaptureFixture[str]) -> None:
    # MedAISure's report has only summarization metrics (rouge_l, clinical_relevance, summarization):
    # the other three categories would be empty columns, so they are named below the table instead.
    assert run_cli("combined-score", FIXTURE, "--weights", WEIGHTS_ARG) == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.strip().startswith("task"))
    assert header.split() == ["task", "combined_score", "summarization", "summarization", "source"]
    assert "no task has a value of: diagnostics, safety, communication" in printed
    # The report holds MedAISure's own summarization aggregate per task: that value is combined, and says so.
    rows = [line.split() for line in printed.splitlines() if line.strip().startswith("patient_communication")]
    assert rows and all(row[-2:] == ["task", "value"] for row in rows)


# -- CSV (MedAISure's CSV report generator's layout) --------------------------------------------------------


def _csv_sample_report() -> BenchmarkReport:
    """From MedAISure tests/test_csv_report_generator.py (make_sample_report)."""
    result = DetailedResult(
        task_id="task_a",
        model_id="unit-model",
        inputs=[{"q": "a?", "id": 1}],
        model_outputs=[{"a": "x", "score": 0.7}],
        metrics_results={"accuracy": 0.9, "f1": 0.8},
        timestamp=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    return BenchmarkReport(
        model_id="unit-model",
        overall_scores={"accuracy": 0.91, "f1": 0.82},
        task_scores={"task_a": {"accuracy": 0.92, "f1": 0.83}, "task_b": {"accuracy": 0.90, "f1": 0.81}},
        detailed_results=[result],
        metadata={"run_id": "unit-1234"},
    )


def test_csv_tables_have_medaisures_files_and_headers() -> None:
    # From MedAISure tests/test_csv_report_generator.py::test_csv_generate_and_save_dir (the five files),
    # with the headers its generator's validate() requires.
    tables = _csv_sample_report().csv_tables()
    assert list(tables) == [
        "overall_scores.csv", "task_scores.csv", "detailed_metrics.csv", "detailed_inputs.csv",
        "detailed_outputs.csv", "combined_sources.csv",
    ]  # fmt: skip
    assert tables["overall_scores.csv"].rows() == [("accuracy", 0.91), ("f1", 0.82)]
    assert tables["task_scores.csv"].columns == ["task_id", "metric", "score"]
    assert tables["task_scores.csv"].rows() == [
        ("task_a", "accuracy", 0.92), ("task_a", "f1", 0.83), ("task_b", "accuracy", 0.90), ("task_b", "f1", 0.81),
    ]  # fmt: skip
    assert tables["detailed_metrics.csv"].rows() == [
        ("unit-model", "task_a", "2025-01-02T03:04:05+00:00", "accuracy", 0.9),
        ("unit-model", "task_a", "2025-01-02T03:04:05+00:00", "f1", 0.8),
    ]
    assert tables["detailed_inputs.csv"].rows(named=True) == [{"task_id": "task_a", "index": 0, "q": "a?", "id": "1"}]
    assert tables["detailed_outputs.csv"].columns == ["task_id", "index", "a", "score"]
    assert tables["detailed_outputs.csv"].row(0) == ("task_a", 0, "x", "0.7")
    assert tables["combined_sources.csv"].height == 0  # no combined score


def test_a_csv_file_holds_the_task_scores_and_the_folder_every_table(tmp_path: Path) -> None:
    # From MedAISure tests/test_csv_report_generator.py::test_csv_save_single_file (task_id,metric,score)
    # and ::test_csv_generate_and_save_dir (every file written, none empty).
    report = _csv_sample_report()
    path = report.write(tmp_path / "report.csv")
    assert path.read_text(encoding="utf-8").splitlines()[0] == "task_id,metric,score"
    assert_frame_equal(pl.read_csv(path), report.task_table)
    folder = report.write_csv_tables(tmp_path / "csv_report")
    assert sorted(p.name for p in folder.iterdir()) == sorted(report.csv_tables())
    for name, frame in report.csv_tables().items():
        text = (folder / name).read_text(encoding="utf-8")
        assert text.splitlines()[0] == ",".join(frame.columns)
    with pytest.raises(OutputExistsError):
        report.write_csv_tables(folder)
    report.write_csv_tables(folder, overwrite=True)


def test_the_csv_holds_the_combined_score_and_where_its_values_came_from() -> None:
    # From MedAISure tests/test_report_combined_outputs_test.py::test_csv_report_contains_combined_score
    tables = _medaisure_combined_report().csv_tables()
    assert "combined_score" in tables["overall_scores.csv"]["metric"].to_list()
    assert "combined_score" in tables["task_scores.csv"]["metric"].to_list()
    assert tables["combined_sources.csv"].rows() == [
        ("t1", "diagnostics", "task value"), ("t1", "safety", "task value"), ("t2", "diagnostics", "task value"),
    ]  # fmt: skip


def test_csv_cells_a_spreadsheet_would_run_are_escaped(tmp_path: Path) -> None:
    formula = '=HYPERLINK("http://x","y")'
    report = BenchmarkReport(
        model_id="@evil",
        task_scores={formula: {"-2+3": 0.5}},
        detailed_results=[DetailedResult(task_id=formula, inputs=[{"q": "+cmd"}], metrics_results={"m": 1.0})],
    )
    folder = report.write_csv_tables(tmp_path / "t")
    text = "".join(p.read_text(encoding="utf-8") for p in folder.iterdir())
    assert "'=HYPERLINK" in text and "'-2+3" in text and "'+cmd" in text and "'@evil" in text
    for line in text.splitlines():
        for cell in line.split(","):
            assert not cell.lstrip('"').startswith(("=", "+", "@")), line


def test_benchmark_report_cli_writes_csv_and_the_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.json"
    _medaisure_combined_report().write(source)
    assert run_cli("benchmark-report", source, "--out", tmp_path / "r.csv", "--tables", tmp_path / "tables") == 0
    printed = capsys.readouterr().out
    assert "wrote its CSV tables to" in printed
    assert (tmp_path / "r.csv").read_text(encoding="utf-8").startswith("task_id,metric,score")
    assert (tmp_path / "tables" / "combined_sources.csv").is_file()
