"""Recomputed against recorded: how often :func:`mas_eval.score` gives the numbers a reference system wrote.

Local-DDx's result files record their own label counts, scores, TempoScores, credibility scores
and the labels its LLM judge gave (ingested into the ``reported`` table by
:mod:`mas_eval.ingest.lddx`). :func:`reproduce` scores the Dataset under a preset and sets every
recorded number beside the recomputed one: counts must be equal, scores within ``tolerance``.
Scores are compared twice: recomputed end to end (from our labels) and recomputed from the
file's own counts, which isolates the formulas from the labelling.

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
from mas_eval.scoring import Scores, score
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import atomic_directory
from mas_eval.storage.provenance import provenance

__all__ = ["COUNT_FIELDS", "SCORE_FIELDS", "Reproduction", "reproduce"]

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
    preset, params
        What the Dataset was scored with.
    scores
        The scores compared.
    """

    summary: pl.DataFrame
    disagreements: pl.DataFrame
    preset: str
    params: dict[str, Any] = field(default_factory=dict)
    scores: Scores | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The summary and disagreements as JSON-ready dicts, with the preset and parameters."""
        return {
            "preset": self.preset,
            "params": self.params,
            "summary": self.summary.to_dicts(),
            "disagreements": self.disagreements.to_dicts(),
        }

    def write(
        self, path: str | Path, *, overwrite: bool = False, dataset: str | Path | None = None, raw_csv: bool = False
    ) -> Path:
        """Write ``summary.csv``, ``disagreements.csv`` and ``reproduction.json`` (both tables, the
        preset, parameters, version and the SHA-256 of ``dataset``'s files) into folder ``path``, atomically.

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
    """``joined`` (``run_id, item, recorded, recomputed``) with ``ok``: equal, or within ``tolerance``."""
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
    """The recorded evaluation fields ``names`` (ours → theirs), one row per run, in our names."""
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


def reproduce(
    ds: Dataset,
    preset: str = "lddx-v6",
    *,
    scores: Scores | None = None,
    tolerance: float = 1e-6,
    progress: Callable[[str], object] | None = None,
    **overrides: Any,
) -> Reproduction:
    """Score ``ds`` under ``preset`` and compare every number its ``reported`` table recorded.

    Parameters
    ----------
    ds
        A Dataset with a ``reported`` table (``mas-eval ingest --format lddx`` writes one).
    preset
        The preset to score with; ``"lddx-v6"`` is Local-DDx's own rules.
    scores
        Scores already computed from ``ds`` (skips scoring).
    tolerance
        Largest absolute difference for a score to count as reproduced (counts must be equal).
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
        msg = (
            f"{ds.source or 'the Dataset'} has no 'reported' table: nothing recorded to compare with; "
            "ingest the reference system's own files (mas-eval ingest --format lddx)"
        )
        raise SchemaError(msg)
    step = progress if progress is not None else (lambda _name: None)
    if scores is None:
        scores = score(ds, preset, progress=step, **overrides)
    step("comparing")
    reported = ds.collect("reported").with_columns(pl.col(RUN_KEY).cast(pl.String))
    rules = scores.params.get("label_rules", "lddx-v6" if preset == "lddx-v6" else "spec")
    parts = [
        *_run_metrics(reported, scores, rules, tolerance),
        *_collaboration(reported, scores, tolerance),
        *_agreement(ds, reported, scores.params),
    ]
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
    return Reproduction(
        summary=summary, disagreements=disagreements, preset=preset, params=scores.params, scores=scores
    )
