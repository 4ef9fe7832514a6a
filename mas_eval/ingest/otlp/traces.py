"""Traces into runs: each trace's spans walked once, from its roots down, into the rows of its tables.

A trace's spans form a tree through their parent ids. :func:`walk` visits each span once (an
explicit stack, no recursion and no join per level), carrying down the agent and the evaluator
above it, so a trace of 10,000 spans, however deep, is one pass. A span whose parent is not in
its trace (a trace exported in part) is kept under the trace's root; spans that no root reaches
are in a loop of parents, and their trace cannot be a run. :func:`run_rows` turns a walked trace
into its rows: the run, its agents, usage, messages, tool calls and evaluations.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mas_eval.ingest.otlp.conventions import Evaluation, Span
from mas_eval.ingest.otlp.shapes import quoted
from mas_eval.ingest.recipe import InvalidInputError
from mas_eval.ingest.values import Impossible, checked_sum, duration

__all__ = [
    "AGENT_COLUMNS",
    "FAIL_LABELS",
    "MESSAGE_COLUMNS",
    "NO_AGENT",
    "PASS_LABELS",
    "ROUND",
    "RUN_COLUMNS",
    "TOOL_COLUMNS",
    "UNKNOWN_MODEL",
    "USAGE_COLUMNS",
    "Rows",
    "Step",
    "Walked",
    "outcome_rows",
    "run_rows",
    "walk",
]

#: ``usage.agent_id`` (and ``messages``', ``tool_calls``') of work done outside any agent span.
NO_AGENT = "(no agent)"
#: ``usage.model`` of a model call whose span names no model.
UNKNOWN_MODEL = "(unknown)"
#: ``messages.round`` of every message: a trace is one conversation of its agents.
ROUND = "1"
#: Score labels read as pass or fail (compared in lower case, spaces stripped); any other label is neither.
PASS_LABELS = ("pass", "passed", "true", "correct", "yes", "success")
FAIL_LABELS = ("fail", "failed", "false", "incorrect", "no", "failure")


@dataclass(slots=True)
class Step:
    """A span as the walk reached it, with where it lies in the trace.

    Its depth (0 = a root), the agent span it belongs to (itself, for an agent), the agent span above
    it, and the evaluation it lies in (the nearest). :func:`walk` makes them (its example).

    Examples
    --------
    >>> Step.__slots__
    ('span', 'depth', 'agent', 'above', 'evaluator')
    """

    span: Span
    depth: int
    agent: Span | None
    above: Span | None
    evaluator: str | None


@dataclass
class Walked:
    """A trace walked: its steps in the order visited, its roots, and how many spans were orphans.

    Examples
    --------
    >>> Walked([], [], 0).orphans
    0
    """

    steps: list[Step]
    roots: list[Span]
    orphans: int


def _when(span: Span) -> tuple[bool, int, int]:
    """Sort key: by start time (unknown last), then by the order read."""
    return (span.start is None, span.start or 0, span.order)


def walk(spans: list[Span]) -> Walked:
    """Visit every span of one trace once, parents before children (children in the order they start).

    Raises
    ------
    InvalidInputError
        Some spans are not reached from any root: their parents form a loop.

    Examples
    --------
    An agent span, a model call whose parent was not exported, and a call under that one:

    >>> from mas_eval.ingest.otlp.shapes import RawSpan
    >>> from mas_eval.ingest.otlp.conventions import Notes, read_span
    >>> def span(span_id, parent, operation):
    ...     attributes = {"gen_ai.operation.name": operation}
    ...     raw = RawSpan("t" * 32, span_id, parent, operation, 1, 2, None, attributes, {}, [], "")
    ...     return read_span(raw, {}, Notes())
    >>> walked = walk([span("c", "b", "chat"), span("a", None, "invoke_agent"), span("b", "gone", "chat")])
    >>> [(step.span.span_id, step.depth, step.agent.span_id) for step in walked.steps], walked.orphans
    ([('a', 0, 'a'), ('b', 1, 'a'), ('c', 2, 'a')], 1)
    """
    roots, children, orphans = _tree(spans)
    steps: list[Step] = []
    stack = [Step(root, 0, None, None, None) for root in sorted(roots, key=_when, reverse=True)]
    while stack:
        step = stack.pop()
        span = step.span
        if span.kind == "agent":
            step.agent = span
        if span.evaluator is not None:
            step.evaluator = span.evaluator
        steps.append(step)
        below = children.get(span.span_id)
        if below:
            if len(below) > 1:
                below.sort(key=_when, reverse=True)
            depth, agent, evaluator = step.depth + 1, step.agent, step.evaluator
            for child in below:
                stack.append(Step(child, depth, agent, agent, evaluator))
    if len(steps) < len(spans):
        reached = {step.span.span_id for step in steps}
        first = next(span for span in spans if span.span_id not in reached)
        problem = (
            f"its spans' parents form a loop (span {first.span_id} is in it or below it), so no root span reaches them"
        )
        raise InvalidInputError(problem)
    return Walked(steps, sorted(roots, key=_when), orphans)


def _tree(spans: list[Span]) -> tuple[list[Span], dict[str, list[Span]], int]:
    """Return the trace's roots, each span's children, and the count of orphans (spans whose parent is missing).

    An orphan belongs to the run all the same: under the earliest root, or, with no root, a root itself.
    """
    known = {span.span_id for span in spans}
    children: dict[str, list[Span]] = {}
    roots: list[Span] = []
    orphans: list[Span] = []
    for span in spans:
        if span.parent_id is None:
            roots.append(span)
        elif span.parent_id in known:
            children.setdefault(span.parent_id, []).append(span)
        else:
            orphans.append(span)
    if roots:  # a span whose parent is missing belongs to the run all the same: under its root
        children.setdefault(min(roots, key=_when).span_id, []).extend(orphans)
    else:  # the root itself is missing: the orphans are the tops of what was exported
        roots = orphans
    return roots, children, len(orphans) if roots else 0


@dataclass
class Rows:
    """The rows of every run, table by table (tuples in each table's column order), and what to say.

    Examples
    --------
    >>> Rows().runs
    []
    """

    runs: list[tuple[Any, ...]] = field(default_factory=list)
    agents: list[tuple[Any, ...]] = field(default_factory=list)
    usage: list[tuple[Any, ...]] = field(default_factory=list)
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    tool_calls: list[tuple[Any, ...]] = field(default_factory=list)
    #: ``(run_id, Evaluation, depth)`` of every evaluation result, for :func:`outcome_rows`.
    evaluations: list[tuple[str, Evaluation, int]] = field(default_factory=list)
    #: Places of model calls and roots whose status is an error, and of orphan spans.
    failed_calls: list[str] = field(default_factory=list)
    failed_roots: list[str] = field(default_factory=list)
    orphans: list[tuple[str, int]] = field(default_factory=list)

    def extend(self, other: Rows) -> None:
        """Append the rows and counts of ``other``."""
        for name in ("runs", "agents", "usage", "messages", "tool_calls", "evaluations"):
            getattr(self, name).extend(getattr(other, name))
        self.failed_calls += other.failed_calls
        self.failed_roots += other.failed_roots
        self.orphans += other.orphans


#: The columns of each table's rows, in order.
RUN_COLUMNS = (
    "run_id",
    "system",
    "case_id",
    "task",
    "variant",
    "epoch",
    "seconds",
    "api_calls",
    "tokens",
    "input_tokens",
    "output_tokens",
    "tool_calls",
    "tool_errors",
)
AGENT_COLUMNS = ("run_id", "agent_id")
USAGE_COLUMNS = ("run_id", "agent_id", "model", "calls", "input_tokens", "output_tokens", "seconds", "evaluator")
MESSAGE_COLUMNS = (
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
)
TOOL_COLUMNS = ("run_id", "agent_id", "turn", "tool", "arguments", "error", "seconds", "message_turn", "call_id")


def _nearest(steps: list[Step]) -> tuple[Any, ...]:
    """Return the run's ``system, case_id, task, variant, epoch``.

    Each is the value of the span nearest the root that has one (ties: the earlier start, then the
    earlier read).
    """
    ranked = sorted(steps, key=lambda step: (step.depth, *_when(step.span)))
    found = []
    for column in ("system", "case_id", "task", "variant"):
        found.append(next((v for s in ranked if (v := s.span.context.get(column)) is not None), None))
    found.append(next((s.span.epoch for s in ranked if s.span.epoch is not None), None))
    return tuple(found)


def _sum(values: Iterable[int | None], field_: str) -> int | None:
    return checked_sum(list(values), field_)


def _seconds(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _place(span: Span) -> str:
    return f"span {span.span_id}" + (f" ({quoted(span.name)})" if span.name else "")


def run_rows(
    trace_id: str, walked: Walked, *, count_evaluator: bool, impossible: Impossible, where: str
) -> tuple[Rows, tuple[Any, ...]]:
    """Return the rows of one walked trace, and its context (system, case_id, task, variant, epoch) to check.

    Raises
    ------
    InvalidInputError
        A sum of token counts beyond what a column holds.

    Examples
    --------
    >>> from mas_eval.ingest.otlp.shapes import RawSpan
    >>> from mas_eval.ingest.otlp.conventions import Notes, read_span
    >>> def span(span_id, parent, **attributes):
    ...     return read_span(RawSpan("t" * 32, span_id, parent, "", 1, 2, None, attributes, {}, [], ""), {}, Notes())
    >>> spans = [span("a", None, **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "solo"}),
    ...          span("b", "a", **{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 7})]
    >>> rows, context = run_rows("t" * 32, walk(spans), count_evaluator=False, impossible=Impossible(), where="trace t")
    >>> rows.agents, rows.usage[0][1:6]
    ([('tttttttttttttttttttttttttttttttt', 'solo')], ('solo', '(unknown)', 1, 7, None))
    """
    rows = Rows()
    steps = walked.steps
    *context, epoch = _nearest(steps)
    system_calls = [s for s in steps if s.span.kind == "model" and s.evaluator is None]
    judge_calls = [s for s in steps if s.span.kind == "model" and s.evaluator is not None]
    counted = system_calls + judge_calls if count_evaluator else system_calls
    tools = sorted((s for s in steps if s.span.kind == "tool" and s.evaluator is None), key=lambda s: _when(s.span))
    # The run's time: from the first root's start to the last root's end.
    starts = [r.start for r in walked.roots if r.start is not None]
    ends = [r.end for r in walked.roots if r.end is not None]
    seconds = None
    if starts and ends:
        seconds = duration((max(ends) - min(starts)) / 10**9, "seconds", impossible, where=f"{where} (its root spans)")
    try:
        input_tokens = _sum((s.span.input_tokens for s in counted), "input_tokens")
        output_tokens = _sum((s.span.output_tokens for s in counted), "output_tokens")
        tokens = (
            None if input_tokens is None or output_tokens is None else _sum([input_tokens, output_tokens], "tokens")
        )
    except InvalidInputError as invalid:
        msg = f"its {len(counted)} model call(s): {invalid.problem}"
        raise InvalidInputError(msg) from None
    errors = sum(s.span.error is not None for s in tools)
    rows.runs.append(
        (trace_id, *context, epoch, seconds, len(counted), tokens, input_tokens, output_tokens, len(tools), errors)
    )
    # Agents: each agent span outside evaluations, but one that only hands work to agents below it
    # (no model call of its own) is the team, not a member of it.
    agent_steps = [s for s in steps if s.span.kind == "agent" and s.evaluator is None]
    delegates = {id(s.above) for s in agent_steps if s.above is not None}
    callers = {id(s.agent) for s in system_calls if s.agent is not None}
    members = [s.span for s in agent_steps if id(s.span) in callers or id(s.span) not in delegates]
    names: list[str] = []
    for span in sorted(members, key=lambda span: (*_when(span), span.agent or "")):
        if span.agent not in names:
            names.append(span.agent or "")
    rows.agents.extend((trace_id, name) for name in names)
    _usage(rows, trace_id, system_calls, judge_calls)
    call_turns = _messages(rows, trace_id, system_calls)
    for turn, step in enumerate(tools, start=1):
        tool = step.span.tool
        assert tool is not None  # a tool span has its tool
        rows.tool_calls.append(
            (
                trace_id,
                step.agent.agent if step.agent is not None else NO_AGENT,
                turn,
                tool.name,
                tool.arguments,
                step.span.error,
                step.span.seconds,
                call_turns.get(tool.call_id) if tool.call_id is not None else None,
                tool.call_id,
            )
        )
    rows.evaluations.extend((trace_id, e, s.depth) for s in steps for e in s.span.evaluations)
    rows.failed_calls += [
        f"trace {trace_id} {_place(s.span)}: {quoted(s.span.error, 60)}"
        for s in system_calls + judge_calls
        if s.span.error is not None
    ]
    rows.failed_roots += [
        f"trace {trace_id} {_place(r)}: {quoted(r.error, 60)}" for r in walked.roots if r.error is not None
    ]
    if walked.orphans:
        rows.orphans.append((trace_id, walked.orphans))
    return rows, (*context, epoch)


def _usage(rows: Rows, trace_id: str, system_calls: list[Step], judge_calls: list[Step]) -> None:
    """Add the model calls to ``rows``, summed by agent and model: the system's, then the evaluators'."""
    groups: dict[tuple[str, str, bool], list[Span]] = {}
    for step in system_calls:
        agent = step.agent.agent if step.agent is not None and step.agent.agent else NO_AGENT
        groups.setdefault((agent, step.span.model or UNKNOWN_MODEL, False), []).append(step.span)
    system_agents = {agent for agent, _, _ in groups}
    for step in judge_calls:
        agent = step.evaluator or "(evaluator)"
        if agent in system_agents:  # one name, two roles: the judge's calls are told apart
            agent = f"{agent} (evaluator)"
        groups.setdefault((agent, step.span.model or UNKNOWN_MODEL, True), []).append(step.span)
    for (agent, model, judge), spans in sorted(groups.items(), key=lambda item: (item[0][2], item[0][0], item[0][1])):
        try:
            sums = (
                _sum((s.input_tokens for s in spans), "input_tokens"),
                _sum((s.output_tokens for s in spans), "output_tokens"),
            )
        except InvalidInputError as invalid:
            msg = f"the {len(spans)} model call(s) of {agent!r} to {model!r}: {invalid.problem}"
            raise InvalidInputError(msg) from None
        rows.usage.append((trace_id, agent, model, len(spans), *sums, _seconds(s.seconds for s in spans), judge))


def _messages(rows: Rows, trace_id: str, calls: list[Step]) -> dict[str, int]:
    """Add the messages of the system's model calls to ``rows``, in the order they started.

    Returns the turn of the message that asked for each tool call id.

    A model call resends the conversation so far; the messages it repeats from its agent's previous
    call (that call's inputs and outputs, in order) are not recorded again.
    """
    turn = 0
    asked: dict[str, int] = {}
    history: dict[str, list[tuple[str, str | None]]] = {}
    for step in sorted(calls, key=lambda s: _when(s.span)):
        span = step.span
        agent = step.agent.agent if step.agent is not None and step.agent.agent else NO_AGENT
        said = [(m.role, m.text) for m in span.inputs]
        before = history.get(agent, [])
        new = span.inputs[len(before) :] if before and said[: len(before)] == before else span.inputs
        for message in new:
            turn += 1
            rows.messages.append(
                (trace_id, ROUND, agent, turn, message.text, "input", message.role, None, None, None, None)
            )
        for message in span.outputs:
            turn += 1
            rows.messages.append(
                (
                    trace_id,
                    ROUND,
                    agent,
                    turn,
                    message.text,
                    "generate",
                    message.role,
                    span.model,
                    span.input_tokens,
                    span.output_tokens,
                    span.seconds,
                )
            )
            for call_id in message.calls:
                asked.setdefault(call_id, turn)
        history[agent] = said + [(m.role, m.text) for m in span.outputs]
    return asked


def _verdict(label: str | None) -> bool | None:
    said = label.strip().lower() if label is not None else None
    return True if said in PASS_LABELS else False if said in FAIL_LABELS else None


def outcome_rows(evaluations: list[tuple[str, Evaluation, int]]) -> tuple[list[tuple[Any, ...]], list[str]]:
    """Return the ``outcomes`` rows (``run_id, name, value, passed, explanation``) of the evaluations, and warnings.

    A run's result of a name is the one on the span nearest the root (the latest of those). A name
    whose every run's result has a pass/fail label is pass/fail: ``passed`` from the label, ``value``
    1 or 0. Any other name is a number: ``value`` is the score, else the label's 1 (pass) or 0
    (fail); a result with neither is left out. Each rule that applied is said once per name.

    Examples
    --------
    >>> found = [("r1", Evaluation("accuracy", 5, None, "pass", None), 0),
    ...          ("r2", Evaluation("accuracy", 5, None, "FAIL", "wrong"), 0)]
    >>> outcome_rows(found)
    ([('r1', 'accuracy', 1.0, True, None), ('r2', 'accuracy', 0.0, False, 'wrong')], [])
    """
    chosen, seen = _chosen(evaluations)
    verdicts = {key: _verdict(evaluation.label) for key, (evaluation, _) in chosen.items()}
    pass_fail: dict[str, bool] = {}
    for (_, name), verdict in verdicts.items():
        pass_fail[name] = pass_fail.get(name, True) and verdict is not None
    rows = []
    differs: dict[str, int] = {}
    labelled: dict[str, int] = {}
    empty: dict[str, int] = {}
    for key, (evaluation, _) in chosen.items():
        name, verdict, score = key[1], verdicts[key], evaluation.score
        if pass_fail[name]:
            value = 1.0 if verdict else 0.0
            if score is not None and score != value:
                differs[name] = differs.get(name, 0) + 1
        elif score is not None:
            value = score
        elif verdict is not None:
            value = 1.0 if verdict else 0.0
            labelled[name] = labelled.get(name, 0) + 1
        else:
            empty[name] = empty.get(name, 0) + 1
            continue
        rows.append((key[0], name, value, verdict if pass_fail[name] else None, evaluation.explanation))
    return rows, _outcome_warnings(seen, differs, labelled, empty)


def _chosen(
    evaluations: list[tuple[str, Evaluation, int]],
) -> tuple[dict[tuple[str, str], tuple[Evaluation, int]], dict[tuple[str, str], int]]:
    """Return each run's result of each name (nearest the root, then the latest), and how often each was recorded."""
    chosen: dict[tuple[str, str], tuple[Evaluation, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for run, evaluation, depth in evaluations:
        key = (run, evaluation.name)
        seen[key] = seen.get(key, 0) + 1
        rank = (depth, evaluation.time is None, -(evaluation.time or 0))
        held = chosen.get(key)
        if held is None or rank < (held[1], held[0].time is None, -(held[0].time or 0)):
            chosen[key] = (evaluation, depth)
    return chosen, seen


def _outcome_warnings(
    seen: dict[tuple[str, str], int], differs: dict[str, int], labelled: dict[str, int], empty: dict[str, int]
) -> list[str]:
    """Return the warnings of :func:`outcome_rows`: each rule that applied, once per name, with its count of runs."""
    warnings = []
    repeated: dict[str, int] = {}
    for (_, name), times in seen.items():
        if times > 1:
            repeated[name] = repeated.get(name, 0) + 1
    for name, runs in sorted(repeated.items()):
        warnings.append(
            f"evaluation {name!r} is recorded more than once in {runs} trace(s); the event on the span nearest "
            "the root is kept (the latest of those)"
        )
    for name, runs in sorted(differs.items()):
        warnings.append(
            f"evaluation {name!r} is pass/fail by its labels, and its score.value differs from 1 (pass) or "
            f"0 (fail) in {runs} run(s); the label is kept"
        )
    for name, runs in sorted(labelled.items()):
        warnings.append(
            f"evaluation {name!r} has a pass/fail label in some runs only, so it is a number: in {runs} run(s) "
            "with a label and no score.value, 1 for pass and 0 for fail"
        )
    for name, runs in sorted(empty.items()):
        warnings.append(
            f"evaluation {name!r} has no score.value (or one set aside) and no pass/fail label in {runs} run(s); "
            "not recorded there"
        )
    return warnings
