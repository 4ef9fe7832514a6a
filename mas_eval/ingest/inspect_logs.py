"""Read inspect_ai evaluation logs (``.eval`` and ``.json``) into a Dataset.

inspect_ai (UK AISI, MIT-licensed) writes one log per evaluated task: its header (the task, the
model and its roles, the solver, the aggregate results) and one sample per dataset item and
epoch, with its messages, the model calls made (events), token usage and scores.
:func:`ingest_inspect` makes each sample and epoch one run; docs/ingest/inspect.md lists the
mapping field by field.

The logs are read here, with :mod:`json` and :mod:`zipfile`, not through inspect_ai's reader:
that one validates every sample into its pydantic models (the whole transcript of each model
call), over ten times the cost of decoding the JSON and taking the few fields mapped. So every fact about the
two on-disk layouts (format version 2, as inspect_ai 0.3.285 writes it) lives in this module:

- a ``.eval`` log is a zip archive: ``header.json`` (the log without its samples, written when
  the evaluation ends; before that only ``_journal/start.json``) and one member
  ``samples/<id>_epoch_<epoch>.json`` per sample, compressed with zstandard (or deflate, or
  stored). A member written twice (a re-run sample) counts by its last copy. Samples are taken
  in inspect_ai's order: by epoch, then by id (an integer id as if zero-padded to 20 digits);
- a ``.json`` log is one JSON document: the header's fields and ``samples``, in its order.

Reading a zstandard-compressed ``.eval`` log needs the ``zstandard`` package, which inspect_ai
installs: ``pip install 'mas_eval[inspect]'``. ``.json`` logs need nothing beyond the standard
library.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import validate_params
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.recipe import LOG_PARAMETERS, Ingest, InvalidInputError, LogFormat, Paths, ingest_logs, read_json

__all__ = ["FORMAT", "FORMAT_VERSION", "INSTALL", "SUFFIXES", "ingest_inspect"]

#: The files a folder argument stands for: inspect_ai's two log formats.
SUFFIXES = (".eval", ".json")
#: inspect_ai's logs, for the recipe of every log adapter.
FORMAT = LogFormat(
    name="inspect_ai",
    files="inspect_ai .eval or .json logs",
    suffixes=SUFFIXES,
    in_folder="no .eval or .json logs directly",
    record="inspect_ai sample",
    skips="log(s) or sample(s)",
)
#: How to install what reading a zstandard-compressed ``.eval`` log needs.
INSTALL = "pip install 'mas_eval[inspect]'"
#: The newest log format version read: inspect_ai 0.3.285 writes version 2. A newer version may
#: lay its samples out otherwise, so it is refused rather than misread.
FORMAT_VERSION = 2
#: ``messages.round`` of every message: an inspect_ai sample is one conversation.
ROUND = "1"
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
#: The tables an inspect_ai log gives rows to, in the schema's order.
_TABLES = tuple(t for t in TABLES if t in {"runs", "agents", "messages", "usage", "outcomes", "reported"})
#: The columns each table's rows (tuples) hold, in order; the table's other columns are null.
_FIELDS: dict[str, tuple[str, ...]] = {
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
    ),
    "agents": ("run_id", "agent_id", "role"),
    "messages": ("run_id", "round", "agent_id", "turn", "text", "source"),
    "usage": ("run_id", "agent_id", "model", "calls", "input_tokens", "output_tokens", "cost_usd", "seconds"),
    "outcomes": ("run_id", "name", "value", "passed"),
    "reported": ("run_id", "source", "name", "item", "value", "text"),
}
#: Members of a ``.eval`` log: the header of a finished evaluation, the start record written
#: before it, and the folder of the samples.
_HEADER, _START, _SAMPLES = "header.json", "_journal/start.json", "samples/"
#: A zip member's local header: its signature, fixed length, and where the lengths of the name
#: and the extra field that follow it are (the data starts after both).
_LOCAL_SIGNATURE, _LOCAL_SIZE, _LOCAL_LENGTHS = b"PK\x03\x04", 30, struct.Struct("<HH")
#: The zip compression methods of ``.eval`` members: none, deflate, zstandard (inspect_ai's own).
_STORED, _DEFLATED, _ZSTD = 0, 8, 93
#: What inspect_ai's older layouts hold that this reader does not map; such a log is rewritten in
#: the current layout by inspect_ai's ``inspect log convert`` (reading it migrates it).
_OLD_SAMPLE_FIELDS = ("score", "transcript")
#: The fix for a log in an older layout.
_CONVERT = "rewrite it in the current layout with `inspect log convert` (to the other format: .eval <-> .json)"


# -- the two layouts ----------------------------------------------------------------------------


def _read_json_log(file: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and samples of a ``.json`` log: one document, the header's fields beside ``samples``."""
    doc = read_json(file, what="an inspect_ai log")
    if not isinstance(doc, dict):
        msg = f"the document is a JSON {type(doc).__name__}, not an object"
        raise ValueError(msg)
    _check_version(doc)
    return doc, doc.get("samples") or []


def _read_eval_log(file: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and samples of a ``.eval`` log (a zip archive), the samples in inspect_ai's order.

    The archive's directory comes from :mod:`zipfile`; the members are read and decompressed
    here, as zipfile cannot decompress zstandard before Python 3.14.
    """
    try:
        archive = zipfile.ZipFile(file)
    except zipfile.BadZipFile as exc:
        # zipfile's words for a missing end-of-central-directory record: a cut-off download or copy.
        if str(exc) != "File is not a zip file":
            raise
        msg = "EOCD not found: the zip archive is truncated, or the file is not one"
        raise ValueError(msg) from None
    with archive, file.open("rb") as raw:
        # A member written twice (a re-run sample) is read from its last copy, as inspect_ai does.
        members = {info.filename: info for info in archive.infolist()}
        # One decompressor for the log's members: its context is reused.
        zstd = _zstd() if any(info.compress_type == _ZSTD for info in members.values()) else None
        if _HEADER in members:
            header = _member(raw, members[_HEADER], zstd)
        elif _START in members:
            # The evaluation has not finished: only its start record is there.
            header = {"status": "started", **_member(raw, members[_START], zstd)}
        else:
            msg = f"neither {_HEADER} nor {_START} is in the archive: not an inspect_ai .eval log"
            raise ValueError(msg)
        _check_version(header)
        if header.get("status") != "success":  # refused whole (_check_header): its samples are not read
            return header, []
        samples = [
            _member(raw, info, zstd)
            for name, info in members.items()
            if name.startswith(_SAMPLES) and name.endswith(".json")
        ]
    samples.sort(key=lambda s: (s["epoch"], s["id"] if isinstance(s["id"], str) else str(s["id"]).zfill(20)))
    return header, samples


def _member(raw: Any, info: zipfile.ZipInfo, zstd: Any) -> Any:
    """One member of the archive, decompressed (``zstd``: the decompressor of a zstandard member),
    checked against its CRC and decoded from JSON."""
    raw.seek(info.header_offset)
    local = raw.read(_LOCAL_SIZE)
    if local[:4] != _LOCAL_SIGNATURE:
        msg = f"member {info.filename} has no local header where the archive's directory says"
        raise ValueError(msg)
    name_length, extra_length = _LOCAL_LENGTHS.unpack_from(local, _LOCAL_SIZE - _LOCAL_LENGTHS.size)
    raw.seek(info.header_offset + _LOCAL_SIZE + name_length + extra_length)
    data = raw.read(info.compress_size)
    if info.compress_type == _ZSTD:
        data = _unzstd(data, zstd)
    elif info.compress_type == _DEFLATED:
        data = zlib.decompress(data, -zlib.MAX_WBITS)
    elif info.compress_type != _STORED:
        msg = f"member {info.filename} uses zip compression method {info.compress_type}, not one inspect_ai writes"
        raise ValueError(msg)
    if zlib.crc32(data) != info.CRC:
        msg = f"member {info.filename} is corrupt (its CRC does not match)"
        raise ValueError(msg)
    return json.loads(data)


def _unzstd(data: bytes, decompressor: Any) -> bytes:
    """zstandard-compressed bytes decompressed; a member may hold several frames, one after another."""
    parts = []
    while data:
        frame = decompressor.decompressobj()
        parts.append(frame.decompress(data))
        data = frame.unused_data
    return b"".join(parts)


def _zstd() -> Any:
    """A zstandard decompressor, imported on first use: only zstandard-compressed .eval logs need it."""
    try:
        import zstandard
    except ImportError:
        msg = f"reading inspect_ai .eval logs needs zstandard, which is not installed; install it with: {INSTALL}"
        raise IngestError(msg) from None
    return zstandard.ZstdDecompressor()


def _check_version(header: dict[str, Any]) -> None:
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        msg = f"its log format version is {version!r}, not a number"
        raise ValueError(msg)
    if version > FORMAT_VERSION:
        fix = "upgrade mas_eval to read it"
        problem = (
            f"its log format version is {version}, newer than the {FORMAT_VERSION} this reader knows "
            "(format version of inspect_ai 0.3.285)"
        )
        raise InvalidInputError(problem, fix=fix)


# -- values -------------------------------------------------------------------------------------


def _score_value(value: Any) -> tuple[float | None, bool | None, str | None]:
    """``(value, passed, problem)`` of one score value, by inspect_ai's ``value_to_float`` defaults.

    "C" is 1 and passed, "I" 0 and failed, "P" 0.5 and "N" 0 (neither); a boolean is 1 or 0 and
    passed or failed; a number is itself; "yes"/"true" and "no"/"false" are 1 and 0, a numeric
    string its number. What ``value_to_float`` cannot read it counts as 0 (with a warning), and
    so does this; a value that is not finite is left out (``value`` None) with the problem said.
    """
    if isinstance(value, bool):
        return float(value), value, None
    if isinstance(value, int | float):
        number = float(value)
        return (number, None, None) if math.isfinite(number) else (None, None, f"is {value!r}, not finite; left out")
    if isinstance(value, str):
        if value in _SENTINELS:
            number, passed = _SENTINELS[value]
            return number, passed, None
        word = _WORDS.get(value.lower())
        if word is not None:
            return word, None, None
        try:
            number = float(value)
        except ValueError:
            return 0.0, None, f"is {value!r}, which inspect_ai's value_to_float reads as 0; recorded as 0"
        if math.isfinite(number):
            return number, None, None
        return None, None, f"is {value!r}, not finite; left out"
    return None, None, f"is {type(value).__name__}, not a score value; left out"


def _text(message: dict[str, Any], attachments: dict[str, str]) -> str:
    """A message's text (a list of content parts: their text parts, a line each), with the contents
    a condensed log moved to the sample's attachments put back."""
    text = message["content"]
    if not isinstance(text, str):
        text = "\n".join(part["text"] for part in text if part["type"] == "text")
    if "attachment://" in text:
        text = _ATTACHMENT.sub(lambda m: attachments.get(m.group(1), m.group(0)), text)
    return text


def _seconds(value: float | None) -> float | None:
    # A time written as a whole number is an int in JSON: inspect_ai's float field makes it a float.
    return None if value is None else float(value)


def _usage_numbers(usage: dict[str, Any] | None) -> tuple[int, int, int, float | None]:
    """``(input, output, total, cost)`` of one ``ModelUsage``: input counts the cache reads and writes too."""
    if usage is None:
        return 0, 0, 0, None
    prompt = (
        usage.get("input_tokens", 0)
        + (usage.get("input_tokens_cache_read") or 0)
        + (usage.get("input_tokens_cache_write") or 0)
    )
    cost = usage.get("total_cost")
    return prompt, usage.get("output_tokens", 0), usage.get("total_tokens", 0), None if cost is None else float(cost)


def _sum_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def system_of(header: dict[str, Any]) -> str:
    """``runs.system`` of a log's samples: its model, solver (and the solver's arguments) and task arguments.

    >>> system_of({"eval": {"model": "openai/gpt-4o", "solver": None, "task_args": {"agents": 3}},
    ...            "plan": {"steps": [{"solver": "debate"}]}})
    'openai/gpt-4o debate (agents=3)'
    """
    spec = header["eval"]
    solver = spec.get("solver") or "+".join(step["solver"] for step in (header.get("plan") or {}).get("steps", []))
    if spec.get("solver_args"):
        solver += (
            "(" + ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sorted(spec["solver_args"].items())) + ")"
        )
    words = [spec["model"], solver] if solver else [spec["model"]]
    if spec.get("task_args"):
        args = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sorted(spec["task_args"].items()))
        words.append(f"({args})")
    return " ".join(words)


# -- one log ------------------------------------------------------------------------------------


@dataclass
class _Log:
    """The rows of one log (a tuple of ``_FIELDS[table]`` each, then its frames), and its warnings."""

    file: Path
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=lambda: {t: [] for t in _TABLES})
    frames: dict[str, pl.DataFrame] = field(default_factory=dict)
    #: The log's aggregate results: one ``reported`` row (without run_id) each, given to every run of the log.
    results: list[dict[str, Any]] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def freeze(self) -> None:
        """The rows into one frame per table: the strings go to Arrow, the Python objects are freed."""
        for name, rows in self.rows.items():
            columns = list(zip(*rows, strict=True)) or [()] * len(_FIELDS[name])
            schema = TABLES[name].polars_schema
            frame = pl.DataFrame(
                dict(zip(_FIELDS[name], columns, strict=True)), schema={c: schema[c] for c in _FIELDS[name]}
            )
            self.frames[name] = conform(frame, name)
        self.rows = {}


def _where(sample: dict[str, Any]) -> str:
    return f"sample {sample['id']!r}, epoch {sample['epoch']}"


def _check_header(header: dict[str, Any]) -> None:
    """A log whose evaluation did not finish is refused whole: its samples are a biased part of the task."""
    status = header.get("status", "started")
    if status == "success":
        return
    if status == "error":
        error = header.get("error")
        said = (error["message"] if error is not None else "").strip().splitlines()
        why = f" ({said[0][:200]})" if said else ""
        problem = f"the evaluation ended with an error{why}"
        fix = "re-run the failed samples with `inspect eval-retry` and ingest its log"
    else:
        problem = f"the evaluation has status {status!r}, not 'success'"
        fix = "ingest the log of a finished evaluation"
    raise InvalidInputError(problem, fix=fix)


def _eval_id(header: dict[str, Any]) -> str:
    """The log's eval id; a log without one (an older layout) is refused: inspect_ai derives it on reading."""
    spec = header["eval"]
    eval_id = spec.get("eval_id") or ""
    if not eval_id or (header.get("results") or {}).get("scorer") is not None:
        problem = "it is in an older inspect_ai layout (no eval id, or a single scorer's results)"
        raise InvalidInputError(problem, fix=_CONVERT)
    return eval_id


def _results(header: dict[str, Any]) -> list[dict[str, Any]]:
    """The log's own aggregate results: each scorer's metrics, its reducer and sample counts, the totals."""
    rows: list[dict[str, Any]] = []
    results = header.get("results")
    if results is None:
        return rows
    for name in ("total_samples", "completed_samples"):
        rows.append({"source": "results", "name": name, "item": 0, "value": float(results.get(name, 0))})
    for score in results.get("scores") or []:
        # A dict-valued scorer's results are named by key, as its outcomes are named "<scorer>/<key>".
        outcome = score["name"] if score["name"] == score["scorer"] else f"{score['scorer']}/{score['name']}"
        for key, metric in (score.get("metrics") or {}).items():
            value = float(metric["value"])
            rows.append({"source": "results", "name": f"{outcome}/{key}", "item": 0, "value": value})
        for count in ("scored_samples", "unscored_samples"):
            if score.get(count) is not None:
                value = float(score[count])
                rows.append({"source": "results", "name": f"{outcome}/{count}", "item": 0, "value": value})
        if score.get("reducer") is not None:
            rows.append({"source": "results", "name": f"{outcome}/reducer", "item": 0, "text": score["reducer"]})
    return rows


def _check_sample(sample: dict[str, Any]) -> None:
    if any(old in sample for old in _OLD_SAMPLE_FIELDS):
        problem = "is in an older inspect_ai layout (a 'score' or 'transcript' field)"
        raise InvalidInputError(problem, where=_where(sample), fix=_CONVERT, skip="skip such samples")
    error = sample.get("error")
    if error is not None:
        said = error["message"].strip().splitlines()
        why = f" ({said[0][:200]})" if said else ""
        fix = "re-run it with `inspect eval-retry` and ingest that log"
        raise InvalidInputError(
            f"the sample failed{why}", where=_where(sample), fix=fix, skip="skip the samples that failed"
        )
    if not sample.get("scores"):
        fix = "score the log first (`inspect score LOG`)"
        raise InvalidInputError("has no score", where=_where(sample), fix=fix, skip="skip the samples without a score")


def _read_sample(log: _Log, header: dict[str, Any], sample: dict[str, Any], run_id: str, system: str) -> None:
    """The rows of one sample (one run)."""
    rows = log.rows
    events = sample.get("events") or []
    calls = [e for e in events if e.get("event") == "model"]
    model_usage = sample.get("model_usage") or {}
    prompt = output = total = 0
    costs: list[float | None] = []
    for usage in model_usage.values():
        p, o, t, c = _usage_numbers(usage)
        prompt, output, total = prompt + p, output + o, total + t
        costs.append(c)
    used = bool(model_usage)
    total_time, working_time = _seconds(sample.get("total_time")), _seconds(sample.get("working_time"))
    rows["runs"].append(
        (
            run_id,
            system,
            str(sample["id"]),
            header["eval"]["task"],
            sample["epoch"],
            len(calls) if events else None,
            total_time if total_time is not None else working_time,
            total if used else None,
            prompt if used else None,
            output if used else None,
            _sum_or_none(costs),
        )
    )
    if working_time is not None:
        rows["reported"].append((run_id, "sample", "working_time", 0, working_time, None))
    # Scores: one outcome per scorer, or per key of a scorer whose value is a dict.
    for scorer, score in sample["scores"].items():
        value = score["value"]
        named = [(f"{scorer}/{k}", v) for k, v in value.items()] if isinstance(value, dict) else [(scorer, value)]
        for name, item in named:
            number, passed, problem = _score_value(item)
            if problem is not None:
                log.warnings.append(f"{log.file}: {_where(sample)}: score {name!r} {problem}")
            if number is not None:
                rows["outcomes"].append((run_id, name, number, passed))
    # Usage per agent and model: each model call (event) is the role's that made it, or the model's.
    agents: dict[str, str | None] = {}
    by_message: dict[str, str] = {}
    if calls:
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for call in calls:
            role, model = call.get("role"), call["model"]
            agent = role or model
            agents.setdefault(agent, role)
            grouped.setdefault((agent, model), []).append(call)
            choices = (call["output"] or {}).get("choices")
            if choices and choices[0]["message"].get("id"):
                by_message[choices[0]["message"]["id"]] = agent
        for (agent, model), made in grouped.items():
            numbers = [_usage_numbers((c["output"] or {}).get("usage")) for c in made]
            rows["usage"].append(
                (
                    run_id,
                    agent,
                    model,
                    len(made),
                    sum(n[0] for n in numbers),
                    sum(n[1] for n in numbers),
                    _sum_or_none([n[3] for n in numbers]),
                    _sum_or_none([_seconds(c.get("working_time")) for c in made]),
                )
            )
    else:
        _usage_without_events(log, header, sample, run_id, agents)
    for agent, role in agents.items():
        rows["agents"].append((run_id, agent, role))
    attachments = sample.get("attachments") or {}
    messages = rows["messages"]
    for turn, message in enumerate(sample.get("messages") or [], start=1):
        speaker = message["role"]
        if speaker == "assistant":
            speaker = by_message.get(message.get("id") or "") or message.get("model") or speaker
        messages.append((run_id, ROUND, speaker, turn, _text(message, attachments), message.get("source")))


def _usage_without_events(
    log: _Log, header: dict[str, Any], sample: dict[str, Any], run_id: str, agents: dict[str, str | None]
) -> None:
    """``usage`` from the sample's totals when its events were not logged: no calls, no time.

    A role's model is the one the header binds it to; what a model used beyond its roles' usage
    is the model's own (calls made without a role).
    """
    rows = log.rows["usage"]
    spec = header["eval"]
    bound = spec.get("model_roles") or {}
    by_model: dict[str, list[int]] = {}
    for role, usage in (sample.get("role_usage") or {}).items():
        # A role bound to a list of models (fallbacks) names no one model: the eval's model stands.
        config = bound.get(role)
        model = (config.get("model") if isinstance(config, dict) else None) or spec["model"]
        p, o, _, c = _usage_numbers(usage)
        agents.setdefault(role, role)
        rows.append((run_id, role, model, None, p, o, c, None))
        spent = by_model.setdefault(model, [0, 0])
        spent[0], spent[1] = spent[0] + p, spent[1] + o
    for model, usage in (sample.get("model_usage") or {}).items():
        p, o, _, c = _usage_numbers(usage)
        spent = by_model.get(model, [0, 0])
        if model in by_model and p <= spent[0] and o <= spent[1]:
            continue
        agents.setdefault(model, None)
        rest_cost = c if model not in by_model else None
        rows.append((run_id, model, model, None, p - spent[0], o - spent[1], rest_cost, None))


def _read_log(file: Path, system: str | None, ingest: Ingest, seen: dict[str, Any]) -> _Log:
    """The rows of one log; a sample that cannot be ingested is an error, or set aside with ``skip_invalid``."""
    log = _Log(file)
    with _without_cyclic_gc():
        _read_into(log, file, system, ingest, seen)
    log.freeze()
    return log


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: decoding a log makes millions of dicts and lists, none
    in a cycle (reference counting frees them), and the collector's passes over them took a third
    of the reading time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_into(log: _Log, file: Path, system: str | None, ingest: Ingest, seen: dict[str, Any]) -> None:
    """``log``'s rows, read from ``file``; ``seen`` gets its keys only when the whole log was read."""
    # A log that is not what inspect_ai writes fails anywhere in its reading (a broken zip or
    # JSON, a field missing or of another type): each is this file's problem, said in one line.
    try:
        header, samples = (_read_eval_log if file.suffix == ".eval" else _read_json_log)(file)
        _check_header(header)
        eval_id = _eval_id(header)
        name = system if system is not None else system_of(header)
        log.results = _results(header)
        mine: dict[Any, Path] = {}
        for sample in samples:
            run_id = f"{eval_id}/{sample['id']}/{sample['epoch']}"
            with ingest.attempt():
                _check_sample(sample)
                _check_across(sample, run_id, name, header["eval"]["task"], file, seen, mine)
                _read_sample(log, header, sample, run_id, name)
                log.run_ids.append(run_id)
    except (InvalidInputError, IngestError):
        raise
    except Exception as exc:  # any other failure is the file's: it is not a log as inspect_ai writes it
        raise _unreadable(exc) from None
    seen.update(mine)


def _unreadable(exc: Exception) -> InvalidInputError:
    said = " ".join(str(exc).split())[:300] or type(exc).__name__
    fix = "pass a complete .eval or .json log written by inspect_ai"
    return InvalidInputError(f"inspect_ai cannot read it ({type(exc).__name__}: {said})", fix=fix)


def _check_across(
    sample: dict[str, Any],
    run_id: str,
    system: str,
    task: str,
    file: Path,
    seen: dict[Any, Path],
    mine: dict[Any, Path],
) -> None:
    """The rules that span logs: a run_id once; a system's sample and epoch of a task once.

    ``seen`` holds the keys of the logs accepted before, ``mine`` those of this log so far (kept
    apart, so that a log refused part way leaves nothing behind).
    """
    earlier = seen.get(run_id) or mine.get(run_id)
    if earlier is not None:
        fix = "pass each log once (a copy of a log has the same eval id)"
        raise InvalidInputError(f"its run_id {run_id!r} is also one of {earlier}", where=_where(sample), fix=fix)
    repeat = (system, task, str(sample["id"]), sample["epoch"])
    earlier = seen.get(repeat) or mine.get(repeat)
    if earlier is not None:
        fix = "name the two logs' systems apart ({log: system}; on the command line LOG=SYSTEM), or pass only one"
        msg = f"system {system!r} ran this sample and epoch of task {task!r} in {earlier} too"
        raise InvalidInputError(msg, where=_where(sample), fix=fix)
    mine[run_id] = mine[repeat] = file


# -- the ingest ---------------------------------------------------------------------------------


def _frames(logs: list[_Log]) -> dict[str, pl.DataFrame]:
    """One DataFrame per table; tables without rows are left out (``runs`` never is)."""
    if not logs:
        return {"runs": pl.DataFrame(schema=TABLES["runs"].polars_schema)}
    frames = {name: pl.concat([log.frames[name] for log in logs]) for name in _TABLES}
    # A name is pass/fail only when every one of its values is a pass or a fail: one "P", one
    # number, and the name's values are scores like any other (validate() holds to it).
    frames["outcomes"] = frames["outcomes"].with_columns(
        passed=pl.when(pl.col("passed").is_not_null().all().over("name")).then(pl.col("passed"))
    )
    results = [
        pl.DataFrame({"run_id": log.run_ids}).join(
            pl.DataFrame(
                log.results, schema={c: t for c, t in TABLES["reported"].polars_schema.items() if c != "run_id"}
            ),
            how="cross",
        )
        for log in logs
        if log.results and log.run_ids
    ]
    frames["reported"] = pl.concat([frames["reported"], *(r.select(frames["reported"].columns) for r in results)])
    return {name: frame for name, frame in frames.items() if frame.height or name == "runs"}


class _Reader:
    """inspect_ai logs read one at a time, with the rules that span logs."""

    def __init__(self) -> None:
        self.logs: list[_Log] = []
        self.seen: dict[Any, Path] = {}

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        if file.suffix not in SUFFIXES:
            problem = "has neither the .eval nor the .json suffix of an inspect_ai log"
            raise InvalidInputError(problem, fix="pass inspect_ai .eval or .json logs")
        log = _read_log(file, system, ingest, self.seen)
        if log.run_ids:
            self.logs.append(log)
            ingest.warnings.extend(log.warnings)

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        return _frames(self.logs)


@validate_params(LOG_PARAMETERS)
def ingest_inspect(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    """Read inspect_ai evaluation logs into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    paths
        ``.eval`` or ``.json`` logs written by inspect_ai, or folders: a folder stands for the
        ``.eval`` and ``.json`` files directly in it (not in its sub-folders), sorted by name. A
        single path is accepted too, and ``{path: system}`` names the system of each path's runs
        (None: ``system``), so that two logs of the same model, solver and task can be told
        apart. The files are only read.
    out
        The Dataset folder to write, atomically; it may not be, hold or lie inside one of
        ``paths``. None: nothing is written, the Dataset is returned in memory.
    system
        ``runs.system`` of the runs of a path not named in ``paths``. None: each log's model,
        solver (with its arguments) and task arguments, e.g. ``"openai/gpt-4o debate (agents=3)"``.
    overwrite
        Replace an existing ``out``.
    skip_invalid
        Set aside the logs (an evaluation that did not finish, a file inspect_ai cannot read)
        and samples (failed, not scored) that cannot be ingested, listed with their reasons in
        ``skipped``, and ingest the rest, instead of failing at the first.
    shards
        ``None`` or 1: one file per table. ``N`` (2 to 10,000): the sharded layout of
        :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and logs read, what was skipped, the warnings.

    Raises
    ------
    IngestError
        A zstandard-compressed ``.eval`` log is read without zstandard installed; a path does
        not exist, is not a log, or a folder holds none; or (without ``skip_invalid``) a log
        cannot be ingested: its evaluation ended with an error or did not finish, it cannot be
        read (truncated, corrupt), it is of a newer format version or an older inspect_ai
        layout, a sample failed or has no score, a log is given twice, or two logs hold the
        same sample and epoch of a task for one system. One line naming the file, the sample
        and the fix. Also when nothing at all can be ingested.
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any log is read. Nothing is written.

    Notes
    -----
    One sample and epoch is one run, ``run_id`` = ``<eval_id>/<sample id>/<epoch>``; scores
    go to ``outcomes``, model calls to ``usage`` (a role is an agent), the messages to
    ``messages``, the log's aggregate results (each scorer's metrics) to ``reported`` with
    source ``"results"`` for every run of the log. docs/ingest/inspect.md gives every field.
    """
    return ingest_logs(
        FORMAT, _Reader(), paths, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
    )
