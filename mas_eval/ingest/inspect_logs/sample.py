"""One inspect_ai sample (a run) into rows: its totals, scores, usage per agent, messages and tool calls.

A sample's events say who made each model call: the role it was made for (``model_roles``), or,
inside scoring, the scorer. inspect_ai has marked scoring three ways over its releases, and each
is read here:

- ``step`` events (before inspect_ai 0.3.70 or so, and R's vitals): a ``begin`` and an ``end``
  of ``type`` ``"scorer"`` enclose the scorer's events;
- ``span_begin`` / ``span_end`` events of ``type`` ``"scorer"`` (inside one of type
  ``"scorers"``), with each event naming its enclosing span by ``span_id``;
- the same spans without ``span_id`` on the events: the spans open at the event enclose it.

A model call made inside scoring is the judge's (a model-graded scorer's): it goes to ``usage``
under the scorer's name with ``evaluator = true`` and is left out of the run's tokens, calls and
cost; with ``count_evaluator`` it is counted in them, as the system's cost, and its usage row
says so with ``evaluator = false``. Every value becomes a row through :mod:`mas_eval.ingest.values`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from mas_eval.ingest.recipe import InvalidInputError, json_type
from mas_eval.ingest.values import INT64_MAX, Impossible, checked_sum, count, duration, identifier, text

__all__ = ["FIELDS", "ROUND", "SCORING", "Rows", "read_sample", "score_value", "where_of"]

#: ``messages.round`` of every message: an inspect_ai sample is one conversation.
ROUND = "1"
#: The span and step types that enclose scoring: a scorer's own, and the one around all scorers.
SCORING = ("scorer", "scorers")
#: The columns each table's rows (tuples) hold, in order; the table's other columns are null.
FIELDS: dict[str, tuple[str, ...]] = {
    "runs": (
        "run_id",
        "system",
        "case_id",
        "task",
        "epoch",
        "api_calls",
        "seconds",
        "tokens",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "tool_calls",
        "tool_errors",
        "target",
        "metadata",
    ),
    "agents": ("run_id", "agent_id", "role"),
    "messages": (
        "run_id",
        "round",
        "agent_id",
        "turn",
        "text",
        "source",
        "role",
        "model",
        "input_tokens",
        "output_tokens",
        "seconds",
    ),
    "usage": (
        "run_id",
        "agent_id",
        "model",
        "calls",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "seconds",
        "evaluator",
    ),
    "tool_calls": ("run_id", "agent_id", "turn", "tool", "arguments", "error", "seconds", "message_turn", "call_id"),
    "outcomes": ("run_id", "name", "value", "passed", "answer", "explanation"),
    "reported": ("run_id", "source", "name", "item", "value", "text"),
}
#: Score values inspect_ai's ``value_to_float`` maps to a number of its own (CORRECT, INCORRECT,
#: PARTIAL, NOANSWER), and whether each is a pass (True), a fail (False) or neither (None).
_SENTINELS: dict[str, tuple[float, bool | None]] = {
    "C": (1.0, True),
    "I": (0.0, False),
    "P": (0.5, None),
    "N": (0.0, None),
}
#: Strings ``value_to_float`` reads as yes or no.
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
#: Where a condensed log moved a message's text: ``attachment://<hash>`` (the hash keys ``sample.attachments``).
_ATTACHMENT = re.compile(r"attachment://([0-9a-fA-F]+)")
#: How a tool call is written as the text of an assistant message that says nothing else.
_CALL_MARK = "[tool call] "


@dataclass
class Rows:
    """The rows of the samples read so far (a tuple of :data:`FIELDS` each), and what was set to null.

    ``count_evaluator``: whether the judge's calls count in the run's tokens, calls and cost.
    ``evaluator_calls``: how many model calls were found inside scoring, for the log's note.
    """

    count_evaluator: bool = False
    tables: dict[str, list[tuple[Any, ...]]] = field(default_factory=lambda: {name: [] for name in FIELDS})
    impossible: Impossible = field(default_factory=Impossible)
    warnings: list[str] = field(default_factory=list)
    evaluator_calls: int = 0


def where_of(sample: dict[str, Any]) -> str:
    """Return how a message names a sample: ``sample 'q1', epoch 2`` (a surrogate in the id escaped)."""
    return f"sample {sample.get('id')!r}, epoch {sample.get('epoch')!r}"


def score_value(value: Any) -> tuple[float | None, bool | None, str | None]:
    """Return ``(value, passed, problem)`` of one score value, by inspect_ai's ``value_to_float`` defaults.

    "C" is 1 and passed, "I" 0 and failed, "P" 0.5 and "N" 0 (neither); a boolean is 1 or 0 and
    passed or failed; a number is itself; "yes"/"true" and "no"/"false" are 1 and 0, a numeric
    string its number. What ``value_to_float`` cannot read it counts as 0 (with a warning), and
    so does this; a value that is not finite is left out (``value`` None) with the problem said.

    Examples
    --------
    >>> score_value("C"), score_value(0.25), score_value("maybe")[2]
    ((1.0, True, None), (0.25, None, None), "is 'maybe', which inspect_ai's value_to_float reads as 0; recorded as 0")
    """
    if isinstance(value, bool):
        return float(value), value, None
    if isinstance(value, int | float):
        try:
            result = float(value)
        except OverflowError:
            result = math.inf
        if math.isfinite(result):
            return result, None, None
        return None, None, f"is {str(value)[:40]}, not a finite number; left out"
    if isinstance(value, str):
        if value in _SENTINELS:
            result, passed = _SENTINELS[value]
            return result, passed, None
        word = _WORDS.get(value.lower())
        if word is not None:
            return word, None, None
        try:
            result = float(value)
        except ValueError:
            said = value[:40].encode("utf-8", "backslashreplace").decode("utf-8")
            return 0.0, None, f"is {said!r}, which inspect_ai's value_to_float reads as 0; recorded as 0"
        if math.isfinite(result):
            return result, None, None
        return None, None, f"is {value[:40]!r}, not a finite number; left out"
    return None, None, f"is {json_type(value)}, not a score value; left out"


class _Unknown:
    """A value set to null because no run can have it (a negative count or time): a sum over it is unknown too."""

    def __repr__(self) -> str:
        return "UNKNOWN"


#: What :func:`_count` and :func:`_seconds` give for an impossible value (recorded in ``rows.impossible``).
UNKNOWN: Any = _Unknown()


def _count(value: Any, name: str, rows: Rows, where: str) -> Any:
    """Read ``value`` as a count: None when not recorded, :data:`UNKNOWN` when impossible (negative)."""
    # The common case (a non-negative int) without a call; anything else through values.count.
    if type(value) is int and 0 <= value <= INT64_MAX:
        return value
    result = count(value, name, rows.impossible, where=where)
    return UNKNOWN if result is None and value is not None else result


def _seconds(value: Any, name: str, rows: Rows, where: str) -> Any:
    """Read ``value`` as seconds or a cost: None when not recorded, :data:`UNKNOWN` when impossible (negative)."""
    if type(value) is float and 0.0 <= value < math.inf:
        return value
    result = duration(value, name, rows.impossible, where=where)
    return UNKNOWN if result is None and value is not None else result


def _add(values: Any, name: str) -> Any:
    """Return the exact sum of counts (None when none is recorded), :data:`UNKNOWN` when one is."""
    values = list(values)
    # ``in`` compares by identity first: UNKNOWN has no __eq__ of its own.
    if UNKNOWN in values:
        return UNKNOWN
    return checked_sum(values, name)


def _sum(values: Any) -> Any:
    """Return the sum of times or costs (None when none is recorded), :data:`UNKNOWN` when one is."""
    present = [v for v in values if v is not None]
    if UNKNOWN in present:
        return UNKNOWN
    return sum(present) if present else None


def _known(value: Any) -> Any:
    """Return a value as its column holds it: :data:`UNKNOWN` is null."""
    return None if value is UNKNOWN else value


def _usage(usage: Any, rows: Rows, where: str) -> tuple[Any, Any, Any, Any]:
    """Return ``(input, output, total, cost)`` of one ``ModelUsage``.

    Input counts the cache reads and writes, total is ``total_tokens`` (input + output when it is not
    recorded or 0); None where not recorded, :data:`UNKNOWN` where impossible.
    """
    if usage is None:
        return None, None, None, None
    if type(usage) is not dict:
        msg = f"a usage record is {json_type(usage)}, not an object"
        raise InvalidInputError(msg, where=where)
    get = usage.get
    i, o, t = get("input_tokens"), get("output_tokens"), get("total_tokens")
    r, w, cost = get("input_tokens_cache_read"), get("input_tokens_cache_write"), get("total_cost")
    # The common record (non-negative ints, a cost that is a float or none) without a call per value:
    # the same results as the checks below give it.
    if (
        type(i) is int
        and type(o) is int
        and type(t) is int
        and (r is None or type(r) is int)
        and (w is None or type(w) is int)
        and (cost is None or (type(cost) is float and 0.0 <= cost < math.inf))
    ):
        prompt = i + (r or 0) + (w or 0)
        if min(i, o, t, r or 0, w or 0) >= 0 and max(prompt + o, t) <= INT64_MAX:
            if not t and (prompt or o):
                t = prompt + o
            return prompt, o, t, cost
    prompt = _add(
        (
            _count(get("input_tokens"), "input_tokens", rows, where),
            _count(get("input_tokens_cache_read"), "input_tokens_cache_read", rows, where),
            _count(get("input_tokens_cache_write"), "input_tokens_cache_write", rows, where),
        ),
        "input_tokens",
    )
    output = _count(get("output_tokens"), "output_tokens", rows, where)
    total = _count(get("total_tokens"), "total_tokens", rows, where)
    if not total and total is not UNKNOWN and (prompt or output):
        total = _add((prompt, output), "total_tokens")
    cost = get("total_cost")
    return prompt, output, total, None if cost is None else _seconds(cost, "total_cost", rows, where)


class _Scoring:
    """Whether an event lies inside scoring, and whose: the spans and steps seen so far, in order."""

    def __init__(self) -> None:
        self.spans: dict[str, tuple[Any, Any, Any]] = {}
        self.open: list[str] = []
        self.steps: list[tuple[Any, Any]] = []
        self.memo: dict[str, str | None] = {}

    def event(self, event: dict[str, Any]) -> None:
        """Take in a span or step event."""
        kind = event["event"]
        if kind == "span_begin":
            span = event.get("id")
            if isinstance(span, str):
                self.spans[span] = (event.get("type"), event.get("name"), event.get("parent_id"))
                self.open.append(span)
        elif kind == "span_end":
            span = event.get("id")
            if span in self.open:
                # The last one opened with that id closes (spans nest).
                del self.open[len(self.open) - 1 - self.open[::-1].index(span)]
        elif kind == "step":
            mark = (event.get("type"), event.get("name"))
            if event.get("action") == "begin":
                self.steps.append(mark)
            elif mark in self.steps:
                del self.steps[len(self.steps) - 1 - self.steps[::-1].index(mark)]

    def scorer(self, event: dict[str, Any]) -> str | None:
        """Return the scorer whose scoring ``event`` lies in (``"scorers"`` if only the scorers' span says), or None."""
        span = event.get("span_id")
        if span is None and self.open:
            span = self.open[-1]
        if span is not None:
            found = self._of_span(span)
            if found is not None:
                return found
        for kind, name in reversed(self.steps):
            if kind == "scorer":
                return str(name)
            if kind == "scorers":
                return "scorers"
        return None

    def _of_span(self, span: str) -> str | None:
        if span in self.memo:
            return self.memo[span]
        found: str | None = None
        seen = 0
        at: Any = span
        while at is not None and at in self.spans and seen < len(self.spans):
            kind, name, parent = self.spans[at]
            if kind == "scorer":
                found = str(name)
                break
            if kind == "scorers":
                found = "scorers"
                break
            at, seen = parent, seen + 1
        self.memo[span] = found
        return found


@dataclass
class _Call:
    """One model call: who made it (``judge``: the scorer, when made in scoring), and what it used."""

    agent: str
    model: str
    judge: bool
    prompt: int | None
    output: int | None
    total: int | None
    cost: float | None
    seconds: float | None


def _text_of(content: Any, attachments: dict[str, Any], where: str) -> str:
    """Return a message's text: its text or its text parts, a line each, a condensed log's attachments put back."""
    if isinstance(content, str):
        said = content
    elif isinstance(content, list):
        said = "\n".join(
            part["text"] for part in content if isinstance(part, dict) and part.get("type") == "text" and "text" in part
        )
    elif content is None:
        said = ""
    else:
        msg = f"a message's content is {json_type(content)}, not text or a list of parts"
        raise InvalidInputError(msg, where=where)
    if "attachment://" in said:
        said = _ATTACHMENT.sub(lambda m: str(attachments.get(m.group(1), m.group(0))), said)
    return said


def _arguments(arguments: Any) -> str | None:
    """Return a tool call's arguments as JSON text (a JSON string as recorded stays as it is)."""
    if arguments is None:
        return None
    if isinstance(arguments, str):
        return arguments
    return _json_text(arguments, "tool call arguments")


def _json_text(value: Any, name: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        problem = f"field {name!r} holds a number beyond the largest float (about 1.8e308), which JSON text cannot hold"
        raise InvalidInputError(problem) from None


def _call_text(function: str, arguments: Any) -> str:
    """Write a tool call as the text of a message that says nothing else: ``[tool call] bash(cmd="ls")``."""
    if isinstance(arguments, dict):
        shown = ", ".join(f"{k}={_shown(v)}" for k, v in arguments.items())
    else:
        shown = "" if arguments is None else _shown(arguments)
    return f"{_CALL_MARK}{function}({shown})"


def _shown(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return str(value)


def _error_text(error: Any) -> str | None:
    """Return a tool's error (inspect_ai's ``ToolCallError``: a type and a message) as ``type: message``."""
    if error is None:
        return None
    if isinstance(error, dict):
        kind, said = error.get("type"), error.get("message")
        return f"{kind}: {said}" if kind and said else str(said or kind or "error")
    return str(error)


def read_sample(
    rows: Rows,
    sample: dict[str, Any],
    run_id: str,
    system: str,
    task: str,
    roles: dict[str, str],
    model: str,
    *,
    check_text: bool,
) -> None:
    """Add the rows of one sample (one run) to ``rows``; raise :class:`InvalidInputError` for a value no row can hold.

    ``roles`` binds each model role to its model (for a log without events), ``model`` is the
    evaluation's model; ``check_text``: whether the sample's text may hold a lone surrogate
    (each text is then checked, else only its type).
    """
    where = where_of(sample)
    tables = rows.tables
    case_id = identifier(sample["id"], "sample id")
    epoch = sample["epoch"]
    events = sample.get("events") or []
    calls, by_message, tool_events, loose_tools = _read_events(rows, events, where)
    rows.evaluator_calls += sum(call.judge for call in calls)
    asked, results = _read_messages(rows, sample, run_id, calls, by_message, where, check_text=check_text)
    # -- tool calls: asked for in messages, made in events, answered in tool messages ------------
    made, failed = _tool_calls(rows, run_id, asked, tool_events, loose_tools, results, where)
    prompt, output, total, cost, api_calls = _spending(rows, sample, run_id, calls, roles, model, where)
    # -- the run ----------------------------------------------------------------------------------
    total_time = _seconds(sample.get("total_time"), "total_time", rows, where)
    working_time = _known(_seconds(sample.get("working_time"), "working_time", rows, where))
    target = _target(sample.get("target"))
    metadata = sample.get("metadata")
    tables["runs"].append(
        (
            run_id,
            system,
            case_id,
            task,
            epoch,
            api_calls,
            # The wall clock, else the working time; an impossible wall clock is not replaced.
            _known(total_time) if total_time is not None else working_time,
            _known(total),
            _known(prompt),
            _known(output),
            _known(cost),
            made,
            failed,
            text(target, "target") if check_text else target,
            _json_text(metadata, "metadata") if metadata else None,
        )
    )
    if working_time is not None:
        tables["reported"].append((run_id, "sample", "working_time", 0, working_time, None))
    _scores(rows, sample, run_id, where, check_text)


def _read_events(
    rows: Rows, events: list[Any], where: str
) -> tuple[list[_Call], dict[str, _Call], dict[str, tuple[dict[str, Any], str]], list[tuple[dict[str, Any], str]]]:
    """Read a sample's events: its model calls (whose), and its tool calls by id (and those without one).

    Returns the model calls in order, the call that said each message id, the tool events by call
    id with their agents, and the tool events whose id is missing or seen before.
    """
    calls: list[_Call] = []
    by_message: dict[str, _Call] = {}
    tool_events: dict[str, tuple[dict[str, Any], str]] = {}
    loose_tools: list[tuple[dict[str, Any], str]] = []
    scoring = _Scoring()
    last_agent: str | None = None
    spans, opened = scoring.spans, scoring.open
    for event in events:
        kind = event.get("event") if type(event) is dict else None
        # Spans are most of the events: taken in here rather than by a call each.
        if kind == "span_begin":
            span = event.get("id")
            if type(span) is str:
                spans[span] = (event.get("type"), event.get("name"), event.get("parent_id"))
                opened.append(span)
        elif kind == "span_end":
            span = event.get("id")
            if opened and opened[-1] == span:
                opened.pop()
            elif span in opened:
                scoring.event(event)
        elif kind == "model":
            call, message_id = _model_call(event, scoring.scorer(event), rows, where)
            calls.append(call)
            last_agent = call.agent
            if message_id is not None:
                by_message[message_id] = call
        elif kind == "tool":
            call_id = event.get("id")
            scorer = scoring.scorer(event)
            agent = scorer if scorer is not None else last_agent or "tool"
            if isinstance(call_id, str) and call_id not in tool_events:
                tool_events[call_id] = (event, agent)
            else:
                loose_tools.append((event, agent))
        elif kind == "step":
            scoring.event(event)
    return calls, by_message, tool_events, loose_tools


def _model_call(event: dict[str, Any], scorer: str | None, rows: Rows, where: str) -> tuple[_Call, str | None]:
    """Return a model event's call, and the id of the message it answered with (None if not recorded).

    The call's agent is the ``scorer`` it was made in, else its role, else its model.
    """
    call_model = event.get("model")
    if not isinstance(call_model, str):
        msg = f"a model event's model is {json_type(call_model)}, not text"
        raise InvalidInputError(msg, where=where)
    role = event.get("role")
    agent = scorer if scorer is not None else (role if isinstance(role, str) and role else call_model)
    output = event.get("output") or {}
    prompt, out, total, cost = _usage(output.get("usage"), rows, where)
    spent = event.get("working_time")
    if spent is None:
        spent = output.get("time")
    call = _Call(
        agent,
        call_model,
        scorer is not None,
        prompt,
        out,
        total,
        cost,
        _seconds(spent, "working_time", rows, where),
    )
    choices = output.get("choices")
    if choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            return call, message["id"]
    return call, None


def _by_turn(messages: list[Any], calls: list[_Call]) -> dict[int, _Call]:
    """Return the system's calls by the turn of the assistant message each said, for logs before message ids.

    The calls answer the assistant messages in order; when their counts differ, none is matched.
    """
    spoken = [turn for turn, m in enumerate(messages, 1) if isinstance(m, dict) and m.get("role") == "assistant"]
    mine = [call for call in calls if not call.judge]
    return dict(zip(spoken, mine, strict=True)) if len(spoken) == len(mine) else {}


def _read_messages(
    rows: Rows,
    sample: dict[str, Any],
    run_id: str,
    calls: list[_Call],
    by_message: dict[str, _Call],
    where: str,
    *,
    check_text: bool,
) -> tuple[list[tuple[dict[str, Any], str, int]], dict[str, tuple[dict[str, Any], str]]]:
    """Add a ``messages`` row per message, an assistant's with the model call that said it.

    Returns the tool calls the assistant messages asked for (with their agent and turn), and the
    tool messages by the call id they answer (with the agent that spoke last before them).
    """
    attachments = sample.get("attachments") or {}
    messages = sample.get("messages") or []
    by_turn = _by_turn(messages, calls) if not by_message and calls else {}
    said_rows = rows.tables["messages"]
    asked: list[tuple[dict[str, Any], str, int]] = []
    results: dict[str, tuple[dict[str, Any], str]] = {}
    last_speaker = "assistant"
    for turn, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            msg = f"a message is {json_type(message)}, not an object"
            raise InvalidInputError(msg, where=where)
        role = message.get("role")
        said = _text_of(message.get("content"), attachments, where)
        call = None
        agent = role
        speaker_model = message.get("model")
        if role == "assistant":
            call = by_message.get(message.get("id") or "") if by_message else by_turn.get(turn)
            agent = call.agent if call is not None else speaker_model or "assistant"
            said = _asked(message, said, agent, turn, asked, where)
            last_speaker = agent
        elif role == "tool":
            tool_call_id = message.get("tool_call_id")
            key = tool_call_id if isinstance(tool_call_id, str) else f"#{turn}"
            results[key] = (message, last_speaker)
        if not isinstance(role, str):
            msg = f"a message's role is {json_type(role)}, not text"
            raise InvalidInputError(msg, where=where)
        if call is not None:
            speaker_model = call.model
        if check_text:
            said = text(said, "message text") or ""
            agent = text(agent, "message agent")
        said_rows.append(
            (
                run_id,
                ROUND,
                agent,
                turn,
                said,
                message.get("source"),
                role,
                speaker_model if isinstance(speaker_model, str) else None,
                None if call is None else _known(call.prompt),
                None if call is None else _known(call.output),
                None if call is None else _known(call.seconds),
            )
        )
    return asked, results


def _asked(
    message: dict[str, Any], said: str, agent: str, turn: int, asked: list[tuple[dict[str, Any], str, int]], where: str
) -> str:
    """Add the tool calls an assistant message asks for to ``asked``; return its text (the calls, if it has none)."""
    requested = message.get("tool_calls") or []
    for tool in requested:
        if not isinstance(tool, dict):
            msg = f"a tool call is {json_type(tool)}, not an object"
            raise InvalidInputError(msg, where=where)
        asked.append((tool, agent, turn))
    if requested and not said.strip():
        said = "\n".join(_call_text(str(t.get("function")), t.get("arguments")) for t in requested)
    return said


def _spending(
    rows: Rows,
    sample: dict[str, Any],
    run_id: str,
    calls: list[_Call],
    roles: dict[str, str],
    model: str,
    where: str,
) -> tuple[Any, Any, Any, Any, int | None]:
    """Add the ``usage`` and ``agents`` rows of a sample; return its run's tokens in, out and in all, cost and calls.

    The judge's calls count in the run's only with ``count_evaluator``. A log without model events
    gives what its sample's ``model_usage`` records (:func:`_without_events`).
    """
    agents: dict[str, str | None] = {}
    if calls:
        _usage_rows(rows, run_id, calls, agents)
        counted = calls if rows.count_evaluator else [call for call in calls if not call.judge]
        prompt = _add([c.prompt for c in counted], "input_tokens")
        output = _add([c.output for c in counted], "output_tokens")
        total = _add([c.total for c in counted], "tokens")
        cost = _sum([c.cost for c in counted])
        api_calls: int | None = len(counted)
    else:
        prompt, output, total, cost = _without_events(rows, sample, run_id, roles, model, agents, where)
        # Events logged and none a model call: the run made none; no events: not known.
        api_calls = 0 if sample.get("events") else None
    for agent, role in agents.items():
        rows.tables["agents"].append((run_id, agent, role))
    return prompt, output, total, cost, api_calls


def _usage_rows(rows: Rows, run_id: str, calls: list[_Call], agents: dict[str, str | None]) -> None:
    """Add a ``usage`` row per agent and model of ``calls``, and each agent to ``agents`` with its role."""
    grouped: dict[tuple[str, str], list[_Call]] = {}
    for call in calls:
        grouped.setdefault((call.agent, call.model), []).append(call)
        if call.agent not in agents:
            agents[call.agent] = None if call.judge or call.agent == call.model else call.agent
    for (agent, call_model), group in grouped.items():
        judge = group[0].judge
        rows.tables["usage"].append(
            (
                run_id,
                agent,
                call_model,
                len(group),
                _known(_add([c.prompt for c in group], "input_tokens")),
                _known(_add([c.output for c in group], "output_tokens")),
                _known(_sum([c.cost for c in group])),
                _known(_sum([c.seconds for c in group])),
                # The judge's calls: apart (true), or counted as the system's when asked (false).
                (not rows.count_evaluator) if judge else None,
            )
        )


def _target(target: Any) -> Any:
    """Return a sample's target as text: a list's items joined by ``"; "``, a structured one as JSON."""
    if isinstance(target, list):
        return "; ".join(str(t) for t in target)
    if target is not None and not isinstance(target, str):
        return _json_text(target, "target")
    return target


def _tool_calls(
    rows: Rows,
    run_id: str,
    asked: list[tuple[dict[str, Any], str, int]],
    events: dict[str, tuple[dict[str, Any], str]],
    loose: list[tuple[dict[str, Any], str]],
    results: dict[str, tuple[dict[str, Any], str]],
    where: str,
) -> tuple[int, int]:
    """Add a ``tool_calls`` row per call; return the run's count of calls and of failed ones.

    A call is found where the log records it: in the assistant message that asked for it (its
    ``tool_calls``: id, function, arguments), in its ``tool`` event (its time, and its error), or
    in the tool message that answered it (its error). The calls asked for come first, in the
    order asked, then those only an event records (a sub-agent's, a scorer's), then those only a
    tool message records.
    """
    out = rows.tables["tool_calls"]
    made = failed = 0

    def add(
        agent: str, function: Any, arguments: Any, error: str | None, event: dict[str, Any], turn: Any, call_id: Any
    ) -> None:
        nonlocal made, failed
        made += 1
        failed += error is not None
        seconds = _known(_seconds(event.get("working_time"), "tool working_time", rows, where)) if event else None
        out.append(
            (
                run_id,
                agent,
                made,
                text(str(function) if function else "?", "tool"),
                _arguments(arguments),
                error,
                seconds,
                turn,
                call_id if isinstance(call_id, str) else None,
            )
        )

    for tool, agent, turn in asked:
        call_id = tool.get("id")
        event = events.pop(call_id, ({}, agent))[0] if isinstance(call_id, str) else {}
        answer = results.pop(call_id, None) if isinstance(call_id, str) else None
        error = _error_text(event.get("error")) or (_error_text(answer[0].get("error")) if answer else None)
        add(agent, tool.get("function") or event.get("function"), tool.get("arguments"), error, event, turn, call_id)
    for event, agent in [*events.values(), *loose]:
        call_id = event.get("id")
        answer = results.pop(call_id, None) if isinstance(call_id, str) else None
        error = _error_text(event.get("error")) or (_error_text(answer[0].get("error")) if answer else None)
        add(agent, event.get("function"), event.get("arguments"), error, event, None, call_id)
    for key, (message, agent) in results.items():
        call_id = None if key.startswith("#") else key
        add(agent, message.get("function"), None, _error_text(message.get("error")), {}, None, call_id)
    return made, failed


def _scores(rows: Rows, sample: dict[str, Any], run_id: str, where: str, check_text: bool) -> None:
    """Add one outcome per scorer, or per key of a scorer whose value is a dict, with its answer and explanation."""
    out = rows.tables["outcomes"]
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict):
        msg = f"field 'scores' is {json_type(scores)}, not an object"
        raise InvalidInputError(msg, where=where)
    for scorer, score in scores.items():
        if not isinstance(score, dict):
            msg = f"score {scorer!r} is {json_type(score)}, not an object"
            raise InvalidInputError(msg, where=where)
        value = score.get("value")
        answer, explanation = score.get("answer"), score.get("explanation")
        answer = None if answer is None else answer if isinstance(answer, str) else _json_text(answer, "answer")
        if explanation is not None and not isinstance(explanation, str):
            explanation = _json_text(explanation, "explanation")
        if check_text:
            scorer = text(scorer, "score name")
            answer, explanation = text(answer, "answer"), text(explanation, "explanation")
        named = [(f"{scorer}/{k}", v) for k, v in value.items()] if isinstance(value, dict) else [(scorer, value)]
        for name, item in named:
            result, passed, problem = score_value(item)
            if problem is not None:
                rows.warnings.append(f"{where}: score {name!r} {problem}")
            if result is not None:
                out.append((run_id, name, result, passed, answer, explanation))


def _without_events(
    rows: Rows,
    sample: dict[str, Any],
    run_id: str,
    roles: dict[str, str],
    model: str,
    agents: dict[str, str | None],
    where: str,
) -> tuple[Any, Any, Any, Any]:
    """Add ``usage`` from the sample's totals when its events were not logged: no calls, no time, no judge.

    A role's model is the one the header binds it to; what a model used beyond its roles' usage
    is the model's own (calls made without a role). Returns the run's ``(input, output, total,
    cost)``: the sums of ``model_usage``.
    """
    out = rows.tables["usage"]
    by_model: dict[str, list[Any]] = {}
    role_usage = sample.get("role_usage") or {}
    model_usage = sample.get("model_usage") or {}
    for role, usage in role_usage.items():
        # A role bound to a list of models (fallbacks) names no one model: the eval's model stands.
        bound = roles.get(role) or model
        p, o, _, c = _usage(usage, rows, where)
        agents.setdefault(role, role)
        out.append((run_id, role, bound, None, _known(p), _known(o), _known(c), None, None))
        spent = by_model.setdefault(bound, [0, 0])
        spent[0], spent[1] = _add((spent[0], p), "input_tokens"), _add((spent[1], o), "output_tokens")
    totals: list[tuple[Any, Any, Any, Any]] = []
    for name, usage in model_usage.items():
        p, o, t, c = _usage(usage, rows, where)
        totals.append((p, o, t, c))
        spent = by_model.get(name, [0, 0])
        known = UNKNOWN not in (p, o, *spent)
        if name in by_model and known and (p or 0) <= spent[0] and (o or 0) <= spent[1]:
            continue
        agents.setdefault(name, None)
        rest_cost = c if name not in by_model else None
        rest_p = None if p is None else p - spent[0] if known else UNKNOWN
        rest_o = None if o is None else o - spent[1] if known else UNKNOWN
        out.append((run_id, name, name, None, _known(rest_p), _known(rest_o), _known(rest_cost), None, None))
    if not totals:
        return None, None, None, None
    return (
        _add([t[0] for t in totals], "input_tokens"),
        _add([t[1] for t in totals], "output_tokens"),
        _add([t[2] for t in totals], "tokens"),
        _sum([t[3] for t in totals]),
    )
