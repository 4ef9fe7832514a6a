"""Recomputed against recorded: how often :func:`mas_eval.score` gives the numbers a reference system wrote.

Local-DDx's result files record their own label counts, scores, TempoScores, credibility scores
and the labels its LLM judge gave (ingested into the ``reported`` table by
:mod:`mas_eval.ingest.lddx`). :func:`reproduce` scores the Dataset under a preset and sets every
recorded number beside the recomputed one: counts must be equal, scores within ``tolerance``.
Scores are compared twice: recomputed end to end (from our labels) and recomputed from the
file's own counts, which isolates the formulas from the labelling.

Log adapters keep what the source tool itself aggregated in ``reported`` (source ``"results"``):
inspect_ai's ``<score>/accuracy``, ``<score>/stderr`` ... per log
(:mod:`mas_eval.ingest.inspect_logs`), lm-evaluation-harness's ``<metric>,<filter>`` and
``<metric>_stderr,<filter>`` per task and results file (:mod:`mas_eval.ingest.lm_eval`).
:func:`reproduce_aggregates` recomputes each of them from ``outcomes``, log by log, and
:func:`reproduce` does so for a Dataset that holds them.

>>> import polars as pl
>>> from mas_eval.scoring.reproduction import reproduce
>>> # ``mas-eval reproduce DATASET --preset lddx-v6`` prints ``result.summary``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.data.vocabulary import FINAL_ROUND
from mas_eval.errors import SchemaError
from mas_eval.escaping import spreadsheet_safe
from mas_eval.metrics.diagnosis.equivalence import match_pairs
from mas_eval.metrics.diagnosis.scores import RULES, score_expressions
from mas_eval.metrics.outcomes.epochs import pass_at, pass_hat
from mas_eval.scoring import Scores, score
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import atomic_directory
from mas_eval.storage.provenance import provenance

__all__ = [
    "AGGREGATE_STATISTICS",
    "COUNT_FIELDS",
    "PERCENT_BASIS",
    "SCORE_FIELDS",
    "Reproduction",
    "reproduce",
    "reproduce_aggregates",
]

#: Our count column → the name Local-DDx's evaluation block records it under.
COUNT_FIELDS = {
    "tp": "tp_count",
    "fp": "fp_count",
    "fn": "fn_count",
    "caa": "caa_count",
    "ae": "ae_count",
    "total_gt": "total_gt_diagnoses",
}
#: Our score column → its name in the evaluation block.
SCORE_FIELDS = {
    "tp_rate": "tp_rate",
    "caa_weight": "caa_weight_applied",
    "traditional_recall": "traditional_recall",
    "traditional_precision": "traditional_precision",
    "clinical_reasoning_quality": "clinical_reasoning_quality",
    "diagnostic_safety": "diagnostic_safety",
}
_SUMMARY = {
    "metric": pl.String, "basis": pl.String, "items": pl.UInt32, "reproduced": pl.UInt32,
    "share": pl.Float64, "runs": pl.UInt32, "runs_all_reproduced": pl.UInt32, "tolerance": pl.Float64,
}  # fmt: skip
_DISAGREEMENTS = {
    RUN_KEY: pl.String, "metric": pl.String, "basis": pl.String, "item": pl.String,
    "recorded": pl.String, "recomputed": pl.String,
}  # fmt: skip
_NOT_COMPARED = {"metric": pl.String, "logs": pl.UInt32, "reason": pl.String}


@dataclass
class Reproduction:
    """What :func:`reproduce` found.

    Attributes
    ----------
    summary
        One row per metric and basis: ``metric, basis, items, reproduced, share, runs,
        runs_all_reproduced, tolerance``. ``basis`` says what was recomputed from: ``"labels"``
        (end to end), ``"recorded counts"`` (the file's counts through our formulas),
        ``"messages"`` (TempoScore, credibility) or ``"equivalence"`` (agreement with the
        recorded LLM-judge labels: ``tp_pairs_matched`` and ``fp_fn_left_unmatched``). ``tolerance``
        is null where equality is exact.
    disagreements
        Every item not reproduced: ``run_id, metric, basis, item, recorded, recomputed`` (as text).
        A log's aggregate (:func:`reproduce_aggregates`) is one row per recorded name (``metric``
        ``match/accuracy``, ``acc,none``) with ``basis`` ``"outcomes"``: its ``items`` and ``runs``
        count logs (each named by its first ``run_id``), ``tolerance`` is relative (null for counts).
    disagreements
        Every item not reproduced: ``run_id, metric, basis, item, recorded, recomputed`` (as text).
        For a log's aggregate ``item`` is ``system / task`` (lm-eval: ``/ epoch N``, its results file).
    preset, params
        What the Dataset was scored with (``preset`` None: nothing was scored, only aggregates compared).
    scores
        The scores compared.
    not_compared
        Recorded aggregates with a number that nothing recomputes: ``metric, logs, reason`` (e.g.
        inspect's ``completed_samples``, a ``bootstrap_stderr``, a reducer other than mean, median
        or max). Empty for Local-DDx.
    """

    summary: pl.DataFrame
    disagreements: pl.DataFrame
    preset: str | None
    params: dict[str, Any] = field(default_factory=dict)
    scores: Scores | None = field(default=None, repr=False)
    not_compared: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=_NOT_COMPARED), repr=False)

    def to_json(self) -> dict[str, Any]:
        """Return the summary and disagreements as JSON-ready dicts, with the preset and parameters.

        When there are any, the recorded aggregates not compared too.
        """
        content = {
            "preset": self.preset,
            "params": self.params,
            "summary": self.summary.to_dicts(),
            "disagreements": self.disagreements.to_dicts(),
        }
        if not self.not_compared.is_empty():
            content["not_compared"] = self.not_compared.to_dicts()
        return content

    def write(
        self, path: str | Path, *, overwrite: bool = False, dataset: str | Path | None = None, raw_csv: bool = False
    ) -> Path:
        """Write ``summary.csv``, ``disagreements.csv`` and ``reproduction.json`` into folder ``path``, atomically.

        The JSON holds both tables, the preset, parameters, version and the SHA-256 of ``dataset``'s files.

        A CSV text cell that a spreadsheet would run as a formula (a run id ``=HYPERLINK(...)``)
        starts with a single quote (:func:`~mas_eval.escaping.spreadsheet_safe`); numbers written
        as text (``-0.5``) are kept as they are, and ``raw_csv=True`` keeps every cell. The JSON
        holds every value as it is.
        """
        inputs = {"dataset": dataset} if dataset is not None else {}
        with atomic_directory(path, overwrite=overwrite, inputs=inputs.values()) as staging:
            for name, frame in (("summary", self.summary), ("disagreements", self.disagreements)):
                (frame if raw_csv else spreadsheet_safe(frame)).write_csv(staging / f"{name}.csv")
            content = self.to_json() | {"provenance": provenance(inputs=inputs, parameters=self.params)}
            (staging / "reproduction.json").write_text(json.dumps(content, indent=2, default=str) + "\n")
        return Path(path)


def _text(expr: pl.Expr) -> pl.Expr:
    return pl.when(expr.is_null()).then(pl.lit("null")).otherwise(expr.cast(pl.String))


def _compared(joined: pl.DataFrame, metric: str, basis: str, tolerance: float | None) -> pl.DataFrame:
    """Return ``joined`` (``run_id, item, recorded, recomputed``) with ``ok``: equal, or within ``tolerance``."""
    recorded, recomputed = pl.col("recorded"), pl.col("recomputed")
    if tolerance is None:
        same = recorded.cast(pl.Float64) == recomputed.cast(pl.Float64)
    else:
        same = (recorded.cast(pl.Float64) - recomputed.cast(pl.Float64)).abs() <= tolerance
    both_null = recorded.is_null() & recomputed.is_null()
    return joined.select(
        pl.col(RUN_KEY).cast(pl.String),
        pl.lit(metric).alias("metric"),
        pl.lit(basis).alias("basis"),
        pl.col("item").cast(pl.String),
        _text(recorded).alias("recorded"),
        _text(recomputed).alias("recomputed"),
        ok=(same.fill_null(False) | both_null),
        tolerance=pl.lit(tolerance, dtype=pl.Float64),
    )


def _evaluation(reported: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """Return the recorded evaluation fields ``names`` (ours → theirs), one row per run, in our names."""
    ours = {theirs: mine for mine, theirs in names.items()}
    frame = (
        reported.filter((pl.col("source") == "evaluation") & pl.col("name").is_in(list(ours)))
        .select(RUN_KEY, pl.col("name").replace_strict(ours), "value")
        .pivot("name", index=RUN_KEY, values="value")
    )
    absent = [name for name in names if name not in frame.columns]
    return frame.with_columns(pl.lit(None, pl.Float64).alias(name) for name in absent).select(RUN_KEY, *names)


def _run_metrics(reported: pl.DataFrame, scores: Scores, preset: str, tolerance: float) -> list[pl.DataFrame]:
    runs = scores.runs
    recorded = _evaluation(reported, COUNT_FIELDS | SCORE_FIELDS)
    # Local-DDx records no TM-SM count; none of the scores compared here reads it.
    counts = recorded.with_columns(pl.lit(0).alias("tm_sm"))
    from_counts = counts.select(RUN_KEY, *score_expressions(RULES[preset], total_gt=pl.col("total_gt")))
    parts = []
    for metric in [*COUNT_FIELDS, *SCORE_FIELDS]:
        tol = None if metric in COUNT_FIELDS else tolerance
        joined = recorded.select(RUN_KEY, pl.col(metric).alias("recorded")).join(
            runs.select(RUN_KEY, pl.col(metric).alias("recomputed")), on=RUN_KEY, how="left"
        )
        parts.append(_compared(joined.with_columns(item=pl.lit(None, pl.String)), metric, "labels", tol))
        if metric in SCORE_FIELDS:
            joined = recorded.select(RUN_KEY, pl.col(metric).alias("recorded")).join(
                from_counts.select(RUN_KEY, pl.col(metric).alias("recomputed")), on=RUN_KEY, how="left"
            )
            parts.append(_compared(joined.with_columns(item=pl.lit(None, pl.String)), metric, "recorded counts", tol))
    return parts


def _collaboration(reported: pl.DataFrame, scores: Scores, tolerance: float) -> list[pl.DataFrame]:
    parts = []
    for source, table, key, column in (
        ("tempo", "rounds", "round", "tempo_score"),
        ("credibility", "agents", "agent_id", "credibility"),
    ):
        recorded = reported.filter(pl.col("source") == source).select(RUN_KEY, item="name", recorded="value")
        if table in scores:
            recomputed = scores[table].select(RUN_KEY, pl.col(key).alias("item"), pl.col(column).alias("recomputed"))
            joined = recorded.join(recomputed, on=[RUN_KEY, "item"], how="left")
        else:
            joined = recorded.with_columns(recomputed=pl.lit(None, pl.Float64))
        parts.append(_compared(joined, column, "messages", tolerance))
    return parts


def _agreement(ds: Dataset, reported: pl.DataFrame, params: dict[str, Any]) -> list[pl.DataFrame]:
    """Agreement of the deterministic equivalence tiers with the labels Local-DDx's LLM judge recorded.

    ``tp_pairs_matched``: each recorded TP pair (system, ground truth) is reproduced when the tiers
    match the two strings. ``fp_fn_left_unmatched``: each recorded FP (FN) is reproduced when the
    tiers match it to no ground-truth (final-list) diagnosis of the same run.
    """
    labels = reported.filter(pl.col("source") == "label")
    if labels.is_empty():
        return []
    ddx = ds.collect("ddx") if "ddx" in ds else pl.DataFrame(schema={RUN_KEY: pl.String, "diagnosis": pl.String})
    final = (
        ddx.filter((pl.col("round") == FINAL_ROUND) & (pl.col("stance") == "final"))
        .select(RUN_KEY, "diagnosis")
        .unique()
    )
    truth = (
        ds.collect("runs")
        .select(RUN_KEY, "case_id")
        .join(ds.collect("ground_truth"), on="case_id")
        .select(RUN_KEY, "diagnosis")
        .unique()
    )
    pair_fields = pl.Struct({"system": pl.String, "ground_truth": pl.String})
    tp = (
        labels.filter(pl.col("name") == "TP")
        .select(RUN_KEY, pl.col("text").str.json_decode(pair_fields).alias("pair"))
        .unnest("pair")
    )
    fp = labels.filter(pl.col("name") == "FP").select(RUN_KEY, diagnosis="text")
    fn = labels.filter(pl.col("name") == "FN").select(RUN_KEY, diagnosis="text")
    equivalence = {"threshold": params.get("equivalence_threshold", 0.6)}
    left = pl.concat([final, tp.select(RUN_KEY, diagnosis="system"), fp]).unique()
    right = pl.concat([truth, tp.select(RUN_KEY, diagnosis="ground_truth"), fn]).unique()
    pairs = match_pairs(left, right, left_on="diagnosis", right_on="diagnosis", by=RUN_KEY, **equivalence)
    matched = pairs.filter(pl.col("tier") != "unmatched")
    tp_rows = tp.join(
        pairs.select(RUN_KEY, system="left", ground_truth="right", tier=pl.col("tier").cast(pl.String)),
        on=[RUN_KEY, "system", "ground_truth"],
        how="left",
    ).select(
        RUN_KEY,
        item=pl.concat_str(pl.col("system"), pl.lit(" = "), pl.col("ground_truth")),
        recorded=pl.lit("TP"),
        recomputed=pl.col("tier").fill_null("unmatched"),
    )

    def left_alone(items: pl.DataFrame, side: str, other: str, candidates: pl.DataFrame, label: str) -> pl.DataFrame:
        # A recorded FP (FN) may match only diagnoses of the run's other side: the ground truth (final list).
        hits = (
            matched.join(candidates.select(RUN_KEY, pl.col("diagnosis").alias(other)), on=[RUN_KEY, other], how="semi")
            .group_by(RUN_KEY, side)
            .agg(
                hit=pl.concat_str(pl.col(other), pl.lit(" ("), pl.col("tier").cast(pl.String), pl.lit(")"))
                .sort()
                .first()
            )
        )
        return items.join(hits.rename({side: "diagnosis"}), on=[RUN_KEY, "diagnosis"], how="left").select(
            RUN_KEY, item="diagnosis", recorded=pl.lit(label), recomputed=pl.col("hit").fill_null("unmatched")
        )

    fp_fn = pl.concat([left_alone(fp, "left", "right", truth, "FP"), left_alone(fn, "right", "left", final, "FN")])
    ok_tp = pl.col("recomputed") != "unmatched"
    ok_open = pl.col("recomputed") == "unmatched"
    return [
        _as_rows(tp_rows, "tp_pairs_matched", ok_tp),
        _as_rows(fp_fn, "fp_fn_left_unmatched", ok_open),
    ]


def _as_rows(frame: pl.DataFrame, metric: str, ok: pl.Expr) -> pl.DataFrame:
    return frame.select(
        pl.col(RUN_KEY).cast(pl.String),
        pl.lit(metric).alias("metric"),
        pl.lit("equivalence").alias("basis"),
        "item",
        "recorded",
        "recomputed",
        ok=ok,
        tolerance=pl.lit(None, dtype=pl.Float64),
    )


def _summarised(parts: list[pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return the summary (per metric and basis) and the disagreements of the compared rows ``parts``."""
    rows = (
        pl.concat(parts)
        if parts
        else pl.DataFrame(schema={**_DISAGREEMENTS, "ok": pl.Boolean, "tolerance": pl.Float64})
    )
    rows = rows.filter(pl.col("recorded") != "null")
    summary = (
        rows.group_by("metric", "basis", maintain_order=True)
        .agg(
            items=pl.len().cast(pl.UInt32),
            reproduced=pl.col("ok").sum().cast(pl.UInt32),
            share=pl.col("ok").mean(),
            runs=pl.col(RUN_KEY).n_unique().cast(pl.UInt32),
            runs_all_reproduced=pl.col(RUN_KEY).filter(~pl.col("ok")).n_unique().cast(pl.UInt32),
            tolerance=pl.col("tolerance").first(),
        )
        .with_columns(runs_all_reproduced=(pl.col("runs") - pl.col("runs_all_reproduced")).cast(pl.UInt32))
        .cast(_SUMMARY)
    )
    disagreements = rows.filter(~pl.col("ok")).select(*_DISAGREEMENTS).sort(RUN_KEY, "metric", "basis", "item")
    return summary, disagreements


# -- a log's own aggregates -------------------------------------------------------------------

#: The ``reported`` source of a log's aggregate results (inspect_ai's and lm-eval's adapters).
AGGREGATE_SOURCE = "results"
#: What each recorded aggregate is recomputed as, over a log's cases (``n`` of them, ``x_i`` the
#: case's value: the mean of its runs, or the log's recorded reducer of them): inspect_ai's
#: ``accuracy`` and ``mean`` and lm-eval's ``<metric>`` are the mean; ``stderr`` (lm-eval's
#: ``<metric>_stderr``) is ``std / sqrt(n)``; ``std`` and ``var`` are the sample ones (ddof 1,
#: 0 below two cases, as inspect_ai has them); inspect's ``<score>/scored_samples`` is ``n`` and
#: ``<score>/unscored_samples`` the log's other cases; inspect's ``total_samples`` and
#: ``completed_samples`` and lm-eval's ``sample_len`` the log's runs.
AGGREGATE_STATISTICS = ("accuracy", "mean", "stderr", "std", "var", "scored_samples", "unscored_samples", "runs")
#: inspect_ai reducers of a case's epochs that are recomputed (the default is the mean), as
#: inspect_ai names them in a log (``pass_at_2``: ``pass_at(k=2)``).
_REDUCERS = r"^(?:(?P<plain>mean|median|mode|max)|(?P<counted>pass_at|pass_k|at_least)_(?P<k>[1-9][0-9]{0,3}))$"
#: The ``reported`` sources the log adapters write (inspect_ai, lm-eval).
_LOG_SOURCES = (AGGREGATE_SOURCE, "sample", "task")
#: The ``reported`` sources of Local-DDx's numbers that :func:`reproduce` recomputes (the adapter
#: writes others beside them, as they are in the result file).
_LDDX_SOURCES = ("credibility", "evaluation", "label", "tempo")
#: The formats whose logs record numbers of their own (:attr:`Dataset.formats <mas_eval.Dataset.formats>`),
#: with the ``mas-eval ingest --format`` that keeps them in ``reported``.
_RECORDING_FORMATS = {"Local-DDx": "lddx", "inspect_ai": "inspect", "lm-eval": "lm-eval"}
#: lm-eval's ``reported`` (source "task") count of the documents it scored of a task, after ``--limit``:
#: recomputed as the log's runs.
_SCORED = "n-samples.effective"
#: lm-eval's aggregations that are the mean of the per-document values (``nanmean`` leaves NaN out, as
#: ``outcomes`` does); any other is not recomputed (``lm_eval/api/metrics.py``).
_LM_EVAL_MEANS = ("mean", "nanmean")
#: lm-eval's aggregations whose standard error it estimates by the bootstrap (``stderr_for_metric``'s
#: "bootstrappable" list, ``bootstrap_stderr`` with ``bootstrap_iters`` resamples).
_BOOTSTRAPPED = ("median", "matthews_corrcoef", "f1", "perplexity", "bleu", "chrf", "ter", "nanmean")
#: What each of lm-eval's registered aggregations other than the mean is, for a reason a number is
#: not recomputed; a task's own function is named as such.
_LM_EVAL_AGGREGATIONS = {
    "median": "lm-eval's median (the middle value in the documents' order)",
    "perplexity": "perplexity, exp(-mean) of the documents' log-likelihoods",
    "weighted_perplexity": "a perplexity weighted by the documents' words or bytes",
    "bits_per_byte": "bits per byte, from the documents' log-likelihoods and lengths",
    "f1": "a corpus-level F1 over every document's (reference, prediction) pair",
    "matthews_corrcoef": "a corpus-level Matthews correlation over every document's pair",
    "bleu": "a corpus-level BLEU (sacrebleu.corpus_bleu) over every document's pair",
    "chrf": "a corpus-level chrF (sacrebleu.corpus_chrf) over every document's pair",
    "ter": "a corpus-level TER (sacrebleu.corpus_ter) over every document's pair",
    "brier_score": "a Brier score over every document's predicted distribution",
    "bypass": "a placeholder (999) of a metric lm-eval does not aggregate",
}
_COUNTS = ("scored_samples", "unscored_samples", "runs")
#: Run-level aggregates (of no one outcome): the log's runs (inspect_ai's samples completed
#: without an error are its runs, since a failed sample is not ingested).
_RUN_LEVEL = {"total_samples": "runs", "completed_samples": "runs", "sample_len": "runs"}
#: An inspect_ai aggregate's name: the score (``match``; a dict-valued scorer's key ``shape/short``;
#: a score reduced a second way ``match [pass_at_2]``), then the metric.
_INSPECT_STATS = "accuracy|mean|stderr|std|var|scored_samples|unscored_samples"
_INSPECT_NAME = rf"^(?P<label>(?P<outcome>.+?)(?: \[[^\]]+\])?)/(?P<stat>{_INSPECT_STATS})$"
_LM_EVAL_NAME = r"^(?P<metric>.+?)(?P<se>_stderr)?,(?P<filter>.+)$"
#: The statistics a log may record in percent (R's vitals writes an accuracy of 1 as 100).
_PERCENT_STATS = ("accuracy", "mean")
#: How a row of an aggregate recorded in percent is named in the summary's ``basis``.
PERCENT_BASIS = "outcomes (recorded in percent)"


def _logs(reported: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Each run that recorded aggregates with its log: ``run_id, case_id, epoch, log, label``.

    The adapters repeat a log's aggregates on each of its runs, so the runs of one system and task
    that recorded the same aggregates (name, value, text) are one log; a run of lm-eval (recorded
    ``<metric>,<filter>`` names) is also of its ``epoch``, one results file each, so that two
    files of equal numbers stay apart.
    """
    name, value, text = pl.col("name"), pl.col("value").cast(pl.String), pl.col("text")
    entry = pl.concat_str(name, pl.lit("="), value.fill_null(""), pl.lit("|"), text.fill_null(""))
    fingerprints = reported.group_by(RUN_KEY).agg(
        fingerprint=entry.sort().str.join("\n").hash().cast(pl.String),
        lm_eval=name.str.contains(",", literal=True).any(),
    )
    epoch = pl.col("epoch").cast(pl.String).fill_null("")
    return runs.join(fingerprints, on=RUN_KEY, how="inner").select(
        RUN_KEY,
        "case_id",
        "epoch",
        log=pl.concat_str(
            pl.col("system").fill_null(""),
            pl.lit("\x00"),
            pl.col("task").fill_null(""),
            pl.lit("\x00"),
            "fingerprint",
            pl.lit("\x00"),
            pl.when("lm_eval").then(epoch).otherwise(pl.lit("")),
        ),
        label=pl.concat_str(
            pl.col("system").fill_null("?"),
            pl.lit(" / "),
            pl.col("task").fill_null("?"),
            pl.when("lm_eval").then(pl.lit(" / epoch ") + epoch).otherwise(pl.lit("")),
        ),
    )


def _recorded_aggregates(reported: pl.DataFrame, logs: pl.DataFrame) -> pl.DataFrame:
    """Return each recorded number once per log, with what it would be recomputed as.

    Columns ``log, name, value, outcome, stat, reducer`` (every parse of the name: inspect_ai's and lm-eval's;
    ``reducer`` the one the log recorded for the score, null for the mean).
    """
    numbers = (
        reported.filter(pl.col("value").is_not_null())
        .join(logs.select(RUN_KEY, "log"), on=RUN_KEY)
        .unique(["log", "name"], keep="first")
        .select("log", "name", "value")
    )
    reducers = (
        reported.filter(pl.col("name").str.ends_with("/reducer") & pl.col("text").is_not_null())
        .join(logs.select(RUN_KEY, "log"), on=RUN_KEY)
        .unique(["log", "name"], keep="first")
        .select("log", label=pl.col("name").str.strip_suffix("/reducer"), reducer="text")
    )
    inspect = numbers.with_columns(parsed=pl.col("name").str.extract_groups(_INSPECT_NAME)).unnest("parsed")
    inspect = inspect.join(reducers, on=["log", "label"], how="left").select(
        "log", "name", "value", "outcome", "stat", "reducer"
    )
    lm = numbers.with_columns(parsed=pl.col("name").str.extract_groups(_LM_EVAL_NAME)).unnest("parsed")
    lm = lm.select(
        "log",
        "name",
        "value",
        outcome=pl.concat_str("metric", pl.lit(","), "filter"),
        stat=pl.when(pl.col("se").is_not_null()).then(pl.lit("stderr")).otherwise(pl.lit("mean")),
        reducer=pl.lit(None, pl.String),
    )
    run_level = numbers.filter(pl.col("name").is_in(list(_RUN_LEVEL))).select(
        "log",
        "name",
        "value",
        outcome=pl.lit(""),
        stat=pl.col("name").replace_strict(_RUN_LEVEL, return_dtype=pl.String),
        reducer=pl.lit(None, pl.String),
    )
    candidates = pl.concat([inspect, lm, run_level]).filter(pl.col("outcome").is_not_null())
    return candidates.with_columns(reducer=pl.col("reducer").fill_null("mean"))


def _case_values(values: pl.DataFrame, reducers: pl.DataFrame) -> pl.DataFrame:
    """Return each case's epochs reduced by each reducer a log recorded for the score.

    Columns ``log, outcome, reducer, case_id, value`` (null where the reducer is undefined: pass@k of fewer than k
    epochs).

    inspect_ai's reducers (``inspect_ai.scorer._reducer``), over a case's values in epoch order,
    a pass being a value of at least 1 (their ``value=1.0`` threshold):

    * ``mean``, ``median``, ``max``: those of the values;
    * ``mode``: the most frequent value, a tie to the one of the earliest epoch (``Counter.most_common``
      keeps first-seen order); the values are our numbers, so inspect_ai's "I" and "N", both 0, are one;
    * ``at_least_k``: 1 when at least ``k`` epochs passed, else 0;
    * ``pass_at_k``, ``pass_k_k``: pass@k and pass^k of ``n`` epochs with ``c`` passes
      (:mod:`mas_eval.metrics.outcomes.epochs`).
    """
    value = pl.col("value")
    keys = ["log", "outcome", "case_id"]
    stats = values.group_by(keys).agg(
        n=pl.len().cast(pl.Int64),
        c=(value >= 1.0).sum().cast(pl.Int64),
        mean=value.mean(),
        median=value.median(),
        max=value.max(),
    )
    counted = values.group_by([*keys, "value"]).agg(times=pl.len(), first=pl.col("epoch").min())
    mode = (
        counted.sort([*keys, "times", "first"], descending=[False, False, False, True, False])
        .group_by(keys)
        .agg(mode=value.first())
    )
    stats = stats.join(mode, on=keys, how="left")
    parsed = reducers.with_columns(parts=pl.col("reducer").str.extract_groups(_REDUCERS)).unnest("parts")
    table = stats.join(parsed, on=["log", "outcome"], how="inner")
    kind = pl.coalesce("plain", "counted")
    k = pl.col("k").cast(pl.Int64).fill_null(1)
    n, c = table["n"].to_numpy(), table["c"].to_numpy()
    ks = table.select(k).to_series().to_numpy()
    ratios = pl.DataFrame(
        {
            "pass_at": pl.Series(pass_at(n, c, ks), nan_to_null=True),
            "pass_k": pl.Series(pass_hat(n, c, ks), nan_to_null=True),
        }
    )
    table = pl.concat([table, ratios], how="horizontal")
    reduced = (
        pl.when(kind == "mean")
        .then("mean")
        .when(kind == "median")
        .then("median")
        .when(kind == "max")
        .then("max")
        .when(kind == "mode")
        .then("mode")
        .when(kind == "at_least")
        .then((pl.col("c") >= k).cast(pl.Float64))
        .when(kind == "pass_at")
        .then("pass_at")
        .when(kind == "pass_k")
        .then("pass_k")
    )
    return table.filter(kind.is_not_null()).select("log", "outcome", "reducer", "case_id", value=reduced)


def _recomputed_aggregates(outcomes: pl.DataFrame, logs: pl.DataFrame, reducers: pl.DataFrame) -> pl.DataFrame:
    """Every statistic of each log's outcomes: ``log, outcome, stat, reducer, recomputed``.

    A case's value is its epochs reduced by each reducer the log recorded for the score (the
    mean when it recorded none: :func:`_case_values`); over the ``n`` cases with a value, mean,
    ``std`` (ddof 1; 0 when ``n < 2``), ``var`` (likewise), ``stderr = std / sqrt(n)``, and
    ``scored_samples = n``.
    """
    values = outcomes.select(RUN_KEY, outcome="name", value="value").join(logs, on=RUN_KEY)
    cases = _case_values(values, reducers).drop_nulls("value")
    value = pl.col("value")
    n = pl.len()
    spread = pl.when(n >= 2)
    stats = cases.group_by("log", "outcome", "reducer").agg(
        accuracy=value.mean(),
        mean=value.mean(),
        std=spread.then(value.std(ddof=1)).otherwise(0.0),
        var=spread.then(value.var(ddof=1)).otherwise(0.0),
        stderr=spread.then(value.std(ddof=1) / n.sqrt()).otherwise(0.0),
        scored_samples=n.cast(pl.Float64),
    )
    in_log = logs.group_by("log").agg(cases=pl.col("case_id").n_unique().cast(pl.Float64))
    stats = stats.join(in_log, on="log").with_columns(unscored_samples=pl.col("cases") - pl.col("scored_samples"))
    stats = stats.drop("cases")
    per_outcome = stats.unpivot(index=["log", "outcome", "reducer"], variable_name="stat", value_name="recomputed")
    per_log = logs.group_by("log").agg(recomputed=pl.len().cast(pl.Float64))
    per_log = per_log.select(
        "log", outcome=pl.lit(""), reducer=pl.lit("mean"), stat=pl.lit("runs"), recomputed="recomputed"
    )
    return pl.concat([per_outcome.select(per_log.columns), per_log])


def _recorded_aggregate_rows(ds: Dataset) -> pl.DataFrame:
    """Return the ``reported`` rows of the logs' aggregates; raise :class:`SchemaError` if there are none."""
    reported = (
        ds.collect("reported")
        .filter(pl.col("source") == AGGREGATE_SOURCE)
        .with_columns(pl.col(RUN_KEY).cast(pl.String))
    )
    if reported.is_empty():
        msg = (
            f"{ds.source or 'the Dataset'} has no aggregates in 'reported' (source {AGGREGATE_SOURCE!r}); "
            "ingest inspect_ai logs or lm-eval results with their adapter (mas-eval ingest --format inspect or lm-eval)"
        )
        raise SchemaError(msg)
    return reported


def _task_info(ds: Dataset, logs: pl.DataFrame) -> pl.DataFrame:
    """Return the ``reported`` rows of source ``task`` per log (``log, name, value, text``), first of each name."""
    return (
        ds.collect("reported")
        .filter(pl.col("source") == "task")
        .with_columns(pl.col(RUN_KEY).cast(pl.String))
        .join(logs.select(RUN_KEY, "log"), on=RUN_KEY)
        .unique(["log", "name"], keep="first", maintain_order=True)
        .select("log", "name", "value", "text")
    )


def _compared_rows(compared: pl.DataFrame, logs: pl.DataFrame, tolerance: float) -> pl.DataFrame:
    """Return one row per compared aggregate: the recorded value beside the recomputed one, ``ok`` when they agree."""
    first_run = logs.group_by("log").agg(pl.col(RUN_KEY).min(), pl.col("label").first())
    counted = pl.col("stat").is_in(list(_COUNTS))
    a, b = pl.col("value"), pl.col("recomputed")

    def near(recorded: pl.Expr) -> pl.Expr:
        return (recorded - b).abs() <= tolerance * pl.max_horizontal(pl.lit(1.0), recorded.abs(), b.abs())

    # An accuracy or mean recorded in percent (R's vitals writes 100 for 1): reproduced as such, and said.
    percent = ~counted & pl.col("stat").is_in(_PERCENT_STATS) & (a.abs() > 1) & ~near(a) & near(a / 100)
    return (
        compared.join(first_run, on="log")
        .select(
            RUN_KEY,
            metric="name",
            basis=pl.when(percent).then(pl.lit(PERCENT_BASIS)).otherwise(pl.lit("outcomes")),
            item="label",
            recorded=_text(a),
            recomputed=_text(b),
            ok=pl.when(counted).then(a == b).otherwise(near(a) | percent).fill_null(False),
            tolerance=pl.when(counted).then(pl.lit(None, pl.Float64)).otherwise(pl.lit(tolerance)),
        )
        .sort(RUN_KEY, "metric")
    )


def _not_compared(
    reported: pl.DataFrame,
    logs: pl.DataFrame,
    recorded: pl.DataFrame,
    apart: pl.DataFrame,
    compared: pl.DataFrame,
) -> pl.DataFrame:
    """Return, per recorded number left uncompared, how many logs hold it and why it was left."""
    all_numbers = reported.filter(pl.col("value").is_not_null()).join(logs.select(RUN_KEY, "log"), on=RUN_KEY)
    all_numbers = pl.concat([all_numbers.select("log", "name").unique(), apart.select("log", "name")]).unique()
    left = all_numbers.join(compared.select("log", "name"), on=["log", "name"], how="anti")
    unsupported = (
        recorded.filter(~pl.col("reducer").str.contains(_REDUCERS))
        .select("log", "name", reason=pl.lit("reducer ") + pl.col("reducer") + pl.lit(" is not recomputed"))
        .unique(["log", "name"])
    )
    explained = pl.concat([apart, unsupported.join(apart, on=["log", "name"], how="anti")])
    return (
        pl.concat(
            [
                left.join(explained.select("log", "name"), on=["log", "name"], how="anti").with_columns(
                    reason=pl.lit("no outcome or statistic recomputes it")
                ),
                explained,
            ]
        )
        .group_by("name", "reason")
        .agg(logs=pl.len().cast(pl.UInt32))
        .select(metric="name", logs="logs", reason="reason")
        .sort("metric")
        .cast(_NOT_COMPARED)
    )


def _lm_eval_apart(
    reported: pl.DataFrame, logs: pl.DataFrame, task_info: pl.DataFrame, recomputed: pl.DataFrame
) -> pl.DataFrame:
    """lm-eval's recorded numbers that are not recomputed, each with its reason: ``log, name, reason``.

    * a metric lm-eval aggregates other than by the mean (its task's ``aggregation.<metric>``), and
      the standard error it records of such a metric (a bootstrap, or none);
    * the standard error of a ``nanmean`` (a bootstrap);
    * a number recorded as text (``"N/A"``: a standard error lm-eval did not compute);
    * every metric of a log whose samples hold other than the documents lm-eval scored
      (``n-samples.effective``, itself then a disagreement): its numbers are over other documents;
    * ``n-samples.original``: the task's documents, of which lm-eval scored ``n-samples.effective`` (fewer
      in a ``--limit`` run), the count compared.
    """
    named = reported.join(logs.select(RUN_KEY, "log"), on=RUN_KEY).unique(["log", "name"], keep="first")
    parsed = named.with_columns(parsed=pl.col("name").str.extract_groups(_LM_EVAL_NAME)).unnest("parsed")
    parsed = parsed.filter(pl.col("metric").is_not_null()).select("log", "name", "metric", "se", "value", "text")
    aggregation = task_info.filter(pl.col("name").str.starts_with("aggregation.")).select(
        "log", metric=pl.col("name").str.strip_prefix("aggregation."), aggregation="text"
    )
    iters = task_info.filter(pl.col("name") == "bootstrap_iters").select("log", iters="value")
    parsed = parsed.join(aggregation, on=["log", "metric"], how="left").join(iters, on="log", how="left")
    agg, se = pl.col("aggregation"), pl.col("se").is_not_null()
    described = agg.replace_strict(
        _LM_EVAL_AGGREGATIONS, default=pl.lit("the task's own aggregation function ") + agg, return_dtype=pl.String
    )
    resamples = pl.col("iters").cast(pl.Int64).cast(pl.String).fill_null("bootstrap_iters")
    not_mean = agg.is_not_null() & ~agg.is_in(_LM_EVAL_MEANS)
    reason = (
        pl.when(pl.col("value").is_null() & pl.col("text").is_not_null())
        .then(
            pl.lit("recorded as '")
            + pl.col("text")
            + pl.when(se & (pl.col("iters") == 0))
            .then(pl.lit("': lm-eval computed no standard error (bootstrap_iters 0)"))
            .when(se & not_mean & ~agg.is_in(_BOOTSTRAPPED))
            .then(pl.lit("': lm-eval has no standard error for ") + described)
            .when(se)
            .then(pl.lit("': lm-eval computed no standard error"))
            .otherwise(pl.lit("', not a number"))
        )
        .when(not_mean & ~se)
        .then(pl.lit("not the mean of per-document values: ") + described + pl.lit("; not recomputed"))
        .when((not_mean | (agg == "nanmean")) & se & agg.is_in(_BOOTSTRAPPED))
        .then(
            pl.lit("a bootstrap standard error (lm-eval's bootstrap_stderr, ")
            + resamples
            + pl.lit(" resamples) of ")
            + agg
            + pl.lit("; not recomputed")
        )
        .when(not_mean & se)
        .then(pl.lit("a standard error of ") + described + pl.lit(", which lm-eval does not derive from the mean"))
    )
    by_kind = parsed.select("log", "name", reason=reason).filter(pl.col("reason").is_not_null())
    runs = recomputed.filter(pl.col("stat") == "runs").select("log", runs="recomputed")
    counts = task_info.filter(pl.col("name") == _SCORED).select("log", scored="value").join(runs, on="log")
    short = counts.filter(pl.col("scored") != pl.col("runs"))
    over_others = (
        parsed.filter(pl.col("value").is_not_null())
        .join(short, on="log")
        .select(
            "log",
            "name",
            reason=pl.format(
                "over the {} documents lm-eval scored, of which the samples hold {} (see n-samples.effective); not "
                "recomputed",
                pl.col("scored").cast(pl.Int64),
                pl.col("runs").cast(pl.Int64),
            ),
        )
    )
    original = task_info.filter(pl.col("name") == "n-samples.original").join(
        task_info.filter(pl.col("name") == _SCORED).select("log", scored="value"), on="log"
    )
    limited = original.select(
        "log",
        "name",
        reason=pl.when(pl.col("value") != pl.col("scored"))
        .then(
            pl.format(
                "the task's documents before --limit; lm-eval scored {} of them (n-samples.effective)",
                pl.col("scored").cast(pl.Int64),
            )
        )
        .otherwise(pl.lit("the task's documents, every one of which lm-eval scored: n-samples.effective is compared")),
    )
    apart = pl.concat([over_others, by_kind.join(over_others, on=["log", "name"], how="anti"), limited])
    return apart.unique(["log", "name"], keep="first", maintain_order=True)


def reproduce_aggregates(
    ds: Dataset, *, tolerance: float = 1e-9, progress: Callable[[str], object] | None = None
) -> Reproduction:
    """Recompute, log by log, each aggregate a log recorded (``reported``, source ``"results"``) from ``outcomes``.

    Parameters
    ----------
    ds
        A Dataset with the aggregates its log adapter kept in ``reported`` and, unless its logs
        scored nothing, ``outcomes`` (``mas-eval ingest --format inspect`` or ``--format lm-eval``).
    tolerance
        A statistic is reproduced when ``|recorded - recomputed| <= tolerance * max(1, |recorded|,
        |recomputed|)``: relative above 1, absolute below (a stderr near 0). Counts must be equal.
    progress
        Called with each step's name as it starts.

    Returns
    -------
    Reproduction
        ``summary`` one row per recorded name (``basis`` ``"outcomes"``, or
        :data:`PERCENT_BASIS` for an accuracy or mean recorded in percent), ``disagreements`` one
        row per log and name not reproduced, ``not_compared`` the recorded numbers nothing
        recomputes, with why.

    Raises
    ------
    SchemaError
        The Dataset has no ``reported`` aggregates.

    Notes
    -----
    A log is the runs of one system and task that carry the same recorded aggregates (adapters
    repeat them on each run of the log; for lm-eval, also one ``epoch``, i.e. one results file).
    Over its ``n`` cases, ``x_i`` a case's value: its epochs' ``outcomes.value`` reduced by the
    reducer inspect_ai recorded for the score (``<score>/reducer``: ``mean`` when none is
    recorded, ``median``, ``mode``, ``max``, ``at_least_k``, ``pass_at_k``, ``pass_k_k``; see
    :func:`_case_values`):

    * inspect_ai ``<score>/accuracy`` and ``<score>/mean``, lm-eval ``<metric>,<filter>``:
      ``mean(x)``; the mean over runs when every case ran equally often
      (inspect_ai ``scorer/_metrics``, lm-eval ``api/metrics.mean``); recorded in percent
      (R's vitals writes 100 for 1) it is reproduced when it is 100 times that, and said so;
    * ``<score>/stderr``, ``<metric>_stderr,<filter>``: ``std(x, ddof=1) / sqrt(n)`` — inspect_ai's
      ``stderr()`` without ``cluster``, lm-eval's ``mean_stderr``: the standard error of the
      case means, the runs of a case being one cluster;
    * ``<score>/std``, ``<score>/var``: ``std(x, ddof=1)``, ``var(x, ddof=1)`` (0 below two cases);
    * ``<score>/scored_samples``: ``n``; ``<score>/unscored_samples``: the log's other cases;
      ``total_samples`` and ``completed_samples`` (inspect), ``sample_len`` (lm-eval): the runs.

    A lm-eval metric it aggregates other than by the mean (``perplexity`` = exp(-mean)) is listed
    as a disagreement: our mean is not its number. Metrics of no recorded outcome
    (``bootstrap_stderr``, a custom metric) and reducers not recomputed (``majority``, a custom
    one) are in ``not_compared``.
    """
    if "reported" not in ds:
        msg = (
            f"{ds.source or 'the Dataset'} has no 'reported' table: no log's aggregates to recompute; "
            "ingest the logs with their adapter (mas-eval ingest --format inspect or --format lm-eval)"
        )
        raise SchemaError(msg)
    step = progress if progress is not None else (lambda _name: None)
    step("comparing")
    reported = _recorded_aggregate_rows(ds)
    runs = ds.collect("runs")
    epoch = pl.col("epoch") if "epoch" in runs.columns else pl.lit(None, pl.Int64).alias("epoch")
    runs = runs.select(pl.col(RUN_KEY).cast(pl.String), "system", "task", "case_id", epoch)
    logs = _logs(reported, runs)
    task_info = _task_info(ds, logs)
    scored = task_info.filter(pl.col("name") == _SCORED).select(
        "log", "name", "value", outcome=pl.lit(""), stat=pl.lit("runs"), reducer=pl.lit("mean")
    )
    recorded = pl.concat([_recorded_aggregates(reported, logs), scored])
    reducers = recorded.select("log", "outcome", "reducer").unique()
    # A log without scores (a task without a scorer) still recorded its sample counts.
    outcomes = (
        ds.collect("outcomes").with_columns(pl.col(RUN_KEY).cast(pl.String))
        if "outcomes" in ds
        else pl.DataFrame(schema={RUN_KEY: pl.String, "name": pl.String, "value": pl.Float64})
    )
    recomputed = _recomputed_aggregates(outcomes, logs.select(RUN_KEY, "log", "case_id", "epoch"), reducers)
    apart = _lm_eval_apart(reported, logs, task_info, recomputed)
    reducible = pl.col("reducer").str.contains(_REDUCERS)
    supported = (
        reducible & pl.struct("log", "name").is_in(apart.select(pl.struct("log", "name")).to_series().implode()).not_()
    )
    matched = recorded.join(recomputed, on=["log", "outcome", "reducer", "stat"], how="inner").unique(
        ["log", "name"], keep="first", maintain_order=True
    )
    compared = matched.filter(supported)
    summary, disagreements = _summarised([_compared_rows(compared, logs, tolerance)])
    not_compared = _not_compared(reported, logs, recorded, apart, compared)
    params = {"tolerance": tolerance}
    return Reproduction(
        summary=summary, disagreements=disagreements, preset=None, params=params, not_compared=not_compared
    )


def _nothing_recorded(ds: Dataset) -> str:
    """Return why a Dataset without a ``reported`` table has nothing to reproduce, and what would.

    Said by the formats its runs came from (:attr:`Dataset.formats <mas_eval.Dataset.formats>`).
    """
    where = ds.source or "the Dataset"
    readers = (
        "Local-DDx result files, inspect_ai logs or lm-eval results (mas-eval ingest --format lddx, inspect or lm-eval)"
    )
    recording = [name for name in ds.formats if name in _RECORDING_FORMATS]
    if recording:
        again = " or ".join(f"--format {_RECORDING_FORMATS[name]}" for name in recording)
        return (
            f"{where} has no 'reported' table, though its runs come from {', '.join(recording)}; ingest those files "
            f"again with this version (mas-eval ingest {again} keeps what they recorded)"
        )
    if ds.formats:
        return (
            f"{where} has no 'reported' table: its runs were ingested from {', '.join(ds.formats)}, which record no "
            f"numbers of their own to recompute; reproduce checks those of {readers}"
        )
    return (
        f"{where} has no 'reported' table: nothing recorded to compare with; reproduce checks the numbers of {readers}"
    )


def reproduce(
    ds: Dataset,
    preset: str = "lddx-v6",
    *,
    scores: Scores | None = None,
    tolerance: float = 1e-6,
    aggregate_tolerance: float = 1e-9,
    progress: Callable[[str], object] | None = None,
    **overrides: Any,
) -> Reproduction:
    """Score ``ds`` under ``preset`` and compare every number its ``reported`` table recorded.

    A ``reported`` table of log aggregates only (inspect_ai's, lm-eval's: source ``"results"``)
    is compared by :func:`reproduce_aggregates`, nothing being scored (``preset``, ``scores`` and
    ``overrides`` are then unused, and the result's ``preset`` is None); one that holds both
    Local-DDx's numbers and such aggregates gives both comparisons, in one summary.

    Parameters
    ----------
    ds
        A Dataset with a ``reported`` table (``mas-eval ingest --format lddx``, ``--format inspect``
        or ``--format lm-eval`` writes one).
    preset
        The preset to score with; ``"lddx-v6"`` is Local-DDx's own rules for its v6 result files,
        ``"lddx-v8"`` those of its v8 code (v8/Modules/v8_4) for the v8_5 files.
    scores
        Scores already computed from ``ds`` (skips scoring).
    tolerance
        Largest absolute difference for a score to count as reproduced (counts must be equal).
    aggregate_tolerance
        The relative tolerance of a log's aggregates (:func:`reproduce_aggregates`' ``tolerance``).
    progress
        Called with each step's name as it starts (as :func:`~mas_eval.score` does).
    **overrides
        Parameters passed to :func:`~mas_eval.score`.

    Returns
    -------
    Reproduction
        ``summary`` per metric and ``disagreements`` per item.

    Raises
    ------
    SchemaError
        The Dataset has no ``reported`` table (nothing was recorded to compare with).
    """
    if "reported" not in ds:
        raise SchemaError(_nothing_recorded(ds))
    sources = ds.scan("reported").select(pl.col("source").unique().sort()).collect()["source"].to_list()
    others = [source for source in sources if source not in _LOG_SOURCES]
    if others and not set(others) & set(_LDDX_SOURCES):
        # Not Local-DDx's numbers: nothing to score them against.
        known = f"; the Dataset was ingested from {', '.join(ds.formats)}" if ds.formats else ""
        shown = ", ".join(map(repr, others[:5])) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        if AGGREGATE_SOURCE not in sources:
            msg = (
                f"{ds.source or 'the Dataset'}: its 'reported' table holds source(s) {shown}, which reproduce does not "
                f"read{known}; it recomputes Local-DDx's numbers (sources {', '.join(_LDDX_SOURCES)}: mas-eval ingest "
                "--format lddx) and a log's own aggregates (source 'results': --format inspect or lm-eval)"
            )
            raise SchemaError(msg)
    aggregates = None
    if AGGREGATE_SOURCE in sources:
        aggregates = reproduce_aggregates(ds, tolerance=aggregate_tolerance, progress=progress)
        if not set(others) & set(_LDDX_SOURCES):
            unread = pl.DataFrame(
                {"metric": [f"source {source!r}" for source in others], "logs": [0] * len(others),
                 "reason": ["a source of the reported table that reproduce does not read"] * len(others)},
                schema=_NOT_COMPARED,
            )  # fmt: skip
            aggregates.not_compared = pl.concat([aggregates.not_compared, unread])
            return aggregates
    step = progress if progress is not None else (lambda _name: None)
    if scores is None:
        scores = score(ds, preset, progress=step, **overrides)
    step("comparing")
    if "tp" not in scores.runs.columns:
        why = scores.skipped.get("diagnosis", "it did not run")
        msg = (
            f"{ds.source or 'the Dataset'}: its 'reported' table holds Local-DDx's numbers, but the diagnosis family "
            f"that recomputes them was not scored ({why}); ingest the Local-DDx result files whole "
            "(mas-eval ingest --format lddx)"
        )
        raise SchemaError(msg)
    reported = ds.collect("reported").with_columns(pl.col(RUN_KEY).cast(pl.String))
    rules = scores.params.get("label_rules", "lddx-v6" if preset == "lddx-v6" else "spec")
    parts = [
        *_run_metrics(reported, scores, rules, tolerance),
        *_collaboration(reported, scores, tolerance),
        *_agreement(ds, reported, scores.params),
    ]
    summary, disagreements = _summarised(parts)
    if aggregates is None:
        return Reproduction(
            summary=summary, disagreements=disagreements, preset=preset, params=scores.params, scores=scores
        )
    return Reproduction(
        summary=pl.concat([summary, aggregates.summary]),
        disagreements=pl.concat([disagreements, aggregates.disagreements]),
        preset=preset,
        params=scores.params | {"aggregate_tolerance": aggregate_tolerance},
        scores=scores,
        not_compared=aggregates.not_compared,
    )
