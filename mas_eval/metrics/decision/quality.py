"""Decision quality (seed 004, "Decision Quality Score"; SPEC.md §1): the DQS cascade and the ground-truth boost."""

from __future__ import annotations

import polars as pl

from mas_eval.metrics.codes import pack

__all__ = ["CASCADE", "with_dqs"]

_RA = ["run_id", "alternative"]

#: The DQS cascade, in order: (``dqs_method``, the recommended alternative's column it reads).
CASCADE = (("criteria", "criteria_satisfaction"), ("mcda", "mcda"), ("final", "final"))


def with_dqs(
    runs: pl.LazyFrame, alternatives: pl.LazyFrame, alt_scores: pl.LazyFrame, *, gt_boost: float | None
) -> pl.LazyFrame:
    r"""``runs`` with ``dqs_raw``, ``dqs_method``, ``gt_match`` and ``dqs``.

    Parameters
    ----------
    runs
        Table ``runs`` keyed by codes (``run_id``, ``recommended``, ``correct``).
    alternatives
        Per (run, alternative): ``criteria_satisfaction``.
    alt_scores
        Table ``alt_scores`` keyed by codes: the logged ``mcda`` and ``final`` scores.
    gt_boost
        ``dqs = max(dqs_raw, gt_boost)`` when the recommendation matches ``correct``; ``None``: no boost.

    Notes
    -----
    ``dqs_raw`` is the first of the recommended alternative's criteria satisfaction, logged
    MCDA score and logged final score that exists; ``dqs_method`` says which. The seed's
    example :math:`(.90 + .50 + .95)/3 = .783` agrees with its formula. ``gt_match`` is null
    when ``correct`` or ``recommended`` is missing. The recommended alternative's scores join
    ``runs`` itself (no per-run frame joined back).
    """
    chosen = (
        runs.with_columns(_key=pack("run_id", "recommended"))
        .join(alternatives.select("criteria_satisfaction", _key=pack(*_RA)), on="_key", how="left")
        .join(alt_scores.select("mcda", "final", _key=pack(*_RA)), on="_key", how="left")
        .drop("_key")
    )
    raw = pl.coalesce(pl.col(c) for _, c in CASCADE)
    method = pl.when(pl.col(CASCADE[0][1]).is_not_null()).then(pl.lit(CASCADE[0][0]))
    for name, column in CASCADE[1:]:
        method = method.when(pl.col(column).is_not_null()).then(pl.lit(name))
    match = pl.when(pl.col("correct").is_not_null() & pl.col("recommended").is_not_null()).then(
        pl.col("recommended") == pl.col("correct")
    )
    boosted = (
        pl.col("dqs_raw")
        if gt_boost is None
        else pl.when(pl.col("gt_match").fill_null(False) & pl.col("dqs_raw").is_not_null())
        .then(pl.max_horizontal("dqs_raw", pl.lit(gt_boost)))
        .otherwise("dqs_raw")
    )
    return (
        chosen.with_columns(dqs_raw=raw, dqs_method=method.otherwise(None), gt_match=match)
        .with_columns(dqs=boosted)
        .drop(*(column for _, column in CASCADE))
    )
