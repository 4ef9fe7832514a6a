"""Read inspect_ai evaluation logs (``.eval`` and ``.json``) into a Dataset.

inspect_ai (UK AISI, MIT-licensed) writes one log per evaluated task: its header (the task, the
model and its roles, the solver, the aggregate results) and one sample per dataset item and
epoch, with its messages, the model and tool calls made (events), token usage and scores.
:func:`ingest_inspect` makes each sample and epoch one run; docs/ingest/inspect.md lists the
mapping field by field.

The logs are read here, with :mod:`json` and :mod:`zipfile`, not through inspect_ai's reader:
that one validates every sample into its pydantic models (the whole transcript of each model
call), many times the cost of decoding the JSON and taking the fields mapped. So every fact about
the on-disk layouts lives in this package, in the order a log is read:

- :mod:`~mas_eval.ingest.inspect_logs.archive`: a ``.eval`` log is a zip archive: ``header.json``
  (the log without its samples, written when the evaluation ends; before that only
  ``_journal/start.json``) and one member ``samples/<id>_epoch_<epoch>.json`` per sample,
  compressed with zstandard (or deflate, or stored), each inflated no further than
  ``max_member_bytes``. A member written twice (a re-run sample) counts by its last copy. A
  ``.json`` log is one JSON document: the header's fields and ``samples``;
- :mod:`~mas_eval.ingest.inspect_logs.layout`: the header, and the older layouts migrated as
  inspect_ai 0.3.285's reader migrates them (a derived eval id, a single scorer's results, a
  sample's single score; format version 3);
- :mod:`~mas_eval.ingest.inspect_logs.sample`: one sample into rows (the judge's calls apart,
  tool calls, messages with the tokens of the call that wrote them).

Reading a zstandard-compressed ``.eval`` log needs the ``zstandard`` package, which inspect_ai
installs: ``pip install 'mas_eval[inspect]'``. ``.json`` logs need nothing beyond the standard
library.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import Boolean, Interval, validate_params
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError
from mas_eval.ingest.inspect_logs.archive import INSTALL, MAX_MEMBER_BYTES, Archive, MemberTooLarge
from mas_eval.ingest.inspect_logs.layout import (
    FORMAT_VERSION,
    Header,
    decode,
    header_of,
    migrate_sample,
    system_of,
)
from mas_eval.ingest.inspect_logs.sample import FIELDS, Rows, read_sample, where_of
from mas_eval.ingest.logs import LogIngestResult, conform
from mas_eval.ingest.recipe import LOG_PARAMETERS, Ingest, InvalidInputError, LogFormat, Paths, ingest_logs, json_type
from mas_eval.ingest.values import Impossible, identifier, integer

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "INSTALL",
    "MAX_MEMBER_BYTES",
    "SUFFIXES",
    "ingest_inspect",
    "system_of",
]

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
#: The tables an inspect_ai log gives rows to, in the schema's order.
_TABLES = tuple(t for t in TABLES if t in FIELDS)
#: Members of a ``.eval`` log: the header of a finished evaluation, the start record written
#: before it, and the folder of the samples.
_HEADER, _START, _SAMPLES = "header.json", "_journal/start.json", "samples/"
#: The fix for a log that is not as inspect_ai writes it.
_FIX = "pass a complete .eval or .json log written by inspect_ai"


@dataclass
class _Log:
    """The rows of one log (then its frames), its aggregate results, runs and warnings."""

    file: Path
    rows: Rows
    frames: dict[str, pl.DataFrame] = field(default_factory=dict)
    #: The log's aggregate results: one ``reported`` row (without run_id) each, given to every run of the log.
    results: list[dict[str, Any]] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    unscored: int = 0

    def freeze(self) -> None:
        """Turn the rows into one frame per table: the strings go to Arrow, the Python objects are freed."""
        for name, rows in self.rows.tables.items():
            columns = list(zip(*rows, strict=True)) or [()] * len(FIELDS[name])
            schema = TABLES[name].polars_schema
            frame = pl.DataFrame(
                dict(zip(FIELDS[name], columns, strict=True)), schema={c: schema[c] for c in FIELDS[name]}
            )
            self.frames[name] = conform(frame, name)
        self.rows.tables = {}


def _check_status(header: Header, has_samples: bool) -> None:
    """Refuse a log whose evaluation did not finish, whole: its samples are a biased part of the task."""
    if header.status == "success":
        return
    empty = "" if has_samples else " and holds no samples"
    if header.status == "error":
        why = f" ({header.error})" if header.error else ""
        problem = f"the evaluation ended with an error{why}{empty}"
        fix = "re-run the failed samples with `inspect eval-retry` and ingest its log"
    else:
        problem = f"the evaluation has status {header.status!r}, not 'success'{empty}"
        fix = "ingest the log of a finished evaluation"
    raise InvalidInputError(problem, fix=fix)


def _no_samples() -> InvalidInputError:
    problem = "holds no samples (a header-only log: its results without the samples they came from)"
    fix = "ingest the log with its samples (inspect_ai writes them unless told not to: --no-log-samples)"
    return InvalidInputError(problem, fix=fix)


class _Reading:
    """One log being read: its header, rows, the runs it holds so far, and the rules that span logs.

    ``check_text``: whether every text is checked for a lone surrogate (see :func:`_read_log`).
    """

    def __init__(
        self, log: _Log, header: Header, system: str | None, ingest: Ingest, seen: dict[Any, Path], check_text: bool
    ) -> None:
        self.log, self.header, self.ingest, self.seen = log, header, ingest, seen
        self.system = system if system is not None else header.system
        self.check_text = check_text
        self.mine: dict[Any, Path] = {}

    def sample(self, sample: Any) -> None:
        """Read one decoded sample, or set it aside (as ``ingest.attempt`` does) with nothing of it kept."""
        if not isinstance(sample, dict):
            msg = f"a sample is {json_type(sample)}, not an object"
            raise InvalidInputError(msg, fix=_FIX)
        rows = self.log.rows
        marks = [len(table) for table in rows.tables.values()]
        warned = len(rows.warnings)
        mine, kept = rows.impossible, Impossible()
        rows.impossible = kept
        try:
            self._read(sample)
        except (InvalidInputError, KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
            for table, mark in zip(rows.tables.values(), marks, strict=True):
                del table[mark:]
            del rows.warnings[warned:]
            invalid = exc if isinstance(exc, InvalidInputError) else _malformed(exc)
            where = where_of(sample)
            invalid.where = f"{where}: {invalid.where}" if invalid.where else where
            self.ingest.set_aside(invalid)
        else:
            mine.absorb(kept)
        finally:
            rows.impossible = mine

    def _read(self, sample: dict[str, Any]) -> None:
        header = self.header
        migrate_sample(sample, header.first_score)
        case = identifier(sample.get("id"), "sample id")
        epoch = sample.get("epoch")
        if epoch is None:
            msg = "field 'epoch' is missing (null), not an epoch number (1 = first)"
            raise InvalidInputError(msg)
        epoch = integer(epoch, "epoch", minimum=1)
        sample["epoch"] = epoch
        run_id = f"{header.eval_id}/{case}/{epoch}"
        error = sample.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            said = str(message or "").strip().splitlines()
            why = f" ({said[0][:200]})" if said else ""
            fix = "re-run it with `inspect eval-retry` and ingest that log"
            msg = f"the sample failed{why}"
            raise InvalidInputError(msg, fix=fix, skip="skip the samples that failed")
        self._check_across(run_id, case, epoch)
        if not sample.get("scores"):
            self.log.unscored += 1
        read_sample(
            self.log.rows,
            sample,
            run_id,
            self.system,
            header.task,
            header.roles,
            header.model,
            check_text=self.check_text,
        )
        self.log.run_ids.append(run_id)
        self.mine[run_id] = self.mine[(self.system, header.task, case, epoch)] = self.log.file

    def _check_across(self, run_id: str, case: str, epoch: int) -> None:
        """Check the rules that span samples and logs.

        A sample and epoch once in a log; a run_id once; a system's sample and epoch of a task once.

        ``seen`` holds the keys of the logs accepted before, ``mine`` those of this log so far (kept
        apart, so that a log refused part way leaves nothing behind).
        """
        if run_id in self.mine:
            problem = (
                "is in this log twice (inspect_ai writes each sample and epoch once: the log was edited or merged)"
            )
            raise InvalidInputError(problem, fix="keep one copy of the sample in the log")
        earlier = self.seen.get(run_id)
        if earlier is not None:
            fix = "pass each log once (a copy of a log has the same eval id)"
            msg = f"its run_id {run_id!r} is also one of {earlier}"
            raise InvalidInputError(msg, fix=fix)
        repeat = (self.system, self.header.task, case, epoch)
        earlier = self.seen.get(repeat) or self.mine.get(repeat)
        if earlier is not None:
            fix = "name the two logs' systems apart ({log: system}; on the command line LOG=SYSTEM), or pass only one"
            msg = f"system {self.system!r} ran this sample and epoch of task {self.header.task!r} in {earlier} too"
            raise InvalidInputError(msg, fix=fix)

    def notes(self) -> list[str]:
        """Return what the log's reading left out or set apart, once every sample was read: a line each."""
        log, rows, file = self.log, self.log.rows, self.log.file
        notes = [f"{file}: {warning}" for warning in self.header.warnings]
        notes += [f"{file}: {warning}" for warning in rows.warnings]
        notes += rows.impossible.lines(file)
        if log.unscored:
            notes.append(
                f"{file}: {log.unscored} sample(s) have no score: their runs have no outcomes "
                "(`inspect score LOG` scores a log)"
            )
        if rows.evaluator_calls:
            counted = (
                "counted in the runs' tokens, calls and cost as the system's (count_evaluator; usage.evaluator false)"
                if rows.count_evaluator
                else "in usage with evaluator = true, left out of the runs' tokens, calls and cost"
            )
            notes.append(f"{file}: {rows.evaluator_calls} model call(s) made in scoring (a judge's) are {counted}")
        return notes


def _malformed(exc: Exception) -> InvalidInputError:
    said = " ".join(str(exc).split())[:200] or type(exc).__name__
    problem = f"is not a sample as inspect_ai writes one ({type(exc).__name__}: {said})"
    return InvalidInputError(problem, fix=_FIX, skip="skip such samples")


def _read_log(
    file: Path, system: str | None, ingest: Ingest, seen: dict[Any, Path], *, count_evaluator: bool, limit: int
) -> _Log:
    r"""Read the rows of one log; a sample that cannot be ingested is an error, or set aside with ``skip_invalid``.

    A lone surrogate (which JSON's ``\ud800`` can write and no UTF-8 text can hold) is rare, and
    checking every text for one is not free (docs/performance.md): so the log is read without that
    check, and only when its rows cannot become columns for holding one is it read again with
    every text checked, which names the sample and the field.
    """
    skipped = len(ingest.skipped)
    try:
        return _read_log_once(file, system, ingest, seen, count_evaluator=count_evaluator, limit=limit, check=False)
    except UnicodeEncodeError:
        del ingest.skipped[skipped:]
    try:
        return _read_log_once(file, system, ingest, seen, count_evaluator=count_evaluator, limit=limit, check=True)
    except UnicodeEncodeError:
        problem = "holds text that is not valid Unicode (a lone surrogate, which JSON's \\ud800 escapes can write)"
        raise InvalidInputError(problem, fix=_FIX) from None


def _read_log_once(
    file: Path,
    system: str | None,
    ingest: Ingest,
    seen: dict[Any, Path],
    *,
    count_evaluator: bool,
    limit: int,
    check: bool,
) -> _Log:
    log = _Log(file, Rows(count_evaluator=count_evaluator))
    with _without_cyclic_gc():
        try:
            read = _read_eval if file.suffix == ".eval" else _read_json
            reading = read(log, file, system, ingest, seen, limit, check)
        except (InvalidInputError, IngestError):
            raise
        except MemberTooLarge as exc:
            raise InvalidInputError(str(exc), fix="it may be a zip bomb: check where the log came from") from None
        except Exception as exc:  # any other failure is the file's: it is not a log as inspect_ai writes it
            raise _unreadable(exc) from None
    log.freeze()
    header = reading.header
    log.results = [
        {"source": "results", "name": r.name, "item": 0, "value": r.value, "text": r.text} for r in header.results
    ]
    ingest.warnings.extend(reading.notes())
    seen.update(reading.mine)
    return log


def _read_json(
    log: _Log, file: Path, system: str | None, ingest: Ingest, seen: dict[Any, Path], limit: int, check: bool
) -> _Reading:
    """Read a ``.json`` log (``limit`` is a ``.eval`` member's; a ``.json`` log is read whole)."""
    del limit
    try:
        data = file.read_bytes()
    except OSError as exc:
        msg = f"cannot be read ({(exc.strerror or str(exc)).lower()})"
        raise InvalidInputError(msg) from None
    if not data.strip():
        msg = "is empty, not an inspect_ai log"
        raise InvalidInputError(msg, fix=_FIX)
    doc = decode(data, "the log")
    del data
    header = header_of(doc)
    samples = doc.get("samples") or []
    if not isinstance(samples, list):
        msg = f"field 'samples' is {json_type(samples)}, not a list"
        raise InvalidInputError(msg, fix=_FIX)
    _check_status(header, bool(samples))
    if not samples:
        raise _no_samples()
    reading = _Reading(log, header, system, ingest, seen, check)
    for sample in samples:
        reading.sample(sample)
    return reading


def _read_eval(
    log: _Log, file: Path, system: str | None, ingest: Ingest, seen: dict[Any, Path], limit: int, check: bool
) -> _Reading:
    """Read a ``.eval`` log, a member at a time (each inflated no further than ``limit`` bytes)."""
    with Archive(file, limit=limit) as archive:
        members = archive.members
        if _HEADER in members:
            doc = decode(archive.read(_HEADER), f"member {_HEADER}")
        elif _START in members:
            # The evaluation has not finished: only its start record is there.
            doc = decode(archive.read(_START), f"member {_START}")
            if isinstance(doc, dict):
                doc = {"status": "started", **doc}
        else:
            msg = f"neither {_HEADER} nor {_START} is in the archive: not an inspect_ai .eval log"
            raise InvalidInputError(msg, fix=_FIX)
        header = header_of(doc)
        names = [name for name in members if name.startswith(_SAMPLES) and name.endswith(".json")]
        _check_status(header, bool(names))
        if not names:
            raise _no_samples()
        reading = _Reading(log, header, system, ingest, seen, check)
        for name in names:
            reading.sample(decode(archive.read(name), f"member {name}"))
    return reading


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while the block runs.

    Decoding a log makes millions of dicts and lists, none in a cycle (reference counting frees them),
    and the collector's passes over them are a large share of the reading (docs/performance.md).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _unreadable(exc: Exception) -> InvalidInputError:
    said = " ".join(str(exc).split())[:300] or type(exc).__name__
    return InvalidInputError(f"inspect_ai cannot read it ({type(exc).__name__}: {said})", fix=_FIX)


# -- the ingest ---------------------------------------------------------------------------------


def _frames(logs: list[_Log]) -> dict[str, pl.DataFrame]:
    """Return one DataFrame per table; tables without rows are left out (``runs`` never is)."""
    if not logs:
        return {"runs": pl.DataFrame(schema=TABLES["runs"].polars_schema)}
    frames = {name: pl.concat([log.frames[name] for log in logs]) for name in _TABLES}
    # A name is pass/fail only when every one of its values is a pass or a fail: one "P", one
    # number, and the name's values are scores like any other (validate() holds to it).
    frames["outcomes"] = frames["outcomes"].with_columns(
        passed=pl.when(pl.col("passed").is_not_null().all().over("name")).then(pl.col("passed"))
    )
    schema = {c: t for c, t in TABLES["reported"].polars_schema.items() if c != "run_id"}
    results = [
        pl.DataFrame({"run_id": log.run_ids}).join(pl.DataFrame(log.results, schema=schema), how="cross")
        for log in logs
        if log.results and log.run_ids
    ]
    frames["reported"] = pl.concat([frames["reported"], *(r.select(frames["reported"].columns) for r in results)])
    return {name: frame for name, frame in frames.items() if frame.height or name == "runs"}


class _Reader:
    """inspect_ai logs read one at a time, with the rules that span logs."""

    def __init__(self, *, count_evaluator: bool, max_member_bytes: int) -> None:
        self.logs: list[_Log] = []
        self.seen: dict[Any, Path] = {}
        self.count_evaluator, self.limit = count_evaluator, max_member_bytes

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        if file.suffix not in SUFFIXES:
            problem = "has neither the .eval nor the .json suffix of an inspect_ai log"
            raise InvalidInputError(problem, fix="pass inspect_ai .eval or .json logs")
        log = _read_log(file, system, ingest, self.seen, count_evaluator=self.count_evaluator, limit=self.limit)
        if log.run_ids:
            self.logs.append(log)

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:  # noqa: ARG002 -- recipe.Reader's signature
        return _frames(self.logs)


@validate_params({**LOG_PARAMETERS, "count_evaluator": [Boolean()], "max_member_bytes": [Interval(int, 1, None)]})
def ingest_inspect(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
    count_evaluator: bool = False,
    max_member_bytes: int = MAX_MEMBER_BYTES,
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
        and samples (failed, a value no column can hold) that cannot be ingested, listed with
        their reasons in ``skipped``, and ingest the rest, instead of failing at the first.
    shards
        ``None`` or 1: one file per table. ``N`` (2 to 10,000): the sharded layout of
        :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`.
    count_evaluator
        Count the model calls made in scoring (a model-graded scorer's judge) in the runs'
        ``tokens``, ``input_tokens``, ``output_tokens``, ``api_calls`` and ``cost_usd``. By
        default they are left out: the judge's tokens are not the system's cost. Either way they
        are in ``usage``, under the scorer's name, with ``evaluator = true`` (left out) or
        ``false`` (counted as the system's).
    max_member_bytes
        The most a ``.eval`` member (a sample's JSON) is inflated to, in bytes (default 128 MiB):
        a larger one is refused, never held whole, so a zip bomb cannot exhaust memory.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and logs read, what was skipped, the warnings
        (also in the Dataset's manifest: values set to null, samples without a score, the
        judge's calls set apart).

    Raises
    ------
    IngestError
        A zstandard-compressed ``.eval`` log is read without zstandard installed; a path does
        not exist, is not a log, or a folder holds none; or (without ``skip_invalid``) a log
        cannot be ingested: its evaluation ended with an error or did not finish, it holds no
        samples, it cannot be read (truncated, corrupt, a member inflating beyond
        ``max_member_bytes``), it is of a newer format version, a sample failed, holds a value
        no column can hold or is in the log twice, a log is given twice, or two logs hold the
        same sample and epoch of a task for one system. One line naming the file, the sample
        and the fix. Also when nothing at all can be ingested.
    InvalidParameterError
        ``max_member_bytes`` is not a positive whole number of bytes.
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any log is read. Nothing is written.

    Notes
    -----
    One sample and epoch is one run, ``run_id`` = ``<eval_id>/<sample id>/<epoch>`` (a log
    without an eval id gets the one inspect_ai derives on reading it); scores go to
    ``outcomes`` (with the scorer's answer and explanation), model calls to ``usage`` (a role is
    an agent; a scorer's judge an agent of its own, ``evaluator = true``), tool calls to
    ``tool_calls``, the messages to ``messages``, the log's aggregate results (each scorer's
    metrics) to ``reported`` with source ``"results"`` for every run of the log.
    docs/ingest/inspect.md gives every field.

    Examples
    --------
    >>> import tempfile, json
    >>> log = {"version": 2, "status": "success", "eval": {"task": "add", "model": "mockllm/model",
    ...        "eval_id": "e1", "created": "2025-01-01T00:00:00+00:00"},
    ...        "samples": [{"id": 1, "epoch": 1, "target": "2", "scores": {"match": {"value": "C"}},
    ...                     "messages": [{"role": "user", "content": "1+1?"}]}]}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "add.json"
    ...     _ = path.write_text(json.dumps(log))
    ...     result = ingest_inspect(path)
    >>> result.dataset.collect("runs").select("run_id", "case_id", "target").rows()
    [('e1/1/1', '1', '2')]
    """
    reader = _Reader(count_evaluator=bool(count_evaluator), max_member_bytes=max_member_bytes)
    return ingest_logs(
        FORMAT, reader, paths, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
    )
