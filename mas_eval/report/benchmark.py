"""A benchmark report of one model across tasks (MedAISure's ``BenchmarkReport``), in MedAISure's schema.

:class:`BenchmarkReport` holds ``schema_version, model_id, timestamp, overall_scores,
task_scores, detailed_results, metadata``, as MedAISure's ``bench/models/benchmark_report.py``
writes them, so that each reads the other's JSON. It comes

* from MedAISure's own report file (:func:`read_medaisure_report`, ``mas-eval
  benchmark-report``), its placeholder results kept and flagged (:attr:`DetailedResult.placeholder`):
  MedAISure stands a 0.0 in for every metric of a task whose evaluation failed;
* or from a per-item score table (:meth:`BenchmarkReport.from_items`: per-task means, the
  overall mean across tasks).

:meth:`BenchmarkReport.add_combined_score` adds the weighted combined score
(:func:`~mas_eval.report.combined_score`). The report is written as JSON (it reads back
equal), Markdown or one self-contained HTML page (nothing fetched, every string escaped), the
combined score and its weights at the top of both, or as CSV in MedAISure's layout
(:meth:`BenchmarkReport.csv_tables`: a ``.csv`` file holds the task scores, as MedAISure's
single-file CSV does; :meth:`BenchmarkReport.write_csv_tables` writes every table into a folder),
every text cell escaped so that a spreadsheet shows it rather than runs it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mas_eval._version import __version__
from mas_eval.constraints import (
    FRAME,
    MAPPING,
    NONE,
    PATH,
    PATH_LIST,
    TEXT,
    TEXTS,
    Boolean,
    Instance,
    Predicate,
    validate_params,
)
from mas_eval.errors import DataError, InvalidParameterError, SchemaError, UnreadableFileError
from mas_eval.escaping import spreadsheet_safe
from mas_eval.report._benchmark_view import DETAIL_ITEMS as DETAIL_ITEMS
from mas_eval.report._benchmark_view import SECTIONS, CombinedView, benchmark_view, render_markdown
from mas_eval.report.combined import DEFAULT_CATEGORIES, CombinedScore, combined_score, overall_means, task_means
from mas_eval.storage.inputs import input_file
from mas_eval.storage.manifests import read_json
from mas_eval.storage.outputs import check_suffix

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "BENCHMARK_FORMATS",
    "CSV_TABLES",
    "MAX_REPORT_BYTES",
    "SECTIONS",
    "BenchmarkReport",
    "DetailedResult",
    "check_benchmark_path",
    "read_medaisure_report",
]

#: The formats a benchmark report is written in, by suffix (``.csv``: the task scores, MedAISure's single CSV file).
BENCHMARK_FORMATS = (".json", ".md", ".html", ".csv")
#: MedAISure's CSV tables (its CSV report generator's files), and ours of the combined score's sources.
CSV_TABLES = (
    "overall_scores.csv",
    "task_scores.csv",
    "detailed_metrics.csv",
    "detailed_inputs.csv",
    "detailed_outputs.csv",
    "combined_sources.csv",
)
#: The schema version of MedAISure's reports this module reads and writes.
SCHEMA_VERSION = 1
#: The largest report file read (bytes). Parsed JSON takes several times its text in memory (docs/performance.md),
#: and MedAISure writes a model's tasks and items in far less: a larger file is refused before it is read.
MAX_REPORT_BYTES = 64 * 2**20
#: The name of a combined score.
_METRIC_NAME = Predicate(lambda value: isinstance(value, str) and bool(value.strip()), "a non-empty name")
#: The columns of a per-item table that :meth:`BenchmarkReport.from_items` keeps as inputs and outputs.
_ITEM_KEYS = ("run_id", "item_id")
_OUTPUT_COLUMNS = ("prediction", "rationale")
_INPUT_COLUMNS = ("reference", "reference_rationale", "reference_diagnosis")


def check_benchmark_path(path: str | Path) -> str:
    """Return the format ``path``'s suffix names (one of :data:`BENCHMARK_FORMATS`), or an error saying which exist.

    >>> check_benchmark_path("out/report.MD")
    '.md'
    """
    return check_suffix(path, BENCHMARK_FORMATS, "a benchmark report")


# -- checks shared by the constructor and the reader ------------------------------------------


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{where} is {value!r}, not a number; scores are numbers"
        raise SchemaError(msg)
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        msg = f"{where} is {value!r}; scores must be finite (MedAISure refuses NaN and infinities too)"
        raise DataError(msg)
    return number


def _mapping(value: object, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"{where} is {type(value).__name__}, not an object of {what}"
        raise SchemaError(msg)
    return value


def _scores(value: object, where: str) -> dict[str, float]:
    scores = _mapping(value, where, "metric -> score")
    return {str(metric): _number(v, f"{where}[{metric!r}]") for metric, v in scores.items()}


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        msg = f"{where} is {value!r}; it must be a non-empty string"
        raise SchemaError(msg)
    return value


def _timestamp(value: object, where: str) -> datetime | None:
    """Return a timestamp in UTC (a naive one is taken as UTC, as MedAISure does); None stays None."""
    if value is None or isinstance(value, datetime):
        stamp = value
    elif isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            msg = f"{where} is {value!r}, not an ISO 8601 time; write e.g. '2025-09-06T04:28:54+00:00'"
            raise SchemaError(msg) from None
    else:
        msg = f"{where} is {value!r}, not an ISO 8601 time"
        raise SchemaError(msg)
    if stamp is None:
        return None
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)


def _json_value(value: Any, where: str) -> Any:
    """``value`` once it is known to be JSON (finite numbers, string keys), else a DataError naming it."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        msg = f"{where} cannot be written as JSON ({exc}); keep to strings, finite numbers, lists and objects"
        raise DataError(msg) from None
    return value


def _list(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        msg = f"{where} is {type(value).__name__}, not a list"
        raise SchemaError(msg)
    return _json_value(list(value), where)


def _field(fields: Mapping[str, Any], key: str, default: Any) -> Any:
    """``fields[key]``, or ``default`` when it is absent or null (as MedAISure's defaults fill them)."""
    value = fields.get(key)
    return default if value is None else value


def _schema_version(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{where} is {value!r}, not an integer"
        raise SchemaError(msg)
    if value > SCHEMA_VERSION:
        msg = f"{where} is {value}, newer than this version of mas_eval reads ({SCHEMA_VERSION}); upgrade mas_eval"
        raise SchemaError(msg)
    return value


@dataclass
class DetailedResult:
    """One task's raw evaluation result (MedAISure's ``EvaluationResult``).

    A result MedAISure wrote in place of a failed evaluation (``metadata`` holds ``error``, or a
    ``note`` saying it is a placeholder) is kept and flagged: :attr:`placeholder` is true, and
    its scores (0.0 for every metric) are stand-ins, not measurements. ``model_id`` None is
    filled with the report's model when the result joins a :class:`BenchmarkReport`.

    Examples
    --------
    >>> from mas_eval.report import DetailedResult
    >>> failed = DetailedResult(task_id="t1", metrics_results={"accuracy": 0.0}, metadata={"error": "timeout"})
    >>> failed.placeholder, failed.flag
    (True, 'placeholder result: timeout')
    >>> DetailedResult(task_id="t2", metrics_results={"accuracy": 0.8}).placeholder
    False
    """

    task_id: str
    metrics_results: dict[str, float] = field(default_factory=dict)
    model_id: str | None = None
    inputs: list[Any] = field(default_factory=list)
    model_outputs: list[Any] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    timestamp: datetime | None = None
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Check the fields as the result is made."""
        self._check("DetailedResult")

    def _check(self, where: str) -> None:
        self.task_id = _text(self.task_id, f"{where}.task_id")
        self.metrics_results = _scores(self.metrics_results, f"{where}.metrics_results")
        if self.model_id is not None:
            self.model_id = _text(self.model_id, f"{where}.model_id")
        self.inputs = _list(self.inputs, f"{where}.inputs")
        self.model_outputs = _list(self.model_outputs, f"{where}.model_outputs")
        self.metadata = dict(_json_value(_mapping(self.metadata, f"{where}.metadata", "anything"), f"{where}.metadata"))
        self.timestamp = _timestamp(self.timestamp, f"{where}.timestamp")
        self.schema_version = _schema_version(self.schema_version, f"{where}.schema_version")

    @property
    def error(self) -> str | None:
        """The error MedAISure recorded for this task's evaluation, if any."""
        error = self.metadata.get("error")
        return None if error is None else str(error)

    @property
    def placeholder(self) -> bool:
        """Whether MedAISure wrote this result in place of a failed evaluation (its scores are stand-ins)."""
        return self.error is not None or "placeholder" in str(self.metadata.get("note", "")).lower()

    @property
    def flag(self) -> str:
        """Why the result is flagged, in one line (empty when it is not)."""
        if not self.placeholder:
            return ""
        note = str(self.metadata.get("note") or "placeholder result")
        error = (self.error or "").strip().splitlines()
        return f"{note}: {error[0]}" if error else note

    @validate_params({"model_id": [TEXT]})
    def to_dict(self, model_id: str) -> dict[str, Any]:
        """Return the result as MedAISure writes it (``model_id`` when the result has none of its own).

        Examples
        --------
        >>> from mas_eval.report import DetailedResult
        >>> DetailedResult(task_id="t1", metrics_results={"accuracy": 0.8}).to_dict("gpt-x")
        {'schema_version': 1, 'model_id': 'gpt-x', 'task_id': 't1', 'inputs': [], 'model_outputs': [], \
'metrics_results': {'accuracy': 0.8}, 'metadata': {}}
        """
        document: dict[str, Any] = {
            "schema_version": self.schema_version,
            "model_id": self.model_id or model_id,
            "task_id": self.task_id,
            "inputs": self.inputs,
            "model_outputs": self.model_outputs,
            "metrics_results": self.metrics_results,
            "metadata": self.metadata,
        }
        if self.timestamp is not None:
            document["timestamp"] = self.timestamp.isoformat()
        return document

    @classmethod
    @validate_params({"data": [MAPPING], "where": [TEXT]})
    def from_dict(cls, data: object, *, where: str = "detailed result") -> DetailedResult:
        """Read a result from MedAISure's JSON object; errors name ``where``.

        A naive timestamp is taken as UTC, as MedAISure does.

        Examples
        --------
        >>> from mas_eval.report import DetailedResult
        >>> result = DetailedResult.from_dict({"task_id": "t1", "metrics_results": {"accuracy": 0.8},
        ...                                    "timestamp": "2026-01-01T09:30:00"})
        >>> result.task_id, result.metrics_results, result.timestamp.isoformat()
        ('t1', {'accuracy': 0.8}, '2026-01-01T09:30:00+00:00')
        """
        return cls._parsed(data, where)

    @classmethod
    def _parsed(cls, data: object, where: str) -> DetailedResult:
        """:meth:`from_dict` of a value read from a file: one that is not an object is named by ``where``."""
        fields = _mapping(data, where, "result fields")
        if "task_id" not in fields:
            msg = f"{where} has no 'task_id'; each detailed result names its task"
            raise SchemaError(msg)
        result = cls.__new__(cls)
        result.task_id = fields["task_id"]
        result.metrics_results = _field(fields, "metrics_results", {})
        result.model_id = fields.get("model_id")
        result.inputs = fields.get("inputs")  # type: ignore[assignment]
        result.model_outputs = fields.get("model_outputs")  # type: ignore[assignment]
        result.metadata = _field(fields, "metadata", {})
        result.timestamp = fields.get("timestamp")
        result.schema_version = fields.get("schema_version", SCHEMA_VERSION)
        result._check(where)
        return result


@dataclass
class BenchmarkReport:
    """Scores of one model across tasks, with the raw results they came from (MedAISure's schema).

    Attributes
    ----------
    model_id
        The model evaluated.
    timestamp
        When the report was made (UTC); None when the file did not say.
    overall_scores
        Metric → its mean over the tasks that have it.
    task_scores
        Task → metric → the mean over the task's items.
    detailed_results
        One :class:`DetailedResult` per task evaluation, placeholders included (flagged).
    metadata
        Anything else: the run, the model's settings, the combined score's weights
        (``combined_weights``, ``combined_metric_name``, as MedAISure names them).
    schema_version
        Version of MedAISure's report schema (1).

    Examples
    --------
    >>> from mas_eval.report import BenchmarkReport
    >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
    ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
    >>> report.task_table.rows()
    [('t1', 'accuracy', 0.8), ('t2', 'accuracy', 0.6)]
    >>> report.placeholder_tasks
    []
    """

    model_id: str
    timestamp: datetime | None = None
    overall_scores: dict[str, float] = field(default_factory=dict)
    task_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    detailed_results: list[DetailedResult] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        """Check the fields as the report is made."""
        self._check("BenchmarkReport")

    def _check(self, where: str) -> None:
        self.model_id = _text(self.model_id, f"{where}.model_id")
        self.timestamp = _timestamp(self.timestamp, f"{where}.timestamp")
        self.overall_scores = _scores(self.overall_scores, f"{where}.overall_scores")
        tasks = _mapping(self.task_scores, f"{where}.task_scores", "task -> scores")
        self.task_scores = {str(t): _scores(s, f"{where}.task_scores[{t!r}]") for t, s in tasks.items()}
        if not isinstance(self.detailed_results, list | tuple):
            msg = f"{where}.detailed_results is {type(self.detailed_results).__name__}, not a list"
            raise SchemaError(msg)
        results = list(self.detailed_results)
        for index, result in enumerate(results):
            if not isinstance(result, DetailedResult):
                msg = f"{where}.detailed_results[{index}] is {type(result).__name__}, not a DetailedResult"
                raise SchemaError(msg)
            if result.model_id is None:  # MedAISure's results name their model: the report's
                result.model_id = self.model_id
        self.detailed_results = results
        metadata = _mapping(self.metadata, f"{where}.metadata", "anything")
        self.metadata = dict(_json_value(metadata, f"{where}.metadata"))
        self.schema_version = _schema_version(self.schema_version, f"{where}.schema_version")

    # -- reading ------------------------------------------------------------------------------

    @classmethod
    @validate_params({"data": [MAPPING], "source": [TEXT]})
    def from_dict(cls, data: object, *, source: str = "report") -> BenchmarkReport:
        """Read a report from MedAISure's JSON document (keys it does not know are ignored, as MedAISure does).

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport.from_dict({"model_id": "gpt-x", "task_scores": {"t1": {"accuracy": 0.8}},
        ...                                     "reader": "ignored"})
        >>> report.model_id, report.task_scores
        ('gpt-x', {'t1': {'accuracy': 0.8}})
        """
        return cls._parsed(data, source)

    @classmethod
    def _parsed(cls, data: object, source: str) -> BenchmarkReport:
        """:meth:`from_dict` of a document read from a file: one that is not an object is named by ``source``."""
        fields = _mapping(data, source, "report fields")
        if "model_id" not in fields:
            msg = f"{source}: not a MedAISure BenchmarkReport (no 'model_id'); pass the JSON its harness saves"
            raise SchemaError(msg)
        raw_results = _field(fields, "detailed_results", [])
        if not isinstance(raw_results, list):
            msg = f"{source}: detailed_results is {type(raw_results).__name__}, not a list"
            raise SchemaError(msg)
        report = cls.__new__(cls)
        report.model_id = fields["model_id"]
        report.timestamp = fields.get("timestamp")
        report.overall_scores = _field(fields, "overall_scores", {})
        report.task_scores = _field(fields, "task_scores", {})
        report.detailed_results = [
            DetailedResult._parsed(r, f"{source}: detailed_results[{i}]") for i, r in enumerate(raw_results)
        ]
        report.metadata = _field(fields, "metadata", {})
        report.schema_version = fields.get("schema_version", SCHEMA_VERSION)
        report._check(source + ":")
        return report

    @classmethod
    @validate_params({"path": [PATH]})
    def read(cls, path: str | Path) -> BenchmarkReport:
        """Read a report's JSON: MedAISure's own (``results/<run_id>.json``) or one written by :meth:`write`.

        Raises
        ------
        UnreadableFileError
            The file is missing, a folder, empty, not UTF-8 or not JSON.
        SchemaError, DataError
            The JSON is not a BenchmarkReport, or a score is not a finite number.

        Examples
        --------
        >>> import tempfile
        >>> from pathlib import Path
        >>> from mas_eval.report import BenchmarkReport
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = Path(folder) / "run.json"
        ...     _ = path.write_text('{"model_id": "gpt-x", "task_scores": {"t1": {"accuracy": 0.8}}}')
        ...     report = BenchmarkReport.read(path)
        >>> report.model_id, report.task_scores
        ('gpt-x', {'t1': {'accuracy': 0.8}})
        """
        fix = "pass a MedAISure report JSON (its harness saves results/<run_id>.json)"
        source = input_file(path, "a MedAISure report JSON file", fix)
        document = read_json(
            source, fix="pass a MedAISure report JSON", error=UnreadableFileError, max_bytes=MAX_REPORT_BYTES
        )
        return cls._parsed(document, str(source))

    @classmethod
    @validate_params(
        {
            "items": [FRAME],
            "model_id": [TEXT],
            "task": [TEXT],
            "metrics": [TEXTS, NONE],
            "timestamp": [Instance(datetime, "a datetime"), NONE],
            "metadata": [MAPPING, NONE],
        }
    )
    def from_items(
        cls,
        items: pl.DataFrame | pl.LazyFrame,
        *,
        model_id: str,
        task: str = "task",
        metrics: Sequence[str] | None = None,
        timestamp: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> BenchmarkReport:
        """Make the report of a per-item score table: per-task means (:func:`task_means`), overall means across tasks.

        ``metrics`` defaults to every floating-point column. One detailed result per task holds
        its means, and its items' ``prediction``/``rationale`` (outputs) and references
        (inputs), each led by ``run_id``/``item_id`` when the table has them.

        Examples
        --------
        >>> from datetime import UTC, datetime
        >>> import polars as pl
        >>> from mas_eval.report import BenchmarkReport
        >>> items = pl.DataFrame({"task": ["t1", "t1", "t2"], "accuracy": [1.0, 0.5, 0.25]})
        >>> report = BenchmarkReport.from_items(items, model_id="gpt-x", timestamp=datetime(2026, 1, 1, tzinfo=UTC))
        >>> report.task_scores, report.overall_scores
        ({'t1': {'accuracy': 0.75}, 't2': {'accuracy': 0.25}}, {'accuracy': 0.5})
        >>> [(r.task_id, r.metadata) for r in report.detailed_results]
        [('t1', {'items': 2}), ('t2', {'items': 1})]
        """
        import polars as pl

        frame = items.lazy()
        scores = task_means(frame, task=task, metrics=metrics)
        schema = frame.collect_schema()
        keys = [c for c in _ITEM_KEYS if c in schema]
        outputs = [c for c in _OUTPUT_COLUMNS if c in schema]
        inputs = [c for c in _INPUT_COLUMNS if c in schema]
        texts = frame.select(pl.col(task).cast(pl.String), *keys, *outputs, *inputs).collect()
        results = []
        for (task_id,), rows in texts.group_by(task, maintain_order=True):
            records = rows.to_dicts()
            results.append(
                DetailedResult(
                    task_id=str(task_id),
                    model_id=model_id,
                    metrics_results=scores[str(task_id)],
                    inputs=[{c: r[c] for c in [*keys, *inputs]} for r in records] if inputs else [],
                    model_outputs=[{c: r[c] for c in [*keys, *outputs]} for r in records] if outputs else [],
                    metadata={"items": len(records)},
                )
            )
        results.sort(key=lambda r: r.task_id)
        return cls(
            model_id=model_id,
            timestamp=timestamp or datetime.now(UTC),
            overall_scores=overall_means(scores),
            task_scores=scores,
            detailed_results=results,
            metadata=dict(metadata or {}),
        )

    # -- what it holds ------------------------------------------------------------------------

    @property
    def placeholder_tasks(self) -> list[str]:
        """Tasks whose every detailed result is a placeholder: their scores are MedAISure's stand-ins."""
        by_task: dict[str, list[bool]] = {}
        for result in self.detailed_results:
            by_task.setdefault(result.task_id, []).append(result.placeholder)
        return [task for task, flags in by_task.items() if all(flags)]

    @property
    def flagged_results(self) -> list[DetailedResult]:
        """The detailed results that are placeholders for failed evaluations (kept, not dropped)."""
        return [result for result in self.detailed_results if result.placeholder]

    @property
    def overall_table(self) -> pl.DataFrame:
        """``overall_scores`` as a frame: ``metric, score``."""
        import polars as pl

        return pl.DataFrame(
            {"metric": list(self.overall_scores), "score": list(self.overall_scores.values())},
            schema={"metric": pl.String, "score": pl.Float64},
        )

    @property
    def task_table(self) -> pl.DataFrame:
        """``task_scores`` as a long frame: ``task_id, metric, score``."""
        import polars as pl

        rows = [(task, metric, value) for task, scores in self.task_scores.items() for metric, value in scores.items()]
        return pl.DataFrame(rows, schema={"task_id": pl.String, "metric": pl.String, "score": pl.Float64}, orient="row")

    # -- the combined score -------------------------------------------------------------------

    @validate_params(
        {
            "weights": [MAPPING],
            "renormalize_missing": [Boolean()],
            "categories": [MAPPING],
            "metric_name": [_METRIC_NAME],
        }
    )
    def add_combined_score(
        self,
        weights: Mapping[str, float],
        metric_name: str = "combined_score",
        *,
        renormalize_missing: bool = True,
        categories: Mapping[str, Sequence[str]] = DEFAULT_CATEGORIES,
    ) -> CombinedScore:
        """Add the combined score (:func:`~mas_eval.report.combined_score`) under ``metric_name``.

        It goes into ``task_scores[task][metric_name]`` for every task that has one and into
        ``overall_scores[metric_name]``, replacing an earlier combined score of that name; the
        weights, the name, the renormalisation, the values combined and where each came from go
        into ``metadata`` (``combined_weights``, ``combined_metric_name``,
        ``combined_renormalize_missing``, ``combined_categories``, ``combined_sources``: per task
        and key, ``"task value"`` or ``"category mean of [...]"``). Returns the
        :class:`~mas_eval.report.CombinedScore`.

        Raises
        ------
        InvalidParameterError
            Bad weights, or ``metric_name`` is a metric of the report other than its combined score.

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", task_scores={"t1": {"accuracy": 0.8, "rouge_l": 0.4},
        ...                                                         "t2": {"accuracy": 0.6}})
        >>> result = report.add_combined_score({"diagnostics": 0.75, "summarization": 0.25})
        >>> round(result.overall, 4), report.overall_scores, report.metadata["combined_metric_name"]
        (0.65, {'combined_score': 0.65}, 'combined_score')
        """
        metrics = {*self.overall_scores, *(m for s in self.task_scores.values() for m in s)}
        if metric_name in metrics and metric_name != self.metadata.get("combined_metric_name"):
            msg = (
                f"{metric_name!r} is already a metric of the report, not its combined score; "
                "choose another name for the combined score"
            )
            raise InvalidParameterError(msg)
        others = {t: {m: v for m, v in s.items() if m != metric_name} for t, s in self.task_scores.items()}
        result = combined_score(others, weights, renormalize_missing=renormalize_missing, categories=categories)
        for task, scores in self.task_scores.items():
            scores.pop(metric_name, None)
            if task in result.per_task:
                scores[metric_name] = result.per_task[task]
        self.overall_scores.pop(metric_name, None)
        if result.overall is not None:
            self.overall_scores[metric_name] = result.overall
        self.metadata.update(
            combined_weights=dict(result.weights),
            combined_metric_name=metric_name,
            combined_renormalize_missing=renormalize_missing,
            combined_categories=result.categories,
            combined_sources=result.sources,
        )
        return result

    def _combined(self) -> CombinedView | None:
        """Return the combined score to highlight: the metric ``metadata`` names, when the report has it."""
        name = self.metadata.get("combined_metric_name") or "combined_score"
        if not isinstance(name, str) or not (
            name in self.overall_scores or any(name in s for s in self.task_scores.values())
        ):
            return None
        raw = self.metadata.get("combined_weights")
        weights = (
            {str(k): float(v) for k, v in raw.items() if isinstance(v, int | float) and not isinstance(v, bool)}
            if isinstance(raw, Mapping)
            else {}
        )
        renormalised = self.metadata.get("combined_renormalize_missing", True)
        tasks = sum(name in s for s in self.task_scores.values())
        raw_sources = self.metadata.get("combined_sources")
        sources = [
            (str(task), str(key), str(source))
            for task, by_key in (raw_sources.items() if isinstance(raw_sources, Mapping) else ())
            if isinstance(by_key, Mapping)
            for key, source in by_key.items()
        ]
        return CombinedView(name, self.overall_scores.get(name), weights, renormalised is not False, tasks, sources)

    # -- writing ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return the report as MedAISure's JSON document (:meth:`from_dict` reads it back equal).

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
        ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
        >>> report.to_dict()
        {'schema_version': 1, 'model_id': 'gpt-x', 'overall_scores': {'accuracy': 0.7}, \
'task_scores': {'t1': {'accuracy': 0.8}, 't2': {'accuracy': 0.6}}, 'detailed_results': [], 'metadata': {}}
        >>> BenchmarkReport.from_dict(report.to_dict()) == report
        True
        """
        document: dict[str, Any] = {"schema_version": self.schema_version, "model_id": self.model_id}
        if self.timestamp is not None:
            document["timestamp"] = self.timestamp.isoformat()
        document["overall_scores"] = self.overall_scores
        document["task_scores"] = self.task_scores
        document["detailed_results"] = [result.to_dict(self.model_id) for result in self.detailed_results]
        document["metadata"] = self.metadata
        return document

    def to_json(self) -> str:
        """Return the report as JSON, every score in full precision; MedAISure's ``from_json`` reads it back.

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
        ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
        >>> import json
        >>> json.loads(report.to_json())["task_scores"]
        {'t1': {'accuracy': 0.8}, 't2': {'accuracy': 0.6}}
        """
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    def to_markdown(self) -> str:
        """Return the report as Markdown: the combined score first, then :data:`SECTIONS`; user text HTML-escaped.

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
        ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
        >>> text = report.to_markdown()
        >>> print(text[text.index("## Task Scores"):text.index("## Detailed")].strip())
        ## Task Scores
        <BLANKLINE>
        | task | accuracy | flag |
        | --- | ---: | --- |
        | t1 | 0.8000 |  |
        | t2 | 0.6000 |  |
        """
        return render_markdown(benchmark_view(self, self._combined()))

    def to_html(self) -> str:
        """Return the report as one self-contained HTML page: CSS inline, nothing fetched, every string escaped.

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> page = BenchmarkReport(model_id="<b>gpt-x</b>", task_scores={"t1": {"accuracy": 0.8}}).to_html()
        >>> page.startswith("<!DOCTYPE html>"), "&lt;b&gt;gpt-x&lt;/b&gt;" in page, "<b>gpt-x" in page
        (True, True, False)
        """
        from mas_eval.report.html import environment

        template = environment().get_template("benchmark.html.j2")
        return template.render(
            view=benchmark_view(self, self._combined()), version=__version__, sections=SECTIONS, titles=dict(SECTIONS)
        )

    def csv_tables(self) -> dict[str, pl.DataFrame]:
        """Return the report as MedAISure's CSV tables (its CSV report generator's layout), by file name.

        ``overall_scores.csv``: ``metric, score``; ``task_scores.csv``: ``task_id, metric, score``;
        ``detailed_metrics.csv``: ``model_id, task_id, timestamp, metric, score``;
        ``detailed_inputs.csv`` and ``detailed_outputs.csv``: ``task_id, index`` and then every
        key of the results' input (output) records, in the order first met (a value that is not
        text as JSON; a record that is no object under ``value``); and ours,
        ``combined_sources.csv``: ``task_id, key, source`` (where each value of the combined score
        came from; no rows without one). Every text cell is made spreadsheet-safe
        (:func:`~mas_eval.escaping.spreadsheet_safe`).

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
        ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
        >>> tables = report.csv_tables()
        >>> sorted(tables)
        ['combined_sources.csv', 'detailed_inputs.csv', 'detailed_metrics.csv', 'detailed_outputs.csv', \
'overall_scores.csv', 'task_scores.csv']
        >>> tables["overall_scores.csv"].rows()
        [('accuracy', 0.7)]
        """
        import polars as pl

        model = self.model_id
        tables = {
            "overall_scores.csv": pl.DataFrame(
                list(self.overall_scores.items()), schema={"metric": pl.String, "score": pl.Float64}, orient="row"
            ),
            "task_scores.csv": self.task_table,
            "detailed_metrics.csv": pl.DataFrame(
                [
                    (r.model_id or model, r.task_id, r.timestamp.isoformat() if r.timestamp else None, m, v)
                    for r in self.detailed_results
                    for m, v in r.metrics_results.items()
                ],
                schema={n: pl.String for n in ("model_id", "task_id", "timestamp", "metric")} | {"score": pl.Float64},
                orient="row",
            ),
            "detailed_inputs.csv": _records(self.detailed_results, "inputs"),
            "detailed_outputs.csv": _records(self.detailed_results, "model_outputs"),
        }
        combined = self._combined()
        tables["combined_sources.csv"] = pl.DataFrame(
            combined.sources if combined else [],
            schema={"task_id": pl.String, "key": pl.String, "source": pl.String},
            orient="row",
        )
        return {name: spreadsheet_safe(frame) for name, frame in tables.items()}

    def to_csv(self) -> str:
        """Return the task scores as CSV (``task_id, metric, score``), as MedAISure writes a single ``.csv`` file.

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
        ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
        >>> print(report.to_csv(), end="")
        task_id,metric,score
        t1,accuracy,0.8
        t2,accuracy,0.6
        """
        return self.csv_tables()["task_scores.csv"].write_csv()

    @validate_params({"folder": [PATH], "overwrite": [Boolean()], "inputs": [PATH_LIST]})
    def write_csv_tables(
        self, folder: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path] = ()
    ) -> Path:
        """Write :meth:`csv_tables` into ``folder`` (MedAISure's CSV report folder), all or none, atomically.

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
        ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as parent:
        ...     folder = report.write_csv_tables(Path(parent) / "gpt-x")
        ...     written = sorted(path.name for path in folder.iterdir())
        ...     first = (folder / "task_scores.csv").read_text().splitlines()[:2]
        >>> len(written), first
        (6, ['task_id,metric,score', 't1,accuracy,0.8'])
        """
        from mas_eval.storage.outputs import atomic_directory

        target = Path(folder)
        tables = self.csv_tables()
        with atomic_directory(target, overwrite=overwrite, inputs=list(inputs)) as staging:
            for name, frame in tables.items():
                (staging / name).write_text(frame.write_csv(), encoding="utf-8")
        return target

    @validate_params({"path": [PATH], "overwrite": [Boolean()], "inputs": [PATH_LIST]})
    def write(self, path: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path] = ()) -> Path:
        """Write the report to ``path`` in the format its suffix names (:data:`BENCHMARK_FORMATS`), atomically.

        ``inputs`` are paths the report must not overwrite (the file it was read from).

        Examples
        --------
        >>> from mas_eval.report import BenchmarkReport
        >>> report = BenchmarkReport(model_id="gpt-x", overall_scores={"accuracy": 0.7},
        ...                          task_scores={"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.6}})
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = report.write(Path(folder) / "gpt-x.json")
        ...     again = BenchmarkReport.read(path)
        >>> path.name, again == report
        ('gpt-x.json', True)
        """
        from mas_eval.storage.outputs import atomic_file

        suffix = check_benchmark_path(path)
        render = {".json": self.to_json, ".md": self.to_markdown, ".html": self.to_html, ".csv": self.to_csv}[suffix]
        target = Path(path)
        text = render()
        with atomic_file(target, overwrite=overwrite, inputs=list(inputs)) as staging:
            staging.write_text(text, encoding="utf-8")
        return target


@validate_params({"path": [PATH]})
def read_medaisure_report(path: str | Path) -> BenchmarkReport:
    """MedAISure's report JSON as a :class:`BenchmarkReport`, its placeholder results kept and flagged.

    The same as :meth:`BenchmarkReport.read`: a report :meth:`BenchmarkReport.write` wrote as
    JSON is in MedAISure's schema too. :attr:`BenchmarkReport.placeholder_tasks` names the tasks
    whose scores are stand-ins for a failed evaluation.

    Examples
    --------
    >>> import json
    >>> import tempfile
    >>> from pathlib import Path
    >>> failed = {"task_id": "t2", "metrics_results": {"accuracy": 0.0},
    ...           "metadata": {"note": "placeholder result", "error": "timeout"}}
    >>> document = {"model_id": "gpt-x", "task_scores": {"t1": {"accuracy": 0.8}, "t2": {"accuracy": 0.0}},
    ...             "detailed_results": [failed]}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "run.json"
    ...     _ = path.write_text(json.dumps(document))
    ...     report = read_medaisure_report(path)
    >>> report.placeholder_tasks, report.flagged_results[0].flag
    (['t2'], 'placeholder result: timeout')
    """
    return BenchmarkReport.read(path)


# -- rendering ----------------------------------------------------------------------------------


def _cell(value: Any) -> str | None:
    """Return a record's value as a CSV cell: text as it is, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _records(results: Sequence[DetailedResult], field_name: str) -> pl.DataFrame:
    """Return the results' input (or output) records, one row each: ``task_id, index``, then their keys."""
    import polars as pl

    rows: list[dict[str, Any]] = []
    keys: dict[str, None] = {}
    for result in results:
        for index, record in enumerate(getattr(result, field_name)):
            fields = (
                {str(k): _cell(v) for k, v in record.items()} if isinstance(record, dict) else {"value": _cell(record)}
            )
            keys.update(dict.fromkeys(k for k in fields if k not in ("task_id", "index")))
            rows.append({**fields, "task_id": result.task_id, "index": index})
    schema = {"task_id": pl.String, "index": pl.Int64, **dict.fromkeys(keys, pl.String)}
    return pl.DataFrame([{name: row.get(name) for name in schema} for row in rows], schema=schema, orient="row")
