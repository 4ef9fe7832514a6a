"""Read OpenTelemetry GenAI traces, exported as OTLP JSON, into a Dataset.

An agent framework instrumented with OpenTelemetry's GenAI semantic conventions records a run
as a trace: ``invoke_agent`` spans for the agents, ``chat`` spans (and the other inference
operations) for the model calls under them, ``execute_tool`` spans for tool calls, and
``gen_ai.evaluation.result`` events for what an evaluator thought of the result. The
OpenTelemetry Collector's file exporter writes such traces as OTLP JSON: one
``ExportTraceServiceRequest`` object per line. :func:`ingest_otlp` makes each trace one run.
The mapping, field by field, is in ``docs/ingest/otlp.md``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import NAME, validate_params
from mas_eval.errors import option
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.recipe import (
    LOG_PARAMETERS,
    Ingest,
    InvalidInputError,
    LogFormat,
    Paths,
    ingest_logs,
    json_type,
    lines,
)

__all__ = [
    "CASE_ATTRIBUTE",
    "EPOCH_ATTRIBUTE",
    "EVALUATION_EVENT",
    "FAIL_LABELS",
    "FORMAT",
    "MODEL_OPERATIONS",
    "NO_AGENT",
    "PASS_LABELS",
    "SUFFIXES",
    "SYSTEM_ATTRIBUTE",
    "TASK_ATTRIBUTE",
    "UNKNOWN_MODEL",
    "VARIANT_ATTRIBUTE",
    "ingest_otlp",
]

#: Where ``runs.system`` comes from by default: the resource's service name (one service per system).
SYSTEM_ATTRIBUTE = "service.name"
#: Where ``runs.case_id`` comes from by default: GenAI conventions have no case, so the run sets its own.
CASE_ATTRIBUTE = "mas_eval.case_id"
#: Optional attributes of ``runs.task``, ``runs.variant`` and ``runs.epoch``.
TASK_ATTRIBUTE = "mas_eval.task"
VARIANT_ATTRIBUTE = "mas_eval.variant"
EPOCH_ATTRIBUTE = "mas_eval.epoch"

OPERATION = "gen_ai.operation.name"
INVOKE_AGENT = "invoke_agent"
#: The operations that are one model call each (GenAI semantic conventions' inference and embeddings spans).
MODEL_OPERATIONS = ("chat", "text_completion", "generate_content", "embeddings")
EVALUATION_EVENT = "gen_ai.evaluation.result"
#: Score labels read as pass or fail (compared in lower case); any other label leaves ``passed`` null.
PASS_LABELS = ("pass", "passed", "true", "correct", "yes", "success")
FAIL_LABELS = ("fail", "failed", "false", "incorrect", "no", "failure")
#: ``usage.agent_id`` of model calls made outside any ``invoke_agent`` span.
NO_AGENT = "(no agent)"
#: ``usage.model`` of a model call whose span names no model.
UNKNOWN_MODEL = "(unknown)"
#: The files a folder argument stands for (the Collector's file exporter writes ``.json``).
SUFFIXES = (".json", ".jsonl")
#: OTLP JSON files, for the recipe of every log adapter.
FORMAT = LogFormat(
    name="OTLP",
    files="OTLP JSON files",
    suffixes=SUFFIXES,
    in_folder="no .json or .jsonl files",
    record="trace",
    skips="line(s) or trace(s)",
)

_TRACE_HEX = re.compile(r"[0-9a-fA-F]{32}")
_SPAN_HEX = re.compile(r"[0-9a-fA-F]{16}")

#: One row per span, as read.
_SPAN_SCHEMA = pl.Schema(
    {
        "trace_id": pl.String(),
        "span_id": pl.String(),
        "parent_id": pl.String(),
        "start": pl.Int64(),
        "end": pl.Int64(),
        "operation": pl.String(),
        "agent": pl.String(),
        "model": pl.String(),
        "input_tokens": pl.Int64(),
        "output_tokens": pl.Int64(),
        "system": pl.String(),
        "case_id": pl.String(),
        "task": pl.String(),
        "variant": pl.String(),
        "epoch": pl.Int64(),
        "file": pl.Int64(),
        "line": pl.Int64(),
    }
)
#: One row per ``gen_ai.evaluation.result`` event, as read.
_EVENT_SCHEMA = pl.Schema(
    {
        "trace_id": pl.String(),
        "span_id": pl.String(),
        "time": pl.Int64(),
        "name": pl.String(),
        "score": pl.Float64(),
        "label": pl.String(),
    }
)
_KEY = ["trace_id", "span_id"]
_VALUE_KINDS = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue")


# -- one line ---------------------------------------------------------------------------------


def _value(any_value: Any, where: str) -> Any:
    """The Python value of an OTLP JSON ``AnyValue`` (``intValue`` may be a string or a number); None if unset."""
    if not isinstance(any_value, dict):
        raise InvalidInputError(f"{where}: expected an AnyValue object, got {json_type(any_value)}")
    kind = next((k for k in _VALUE_KINDS if k in any_value), None)
    if kind is None:
        return None
    value = any_value[kind]
    try:
        if kind in ("stringValue", "bytesValue") and isinstance(value, str):
            return value
        if kind == "boolValue" and isinstance(value, bool):
            return value
        if kind == "intValue" and isinstance(value, str | int) and not isinstance(value, bool):
            return int(value)
        if kind == "doubleValue" and isinstance(value, str | int | float) and not isinstance(value, bool):
            return float(value)  # "NaN" and "Infinity" are how JSON writes those doubles
        if kind == "arrayValue" and isinstance(value, dict):
            return [_value(item, where) for item in value.get("values", [])]
        if kind == "kvlistValue" and isinstance(value, dict):
            return _attributes(value.get("values", []), where)
    except ValueError:
        pass
    raise InvalidInputError(f"{where}: {kind} {json.dumps(value)[:40]} is not a valid {kind}")


def _attributes(items: Any, where: str) -> dict[str, Any]:
    """``[{key, value}]`` as a dict."""
    if not isinstance(items, list):
        raise InvalidInputError(f"{where}: attributes are {json_type(items)}, not an array")
    found: dict[str, Any] = {}
    for item in items:
        if not (isinstance(item, dict) and isinstance(item.get("key"), str)):
            raise InvalidInputError(f"{where}: an attribute is not a {{key, value}} object")
        found[item["key"]] = _value(item.get("value", {}), f"{where} attribute {item['key']}")
    return found


def _id(value: Any, hex_digits: re.Pattern[str], size: int) -> str | None:
    """A trace or span id as lower-case hex; protobuf's own JSON mapping (base64) is read too. None if unset."""
    if not isinstance(value, str) or not value:
        return None
    if hex_digits.fullmatch(value):
        text = value.lower()
    else:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(raw) != size:
            return None
        text = raw.hex()
    return None if text.strip("0") == "" else text  # all zeros is OTLP's invalid id


def _nanos(value: Any) -> int | None:
    """A ``fixed64`` time in nanoseconds (a string in OTLP JSON, a number accepted), or None."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _count(attributes: dict[str, Any], key: str, where: str) -> int | None:
    value = attributes.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{where}: {key} is {value!r}, not a count of tokens (a whole number >= 0)")
    return value


class _Reader:
    """The spans and evaluation events of every line read, as column lists."""

    def __init__(self, system_attribute: str, case_attribute: str) -> None:
        self.context = {
            "system": system_attribute,
            "case_id": case_attribute,
            "task": TASK_ATTRIBUTE,
            "variant": VARIANT_ATTRIBUTE,
        }
        self.system_attribute, self.case_attribute = system_attribute, case_attribute
        self.spans: dict[str, list[Any]] = {c: [] for c in _SPAN_SCHEMA}
        self.events: dict[str, list[Any]] = {c: [] for c in _EVENT_SCHEMA}
        self.files: list[Path] = []

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        """Every line of ``file``; a line that cannot be read is set aside (or refused) by ``ingest``."""
        index = len(self.files)
        self.files.append(file)
        for number, raw in lines(file):
            with ingest.attempt(f"line {number}"):
                try:
                    text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidInputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
                if text.strip():  # a line of a byte-order mark alone is blank
                    self.line(text, index, number, system)

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        """The traces read as runs and their tables; a trace that cannot be a run is set aside (or refused)."""
        spans = pl.DataFrame(self.spans, schema=_SPAN_SCHEMA)
        unique = spans.unique(_KEY, keep="first", maintain_order=True)
        if unique.height < spans.height:
            ingest.warnings.append(
                f"{spans.height - unique.height} span(s) read more than once (same trace and span id); kept once"
            )
        # A parent that is not in the trace (a trace exported in part) makes its child a root.
        known = unique.select("trace_id", pl.col("span_id").alias("parent_id"), pl.lit(True).alias("known"))
        spans = (
            unique.join(known, on=["trace_id", "parent_id"], how="left", maintain_order="left")
            .with_columns(pl.when(pl.col("known")).then(pl.col("parent_id")).alias("parent_id"))
            .drop("known")
        )
        walk = _walk(spans)
        runs = _runs(spans, walk)
        problems = _problems(runs, self.system_attribute, self.case_attribute)
        if problems.height:
            for trace, file, line, problem, fix in problems.rows():
                where = f"trace {trace} (first span at line {line})"
                ingest.set_aside(InvalidInputError(problem, where=where, fix=fix, file=self.files[file]))
            bad = problems.select("trace_id")
            runs, spans, walk = (frame.join(bad, on="trace_id", how="anti") for frame in (runs, spans, walk))
        agents, usage = _agents_and_usage(spans, walk)
        # Every table in the runs' order (the order traces were first read).
        order = runs.select(pl.col("trace_id").alias("run_id")).with_row_index("order")
        agents = agents.join(order, on="run_id", maintain_order="left").sort("order", maintain_order=True)
        usage = usage.join(order, on="run_id").sort("order", "agent_id", "model")
        outcomes = _outcomes(pl.DataFrame(self.events, schema=_EVENT_SCHEMA), walk, ingest.warnings)
        outcomes = outcomes.join(order, on="run_id").sort("order", "name")
        frames = {
            "runs": conform(runs.rename({"trace_id": "run_id"}), "runs"),
            "agents": conform(agents, "agents"),
            "usage": conform(usage, "usage"),
            "outcomes": conform(outcomes, "outcomes"),
        }
        return {name: frame for name, frame in frames.items() if frame.height or name == "runs"}

    def line(self, text: str, file: int, number: int, system: str | None = None) -> None:
        """Add the spans of one line (each of ``system``, if given); an invalid line leaves nothing behind."""
        try:
            request = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"not JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise InvalidInputError("not JSON that can be read: nested too deeply") from None
        if not isinstance(request, dict) or not isinstance(request.get("resourceSpans", []), list):
            got = json_type(request) if not isinstance(request, dict) else "an object without a resourceSpans array"
            raise InvalidInputError(f"expected an OTLP ExportTraceServiceRequest object, got {got}")
        spans: dict[str, list[Any]] = {c: [] for c in _SPAN_SCHEMA}
        events: dict[str, list[Any]] = {c: [] for c in _EVENT_SCHEMA}
        for r, resource_spans in enumerate(request.get("resourceSpans", [])):
            where = f"resourceSpans[{r}]"
            if not isinstance(resource_spans, dict):
                raise InvalidInputError(f"{where}: expected an object, got {json_type(resource_spans)}")
            resource = resource_spans.get("resource") or {}
            shared = _attributes(resource.get("attributes", []), f"{where}.resource")
            for s, scope_spans in enumerate(resource_spans.get("scopeSpans", [])):
                items = scope_spans.get("spans", []) if isinstance(scope_spans, dict) else None
                if not isinstance(items, list):
                    raise InvalidInputError(f"{where}.scopeSpans[{s}]: expected an object with a spans array")
                for i, span in enumerate(items):
                    self._span(span, shared, f"{where}.scopeSpans[{s}].spans[{i}]", spans, events)
        if system is not None:  # the system named for the file, whatever its spans say
            spans["system"] = [system] * len(spans["system"])
        rows = len(spans["trace_id"])
        spans["file"], spans["line"] = [file] * rows, [number] * rows
        for name, column in spans.items():
            self.spans[name].extend(column)
        for name, column in events.items():
            self.events[name].extend(column)

    def _span(
        self,
        span: Any,
        resource: dict[str, Any],
        where: str,
        spans: dict[str, list[Any]],
        events: dict[str, list[Any]],
    ) -> None:
        if not isinstance(span, dict):
            raise InvalidInputError(f"{where}: expected a span object, got {json_type(span)}")
        trace_id = _id(span.get("traceId"), _TRACE_HEX, 16)
        span_id = _id(span.get("spanId"), _SPAN_HEX, 8)
        if trace_id is None or span_id is None:
            field, value = ("traceId", span.get("traceId")) if trace_id is None else ("spanId", span.get("spanId"))
            size = 32 if trace_id is None else 16
            shown = "missing" if value in (None, "") else f"{json.dumps(value)[:40]}, not {size} hex digits (non-zero)"
            raise InvalidInputError(f"{where} ({span.get('name')!r}): {field} {shown}")
        name = span.get("name") if isinstance(span.get("name"), str) else ""
        attributes = _attributes(span.get("attributes", []), where)
        operation = _text(attributes.get(OPERATION))
        agent = None
        if operation == INVOKE_AGENT:
            agent = _text(attributes.get("gen_ai.agent.name")) or _text(attributes.get("gen_ai.agent.id")) or name
        context = {column: _text(attributes.get(key, resource.get(key))) for column, key in self.context.items()}
        epoch = attributes.get(EPOCH_ATTRIBUTE, resource.get(EPOCH_ATTRIBUTE))
        if epoch is not None and (isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0):
            raise InvalidInputError(f"{where}: {EPOCH_ATTRIBUTE} is {epoch!r}, not a whole number >= 0")
        row = {
            "trace_id": trace_id,
            "span_id": span_id,
            "parent_id": _id(span.get("parentSpanId"), _SPAN_HEX, 8),
            "start": _nanos(span.get("startTimeUnixNano")),
            "end": _nanos(span.get("endTimeUnixNano")),
            "operation": operation,
            "agent": agent,
            "model": _text(attributes.get("gen_ai.response.model")) or _text(attributes.get("gen_ai.request.model")),
            "input_tokens": _count(attributes, "gen_ai.usage.input_tokens", where),
            "output_tokens": _count(attributes, "gen_ai.usage.output_tokens", where),
            "epoch": epoch,
            **context,
        }
        for column, value in row.items():
            spans[column].append(value)
        for e, event in enumerate(span.get("events") or []):
            if not isinstance(event, dict) or event.get("name") != EVALUATION_EVENT:
                continue
            at = f"{where}.events[{e}]"
            values = _attributes(event.get("attributes", []), at)
            evaluation = _text(values.get("gen_ai.evaluation.name"))
            if evaluation is None:
                raise InvalidInputError(f"{at}: a {EVALUATION_EVENT} event without gen_ai.evaluation.name")
            score = values.get("gen_ai.evaluation.score.value")
            if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
                raise InvalidInputError(f"{at}: gen_ai.evaluation.score.value is {score!r}, not a number")
            label = values.get("gen_ai.evaluation.score.label")
            event_row = {
                "trace_id": trace_id,
                "span_id": span_id,
                "time": _nanos(event.get("timeUnixNano")),
                "name": evaluation,
                "score": None if score is None or not math.isfinite(score) else float(score),
                "label": _text(label),
            }
            for column, value in event_row.items():
                events[column].append(value)


# -- traces to tables -------------------------------------------------------------------------


def _walk(spans: pl.DataFrame) -> pl.DataFrame:
    """Per span: ``depth`` (0 = a root) and ``owner``, the nearest ``invoke_agent`` span above it.

    A span whose parent is not in its trace is a root (a trace exported in part). Walks one
    level up per step, all spans at once; a trace whose parents loop keeps a non-null ``up``.
    """
    nodes = spans.select(
        "trace_id",
        pl.col("span_id").alias("up"),
        pl.col("parent_id").alias("next"),
        (pl.col("operation") == INVOKE_AGENT).fill_null(False).alias("is_agent"),
    )
    walk = spans.select(
        *_KEY,
        pl.col("parent_id").alias("up"),
        pl.lit(None, pl.String()).alias("owner"),
        pl.lit(0, pl.Int64()).alias("depth"),
    )
    # A path to the root is at most as long as its trace: a walk still going after that many steps loops.
    longest = spans.group_by("trace_id").len()["len"].max() or 0
    for _ in range(int(longest)):  # type: ignore[call-overload]
        if walk["up"].null_count() == walk.height:
            break
        walk = walk.join(nodes, on=["trace_id", "up"], how="left", maintain_order="left").select(
            *_KEY,
            pl.col("next").alias("up"),
            pl.coalesce("owner", pl.when(pl.col("is_agent")).then(pl.col("up"))).alias("owner"),
            pl.col("depth") + pl.col("up").is_not_null(),
        )
    return walk


def _first(column: str) -> pl.Expr:
    return pl.col(column).drop_nulls().first()


def _sum(column: str) -> pl.Expr:
    """The sum of a column, null (not 0) when no row has a value."""
    return pl.when(pl.col(column).count() > 0).then(pl.col(column).sum())


def _runs(spans: pl.DataFrame, walk: pl.DataFrame) -> pl.DataFrame:
    """One row per trace, in the order traces were first read; with ``problem`` for a trace that cannot be a run."""
    located = spans.join(walk.select(*_KEY, "depth", pl.col("up").alias("loop")), on=_KEY, how="left")
    model = pl.col("operation").is_in(MODEL_OPERATIONS)
    root = pl.col("depth") == 0
    root_span_seconds = (pl.col("end").filter(root).max() - pl.col("start").filter(root).min()) / 1e9
    runs = (
        located.sort("depth", "start", "file", "line", nulls_last=True, maintain_order=True)
        .group_by("trace_id", maintain_order=True)
        .agg(
            _first("system"),
            _first("case_id"),
            _first("task"),
            _first("variant"),
            _first("epoch"),
            pl.col("file").min().alias("first_file"),
            pl.col("line").filter(pl.col("file") == pl.col("file").min()).min().alias("first_line"),
            (pl.col("loop").is_not_null().any()).alias("loops"),
            root_span_seconds.alias("seconds"),
            model.sum().alias("api_calls"),
            pl.when(model.any()).then(pl.col("input_tokens").filter(model).sum()).alias("input_tokens"),
            pl.when(model.any()).then(pl.col("output_tokens").filter(model).sum()).alias("output_tokens"),
            pl.col("input_tokens").filter(model).count().alias("_has_input"),
            pl.col("output_tokens").filter(model).count().alias("_has_output"),
        )
        .sort("first_file", "first_line", maintain_order=True)
    )
    return runs.with_columns(
        input_tokens=pl.when(pl.col("_has_input") > 0).then("input_tokens"),
        output_tokens=pl.when(pl.col("_has_output") > 0).then("output_tokens"),
    ).with_columns(tokens=pl.col("input_tokens") + pl.col("output_tokens"))


def _agents_and_usage(spans: pl.DataFrame, walk: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``agents``: the agents of each run; ``usage``: its model calls summed by agent and model."""
    owned = spans.join(walk.select(*_KEY, "owner"), on=_KEY, how="left")
    agent_spans = owned.filter(pl.col("operation") == INVOKE_AGENT)
    model_spans = owned.filter(pl.col("operation").is_in(MODEL_OPERATIONS))
    # An invoke_agent span that only hands work to other agents (agents below it, no model call
    # of its own) is the team, not a member of it.
    delegates = agent_spans.select("trace_id", pl.col("owner").alias("span_id")).drop_nulls()
    calls = model_spans.select("trace_id", pl.col("owner").alias("span_id")).drop_nulls()
    members = agent_spans.join(delegates, on=_KEY, how="anti").vstack(agent_spans.join(calls, on=_KEY, how="semi"))
    agents = (
        members.sort("start", "agent", nulls_last=True, maintain_order=True)
        .unique(["trace_id", "agent"], keep="first", maintain_order=True)
        .select(pl.col("trace_id").alias("run_id"), pl.col("agent").alias("agent_id"))
    )
    names = agent_spans.select("trace_id", pl.col("span_id").alias("owner"), pl.col("agent").alias("agent_id"))
    usage = (
        model_spans.join(names, on=["trace_id", "owner"], how="left")
        .with_columns(
            pl.col("agent_id").fill_null(NO_AGENT),
            pl.col("model").fill_null(UNKNOWN_MODEL),
            ((pl.col("end") - pl.col("start")) / 1e9).alias("seconds"),
        )
        .group_by("trace_id", "agent_id", "model", maintain_order=True)
        .agg(pl.len().alias("calls"), _sum("input_tokens"), _sum("output_tokens"), _sum("seconds"))
        .rename({"trace_id": "run_id"})
    )
    return agents, usage


def _outcomes(events: pl.DataFrame, walk: pl.DataFrame, warnings: list[str]) -> pl.DataFrame:
    """One row per run and evaluation name: the event nearest the root span (the latest if tied)."""
    label = pl.col("label").str.strip_chars().str.to_lowercase()
    chosen = (
        events.join(walk.select(*_KEY, "depth"), on=_KEY, how="inner")
        .with_columns(
            pl.when(label.is_in(PASS_LABELS)).then(True).when(label.is_in(FAIL_LABELS)).then(False).alias("verdict")
        )
        .sort("depth", "time", descending=[False, True], nulls_last=True, maintain_order=True)
        .group_by("trace_id", "name", maintain_order=True)
        .agg(pl.all().first(), pl.len().alias("events"))
        .with_columns(pl.col("verdict").is_not_null().all().over("name").alias("pass_fail"))
    )
    for name, runs in chosen.filter(pl.col("events") > 1).group_by("name").len().sort("name").rows():
        warnings.append(
            f"evaluation {name!r} is recorded more than once in {runs} trace(s); the event on the span nearest "
            "the root is kept (the latest of those)"
        )
    passed = pl.when(pl.col("pass_fail")).then(pl.col("verdict"))
    outcomes = chosen.with_columns(passed.alias("passed")).with_columns(
        pl.when(pl.col("pass_fail")).then(pl.col("passed").cast(pl.Float64)).otherwise("score").alias("value")
    )
    differs = outcomes.filter(
        pl.col("pass_fail") & pl.col("score").is_not_null() & (pl.col("score") != pl.col("value"))
    )
    for name, runs in differs.group_by("name").len().sort("name").rows():
        warnings.append(
            f"evaluation {name!r} is pass/fail by its labels, and its score.value differs from 1 (pass) or "
            f"0 (fail) in {runs} run(s); the label is kept"
        )
    empty = outcomes.filter(pl.col("value").is_null())
    for name, runs in empty.group_by("name").len().sort("name").rows():
        warnings.append(
            f"evaluation {name!r} has no score.value and no pass/fail label in {runs} run(s); not recorded there"
        )
    return outcomes.filter(pl.col("value").is_not_null()).rename({"trace_id": "run_id"})


# -- the ingest -------------------------------------------------------------------------------


def _problems(runs: pl.DataFrame, system_attribute: str, case_attribute: str) -> pl.DataFrame:
    """``trace_id, first_file, first_line, problem, fix`` of each trace that cannot be a run."""
    fix_case = f"set it on the root span or the resource, or pass {option('case_attribute', '...')}"
    fix_system = f"set it, or name the file's system, or pass {option('system_attribute', '...')}"
    found = (
        pl.when(pl.col("loops"))
        .then(
            pl.struct(
                problem=pl.lit("its spans' parents form a loop, so it has no root span"), fix=pl.lit(None, pl.String())
            )
        )
        .when(pl.col("case_id").is_null())
        .then(
            pl.struct(
                problem=pl.lit(f"no span or resource has the case attribute {case_attribute!r}"), fix=pl.lit(fix_case)
            )
        )
        .when(pl.col("system").is_null())
        .then(
            pl.struct(
                problem=pl.lit(f"no span or resource has the system attribute {system_attribute!r}"),
                fix=pl.lit(fix_system),
            )
        )
    )
    return runs.select("trace_id", "first_file", "first_line", found.alias("found")).drop_nulls("found").unnest("found")


@validate_params({**LOG_PARAMETERS, "system_attribute": [NAME], "case_attribute": [NAME]})
def ingest_otlp(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    system_attribute: str = SYSTEM_ATTRIBUTE,
    case_attribute: str = CASE_ATTRIBUTE,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    """Read OpenTelemetry GenAI traces in OTLP JSON into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    paths
        OTLP JSON files, one ``ExportTraceServiceRequest`` object per line (what the
        OpenTelemetry Collector's file exporter writes), or folders: a folder stands for its
        ``.json`` and ``.jsonl`` files (not those of its sub-folders), sorted by name. A single
        path is accepted too, and ``{path: system}`` names the system of each path's runs (None:
        ``system``). A trace may be spread over several lines and files.
    out
        The Dataset folder to write, atomically; it may not be, hold or lie inside one of
        ``paths``. None: the Dataset is returned in memory.
    system
        ``runs.system`` of the runs of a path not named in ``paths`` (e.g. ``"mas"``), instead of
        reading it from ``system_attribute``.
    system_attribute
        The span or resource attribute holding a run's system (default: the service name).
    case_attribute
        The span or resource attribute holding a run's case, which pairs a MAS run with the
        single agent's on the same case.
    overwrite
        Replace an existing ``out``.
    skip_invalid
        Set aside the lines and traces that cannot be ingested (listed with their reasons in
        ``skipped``) and ingest the others, instead of failing at the first.
    shards
        ``None`` or 1: one file per table. ``N``: the sharded layout of
        :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and files read, what was skipped, the warnings.

    Raises
    ------
    IngestError
        A path does not exist or a folder holds no JSON file; or (without ``skip_invalid``) a
        line is not JSON, not an OTLP request, or has a span without a valid trace or span id
        or with token counts that are not counts (named by file and line); or a trace has no
        case (or no system) attribute or parents that loop (named by trace id, with the file and
        line of its first span). Also when nothing at all can be ingested.
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any file is read.

    Notes
    -----
    One trace is one run, ``run_id`` its trace id in hex. A run's ``system``, ``case_id``,
    ``task`` (``mas_eval.task``), ``variant`` (``mas_eval.variant``) and ``epoch``
    (``mas_eval.epoch``) are the attribute's value on the span nearest the root that has it
    (a span's own attribute before its resource's). ``seconds`` is the root span's duration;
    ``api_calls``, ``input_tokens`` and ``output_tokens`` count and sum the model-call spans
    (``chat``, ``text_completion``, ``generate_content``, ``embeddings``); ``tokens`` is their sum.
    ``agents`` holds each ``invoke_agent`` span's ``gen_ai.agent.name`` (else ``gen_ai.agent.id``,
    else the span's name), except a span that only delegates (other agents below it and no
    model call of its own: the team). ``usage`` sums each run's model calls by the agent whose
    span is nearest above them, and model. ``gen_ai.evaluation.result`` span events become
    ``outcomes``. ``docs/ingest/otlp.md`` gives every rule.
    """
    reader = _Reader(system_attribute, case_attribute)
    return ingest_logs(
        FORMAT, reader, paths, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
    )
