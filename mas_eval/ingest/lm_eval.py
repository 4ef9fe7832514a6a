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
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.constraints import Interval, check_parameter, validate_params
from mas_eval.data.schema import TABLES
from mas_eval.errors import IngestError, option
from mas_eval.ingest.jsonl import BYTES_CEILING, MAX_LINE_BYTES
from mas_eval.ingest.logs import LogIngestResult
from mas_eval.ingest.recipe import (
    LOG_PARAMETERS,
    Ingest,
    InvalidInputError,
    LogFormat,
    Paths,
    bounded_lines,
    ingest_logs,
    json_type,
    read_json,
    too_long_integer,
)
from mas_eval.ingest.values import identifier, integer, number, text

__all__ = ["DEFAULT_AGGREGATIONS", "FORMAT", "PATTERN", "SAMPLES_PREFIX", "ingest_lm_eval"]

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
_NOT_METRICS = frozenset({"alias", "name", "sample_len", "samples", "sample_count"})
#: How lm-eval aggregates a metric over a task's documents when the task's configuration names no
#: aggregation: the ``aggregation`` each built-in metric is registered with (``lm_eval/api/metrics.py``,
#: ``@register_metric``). Only ``mean`` (and ``nanmean``) is a mean of the per-document values.
DEFAULT_AGGREGATIONS = {
    "acc": "mean",
    "acc_norm": "mean",
    "acc_mutual_info": "mean",
    "acc_all": "mean",
    "exact_match": "mean",
    "perplexity": "perplexity",
    "word_perplexity": "weighted_perplexity",
    "byte_perplexity": "weighted_perplexity",
    "bits_per_byte": "bits_per_byte",
    "mcc": "matthews_corrcoef",
    "f1": "f1",
    "bleu": "bleu",
    "chrf": "chrf",
    "ter": "ter",
    "brier_score": "brier_score",
}
#: A task's own aggregation function, as lm-eval writes it in ``configs``: its source (``def name(...``)
#: or its repr (``<function name at 0x...>``).
_FUNCTION = re.compile(r"^\s*(?:def\s+|<function\s+)([A-Za-z_][\w.]*)")


def _fix_line(what: str = "fix the line (lm-eval writes one JSON object a line)") -> str:
    """Return the fix of a bad samples line (the recipe adds how to set it aside)."""
    return what


# -- file names -------------------------------------------------------------------------------


def _timestamp(name: str, suffix: str) -> str:
    """Return the timestamp lm-eval puts after the last ``_`` of a file name (``get_file_datetime``)."""
    return name.removesuffix(suffix)[name.rfind("_") + 1 :]


def _samples_files(results: Path, timestamp: str) -> dict[str, Path]:
    """Return the samples files beside ``results`` of its run, by task: ``samples_<task>_<timestamp>.jsonl``."""
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


def _pretrained(model_args: Any) -> Any:
    """Return the model a config's ``model_args`` (a dict or a string) names: ``pretrained=``, ``model=``, ``path=``."""
    if isinstance(model_args, str):
        pairs = dict(part.split("=", 1) for part in model_args.split(",") if "=" in part)
    elif isinstance(model_args, dict):
        pairs = model_args
    else:
        return None
    return next((pairs[key] for key in ("pretrained", "model", "path") if pairs.get(key)), None)


def _system_of(doc: dict[str, Any]) -> str | None:
    """Return the model of a results file: ``model_name``, else the model its config's ``model_args`` name."""
    if isinstance(doc.get("model_name"), str) and doc["model_name"].strip():
        return identifier(doc["model_name"], "model_name")
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    named = _pretrained(config.get("model_args"))
    if named:
        return identifier(named if isinstance(named, str | int) else str(named), "config.model_args")
    if isinstance(config.get("model"), str) and config["model"]:
        return identifier(f"{config['model']}({config.get('model_args') or ''})", "config.model")
    return None


def _recorded(value: Any, field: str) -> tuple[float | None, str | None] | None:
    """Return a scalar the results file recorded as ``reported``'s ``(value, text)``, or None for an array or object.

    A number (a boolean as 1.0 / 0.0) or text, checked (:mod:`mas_eval.ingest.values`).
    """
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isnan(value):
            return None, "NaN"
        return number(value, field), None
    if isinstance(value, str):
        return None, text(value, field)
    return None


def _aggregation(entry: Any) -> str | None:
    """Return the name of the aggregation a ``metric_list`` entry of a task's config gives its metric.

    A registered one's (``"mean"``), or a task's own function's (its name).
    """
    given = entry.get("aggregation") if isinstance(entry, dict) else None
    if not isinstance(given, str) or not given.strip():
        return None
    found = _FUNCTION.match(given)
    return found.group(1) if found else given.strip().splitlines()[0][:80]


#: A row of ``reported`` a results file gives each run of a task: ``(source, name, value, text)``.
_Record = tuple[str, str, float | None, str | None]


@dataclass
class _Run:
    """One results file: its tasks, its model, the samples read from beside it."""

    file: Path
    timestamp: str
    system: str
    seed: int | None
    tasks: dict[str, dict[str, Any]]
    groups: frozenset[str]
    #: What the file recorded of each task, checked: ``(source, name, value, text)``.
    recorded: dict[str, list[_Record]]
    samples: dict[str, Path] = field(default_factory=dict)

    def count(self, task: str, which: str) -> int | None:
        """Return the task's ``n-samples`` count ``which`` (``"effective"``, ``"original"``), if recorded."""
        found = [value for _, name, value, _ in self.recorded.get(task, []) if name == f"n-samples.{which}"]
        return int(found[0]) if found and found[0] is not None and float(found[0]).is_integer() else None


def _aggregations(doc: dict[str, Any], task: str, entry: dict[str, Any]) -> dict[str, str]:
    """Return ``aggregation.<metric>`` of each metric of ``task``: its config's, else lm-eval's default."""
    config = doc.get("configs", {}).get(task) if isinstance(doc.get("configs"), dict) else None
    metric_list = config.get("metric_list") if isinstance(config, dict) else None
    configured = {
        item["metric"]: _aggregation(item)
        for item in (metric_list if isinstance(metric_list, list) else [])
        if isinstance(item, dict) and isinstance(item.get("metric"), str)
    }
    metrics = {name.split(",", 1)[0].removesuffix("_stderr") for name in entry if "," in name}
    found = {}
    for metric in sorted(metrics | set(configured)):
        aggregation = configured.get(metric) or DEFAULT_AGGREGATIONS.get(metric)
        if aggregation is not None:
            found[f"aggregation.{metric}"] = aggregation
    return found


def _task_records(doc: dict[str, Any], task: str, entry: dict[str, Any]) -> list[_Record]:
    """Return ``(source, name, value, text)`` of what ``doc`` recorded of ``task``.

    Its results (source "results"), and (source "task") its n-shot, version, n-samples, the
    aggregation of each metric and the bootstrap resamples of its standard errors.
    """
    out: list[_Record] = []
    for name, value in entry.items():
        checked = _recorded(value, f"results.{task}.{name}")
        if checked is not None:
            out.append(("results", name, *checked))
    info: dict[str, Any] = {}
    for key, source in (("n-shot", "n-shot"), ("version", "versions")):
        table = doc.get(source)
        if isinstance(table, dict) and task in table:
            info[key] = table[task]
    counts = doc.get("n-samples", {}).get(task) if isinstance(doc.get("n-samples"), dict) else None
    for key in ("original", "effective"):
        if isinstance(counts, dict) and key in counts:
            info[f"n-samples.{key}"] = counts[key]
    info |= _aggregations(doc, task, entry)
    run_config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    for key in ("bootstrap_iters", "limit"):
        if run_config.get(key) is not None:
            info[key] = run_config[key]
    for name, value in info.items():
        checked = _recorded(value, f"{name} of task {task}")
        if checked is not None:
            out.append(("task", name, *checked))
    return out


def _read_results(file: Path, system: str | None) -> _Run:
    fix = "pass the results_<timestamp>.json lm-eval wrote, unedited"
    doc = read_json(file, what="an lm-eval results file", fix=fix, max_bytes=MAX_RESULTS_BYTES)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        found = json_type(doc) if not isinstance(doc, dict) else "no $.results object"
        msg = f"not an lm-eval results file ({found})"
        raise InvalidInputError(msg, fix=fix)
    tasks = {
        text(name, "a task of $.results"): entry for name, entry in doc["results"].items() if isinstance(entry, dict)
    }
    named = system if system is not None else _system_of(doc)
    if not named:
        problem = "missing, and $.config names no model"
        fix = f"name it: pass {option('paths', {str(file): 'NAME'}, cli=f'{file}=NAME')} or {option('system', 'NAME')}"
        raise InvalidInputError(problem, where="$.model_name", fix=fix)
    subtasks = doc.get("group_subtasks") if isinstance(doc.get("group_subtasks"), dict) else {}
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    seed = config.get("random_seed")
    return _Run(
        file=file,
        timestamp=_timestamp(file.name, ".json"),
        system=named,
        seed=integer(seed, "config.random_seed", strings=True) if not isinstance(seed, bool) else None,
        tasks=tasks,
        groups=frozenset(name for name, members in subtasks.items() if members),
        recorded={task: _task_records(doc, task, entry) for task, entry in tasks.items()},
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
    fix = _fix_line("restore the line as lm-eval wrote it")
    if "doc_id" not in sample or sample["doc_id"] is None:
        problem = "no doc_id (the document's position in the task), which lm-eval writes on every line"
        raise InvalidInputError(problem, fix=fix)
    doc_id = sample["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, int | str):
        msg = f"doc_id is {json_type(doc_id)}, expected an integer"
        raise InvalidInputError(msg, fix=fix)
    try:
        return identifier(doc_id, "doc_id")
    except InvalidInputError as invalid:
        invalid.fix = fix
        raise


def _metric_value(value: Any, field: str) -> float | None:
    """Return a sample's value of a metric as a number, or None when it is not one (a pair to aggregate, a NaN).

    lm-eval writes a value JSON cannot hold as its ``str()``: a NumPy float as ``"0.5"``, read as the
    number it is.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, int | float):
        return number(value, field)
    if isinstance(value, str):
        try:
            parsed = float(value)
        except ValueError:
            return None
        return None if math.isnan(parsed) else number(parsed, field)
    return None


def _json_text(value: Any, field: str) -> str:
    """Return ``value`` as JSON text for ``reported``, checked to be valid Unicode."""
    return text(json.dumps(value, ensure_ascii=False), field) or ""


def _decoded(raw: bytes) -> dict[str, Any]:
    """Decode one samples line; refuse one that is not a JSON object, saying why."""
    try:
        sample = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        if not raw.endswith(b"\n"):
            problem = "truncated: the last line stops before its JSON does"
        else:
            problem = f"not valid JSON ({exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason})"
        raise InvalidInputError(problem, fix=_fix_line()) from None
    except RecursionError:
        msg = "nested too deeply to decode"
        raise InvalidInputError(msg, fix=_fix_line()) from None
    except ValueError as exc:
        msg = f"cannot be decoded: {too_long_integer(exc)}"
        raise InvalidInputError(msg, fix=_fix_line()) from None
    if not isinstance(sample, dict):
        msg = f"{json_type(sample)}, not a sample object (a JSON object)"
        raise InvalidInputError(msg, fix=_fix_line())
    return sample


def _line_values(
    sample: dict[str, Any], names: list[str], filter_: str
) -> tuple[list[tuple[str, float]], list[tuple[str, float | None, str | None]], list[str]]:
    """Return a line's scores, its reports (a metric not a number, the filtered responses), the metrics not numbers."""
    scores: list[tuple[str, float]] = []
    reports: list[tuple[str, float | None, str | None]] = []
    not_numeric = []
    for metric in names:
        value = _metric_value(sample[metric], metric)
        name = f"{metric},{filter_}"
        if value is None:
            # A corpus-level metric (f1, bleu) logs what it aggregates, not a score of the document.
            not_numeric.append(metric)
            reports.append((name, None, _json_text(sample[metric], metric)))
        else:
            scores.append((name, value))
    filtered = sample.get("filtered_resps")
    if filtered is not None:
        reports.append((f"filtered_resps,{filter_}", None, _json_text(filtered, "filtered_resps")))
    return scores, reports, not_numeric


def _document_reports(sample: dict[str, Any]) -> list[tuple[str, float | None, str | None]]:
    """Return what a document's first line reports of it: its texts, and the repeats of its requests."""
    reports: list[tuple[str, float | None, str | None]] = [
        (key, None, text(sample[key], key)) for key in SAMPLE_TEXTS if isinstance(sample.get(key), str)
    ]
    resps = sample.get("resps")
    if isinstance(resps, list) and resps and isinstance(resps[0], list):
        # Each request's responses: `repeats` of them (lm-eval clones a request `repeats` times).
        reports.append(("repeats", float(len(resps[0])), None))
    return reports


class _Samples:
    """One samples file read a line at a time; only the mapped fields of a line are kept."""

    def __init__(
        self, file: Path, task: str, metric_names: frozenset[str], group: int, columns: _Columns, max_bytes: int
    ) -> None:
        self.file, self.task, self.group, self.columns = file, task, group, columns
        self.metric_names, self.max_bytes = metric_names, max_bytes
        self.seen: dict[tuple[str, str], int] = {}
        self.docs: set[str] = set()
        self.not_numeric: dict[str, int] = {}

    def read(self, ingest: Ingest) -> None:
        """Read every line; a line that cannot be read is set aside (or refused) by ``ingest``."""
        for number_, raw, size in bounded_lines(self.file, self.max_bytes):
            with ingest.attempt(f"line {number_}", file=self.file):
                if raw is None:
                    limit = option("max_line_bytes", self.max_bytes, cli=f"--max-line-mb {self.max_bytes / 2**20:g}")
                    problem = f"{size:,} bytes long, longer than the longest line read ({limit})"
                    fix = "raise the limit if lm-eval wrote so long a line, or restore the file as lm-eval wrote it"
                    raise InvalidInputError(problem, fix=fix)
                self._line(raw, number_)

    def _line(self, raw: bytes, line: int) -> None:
        """Read one line into its document's outcomes and reports, every value checked before any row is kept."""
        sample = _decoded(raw)
        doc_id = _doc_id(sample)
        filter_ = text(sample["filter"], "filter") or "none" if isinstance(sample.get("filter"), str) else "none"
        if (doc_id, filter_) in self.seen:
            first = self.seen[doc_id, filter_]
            problem = f"doc_id {doc_id} under filter {filter_!r} is also on line {first}"
            raise InvalidInputError(problem, fix=_fix_line("keep one line per document and filter"))
        # Every value checked before any row is kept, so that a line set aside leaves none.
        scores, reports, not_numeric = _line_values(sample, self._metric_names(sample), filter_)
        first_line = doc_id not in self.docs
        if first_line:
            reports.extend(_document_reports(sample))
        self.seen[doc_id, filter_] = line
        group, columns = self.group, self.columns
        for metric in not_numeric:
            self.not_numeric[metric] = self.not_numeric.get(metric, 0) + 1
        for name, value in scores:
            for column, item in zip(columns.outcomes, (group, doc_id, name, value), strict=True):
                columns.outcomes[column].append(item)
        for name, value, said in reports:
            columns.report(group, doc_id, name, value, said)
        if first_line:
            self.docs.add(doc_id)
            columns.runs["group"].append(group)
            columns.runs["doc_id"].append(doc_id)

    def _metric_names(self, sample: dict[str, Any]) -> list[str]:
        """Return the metrics a line scores; refuse a line that lists one it has no value for."""
        metrics = sample.get("metrics")
        if isinstance(metrics, list) and all(isinstance(m, str) for m in metrics):
            names = list(dict.fromkeys(text(m, "metrics") or "" for m in metrics))
        else:  # lm-eval before 0.4.3 did not list them: the metrics of the task's results found on the line
            names = sorted(m for m in self.metric_names if m in sample)
        missing = [m for m in names if m not in sample]
        if missing:
            problem = f"lists metric {missing[0]!r} in $.metrics but has no value for it"
            raise InvalidInputError(problem, fix=_fix_line("restore the line as lm-eval wrote it"))
        return names

    def warnings(self) -> list[str]:
        return [
            f"{self.file}: metric {metric!r} has no number per document on {count} line(s) (lm-eval aggregates it "
            "over the task); kept in reported (source 'sample'), not in outcomes"
            for metric, count in self.not_numeric.items()
        ]


# -- the tables -------------------------------------------------------------------------------


def _frame(name: str, frame: pl.DataFrame) -> pl.DataFrame:
    """Return ``frame`` with the schema's columns of table ``name``, in order and of their types (absent ones null)."""
    spec = TABLES[name]
    return frame.select(
        [
            pl.col(c.name).cast(c.dtype) if c.name in frame.columns else pl.lit(None, dtype=c.dtype).alias(c.name)
            for c in spec.columns
        ]
    )


def _task_reports(runs: list[_Run], groups: list[tuple[int, str]]) -> pl.DataFrame:
    """Return what each results file recorded of each task read (source "results" and "task"), one row per value."""
    rows: dict[str, list[Any]] = {k: [] for k in ("group", "source", "name", "value", "text")}
    for group, (run_index, task) in enumerate(groups):
        for source, name, value, said in runs[run_index].recorded.get(task, []):
            for column, item in zip(rows, (group, source, name, value, said), strict=True):
                rows[column].append(item)
    schema = {"group": pl.Int64, "source": pl.String, "name": pl.String, "value": pl.Float64, "text": pl.String}
    return pl.DataFrame(rows, schema=schema)


def _frames(runs: list[_Run], groups: list[tuple[int, str]], columns: _Columns) -> dict[str, pl.DataFrame]:
    """Build the Dataset's tables from what was read, as columns."""
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


def _documents_read(run: _Run, task: str, samples: Path, docs: int, set_aside: int) -> str | None:
    """Return a warning when the samples file of ``task`` holds other than the documents lm-eval scored.

    lm-eval scored its results' ``n-samples``; the warning says what the file shows: a ``--limit``
    run, or a file cut short.
    """
    effective, original = run.count(task, "effective"), run.count(task, "original")
    if effective is None:
        return None
    where = f"n-samples of {task!r} in {run.file.name}"
    limited = (
        f"lm-eval scored {effective:,} of the task's {original:,} documents (a --limit run: {where})"
        if original is not None and effective < original
        else None
    )
    if docs == effective:
        if limited is None:
            return None
        return f"{samples}: {limited}; the runs, and the numbers lm-eval recorded, are of those {effective:,} only"
    if docs < effective:
        why = (
            f"{set_aside:,} line(s) were set aside"
            if set_aside
            else "the file was cut short after lm-eval wrote it (lm-eval writes a line for every document it scores)"
        )
        said = limited or f"lm-eval scored {effective:,} documents ({where})"
        return (
            f"{samples}: holds {docs:,} of the {effective:,} documents lm-eval scored: {why}; {said}, so the "
            "numbers it recorded are over documents this Dataset lacks (reproduce lists them apart)"
        )
    return (
        f"{samples}: holds {docs:,} documents, more than the {effective:,} lm-eval scored ({where}); "
        "its lines may come from two runs"
    )


class _Reader:
    """Results files read one at a time, each with the samples files of its run beside it."""

    def __init__(self, max_line_bytes: int) -> None:
        self.runs: list[_Run] = []
        self.groups: list[tuple[int, str]] = []
        self.columns = _Columns()
        self.max_line_bytes = max_line_bytes

    def read(self, file: Path, system: str | None, ingest: Ingest) -> None:
        if file.name.startswith(SAMPLES_PREFIX):
            fix = "pass the results_<timestamp>.json beside it, or its folder"
            msg = "a samples file, which does not name its model"
            raise InvalidInputError(msg, fix=fix)
        run = _read_results(file, system)
        run.samples = _samples_files(file, run.timestamp)
        if not run.samples:
            fix = "run lm-eval with --log_samples, and keep its samples files beside the results"
            msg = f"no samples_<task>_{run.timestamp}.jsonl beside it"
            raise InvalidInputError(msg, fix=fix)
        self.runs.append(run)
        for task in sorted(set(run.tasks) - set(run.samples) - run.groups):
            ingest.warnings.append(
                f"{file}: task {task!r} has no samples_{task}_{run.timestamp}.jsonl beside it; not read"
            )
        for group in sorted(run.groups & set(run.tasks) - set(run.samples)):
            ingest.warnings.append(
                f"{file}: group {group!r} aggregates its tasks' numbers (lm-eval's aggregate_subtask_metrics); a "
                "group has no samples of its own, so its numbers are not kept: its tasks' are"
            )
        for task, samples in run.samples.items():
            with ingest.attempt(file=samples):
                text(task, "the task in the samples file's name")
                if task not in run.tasks:
                    known = ", ".join(sorted(run.tasks)) or "none"
                    problem = f"task {task!r} is not in the results beside it ({file.name}, whose tasks are: {known})"
                    raise InvalidInputError(problem, fix="keep each samples file beside the results of its own run")
                metrics = frozenset(k.split(",", 1)[0] for k in run.tasks[task] if k not in _NOT_METRICS)
                reader = _Samples(samples, task, metrics, len(self.groups), self.columns, self.max_line_bytes)
                before = len(ingest.skipped)
                reader.read(ingest)
                ingest.read_beside(samples)
                ingest.warnings.extend(reader.warnings())
                count = _documents_read(run, task, samples, len(reader.docs), len(ingest.skipped) - before)
                if count is not None:
                    ingest.warnings.append(count)
                self.groups.append((len(self.runs) - 1, task))

    def frames(self, ingest: Ingest) -> dict[str, pl.DataFrame]:  # noqa: ARG002 -- recipe.Reader's signature
        frames = _frames(self.runs, self.groups, self.columns)
        duplicated = frames["runs"].filter(pl.col("run_id").is_duplicated())
        if duplicated.height:
            raise IngestError(self._twice(duplicated["run_id"][0]))
        return frames

    def _twice(self, run_id: str) -> str:
        """Return the error of a run id read from two results files: both files, and the fix."""
        head, timestamp = run_id.rsplit("@", 1)
        runs = [run for run in self.runs if run.timestamp == timestamp and head.startswith(f"{run.system}/")]
        first, second = (runs + runs)[:2]
        named = option("paths", {str(second.file): "OTHER"}, cli=f"{second.file}=OTHER")
        return (
            f"{first.file} and {second.file}: both hold the runs of model {first.system!r} on the same documents at "
            f"{timestamp} (run_id {run_id!r}); if they are copies of one evaluation, pass one of them; else name the "
            f"second's system apart: {named}"
        )


@validate_params({**LOG_PARAMETERS, "max_line_bytes": [Interval(int, 1, BYTES_CEILING)]})
def ingest_lm_eval(
    paths: Paths,
    out: str | Path | None = None,
    *,
    system: str | None = None,
    overwrite: bool = False,
    skip_invalid: bool = False,
    shards: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> LogIngestResult:
    r"""Read lm-evaluation-harness ``--log_samples`` output into a Dataset, written to ``out`` if given.

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
    max_line_bytes
        The longest samples line read, in bytes (16 MiB): a longer one is refused (or set aside)
        without being held, read past in bounded pieces.

    Returns
    -------
    LogIngestResult
        The Dataset (and its folder), the runs and the files read (results and samples), what
        was skipped, the warnings.

    Raises
    ------
    InvalidParameterError
        ``system`` is not a non-empty string; ``max_line_bytes`` is not from 1 to 2**30.
    IngestError
        A path does not exist, is a samples file, or a folder holds no results file; two results
        files hold the same model's runs at the same time (both named); or (without
        ``skip_invalid``) a results file is not lm-eval's, names no model, holds a value no column
        can hold, or has no samples file beside it, a samples file is of a task its results do not
        hold, or a samples line is not JSON (or truncated), longer than ``max_line_bytes``, has no
        ``doc_id``, holds a value no column can hold (a lone surrogate, an integer of 4,300
        digits or more, a number beyond 1e308), or repeats a document and filter. The message
        names the file, the line and the fix. Also when nothing at all can be ingested.
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

    Each samples file's documents are compared with the results' ``n-samples`` of its task: a
    warning says a ``--limit`` run (lm-eval scored fewer documents than the task has) and a file
    holding fewer documents than lm-eval scored (cut short, or lines set aside), whose recorded
    numbers :func:`~mas_eval.scoring.reproduction.reproduce_aggregates` then lists apart. How each
    metric is aggregated over the task (``configs.<task>.metric_list``, else the aggregation
    lm-eval registers the built-in metric with: :data:`DEFAULT_AGGREGATIONS`) is kept in
    ``reported`` (source "task", ``aggregation.<metric>``), with ``bootstrap_iters`` and ``limit``.

    lm-eval's ``repeats`` (several responses to one request) are reduced by the task's filters
    (take the first, majority vote) before any metric is computed, and the samples file scores
    the filtered response only: a response has no score of its own, so repeats are not epochs;
    their number is in ``reported``.

    Examples
    --------
    A run's results file and the samples file of its one task, two documents:

    >>> import tempfile
    >>> stamp = "2026-01-01T00-00-00.000000"
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     run = Path(folder)
    ...     results = {"model_name": "tiny", "results": {"copa": {"acc,none": 0.5}}}
    ...     _ = (run / f"results_{stamp}.json").write_text(json.dumps(results))
    ...     _ = (run / f"samples_copa_{stamp}.jsonl").write_text(
    ...         '{"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1.0}\n'
    ...         '{"doc_id": 1, "filter": "none", "metrics": ["acc"], "acc": 0.0}\n'
    ...     )
    ...     result = ingest_lm_eval(run)
    >>> result.dataset.collect("runs").select("run_id", "system", "task").rows()[0]
    ('tiny/copa/0@2026-01-01T00-00-00.000000', 'tiny', 'copa')
    >>> result.dataset.collect("outcomes").select("name", "value").rows()
    [('acc,none', 1.0), ('acc,none', 0.0)]
    """
    check_parameter("max_line_bytes", max_line_bytes, [Interval(int, 1, BYTES_CEILING)], where="ingest_lm_eval")
    return ingest_logs(
        FORMAT,
        _Reader(int(max_line_bytes)),
        paths,
        out,
        system=system,
        overwrite=overwrite,
        skip_invalid=skip_invalid,
        shards=shards,
    )
