r"""Stability of the MCDA ranking's top alternative when the criteria weights move.

``ranking_stability`` (per run, method ``"random"``) is the share of :math:`K` seeded random
weightings under which the run's MCDA score (``mcda``: TOPSIS closeness or the weighted sum)
still ranks first the alternative it ranks first under the unperturbed weights. Draw :math:`k`
multiplies each criterion weight by :math:`1 + \delta (2u_{ck} - 1)`, :math:`u_{ck}` uniform in
[0, 1), so every weight moves at once by at most the fraction :math:`\delta`, as in a Monte
Carlo weight-sensitivity analysis. Method ``"sweep"`` is crisis_mas_poc's MCDA engine's
``sensitivity_analysis`` instead: one criterion's weight over an even grid, the value
:math:`1 - (D - 1)/K` for :math:`D` distinct winners (:func:`ranking_stability`), and
``num_winner_changes``, the steps of the grid whose winner differs from the previous step's
(winners A, B, A: two changes, two distinct winners). The scores:

* weighted sum: :math:`S_a = \sum_c w'_c s_{ac} / \sum_c w'_c` over the criteria ``a`` is
  scored on (the mean of :math:`s_{ac}` when the weights sum to 0), :math:`w_c` the given
  weights or 1;
* TOPSIS: with :math:`w''_c` the perturbed shares renormalised to sum 1 over the run's
  criteria and :math:`r_{ac} = x_{ac}/\lVert x_c\rVert`, :math:`d_a^{\pm 2} = \sum_c
  w''^2_c (r_{ac} - r_c^\pm)^2` (the ideals do not move with the weights), closeness
  :math:`d^-/(d^+ + d^-)`, 0.5 when both are 0.

The top alternative of a weighting is the first id among those within :math:`10^{-12}
\max(1, |S|)` of the best :math:`S` (so rounding never decides a tie). Runs without a scored
alternative, or :math:`K = 0`: null.

The uniforms are counter-based, so that a run's draws depend only on the seed and its
``run_id``, never on the other runs scored with it: the run's key is SplitMix64 (Steele, Lea &
Flood 2014) of the FNV-1a hash of its ``run_id``'s UTF-8 bytes xor SplitMix64 of the seed, and
:math:`u_{ck}` is the top 53 bits of SplitMix64 of ``key + φ·(k·2³² + j + 1)`` (mod 2⁶⁴),
``j`` the criterion's position among the run's scored criteria in label order and φ the
64-bit golden ratio constant. Draws are taken in blocks of weightings; every sum is over one
alternative's (or run's) rows, in row order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from mas_eval.metrics.decision.criteria import CriteriaRows
from mas_eval.metrics.segments import label_of, run_of

__all__ = ["ranking_stability", "run_keys", "uniforms"]

GOLDEN = 0x9E3779B97F4A7C15
_FNV_OFFSET, _FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3
#: Values within this fraction (of max(1, |best|)) of the best count as tied for first.
TIE_TOLERANCE = 1e-12
#: Score rows x weightings held at once.
_BLOCK_CELLS = 1 << 22


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function of each state (uint64, wrapping)."""
    z = z + np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def run_keys(run_ids: pl.Series, seed: int) -> np.ndarray:
    """Each run's key: SplitMix64 of (FNV-1a 64 of its UTF-8 ``run_id``) xor SplitMix64(seed mod 2⁶⁴).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.decision.sensitivity import run_keys
    >>> keys = run_keys(pl.Series(["r1", "r2"]), seed=0)
    >>> bool((keys == run_keys(pl.Series(["r2", "r1"]), seed=0)[::-1]).all())  # a run's key is its own
    True
    """
    lengths = run_ids.str.len_bytes().to_numpy().astype(np.int64)
    width = int(lengths.max()) if len(lengths) else 0
    encoded = np.asarray(run_ids.cast(pl.Binary).to_numpy(), dtype=f"S{max(width, 1)}")
    data = encoded.view(np.uint8).reshape(len(encoded), max(width, 1))
    h = np.full(len(encoded), _FNV_OFFSET, dtype=np.uint64)
    # One pass per byte position (not per run); a string's padding is past its length.
    for position in range(width):
        stepped = (h ^ data[:, position].astype(np.uint64)) * np.uint64(_FNV_PRIME)
        h = np.where(position < lengths, stepped, h)
    mixed_seed = _splitmix64(np.array([seed % 2**64], dtype=np.uint64))
    return _splitmix64(h ^ mixed_seed)


def uniforms(keys: np.ndarray, position: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """``u[i, k]`` in [0, 1) for the criterion at ``position`` of the run with key ``keys[i]``, draw ``draws[k]``.

    Examples
    --------
    >>> import numpy as np, polars as pl
    >>> from mas_eval.metrics.decision.sensitivity import run_keys, uniforms
    >>> u = uniforms(run_keys(pl.Series(["r1", "r2"]), seed=0), np.array([0, 0]), np.arange(3))
    >>> u.shape, bool(((u >= 0) & (u < 1)).all())
    ((2, 3), True)
    """
    counter = (draws.astype(np.uint64)[None, :] << np.uint64(32)) + position.astype(np.uint64)[:, None] + np.uint64(1)
    z = _splitmix64(keys[:, None] + counter * np.uint64(GOLDEN))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _segments(sorted_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of equal values of ``sorted_codes`` starts, and each item's segment."""
    new = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]] if len(sorted_codes) else np.zeros(0, dtype=bool)
    return np.flatnonzero(new), np.cumsum(new) - 1


def _top(scores: np.ndarray, starts: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Return the top alternative per weighting (rows) and run segment (columns).

    It is the first alternative (column of ``scores``) within the tolerance of the best.
    """
    best = np.maximum.reduceat(scores, starts, axis=1)[:, segment]
    at_top = scores >= best - TIE_TOLERANCE * np.maximum(1.0, np.abs(best))
    columns = np.arange(scores.shape[1])
    return np.minimum.reduceat(np.where(at_top, columns, scores.shape[1]), starts, axis=1)


def ranking_stability(
    rows: CriteriaRows,
    run_ids: pl.Series,
    *,
    mcda: str,
    draws: int,
    perturbation: float,
    seed: int,
    sweep: tuple[int | None, float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    r"""Return ``(values, valid, changes)`` per run (``run_ids`` in run-code order).

    The value is the share of ``draws`` perturbed weightings whose top alternative is the
    unperturbed one's; ``changes`` is None.

    With ``sweep = (criterion code, low, high)``, crisis_mas_poc's one-criterion sweep instead
    (``decision_framework/mcda_engine.py``, ``MCDAEngine.sensitivity_analysis``): the
    criterion's weight :math:`t_k` runs through ``numpy.linspace(low, high, draws)``, every
    other weight :math:`w_c` becomes :math:`w_c (1 - t_k) / \sum_{c' \ne c^*} w_{c'}` (unchanged
    when that sum is 0), the value is :math:`1 - (D - 1) / K`, :math:`D` the distinct top
    alternatives, and ``changes`` is its ``num_winner_changes``: the number of :math:`k \ge 2`
    whose top alternative is not step :math:`k - 1`'s (random weightings have no order: None).
    Null (not valid) for a run without a score on the criterion (a code of None: every run).
    """
    runs = len(run_ids)
    alternative_run = run_of(rows.by_alternative.keys)
    scored = np.bincount(alternative_run, minlength=runs) > 0
    if draws == 0 or len(rows.by_alternative) == 0:
        return np.zeros(runs), np.zeros(runs, dtype=bool), None if sweep is None else np.zeros(runs, dtype=np.int64)
    run_starts, run_segment = _segments(alternative_run)
    criterion_run = run_of(rows.by_criterion.keys).astype(np.int64)
    criterion_starts, criterion_segment = _segments(criterion_run)
    scores_of = _scorer(rows, mcda, criterion_starts, criterion_segment)
    if sweep is not None:
        segments = (run_starts, run_segment), (criterion_starts, criterion_segment)
        return _swept(rows, scores_of, sweep, draws, runs, segments, scored)
    position = np.arange(len(criterion_run)) - criterion_starts[criterion_segment]
    keys = run_keys(run_ids, seed)[criterion_run]
    kept = _kept(scores_of, keys, position, draws, perturbation, (run_starts, run_segment), len(rows.c))
    share = np.zeros(runs)
    share[alternative_run[run_starts]] = kept / draws
    return share, scored, None


def _scorer(
    rows: CriteriaRows, mcda: str, criterion_starts: np.ndarray, criterion_segment: np.ndarray
) -> Callable[..., np.ndarray]:
    """Return ``scores_of(factor, weights=None)``, the MCDA scores of many weightings at once.

    ``scores_of`` gives the scores per weighting (rows) and alternative (columns) under the weights
    ``base * factor`` (``factor``: per criterion and weighting), or ``weights`` when given.
    """
    from scipy import sparse  # only when asked for: importing the package does not load scipy

    a, c, criteria = rows.by_alternative, rows.c, len(criterion_segment)
    # Rows of an alternative are contiguous (scores sorted by run, alternative, criterion) and in
    # criterion order: a CSR matrix of alternatives x criteria as it stands. Its product with a
    # dense matrix adds each row's terms in stored order, so each sum depends on its own rows only.
    indptr = np.r_[np.flatnonzero(np.r_[True, a.index[1:] != a.index[:-1]]), len(c)]

    def per_alternative(values: np.ndarray) -> sparse.csr_matrix:
        return sparse.csr_matrix((values, c, indptr), shape=(len(a), criteria))

    topsis = mcda == "topsis"
    if topsis:
        base = rows.share
        inverse = np.where(rows.norm > 0, 1.0 / np.where(rows.norm > 0, rows.norm, 1.0), 0.0)
        r = rows.x * inverse[c]
        r_best = np.where(rows.cost, rows.low, rows.high) * inverse
        r_worst = np.where(rows.cost, rows.high, rows.low) * inverse
        off_best, off_worst = per_alternative((r - r_best[c]) ** 2), per_alternative((r - r_worst[c]) ** 2)
        ones = np.ones(criteria)
        by_run = sparse.csr_matrix((ones, np.arange(len(ones)), np.r_[criterion_starts, len(ones)]))
    else:
        base = np.where(rows.given, rows.weight, 1.0)
        satisfied, counted = per_alternative(rows.sat), per_alternative(np.ones(len(c)))
        mean = a.sum(rows.sat) / a.count()

    def scores_of(factor: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        weights = base[:, None] * factor if weights is None else weights
        with np.errstate(divide="ignore", invalid="ignore"):
            if topsis:
                square = (weights / (by_run @ weights)[criterion_segment]) ** 2
                d_best, d_worst = np.sqrt(off_best @ square), np.sqrt(off_worst @ square)
                out = np.where(d_best + d_worst > 0, d_worst / (d_best + d_worst), 0.5)
            else:
                total, weight_sum = satisfied @ weights, counted @ weights
                out = np.where(weight_sum > 0, total / weight_sum, mean[:, None])
        return np.ascontiguousarray(out.T)

    return scores_of


def _kept(
    scores_of: Callable[..., np.ndarray],
    keys: np.ndarray,
    position: np.ndarray,
    draws: int,
    perturbation: float,
    run_segments: tuple[np.ndarray, np.ndarray],
    score_rows: int,
) -> np.ndarray:
    """Count, per run segment, the ``draws`` random weightings whose top alternative is the unperturbed one's."""
    run_starts, run_segment = run_segments
    reference = _top(scores_of(np.ones((len(keys), 1))), run_starts, run_segment)
    kept = np.zeros(len(run_starts))
    block = max(1, min(draws, _BLOCK_CELLS // max(1, score_rows)))
    for first in range(0, draws, block):  # blocks of weightings, never runs or rows
        drawn = np.arange(first, min(draws, first + block))
        factor = 1.0 + perturbation * (2.0 * uniforms(keys, position, drawn) - 1.0)
        top = _top(scores_of(factor), run_starts, run_segment)
        kept += (top == reference).sum(axis=0)
    return kept


def _swept(
    rows: CriteriaRows,
    scores_of: Callable[[np.ndarray, np.ndarray], np.ndarray],
    sweep: tuple[int | None, float, float],
    steps: int,
    runs: int,
    segments: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    scored: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """crisis_mas_poc's one-criterion sweep (see :func:`ranking_stability`)."""
    code, low, high = sweep
    keys = rows.by_criterion.keys
    varied = np.zeros(len(keys), dtype=bool) if code is None else label_of(keys) == code
    criterion_run = run_of(keys)
    has_it = np.bincount(criterion_run[varied], minlength=runs) > 0
    base = np.where(rows.given, rows.weight, 1.0)
    (run_starts, run_segment), (criterion_starts, criterion_segment) = segments
    others = np.add.reduceat(np.where(varied, 0.0, base), criterion_starts)[criterion_segment]
    t = np.linspace(low, high, steps)
    with np.errstate(divide="ignore", invalid="ignore"):
        rescaled = np.where(others[:, None] > 0, base[:, None] * ((1.0 - t)[None, :] / others[:, None]), base[:, None])
    weights = np.where(varied[:, None], t[None, :], rescaled)
    top = _top(scores_of(np.ones_like(weights), weights), run_starts, run_segment)
    ordered = np.sort(top, axis=0)
    distinct = 1 + (ordered[1:] != ordered[:-1]).sum(axis=0)
    changes = (top[1:] != top[:-1]).sum(axis=0)  # in step order: A, B, A changes twice
    alternative_run = run_of(rows.by_alternative.keys)
    out, changed = np.zeros(runs), np.zeros(runs, dtype=np.int64)
    out[alternative_run[run_starts]] = 1.0 - (distinct - 1) / steps
    changed[alternative_run[run_starts]] = changes
    return out, scored & has_it, changed
