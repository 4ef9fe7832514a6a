r"""Conflicts between agents (crisis_mas_poc's consensus model), and whether consensus is reached.

* ``consensus_reached`` (per run): ``consensus_level >= consensus_threshold``.
* A *conflict* is a pair of agents with beliefs whose top choices :math:`t_a \ne t_b` differ
  and whose *disagreement*, the mean of how much more each believes its own top choice than
  the other's,

  .. math:: g_{ab} = \frac{\bigl(m_a(t_a) - m_a(t_b)\bigr) + \bigl(m_b(t_b) - m_b(t_a)\bigr)}{2}

  reaches ``conflict_threshold`` (a missing mass is 0; masses as given, not renormalised).
  Its *severity* is :math:`1 - \cos(m_a, m_b)` over the union of alternatives (the cosine
  clipped to [0, 1], 0 for a zero vector), *low* below 0.3, *moderate* below 0.6, else *high*.
  Its *compromise* is the alternative with the highest :math:`0.6\,\frac{m_a + m_b}{2} +
  0.4\min(m_a, m_b)` over the two agents' alternatives.

All three follow crisis_mas_poc's consensus model (``detect_conflicts``,
``_classify_severity``, ``_find_compromise_alternatives``). Top choices and every exact tie go
to the alternative id that sorts first (crisis_mas_poc's go to the first in its dicts'
insertion order, which a Dataset does not keep). Pairs are enumerated per run by index
arithmetic, and every dot product is a segment sum in alternative order: no self-join.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from mas_eval.metrics.arrays import locate, take
from mas_eval.metrics.decision.beliefs import BeliefRows
from mas_eval.metrics.segments import DENSE_SLOTS_PER_ROW, Groups, label_of, run_of

__all__ = ["SEVERITY_LEVELS", "Conflicts", "conflicts", "consensus_reached"]

#: Severity levels and the severity each one starts at (crisis_mas_poc's ``_classify_severity``).
SEVERITY_LEVELS = {"low": 0.0, "moderate": 0.3, "high": 0.6}
#: Weights of the pair's mean and minimum belief in the compromise score (crisis_mas_poc's).
COMPROMISE_MEAN, COMPROMISE_MIN = 0.6, 0.4


def consensus_reached(level: np.ndarray, valid: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """``(level >= threshold, valid)``: null where the consensus level is."""
    return level >= threshold, valid


@dataclass(frozen=True)
class Conflicts:
    """The ``conflicts`` output frame (keyed by codes, sorted) and the number of conflicts per run."""

    frame: pl.DataFrame
    per_run: tuple[np.ndarray, np.ndarray]


def _compromise_scores(own: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``0.6 * mean + 0.4 * min`` of two agents' masses (the same from either side: + commutes exactly)."""
    return COMPROMISE_MEAN * ((own + other) / 2) + COMPROMISE_MIN * np.minimum(own, other)


def _expanded(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For segments of ``lengths``: each item's segment, and its position within it."""
    segment = np.repeat(np.arange(len(lengths)), lengths)
    start = np.cumsum(lengths) - lengths
    return segment, np.arange(len(segment)) - start[segment]


class _Masses:
    """Each agent's mass on an alternative of its run (0 where it has no row).

    By direct addressing, agent x (the alternative's place among its run's, ``slot``), when that
    table is at most :data:`~mas_eval.metrics.segments.DENSE_SLOTS_PER_ROW` times the rows; else
    by a search of the rows' sorted (agent, alternative) keys.
    """

    def __init__(self, rows: BeliefRows, slot: np.ndarray, width: int) -> None:
        agents = len(rows.agents)
        self.rows, self.width = rows, width
        self.dense = agents * width <= DENSE_SLOTS_PER_ROW * max(1, len(slot))
        if self.dense:
            self.table = np.zeros(agents * width)
            self.table[rows.agents.index * width + slot] = rows.mass
        else:
            self.keys = (rows.agents.index.astype(np.uint64) << np.uint64(32)) | rows.alternative.astype(np.uint64)

    def of(self, agent: np.ndarray, slot: np.ndarray, alternative: np.ndarray) -> np.ndarray:
        """Return the mass of each ``agent`` on the alternative at ``slot`` of its run (code ``alternative``)."""
        if self.dense:
            return self.table[agent * self.width + slot]
        wanted = (agent.astype(np.uint64) << np.uint64(32)) | alternative.astype(np.uint64)
        at, found = locate(self.keys, wanted)
        return take(self.rows.mass, at, found)


def conflicts(rows: BeliefRows, slot: np.ndarray, mass_sumsq: np.ndarray, runs: int, *, threshold: float) -> Conflicts:
    """Every conflict of every run, and their count per run (null for a run without beliefs).

    ``slot`` is each belief row's alternative's place among its run's alternatives;
    ``mass_sumsq`` is per agent with beliefs, in the order of ``rows.agents`` (sorted by run,
    then agent).
    """
    groups = rows.agents
    believers = len(groups)
    run = run_of(groups.keys)
    lengths = groups.count()
    first_row = np.cumsum(lengths) - lengths
    top_mass = groups.max(rows.mass)
    # An agent's rows are sorted by alternative: the first reaching its maximum holds its top choice.
    top_row = groups.first_row(rows.mass == groups.spread(top_mass))
    top_choice, top_slot = rows.alternative[top_row], slot[top_row]
    masses = _Masses(rows, slot, int(slot.max()) + 1 if len(slot) else 1)

    # Pairs a < b within a run: agent a is followed by the run's later agents.
    by_run = Groups.sorted_runs(run, runs)
    agents_per_run = by_run.count()
    run_end = np.cumsum(agents_per_run)[run]
    a, offset = _expanded(run_end - np.arange(believers) - 1)
    b = a + 1 + offset
    differ = top_choice[a] != top_choice[b]
    a, b = a[differ], b[differ]
    top_a, top_b = top_choice[a], top_choice[b]
    a_on_b, b_on_a = masses.of(a, top_slot[b], top_b), masses.of(b, top_slot[a], top_a)
    gap = ((top_mass[a] - a_on_b) + (top_mass[b] - b_on_a)) / 2
    kept = gap >= threshold
    a, b, gap, top_a, top_b = a[kept], b[kept], gap[kept], top_a[kept], top_b[kept]

    # The pair's rows seen from each side: a's rows with b's masses, and b's rows with a's.
    pair_a, at_a = _expanded(lengths[a])
    row_a = first_row[a][pair_a] + at_a
    other_a = masses.of(b[pair_a], slot[row_a], rows.alternative[row_a])
    dot = np.bincount(pair_a, weights=rows.mass[row_a] * other_a, minlength=len(a))
    norms = np.sqrt(mass_sumsq[a]) * np.sqrt(mass_sumsq[b])
    cosine = np.where(norms > 0, np.clip(dot / np.where(norms > 0, norms, 1.0), 0.0, 1.0), 0.0)
    severity = 1.0 - cosine
    level = np.searchsorted(np.array(list(SEVERITY_LEVELS.values())), severity, side="right") - 1

    pair_b, at_b = _expanded(lengths[b])
    row_b = first_row[b][pair_b] + at_b
    other_b = masses.of(a[pair_b], slot[row_b], rows.alternative[row_b])
    # Each side's rows are contiguous per pair, and every agent has a row: no segment is empty.
    score_a, score_b = _compromise_scores(rows.mass[row_a], other_a), _compromise_scores(rows.mass[row_b], other_b)
    best = np.full(len(a), -np.inf)
    compromise = np.zeros(len(a), dtype=np.uint32)
    if len(a):
        starts_a, starts_b = np.cumsum(lengths[a]) - lengths[a], np.cumsum(lengths[b]) - lengths[b]
        best = np.maximum(np.maximum.reduceat(score_a, starts_a), np.maximum.reduceat(score_b, starts_b))
        never = np.iinfo(np.uint32).max
        alternative_a = np.where(score_a == best[pair_a], rows.alternative[row_a], never)
        alternative_b = np.where(score_b == best[pair_b], rows.alternative[row_b], never)
        compromise = np.minimum(
            np.minimum.reduceat(alternative_a, starts_a), np.minimum.reduceat(alternative_b, starts_b)
        ).astype(np.uint32)

    frame = pl.DataFrame(
        [
            pl.Series("run_id", run[a]),
            pl.Series("agent_a", label_of(groups.keys[a])),
            pl.Series("agent_b", label_of(groups.keys[b])),
            pl.Series("top_choice_a", top_a),
            pl.Series("top_choice_b", top_b),
            pl.Series("belief_a", top_mass[a]),
            pl.Series("belief_b", top_mass[b]),
            pl.Series("disagreement", gap),
            pl.Series("severity", severity),
            pl.Series(list(SEVERITY_LEVELS)).gather(level).alias("severity_level"),
            pl.Series("compromise", compromise),
            pl.Series("compromise_score", best),
        ]
    )
    count = np.bincount(run[a], minlength=runs).astype(np.int64)
    return Conflicts(frame=frame, per_run=(count, agents_per_run > 0))
