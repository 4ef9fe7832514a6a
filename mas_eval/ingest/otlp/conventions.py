"""What a span says under the GenAI semantic conventions (current and older names) and OpenInference's.

:func:`read_span` turns a :class:`~mas_eval.ingest.otlp.shapes.RawSpan` into a :class:`Span`:
what kind of step it is (an agent, a model call, a tool call), whether it is an evaluation (the
judge's, kept apart from the system's work), and the facts a run's tables take from it: the
agent's name, the model, the tokens (cached ones counted in the input), the messages sent and
received, the tool's name and arguments, the status's error, the evaluation results, and the
run's context (system, case, task, variant, epoch). Every value passes through
:mod:`mas_eval.ingest.values` before it becomes one; ``docs/ingest/otlp.md`` maps every name.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from mas_eval.ingest.otlp.shapes import RawSpan, quoted
from mas_eval.ingest.recipe import InvalidInputError
from mas_eval.ingest.values import Impossible, checked_sum, count, duration, identifier, integer, number, text

__all__ = [
    "AGENT_NAMES",
    "CACHE_READ_TOKENS",
    "CACHE_WRITE_TOKENS",
    "EPOCH_ATTRIBUTE",
    "EVALUATION_EVENT",
    "EVALUATION_OPERATIONS",
    "INPUT_TOKENS",
    "MODEL_NAMES",
    "MODEL_OPERATIONS",
    "OUTPUT_TOKENS",
    "TASK_ATTRIBUTE",
    "TOOL_ARGUMENTS",
    "TOOL_NAMES",
    "VARIANT_ATTRIBUTE",
    "Evaluation",
    "Message",
    "Notes",
    "Recorded",
    "Span",
    "Tool",
    "read_span",
]

OPERATION = "gen_ai.operation.name"
#: OpenInference's span kind, and OpenLLMetry's.
OPENINFERENCE_KIND = "openinference.span.kind"
TRACELOOP_KIND = "traceloop.span.kind"
#: The operations that are one model call each (GenAI semantic conventions' inference and embeddings spans).
MODEL_OPERATIONS = ("chat", "text_completion", "generate_content", "embeddings")
#: Operations of a span recording an evaluation (no convention names one yet; these are in use).
EVALUATION_OPERATIONS = ("evaluation", "evaluate")
EVALUATION_EVENT = "gen_ai.evaluation.result"
#: Optional attributes of ``runs.task``, ``runs.variant`` and ``runs.epoch``.
TASK_ATTRIBUTE = "mas_eval.task"
VARIANT_ATTRIBUTE = "mas_eval.variant"
EPOCH_ATTRIBUTE = "mas_eval.epoch"
#: Where each fact is read, the first name present winning: the current GenAI name, its older
#: names, then OpenInference's (and OpenLLMetry's where it has its own).
AGENT_NAMES = ("gen_ai.agent.name", "gen_ai.agent.id", "agent.name", "traceloop.entity.name")
MODEL_NAMES = ("gen_ai.response.model", "llm.model_name", "gen_ai.request.model", "embedding.model_name")
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion")
CACHE_READ_TOKENS = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.cached_tokens",
    "llm.token_count.prompt_details.cache_read",
)
CACHE_WRITE_TOKENS = (
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
)
TOOL_NAMES = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
TOOL_ARGUMENTS = ("gen_ai.tool.call.arguments", "input.value", "traceloop.entity.input")
TOOL_CALL_IDS = ("gen_ai.tool.call.id", "tool_call.id")
EVALUATOR_NAMES = ("gen_ai.evaluation.name", "gen_ai.agent.name", "eval.name")
#: The older GenAI events, one message each, and the role each stands for.
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
#: Roles as other writers name them, and the schema's word.
_ROLES = {"model": "assistant", "ai": "assistant", "human": "user", "function": "tool", "developer": "system"}
#: OpenInference's messages (``llm.input_messages.0.message.role``) and OpenLLMetry's (``gen_ai.prompt.0.role``).
_INDEXED = re.compile(r"(?:llm\.(input|output)_messages|gen_ai\.(prompt|completion))\.(\d+)\.(.+)")
_INDEXED_STARTS = ("llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.", "gen_ai.completion.")
_CONTENT_PART = re.compile(r"(?:message\.)?contents\.(\d+)\.message_content\.text")
_CALL_ID = re.compile(r"(?:message\.)?tool_calls\.(\d+)\.(?:tool_call\.)?id")


@dataclass(slots=True)
class Message:
    """One message of a model call: its role, text (None if it holds none) and the tool calls it asks for.

    Examples
    --------
    >>> Message("assistant", None, ("call_1",)).calls
    ('call_1',)
    """

    role: str
    text: str | None
    calls: tuple[str, ...] = ()


@dataclass(slots=True)
class Tool:
    """What an ``execute_tool`` span (OpenInference: TOOL) called: the tool, its arguments (JSON text), the call's id.

    Examples
    --------
    >>> Tool("lookup_order", '{"order_id": "A-1187"}', "call_1").name
    'lookup_order'
    """

    name: str
    arguments: str | None
    call_id: str | None


@dataclass(slots=True)
class Evaluation:
    """A ``gen_ai.evaluation.result``: name, time, score (None if none, or set aside), label, explanation.

    Examples
    --------
    >>> Evaluation("accuracy", None, None, "pass", None).label
    'pass'
    """

    name: str
    time: int | None
    score: float | None
    label: str | None
    explanation: str | None


class Recorded(Impossible):
    """An :class:`~mas_eval.ingest.values.Impossible` that keeps what was added, to add it to another.

    Examples
    --------
    >>> recorded = Recorded()
    >>> recorded.add("seconds", -2.0, "line 3")
    >>> recorded.added
    [('seconds', -2.0, 'line 3')]
    """

    def __init__(self) -> None:
        super().__init__()
        self.added: list[tuple[str, Any, str]] = []

    def add(self, field: str, value: Any, where: str) -> None:
        """Record the impossible value, and keep it in :attr:`added`."""
        super().add(field, value, where)
        self.added.append((field, value, where))


@dataclass(slots=True)
class Notes:
    """What reading one document set aside, said once per file (:meth:`lines`) once the document is kept.

    Examples
    --------
    >>> notes = Notes()
    >>> notes.set_aside.append("line 2: field 'gen_ai.evaluation.score.value' is inf, not a finite number")
    >>> notes.lines("traces.json")
    ["traces.json: 1 value(s) set aside, which no run can have (line 2: field 'gen_ai.evaluation.score.value' is inf, not a finite number)"]
    """  # noqa: E501

    impossible: Recorded = field(default_factory=Recorded)
    #: Values set aside (an infinite score), each with where it was.
    set_aside: list[str] = field(default_factory=list)
    #: Message attributes that are not JSON (cut short by an attribute length limit), kept as text.
    unparsed: list[str] = field(default_factory=list)

    def merge(self, other: Notes) -> None:
        """Add what ``other`` (a document's notes) holds."""
        for name, value, where in other.impossible.added:
            self.impossible.add(name, value, where)
        self.set_aside += other.set_aside
        self.unparsed += other.unparsed

    def lines(self, file: object) -> list[str]:
        """Return one line per kind of value set aside in ``file``."""
        out = self.impossible.lines(file)
        for found, said in (
            (self.set_aside, "value(s) set aside, which no run can have"),
            (
                self.unparsed,
                "message attribute(s) not JSON (cut short by an attribute length limit?), each kept as one "
                "message's text",
            ),
        ):
            if found:
                shown = "; ".join(found[:3]) + ("; ..." if len(found) > 3 else "")
                out.append(f"{file}: {len(found)} {said} ({shown})")
        return out


@dataclass(slots=True)
class Span:
    """A span as the run's tables see it.

    ``kind`` is ``"agent"``, ``"model"`` (a model call), ``"tool"`` or None; ``evaluator`` names
    the evaluator when the span is an evaluation (its model calls are the judge's, not the
    system's); ``seconds`` is its duration; ``file``, ``line`` and ``order`` say where and when
    it was read (``line`` None for a file read as one document). :func:`read_span` makes it.

    Examples
    --------
    >>> times = (None, None, None, None)  # start, end, seconds, error
    >>> span = Span("t", "s", None, "chat", *times, "model", None, None, "m", 3, 1, [], [], None, [], {}, 0)
    >>> span.kind, span.input_tokens
    ('model', 3)
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int | None
    end: int | None
    seconds: float | None
    error: str | None
    kind: str | None
    evaluator: str | None
    agent: str | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    inputs: list[Message]
    outputs: list[Message]
    tool: Tool | None
    evaluations: list[Evaluation]
    context: dict[str, str | None]
    epoch: int | None
    file: int = 0
    line: int | None = None
    order: int = 0
    where: str = ""


# -- values -------------------------------------------------------------------------------------


def _at(where: str, exc: InvalidInputError) -> InvalidInputError:
    return InvalidInputError(f"{where}: {exc.problem}")


def _first(attributes: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any]:
    """Return the first of ``keys`` that ``attributes`` has a value for, and the value (``("", None)`` if none)."""
    for key in keys:
        value = attributes.get(key)
        if value is not None and value != "":
            return key, value
    return "", None


def _name(value: Any, key: str, where: str) -> str | None:
    """Return a name (of an agent, a model, a tool): text, or a whole number written as text; blank is none."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        msg = f"{where}: {key} is {quoted(value)}, not a name"
        raise InvalidInputError(msg)
    try:
        checked = text(value, key)
    except InvalidInputError as exc:
        raise _at(where, exc) from None
    return checked if checked and checked.strip() else None


def _json_text(value: Any, key: str, where: str) -> str | None:
    """Return a value as JSON text: a string as written, a structured value (an AnyValue list or map) dumped."""
    if value is None:
        return None
    said = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    try:
        return text(said, key)
    except InvalidInputError as exc:
        raise _at(where, exc) from None


def _tokens(attributes: dict[str, Any], keys: tuple[str, ...], where: str, notes: Notes, noted: str) -> int | None:
    key, value = _first(attributes, keys)
    if not key:
        return None
    try:
        return count(value, key, notes.impossible, where=noted, strings=True)
    except InvalidInputError as exc:
        msg = f"{where}: {exc.problem}, not a count of tokens (a whole number >= 0)"
        raise InvalidInputError(msg) from None


def _input_tokens(attributes: dict[str, Any], where: str, notes: Notes, noted: str) -> int | None:
    """Return the tokens sent, cached ones included.

    The conventions' ``gen_ai.usage.input_tokens`` "SHOULD include all types of input tokens,
    including cached tokens" (OpenInference's prompt count includes them too), so the count is
    taken as written; a writer whose count is smaller than its cached tokens left them out (as
    Anthropic's API counts), and they are added.
    """
    sent = _tokens(attributes, INPUT_TOKENS, where, notes, noted)
    read = _tokens(attributes, CACHE_READ_TOKENS, where, notes, noted)
    written = _tokens(attributes, CACHE_WRITE_TOKENS, where, notes, noted)
    try:
        cached = checked_sum([read, written], "cached input tokens")
        if not cached:
            return sent
        if sent is None:
            return cached
        return checked_sum([sent, cached], "input tokens") if sent < cached else sent
    except InvalidInputError as exc:
        raise _at(where, exc) from None


# -- messages -----------------------------------------------------------------------------------


def _role(value: Any, default: str) -> str:
    if not isinstance(value, str) or not value.strip():
        return default
    role = value.strip().lower()
    return _ROLES.get(role, role)


def _part(part: Any, texts: list[str], calls: list[str]) -> None:
    """Split a message part (current conventions' ``parts``, or an API's content parts) into texts and call ids."""
    if isinstance(part, str):
        texts.append(part)
        return
    if not isinstance(part, dict):
        return
    kind = part.get("type")
    if kind in ("tool_call", "function_call", "tool_use"):
        if isinstance(part.get("id"), str):
            calls.append(part["id"])
        return
    if kind in ("tool_call_response", "tool_result", "function_call_output"):
        response = next((part[k] for k in ("response", "result", "output", "content") if part.get(k) is not None), None)
        if response is not None:
            texts.append(response if isinstance(response, str) else json.dumps(response, ensure_ascii=False))
        return
    if kind in (None, "text", "input_text", "output_text"):
        said = part.get("content", part.get("text"))
        if isinstance(said, str):
            texts.append(said)


def _message(item: Any, default: str, key: str, where: str) -> Message | None:
    """Read one message of a JSON list of messages (the conventions', or an API's)."""
    if isinstance(item, str):
        return Message(default, _checked(item, key, where))
    if not isinstance(item, dict):
        return None
    if "role" not in item and isinstance(item.get("message"), dict):  # a choice: {index, finish_reason, message}
        item = item["message"]
    texts: list[str] = []
    calls: list[str] = []
    parts = item.get("parts")
    for part in parts if isinstance(parts, list) else ():
        _part(part, texts, calls)
    content = item.get("content")
    if isinstance(content, list):
        for part in content:
            _part(part, texts, calls)
    elif content is not None:
        texts.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
    requested = item.get("tool_calls")
    for call in requested if isinstance(requested, list) else ():
        if isinstance(call, dict) and isinstance(call.get("id"), str):
            calls.append(call["id"])
    said = "\n".join(texts) if texts else None
    return Message(_role(item.get("role"), default), _checked(said, key, where), tuple(calls))


def _checked(said: str | None, key: str, where: str) -> str | None:
    try:
        return text(said, key)
    except InvalidInputError as exc:
        raise _at(where, exc) from None


def _messages(value: Any, default: str, key: str, where: str, notes: Notes, noted: str = "") -> list[Message]:
    """Return the messages of a JSON attribute (``gen_ai.input.messages``...): JSON text, or structured."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            notes.unparsed.append(f"{noted or where}: {key}")
            return [Message(default, _checked(value, key, where))]
    items = value if isinstance(value, list) else [value]
    return [m for item in items if (m := _message(item, default, key, where)) is not None]


def _instructions(value: Any, where: str, notes: Notes, noted: str) -> list[Message]:
    """Read ``gen_ai.system_instructions``: the system prompt's parts, as one system message."""
    found = _messages(value, "system", "gen_ai.system_instructions", where, notes, noted)
    texts = [m.text for m in found if m.text]
    return [Message("system", "\n".join(texts))] if texts else []


def _indexed(attributes: dict[str, Any], where: str) -> tuple[list[Message], list[Message]]:
    """OpenInference's ``llm.input_messages.N.message.*`` and OpenLLMetry's ``gen_ai.prompt.N.*``: (inputs, outputs)."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(_INDEXED_STARTS):
            continue
        match = _INDEXED.fullmatch(key)
        if match is None:
            continue
        side = "input" if (match.group(1) or match.group(2)) in ("input", "prompt") else "output"
        fields = found.setdefault((side, int(match.group(3))), {"parts": {}, "calls": {}})
        rest = match.group(4).removeprefix("message.")
        if rest in ("role", "content"):
            fields[rest] = value
        elif (part := _CONTENT_PART.fullmatch(rest)) is not None:
            fields["parts"][int(part.group(1))] = value
        elif (call := _CALL_ID.fullmatch(rest)) is not None:
            fields["calls"][int(call.group(1))] = value
    inputs: list[Message] = []
    outputs: list[Message] = []
    for (side, _), fields in sorted(found.items(), key=lambda item: (item[0][0], item[0][1])):
        texts = [fields["content"]] if isinstance(fields.get("content"), str) else []
        texts += [fields["parts"][k] for k in sorted(fields["parts"]) if isinstance(fields["parts"][k], str)]
        calls = tuple(str(fields["calls"][k]) for k in sorted(fields["calls"]))
        key = "llm.input_messages" if side == "input" else "llm.output_messages"
        said = _checked("\n".join(texts) if texts else None, key, where)
        message = Message(_role(fields.get("role"), "user" if side == "input" else "assistant"), said, calls)
        (inputs if side == "input" else outputs).append(message)
    return inputs, outputs


def _event_body(attributes: dict[str, Any]) -> dict[str, Any]:
    """Return an older per-message event's body: its attributes, or the JSON of ``gen_ai.event.content``."""
    body = attributes.get("gen_ai.event.content")
    if isinstance(body, str):
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            return {"content": body}
        return decoded if isinstance(decoded, dict) else {"content": body}
    found = dict(attributes)
    for key in ("message", "tool_calls"):  # a structured value written as JSON text
        if isinstance(found.get(key), str):
            with contextlib.suppress(ValueError, RecursionError):
                found[key] = json.loads(found[key])
    return found


def _conversation(raw: RawSpan, where: str, notes: Notes, noted: str) -> tuple[list[Message], list[Message]]:
    """Return the messages a model call sent and received: from the first source that has them."""
    attributes = raw.attributes
    per_message: tuple[list[Message], list[Message]] = ([], [])
    legacy: tuple[list[Message], list[Message]] = ([], [])
    for event in raw.events:
        if event.name == "gen_ai.client.inference.operation.details":
            attributes = {**event.attributes, **attributes}  # the span's own attributes first
        elif event.name in _MESSAGE_EVENTS:
            found = _message(_event_body(event.attributes), _MESSAGE_EVENTS[event.name], event.name, where)
            if found is not None:
                per_message[0].append(found)
        elif event.name == "gen_ai.choice":
            found = _message(_event_body(event.attributes), "assistant", event.name, where)
            if found is not None:
                per_message[1].append(found)
        elif event.name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            prompt = event.name == "gen_ai.content.prompt"
            key = "gen_ai.prompt" if prompt else "gen_ai.completion"
            if event.attributes.get(key) is not None:
                side = legacy[0] if prompt else legacy[1]
                side += _messages(event.attributes[key], "user" if prompt else "assistant", key, where, notes, noted)
    indexed = _indexed(attributes, where)
    inputs: list[Message] = []
    outputs: list[Message] = []
    if attributes.get("gen_ai.input.messages") is not None:
        inputs = _messages(attributes["gen_ai.input.messages"], "user", "gen_ai.input.messages", where, notes, noted)
    if attributes.get("gen_ai.output.messages") is not None:
        outputs = _messages(
            attributes["gen_ai.output.messages"], "assistant", "gen_ai.output.messages", where, notes, noted
        )
    inputs = inputs or per_message[0] or legacy[0] or indexed[0]
    outputs = outputs or per_message[1] or legacy[1] or indexed[1]
    instructions = attributes.get("gen_ai.system_instructions")
    if instructions is not None and not (inputs and inputs[0].role == "system"):
        inputs = _instructions(instructions, where, notes, noted) + inputs
    return inputs, outputs


# -- the span -----------------------------------------------------------------------------------


def _lower(value: Any) -> str | None:
    return value.strip().lower() if isinstance(value, str) else None


def _kind(attributes: dict[str, Any]) -> tuple[str | None, bool]:
    """Return the span's kind (``"agent"``, ``"model"``, ``"tool"`` or None), and whether it is an evaluation."""
    operation = _lower(attributes.get(OPERATION))
    openinference = _lower(attributes.get(OPENINFERENCE_KIND))
    traceloop = _lower(attributes.get(TRACELOOP_KIND))
    evaluation = (
        operation in EVALUATION_OPERATIONS or openinference == "evaluator" or "gen_ai.evaluation.name" in attributes
    )
    if operation == "invoke_agent" or openinference == "agent" or traceloop == "agent":
        return "agent", evaluation
    legacy = _lower(attributes.get("llm.request.type"))  # OpenLLMetry before the GenAI conventions
    if (
        operation in MODEL_OPERATIONS
        or openinference in ("llm", "embedding")
        or (operation is None and legacy in ("chat", "completion", "embedding"))
    ):
        return "model", evaluation
    if operation == "execute_tool" or openinference == "tool" or traceloop == "tool":
        return "tool", evaluation
    return None, evaluation


def _evaluation(attributes: dict[str, Any], time: int | None, where: str, notes: Notes, noted: str) -> Evaluation:
    name = attributes.get("gen_ai.evaluation.name")
    if name is None:
        msg = f"{where}: a {EVALUATION_EVENT} event without gen_ai.evaluation.name"
        raise InvalidInputError(msg)
    try:
        checked = identifier(name, "gen_ai.evaluation.name")
        score = None
        try:
            score = number(
                attributes.get("gen_ai.evaluation.score.value"), "gen_ai.evaluation.score.value", strings=True
            )
        except InvalidInputError as exc:  # a score no run can have: set aside for this run, and said
            notes.set_aside.append(f"{noted}: {exc.problem}")
        label = attributes.get("gen_ai.evaluation.score.label")
        if isinstance(label, bool):
            label = str(label).lower()
        elif isinstance(label, int | float):
            label = str(label)
        return Evaluation(
            name=checked,
            time=time,
            score=score,
            label=text(label, "gen_ai.evaluation.score.label") if isinstance(label, str) else None,
            explanation=_json_text(
                attributes.get("gen_ai.evaluation.explanation"), "gen_ai.evaluation.explanation", ""
            ),
        )
    except InvalidInputError as exc:
        raise _at(where, exc) from None


def _context(value: Any, key: str, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        msg = f"{where}: {key} is {quoted(value)}, not a name (text)"
        raise InvalidInputError(msg)
    try:
        checked = text(value, key)
    except InvalidInputError as exc:
        raise _at(where, exc) from None
    return checked if checked and checked.strip() else None


def read_span(raw: RawSpan, context: dict[str, str], notes: Notes, *, place: str = "") -> Span:
    """Read the :class:`Span` of ``raw``.

    ``context`` maps each run column read from an attribute (``system``, ``case_id``, ``task``,
    ``variant``) to the attribute; ``notes`` collects what is set aside; ``place`` leads every
    place named in a note (``"line 3: "``).

    Examples
    --------
    >>> from mas_eval.ingest.otlp.shapes import RawSpan
    >>> usage = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "claude", "gen_ai.response.model": "claude-4",
    ...          "gen_ai.usage.input_tokens": 100, "gen_ai.usage.cache_read.input_tokens": 300}
    >>> start, resource = 10**18, {"service.name": "mas"}
    >>> raw = RawSpan("t" * 32, "s" * 16, None, "chat", start, start + 2 * 10**9, None, usage, resource, [], "")
    >>> span = read_span(raw, {"system": "service.name"}, Notes())
    >>> span.kind, span.model, span.input_tokens, span.seconds, span.context
    ('model', 'claude-4', 400, 2.0, {'system': 'mas'})
    """
    where, noted = raw.where, f"{place}{raw.where}"  # a problem is named within its line; a note, with it
    attributes = raw.attributes
    kind, evaluation = _kind(attributes)
    evaluator = None
    if evaluation:
        evaluator = _name(_first(attributes, EVALUATOR_NAMES)[1], "gen_ai.evaluation.name", where) or (
            raw.name or "(evaluator)"
        )
    agent = model = tool = None
    input_tokens = output_tokens = None
    inputs: list[Message] = []
    outputs: list[Message] = []
    if kind == "agent":
        key, value = _first(attributes, AGENT_NAMES)
        agent = _name(value, key, where) or raw.name or "(unnamed agent)"
    elif kind == "model":
        key, value = _first(attributes, MODEL_NAMES)
        model = _name(value, key, where)
        input_tokens = _input_tokens(attributes, where, notes, noted)
        output_tokens = _tokens(attributes, OUTPUT_TOKENS, where, notes, noted)
        inputs, outputs = _conversation(raw, where, notes, noted)
    elif kind == "tool":
        key, value = _first(attributes, TOOL_NAMES)
        name = _name(value, key, where) or raw.name.removeprefix("execute_tool ").strip() or "(unnamed tool)"
        key, value = _first(attributes, TOOL_ARGUMENTS)
        call_key, call_id = _first(attributes, TOOL_CALL_IDS)
        tool = Tool(name, _json_text(value, key, where), _name(call_id, call_key, where))
    error = raw.error
    if error == "":  # an error status without a message: the error's type, if the span names one
        error = _name(attributes.get("error.type"), "error.type", where) or "error"
    evaluations = [
        _evaluation(event.attributes, event.time, f"{where}.events[{e}]", notes, f"{noted}.events[{e}]")
        for e, event in enumerate(raw.events)
        if event.name == EVALUATION_EVENT
    ]
    if "gen_ai.evaluation.name" in attributes:  # an evaluation recorded on a span of its own
        evaluations.append(_evaluation(attributes, raw.end, where, notes, noted))
    values = {}
    for column, key in context.items():
        value = attributes.get(key)
        if value is None:
            value = raw.resource.get(key)
        values[column] = (
            value
            if value is None or (type(value) is str and value.isascii() and value.strip())
            else (_context(value, key, where))
        )
    epoch = attributes.get(EPOCH_ATTRIBUTE, raw.resource.get(EPOCH_ATTRIBUTE))
    try:
        epoch = integer(epoch, EPOCH_ATTRIBUTE, strings=True, minimum=0)
    except InvalidInputError as exc:
        msg = f"{where}: {exc.problem}, not a whole number >= 0"
        raise InvalidInputError(msg) from None
    seconds = None
    if raw.start is not None and raw.end is not None:
        seconds = duration((raw.end - raw.start) / 10**9, "seconds", notes.impossible, where=noted)
    return Span(
        trace_id=raw.trace_id,
        span_id=raw.span_id,
        parent_id=raw.parent_id,
        name=raw.name,
        start=raw.start,
        end=raw.end,
        seconds=seconds,
        error=error,
        kind=kind,
        evaluator=evaluator,
        agent=agent,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        inputs=inputs,
        outputs=outputs,
        tool=tool,
        evaluations=evaluations,
        context=values,
        epoch=epoch,
        where=where,
    )
