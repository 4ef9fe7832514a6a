"""A comparison table in sentences: what the report, the demo and the answers section say of it."""

from __future__ import annotations

import polars as pl

from mas_eval.formatting import correction_name

__all__ = ["after_correction", "correction_of", "findings"]


def findings(comparisons: pl.DataFrame, treatment: str) -> list[str]:
    """One sentence per metric: in how many groups the treatment differs significantly, which way."""
    lines = []
    after = after_correction(comparisons)
    for metric in comparisons["metric"].unique(maintain_order=True).to_list():
        rows = comparisons.filter(pl.col("metric") == metric)
        significant = rows.filter(pl.col("significant").fill_null(False))
        if significant.height == 0:
            lines.append(f"{metric}: no significant difference {after}.")
            continue
        higher = int((significant["difference"] > 0).sum())
        direction = {significant.height: "higher", 0: "lower"}.get(higher, "higher in some and lower in others")
        lines.append(
            f"{metric}: {treatment} is {direction} in {significant.height} of {rows.height} comparison(s) "
            f"{after} (differences {significant['difference'].min():+.3f} to "
            f"{significant['difference'].max():+.3f})."
        )
    return lines


def after_correction(comparisons: pl.DataFrame) -> str:
    """Say which correction the p-values went through: ``after the Holm correction``, or ``without a correction``.

    >>> holm, none = pl.DataFrame({"correction": ["holm"]}), pl.DataFrame({"correction": ["none"]})
    >>> after_correction(holm), after_correction(none)
    ('after the Holm correction', 'without a correction')
    """
    name = correction_of(comparisons)
    return "without a correction" if name == "unadjusted" else f"after the {name} correction"


def correction_of(comparisons: pl.DataFrame) -> str:
    """Return the name of the correction a comparison table's p-values went through (``"adjusted"`` if unknown)."""
    return correction_name(comparisons["correction"]) if "correction" in comparisons.columns else "adjusted"
