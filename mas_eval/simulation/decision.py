"""Synthetic decision Datasets with a known MAS-vs-single effect, at any scale.

:func:`simulate_decision` (short name :func:`simulate`) fills the decision tables of the crisis-MAS
evaluation methodology (``runs``, ``agents``, ``beliefs``, ``criteria``, ``scores``, ``alt_scores``)
with plausible values for multi-agent (``"mas"``) and single-agent (``"single"``) runs over shared
cases, with a true difference in decision quality that the caller chooses. It serves demos, tests
of the statistics (does ``compare`` recover the planted effect? does it stay quiet at
``effect=0``?) and benchmarks: a million runs are generated column-wise with NumPy and Polars,
never with a Python loop over rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, Interval, IntPair, Predicate, validate_params
from mas_eval.data.schema import CRITERION_KINDS, CRITERION_SCALES
from mas_eval.simulation._shared import (
    SYSTEMS,
    Coded,
    SizeCeiling,
    coded_table,
    deal_runs,
    expand,
    labels,
    mean_of,
    split_runs,
)
from mas_eval.storage.dataset import Dataset

__all__ = ["CEILING", "simulate", "simulate_decision"]

#: Expert roles of MAS agents (crisis management, as in crisis_mas_poc); a single agent is a generalist.
EXPERT_ROLES = (
    "medical",
    "logistics",
    "public_safety",
    "environmental",
    "infrastructure",
    "communications",
    "psychosocial",
)
SINGLE_ROLE = "generalist"
#: Price in USD per million tokens of each configuration variant (cycled when there are more variants).
PRICE_PER_MTOK = (3.0, 0.6, 10.0, 1.5, 5.0)

# Latent quality model (see the Notes of `simulate_decision`). The spreads keep q well inside (0, 1), so
# that the clipping which makes the effect approximate rarely bites for |effect| <= 0.2.
_BASE_LOW, _BASE_SPAN = 0.40, 0.35  # case baseline quality: 0.40 + 0.35 * Beta(2, 2)
_SD_TASK, _SD_CLUSTER, _SD_RUN = 0.04, 0.05, 0.06
_Q_MIN, _Q_MAX = 0.02, 0.98
_CONCENTRATION = 20.0  # Beta(k*m, k*(1-m)) around mean m: sd ~0.1 at m = 0.6
_GAP_LOW, _GAP_HIGH = 0.02, 0.30  # other alternatives sit this much below the recommended one
_P_HIT, _HIT_SLOPE = 0.55, 2.5  # P(recommend the correct alternative) = 0.55 + 2.5 * (q - case mean)
_P_COST = 0.4  # share of criteria that are costs
_P_INCOMPLETE = 0.3  # share of agents whose beliefs leave some mass unassigned
_MASS_STEP = 1e-4  # masses are logged with 4 decimals, rounded down so a sum never exceeds 1


#: What a run of the default size costs (1.8 kB: 100,000 runs simulated and written peak 180 MB above
#: the imports), and so the most runs :func:`simulate_decision` makes (4,400,000).
CEILING = SizeCeiling("simulate_decision", 1_800)
#: The most agents, alternatives or criteria of a run (labels ``a1``... are made for each up to the maximum).
_MAX_COUNT = 1_000


def _rows_per_run(
    mas_share: float, agents: tuple[int, int], alternatives: tuple[int, int], criteria: tuple[int, int]
) -> float:
    """Estimate the rows of a run over every table: what its memory grows with (41 at the defaults)."""
    team, options, rules = mas_share * mean_of(agents) + (1 - mas_share), mean_of(alternatives), mean_of(criteria)
    # runs, agents, beliefs (agent x alternative), criteria, scores (alternative x criterion), alt_scores
    return 1 + team + team * options + rules + options * rules + options


def _beta(rng: np.random.Generator, mean: np.ndarray, concentration: float) -> np.ndarray:
    """Beta draws with the given means (Gamma ratio: twice as fast as ``rng.beta`` with array parameters)."""
    x = rng.standard_gamma(mean * concentration)
    y = rng.standard_gamma((1.0 - mean) * concentration)
    y += x
    x /= y
    return x


@validate_params(
    {
        "runs": [CEILING.constraint()],
        "seed": [Interval(int, 0)],
        "effect": [Interval(float, -1, 1)],
        "mas_share": [Interval(float, 0, 1, closed="neither")],
        "repeats": [Interval(int, 1)],
        # A label is made for every task and variant: no more of them than runs.
        "tasks": [Interval(int, 1, CEILING.runs)],
        "variants": [Interval(int, 1, CEILING.runs)],
        "agents": [IntPair(2, _MAX_COUNT)],
        "alternatives": [IntPair(2, _MAX_COUNT)],
        "criteria": [IntPair(1, _MAX_COUNT)],
        "ground_truth_share": [Interval(float, 0, 1)],
        "cases_per_cluster": [Interval(int, 1, CEILING.runs)],
        "progress": [Predicate(callable, "a callable taking a description"), NONE],
    }
)
def simulate_decision(
    runs: int,
    *,
    seed: int,
    effect: float = 0.05,
    mas_share: float = 0.5,
    repeats: int = 1,
    tasks: int = 3,
    variants: int = 2,
    agents: tuple[int, int] = (3, 7),
    alternatives: tuple[int, int] = (3, 6),
    criteria: tuple[int, int] = (2, 5),
    ground_truth_share: float = 0.7,
    cases_per_cluster: int = 4,
    progress: Callable[[str], object] | None = None,
) -> Dataset:
    r"""Simulate a decision Dataset with a planted MAS-vs-single difference in decision quality.

    ``mas_eval.simulate`` is its short name (the same function); the other families' simulators are
    :func:`~mas_eval.simulate_diagnosis`, :func:`~mas_eval.simulate_answers`, :func:`~mas_eval.simulate_outcomes`.

    Parameters
    ----------
    runs : int
        Number of runs in total (>= 2), MAS and single-agent together; at most 4,400,000 runs
        of the default size, fewer of larger ones (see Raises).
    seed : int
        Seed (>= 0) of ``numpy.random.default_rng``: the same arguments and seed give identical
        tables; another seed gives other data.
    effect : float, default 0.05
        True difference MAS − single of the expected ``dqs_raw`` (DQS by the criteria method,
        before the ground-truth boost), in [-1, 1]; see Notes. ``compare(scores, "dqs_raw",
        pair_on="case_id")`` recovers it within its CI. The boosted ``dqs`` differs by more
        when ``effect > 0`` (by about 0.009 at 0.05 under preset ``spec``), because better
        runs also match the ground truth more often and the boost lifts those to 0.9.
        ``0.0`` gives a null dataset in which the systems differ in cost and confidence but
        not in quality.
    mas_share : float, default 0.5
        Share of the runs made by the MAS, in (0, 1) (both systems run every case).
    repeats : int, default 1
        Runs of each case by the less frequent system (by each system when ``mas_share`` is
        0.5). The more frequent system spreads its runs evenly over the same cases.
    tasks : int, default 3
        Number of tasks (scenario families ``"task1"``, ``"task2"``, ...), at most the runs'
        ceiling; a cluster of cases belongs to one task.
    variants : int, default 2
        Number of configuration variants (``"v1"``, ``"v2"``, ...), at most the runs' ceiling;
        each case is run under one variant, by both systems, so that comparisons within a
        variant stay paired. Variants differ in their token price.
    agents : (int, int), default (3, 7)
        Inclusive range of the number of agents in a MAS run (min >= 2, max <= 1000).
        Single-agent runs always have exactly one agent.
    alternatives : (int, int), default (3, 6)
        Inclusive range of the number of alternatives of a case (min >= 2, max <= 1000).
    criteria : (int, int), default (2, 5)
        Inclusive range of the number of criteria of a case (min >= 1, max <= 1000). A case
        with two or more criteria has at least one ``"benefit"`` and one ``"cost"`` criterion.
    ground_truth_share : float, default 0.7
        Share of the cases, in [0, 1], whose correct alternative is recorded in
        ``runs.correct`` (null for the others).
    cases_per_cluster : int, default 4
        Cases per cluster (``runs.cluster``): consecutive cases form a cluster that shares a
        task and a random quality offset, as related scenarios would; cluster-robust standard
        errors therefore matter. Pass 1 to make clusters coincide with cases; at most the
        runs' ceiling (one cluster of every case).
    progress : callable, optional
        Called as ``progress(description)`` once after each table is generated, e.g.
        ``"runs: 1,000 rows"``; meant for a progress bar.

    Returns
    -------
    Dataset
        Tables ``runs, agents, beliefs, criteria, scores, alt_scores``, valid by construction
        (``validate()`` passes); write it with :meth:`Dataset.write`. The tables are held in
        memory with their string columns as integer codes, decoded to the schema's strings
        whenever a table is read or written, which keeps their memory low (docs/performance.md).

    Raises
    ------
    InvalidParameterError
        An argument is of the wrong type or out of range, or too few runs for ``repeats``
        (the message names the argument, its value and what is allowed; also a ``ValueError``).
        Also when the Dataset would not fit in 8 GB of memory (``MEMORY_CEILING_GB``): a run of
        the default size costs about 1.8 kB, a larger one (more agents, alternatives or
        criteria) more, in proportion to its expected rows; the message says how many runs of
        that size fit.

    Notes
    -----
    **Design.** With :math:`n_{min}` the run count of the less frequent system there are
    :math:`\lfloor n_{min} / repeats \rfloor` cases; each system's runs are dealt to the
    cases in turn, so every case is run by both systems. Runs are ordered by case; ids are
    ``"r0000001"``, ``"case000001"``, ``"cl00001"``, agents ``"a1"``..., alternatives
    ``"alt1"``..., criteria ``"c1"``....  A case fixes the task, variant, cluster,
    alternatives, criteria (weights, kinds) and the correct alternative; every run of the
    case gets the same ``criteria`` rows. Scores are satisfactions (``scale =
    "satisfaction"``), stored as ``s`` for benefit and ``1 - s`` for cost criteria, so the
    criteria satisfaction the decision family reads (cost enters as ``1 - score``) recovers ``s``.

    **Quality.** Each run has a latent quality

    .. math:: q = \mathrm{clip}\big(b_{case} + u_{task} + v_{cluster}
              + effect \cdot (\mathbb{1}[mas] - \tfrac12) + \varepsilon_{run},\ 0.02,\ 0.98\big)

    with :math:`b_{case} = 0.40 + 0.35\,\mathrm{Beta}(2, 2)`, :math:`u \sim N(0, 0.04^2)`,
    :math:`v \sim N(0, 0.05^2)`, :math:`\varepsilon \sim N(0, 0.06^2)`. The recommended
    alternative's satisfaction on every criterion is drawn from a Beta distribution with mean
    :math:`q` (concentration 20, so sd ≈ 0.1); the other alternatives' from Beta with mean
    :math:`q - g`, :math:`g \sim U(0.02, 0.30)` (so the recommendation is usually, not always,
    the best-scored alternative). Satisfactions are rounded to 3 decimals.

    **What effect means.** The DQS of a run (criteria method: the weighted, or unweighted,
    mean of the recommended alternative's criteria satisfactions) has conditional mean
    :math:`q`, so E[DQS | mas] − E[DQS | single] = ``effect`` exactly, up to the clipping of
    :math:`q` to [0.02, 0.98] (negligible for :math:`|effect| \le 0.2`; it shrinks larger
    effects) and the 3-decimal rounding. Because both systems run the same cases, case,
    task and cluster offsets cancel from the difference. Note that the *raw* mean of the
    recommended alternative's scores is not the DQS: cost criteria store ``1 - s``.

    **Correctness.** The recommendation is the case's correct alternative with probability
    :math:`\mathrm{clip}(0.55 + 2.5 (q - \bar q_{case}), 0.05, 0.95)` (otherwise a uniformly
    chosen other one), so with ``effect > 0`` the MAS matches ``correct`` more often (by
    about ``2.5 * effect``), and not at all more often when ``effect = 0``.

    **Other columns.** Agents hold Dirichlet beliefs over the run's alternatives, peaked
    (more so for confident agents) on the recommended alternative, or for a quarter of MAS
    agents on a personal favourite; 30 % of agents leave 1–14 % of their mass unassigned; masses
    have 4 decimals, rounded down, so each agent's sum lies in [0.85, 1]. MAS agents have
    expert roles, normalised weights and confidences ~Beta(6, 2.5); the single agent is a
    ``"generalist"`` with weight 1 and confidence ~Beta(8, 2), which is also its run's
    self-reported ``runs.confidence`` (null for MAS runs). ``alt_scores.mcda`` is the weighted
    mean satisfaction of each alternative and ``final = 0.6 mcda + 0.4 ×`` its mean belief
    mass. MAS runs take 1–6 iterations, ``agents × iterations + 1`` API calls or more, more
    tokens, seconds and dollars than single runs (1 iteration, ~1 call). ``runs.seed`` is a
    per-run random integer.

    Examples
    --------
    >>> from mas_eval import simulate, simulate_decision
    >>> ds = simulate_decision(200, seed=7, effect=0.1)
    >>> ds.table_names
    ['runs', 'agents', 'beliefs', 'criteria', 'scores', 'alt_scores']
    >>> runs = ds.validate().collect("runs")
    >>> runs.group_by("system").agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort("system").rows()
    [('mas', 100, 100), ('single', 100, 100)]
    >>> runs.row(0, named=True)["run_id"], runs.row(0, named=True)["case_id"]
    ('r0000001', 'case000001')
    >>> simulate is simulate_decision  # the short name
    True
    """
    runs, seed, repeats, tasks, variants = int(runs), int(seed), int(repeats), int(tasks), int(variants)
    effect, mas_share, ground_truth_share = float(effect), float(mas_share), float(ground_truth_share)
    cases_per_cluster = int(cases_per_cluster)
    (agents_low, agents_high), (alt_low, alt_high), (crit_low, crit_high) = (
        (int(low), int(high)) for low, high in (agents, alternatives, criteria)
    )

    sizes = {"mas_share": mas_share, "agents": agents, "alternatives": alternatives, "criteria": criteria}
    CEILING.check(runs, _rows_per_run, sizes, simulate_decision)
    n_mas, n_single, n_cases = split_runs(runs, mas_share, repeats, where="simulate_decision")

    rng = np.random.default_rng(seed)
    report = progress if progress is not None else (lambda _description: None)
    design = _Design.draw(
        rng,
        n_mas=n_mas,
        n_single=n_single,
        n_cases=n_cases,
        effect=effect,
        tasks=tasks,
        variants=variants,
        agents=(agents_low, agents_high),
        alternatives=(alt_low, alt_high),
        criteria=(crit_low, crit_high),
        ground_truth_share=ground_truth_share,
        cases_per_cluster=cases_per_cluster,
    )
    tables: dict[str, pl.LazyFrame] = {}
    agents_frame, agent_confidence, agent_offsets = _agents(rng, design)
    tables["runs"] = _runs(rng, design, agent_confidence[agent_offsets[:-1]])
    report(f"runs: {design.runs:,} rows")
    tables["agents"] = agents_frame
    report(f"agents: {len(agent_confidence):,} rows")
    tables["beliefs"], support, n_beliefs = _beliefs(rng, design, agent_confidence, agent_offsets)
    del agent_confidence, agent_offsets
    report(f"beliefs: {n_beliefs:,} rows")
    tables["criteria"], n_criteria = _criteria(design)
    report(f"criteria: {n_criteria:,} rows")
    tables["scores"], mcda, n_scores = _scores(rng, design)
    report(f"scores: {n_scores:,} rows")
    tables["alt_scores"] = _alt_scores(design, mcda, support)
    report(f"alt_scores: {len(mcda):,} rows")
    return Dataset.from_frames(**tables)


#: The documented short name of :func:`simulate_decision`: the same function, kept for good (no warning).
simulate = simulate_decision


@dataclass
class _Design:
    """Everything the tables share: who ran which case, and each run's latent quality and choice.

    Per case (length ``n_cases``): cluster, task, variant, ground-truth flag, and the case's
    criteria (flat arrays with ``crit_offsets``). Per run (length ``runs``): system, case,
    latent quality ``q``, team size, alternative and criterion counts, recommended and correct
    alternative (0-based). Per (run, alternative) (length ``run_alt_offsets[-1]``): the run's
    alternatives, laid out run after run.
    """

    runs: int
    is_mas: np.ndarray
    case: np.ndarray
    q: np.ndarray
    n_agents: np.ndarray
    n_alt: np.ndarray
    n_crit: np.ndarray
    recommended: np.ndarray
    correct: np.ndarray
    cluster_of_case: np.ndarray
    task_of_case: np.ndarray
    variant_of_case: np.ndarray
    has_truth: np.ndarray
    crit_offsets: np.ndarray
    crit_weight: np.ndarray
    is_cost: np.ndarray
    run_alt_run: np.ndarray
    run_alt_pos: np.ndarray
    run_alt_offsets: np.ndarray
    run_ids: pl.Series
    agent_labels: pl.Series
    alt_labels: pl.Series
    crit_labels: pl.Series
    tasks: int
    variants: int

    @classmethod
    def draw(
        cls,
        rng: np.random.Generator,
        *,
        n_mas: int,
        n_single: int,
        n_cases: int,
        effect: float,
        tasks: int,
        variants: int,
        agents: tuple[int, int],
        alternatives: tuple[int, int],
        criteria: tuple[int, int],
        ground_truth_share: float,
        cases_per_cluster: int,
    ) -> _Design:
        """Draw the design: cases, their criteria, and each run's quality and recommendation."""
        runs = n_mas + n_single
        # Runs sorted by case, then repeat, MAS first: a case's runs are contiguous, pairs adjacent.
        is_mas, case = deal_runs(n_mas, n_single, n_cases)
        case = case.astype(np.int32)

        cluster_of_case = np.arange(n_cases, dtype=np.int64) // cases_per_cluster
        n_clusters = int(cluster_of_case[-1]) + 1
        task_of_case = rng.integers(0, tasks, n_clusters)[cluster_of_case]
        variant_of_case = rng.integers(0, variants, n_cases)
        case_mean = (
            _BASE_LOW
            + _BASE_SPAN * rng.beta(2.0, 2.0, n_cases)
            + rng.normal(0.0, _SD_TASK, tasks)[task_of_case]
            + rng.normal(0.0, _SD_CLUSTER, n_clusters)[cluster_of_case]
        )
        n_alt_case = rng.integers(alternatives[0], alternatives[1] + 1, n_cases)
        n_crit_case = rng.integers(criteria[0], criteria[1] + 1, n_cases)
        correct_case = rng.integers(0, n_alt_case)
        has_truth = np.zeros(n_cases, dtype=bool)
        has_truth[rng.permutation(n_cases)[: round(ground_truth_share * n_cases)]] = True

        crit_offsets, crit_weight, is_cost = _case_criteria(rng, n_crit_case)

        centre = case_mean[case]
        mas = is_mas.astype(np.float64)
        q = np.clip(centre + effect * (mas - 0.5) + rng.normal(0.0, _SD_RUN, runs), _Q_MIN, _Q_MAX)
        n_alt = n_alt_case[case]
        correct = correct_case[case]
        # Better runs find the correct alternative more often, so correctness follows the effect.
        p_hit = np.clip(_P_HIT + _HIT_SLOPE * (q - centre), 0.05, 0.95)
        other = (correct + 1 + rng.integers(0, n_alt - 1)) % n_alt
        recommended = np.where(rng.random(runs) < p_hit, correct, other)
        n_agents = np.where(is_mas, rng.integers(agents[0], agents[1] + 1, runs), 1)
        run_alt_run, run_alt_pos, run_alt_offsets = expand(n_alt)
        return cls(
            runs=runs,
            is_mas=is_mas,
            case=case,
            q=q,
            n_agents=n_agents,
            n_alt=n_alt,
            n_crit=n_crit_case[case],
            recommended=recommended,
            correct=correct,
            cluster_of_case=cluster_of_case,
            task_of_case=task_of_case,
            variant_of_case=variant_of_case,
            has_truth=has_truth,
            crit_offsets=crit_offsets,
            crit_weight=crit_weight,
            is_cost=is_cost,
            run_alt_run=run_alt_run,
            run_alt_pos=run_alt_pos,
            run_alt_offsets=run_alt_offsets,
            run_ids=labels("r", runs, max(7, len(str(runs)))),
            agent_labels=labels("a", agents[1]),
            alt_labels=labels("alt", alternatives[1]),
            crit_labels=labels("c", criteria[1]),
            tasks=tasks,
            variants=variants,
        )


def _case_criteria(rng: np.random.Generator, n_crit_case: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw each case's criteria: their offsets, normalised weights and whether each is a cost."""
    crit_case, _, crit_offsets = expand(n_crit_case)
    weight = rng.gamma(2.0, 1.0, len(crit_case))
    weight /= np.add.reduceat(weight, crit_offsets[:-1])[crit_case]
    # Logged weights have 3 decimals; the floor keeps every weight, hence every weight sum, > 0.
    crit_weight = np.maximum(np.round(weight, 3), 0.001)
    is_cost = rng.random(len(crit_case)) < _P_COST
    # Both kinds in every case with >= 2 criteria: an all-benefit case gets its last criterion
    # turned into a cost, an all-cost case its first into a benefit.
    n_cost = np.add.reduceat(is_cost.astype(np.int64), crit_offsets[:-1])
    several = n_crit_case >= 2
    is_cost[crit_offsets[1:][several & (n_cost == 0)] - 1] = True
    is_cost[crit_offsets[:-1][several & (n_cost == n_crit_case)]] = False
    return crit_offsets, crit_weight, is_cost


def _agents(rng: np.random.Generator, d: _Design) -> tuple[pl.LazyFrame, np.ndarray, np.ndarray]:
    """Make the agents table, with each agent's confidence and the agent offsets of the runs."""
    agent_run, agent_pos, agent_offsets = expand(d.n_agents)
    agent_mas = d.is_mas[agent_run]
    confidence = np.round(rng.beta(np.where(agent_mas, 6.0, 8.0), np.where(agent_mas, 2.5, 2.0)), 2)
    # A MAS team is a run of consecutive expert roles from a random start (distinct for <= 7 agents).
    role_start = rng.integers(0, len(EXPERT_ROLES), d.runs)
    role = np.where(agent_mas, (agent_pos + role_start[agent_run]) % len(EXPERT_ROLES), len(EXPERT_ROLES))
    weight = rng.gamma(4.0, 1.0, len(agent_run))
    weight = np.where(agent_mas, np.round(weight / np.add.reduceat(weight, agent_offsets[:-1])[agent_run], 4), 1.0)
    frame = coded_table(
        "agents",
        {
            "run_id": Coded(d.run_ids, agent_run),
            "agent_id": Coded(d.agent_labels, agent_pos),
            "confidence": confidence,
            "role": Coded(pl.Series([*EXPERT_ROLES, SINGLE_ROLE]), role),
            "weight": weight,
        },
    )
    return frame, confidence, agent_offsets


def _runs(rng: np.random.Generator, d: _Design, first_agent_confidence: np.ndarray) -> pl.LazyFrame:
    is_mas, n_agents = d.is_mas, d.n_agents
    iterations = np.where(is_mas, 1 + np.minimum(rng.poisson(1.0, d.runs), 5), 1)
    # MAS: every agent speaks each iteration, plus the coordinator's synthesis and some retries.
    api_calls = np.where(is_mas, n_agents * iterations + 1 + rng.poisson(0.5, d.runs), 1 + rng.poisson(0.15, d.runs))
    tokens = np.rint(api_calls * rng.lognormal(np.log(np.where(is_mas, 1600.0, 1400.0)), 0.3)).astype(np.int64)
    seconds = np.where(
        is_mas,
        iterations * rng.lognormal(np.log(6.0), 0.35, d.runs) * (1.0 + 0.1 * n_agents),
        rng.lognormal(np.log(4.0), 0.4, d.runs),
    )
    variant = d.variant_of_case[d.case]
    price = np.asarray(PRICE_PER_MTOK)[variant % len(PRICE_PER_MTOK)]
    n_cases = len(d.cluster_of_case)
    n_clusters = int(d.cluster_of_case[-1]) + 1
    return coded_table(
        "runs",
        {
            "run_id": d.run_ids,
            "system": Coded(pl.Series(SYSTEMS), (~is_mas)),
            "case_id": Coded(labels("case", n_cases, max(6, len(str(n_cases)))), d.case),
            "task": Coded(labels("task", d.tasks), d.task_of_case[d.case]),
            "variant": Coded(labels("v", d.variants), variant),
            "seed": rng.integers(0, 2**31 - 1, d.runs),
            "epoch": None,
            "cluster": Coded(labels("cl", n_clusters, max(5, len(str(n_clusters)))), d.cluster_of_case[d.case]),
            "recommended": Coded(d.alt_labels, d.recommended),
            "correct": Coded(d.alt_labels, pl.Series(d.correct).set(pl.Series(~d.has_truth[d.case]), None)),
            "confidence": pl.Series(np.where(is_mas, np.nan, first_agent_confidence), nan_to_null=True),
            "iterations": iterations,
            "api_calls": api_calls,
            "seconds": np.round(seconds, 3),
            "tokens": tokens,
            "input_tokens": None,
            "output_tokens": None,
            "cost_usd": np.round(tokens * price / 1e6, 6),
        },
    )


def _beliefs(
    rng: np.random.Generator, d: _Design, confidence: np.ndarray, agent_offsets: np.ndarray
) -> tuple[pl.LazyFrame, np.ndarray, int]:
    """Dirichlet beliefs over each run's alternatives, and each alternative's mean mass in its run."""
    n_agents_total = len(confidence)
    agent_run = np.repeat(np.arange(d.runs, dtype=np.int32), d.n_agents)
    agent_pos = np.arange(n_agents_total, dtype=np.int32) - np.repeat(agent_offsets[:-1].astype(np.int32), d.n_agents)
    agent_n_alt = d.n_alt[agent_run]
    # A quarter of MAS agents favour an alternative of their own: diversity for the consensus metrics.
    favourite = np.where(
        d.is_mas[agent_run] & (rng.random(n_agents_total) < 0.25),
        rng.integers(0, agent_n_alt),
        d.recommended[agent_run],
    )
    belief_agent, belief_alt, belief_offsets = expand(agent_n_alt)
    del agent_n_alt
    # Dirichlet via normalised Gamma draws; confident agents put a sharper peak on their favourite.
    alpha = np.full(len(belief_agent), 0.8)
    on_favourite = belief_alt == favourite[belief_agent]
    alpha[on_favourite] = (1.0 + 5.0 * confidence)[belief_agent[on_favourite]]
    del on_favourite, favourite
    mass = rng.standard_gamma(alpha)
    del alpha
    completeness = np.where(rng.random(n_agents_total) < _P_INCOMPLETE, rng.uniform(0.86, 0.99, n_agents_total), 1.0)
    scale = completeness / np.add.reduceat(mass, belief_offsets[:-1])
    mass *= scale[belief_agent]
    # Rounding down (never up) keeps every agent's sum <= 1, as the schema requires.
    np.floor(mass / _MASS_STEP, out=mass)
    mass *= _MASS_STEP
    del scale, completeness, belief_offsets
    belief_run = agent_run[belief_agent]
    support = (
        np.bincount(d.run_alt_offsets[belief_run] + belief_alt, weights=mass, minlength=len(d.run_alt_run))
        / d.n_agents[d.run_alt_run]
    )
    frame = coded_table(
        "beliefs",
        {
            "run_id": Coded(d.run_ids, belief_run),
            "agent_id": Coded(d.agent_labels, agent_pos[belief_agent]),
            "alternative": Coded(d.alt_labels, belief_alt),
            "mass": mass,
        },
    )
    return frame, support, len(mass)


def _criteria(d: _Design) -> tuple[pl.LazyFrame, int]:
    """Every run of a case gets the case's criteria."""
    crit_run, crit_pos, _ = expand(d.n_crit)
    flat = d.crit_offsets[d.case[crit_run]] + crit_pos
    frame = coded_table(
        "criteria",
        {
            "run_id": Coded(d.run_ids, crit_run),
            "criterion": Coded(d.crit_labels, crit_pos),
            "weight": d.crit_weight[flat],
            "kind": Coded(pl.Series(CRITERION_KINDS), d.is_cost[flat]),
            "scale": Coded(pl.Series([CRITERION_SCALES[0]]), np.zeros(len(flat), dtype=np.uint8)),
        },
    )
    return frame, len(flat)


def _scores(rng: np.random.Generator, d: _Design) -> tuple[pl.LazyFrame, np.ndarray, int]:
    """Scores by run, alternative, criterion; and the weighted mean satisfaction of each alternative."""
    ra_run = d.run_alt_run
    ra_n_crit = d.n_crit[ra_run]
    # Other alternatives sit a random gap below the recommended one, which centres on q.
    gap = rng.uniform(_GAP_LOW, _GAP_HIGH, len(ra_run))
    gap[d.run_alt_offsets[:-1] + d.recommended] = 0.0
    ra_centre = np.clip(d.q[ra_run] - gap, _Q_MIN, _Q_MAX)
    ra_crit_start = d.crit_offsets[d.case[ra_run]]
    del gap
    score_ra, score_crit, score_offsets = expand(ra_n_crit)
    satisfaction = np.round(_beta(rng, ra_centre[score_ra], _CONCENTRATION), 3)
    flat = ra_crit_start[score_ra] + score_crit
    weight = d.crit_weight[flat]
    # The MCDA score a system would log: weighted mean satisfaction of each alternative.
    weighted = np.add.reduceat(weight * satisfaction, score_offsets[:-1])
    mcda = weighted / np.add.reduceat(weight, score_offsets[:-1])
    del weight, weighted, ra_centre, ra_crit_start
    score = np.where(d.is_cost[flat], 1.0 - satisfaction, satisfaction)
    del flat, satisfaction
    frame = coded_table(
        "scores",
        {
            "run_id": Coded(d.run_ids, np.repeat(np.arange(d.runs, dtype=np.int32), d.n_alt * d.n_crit)),
            "alternative": Coded(d.alt_labels, np.repeat(d.run_alt_pos, ra_n_crit)),
            "criterion": Coded(d.crit_labels, score_crit),
            "score": np.round(score, 3),
        },
    )
    return frame, mcda, len(score)


def _alt_scores(d: _Design, mcda: np.ndarray, support: np.ndarray) -> pl.LazyFrame:
    return coded_table(
        "alt_scores",
        {
            "run_id": Coded(d.run_ids, d.run_alt_run),
            "alternative": Coded(d.alt_labels, d.run_alt_pos),
            "mcda": np.round(mcda, 4),
            "final": np.round(np.clip(0.6 * mcda + 0.4 * support, 0.0, 1.0), 4),
        },
    )
