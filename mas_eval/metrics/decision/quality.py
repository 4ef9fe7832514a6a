"""Decision quality score (the crisis-MAS evaluation methodology): the DQS cascade and the ground-truth boost."""

from __future__ import annotations

import numpy as np

__all__ = ["CASCADE", "dqs"]

#: The DQS cascade, in order: (``dqs_method``, the recommended alternative's value it reads).
CASCADE = (("criteria", "criteria_satisfaction"), ("mcda", "mcda"), ("final", "final"))

Nullable = tuple[np.ndarray, np.ndarray]


def dqs(
    chosen: dict[str, Nullable], recommended: Nullable, correct: Nullable, *, gt_boost: float | None
) -> dict[str, Nullable]:
    r"""``dqs_raw``, ``dqs_method`` (its position in :data:`CASCADE`), ``gt_match`` and ``dqs`` per run.

    Parameters
    ----------
    chosen
        Per run, the recommended alternative's ``criteria_satisfaction``, logged ``mcda`` and
        logged ``final`` score, each ``(values, valid)``.
    recommended, correct
        Per run, the alternative codes ``(values, valid)``.
    gt_boost
        ``dqs = max(dqs_raw, gt_boost)`` when the recommendation matches ``correct``; ``None``: no boost.

    Notes
    -----
    ``dqs_raw`` is the first of the recommended alternative's criteria satisfaction, logged
    MCDA score and logged final score that exists; ``dqs_method`` says which. The methodology's
    example :math:`(.90 + .50 + .95)/3 = .783` agrees with its formula. ``gt_match`` is null
    when ``correct`` or ``recommended`` is missing.
    """
    n = len(recommended[0])
    raw, found, method = np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64)
    for position, (_, column) in enumerate(CASCADE):
        values, valid = chosen[column]
        take = valid & ~found
        raw = np.where(take, values, raw)
        method = np.where(take, position, method)
        found |= take
    match_valid = recommended[1] & correct[1]
    match = match_valid & (recommended[0] == correct[0])
    boosted = raw if gt_boost is None else np.where(match & found, np.maximum(raw, gt_boost), raw)
    return {
        "dqs_raw": (raw, found),
        "dqs_method": (method, found),
        "gt_match": (match, match_valid),
        "dqs": (boosted, found),
    }
