"""Ingest of OpenTelemetry GenAI traces in OTLP JSON: ingest_otlp and `mas-eval ingest --format otlp`.

The spans are made by opentelemetry-sdk itself, encoded by its OTLP encoder, and written as the
Collector's file exporter writes them: OTLP JSON (ids in hex), one ExportTraceServiceRequest a line.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")

from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mas_eval import Dataset
from mas_eval.cli import main
from mas_eval.errors import IngestError
from mas_eval.ingest.otlp import NO_AGENT, ingest_otlp

SECOND = 1_000_000_000


@dataclass(frozen=True)
class Evaluation:
    """A ``gen_ai.evaluation.result`` event's attributes."""

    name: str
    score: float | None = None
    label: str | None = None

    def attributes(self) -> dict[str, Any]:
        found: dict[str, Any] = {"gen_ai.evaluation.name": self.name}
        if self.score is not None:
            found["gen_ai.evaluation.score.value"] = self.score
        if self.label is not None:
            found["gen_ai.evaluation.score.label"] = self.label
        return found


class Team:
    """A TracerProvider of one service, keeping its finished spans in memory."""

    def __init__(self, service: str, **resource: Any) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": service, **resource}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("tests.mas")

    def span(
        self,
        name: str,
        start: float,
        end: float,
        parent: trace.Span | None = None,
        evaluations: Sequence[Evaluation] = (),
        **attributes: Any,
    ) -> trace.Span:
        """A span from ``start`` to ``end`` seconds with its evaluation events, ended; ``__`` in an attribute's
        name is a dot (gen_ai__agent__name: gen_ai.agent.name)."""
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            name,
            context=context,
            attributes={k.replace("__", "."): v for k, v in attributes.items()},
            start_time=round(start * SECOND),
        )
        for evaluation in evaluations:
            span.add_event("gen_ai.evaluation.result", evaluation.attributes(), timestamp=round(end * SECOND))
        span.end(end_time=round(end * SECOND))
        return span

    def agent(self, name: str, start: float, end: float, parent: trace.Span | None = None, **more: Any) -> trace.Span:
        return self.span(
            f"invoke_agent {name}",
            start,
            end,
            parent,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name=name,
            **more,
        )

    def chat(
        self,
        parent: trace.Span,
        model: str,
        tokens: tuple[int, int],
        start: float,
        end: float,
        evaluations: Sequence[Evaluation] = (),
    ) -> trace.Span:
        return self.span(
            f"chat {model}",
            start,
            end,
            parent,
            evaluations,
            gen_ai__operation__name="chat",
            gen_ai__request__model=model,
            gen_ai__response__model=f"{model}-0513",
            gen_ai__usage__input_tokens=tokens[0],
            gen_ai__usage__output_tokens=tokens[1],
        )

    def finished(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()


def _hex_ids(node: Any) -> None:
    """OTLP JSON's ids are hex; protobuf's own JSON mapping writes bytes as base64."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


def request_line(spans: Sequence[ReadableSpan]) -> str:
    """One line of the Collector's file exporter: an ExportTraceServiceRequest in OTLP JSON."""
    request = json_format.MessageToDict(encode_spans(list(spans)))
    _hex_ids(request)
    return json.dumps(request)


def _key(row: tuple[Any, ...]) -> tuple[str, ...]:
    """A row's identifying text cells (a Dataset is sorted by key, and trace ids are random)."""
    return tuple(cell for cell in row if isinstance(cell, str))


def trace_id(span: trace.Span) -> str:
    return format(span.get_span_context().trace_id, "032x")


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# -- a MAS and a single agent on the same case --------------------------------------------------


@pytest.fixture(scope="module")
def traces() -> dict[str, Any]:
    """A MAS trace (a team of two agents, one calling a tool) and a single agent's, on case-1; evaluated."""
    mas = Team("mas")
    verdicts = [Evaluation("accuracy", 1.0, "pass"), Evaluation("relevance", 0.75)]
    team = mas.agent("team", 10, 22.5, evaluations=verdicts, mas_eval__case_id="case-1", mas_eval__task="triage")
    planner = mas.agent("planner", 10.5, 15, team)
    mas.chat(planner, "gpt-4o", (100, 20), 11, 12)
    mas.chat(planner, "gpt-4o", (50, 10), 13, 14.5)
    critic = mas.agent("critic", 15, 22, team)
    mas.chat(critic, "claude-3", (30, 5), 15.5, 16)
    tool = mas.span("execute_tool search", 16, 21, critic, gen_ai__operation__name="execute_tool")
    mas.chat(tool, "claude-3", (7, 3), 17, 18)  # under a tool call: still the critic's
    single = Team("single")
    verdicts = [Evaluation("accuracy", 0.0, "FAIL"), Evaluation("relevance", 0.5)]
    solo = single.agent("solo", 30, 34, evaluations=verdicts, mas_eval__case_id="case-1", mas_eval__task="triage")
    # A second relevance, on the chat span (written later): the one on the root span is the run's.
    single.chat(solo, "gpt-4o", (80, 40), 30.5, 33.5, [Evaluation("relevance", 0.125)])
    spans = mas.finished()
    return {
        "mas": trace_id(team),
        "single": trace_id(solo),
        # The MAS trace over two lines (two batches), the single agent's on a third.
        "lines": [request_line(spans[:3]), request_line(spans[3:]), request_line(single.finished())],
    }


@pytest.fixture(scope="module")
def ingested(traces: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("otlp")
    return ingest_otlp(write(folder / "traces.json", *traces["lines"]), folder / "ds")


def test_each_trace_is_a_run_with_its_system_case_time_and_tokens(ingested: Any, traces: dict[str, Any]) -> None:
    assert (ingested.runs, ingested.skipped) == (2, ())
    ds = Dataset.open(ingested.out).validate()
    assert ds.table_names == ["runs", "agents", "usage", "outcomes"]
    runs = ds.collect("runs").select(
        "run_id", "system", "case_id", "task", "seconds", "api_calls", "input_tokens", "output_tokens", "tokens"
    )
    assert sorted(runs.rows(), key=_key) == sorted(
        [
            (traces["mas"], "mas", "case-1", "triage", pytest.approx(12.5), 4, 187, 38, 225),
            (traces["single"], "single", "case-1", "triage", pytest.approx(4.0), 1, 80, 40, 120),
        ],
        key=_key,
    )


def test_agents_are_the_invoke_agent_spans_but_the_team_that_only_delegates(
    ingested: Any, traces: dict[str, Any]
) -> None:
    agents = ingested.dataset.collect("agents").select("run_id", "agent_id").rows()
    assert sorted(agents) == sorted([(traces["mas"], "planner"), (traces["mas"], "critic"), (traces["single"], "solo")])


def test_usage_sums_the_chat_spans_under_each_agent_by_model(ingested: Any, traces: dict[str, Any]) -> None:
    usage = ingested.dataset.collect("usage").select(
        "run_id", "agent_id", "model", "calls", "input_tokens", "output_tokens", "seconds"
    )
    assert sorted(usage.rows(), key=_key) == sorted(
        [
            (traces["mas"], "critic", "claude-3-0513", 2, 37, 8, pytest.approx(1.5)),
            (traces["mas"], "planner", "gpt-4o-0513", 2, 150, 30, pytest.approx(2.5)),
            (traces["single"], "solo", "gpt-4o-0513", 1, 80, 40, pytest.approx(3.0)),
        ],
        key=_key,
    )


def test_evaluation_events_are_outcomes_pass_fail_by_their_labels(ingested: Any, traces: dict[str, Any]) -> None:
    outcomes = ingested.dataset.collect("outcomes").select("run_id", "name", "value", "passed").rows()
    assert sorted(outcomes, key=_key) == sorted(
        [
            (traces["mas"], "accuracy", 1.0, True),
            (traces["mas"], "relevance", 0.75, None),
            (traces["single"], "accuracy", 0.0, False),
            (traces["single"], "relevance", 0.5, None),
        ],
        key=_key,
    )
    assert ingested.warnings == (
        "evaluation 'relevance' is recorded more than once in 1 trace(s); the event on the span nearest the root "
        "is kept (the latest of those)",
    )


def test_a_label_decides_over_a_score_and_an_unlabelled_score_is_a_number(tmp_path: Path) -> None:
    team = Team("mas")
    # A judge's score thresholded into a label: pass/fail, with a warning; a label alone that is not
    # pass/fail: no value to record.
    team.agent(
        "solo",
        0,
        1,
        evaluations=[Evaluation("judge", 0.9, "Pass"), Evaluation("style", label="elegant")],
        mas_eval__case_id="c",
    )
    result = ingest_otlp(write(tmp_path / "t.json", request_line(team.finished())))
    assert result.dataset.collect("outcomes").select("name", "value", "passed").rows() == [("judge", 1.0, True)]
    assert [w.split(";")[0] for w in result.warnings] == [
        "evaluation 'judge' is pass/fail by its labels, and its score.value differs from 1 (pass) or 0 (fail) "
        "in 1 run(s)",
        "evaluation 'style' has no score.value and no pass/fail label in 1 run(s)",
    ]


def test_model_calls_outside_agents_and_a_team_with_calls_of_its_own(tmp_path: Path) -> None:
    team = Team("mas")
    lead = team.agent("lead", 1, 10, mas_eval__case_id="c")
    team.chat(lead, "m", (1, 2), 1, 2)  # the lead calls a model itself: it is an agent too
    team.chat(team.agent("helper", 2, 5, lead), "m", (3, 4), 3, 4)
    bare = Team("single")
    bare.chat(bare.span("main", 1, 3, mas_eval__case_id="c"), "m", (5, 6), 1, 2)  # no agent span at all
    result = ingest_otlp(write(tmp_path / "t.json", request_line(team.finished()), request_line(bare.finished())))
    assert result.dataset.collect("agents")["agent_id"].sort().to_list() == ["helper", "lead"]
    usage = result.dataset.collect("usage").select("agent_id", "calls", "input_tokens").rows()
    assert sorted(usage) == [(NO_AGENT, 1, 5), ("helper", 1, 3), ("lead", 1, 1)]


def test_system_and_case_from_other_attributes_or_given(tmp_path: Path) -> None:
    team = Team("svc", **{"deployment.environment": "mas"})
    team.agent("solo", 0, 1, gen_ai__conversation__id="conv-7", mas_eval__epoch=2)
    file = write(tmp_path / "t.json", request_line(team.finished()))
    result = ingest_otlp(file, case_attribute="gen_ai.conversation.id", system_attribute="deployment.environment")
    assert result.dataset.collect("runs").select("system", "case_id", "epoch").rows() == [("mas", "conv-7", 2)]
    result = ingest_otlp(file, case_attribute="gen_ai.conversation.id", system="baseline")
    assert result.dataset.collect("runs")["system"].to_list() == ["baseline"]


# -- bad input ---------------------------------------------------------------------------------


@pytest.fixture
def bad_inputs(traces: dict[str, Any], tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The fixture's lines, and: a line that is not JSON, a trace without a case, a span without a trace id."""
    no_case = Team("mas")
    no_case.agent("solo", 0, 1)
    request = json.loads(traces["lines"][2])
    del request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    lines = [*traces["lines"], '{"resourceSpans": [', request_line(no_case.finished()), json.dumps(request)]
    yield {"file": write(tmp_path / "bad.json", *lines), "no_case": trace_id(no_case.finished()[0])}


def test_a_line_that_is_not_json_is_named_by_file_and_line(bad_inputs: dict[str, Any], tmp_path: Path) -> None:
    file = bad_inputs["file"]
    with pytest.raises(IngestError, match=r"bad\.json: line 4: not JSON \(.*\); fix the file, or pass skip_invalid="):
        ingest_otlp(file, tmp_path / "ds")
    assert not (tmp_path / "ds").exists()


def test_a_trace_without_the_case_attribute_is_named(bad_inputs: dict[str, Any], traces: dict[str, Any]) -> None:
    good = write(bad_inputs["file"].with_name("no_case.json"), *traces["lines"][:2], bad_inputs_line(bad_inputs, 5))
    with pytest.raises(IngestError) as error:
        ingest_otlp(good)
    message = str(error.value)
    assert message.startswith(f"{good}: trace {bad_inputs['no_case']} (first span at line 3): ")
    assert "no span or resource has the case attribute 'mas_eval.case_id'" in message
    assert "pass case_attribute='...'" in message


def bad_inputs_line(bad_inputs: dict[str, Any], number: int) -> str:
    return bad_inputs["file"].read_text(encoding="utf-8").splitlines()[number - 1]


def test_a_span_without_a_trace_id_is_named(bad_inputs: dict[str, Any]) -> None:
    only = write(bad_inputs["file"].with_name("no_trace.json"), bad_inputs_line(bad_inputs, 6))
    with pytest.raises(
        IngestError, match=r"no_trace\.json: line 1: resourceSpans\[0\].*'invoke_agent solo'\): traceId missing"
    ):
        ingest_otlp(only)


def test_skip_invalid_sets_lines_and_traces_aside(bad_inputs: dict[str, Any], traces: dict[str, Any]) -> None:
    file = bad_inputs["file"]
    result = ingest_otlp(file, skip_invalid=True)
    assert [reason.split(":")[0] for _, reason in result.skipped] == [
        "line 4",
        "line 6",
        f"trace {bad_inputs['no_case']} (first span at line 5)",
    ]
    assert {f for f, _ in result.skipped} == {file}
    # Line 6 held the single agent's chat span again: its trace is still whole from line 3.
    assert sorted(result.dataset.collect("runs")["run_id"]) == sorted([traces["mas"], traces["single"]])


def test_nothing_to_ingest_and_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        ingest_otlp(tmp_path / "missing.json")
    with pytest.raises(IngestError, match=r"no \.json or \.jsonl files in this folder"):
        ingest_otlp(tmp_path)
    with pytest.raises(IngestError, match="no trace could be ingested"):
        ingest_otlp(write(tmp_path / "x.json", "not json"), skip_invalid=True)


# -- the command line --------------------------------------------------------------------------


def run_cli(*args: str | Path) -> int:
    with pytest.raises(SystemExit) as exited:
        main([str(a) for a in args])
    return int(exited.value.code or 0)


def test_cli_ingests_and_errors_in_one_line(
    traces: dict[str, Any], bad_inputs: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = write(tmp_path / "traces.json", *traces["lines"])
    assert run_cli("ingest", "--format", "otlp", file, "--out", tmp_path / "ds", "--system", "x") == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"ingested 2 runs from 1 OTLP file(s) into {tmp_path / 'ds'}: runs 2, agents 3, ")
    assert Dataset.open(tmp_path / "ds").collect("runs")["system"].to_list() == ["x", "x"]
    assert run_cli("ingest", "--format", "otlp", bad_inputs["file"], "--out", tmp_path / "bad") == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "line 4: not JSON" in error and "pass --skip-invalid" in error
    assert run_cli("ingest", "--format", "otlp", file, "--out", tmp_path / "x", "--map", "system=model") == 2
    assert "--map applies to --format table only" in capsys.readouterr().err
