"""Read OpenTelemetry traces of agents into a Dataset: the shapes people have them in, the conventions they use.

An agent framework instrumented with OpenTelemetry records a run as a trace. Under the GenAI
semantic conventions, ``invoke_agent`` spans are the agents, ``chat`` spans (and the other
inference operations) the model calls under them, ``execute_tool`` spans the tool calls, and
``gen_ai.evaluation.result`` events what an evaluator thought of the result; OpenInference
(Arize Phoenix and others) says the same with its span kinds (AGENT, LLM, TOOL, EVALUATOR ...)
and its own attribute names. :func:`ingest_otlp` makes each trace one run.

A file may be OTLP JSON one request a line (the Collector's file exporter), one JSON document
however formatted (a request, or a list of them), a Grafana Tempo download, a Jaeger JSON export
or a Jaeger v3 API response: its shape is found once, from its first document
(:mod:`~mas_eval.ingest.otlp.shapes`). What each span says is read by
:mod:`~mas_eval.ingest.otlp.conventions`, and each trace is walked once into its rows by
:mod:`~mas_eval.ingest.otlp.traces`. The mapping, field by field, is in ``docs/ingest/otlp.md``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import NAME, Boolean, Interval, validate_params
from mas_eval.data.schema import TABLES
from mas_eval.errors import option
from mas_eval.ingest.jsonl import BYTES_CEILING, MAX_LINE_BYTES
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.otlp.conventions import (
    EPOCH_ATTRIBUTE,
    EVALUATION_EVENT,
    MODEL_OPERATIONS,
    TASK_ATTRIBUTE,
    VARIANT_ATTRIBUTE,
    Notes,
    Recorded,
    Span,
    read_span,
)
from mas_eval.ingest.otlp.shapes import SHAPES, not_a_shape, parse_json, shape_of, spans_of
from mas_eval.ingest.otlp.traces import (
    AGENT_COLUMNS,
    FAIL_LABELS,
    MESSAGE_COLUMNS,
    NO_AGENT,
    PASS_LABELS,
    RUN_COLUMNS,
    TOOL_COLUMNS,
    UNKNOWN_MODEL,
    USAGE_COLUMNS,
    Rows,
    outcome_rows,
    run_rows,
    walk,
)
from mas_eval.ingest.recipe import (
    LFS_FIX,
    LFS_PROBLEM,
    LOG_PARAMETERS,
    Ingest,
    InvalidInputError,
    LogFormat,
    Paths,
    ingest_logs,
    is_lfs_pointer,
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
    "SHAPES",
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
#: How much of a line longer than the limit is read at a time, to skip it.
_SKIP_PIECE = 2**20


def _bounded_lines(file: Path, max_bytes: int) -> Iterator[tuple[int, bytes | None, int]]:
    """Yield ``(number, line, size)`` of each line of ``file`` that is not blank, holding no line over ``max_bytes``.

    A longer line (its newline aside) comes as ``(number, None, size)``, read past in bounded pieces,
    so memory is bounded by ``max_bytes`` whatever the file holds.
    """
    if is_lfs_pointer(file):
        raise InvalidInputError(LFS_PROBLEM, fix=LFS_FIX)
    try:
        handle = file.open("rb")
    except OSError as exc:
        msg = f"cannot be read ({(exc.strerror or str(exc)).lower()})"
        raise InvalidInputError(msg, fix="make it readable") from None
    with handle:
        number = 0
        while raw := handle.readline(max_bytes + 2):  # the limit, one byte over it, and the newline
            number += 1
            size = len(raw) - raw.endswith(b"\n")
            if size <= max_bytes:
                if raw.strip():
                    yield number, raw, size
                continue
            while not raw.endswith(b"\n") and (piece := handle.read(_SKIP_PIECE)):
                cut = piece.find(b"\n")
                if cut >= 0:  # the line ends in this piece: the next starts after its newline
                    size += cut
                    handle.seek(cut + 1 - len(piece), os.SEEK_CUR)
                    break
                size += len(piece)
            yield number, None, size


def _opens_document(raw: bytes) -> bool:
    """Return whether a file's first line starts a JSON document it does not finish (a pretty-printed document).

    JSON's error is then at the line's very end, rather than the line being a whole document itself
    (JSON lines) or a broken one.
    """
    try:
        text = raw.decode("utf-8-sig").strip()
        json.loads(text)
    except json.JSONDecodeError as exc:
        return bool(text) and exc.pos >= len(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return False


def _too_long(size: int, limit: int, what: str = "a line") -> InvalidInputError:
    """Return the problem of ``what`` of ``size`` bytes, over ``limit``, and the fix: a higher limit, if one can be."""
    if size > BYTES_CEILING:
        fix = f"no line or document over {BYTES_CEILING:,} bytes is read: write the spans in smaller requests"
    else:
        raise_it = option("max_line_bytes", size, cli=f"--max-line-mb {math.ceil(size / 2**20)}")
        fix = f"if it is one request, raise the limit ({raise_it}), else fix the file"
    return InvalidInputError(
        f"{what} of {size:,} bytes, more than the limit ({limit:,} bytes: max_line_bytes); it was not read", fix=fix
    )


def _decode(raw: bytes, first: bool) -> str:
    try:
        return raw.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise InvalidInputError(msg) from None


@dataclass
class _Found:
    """What one file gave so far: its layout and shape, its spans and notes, how many documents."""

    layout: str | None = None
    shape: str | None = None
    documents: int = 0
    spans: list[Span] = field(default_factory=list)
    notes: Notes = field(default_factory=Notes)

    def described(self) -> str:
        shape = SHAPES[self.shape or "otlp"]
        return f"{shape}, one document a line" if self.layout == "lines" else f"{shape}, one document"


class _Reader:
    """The spans of every file read; the traces as runs and their tables."""

    def __init__(self, system_attribute: str, case_attribute: str, count_evaluator: bool, max_line_bytes: int) -> None:
        self.context = {
            "system": system_attribute,
            "case_id": case_attribute,
            "task": TASK_ATTRIBUTE,
            "variant": VARIANT_ATTRIBUTE,
        }
        self.system_attribute, self.case_attribute = system_attribute, case_attribute
        self.count_evaluator, self.max_line_bytes = count_evaluator, max_line_bytes
        self.spans: list[Span] = []
        self.files: list[Path] = []
        self.order = 0

    # -- reading ------------------------------------------------------------------------------

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        """Read every document of ``file``: its lines, or the file as one document.

        A line that cannot be read is set aside (or refused) by ``ingest``; nothing of the file is kept
        unless it is read.
        """
        index = len(self.files)
        self.files.append(file)
        found = _Found()
        lines = _bounded_lines(file, self.max_line_bytes)
        for number, raw, size in lines:
            if found.layout is None:  # the first line decides: a whole document, or the start of one
                found.layout = "document" if raw is not None and _opens_document(raw) else "lines"
                if found.layout == "document":
                    break
            with ingest.attempt(f"line {number}"):
                if raw is None:
                    raise _too_long(size, self.max_line_bytes)
                text = _decode(raw, first=found.documents == 0 and number == 1)
                if text.strip():
                    self._document(parse_json(text, position="column"), found, index, number, system)
        lines.close()
        if found.layout == "document":
            self._document(self._whole(file), found, index, None, system)
        if found.layout is None:
            msg = "is empty: it holds no trace"
            raise InvalidInputError(msg, fix="pass a file of OTLP JSON traces")
        if found.documents and not found.spans:
            msg = f"holds no span: read as {found.described()}, its {found.documents} document(s) have none"
            raise InvalidInputError(
                msg,
                fix="pass the file that holds the traces",
            )
        self.spans.extend(found.spans)
        ingest.warnings.extend(found.notes.lines(file))
        ingest.read_as[file] = found.described()

    def _whole(self, file: Path) -> Any:
        """Read the file as one JSON document (its first line is not JSON on its own)."""
        size = file.stat().st_size
        if size > self.max_line_bytes:
            raise _too_long(size, self.max_line_bytes, "one JSON document (its first line is not JSON on its own)")
        try:
            raw = file.read_bytes()
        except OSError as exc:
            msg = f"cannot be read ({(exc.strerror or str(exc)).lower()})"
            raise InvalidInputError(msg) from None
        return parse_json(_decode(raw, first=True))

    def _document(self, document: Any, found: _Found, file: int, line: int | None, system: str | None) -> None:
        """Read the spans of one document (a line's, or the file's), added to ``found`` once all are read."""
        shape = shape_of(document)
        if shape is None:
            raise InvalidInputError(not_a_shape(document))
        if found.shape is None:
            found.shape = shape
        elif shape != found.shape:
            msg = f"{SHAPES[shape]}, but the file's first document is {SHAPES[found.shape]}: a file holds one shape"
            raise InvalidInputError(msg)
        notes = Notes()
        place = f"line {line}: " if line is not None else ""
        spans = []
        for raw in spans_of(document, shape):
            span = read_span(raw, self.context, notes, place=place)
            if system is not None:  # the system named for the file, whatever its spans say
                span.context["system"] = system
            span.file, span.line, span.order = file, line, self.order
            self.order += 1
            spans.append(span)
        found.spans += spans
        found.notes.merge(notes)
        found.documents += 1

    # -- the tables ---------------------------------------------------------------------------

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        """Return the traces read as runs and their tables; a trace that cannot be a run is set aside (or refused)."""
        traces: dict[str, list[Span]] = {}
        seen: set[tuple[str, str]] = set()
        repeated = 0
        for span in self.spans:
            key = (span.trace_id, span.span_id)
            if key in seen:
                repeated += 1
                continue
            seen.add(key)
            traces.setdefault(span.trace_id, []).append(span)
        if repeated:
            ingest.warnings.append(f"{repeated} span(s) read more than once (same trace and span id); kept once")
        rows = Rows()
        impossible: dict[int, Recorded] = {}
        for trace_id, spans in traces.items():
            first = spans[0]
            where = f"trace {trace_id}" + (f" (first span at line {first.line})" if first.line is not None else "")
            noted = Recorded()
            try:
                walked = walk(spans)
                found, context = run_rows(
                    trace_id, walked, count_evaluator=self.count_evaluator, impossible=noted, where=where
                )
                self._check_context(context)
            except InvalidInputError as invalid:
                ingest.set_aside(
                    InvalidInputError(invalid.problem, where=where, fix=invalid.fix, file=self.files[first.file])
                )
                continue
            rows.extend(found)
            for name, value, at in noted.added:
                impossible.setdefault(first.file, Recorded()).add(name, value, at)
        for file, noted in impossible.items():
            ingest.warnings.extend(noted.lines(self.files[file]))
        outcomes, said = outcome_rows(rows.evaluations)
        ingest.warnings.extend(said + _notes(rows))
        frames = {
            "runs": _frame(rows.runs, RUN_COLUMNS, "runs"),
            "agents": _frame(rows.agents, AGENT_COLUMNS, "agents"),
            "usage": _frame(rows.usage, USAGE_COLUMNS, "usage"),
            "messages": _frame(rows.messages, MESSAGE_COLUMNS, "messages"),
            "tool_calls": _frame(rows.tool_calls, TOOL_COLUMNS, "tool_calls"),
            "outcomes": _frame(outcomes, ("run_id", "name", "value", "passed", "explanation"), "outcomes"),
        }
        return {name: frame for name, frame in frames.items() if frame.height or name == "runs"}

    def _check_context(self, context: tuple[Any, ...]) -> None:
        system, case_id = context[0], context[1]
        if case_id is None:
            msg = f"no span or resource has the case attribute {self.case_attribute!r}"
            raise InvalidInputError(
                msg,
                fix=f"set it on the root span or the resource, or pass {option('case_attribute', '...')}",
            )
        if system is None:
            msg = f"no span or resource has the system attribute {self.system_attribute!r}"
            raise InvalidInputError(
                msg,
                fix=f"set it, or name the file's system, or pass {option('system_attribute', '...')}",
            )


def _examples(found: list[str]) -> str:
    return "; ".join(found[:3]) + ("; ..." if len(found) > 3 else "")


def _notes(rows: Rows) -> list[str]:
    """Return what the runs' rows leave to say: orphan spans, model calls and roots that ended in an error."""
    said = []
    if rows.orphans:
        spans = sum(count for _, count in rows.orphans)
        examples = _examples([f"trace {trace}: {count}" for trace, count in rows.orphans])
        said.append(
            f"{spans} span(s) in {len(rows.orphans)} trace(s) name a parent span that is not in their trace (the "
            f"trace was exported in part); each is kept under its trace's root span ({examples})"
        )
    if rows.failed_calls:
        said.append(
            f"{len(rows.failed_calls)} model call(s) ended in an error status; each is counted in its run's "
            f"api_calls ({_examples(rows.failed_calls)})"
        )
    if rows.failed_roots:
        said.append(
            f"{len(rows.failed_roots)} trace(s) whose root span ended in an error status: the run may not have "
            f"finished ({_examples(rows.failed_roots)})"
        )
    return said


def _frame(rows: list[tuple[Any, ...]], columns: tuple[str, ...], table: str) -> pl.DataFrame:
    schema = TABLES[table].polars_schema
    frame = pl.DataFrame(rows, schema={c: schema[c] for c in columns}, orient="row")
    return conform(frame, table)


@validate_params(
    {
        **LOG_PARAMETERS,
        "system_attribute": [NAME],
        "case_attribute": [NAME],
        "count_evaluator": [Boolean()],
        "max_line_bytes": [Interval(int, 1, BYTES_CEILING)],
    }
)
def ingest_otlp(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    system_attribute: str = SYSTEM_ATTRIBUTE,
    case_attribute: str = CASE_ATTRIBUTE,
    count_evaluator: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    r"""Read OpenTelemetry traces of agents (OTLP JSON, Tempo, Jaeger) into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    paths
        Trace files, or folders: a folder stands for its ``.json`` and ``.jsonl`` files (not those
        of its sub-folders), sorted by name. A file may be OTLP JSON, one
        ``ExportTraceServiceRequest`` a line (what the OpenTelemetry Collector's file exporter
        writes) or one document however formatted (a request or a list of them); a Grafana Tempo
        trace (``{"batches": [...]}``); a Jaeger JSON export (``{"data": [...]}``); or a Jaeger v3
        API response (``{"result": {"resourceSpans": [...]}}``). A single path is accepted too,
        and ``{path: system}`` names the system of each path's runs (None: ``system``). A trace
        may be spread over several lines and files.
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
    count_evaluator
        Count an evaluator's model calls (an LLM judge's: the calls under an evaluation span) in
        the run's ``api_calls`` and tokens. By default they are left out, being no cost of the
        system; in ``usage`` they are always rows of their own, with ``evaluator`` true.
    max_line_bytes
        The longest line read, and the largest file read as one document (16 MiB by default). A
        longer line is never held: it is refused (or set aside with ``skip_invalid``).
    overwrite
        Replace an existing ``out``.
    skip_invalid
        Set aside the files, lines and traces that cannot be ingested (listed with their reasons in
        ``skipped``) and ingest the others, instead of failing at the first.
    shards
        ``None`` or 1: one file per table. ``N``: the sharded layout of
        :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and files read, what was skipped, the warnings,
        and how each file was read (``read_as``: its shape and layout).

    Raises
    ------
    IngestError
        A path does not exist or a folder holds no JSON file; or (without ``skip_invalid``) a file
        or line is not JSON, not trace data of a shape read, longer than ``max_line_bytes``, or
        has a span without a valid trace or span id, with a time that cannot be one, or with a
        token count that is not a count (named by file, line and span); or a trace has no case
        (or no system) attribute, parents that loop, or token counts whose sum no column holds
        (named by trace id, with the line of its first span). Also when nothing can be ingested.
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any file is read.
    InvalidParameterError
        ``count_evaluator`` is not a boolean, or ``max_line_bytes`` is not an integer from 1 to
        1 GiB.

    Notes
    -----
    One trace is one run, ``run_id`` its trace id in hex. The spans of a trace are walked once,
    from its roots down: a span whose parent is not in the trace is kept under its root.
    ``agents`` are the agent spans (GenAI ``invoke_agent``, OpenInference AGENT) but a team span
    that only delegates; ``usage`` sums the model calls (``chat`` and the other inference
    operations, OpenInference LLM) by the agent above them and the model (the response's model
    before the request's), input tokens counting cached ones; ``messages`` holds what the calls
    sent and received, ``tool_calls`` the ``execute_tool`` (TOOL) spans with their status's error;
    ``gen_ai.evaluation.result`` events are ``outcomes``. An evaluation's own model calls are the
    judge's (``usage.evaluator``), left out of the run's totals unless ``count_evaluator``.
    ``docs/ingest/otlp.md`` gives every rule.

    Examples
    --------
    A single agent's trace, one request a line, its case set on the resource:

    >>> import json, tempfile
    >>> def attribute(key, value):
    ...     return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}
    >>> chat = {
    ...     "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "chat gpt-4o",
    ...     "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001500000000",
    ...     "attributes": [attribute("gen_ai.operation.name", "chat"), attribute("gen_ai.request.model", "gpt-4o"),
    ...                    attribute("gen_ai.usage.input_tokens", 120), attribute("gen_ai.usage.output_tokens", 30)],
    ... }
    >>> resource = {"attributes": [attribute("service.name", "single"), attribute("mas_eval.case_id", "q1")]}
    >>> request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [chat]}]}]}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "traces.json"
    ...     _ = path.write_text(json.dumps(request) + "\n")
    ...     result = ingest_otlp(path)
    >>> result.dataset.collect("runs").select("system", "case_id", "api_calls", "tokens", "seconds").rows()
    [('single', 'q1', 1, 150, 1.5)]
    >>> [shape for _, shape in result.read_as]
    ['OTLP JSON, one document a line']
    """
    reader = _Reader(system_attribute, case_attribute, count_evaluator, max_line_bytes)
    return ingest_logs(
        FORMAT, reader, paths, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
    )
