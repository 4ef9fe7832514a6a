r"""Redundancy between agents: how much of what the agents said in a round repeats what another agent said.

Notes
-----
Per round :math:`g` of a run, over its turns with at least one word (the sets of
:func:`~mas_eval.metrics.process.trace.words`), and the pairs :math:`P_g` of turns by
*different* agents:

.. math::

    R_g = \frac{1}{|P_g|} \sum_{(i, j) \in P_g} \frac{|W_i \cap W_j|}{|W_i \cup W_j|},\qquad
    redundancy = \frac{1}{|\{g : P_g \ne \varnothing\}|} \sum_{g : P_g \ne \varnothing} R_g

the mean word-set Jaccard similarity of different agents' turns in the same round, averaged over
the rounds that have such a pair; null for a run without one (one agent, or one turn a round).
Two turns of the same agent are not compared: repeating oneself is not redundancy between agents.
The coordination metrics of Kim et al. (2025, "Towards a Science of Scaling Agent Systems",
arXiv:2512.08296) include a redundancy between the agents' outputs; this is that idea measured on
any transcript's words, with no embedding model.

A Jaccard similarity is no sum of per-turn terms, so there is no closed form over group sums;
nor is a self-join of the turns needed, which would hold every pair's two word lists. The
pairs' intersections are a sparse matrix product: with :math:`X` the incidence matrix of turns
and (round, word) pairs, :math:`(X X^\top)_{ij} = |W_i \cap W_j|` for turns of one round and
nothing across rounds, and :math:`|W_i \cup W_j| = |W_i| + |W_j| - |W_i \cap W_j|`. Pairs
sharing no word are absent from the product and add 0 to the sum; their number is in
:math:`|P_g| = \binom{n_g}{2} - \sum_a \binom{n_{g,a}}{2}`, with :math:`n_g` the round's turns
and :math:`n_{g,a}` agent :math:`a`'s. The product's work is :math:`\sum_w m_w^2` over the words'
turn counts :math:`m_w` in a round, its memory the pairs that share a word: at 50 turns a round,
at most 1,225 pairs a round. Only rounds where two agents spoke are read, and words are
numbered by an Enum of the distinct words, not sorted as strings. Intersections are integers
(exact); each round's Jaccard values are added in the order of its turns, so the result does not
depend on the other runs (or shards). Reading the words is most of the cost: a regular
expression over every turn's text (docs/performance.md gives the figures).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from mas_eval.data.schema import RUN_KEY
from mas_eval.metrics.process.trace import words

__all__ = ["redundancy"]

#: A run's turns are ordered by this key: their pairs are summed in this order.
_ORDER = [RUN_KEY, "round", "agent_id", "turn"]


def _starts(*columns: str) -> pl.Expr:
    """Whether a row of sorted rows starts a new group of ``columns``: the first row, or one whose key differs."""
    changed = pl.lit(False)
    for column in columns:
        changed = changed | (pl.col(column) != pl.col(column).shift(1))
    return changed.fill_null(True)


def redundancy(turns: pl.LazyFrame, runs: int) -> pl.Series:
    """``redundancy`` per run (codes ``0 .. runs-1``) from the agents' turns (Notes); null where undefined."""
    rounds = [RUN_KEY, "round"]
    rows = (
        # Only rounds where two agents spoke can hold a pair: the others' texts are not even read.
        turns.filter(pl.col("agent_id").n_unique().over(rounds) > 1)
        .select(*_ORDER, words(pl.col("text")).alias("words"))
        .filter(pl.col("words").list.len() > 0)
        .sort(_ORDER)
        .collect()
    )
    if rows.height < 2:  # no pair to compare
        return pl.repeat(None, runs, dtype=pl.Float64, eager=True).alias("redundancy")
    from scipy import sparse  # only when there are turns to compare: importing mas_eval stays cheap

    starts = rows.select(_starts(*rounds).alias("round"), _starts(*rounds, "agent_id").alias("agent"))
    new_round, new_agent = starts["round"].to_numpy(), starts["agent"].to_numpy()
    run, agent = rows[RUN_KEY].to_numpy(), rows["agent_id"].to_numpy()
    group = np.cumsum(new_round) - 1  # the turn's (run, round)
    groups = int(group[-1]) + 1
    size = rows["words"].list.len().to_numpy().astype(np.float64)

    # A column per (round, word): words as codes (an Enum of the distinct words, no string sort),
    # then each (round, word) pair numbered by its rank among the pairs.
    cells = rows.select(pl.int_range(pl.len(), dtype=pl.Int64).alias("turn"), "words").explode("words")
    vocabulary = cells["words"].unique()
    word = cells["words"].cast(pl.Enum(vocabulary)).to_physical().to_numpy().astype(np.int64)
    turn = cells["turn"].to_numpy()
    _, column = np.unique(group[turn] * len(vocabulary) + word, return_inverse=True)
    incidence = sparse.csr_matrix(
        (np.ones(len(turn), dtype=np.int32), (turn, column.reshape(-1))), shape=(rows.height, int(column.max()) + 1)
    )
    shared = (incidence @ incidence.T).tocsr()
    shared.sort_indices()
    pairs = shared.tocoo()
    i, j, common = pairs.row, pairs.col, pairs.data.astype(np.float64)
    keep = (i < j) & (agent[i] != agent[j])
    i, j, common = i[keep], j[keep], common[keep]
    jaccard = common / (size[i] + size[j] - common)
    total = np.bincount(group[i], weights=jaccard, minlength=groups)

    n = np.bincount(group, minlength=groups).astype(np.float64)
    by_agent = np.cumsum(new_agent) - 1
    n_agent = np.bincount(by_agent).astype(np.float64)
    same = np.bincount(group[new_agent], weights=n_agent * (n_agent - 1) / 2, minlength=groups)
    pair_count = n * (n - 1) / 2 - same
    has_pairs = pair_count > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        per_round = np.where(has_pairs, total / pair_count, 0.0)
    run_of_group = run[new_round].astype(np.intp)
    sums = np.bincount(run_of_group[has_pairs], weights=per_round[has_pairs], minlength=runs)
    counts = np.bincount(run_of_group[has_pairs], minlength=runs)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(counts > 0, sums / counts, 0.0)
    return pl.Series("redundancy", value, dtype=pl.Float64).set(pl.Series(counts == 0), None)
