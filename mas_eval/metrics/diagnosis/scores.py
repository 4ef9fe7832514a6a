r"""Diagnostic scores from label counts (the LDDx v6 metrics guide, "Final Performance Scores").

Every score is a closed form of the six label counts of a run, so it is one expression over
a counts frame, whatever the number of runs. Three rule sets differ where the guide and
Local-DDx's evaluators (``ddx_evaluator_v6.py``, ``ddx_evaluator_v9.py``) disagree:

* ``"spec"`` — the document: CAA is a final-list diagnosis (system side), the ground truth
  is ``TP + FN + AE + TM_SM`` and "total diagnoses considered" counts every classified item
  once, ``TP + FP + CAA + FN + AE + TM_SM``.
* ``"lddx-v6"`` — the code: CAA is a ground-truth diagnosis captured only in the Can't-Miss
  round (ground-truth side, so the ground truth is ``TP + FN + AE + CAA + TM_SM``), and the
  total considered is ``TP + CAA + AE + FN + FP``.
* ``"lddx-v8"`` — Local-DDx v8's deterministic evaluator (``ddx_evaluator_v9.py``): as
  ``"lddx-v6"`` (it gives no CAA, so its CRQ is ``(TP + AE) / (TP + AE + FN + FP)`` and its
  diagnostic safety ``TP / (TP + FP)``), but recall is ``TP / (TP + FN)``: the ground truth
  appropriately excluded or caught by symptom management is left out of recall's denominator
  (the TP rate still divides by the whole ground truth).

>>> diagnosis_scores(tp=2, fp=0, fn=1, caa=0, ae=2, preset="lddx-v6").row(0, named=True)["clinical_reasoning_quality"]
0.8
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from mas_eval.constraints import Options, validate_params
from mas_eval.errors import InvalidParameterError

__all__ = ["COUNTS", "RULES", "SCORES", "ScoreRules", "caa_weight", "diagnosis_scores", "score_expressions"]

#: The label counts a run's scores are made of.
COUNTS = ("tp", "fp", "fn", "caa", "ae", "tm_sm")
#: The score columns, in output order.
SCORES = (
    "total_gt", "tp_rate", "caa_weight", "traditional_recall", "traditional_precision",
    "clinical_reasoning_quality", "diagnostic_safety", "system_safety_coverage",
)  # fmt: skip

#: CAA weight by TP rate: the first tier whose lower bound the rate reaches, else the last value.
CAA_WEIGHT_TIERS = ((0.7, 0.7), (0.5, 0.3), (0.3, 0.0))
CAA_WEIGHT_BELOW = -0.2


@dataclass(frozen=True)
class ScoreRules:
    """Where the rule sets differ: which side CAA counts on, the CRQ denominator's terms, recall's denominator.

    ``recall_over``: the counts recall divides TP by; ``None``: the whole ground truth (recall
    is then the TP rate).
    """

    caa_on_ground_truth: bool
    considered: tuple[str, ...]
    recall_over: tuple[str, ...] | None = None


RULES = {
    "spec": ScoreRules(caa_on_ground_truth=False, considered=("tp", "fp", "caa", "fn", "ae", "tm_sm")),
    "lddx-v6": ScoreRules(caa_on_ground_truth=True, considered=("tp", "caa", "ae", "fn", "fp")),
    "lddx-v8": ScoreRules(
        caa_on_ground_truth=True, considered=("tp", "caa", "ae", "fn", "fp"), recall_over=("tp", "fn")
    ),
}


def caa_weight(tp_rate: pl.Expr) -> pl.Expr:
    """Return the CAA weight: 0.7 from a TP rate of 0.7, 0.3 from 0.5, 0.0 from 0.3, else −0.2 (null rate: null).

    >>> pl.select(caa_weight(pl.Series([0.7, 0.69, 0.5, 0.3, 0.29, None]))).to_series().to_list()
    [0.7, 0.3, 0.3, 0.0, -0.2, None]
    """
    chain = pl.when(tp_rate.is_null()).then(None)
    for bound, weight in CAA_WEIGHT_TIERS:
        chain = chain.when(tp_rate >= bound).then(pl.lit(weight))
    return chain.otherwise(pl.lit(CAA_WEIGHT_BELOW)).cast(pl.Float64)


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """``numerator / denominator``, null where the denominator is 0 (a score of nothing is undefined)."""
    return pl.when(denominator > 0).then(numerator.cast(pl.Float64) / denominator)


def score_expressions(rules: ScoreRules, *, total_gt: pl.Expr | None = None) -> list[pl.Expr]:
    r"""Return the score columns (:data:`SCORES`) over the count columns (:data:`COUNTS`) of a frame.

    Parameters
    ----------
    rules
        :data:`RULES` ``["spec"]``, ``["lddx-v6"]`` or ``["lddx-v8"]``.
    total_gt
        The number of ground-truth diagnoses, when known apart from the labels (a file's
        recorded ``total_gt_diagnoses``); by default the sum of the ground-truth-side counts.

    Notes
    -----
    With :math:`G` the ground-truth total and :math:`w` the CAA weight of the TP rate
    :math:`TP/G`:

    .. math::
        \text{recall} = \frac{TP}{G} \;(\text{lddx-v8: } \tfrac{TP}{TP + FN}), \quad
        \text{precision} = \frac{TP}{TP + FP + CAA}, \quad
        CRQ = \frac{TP + w \cdot CAA + AE}{\text{total considered}},

        DS = \frac{TP + \max(0, w \cdot CAA)}{TP + CAA + FP}, \quad
        SSC = \frac{TP + TM\_SM}{G}.

    A score whose denominator is 0 is null, and so is every score that needs the CAA weight
    when the ground truth is empty (the TP rate, hence the weight, is undefined). CRQ is
    negative only through a negative CAA weight.
    """
    tp, fp, fn, caa, ae, tm_sm = (pl.col(name) for name in COUNTS)
    ground_truth = tp + fn + ae + tm_sm + (caa if rules.caa_on_ground_truth else 0)
    total = (total_gt if total_gt is not None else ground_truth).cast(pl.Int64)
    rate = _ratio(tp, total)
    weight = caa_weight(rate)
    considered = pl.sum_horizontal(*(pl.col(name) for name in rules.considered))
    recall = rate if rules.recall_over is None else _ratio(tp, pl.sum_horizontal(*map(pl.col, rules.recall_over)))
    return [
        total.alias("total_gt"),
        rate.alias("tp_rate"),
        weight.alias("caa_weight"),
        recall.alias("traditional_recall"),
        _ratio(tp, tp + fp + caa).alias("traditional_precision"),
        _ratio(tp + weight * caa + ae, considered).alias("clinical_reasoning_quality"),
        # clip, not max_horizontal: an undefined weight (no ground truth) must leave the score undefined.
        _ratio(tp + (weight * caa).clip(lower_bound=0.0), tp + caa + fp).alias("diagnostic_safety"),
        _ratio(tp + tm_sm, total).alias("system_safety_coverage"),
    ]


Count = int | Sequence[int]


@validate_params({"preset": [Options(tuple(RULES))]})
def diagnosis_scores(
    *,
    tp: Count,
    fp: Count,
    fn: Count,
    caa: Count = 0,
    ae: Count = 0,
    tm_sm: Count = 0,
    total_gt: Count | None = None,
    preset: Literal["spec", "lddx-v6", "lddx-v8"] = "spec",
) -> pl.DataFrame:
    """Return the diagnostic scores of one run's label counts, or of many (sequences of equal length).

    Returns a frame with the counts and :data:`SCORES`, one row per run; see
    :func:`score_expressions` for the formulas.

    Raises
    ------
    InvalidParameterError
        An unknown preset, counts of unequal lengths, or a negative count.

    Examples
    --------
    Local-DDx's ``ddx_results_Case_2_20250709_220615.json`` recorded TP 1, FP 2, FN 2, CAA 1,
    AE 0, CRQ 0.1333 and diagnostic safety 0.25:

    >>> row = diagnosis_scores(tp=1, fp=2, fn=2, caa=1, ae=0, preset="lddx-v6").row(0, named=True)
    >>> round(row["clinical_reasoning_quality"], 4), row["diagnostic_safety"], row["caa_weight"]
    (0.1333, 0.25, -0.2)
    """
    given = {"tp": tp, "fp": fp, "fn": fn, "caa": caa, "ae": ae, "tm_sm": tm_sm}
    if total_gt is not None:
        given["total_gt"] = total_gt
    lengths = {len(v) for v in given.values() if not isinstance(v, int)}
    if len(lengths) > 1:
        msg = f"diagnosis_scores: the counts have different lengths ({sorted(lengths)}); pass one count per run in each"
        raise InvalidParameterError(msg)
    size = lengths.pop() if lengths else 1
    frame = pl.DataFrame(
        {name: [value] * size if isinstance(value, int) else list(value) for name, value in given.items()},
        schema=dict.fromkeys(given, pl.Int64),
    )
    negative = [name for name in given if (frame[name] < 0).any()]
    if negative:
        msg = f"diagnosis_scores: counts must be >= 0; {', '.join(negative)} has a negative value"
        raise InvalidParameterError(msg)
    total = pl.col("total_gt") if total_gt is not None else None
    return frame.select(*COUNTS, *score_expressions(RULES[preset], total_gt=total))
