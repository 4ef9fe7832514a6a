"""The passes over ``beliefs``: per agent, per (run, alternative), per run, as segment reductions.

Consensus, contribution and evidential reasoning all read the same belief rows. The rows come
sorted by ``(run, agent, alternative)``, so each agent's rows are one contiguous segment; the
rows of a ``(run, alternative)`` are grouped by one stable argsort (:mod:`mas_eval.metrics.segments`).
Every sum is taken in row order, over one group's rows only: the results do not depend on the
other runs scored alongside, nor on thread counts.

The formulas are their modules' (:mod:`~mas_eval.metrics.decision.consensus`,
:mod:`~mas_eval.metrics.decision.contribution`, :mod:`~mas_eval.metrics.decision.evidential`);
this module holds what they share: the agents, their ER weights and the grouped sums.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from mas_eval.metrics.arrays import nullable, placed, take, to_series
from mas_eval.metrics.segments import Groups, label_of, merged, pack, run_of

__all__ = ["AgentFrame", "BeliefRows", "agents_of", "alternative_groups"]


@dataclass(frozen=True)
class BeliefRows:
    """The belief rows, sorted by ``(run, agent, alternative)``, and their agents' segments."""

    run: np.ndarray
    alternative: np.ndarray
    mass: np.ndarray
    agents: Groups

    @classmethod
    def of(cls, table: pl.DataFrame) -> BeliefRows:
        """Return the belief rows of ``table`` (sorted by run, agent, alternative) with their agents' segments."""
        run = table["run_id"].to_numpy()
        return cls(
            run=run,
            alternative=table["alternative"].to_numpy(),
            mass=table["mass"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
            agents=Groups.of(pack(run, table["agent_id"].to_numpy())),
        )


@dataclass(frozen=True)
class AgentFrame:
    """Every agent of a run (the ``agents`` table's and those with beliefs), sorted by (run, agent).

    Belief columns (``mass_*``, ``m_log_m``, ``own_alternatives``, ``top_choice``, ``w``) are
    meaningful where ``has_beliefs``; ``belief_agent`` maps each belief row to its agent.
    """

    key: np.ndarray
    confidence: np.ndarray
    confidence_valid: np.ndarray
    weight: np.ndarray
    weight_valid: np.ndarray
    has_beliefs: np.ndarray
    mass_total: np.ndarray
    mass_sumsq: np.ndarray
    mass_min: np.ndarray
    m_log_m: np.ndarray
    own_alternatives: np.ndarray
    top_choice: np.ndarray
    w: np.ndarray
    belief_agent: np.ndarray

    @property
    def run(self) -> np.ndarray:
        """The run code of each agent."""
        return run_of(self.key)

    @property
    def agent_id(self) -> np.ndarray:
        """The agent code of each agent."""
        return label_of(self.key)

    def totals(self) -> pl.DataFrame:
        """Return ``run_id, agent_id, mass_total, mass_min`` per agent (null without beliefs).

        That is what :func:`~mas_eval.data.validation.validate` reads (``"agent masses"``).
        """
        valid = self.has_beliefs
        return pl.DataFrame(
            [
                pl.Series("run_id", self.run),
                pl.Series("agent_id", self.agent_id),
                to_series("mass_total", self.mass_total, valid),
                to_series("mass_min", self.mass_min, valid),
            ]
        )


def _top_choices(rows: BeliefRows) -> np.ndarray:
    """Per agent with beliefs, its highest-mass alternative; an exact tie goes to the first id.

    Rows of an agent are sorted by alternative, so the first row reaching the maximum holds it.
    """
    groups = rows.agents
    at_max = rows.mass == groups.spread(groups.max(rows.mass))
    first = groups.first_row(at_max)
    # An agent whose masses are NaN has no maximum: the mass checks reject it before any use.
    return take(rows.alternative, first, first >= 0)


def agents_of(rows: BeliefRows, agents: pl.DataFrame, runs: int) -> AgentFrame:
    r"""Return the agents of ``agents`` and of ``rows``, with their belief sums and ER weights.

    ``agents`` is sorted by key and has ``confidence`` and ``weight``.

    Notes
    -----
    Per agent: :math:`T = \sum m`, :math:`\sum m^2`, :math:`S = \sum m \ln m` (0 ln 0 = 0),
    its alternatives and smallest mass. The ER weight :math:`w_i` is ``agents.weight``
    normalised to sum 1 over the run's agents with beliefs, or equal weights when any of them
    has none or they sum to 0 (:mod:`~mas_eval.metrics.decision.evidential`).
    """
    groups, mass = rows.agents, rows.mass
    listed = pack(agents["run_id"].to_numpy(), agents["agent_id"].to_numpy())
    key, listed_at, believer_at = merged(listed, groups.keys)

    def per_agent(values: np.ndarray) -> np.ndarray:
        return placed(believer_at, len(key), values)[0]

    confidence, confidence_valid = placed(listed_at, len(key), *nullable(agents["confidence"].cast(pl.Float64)))
    weight, weight_valid = placed(listed_at, len(key), *nullable(agents["weight"].cast(pl.Float64)))
    has_beliefs = per_agent(np.ones(len(groups), dtype=bool))
    positive = mass > 0
    mass_total = per_agent(groups.sum(mass))
    return AgentFrame(
        key=key,
        confidence=confidence,
        confidence_valid=confidence_valid,
        weight=weight,
        weight_valid=weight_valid,
        has_beliefs=has_beliefs,
        mass_total=mass_total,
        mass_sumsq=per_agent(groups.sum(mass * mass)),
        mass_min=per_agent(groups.min(mass)),
        m_log_m=per_agent(groups.sum(np.where(positive, mass * np.log(np.where(positive, mass, 1.0)), 0.0))),
        own_alternatives=per_agent(groups.count()),
        top_choice=per_agent(_top_choices(rows)),
        w=_er_weights(run_of(key), has_beliefs, weight, weight_valid, runs),
        belief_agent=believer_at[groups.index],
    )


def _er_weights(
    run: np.ndarray, believer: np.ndarray, weight: np.ndarray, weight_valid: np.ndarray, runs: int
) -> np.ndarray:
    """Each agent's ER weight ``w`` (0 for an agent without beliefs); ``run`` is per agent, sorted."""
    by_run = Groups.sorted_runs(run, runs)
    weight_total = by_run.sum(np.where(believer & weight_valid, weight, 0.0))
    given = ~by_run.any(believer & ~weight_valid) & (weight_total > 0)
    believers = by_run.count(believer)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(given[run], weight / weight_total[run], 1.0 / believers[run])
    return np.where(believer, w, 0.0)


def alternative_groups(rows: BeliefRows) -> Groups:
    """Group the belief rows by ``(run, alternative)``; within a group, rows in agent order."""
    return Groups.of(pack(rows.run, rows.alternative))
