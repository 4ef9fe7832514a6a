"""The shapes trace files come in, and the spans each holds, as read: ids, times, status, attributes.

Five shapes hold OpenTelemetry spans, told apart by their top-level keys:

- ``otlp``: an OTLP ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``), as the
  Collector's file exporter writes one a line, or as one document (pretty-printed, one request
  or a list of them);
- ``tempo``: a Grafana Tempo trace (``{"batches": [...]}``, its API's and Grafana's download; or
  ``{"trace": {"resourceSpans": [...]}}``, its v2 API): resource spans whose scope spans may be
  the older ``instrumentationLibrarySpans`` and whose ids may be base64 (protobuf's own JSON mapping);
- ``jaeger``: Jaeger's JSON export (``{"data": [{"traceID", "spans", "processes"}]}``: the UI's
  download and the v1 query API), with ``tags``, ``logs``, ``references`` and times in microseconds;
- ``jaeger-v3``: Jaeger v3's API response (``{"result": {"resourceSpans": [...]}}``).

:func:`spans_of` turns a document of any shape into :class:`RawSpan` records: ids as lower-case
hex, times in nanoseconds as exact integers, the status, the span's and its resource's
attributes, and the events a reader of GenAI conventions needs. Every problem is an
:class:`~mas_eval.ingest.recipe.InvalidInputError` naming where in the document it is.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mas_eval.ingest.recipe import InvalidInputError, json_type
from mas_eval.ingest.values import text, unsigned

__all__ = [
    "KEPT_EVENTS",
    "SHAPES",
    "RawEvent",
    "RawSpan",
    "any_value",
    "attributes",
    "nanoseconds",
    "not_a_shape",
    "parse_json",
    "quoted",
    "shape_of",
    "spans_of",
]

#: Each shape, as the ingest's summary names it.
SHAPES: dict[str, str] = {
    "otlp": "OTLP JSON",
    "tempo": "Grafana Tempo trace (batches)",
    "jaeger": "Jaeger JSON export",
    "jaeger-v3": "Jaeger v3 API response",
}
#: The span events kept (the others, e.g. an HTTP client's, are not read): evaluation results and
#: the GenAI conventions' messages, current and older.
KEPT_EVENTS = frozenset(
    {
        "gen_ai.evaluation.result",
        "gen_ai.client.inference.operation.details",
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "gen_ai.content.prompt",
        "gen_ai.content.completion",
    }
)
#: The largest time an OTLP ``fixed64`` holds, in nanoseconds.
_MAX_TIME = 2**64 - 1
_HEX = re.compile(r"[0-9a-fA-F]+")
_VALUE_KINDS = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue")
#: ``status.code`` of an error: the enum's number, or its name as protobuf's JSON mapping writes it.
_ERROR_CODES = (2, "2", "STATUS_CODE_ERROR")


@dataclass(slots=True)
class RawEvent:
    """A span event as read: its name, time (nanoseconds, None if unknown) and attributes.

    Examples
    --------
    >>> RawEvent("gen_ai.choice", None, {"index": 0}).attributes
    {'index': 0}
    """

    name: str
    time: int | None
    attributes: dict[str, Any]


@dataclass(slots=True)
class RawSpan:
    """A span as read, whatever the shape it came in.

    ``error`` is None unless the span's status is an error, then its message ("" if none);
    ``start`` and ``end`` are nanoseconds since the epoch (None if unknown); ``where`` is the
    span's place in its document (``resourceSpans[0].scopeSpans[1].spans[4]``).

    Examples
    --------
    :func:`spans_of` makes them:

    >>> span = RawSpan("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", None, "chat", 1, 2, None, {}, {}, [], "")
    >>> span.parent_id is None, span.end - span.start
    (True, 1)
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int | None
    end: int | None
    error: str | None
    attributes: dict[str, Any]
    resource: dict[str, Any]
    events: list[RawEvent]
    where: str


def quoted(value: Any, limit: int = 40) -> str:
    r"""Quote ``value`` as a message does: ``repr``, at most ``limit`` characters, lone surrogates escaped.

    Examples
    --------
    >>> quoted("chat \ud800")
    "'chat \\ud800'"
    """
    if type(value) is str and len(value) < limit - 2 and value.isascii():
        return repr(value)
    said = repr(value)
    if len(said) > limit:
        said = said[: limit - 3] + "..."
    return said.encode("utf-8", "backslashreplace").decode("utf-8")


def parse_json(data: str, *, position: str = "line and column") -> Any:
    """Decode the JSON value of ``data``; raise an :class:`InvalidInputError` saying why it cannot be read.

    ``position`` is how a syntax error's place is given: ``"line and column"`` (a document) or
    ``"column"`` (one line of a file). A number beyond a float's range reads as infinity (the field
    that holds it says so); an integer of more digits than Python converts is refused here.

    Examples
    --------
    >>> parse_json('{"a": [1, 2')
    Traceback (most recent call last):
    ...
    mas_eval.ingest.recipe.InvalidInputError: not JSON (Expecting ',' delimiter at line 1, column 12)
    """
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if position == "column" else f"line {exc.lineno}, column {exc.colno}"
        msg = f"not JSON ({exc.msg} at {where})"
        raise InvalidInputError(msg) from None
    except RecursionError:
        msg = "not JSON that can be read: nested too deeply"
        raise InvalidInputError(msg) from None
    except ValueError as exc:  # Python refuses to convert an integer of more than 4,300 digits
        digits = re.search(r"value has (\d+) digits", str(exc))
        size = f"of {int(digits.group(1)):,} digits" if digits else "too long to convert"
        msg = f"not JSON that can be read: an integer {size}, more than any field holds"
        raise InvalidInputError(msg) from None


def shape_of(document: Any) -> str | None:
    """Return the shape of a document (a key of :data:`SHAPES`), or None if it is none of them.

    An empty object is an OTLP request without spans (protobuf's JSON mapping leaves out empty
    fields); a list is a list of OTLP requests.

    Examples
    --------
    >>> shape_of({"batches": []}), shape_of({"data": []}), shape_of([{"resourceSpans": []}]), shape_of(3)
    ('tempo', 'jaeger', 'otlp', None)
    """
    if isinstance(document, list):
        return "otlp"
    if not isinstance(document, dict):
        return None
    if "resourceSpans" in document or not document:
        return "otlp"
    if "batches" in document:
        return "tempo"
    inner = document.get("trace")
    if isinstance(inner, dict) and ("resourceSpans" in inner or "batches" in inner):
        return "tempo"
    inner = document.get("result")
    if isinstance(inner, dict) and "resourceSpans" in inner:
        return "jaeger-v3"
    if "data" in document and ("errors" in document or isinstance(document["data"], list | type(None))):
        return "jaeger"
    return None


def not_a_shape(document: Any) -> str:
    """Say what a document of no known shape is, and what was expected.

    Examples
    --------
    >>> not_a_shape({"spans": []}).split("; ")[-1]
    "got an object with the keys 'spans'"
    """
    if isinstance(document, dict):
        keys = ", ".join(quoted(key, 30) for key in list(document)[:5])
        got = f"an object with the keys {keys}"
    else:
        got = json_type(document)
    return (
        "expected OTLP trace data: an ExportTraceServiceRequest (resourceSpans), a Grafana Tempo trace "
        f"(batches), a Jaeger JSON export (data) or a Jaeger v3 response (result.resourceSpans); got {got}"
    )


def spans_of(document: Any, shape: str, *, at: str = "") -> Iterator[RawSpan]:
    """Yield the spans of ``document``, of ``shape`` (:func:`shape_of`), in the order written.

    ``at`` leads every place named in a problem (``"$[2]"`` for the third request of a list).

    Examples
    --------
    >>> resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "mas"}}]}
    >>> span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "7uGbfsPBsXQ=", "name": "chat",
    ...         "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001500000000"}
    >>> request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    >>> [(s.span_id, s.name, s.end - s.start, s.resource) for s in spans_of(request, "otlp")]
    [('eee19b7ec3c1b174', 'chat', 1500000000, {'service.name': 'mas'})]
    """
    if shape == "jaeger":
        yield from _jaeger(document)
        return
    if isinstance(document, list):
        for index, request in enumerate(document):
            if not isinstance(request, dict) or shape_of(request) != "otlp":
                msg = f"$[{index}]: {not_a_shape(request)}"
                raise InvalidInputError(msg)
            yield from _resource_spans(request.get("resourceSpans", []), f"$[{index}].resourceSpans")
        return
    if shape == "otlp":
        yield from _resource_spans(document.get("resourceSpans", []), f"{at}resourceSpans")
    elif shape == "jaeger-v3":
        yield from _resource_spans(document["result"].get("resourceSpans", []), "result.resourceSpans")
    elif "batches" in document:
        yield from _resource_spans(document["batches"], "batches")
    else:  # Tempo's v2 API: the trace's resource spans (or batches) under "trace"
        inner = document["trace"]
        key = "resourceSpans" if "resourceSpans" in inner else "batches"
        yield from _resource_spans(inner[key], f"trace.{key}")


# -- OTLP JSON (and Tempo's, and Jaeger v3's) ---------------------------------------------------


def _field(where: str, problem: str) -> InvalidInputError:
    return InvalidInputError(f"{where}: {problem}")


def _object(value: Any, where: str, *, optional: bool = True) -> dict[str, Any]:
    """Return ``value`` as an object (missing or null: an empty one, when ``optional``)."""
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise _field(where, f"expected an object, got {json_type(value)}")
    return value


def _array(value: Any, where: str) -> list[Any]:
    """Return ``value`` as an array (missing or null: an empty one)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _field(where, f"expected an array, got {json_type(value)}")
    return value


def any_value(value: Any, where: str) -> Any:
    """Return the Python value of an OTLP JSON ``AnyValue`` (``intValue`` may be a string or a number); None if unset.

    Examples
    --------
    >>> any_value({"intValue": "412"}, "x"), any_value({"arrayValue": {"values": [{"stringValue": "stop"}]}}, "x")
    (412, ['stop'])
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _field(where, f"expected an AnyValue object, got {json_type(value)}")
    kind = next((k for k in _VALUE_KINDS if k in value), None)
    if kind is None:
        return None
    item = value[kind]
    try:
        if kind in ("stringValue", "bytesValue") and isinstance(item, str):
            return item
        if kind == "boolValue" and isinstance(item, bool):
            return item
        if kind == "intValue" and isinstance(item, str | int) and not isinstance(item, bool):
            return int(item)
        if kind == "doubleValue" and isinstance(item, str | int | float) and not isinstance(item, bool):
            return float(item)  # "NaN" and "Infinity" are how OTLP JSON writes those doubles
        if kind == "arrayValue" and isinstance(item, dict):
            return [any_value(entry, where) for entry in _array(item.get("values"), where)]
        if kind == "kvlistValue" and isinstance(item, dict):
            return attributes(item.get("values"), where)
    except ValueError:
        pass
    raise _field(where, f"{kind} {quoted(item)} is not a valid {kind}")


def attributes(items: Any, where: str) -> dict[str, Any]:
    """Return ``[{key, value}]`` as a dict (a key given twice: the last).

    Most values are one string or one number: those are read here directly; the place of a
    problem is only spelled out when there is one.

    Examples
    --------
    >>> attributes([{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "412"}}], "span")
    {'gen_ai.usage.input_tokens': 412}
    """
    found: dict[str, Any] = {}
    for item in _array(items, f"{where}.attributes"):
        if type(item) is not dict or type(key := item.get("key")) is not str:
            raise _field(where, "an attribute is not a {key, value} object")
        value = item.get("value")
        if type(value) is dict and len(value) == 1:
            kind, inner = next(iter(value.items()))
            if kind == "stringValue" and type(inner) is str:
                found[key] = inner
                continue
            if kind == "intValue" and type(inner) is str and inner.isdigit() and len(inner) < 19:
                found[key] = int(inner)
                continue
        found[key] = any_value(value, f"{where} attribute {quoted(key, 60)}")
    return found


def _id(value: Any, size: int, *, name: str, where: str, required: bool = True) -> str | None:
    """Return a trace (16 bytes) or span (8 bytes) id as lower-case hex, from hex or base64.

    Hex or base64 as protobuf's JSON mapping and Tempo write it. Missing, empty or all zeros: None
    when not ``required``.
    """
    if value is None or value == "":
        if required:
            raise _field(where, f"{name} missing")
        return None
    text_ = None
    if isinstance(value, str):
        if len(value) == 2 * size and _HEX.fullmatch(value):
            text_ = value.lower()
        else:
            try:
                raw = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raw = b""
            if len(raw) == size:
                text_ = raw.hex()
    if text_ is None:
        raise _field(where, f"{name} {quoted(value)} is not an id: {2 * size} hex digits, or {size} bytes in base64")
    if text_.strip("0") == "":  # all zeros is OTLP's invalid id
        if required:
            raise _field(where, f"{name} is all zeros, which OTLP reserves for no id")
        return None
    return text_


def nanoseconds(value: Any, field: str, where: str, *, scale: int = 1) -> int | None:
    """Return a time in nanoseconds from ``value`` in units of ``scale`` nanoseconds (1000: Jaeger's microseconds).

    OTLP's ``fixed64``: 0 to 2**64 - 1; 0 and "" are unknown.

    Examples
    --------
    >>> nanoseconds("18446744073709551615", "endTimeUnixNano", "span"), nanoseconds(0, "startTime", "span")
    (18446744073709551615, None)
    >>> nanoseconds(1509533706470949, "startTime", "span", scale=1000)
    1509533706470949000
    """
    if type(value) is str and value.isdigit() and len(value) < 20:  # the usual case: OTLP JSON's decimal string
        number = int(value)
        return None if number == 0 else _scaled(number, scale, field, where)
    if value is None or value == "":
        return None
    if isinstance(value, float) and not math.isfinite(value):  # JSON's 1e400 reads as infinity
        raise _field(where, f"field {field!r} is a number beyond a float's range (1.8e308), which cannot be a time")
    try:
        number = unsigned(value, field, strings=True)
    except InvalidInputError as exc:
        raise _field(where, f"{exc.problem}, which cannot be a time") from None
    if number is None or number == 0:
        return None
    return _scaled(number, scale, field, where)


def _scaled(number: int, scale: int, field: str, where: str) -> int:
    if number * scale > _MAX_TIME:
        raise _field(where, f"{field} {number} is later than any OTLP time (2**64 - 1 nanoseconds)")
    return number * scale


def _error(status: Any, where: str) -> str | None:
    """Return the message of an error status ("" without one); None for any other status."""
    found = _object(status, f"{where}.status")
    if found.get("code") not in _ERROR_CODES:
        return None
    return _text(found.get("message"), "status.message", where) or ""


def _text(value: Any, field: str, where: str) -> str | None:
    """Return a string value checked as a column's text (no lone surrogate); refuse a non-string."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _field(where, f"{field} is {json_type(value)}, not a string")
    try:
        return text(value, field)
    except InvalidInputError as exc:
        raise _field(where, exc.problem) from None


def _events(items: Any, where: str) -> list[RawEvent]:
    found = []
    for e, event in enumerate(_array(items, f"{where}.events")):
        at = f"{where}.events[{e}]"
        event = _object(event, at, optional=False)
        name = event.get("name")
        if not isinstance(name, str) or name not in KEPT_EVENTS:
            continue
        time = nanoseconds(event.get("timeUnixNano"), "timeUnixNano", at)
        found.append(RawEvent(name, time, attributes(event.get("attributes"), at)))
    return found


def _resource_spans(items: Any, where: str) -> Iterator[RawSpan]:
    for r, resource_spans in enumerate(_array(items, where)):
        at = f"{where}[{r}]"
        resource_spans = _object(resource_spans, at, optional=False)
        resource = _object(resource_spans.get("resource"), f"{at}.resource")
        shared = attributes(resource.get("attributes"), f"{at}.resource")
        key = "scopeSpans" if "scopeSpans" in resource_spans else "instrumentationLibrarySpans"
        for s, scope_spans in enumerate(_array(resource_spans.get(key), f"{at}.{key}")):
            scope_at = f"{at}.{key}[{s}]"
            scope_spans = _object(scope_spans, scope_at, optional=False)
            for i, span in enumerate(_array(scope_spans.get("spans"), f"{scope_at}.spans")):
                yield _otlp_span(span, shared, f"{scope_at}.spans[{i}]")


def _otlp_span(span: Any, resource: dict[str, Any], where: str) -> RawSpan:
    span = _object(span, where, optional=False)
    name = span.get("name") if isinstance(span.get("name"), str) else ""
    where = f"{where} ({quoted(name)})" if name else where
    return RawSpan(
        trace_id=_id(span.get("traceId"), 16, name="traceId", where=where) or "",
        span_id=_id(span.get("spanId"), 8, name="spanId", where=where) or "",
        parent_id=_id(span.get("parentSpanId"), 8, name="parentSpanId", where=where, required=False),
        name=_text(name, "name", where) or "",
        start=nanoseconds(span.get("startTimeUnixNano"), "startTimeUnixNano", where),
        end=nanoseconds(span.get("endTimeUnixNano"), "endTimeUnixNano", where),
        error=_error(span.get("status"), where),
        attributes=attributes(span.get("attributes"), where),
        resource=resource,
        events=_events(span.get("events"), where),
        where=where,
    )


# -- Jaeger's JSON ------------------------------------------------------------------------------


def _jaeger_id(value: Any, size: int, *, name: str, where: str, required: bool = True) -> str | None:
    """Return a Jaeger id as hex, zero-padded as Jaeger's own translation to OTLP pads it.

    Up to ``2 * size`` hex digits (a 64-bit trace id has 16).
    """
    if value is None or value == "":
        if required:
            raise _field(where, f"{name} missing")
        return None
    if not (isinstance(value, str) and len(value) <= 2 * size and _HEX.fullmatch(value)):
        raise _field(where, f"{name} {quoted(value)} is not an id of at most {2 * size} hex digits")
    if value.strip("0") == "":
        if required:
            raise _field(where, f"{name} is all zeros, which is no id")
        return None
    return value.lower().rjust(2 * size, "0")


def _tag_value(tag: dict[str, Any], where: str) -> Any:
    kind, value = tag.get("type", "string"), tag.get("value")
    try:
        if kind == "bool":
            return value if isinstance(value, bool) else {"true": True, "false": False}[str(value).lower()]
        if kind == "int64" and not isinstance(value, bool):
            return int(value)
        if kind == "float64" and not isinstance(value, bool):
            return float(value)
    except (KeyError, TypeError, ValueError):
        raise _field(where, f"{kind} {quoted(value)} is not a valid {kind}") from None
    return value


def _tags(items: Any, where: str) -> dict[str, Any]:
    """Jaeger's ``[{key, type, value}]`` as a dict."""
    found: dict[str, Any] = {}
    for item in _array(items, f"{where}.tags"):
        if not (isinstance(item, dict) and isinstance(item.get("key"), str)):
            raise _field(where, "a tag is not a {key, type, value} object")
        found[item["key"]] = _tag_value(item, f"{where} tag {quoted(item['key'], 60)}")
    return found


def _jaeger(document: dict[str, Any]) -> Iterator[RawSpan]:
    errors = document.get("errors")
    if isinstance(errors, list) and errors:
        first = errors[0].get("msg") if isinstance(errors[0], dict) else errors[0]
        msg = f"a Jaeger response that reports an error, not traces: {quoted(first, 80)}"
        raise InvalidInputError(msg)
    for t, trace in enumerate(_array(document.get("data"), "data")):
        at = f"data[{t}]"
        trace = _object(trace, at, optional=False)
        processes = {
            key: _jaeger_resource(process, f"{at}.processes[{quoted(key)}]")
            for key, process in _object(trace.get("processes"), f"{at}.processes").items()
        }
        for i, span in enumerate(_array(trace.get("spans"), f"{at}.spans")):
            yield _jaeger_span(span, processes, f"{at}.spans[{i}]")


def _jaeger_resource(process: Any, where: str) -> dict[str, Any]:
    process = _object(process, where)
    resource = _tags(process.get("tags"), where)
    if process.get("serviceName") is not None:
        resource["service.name"] = process["serviceName"]
    return resource


def _jaeger_parent(span: dict[str, Any], trace_id: str, where: str) -> str | None:
    """Return the parent span's id: ``parentSpanID``, else the first ``CHILD_OF``, else ``FOLLOWS_FROM`` reference.

    ``parentSpanID`` is older exports'; a reference counts within the trace only (Jaeger's UI draws a
    span under either kind).
    """
    parent = _jaeger_id(span.get("parentSpanID"), 8, name="parentSpanID", where=where, required=False)
    if parent is not None:
        return parent
    found: dict[str, str] = {}
    for r, reference in enumerate(_array(span.get("references"), f"{where}.references")):
        at = f"{where}.references[{r}]"
        reference = _object(reference, at, optional=False)
        ref_trace = _jaeger_id(reference.get("traceID"), 16, name="traceID", where=at, required=False)
        ref_span = _jaeger_id(reference.get("spanID"), 8, name="spanID", where=at, required=False)
        if ref_span is not None and ref_trace in (None, trace_id):
            found.setdefault(str(reference.get("refType", "CHILD_OF")).upper(), ref_span)
    return found.get("CHILD_OF") or found.get("FOLLOWS_FROM")


def _jaeger_span(span: Any, processes: dict[str, dict[str, Any]], where: str) -> RawSpan:
    span = _object(span, where, optional=False)
    name = span.get("operationName") if isinstance(span.get("operationName"), str) else ""
    where = f"{where} ({quoted(name)})" if name else where
    trace_id = _jaeger_id(span.get("traceID"), 16, name="traceID", where=where) or ""
    tags = _tags(span.get("tags"), where)
    start = nanoseconds(span.get("startTime"), "startTime", where, scale=1000)
    duration = span.get("duration")
    length = nanoseconds(duration, "duration", where, scale=1000) or 0  # 0: a span of no time
    end = None if start is None or duration in (None, "") else start + length
    if end is not None and end > _MAX_TIME:
        raise _field(where, "startTime + duration is later than any OTLP time (2**64 - 1 nanoseconds)")
    error = None
    if str(tags.get("otel.status_code", "")).upper() == "ERROR" or tags.get("error") in (True, "true"):
        error = _text(tags.get("otel.status_description"), "otel.status_description", where) or ""
    if "process" in span:
        resource = _jaeger_resource(span["process"], f"{where}.process")
    else:
        process = span.get("processID")
        resource = processes.get(process, {}) if isinstance(process, str) else {}
    events = []
    for g, log in enumerate(_array(span.get("logs"), f"{where}.logs")):
        at = f"{where}.logs[{g}]"
        log = _object(log, at, optional=False)
        fields = _tags(log.get("fields"), at)
        name_ = fields.pop("event", None)
        if isinstance(name_, str) and name_ in KEPT_EVENTS:
            events.append(RawEvent(name_, nanoseconds(log.get("timestamp"), "timestamp", at, scale=1000), fields))
    return RawSpan(
        trace_id=trace_id,
        span_id=_jaeger_id(span.get("spanID"), 8, name="spanID", where=where) or "",
        parent_id=_jaeger_parent(span, trace_id, where),
        name=_text(name, "operationName", where) or "",
        start=start,
        end=end,
        error=error,
        attributes=tags,
        resource=resource,
        events=events,
        where=where,
    )
