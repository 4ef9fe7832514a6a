"""Read inspect_ai evaluation logs (``.eval`` and ``.json``) into a Dataset.

inspect_ai (UK AISI, MIT-licensed) writes one log per evaluated task: its header (the task, the
model and its roles, the solver, the aggregate results) and one sample per dataset item and
epoch, with its messages, the model calls made (events), token usage and scores. The format
changes between releases, so the logs are read through inspect_ai's own reader
(:func:`inspect_ai.log.read_eval_log`, :func:`inspect_ai.log.read_eval_log_samples`), which
needs the optional extra: ``pip install 'mas_eval[inspect]'``. :func:`ingest_inspect` makes
each sample and epoch one run; docs/ingest/inspect.md lists the mapping field by field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError, InvalidParameterError, option
from mas_eval.ingest.logs import LogIngestResult, dataset_of
from mas_eval.storage.inputs import describe_path, input_file
from mas_eval.storage.outputs import check_target
from mas_eval.storage.sharding import check_shards

__all__ = ["INSTALL", "SUFFIXES", "ingest_inspect"]

#: The files a folder argument stands for: inspect_ai's two log formats.
SUFFIXES = (".eval", ".json")
#: How to install the reader this adapter needs.
INSTALL = "pip install 'mas_eval[inspect]'"
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


def _reader() -> Any:
    """inspect_ai's log module, imported on first use: the package works without the extra."""
    try:
        import inspect_ai.log as log
    except ImportError:
        msg = f"reading inspect_ai logs needs inspect_ai, which is not installed; install it with: {INSTALL}"
        raise IngestError(msg) from None
    return log


class _InvalidError(Exception):
    """A log (``sample`` None) or one sample of it that cannot be ingested: what, and the fix."""

    def __init__(self, problem: str, fix: str | None = None, *, sample: str | None = None) -> None:
        super().__init__(problem)
        self.problem, self.fix, self.sample = problem, fix, sample

    def reason(self) -> str:
        return f"{self.sample}: {self.problem}" if self.sample else self.problem

    def error(self, file: Path) -> IngestError:
        fix = self.fix or f"fix the log, or pass {option('skip_invalid')} to skip what cannot be read"
        return IngestError(f"{file}: {self.reason()}; {fix}")


def _skip_fix(what: str) -> str:
    return f"or pass {option('skip_invalid')} to skip {what}"


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


def _text(message: Any, attachments: dict[str, str]) -> str:
    """A message's text, with the contents a condensed log moved to the sample's attachments put back."""
    text = message.text
    if "attachment://" in text:
        text = _ATTACHMENT.sub(lambda m: attachments.get(m.group(1), m.group(0)), text)
    return text


def _usage_numbers(usage: Any) -> tuple[int, int, int, float | None]:
    """``(input, output, total, cost)`` of one ``ModelUsage``: input counts the cache reads and writes too."""
    if usage is None:
        return 0, 0, 0, None
    prompt = usage.input_tokens + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
    return prompt, usage.output_tokens, usage.total_tokens, usage.total_cost


def _sum_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def system_of(header: Any) -> str:
    """``runs.system`` of a log's samples: its model, solver (and the solver's arguments) and task arguments.

    >>> from types import SimpleNamespace as N
    >>> system_of(N(eval=N(model="openai/gpt-4o", solver=None, solver_args=None, task_args={"agents": 3}),
    ...             plan=N(steps=[N(solver="debate")])))
    'openai/gpt-4o debate (agents=3)'
    """
    spec = header.eval
    solver = spec.solver or "+".join(step.solver for step in header.plan.steps)
    if spec.solver_args:
        solver += (
            "(" + ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sorted(spec.solver_args.items())) + ")"
        )
    words = [spec.model, solver] if solver else [spec.model]
    if spec.task_args:
        args = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sorted(spec.task_args.items()))
        words.append(f"({args})")
    return " ".join(words)


# -- one log ------------------------------------------------------------------------------------


@dataclass
class _Log:
    """The rows of one log, column by column, and its warnings."""

    file: Path
    columns: dict[str, dict[str, list[Any]]] = field(
        default_factory=lambda: {t: {c: [] for c in TABLES[t].names} for t in _TABLES}
    )
    #: The log's aggregate results: one ``reported`` row (without run_id) each, given to every run of the log.
    results: list[dict[str, Any]] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def row(self, table: str, **values: Any) -> None:
        for name, column in self.columns[table].items():
            column.append(values.get(name))


def _where(sample: Any) -> str:
    return f"sample {sample.id!r}, epoch {sample.epoch}"


def _check_header(header: Any) -> None:
    """A log whose evaluation did not finish is refused whole: its samples are a biased part of the task."""
    if header.status == "success":
        return
    if header.status == "error":
        said = (header.error.message if header.error is not None else "").strip().splitlines()
        why = f" ({said[0][:200]})" if said else ""
        problem = f"the evaluation ended with an error{why}"
        fix = f"re-run the failed samples with `inspect eval-retry` and ingest its log, {_skip_fix('this log')}"
    else:
        problem = f"the evaluation has status {header.status!r}, not 'success'"
        fix = f"ingest the log of a finished evaluation, {_skip_fix('this log')}"
    raise _InvalidError(problem, fix)


def _results(header: Any) -> list[dict[str, Any]]:
    """The log's own aggregate results: each scorer's metrics, its reducer and sample counts, the totals."""
    rows: list[dict[str, Any]] = []
    results = header.results
    if results is None:
        return rows
    for name in ("total_samples", "completed_samples"):
        rows.append({"source": "results", "name": name, "item": 0, "value": float(getattr(results, name))})
    for score in results.scores:
        # A dict-valued scorer's results are named by key, as its outcomes are named "<scorer>/<key>".
        outcome = score.name if score.name == score.scorer else f"{score.scorer}/{score.name}"
        for key, metric in score.metrics.items():
            value = float(metric.value)
            rows.append({"source": "results", "name": f"{outcome}/{key}", "item": 0, "value": value})
        for count in ("scored_samples", "unscored_samples"):
            if getattr(score, count) is not None:
                value = float(getattr(score, count))
                rows.append({"source": "results", "name": f"{outcome}/{count}", "item": 0, "value": value})
        if score.reducer is not None:
            rows.append({"source": "results", "name": f"{outcome}/reducer", "item": 0, "text": score.reducer})
    return rows


def _check_sample(sample: Any) -> None:
    if sample.error is not None:
        said = sample.error.message.strip().splitlines()
        why = f" ({said[0][:200]})" if said else ""
        fix = f"re-run it with `inspect eval-retry` and ingest that log, {_skip_fix('the samples that failed')}"
        raise _InvalidError(f"the sample failed{why}", fix, sample=_where(sample))
    if not sample.scores:
        fix = f"score the log first (`inspect score LOG`), {_skip_fix('the samples without a score')}"
        raise _InvalidError("has no score", fix, sample=_where(sample))


def _read_sample(log: _Log, header: Any, sample: Any, run_id: str, system: str) -> None:
    """The rows of one sample (one run)."""
    where = f"{log.file}: {_where(sample)}"
    calls = [e for e in sample.events if getattr(e, "event", None) == "model"]
    prompt = output = total = 0
    costs: list[float | None] = []
    for usage in sample.model_usage.values():
        p, o, t, c = _usage_numbers(usage)
        prompt, output, total = prompt + p, output + o, total + t
        costs.append(c)
    used = bool(sample.model_usage)
    log.row(
        "runs",
        run_id=run_id,
        system=system,
        case_id=str(sample.id),
        task=header.eval.task,
        epoch=sample.epoch,
        api_calls=len(calls) if sample.events else None,
        seconds=sample.total_time if sample.total_time is not None else sample.working_time,
        tokens=total if used else None,
        input_tokens=prompt if used else None,
        output_tokens=output if used else None,
        cost_usd=_sum_or_none(costs),
    )
    if sample.working_time is not None:
        log.row("reported", run_id=run_id, source="sample", name="working_time", item=0, value=sample.working_time)
    # Scores: one outcome per scorer, or per key of a scorer whose value is a dict.
    for scorer, score in sample.scores.items():
        value = score.value
        named = [(f"{scorer}/{k}", v) for k, v in value.items()] if isinstance(value, dict) else [(scorer, value)]
        for name, item in named:
            number, passed, problem = _score_value(item)
            if problem is not None:
                log.warnings.append(f"{where}: score {name!r} {problem}")
            if number is not None:
                log.row("outcomes", run_id=run_id, name=name, value=number, passed=passed)
    # Usage per agent and model: each model call (event) is the role's that made it, or the model's.
    agents: dict[str, str | None] = {}
    by_message: dict[str, str] = {}
    if calls:
        grouped: dict[tuple[str, str], list[Any]] = {}
        for call in calls:
            agent = call.role or call.model
            agents.setdefault(agent, call.role)
            grouped.setdefault((agent, call.model), []).append(call)
            if call.output is not None and call.output.choices and call.output.message.id:
                by_message[call.output.message.id] = agent
        for (agent, model), made in grouped.items():
            numbers = [_usage_numbers(c.output.usage if c.output is not None else None) for c in made]
            log.row(
                "usage",
                run_id=run_id,
                agent_id=agent,
                model=model,
                calls=len(made),
                input_tokens=sum(n[0] for n in numbers),
                output_tokens=sum(n[1] for n in numbers),
                cost_usd=_sum_or_none([n[3] for n in numbers]),
                seconds=_sum_or_none([c.working_time for c in made]),
            )
    else:
        _usage_without_events(log, header, sample, run_id, agents)
    for agent, role in agents.items():
        log.row("agents", run_id=run_id, agent_id=agent, role=role)
    for turn, message in enumerate(sample.messages, start=1):
        speaker = message.role
        if speaker == "assistant":
            speaker = by_message.get(message.id or "") or message.model or speaker
        text = _text(message, sample.attachments)
        log.row("messages", run_id=run_id, round=ROUND, agent_id=speaker, turn=turn, text=text, source=message.source)


def _usage_without_events(log: _Log, header: Any, sample: Any, run_id: str, agents: dict[str, str | None]) -> None:
    """``usage`` from the sample's totals when its events were not logged: no calls, no time.

    A role's model is the one the header binds it to; what a model used beyond its roles' usage
    is the model's own (calls made without a role).
    """
    bound = header.eval.model_roles or {}
    by_model: dict[str, list[int]] = {}
    for role, usage in sample.role_usage.items():
        config = bound.get(role)
        model = getattr(config, "model", None) or header.eval.model
        p, o, _, c = _usage_numbers(usage)
        agents.setdefault(role, role)
        log.row("usage", run_id=run_id, agent_id=role, model=model, input_tokens=p, output_tokens=o, cost_usd=c)
        spent = by_model.setdefault(model, [0, 0])
        spent[0], spent[1] = spent[0] + p, spent[1] + o
    for model, usage in sample.model_usage.items():
        p, o, _, c = _usage_numbers(usage)
        spent = by_model.get(model, [0, 0])
        if model in by_model and p <= spent[0] and o <= spent[1]:
            continue
        agents.setdefault(model, None)
        rest_cost = c if model not in by_model else None
        log.row(
            "usage",
            run_id=run_id,
            agent_id=model,
            model=model,
            input_tokens=p - spent[0],
            output_tokens=o - spent[1],
            cost_usd=rest_cost,
        )


def _read_log(file: Path, reader: Any, system: str | None, skip_invalid: bool, seen: dict[str, Any]) -> _Log:
    """The rows of one log; a sample that cannot be ingested is an error, or skipped with ``skip_invalid``."""
    log = _Log(file)
    # inspect_ai raises many kinds of error on a log it cannot read (a broken zip, JSON, a
    # validation error, a newer format): each is this file's problem, said in one line.
    try:
        header = reader.read_eval_log(str(file), header_only=True)
    except Exception as exc:  # any failure of the third-party reader is this file's
        raise _unreadable(exc) from None
    _check_header(header)
    name = system if system is not None else system_of(header)
    log.results = _results(header)
    eval_id = header.eval.eval_id or header.eval.run_id
    mine: dict[Any, Path] = {}
    try:
        for sample in _samples(reader, file):
            run_id = f"{eval_id}/{sample.id}/{sample.epoch}"
            try:
                _check_sample(sample)
                _check_across(sample, run_id, name, header.eval.task, file, seen, mine)
            except _InvalidError as invalid:
                if not skip_invalid:
                    raise
                log.skipped.append(invalid.reason())
                continue
            _read_sample(log, header, sample, run_id, name)
            log.run_ids.append(run_id)
    except _InvalidError:
        raise
    except Exception as exc:  # as above: the reader failing part way
        raise _unreadable(exc) from None
    seen.update(mine)
    return log


def _samples(reader: Any, file: Path) -> list[Any]:
    """The log's samples, read whole: ``read_eval_log_samples`` streams them, but runs an event loop
    per sample (about 50 ms each in inspect_ai 0.3.285), a hundred times the cost of reading them.

    One log is held at a time. The store (the solver's scratch space, never mapped) is not decoded.
    """
    return reader.read_eval_log(str(file), exclude_fields={"store"}).samples or []


def _unreadable(exc: Exception) -> _InvalidError:
    # inspect_ai wraps the reason ("Unable to read version 3 of log format.") in an error that only
    # names the file: the innermost error of the chain says why.
    chain = [exc]
    while (inner := chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(inner)
    root = chain[-1] if isinstance(chain[-1], Exception) else exc
    said = " ".join(str(root).split())[:300] or type(root).__name__
    exc = root
    if "version" in said.lower():
        fix = f"upgrade inspect_ai (pip install -U inspect_ai) to read it, {_skip_fix('this log')}"
        return _InvalidError(f"inspect_ai cannot read this log's format version ({said})", fix)
    fix = f"pass a complete .eval or .json log written by inspect_ai, {_skip_fix('this log')}"
    return _InvalidError(f"inspect_ai cannot read it ({type(exc).__name__}: {said})", fix)


def _check_across(
    sample: Any, run_id: str, system: str, task: str, file: Path, seen: dict[Any, Path], mine: dict[Any, Path]
) -> None:
    """The rules that span logs: a run_id once; a system's sample and epoch of a task once.

    ``seen`` holds the keys of the logs accepted before, ``mine`` those of this log so far (kept
    apart, so that a log refused part way leaves nothing behind).
    """
    earlier = seen.get(run_id) or mine.get(run_id)
    if earlier is not None:
        fix = "pass each log once (a copy of a log has the same eval id)"
        raise _InvalidError(f"its run_id {run_id!r} is also one of {earlier}", fix, sample=_where(sample))
    repeat = (system, task, str(sample.id), sample.epoch)
    earlier = seen.get(repeat) or mine.get(repeat)
    if earlier is not None:
        fix = (
            f"name the systems apart ({option('system', 'NAME', cli='--system NAME')}, one ingest each), "
            "or pass only one of the two logs"
        )
        msg = f"system {system!r} ran this sample and epoch of task {task!r} in {earlier} too"
        raise _InvalidError(msg, fix, sample=_where(sample))
    mine[run_id] = mine[repeat] = file


# -- the ingest ---------------------------------------------------------------------------------


def _expand(given: list[Path]) -> list[Path]:
    """The files the arguments stand for: a file itself, a folder its ``.eval`` and ``.json`` files, sorted."""
    files: list[Path] = []
    fix = "pass inspect_ai .eval or .json logs, or a folder holding them"
    for path in given:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file())
            if not found:
                msg = f"{path}: no .eval or .json logs directly in this folder; {fix}"
                raise IngestError(msg)
            files.extend(found)
            continue
        file = input_file(path, "an inspect_ai log", fix, error=IngestError)
        if file.suffix not in SUFFIXES:
            msg = f"{file} {describe_path(file)} without the .eval or .json suffix of an inspect_ai log; {fix}"
            raise IngestError(msg)
        files.append(file)
    return files


def _frames(logs: list[_Log]) -> dict[str, pl.DataFrame]:
    """One DataFrame per table; tables without rows are left out (``runs`` never is)."""
    frames: dict[str, pl.DataFrame] = {}
    for name in _TABLES:
        spec = TABLES[name]
        columns = {c: [v for log in logs for v in log.columns[name][c]] for c in spec.names}
        frames[name] = pl.DataFrame(columns, schema=spec.polars_schema)
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


def ingest_inspect(
    paths: Sequence[str | Path] | str | Path,
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
        single path is accepted too. The files are only read.
    out
        The Dataset folder to write, atomically; it may not be, hold or lie inside one of
        ``paths``. None: nothing is written, the Dataset is returned in memory.
    system
        ``runs.system`` of every run read. None: each log's model, solver (with its
        arguments) and task arguments, e.g. ``"openai/gpt-4o debate (agents=3)"``.
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
        inspect_ai is not installed; a path does not exist, is not a log, or a folder holds
        none; or (without ``skip_invalid``) a log cannot be ingested: its evaluation ended
        with an error or did not finish, inspect_ai cannot read it (truncated, another format
        version), a sample failed or has no score, a log is given twice, or two logs hold the
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
    count = check_shards(shards, where="ingest")
    given = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not given:
        msg = "no input given; pass inspect_ai .eval or .json logs, or folders holding them"
        raise IngestError(msg)
    if system is not None and (not isinstance(system, str) or not system.strip()):
        msg = f"ingest: system={system!r} is not a name; pass a non-empty string, or None for the logs' own"
        raise InvalidParameterError(msg)
    target = check_target(out, overwrite=overwrite, inputs=given) if out is not None else None
    reader = _reader()
    files: list[Path] = []
    resolved: set[Path] = set()
    for file in _expand(given):
        if file.resolve() not in resolved:
            resolved.add(file.resolve())
            files.append(file)
    accepted: list[_Log] = []
    skipped: list[tuple[Path, str]] = []
    seen: dict[Any, Path] = {}
    for file in files:
        try:
            log = _read_log(file, reader, system, skip_invalid, seen)
        except _InvalidError as invalid:
            if not skip_invalid:
                raise invalid.error(file) from None
            skipped.append((file, invalid.reason()))
            continue
        skipped.extend((file, reason) for reason in log.skipped)
        if log.run_ids:
            accepted.append(log)
    if not accepted:
        first = f": {skipped[0][0]}: {skipped[0][1]}" if skipped else ""
        msg = (
            f"no inspect_ai sample could be ingested ({len(skipped)} log(s) or sample(s) skipped{first}); "
            "nothing was written"
        )
        raise IngestError(msg)
    dataset = dataset_of(_frames(accepted), target, overwrite=overwrite, inputs=given, shards=count)
    return LogIngestResult(
        out=target,
        dataset=dataset,
        runs=sum(len(log.run_ids) for log in accepted),
        files=tuple(log.file for log in accepted),
        skipped=tuple(skipped),
        warnings=tuple(w for log in accepted for w in log.warnings),
    )
