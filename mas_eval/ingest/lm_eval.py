"""Read lm-evaluation-harness ``--log_samples`` output (``results_*.json`` and ``samples_*.jsonl``) into a Dataset.

EleutherAI's lm-evaluation-harness (``lm_eval``) writes, for each evaluation, one
``results_<timestamp>.json`` (the tasks' aggregated metrics, their standard errors, the
configuration) and, with ``--log_samples``, one ``samples_<task>_<timestamp>.jsonl`` per task
beside it: a line per document and filter, with the document's metrics. :func:`ingest_lm_eval`
makes each document of a task one run of the model on that case, its metrics the run's
``outcomes``, and keeps what the harness itself computed (its per-task metrics and standard
errors, the hashes and filtered responses of each sample) in ``reported``, so that a
reproduction of its numbers can be checked against them. docs/ingest/lm_eval.md maps every
field.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import validate_params
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError
from mas_eval.ingest.logs import LogIngestResult
from mas_eval.ingest.recipe import (
    LOG_PARAMETERS,
    Ingest,
    InvalidInputError,
    LogFormat,
    Paths,
    ingest_logs,
    json_type,
    lines,
    read_json,
)

__all__ = ["FORMAT", "PATTERN", "SAMPLES_PREFIX", "ingest_lm_eval"]

#: The files a folder argument stands for (in it and its sub-folders: lm-eval writes a folder per model).
PATTERN = "results_*.json"
#: How a samples file's name starts: ``samples_<task>_<timestamp>.jsonl``.
SAMPLES_PREFIX = "samples_"
#: lm-eval's results files, for the recipe of every log adapter.
FORMAT = LogFormat(
    name="lm-eval",
    files="lm-eval's results_<timestamp>.json files (written beside the samples)",
    prefix="results_",
    suffixes=(".json",),
    recursive=True,
    in_folder=f"no {PATTERN} file",
    record="lm-eval sample",
    skips="item(s)",
    located="{file}, {where}",
)
#: The largest results file read: they hold configurations and the environment, never samples.
MAX_RESULTS_BYTES = 64 * 2**20
#: Separates a task from its doc_id in ``case_id``: lm-eval's task names never hold it.
CASE_SEPARATOR = ":"
#: A sample's fields kept in ``reported`` (source "sample") as text.
SAMPLE_TEXTS = ("target", "doc_hash", "prompt_hash", "target_hash")
#: Keys of a results file's per-task entry that are not metrics.
_NOT_METRICS = frozenset({"alias", "name", "sample_len", "samples"})


def _fix_line(what: str = "fix the line (lm-eval writes one JSON object a line)") -> str:
    """The fix of a bad samples line (the recipe adds how to set it aside)."""
    return what


# -- file names -------------------------------------------------------------------------------


def _timestamp(name: str, suffix: str) -> str:
    """The timestamp lm-eval puts after the last ``_`` of a file name (``get_file_datetime``)."""
    return name.removesuffix(suffix)[name.rfind("_") + 1 :]


def _samples_files(results: Path, timestamp: str) -> dict[str, Path]:
    """The samples files beside ``results`` of its run, by task: ``samples_<task>_<timestamp>.jsonl``."""
    suffix = f"_{timestamp}.jsonl"
    found = {}
    with os.scandir(results.parent) as listing:
        for entry in sorted(listing, key=lambda entry: entry.name):
            name = entry.name
            fits = (
                name.startswith(SAMPLES_PREFIX) and name.endswith(suffix) and len(name) > len(SAMPLES_PREFIX + suffix)
            )
            if fits and entry.is_file():
                found[name[len(SAMPLES_PREFIX) : -len(suffix)]] = Path(entry.path)
    return found


# -- the results file -------------------------------------------------------------------------


def _pretrained(model_args: Any) -> str | None:
    """The model a config's ``model_args`` names (``pretrained=``, ``model=``, ``path=``), as a dict or a string."""
    if isinstance(model_args, str):
        pairs = dict(part.split("=", 1) for part in model_args.split(",") if "=" in part)
    elif isinstance(model_args, dict):
        pairs = model_args
    else:
        return None
    named = next((pairs[key] for key in ("pretrained", "model", "path") if pairs.get(key)), None)
    return str(named) if named is not None else None


def _system_of(doc: dict[str, Any]) -> str | None:
    """The model of a results file: ``model_name``, else the model its config's ``model_args`` name."""
    if isinstance(doc.get("model_name"), str) and doc["model_name"].strip():
        return doc["model_name"]
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    named = _pretrained(config.get("model_args"))
    if named:
        return named
    if isinstance(config.get("model"), str) and config["model"]:
        return f"{config['model']}({config.get('model_args') or ''})"
    return None


def _number(value: Any) -> float | None:
    """A finite number (a boolean as 1.0 / 0.0), else None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


@dataclass
class _Run:
    """One results file: its tasks, its model, the samples read from beside it."""

    file: Path
    timestamp: str
    system: str
    seed: int | None
    tasks: dict[str, dict[str, Any]]
    groups: frozenset[str]
    task_info: dict[str, dict[str, Any]]
    samples: dict[str, Path] = field(default_factory=dict)


def _read_results(file: Path, system: str | None) -> _Run:
    fix = "pass the results_<timestamp>.json lm-eval wrote, unedited"
    doc = read_json(file, what="an lm-eval results file", fix=fix, max_bytes=MAX_RESULTS_BYTES)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        found = json_type(doc) if not isinstance(doc, dict) else "no $.results object"
        raise InvalidInputError(f"not an lm-eval results file ({found})", fix=fix)
    tasks = {name: entry for name, entry in doc["results"].items() if isinstance(entry, dict)}
    named = system if system is not None else _system_of(doc)
    if not named:
        problem = "missing, and $.config names no model"
        fix = "name it: pass system=NAME, or the file as {path: NAME} (on the command line RESULTS=NAME)"
        raise InvalidInputError(problem, where="$.model_name", fix=fix)
    subtasks = doc.get("group_subtasks") if isinstance(doc.get("group_subtasks"), dict) else {}
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    seed = config.get("random_seed")
    info: dict[str, dict[str, Any]] = {}
    for task in tasks:
        per_task = info.setdefault(task, {})
        for key, source in (("n-shot", "n-shot"), ("version", "versions")):
            table = doc.get(source)
            if isinstance(table, dict) and task in table:
                per_task[key] = table[task]
        counts = doc.get("n-samples", {}).get(task) if isinstance(doc.get("n-samples"), dict) else None
        for key in ("original", "effective"):
            if isinstance(counts, dict) and key in counts:
                per_task[f"n-samples.{key}"] = counts[key]
    return _Run(
        file=file,
        timestamp=_timestamp(file.name, ".json"),
        system=named,
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        tasks=tasks,
        groups=frozenset(name for name, members in subtasks.items() if members),
        task_info=info,
    )


# -- the samples files ------------------------------------------------------------------------


@dataclass
class _Columns:
    """The rows read, as columns: runs (one per task and doc_id of a results file), outcomes, sample-level reports."""

    runs: dict[str, list[Any]] = field(default_factory=lambda: {k: [] for k in ("group", "doc_id")})
    outcomes: dict[str, list[Any]] = field(
        default_factory=lambda: {k: [] for k in ("group", "doc_id", "name", "value")}
    )
    reported: dict[str, list[Any]] = field(
        default_factory=lambda: {k: [] for k in ("group", "doc_id", "source", "name", "value", "text")}
    )

    def report(self, group: int, doc_id: str, name: str, value: float | None, text: str | None) -> None:
        for column, item in zip(self.reported, (group, doc_id, "sample", name, value, text), strict=True):
            self.reported[column].append(item)


def _doc_id(sample: dict[str, Any]) -> str:
    if "doc_id" not in sample or sample["doc_id"] is None:
        raise ValueError("no doc_id (the document's position in the task), which lm-eval writes on every line")
    doc_id = sample["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, int | str):
        raise ValueError(f"doc_id is {json_type(doc_id)}, expected an integer")
    return str(doc_id)


class _Samples:
    """One samples file read a line at a time; only the mapped fields of a line are kept."""

    def __init__(self, file: Path, task: str, metric_names: frozenset[str], group: int, columns: _Columns) -> None:
        self.file, self.task, self.group, self.columns = file, task, group, columns
        self.metric_names = metric_names
        self.seen: dict[tuple[str, str], int] = {}
        self.docs: set[str] = set()
        self.not_numeric: dict[str, int] = {}

    def read(self, ingest: Ingest) -> None:
        """Every line read; a line that cannot be, set aside (or refused) by ``ingest``."""
        for number, raw in lines(self.file):
            with ingest.attempt(f"line {number}", file=self.file):
                self._line(raw, number)

    def _line(self, raw: bytes, number: int) -> None:
        try:
            sample = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if not raw.endswith(b"\n"):
                problem = "truncated: the last line stops before its JSON does"
            else:
                problem = f"not valid JSON ({exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason})"
            raise InvalidInputError(problem, fix=_fix_line()) from None
        except RecursionError:
            raise InvalidInputError("nested too deeply to decode", fix=_fix_line()) from None
        if not isinstance(sample, dict):
            raise InvalidInputError(f"{json_type(sample)}, not a sample object (a JSON object)", fix=_fix_line())
        try:
            doc_id = _doc_id(sample)
        except ValueError as exc:
            raise InvalidInputError(str(exc), fix=_fix_line("restore the line as lm-eval wrote it")) from None
        filter_ = sample.get("filter") if isinstance(sample.get("filter"), str) else "none"
        if (doc_id, filter_) in self.seen:
            first = self.seen[doc_id, filter_]
            problem = f"doc_id {doc_id} under filter {filter_!r} is also on line {first}"
            raise InvalidInputError(problem, fix=_fix_line("keep one line per document and filter"))
        metrics = sample.get("metrics")
        if isinstance(metrics, list) and all(isinstance(m, str) for m in metrics):
            names = list(dict.fromkeys(metrics))
        else:  # lm-eval before 0.4.3 did not list them: the metrics of the task's results found on the line
            names = sorted(m for m in self.metric_names if m in sample)
        missing = [m for m in names if m not in sample]
        if missing:
            problem = f"lists metric {missing[0]!r} in $.metrics but has no value for it"
            raise InvalidInputError(problem, fix=_fix_line("restore the line as lm-eval wrote it"))
        self.seen[doc_id, filter_] = number
        group, columns = self.group, self.columns
        for metric in names:
            value = sample[metric]
            name = f"{metric},{filter_}"
            number_ = _number(value)
            if number_ is None:
                # A corpus-level metric (f1, bleu) logs what it aggregates, not a score of the document.
                self.not_numeric[metric] = self.not_numeric.get(metric, 0) + 1
                columns.report(group, doc_id, name, None, json.dumps(value, ensure_ascii=False))
                continue
            for column, item in zip(columns.outcomes, (group, doc_id, name, number_), strict=True):
                columns.outcomes[column].append(item)
        filtered = sample.get("filtered_resps")
        if filtered is not None:
            columns.report(group, doc_id, f"filtered_resps,{filter_}", None, json.dumps(filtered, ensure_ascii=False))
        if doc_id in self.docs:
            return
        self.docs.add(doc_id)
        columns.runs["group"].append(group)
        columns.runs["doc_id"].append(doc_id)
        for key in SAMPLE_TEXTS:
            if isinstance(sample.get(key), str):
                columns.report(group, doc_id, key, None, sample[key])
        resps = sample.get("resps")
        if isinstance(resps, list) and resps and isinstance(resps[0], list):
            # Each request's responses: `repeats` of them (lm-eval clones a request `repeats` times).
            columns.report(group, doc_id, "repeats", float(len(resps[0])), None)

    def warnings(self) -> list[str]:
        return [
            f"{self.file}: metric {metric!r} has no number per document on {count} line(s) (lm-eval aggregates it "
            "over the task); kept in reported (source 'sample'), not in outcomes"
            for metric, count in self.not_numeric.items()
        ]


# -- the tables -------------------------------------------------------------------------------


def _frame(name: str, frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the schema's columns of table ``name``, in order and of their types (absent ones null)."""
    spec = TABLES[name]
    return frame.select(
        [
            pl.col(c.name).cast(c.dtype) if c.name in frame.columns else pl.lit(None, dtype=c.dtype).alias(c.name)
            for c in spec.columns
        ]
    )


def _task_reports(runs: list[_Run], groups: list[tuple[int, str]]) -> pl.DataFrame:
    """What each results file recorded of each task read (source "results" and "task"), one row per value."""
    rows: dict[str, list[Any]] = {k: [] for k in ("group", "source", "name", "value", "text")}
    for group, (run_index, task) in enumerate(groups):
        run = runs[run_index]
        for source, values in (("results", run.tasks[task]), ("task", run.task_info.get(task, {}))):
            for name, value in values.items():
                if isinstance(value, dict | list):
                    continue
                number = _number(value)
                text = None if number is not None or value is None else str(value)
                for column, item in zip(rows, (group, source, name, number, text), strict=True):
                    rows[column].append(item)
    schema = {"group": pl.Int64, "source": pl.String, "name": pl.String, "value": pl.Float64, "text": pl.String}
    return pl.DataFrame(rows, schema=schema)


def _frames(runs: list[_Run], groups: list[tuple[int, str]], columns: _Columns) -> dict[str, pl.DataFrame]:
    """The Dataset's tables from what was read, built as columns."""
    keys = pl.DataFrame(
        {
            "group": range(len(groups)),
            "system": [runs[i].system for i, _ in groups],
            "task": [task for _, task in groups],
            "timestamp": [runs[i].timestamp for i, _ in groups],
            "file": [str(runs[i].file) for i, _ in groups],
            "seed": [runs[i].seed for i, _ in groups],
        },
        schema={"group": pl.Int64, "system": pl.String, "task": pl.String, "timestamp": pl.String, "file": pl.String,
                "seed": pl.Int64},
    )  # fmt: skip
    docs = pl.DataFrame(columns.runs, schema={"group": pl.Int64, "doc_id": pl.String})
    run_id = pl.concat_str(
        [pl.col("system"), pl.lit("/"), pl.col("task"), pl.lit("/"), pl.col("doc_id"), pl.lit("@"), pl.col("timestamp")]
    )
    runs_frame = docs.join(keys, on="group", how="left").with_columns(
        run_id=run_id,
        case_id=pl.col("task") + CASE_SEPARATOR + pl.col("doc_id"),
        # Runs of one model on one task, one results file each: repeats, numbered by the files' timestamps.
        epoch=pl.concat_str("timestamp", pl.lit("\x00"), "file").rank("dense").over("system", "task").cast(pl.Int64),
    )
    run_ids = runs_frame.select("group", "doc_id", "run_id")
    outcomes = (
        pl.DataFrame(columns.outcomes, schema={"group": pl.Int64, "doc_id": pl.String, "name": pl.String,
                                               "value": pl.Float64})
        .join(run_ids, on=["group", "doc_id"], how="left")
        # A metric is pass/fail when every value it takes in the files read is 0 or 1 (acc, exact_match).
        .with_columns(
            passed=pl.when(pl.col("value").is_in([0.0, 1.0]).all().over("name")).then(pl.col("value") == 1.0)
        )
    )  # fmt: skip
    sample_reports = pl.DataFrame(
        columns.reported,
        schema={"group": pl.Int64, "doc_id": pl.String, "source": pl.String, "name": pl.String, "value": pl.Float64,
                "text": pl.String},
    ).join(run_ids, on=["group", "doc_id"], how="left")  # fmt: skip
    task_reports = _task_reports(runs, groups).join(run_ids, on="group", how="inner")
    reported = pl.concat([sample_reports.drop("doc_id"), task_reports.select(sample_reports.drop("doc_id").columns)])
    return {
        "runs": _frame("runs", runs_frame),
        "outcomes": _frame("outcomes", outcomes),
        "reported": _frame("reported", reported.with_columns(item=pl.lit(0, dtype=pl.Int64))),
    }


# -- the ingest -------------------------------------------------------------------------------


class _Reader:
    """Results files read one at a time, each with the samples files of its run beside it."""

    def __init__(self) -> None:
        self.runs: list[_Run] = []
        self.groups: list[tuple[int, str]] = []
        self.columns = _Columns()

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        if file.name.startswith(SAMPLES_PREFIX):
            fix = "pass the results_<timestamp>.json beside it, or its folder"
            raise InvalidInputError("a samples file, which does not name its model", fix=fix)
        run = _read_results(file, system)
        run.samples = _samples_files(file, run.timestamp)
        if not run.samples:
            fix = "run lm-eval with --log_samples, and keep its samples files beside the results"
            raise InvalidInputError(f"no samples_<task>_{run.timestamp}.jsonl beside it", fix=fix)
        self.runs.append(run)
        for task in sorted(set(run.tasks) - set(run.samples) - run.groups):
            ingest.warnings.append(
                f"{file}: task {task!r} has no samples_{task}_{run.timestamp}.jsonl beside it; not read"
            )
        for task, samples in run.samples.items():
            with ingest.attempt(file=samples):
                if task not in run.tasks:
                    known = ", ".join(sorted(run.tasks)) or "none"
                    problem = f"task {task!r} is not in the results beside it ({file.name}, whose tasks are: {known})"
                    raise InvalidInputError(problem, fix="keep each samples file beside the results of its own run")
                metrics = frozenset(k.split(",", 1)[0] for k in run.tasks[task] if k not in _NOT_METRICS)
                reader = _Samples(samples, task, metrics, len(self.groups), self.columns)
                reader.read(ingest)
                ingest.read_beside(samples)
                ingest.warnings.extend(reader.warnings())
                self.groups.append((len(self.runs) - 1, task))

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:
        frames = _frames(self.runs, self.groups, self.columns)
        duplicated = frames["runs"].filter(pl.col("run_id").is_duplicated())
        if duplicated.height:
            msg = (
                f"run_id {duplicated['run_id'][0]!r} comes from two results files of the same model and timestamp; "
                "pass each run's results once"
            )
            raise IngestError(msg)
        return frames


@validate_params(LOG_PARAMETERS)
def ingest_lm_eval(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
) -> LogIngestResult:
    """Read lm-evaluation-harness ``--log_samples`` output into a Dataset, written to ``out`` if given.

    Parameters
    ----------
    paths
        ``results_<timestamp>.json`` files written by lm-eval, or folders: a folder stands for
        every ``results_*.json`` file in it and its sub-folders (lm-eval's ``--output_path``
        holds one folder per model), in name order. Each results file is read with the
        ``samples_<task>_<timestamp>.jsonl`` files beside it that carry its timestamp, as
        lm-eval names them. A single path is accepted too, and ``{path: system}`` names the
        system of each path's runs (None: ``system``). The files are only read.
    out
        The Dataset folder to write (``<out>/<table>.parquet``), atomically; it may not be,
        hold or lie inside one of ``paths``. None: nothing is written, the Dataset is returned
        in memory.
    system
        ``runs.system`` of the runs of a path not named in ``paths``; None: the model each
        results file names (``model_name``,
        else the ``pretrained=`` / ``model=`` of its ``config.model_args``).
    overwrite
        Replace an existing ``out``.
    skip_invalid
        Set aside what cannot be ingested (a samples line, a samples file, a results file;
        listed with the reasons in ``skipped``) and ingest the rest, instead of failing at the
        first.
    shards
        ``None`` or 1: one file per table. ``N`` (2 to 10,000): the sharded layout of
        :meth:`Dataset.write <mas_eval.storage.dataset.Dataset.write>`.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and the files read (results and samples), what
        was skipped, the warnings.

    Raises
    ------
    InvalidParameterError
        ``system`` is not a non-empty string.
    IngestError
        A path does not exist, is a samples file, or a folder holds no results file; or
        (without ``skip_invalid``) a results file is not lm-eval's or has no samples file
        beside it, a samples file is of a task its results do not hold, or a samples line is
        not JSON (or truncated), has no ``doc_id``, or repeats a document and filter. The
        message names the file, the line and the fix. Also when nothing at all can be ingested.
    OutputError, OutputExistsError
        ``out`` is, holds or lies inside an input, exists without ``overwrite``, or cannot be
        written; checked before any file is read. Nothing is written.

    Notes
    -----
    A document of a task, scored by one results file's model, is one run: ``run_id`` =
    ``<system>/<task>/<doc_id>@<timestamp>``, ``case_id`` = ``<task>:<doc_id>`` (so two
    models' runs on a document pair up), ``task`` = the task, ``seed`` = the config's
    ``random_seed``. Runs of one model on one task from several results files are repeats:
    ``epoch`` numbers them by the files' timestamps (1 = first).

    * ``outcomes``: every metric a sample lists (``metrics``), named as lm-eval names it in
      the results, ``<metric>,<filter>`` (``acc,none``, ``exact_match,strict-match``), one
      per filter line of the document. A metric is pass/fail (``passed``) when every value it
      takes in the files read is 0 or 1. A metric logged as something other than a number
      (the pairs f1 or bleu aggregate over the task) is kept in ``reported``, with a warning.
    * ``reported`` (``item`` 0): source "results", each scalar of the task's entry in
      ``$.results`` (``acc,none``, ``acc_stderr,none``, ``alias`` ...); source "task",
      ``n-shot``, ``version``, ``n-samples.original``, ``n-samples.effective``; source
      "sample", the sample's ``target``, ``doc_hash``, ``prompt_hash``, ``target_hash``,
      ``repeats`` (responses per request) and ``filtered_resps,<filter>`` (JSON).

    lm-eval's ``repeats`` (several responses to one request) are reduced by the task's filters
    (take the first, majority vote) before any metric is computed, and the samples file scores
    the filtered response only: a response has no score of its own, so repeats are not epochs;
    their number is in ``reported``.
    """
    return ingest_logs(
        FORMAT, _Reader(), paths, out, system=system, overwrite=overwrite, skip_invalid=skip_invalid, shards=shards
    )
