"""Checks and small tables every report section shares."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from mas_eval.constraints import DATAFRAME, NONE, TEXTS, validate_params
from mas_eval.metrics.family import headline_columns

__all__ = ["has_values", "repeats_cases", "system_means"]


def has_values(frame: pl.DataFrame, column: str) -> bool:
    """Check whether ``frame`` has ``column`` with at least one value that is not null.

    >>> frame = pl.DataFrame({"dqs": [None, 0.5], "cost": [None, None]})
    >>> has_values(frame, "dqs"), has_values(frame, "cost"), has_values(frame, "tokens")
    (True, False, False)
    """
    return column in frame.columns and frame[column].drop_nulls().len() > 0


def repeats_cases(runs: pl.DataFrame) -> bool:
    """Whether some system ran some case more than once (epochs): its runs of a case are then not independent.

    >>> repeats_cases(pl.DataFrame({"system": ["mas", "mas"], "case_id": ["a", "b"]}))
    False
    """
    if not {"system", "case_id"} <= set(runs.columns):
        return False
    return runs.select(pl.struct("system", "case_id").is_duplicated().any()).item()


@validate_params({"run_metrics": [DATAFRAME], "metrics": [TEXTS, NONE]})
def system_means(run_metrics: pl.DataFrame, metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """Mean of each metric (those present) per system, with the number of runs; one row per system.

    ``metrics`` defaults to the run columns every registered family headlines
    (:func:`~mas_eval.metrics.family.headline_columns`).

    Examples
    --------
    >>> runs = pl.DataFrame({"system": ["mas", "single", "mas"], "dqs": [0.5, 0.25, 1.0]})
    >>> system_means(runs).rows()
    [('mas', 2, 0.75), ('single', 1, 0.25)]
    """
    names = headline_columns() if metrics is None else metrics
    present = [name for name in names if name in run_metrics.columns]
    return (
        run_metrics.group_by("system")
        .agg(pl.len().alias("runs"), *(pl.col(name).cast(pl.Float64).mean() for name in present))
        .sort("system")
    )
