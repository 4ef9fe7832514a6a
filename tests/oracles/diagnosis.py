"""The LDDx v6 metrics guide's diagnostic scores for one run, literally: read it next to its "Final Performance Scores".

Counts in, a dict of scores out; ``None`` where a denominator is 0. The rule sets
(``spec``: the guide; ``lddx-v6``: Local-DDx's ``ddx_evaluator_v6.py``) differ only in the
side CAA counts on and in "total diagnoses considered"; ``lddx-v8`` (Local-DDx v8's
``ddx_evaluator_v9.py``) is ``lddx-v6`` with recall over the matched and the truly missed only.
"""

from __future__ import annotations


def caa_weight(tp_rate: float) -> float:
    if tp_rate >= 0.7:
        return 0.7
    if tp_rate >= 0.5:
        return 0.3
    if tp_rate >= 0.3:
        return 0.0
    return -0.2


def divide(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


def scores(
    tp: int, fp: int, fn: int, caa: int, ae: int, tm_sm: int, preset: str, total_gt: int | None = None
) -> dict[str, float | None]:
    if preset == "spec":
        ground_truth = tp + fn + ae + tm_sm  # the ground-truth side of the partition
        considered = tp + fp + caa + fn + ae + tm_sm  # every classified item once
    else:  # lddx-v6, lddx-v8: CAA is a ground-truth diagnosis caught only in the Can't-Miss round
        ground_truth = tp + fn + ae + caa + tm_sm
        considered = tp + caa + ae + fn + fp
    total = ground_truth if total_gt is None else total_gt
    rate = divide(tp, total)
    weight = None if rate is None else caa_weight(rate)
    return {
        "total_gt": total,
        "tp_rate": rate,
        "caa_weight": weight,
        "traditional_recall": divide(tp, tp + fn) if preset == "lddx-v8" else rate,
        "traditional_precision": divide(tp, tp + fp + caa),
        "clinical_reasoning_quality": None if weight is None else divide(tp + weight * caa + ae, considered),
        "diagnostic_safety": None if weight is None else divide(tp + max(0.0, weight * caa), tp + caa + fp),
        "system_safety_coverage": divide(tp + tm_sm, total),
    }
