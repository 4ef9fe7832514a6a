"""The ``dqs_method`` guard: DQS from different cascade steps (criteria, MCDA, final score) is not comparable."""

from __future__ import annotations

from typing import Any

import polars as pl

from mas_eval.errors import MixedDqsMethodsError
from mas_eval.stats._common import ENGINE, group_label

# MixedDqsMethodsError lives with the other errors; it stays importable from here.
__all__ = ["DQS_METRICS", "MixedDqsMethodsError", "dqs_method_guard"]

#: Metrics produced by the DQS cascade, whose ``dqs_method`` must agree within a comparison.
DQS_METRICS = ("dqs", "dqs_raw")


def dqs_method_guard(
    runs: pl.LazyFrame,
    *,
    keys: list[str],
    system: str,
    names: tuple[str, str],
    dqs_columns: list[str],
    allow: bool,
) -> dict[tuple[Any, ...], str]:
    """Find the groups whose compared DQS values come from more than one ``dqs_method``.

    Raises :class:`MixedDqsMethodsError` naming the groups and each system's methods, unless
    ``allow``; then returns ``{group key: description}`` for the rows' warnings. ``runs`` holds
    the DQS columns under their own names and ``dqs_method``.

    Examples
    --------
    >>> runs = pl.LazyFrame({"task": ["a"] * 4, "system": ["mas", "mas", "single", "single"],
    ...                      "dqs": [0.5, 0.6, 0.4, 0.5], "dqs_method": ["judge", "rubric", "judge", "judge"]})
    >>> dqs_method_guard(runs, keys=["task"], system="system", names=("mas", "single"), dqs_columns=["dqs"],
    ...                  allow=True)
    {('a',): "(task='a') mas: judge, rubric; single: judge"}
    """
    has_value = pl.any_horizontal(pl.col(c).is_not_null() for c in dqs_columns)
    per_system = (
        runs.filter(has_value & pl.col("dqs_method").is_not_null())
        .group_by([*keys, system])
        .agg(pl.col("dqs_method").cast(pl.String).unique().sort().alias("methods"))
        .collect(engine=ENGINE)
    )
    counts = per_system.explode("methods").group_by(keys).agg(pl.col("methods").n_unique().alias("n_methods"))
    per_group = per_system.group_by(keys).agg(pl.struct(system, "methods").alias("detail"))
    mixed = (
        per_group.join(counts, on=keys, how="left", nulls_equal=True)
        .filter(pl.col("n_methods") > 1)
        .sort(keys, nulls_last=True)
    )
    notes: dict[tuple[Any, ...], str] = {}
    # A loop over the few groups whose DQS methods differ, not over runs: it only words the message.
    for row in mixed.iter_rows(named=True):
        key = tuple(row[k] for k in keys)
        detail = "; ".join(
            f"{item[system]}: {', '.join(item['methods'])}"
            for item in sorted(row["detail"], key=lambda item: names.index(item[system]))
        )
        notes[key] = f"{group_label(keys, key)} {detail}"
    if notes and not allow:
        shown = "; ".join(list(notes.values())[:5]) + (f" (and {len(notes) - 5} more)" if len(notes) > 5 else "")
        msg = (
            f"cannot compare {'/'.join(dqs_columns)} of {names[0]!r} and {names[1]!r}: dqs_method differs within "
            f"{len(notes)} group(s): {shown}. DQS from different cascade steps measures different things on "
            f"different scales and is not comparable: rescore so both systems use one method, add "
            f"'dqs_method' to by, or pass allow_mixed_methods=True to compare anyway with a warning"
        )
        raise MixedDqsMethodsError(msg)
    return notes
