"""Ingest of OpenTelemetry traces of agents: ingest_otlp and `mas-eval ingest --format otlp`.

The spans are made by opentelemetry-sdk itself, encoded by its OTLP encoder, and written as the
Collector's file exporter writes them: OTLP JSON (ids in hex), one ExportTraceServiceRequest a line;
the same requests are also written in the other shapes people have traces in (a pretty-printed
document, Grafana Tempo's download, Jaeger's JSON export and its v3 API's response). The traces
published by others that the reader is checked on are in ``tests/data/otlp/`` (its README says
where each comes from).
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
from opentelemetry.trace import Status, StatusCode

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
        *,
        events: Sequence[tuple[str, dict[str, Any]]] = (),
        error: str | None = None,
        **attributes: Any,
    ) -> trace.Span:
        """A span from ``start`` to ``end`` seconds with its evaluation events (and other ``events``), ended,
        its status an error of message ``error`` if given; ``__`` in an attribute's name is a dot
        (gen_ai__agent__name: gen_ai.agent.name)."""
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            name,
            context=context,
            attributes={k.replace("__", "."): v for k, v in attributes.items()},
            start_time=round(start * SECOND),
        )
        for event, values in events:
            span.add_event(event, values, timestamp=round(start * SECOND))
        for evaluation in evaluations:
            span.add_event("gen_ai.evaluation.result", evaluation.attributes(), timestamp=round(end * SECOND))
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
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
    assert ds.table_names == ["runs", "agents", "usage", "tool_calls", "outcomes"]
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
        "evaluation 'style' has no score.value (or one set aside) and no pass/fail label in 1 run(s)",
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


# -- the shapes traces come in ------------------------------------------------------------------


def _b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def _tempo(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Grafana Tempo's download: the resource spans as ``batches``, the older ``instrumentationLibrarySpans``,
    ids in base64 (protobuf's own JSON mapping)."""
    batches = []
    for request in requests:
        for resource_spans in request["resourceSpans"]:
            scopes = []
            for scope in resource_spans["scopeSpans"]:
                spans = []
                for span in scope["spans"]:
                    span = dict(span)
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = _b64(span[key])
                    spans.append(span)
                scopes.append({"instrumentationLibrary": scope.get("scope", {}), "spans": spans})
            batches.append({"resource": resource_spans["resource"], "instrumentationLibrarySpans": scopes})
    return {"batches": batches}


def _tag(key: str, value: dict[str, Any]) -> dict[str, Any]:
    """An OTLP attribute as a Jaeger tag, as Jaeger's translation from OTLP writes it."""
    if "stringValue" in value:
        return {"key": key, "type": "string", "value": value["stringValue"]}
    if "intValue" in value:
        return {"key": key, "type": "int64", "value": int(value["intValue"])}
    if "doubleValue" in value:
        return {"key": key, "type": "float64", "value": value["doubleValue"]}
    if "boolValue" in value:
        return {"key": key, "type": "bool", "value": value["boolValue"]}
    return {"key": key, "type": "string", "value": json.dumps(value)}


def _jaeger(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Jaeger's JSON export of the same spans: a trace per traceID, times in microseconds, parents as references."""
    traces: dict[str, dict[str, Any]] = {}
    for request in requests:
        for resource_spans in request["resourceSpans"]:
            tags = [_tag(a["key"], a["value"]) for a in resource_spans["resource"]["attributes"]]
            service = next(t["value"] for t in tags if t["key"] == "service.name")
            for scope in resource_spans["scopeSpans"]:
                for span in scope["spans"]:
                    found = traces.setdefault(
                        span["traceId"], {"traceID": span["traceId"], "spans": [], "processes": {}}
                    )
                    process = f"p{len(found['processes']) + 1}"
                    found["processes"][process] = {"serviceName": service, "tags": tags}
                    start, end = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
                    parent = span.get("parentSpanId")
                    references = (
                        [{"refType": "CHILD_OF", "traceID": span["traceId"], "spanID": parent}] if parent else []
                    )
                    logs = [
                        {
                            "timestamp": int(event["timeUnixNano"]) // 1000,
                            "fields": [
                                {"key": "event", "type": "string", "value": event["name"]},
                                *[_tag(a["key"], a["value"]) for a in event.get("attributes", [])],
                            ],
                        }
                        for event in span.get("events", [])
                    ]
                    found["spans"].append(
                        {
                            "traceID": span["traceId"],
                            "spanID": span["spanId"],
                            "operationName": span["name"],
                            "references": references,
                            "startTime": start // 1000,
                            "duration": (end - start) // 1000,
                            "tags": [_tag(a["key"], a["value"]) for a in span.get("attributes", [])],
                            "logs": logs,
                            "processID": process,
                        }
                    )
    return {"data": list(traces.values()), "total": 0, "limit": 0, "offset": 0, "errors": None}


def _tables(result: Any) -> dict[str, list[tuple[Any, ...]]]:
    return {name: sorted(result.dataset.collect(name).rows(), key=_key) for name in result.dataset.table_names}


@pytest.mark.parametrize(
    ("shape", "read_as"),
    [
        ("pretty", "OTLP JSON, one document"),
        ("list", "OTLP JSON, one document"),
        ("tempo", "Grafana Tempo trace (batches), one document"),
        ("tempo-line", "Grafana Tempo trace (batches), one document a line"),
        ("jaeger", "Jaeger JSON export, one document"),
        ("jaeger-v3", "Jaeger v3 API response, one document"),
    ],
)
def test_every_shape_of_the_same_traces_gives_the_same_dataset(
    shape: str, read_as: str, traces: dict[str, Any], ingested: Any, tmp_path: Path
) -> None:
    requests = [json.loads(line) for line in traces["lines"]]
    documents = {
        "pretty": json.dumps(requests[2], indent=2),  # as jq . writes it; the single agent's trace alone
        "list": json.dumps(requests, indent=4),
        "tempo": json.dumps(_tempo(requests), indent=2),
        "tempo-line": json.dumps(_tempo(requests)),
        "jaeger": json.dumps(_jaeger(requests), indent=2),
        "jaeger-v3": json.dumps(
            {"result": {"resourceSpans": [rs for r in requests for rs in r["resourceSpans"]]}}, indent=2
        ),
    }
    result = ingest_otlp(write(tmp_path / f"{shape}.json", documents[shape]))
    assert [how for _, how in result.read_as] == [read_as]
    expected = _tables(ingested)
    if shape == "pretty":  # the single agent's run alone
        expected = {name: [row for row in rows if traces["single"] in row] for name, rows in expected.items()}
        expected = {name: rows for name, rows in expected.items() if rows}
    assert _tables(result) == expected


def test_a_file_that_is_no_shape_of_traces_says_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"line 1: expected OTLP trace data: .*; got an object with the keys 'spans'"):
        ingest_otlp(write(tmp_path / "x.json", '{"spans": []}'))
    # A Tempo download of no span said to hold none, rather than "no trace could be ingested" without a reason.
    with pytest.raises(IngestError, match=r"holds no span: read as Grafana Tempo trace \(batches\), one document"):
        ingest_otlp(write(tmp_path / "empty.json", json.dumps({"batches": []}, indent=2)))
    requests = [request_line(Team("mas").finished()), json.dumps({"data": []})]
    with pytest.raises(IngestError, match=r"line 2: Jaeger JSON export, but the file's first document is OTLP JSON"):
        ingest_otlp(write(tmp_path / "mixed.json", *requests))


# -- what a model call, a tool call and a status say -----------------------------------------------


def _parts(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


def _text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A planner that calls a model twice (the second call resending the first's messages), a tool in
    between (which fails), and a model call that fails; the root span ends in an error."""
    team = Team("mas")
    root = team.agent("planner", 0, 10, mas_eval__case_id="c", error="budget exceeded")
    system, user = _parts("system", _text("Be brief.")), _parts("user", _text("Weather in Paris?"))
    asks = _parts("assistant", {"type": "tool_call", "id": "call_1", "name": "weather", "arguments": {"city": "Paris"}})
    answer = _parts("tool", {"type": "tool_call_response", "id": "call_1", "response": "rainy"})
    team.span(
        "chat gpt-4o",
        1,
        2,
        root,
        gen_ai__operation__name="chat",
        gen_ai__request__model="gpt-4o",
        gen_ai__response__model="gpt-4o-2024-08-06",
        gen_ai__usage__input_tokens=20,
        gen_ai__usage__output_tokens=5,
        gen_ai__input__messages=json.dumps([system, user]),
        gen_ai__output__messages=json.dumps([asks]),
    )
    team.span(
        "execute_tool weather",
        2,
        2.5,
        root,
        error="city not found",
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="weather",
        gen_ai__tool__call__id="call_1",
        gen_ai__tool__call__arguments='{"city": "Paris"}',
    )
    team.span(
        "chat gpt-4o",
        3,
        4.5,
        root,
        gen_ai__operation__name="chat",
        gen_ai__request__model="gpt-4o",
        gen_ai__usage__input_tokens=40,
        gen_ai__usage__output_tokens=8,
        gen_ai__input__messages=json.dumps([system, user, asks, answer]),
        gen_ai__output__messages=json.dumps([_parts("assistant", _text("Rainy."))]),
    )
    team.span("chat gpt-4o", 5, 6, root, error="rate limited", gen_ai__operation__name="chat")
    folder = tmp_path_factory.mktemp("conversation")
    result = ingest_otlp(write(folder / "t.json", request_line(team.finished())))
    return {"result": result, "run": trace_id(root)}


def test_messages_are_what_the_calls_sent_and_received_each_once(conversation: dict[str, Any]) -> None:
    messages = conversation["result"].dataset.collect("messages")
    got = messages.select("agent_id", "turn", "role", "source", "text", "model", "input_tokens", "seconds").rows()
    assert got == [
        ("planner", 1, "system", "input", "Be brief.", None, None, None),
        ("planner", 2, "user", "input", "Weather in Paris?", None, None, None),
        ("planner", 3, "assistant", "generate", None, "gpt-4o-2024-08-06", 20, 1.0),
        # The second call resends the first's three messages: only the tool's answer is new.
        ("planner", 4, "tool", "input", "rainy", None, None, None),
        ("planner", 5, "assistant", "generate", "Rainy.", "gpt-4o", 40, 1.5),
    ]
    assert set(messages["round"]) == {"1"}


def test_tool_spans_are_tool_calls_with_their_error_and_the_message_that_asked(conversation: dict[str, Any]) -> None:
    result = conversation["result"]
    tools = result.dataset.collect("tool_calls")
    got = tools.select("agent_id", "turn", "tool", "arguments", "error", "seconds", "message_turn", "call_id").rows()
    assert got == [("planner", 1, "weather", '{"city": "Paris"}', "city not found", 0.5, 3, "call_1")]
    runs = result.dataset.collect("runs").select("api_calls", "input_tokens", "tool_calls", "tool_errors").rows()
    assert runs == [(3, 60, 1, 1)]  # the failed model call is a call made


def test_error_statuses_of_model_calls_and_of_the_root_are_said(conversation: dict[str, Any]) -> None:
    run = conversation["run"]
    warnings = conversation["result"].warnings
    assert any(
        w.startswith("1 model call(s) ended in an error status; each is counted in its run's api_calls")
        and f"trace {run} span" in w
        and "'rate limited'" in w
        for w in warnings
    ), warnings
    assert any(
        w.startswith("1 trace(s) whose root span ended in an error status") and "budget exceeded" in w for w in warnings
    )


def test_older_genai_names_and_per_message_events(tmp_path: Path) -> None:
    team = Team("single")
    root = team.agent("solo", 0, 5, mas_eval__case_id="c")
    team.span(
        "chat",
        1,
        2,
        root,
        events=[
            ("gen_ai.system.message", {"content": "Be brief."}),
            ("gen_ai.user.message", {"content": "2 + 2?"}),
            ("gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": json.dumps({"content": "4"})}),
        ],
        gen_ai__operation__name="chat",
        gen_ai__request__model="claude-3",
        gen_ai__usage__prompt_tokens=30,
        gen_ai__usage__completion_tokens=2,
        gen_ai__usage__cached_tokens=10,
    )
    result = ingest_otlp(write(tmp_path / "t.json", request_line(team.finished())))
    usage = result.dataset.collect("usage").select("agent_id", "model", "calls", "input_tokens", "output_tokens")
    assert usage.rows() == [("solo", "claude-3", 1, 30, 2)]  # 10 cached tokens are among the 30 sent
    messages = result.dataset.collect("messages").select("role", "source", "text").rows()
    assert messages == [("system", "input", "Be brief."), ("user", "input", "2 + 2?"), ("assistant", "generate", "4")]


@pytest.mark.parametrize(
    ("sent", "read", "written", "counted"),
    [
        (412, 256, None, 412),  # OpenAI, and the conventions: the cached tokens are among those sent
        (100, 300, 50, 450),  # Anthropic's count leaves them out: fewer sent than cached, so they are added
        (None, 64, None, 64),
    ],
)
def test_cached_tokens_are_counted_in_the_input_tokens(
    sent: int | None, read: int, written: int | None, counted: int, tmp_path: Path
) -> None:
    team = Team("single")
    usage = {"gen_ai__usage__cache_read__input_tokens": read, "gen_ai__usage__output_tokens": 1}
    if sent is not None:
        usage["gen_ai__usage__input_tokens"] = sent
    if written is not None:
        usage["gen_ai__usage__cache_creation__input_tokens"] = written
    team.span("chat", 0, 1, mas_eval__case_id="c", gen_ai__operation__name="chat", **usage)
    result = ingest_otlp(write(tmp_path / "t.json", request_line(team.finished())))
    assert result.dataset.collect("runs")["input_tokens"].to_list() == [counted]


def _openinference_messages(side: str, *messages: tuple[str, str]) -> dict[str, str]:
    return {
        f"llm__{side}_messages__{i}__message__{field}": value
        for i, (role, content) in enumerate(messages)
        for field, value in (("role", role), ("content", content))
    }


def test_openinference_spans_read_as_agents_model_and_tool_calls(tmp_path: Path) -> None:
    team = Team("mas")
    chain = team.span("workflow", 0, 10, mas_eval__case_id="c", openinference__span__kind="CHAIN")
    agent = team.span("researcher", 1, 9, chain, openinference__span__kind="AGENT", agent__name="researcher")
    team.span(
        "ChatCompletion",
        2,
        3,
        agent,
        openinference__span__kind="LLM",
        llm__model_name="gpt-4o-mini-2024-07-18",
        llm__token_count__prompt=412,
        llm__token_count__completion=27,
        llm__token_count__prompt_details__cache_read=256,
        **_openinference_messages("input", ("system", "Be brief."), ("user", "Where is A-1187?")),
        **_openinference_messages("output", ("assistant", "Looking it up.")),
    )
    team.span(
        "lookup_order",
        3,
        4,
        agent,
        openinference__span__kind="TOOL",
        tool__name="lookup_order",
        input__value='{"order_id": "A-1187"}',
    )
    result = ingest_otlp(write(tmp_path / "t.json", request_line(team.finished())))
    ds = result.dataset
    assert ds.collect("agents")["agent_id"].to_list() == ["researcher"]
    assert ds.collect("usage").select("agent_id", "model", "calls", "input_tokens", "output_tokens").rows() == [
        ("researcher", "gpt-4o-mini-2024-07-18", 1, 412, 27)
    ]
    assert ds.collect("messages").select("role", "text").rows() == [
        ("system", "Be brief."),
        ("user", "Where is A-1187?"),
        ("assistant", "Looking it up."),
    ]
    assert ds.collect("tool_calls").select("agent_id", "tool", "arguments", "error").rows() == [
        ("researcher", "lookup_order", '{"order_id": "A-1187"}', None)
    ]


def test_openllmetry_spans_from_before_the_genai_conventions(tmp_path: Path) -> None:
    team = Team("mas")
    workflow = team.span("support.workflow", 0, 10, mas_eval__case_id="c", traceloop__span__kind="workflow")
    agent = team.span("triage.agent", 1, 9, workflow, traceloop__span__kind="agent", traceloop__entity__name="triage")
    team.span(
        "openai.chat",
        2,
        3,
        agent,
        llm__request__type="chat",
        gen_ai__request__model="gpt-4o-mini",
        gen_ai__usage__prompt_tokens=412,
        gen_ai__usage__completion_tokens=27,
        **{"gen_ai__prompt__0__role": "user", "gen_ai__prompt__0__content": "Where is A-1187?"},
        **{"gen_ai__completion__0__role": "assistant", "gen_ai__completion__0__tool_calls__0__id": "call_9"},
    )
    team.span(
        "lookup_order.tool",
        3,
        4,
        agent,
        traceloop__span__kind="tool",
        traceloop__entity__name="lookup_order",
        traceloop__entity__input='{"order_id": "A-1187"}',
    )
    ds = ingest_otlp(write(tmp_path / "t.json", request_line(team.finished()))).dataset
    assert ds.collect("agents")["agent_id"].to_list() == ["triage"]
    assert ds.collect("usage").select("agent_id", "model", "input_tokens", "output_tokens").rows() == [
        ("triage", "gpt-4o-mini", 412, 27)
    ]
    assert ds.collect("messages").select("turn", "role", "text").rows() == [
        (1, "user", "Where is A-1187?"),
        (2, "assistant", None),
    ]
    assert ds.collect("tool_calls").select("tool", "arguments").rows() == [("lookup_order", '{"order_id": "A-1187"}')]


# -- the judge apart ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A solo agent's call, then two evaluations whose judges call models: a GenAI ``evaluation`` span
    (with its result on it) and an OpenInference EVALUATOR span holding an agent of its own."""
    team = Team("single")
    root = team.span("run", 0, 20, mas_eval__case_id="c")
    solo = team.agent("solo", 0, 5, root)
    team.chat(solo, "gpt-4o", (100, 10), 1, 2)
    grader = team.span(
        "evaluate correctness",
        6,
        10,
        root,
        gen_ai__operation__name="evaluation",
        gen_ai__evaluation__name="correctness",
        gen_ai__evaluation__score__label="pass",
        gen_ai__evaluation__explanation="The answer matches.",
    )
    team.chat(grader, "judge-model", (500, 50), 7, 9)
    checker = team.span("faithfulness", 11, 19, root, openinference__span__kind="EVALUATOR")
    team.chat(team.agent("solo", 12, 18, checker), "judge-model", (300, 30), 13, 14)
    folder = tmp_path_factory.mktemp("judged")
    return write(folder / "t.json", request_line(team.finished()))


def test_an_evaluators_model_calls_are_the_judges_and_left_out_of_the_runs_totals(judged: Path) -> None:
    result = ingest_otlp(judged)
    ds = result.dataset
    runs = ds.collect("runs").select("api_calls", "input_tokens", "output_tokens", "tokens").rows()
    assert runs == [(1, 100, 10, 110)]
    usage = ds.collect("usage").select("agent_id", "model", "calls", "input_tokens", "evaluator").rows()
    assert sorted(usage) == [
        ("correctness", "judge-model-0513", 1, 500, True),
        ("faithfulness", "judge-model-0513", 1, 300, True),
        ("solo", "gpt-4o-0513", 1, 100, False),
    ]
    assert ds.collect("agents")["agent_id"].to_list() == ["solo"]  # the judge's own agent span is no member
    outcomes = ds.collect("outcomes").select("name", "value", "passed", "explanation").rows()
    assert outcomes == [("correctness", 1.0, True, "The answer matches.")]


def test_count_evaluator_counts_the_judges_calls_in_the_totals(judged: Path, tmp_path: Path) -> None:
    result = ingest_otlp(judged, count_evaluator=True)
    assert result.dataset.collect("runs").select("api_calls", "input_tokens").rows() == [(3, 900)]
    assert run_cli("ingest", "--format", "otlp", judged, "--out", tmp_path / "ds", "--count-evaluator") == 0
    assert Dataset.open(tmp_path / "ds").collect("runs")["api_calls"].to_list() == [3]


# -- the tree ------------------------------------------------------------------------------------


def test_a_span_whose_parent_is_missing_stays_under_its_root(tmp_path: Path) -> None:
    team = Team("mas")
    lead = team.agent("lead", 1, 11, mas_eval__case_id="c")
    lost = team.span("lost", 1.5, 9, lead)  # not exported: its children name a parent the trace lacks
    worker = team.agent("worker", 1, 8, lost)
    team.chat(worker, "m", (5, 1), 2, 3)
    spans = [span for span in team.finished() if span.name != "lost"]
    result = ingest_otlp(write(tmp_path / "t.json", request_line(spans)))
    # The lead delegates to the worker, its parent link broken or not: the team, not a second agent.
    assert result.dataset.collect("agents")["agent_id"].to_list() == ["worker"]
    assert result.dataset.collect("runs")["seconds"].to_list() == [pytest.approx(10.0)]
    assert any(
        w.startswith("1 span(s) in 1 trace(s) name a parent span that is not in their trace") for w in result.warnings
    )


def test_a_deep_trace_is_walked_whole(tmp_path: Path) -> None:
    # 3,000 spans each under the one before: a walk that recursed would exceed Python's stack.
    team = Team("mas")
    parent = team.agent("deep", 0, 100, mas_eval__case_id="c")
    for k in range(1, 3000):
        parent = team.span(f"step {k}", 0, 100, parent, **({"gen_ai__operation__name": "chat"} if k % 2 else {}))
    result = ingest_otlp(write(tmp_path / "t.json", request_line(team.finished())))
    assert result.dataset.collect("usage").select("agent_id", "calls").rows() == [("deep", 1500)]


def test_a_pass_label_counts_when_other_runs_score_the_same_name_with_numbers(tmp_path: Path) -> None:
    first, second = Team("mas"), Team("mas")
    first.agent("solo", 0, 1, evaluations=[Evaluation("accuracy", label="pass")], mas_eval__case_id="c1")
    second.agent("solo", 0, 1, evaluations=[Evaluation("accuracy", score=0.5)], mas_eval__case_id="c2")
    file = write(tmp_path / "t.json", request_line(first.finished()), request_line(second.finished()))
    result = ingest_otlp(file)
    outcomes = result.dataset.collect("outcomes").select("name", "value", "passed").rows()
    assert sorted(outcomes) == [("accuracy", 0.5, None), ("accuracy", 1.0, None)]
    assert result.warnings == (
        "evaluation 'accuracy' has a pass/fail label in some runs only, so it is a number: in 1 run(s) with a "
        "label and no score.value, 1 for pass and 0 for fail",
    )


# -- traces others published ------------------------------------------------------------------------

DATA = Path(__file__).parents[1] / "data" / "otlp"


@pytest.mark.parametrize(
    ("name", "case", "read_as", "run", "system", "seconds"),
    [
        # Jaeger UI's fixture: one trace (traceID 2992f2a5...), 2 spans, the root "demo" of 70,406 µs and
        # "thread" FOLLOWS_FROM it; no GenAI attribute, so no agent, model call or tool call.
        (
            "jaeger-ui_issue115.json",
            "service.name",
            "Jaeger JSON export, one document",
            "2992f2a5b5d037a8aabffd08ef384237",
            "issue115",
            0.070406,
        ),
        # Jaeger v3's getTrace response (HotROD): one trace, 40 spans of 6 services, one root "GET /dispatch"
        # (frontend) of 702,608,277 ns; some spans end in an error status, none a model or tool call.
        (
            "jaeger-v3_getTrace-response.json",
            "service.name",
            "Jaeger v3 API response, one document",
            "2ea75461946a7dd10f2c15ab36a076cb",
            "frontend",
            0.702608277,
        ),
    ],
)
def test_published_traces_give_the_counts_read_by_hand(
    name: str, case: str, read_as: str, run: str, system: str, seconds: float
) -> None:
    result = ingest_otlp(DATA / name, case_attribute=case)
    assert [how for _, how in result.read_as] == [read_as]
    assert (result.runs, result.skipped, result.warnings) == (1, (), ())
    ds = result.dataset
    assert ds.table_names == ["runs"]  # no agent, usage, message or tool call in these traces
    runs = ds.collect("runs").select("run_id", "system", "seconds", "api_calls", "tool_calls").rows()
    assert runs == [(run, system, pytest.approx(seconds, abs=1e-9), 0, 0)]


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
    assert printed.startswith(
        f"ingested 2 runs from 1 OTLP file(s) (read as OTLP JSON, one document a line) into {tmp_path / 'ds'}: "
        "runs 2, agents 3, "
    )
    assert Dataset.open(tmp_path / "ds").collect("runs")["system"].to_list() == ["x", "x"]
    assert run_cli("ingest", "--format", "otlp", bad_inputs["file"], "--out", tmp_path / "bad") == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "line 4: not JSON" in error and "pass --skip-invalid" in error
    assert run_cli("ingest", "--format", "otlp", file, "--out", tmp_path / "x", "--map", "system=model") == 2
    assert "--map applies to --format table or annotations only" in capsys.readouterr().err
