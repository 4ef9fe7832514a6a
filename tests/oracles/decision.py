"""The crisis-MAS evaluation methodology's decision metrics for ONE run, in plain Python, to read next to its formulas.

Nothing here is fast or clever: each function is the formula of the methodology (or of
the reference it names), with this toolkit's choices where it leaves room, written so that a
reader can check it line by line. The vectorised code in ``mas_eval.metrics`` must agree with it to 1e-9.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations, pairwise


@dataclass
class Run:
    """Everything the decision metrics read about one run."""

    run_id: str
    recommended: str | None = None
    correct: str | None = None
    confidence: float | None = None  # self-reported (runs.confidence)
    iterations: float | None = None
    api_calls: float | None = None
    seconds: float | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    agent_confidence: dict[str, float | None] = field(default_factory=dict)
    agent_weight: dict[str, float | None] = field(default_factory=dict)
    beliefs: dict[str, dict[str, float]] = field(default_factory=dict)  # agent -> alternative -> mass
    criteria: dict[str, dict] = field(default_factory=dict)  # criterion -> {weight, kind, scale}
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # alternative -> criterion -> score
    mcda: dict[str, float | None] = field(default_factory=dict)
    final: dict[str, float | None] = field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        return sorted(set(self.agent_confidence) | set(self.agent_weight) | set(self.beliefs))

    @property
    def belief_alternatives(self) -> list[str]:
        return sorted({a for masses in self.beliefs.values() for a in masses})

    @property
    def alternatives(self) -> list[str]:
        return sorted(set(self.belief_alternatives) | set(self.scores) | set(self.mcda) | set(self.final))

    def criterion(self, name: str) -> dict:
        spec = self.criteria.get(name, {})
        return {
            "weight": spec.get("weight"),
            "kind": spec.get("kind") or "benefit",
            "scale": spec.get("scale") or "satisfaction",
        }


#: Values within 1e-12 x max(1, |value|) rank as ties (then by id), as in mas_eval.metrics.ranks.
TIE_TOLERANCE = 1e-12


def ranked_descending(values: dict[str, float]) -> list[str]:
    """Ids from the highest value down; each value counts as the largest one that ties with it
    from above (within the tolerance), and equal ones go by id."""

    def tied_top(v: float) -> float:
        return max(w for w in values.values() if v <= w <= v + TIE_TOLERANCE * max(1.0, abs(v)))

    return sorted(values, key=lambda a: (-tied_top(values[a]), a))


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


# -- criteria satisfaction and DQS (the methodology's "Decision Quality Score") ----------------


def satisfaction(run: Run, alternative: str, criterion: str) -> float:
    """How well ``alternative`` satisfies ``criterion``, in [0, 1]."""
    spec = run.criterion(criterion)
    value = run.scores[alternative][criterion]
    if spec["scale"] == "satisfaction":
        return 1.0 - value if spec["kind"] == "cost" else value
    column = [s[criterion] for s in run.scores.values() if criterion in s]
    low, high = min(column), max(column)
    if high == low:
        return 1.0  # a constant raw column satisfies every alternative equally (crisis_mas_poc)
    if spec["kind"] == "cost":
        return (high - value) / (high - low)
    return (value - low) / (high - low)


def criteria_weights(run: Run, *, weighted: bool = True) -> dict[str, float] | None:
    """The weights of the scored criteria if every one has a weight and they sum > 0, else None."""
    names = sorted({c for s in run.scores.values() for c in s})
    weights = {c: run.criterion(c)["weight"] for c in names}
    if not weighted or any(w is None for w in weights.values()) or sum(weights.values()) <= 0:
        return None
    return weights


def criteria_satisfaction(run: Run, alternative: str, *, weighted: bool = True) -> float | None:
    """Mean, or ``Σ w s / Σ w``, of the alternative's satisfactions over the criteria it has."""
    present = sorted(run.scores.get(alternative, {}))
    if not present:
        return None
    sats = {c: satisfaction(run, alternative, c) for c in present}
    weights = criteria_weights(run, weighted=weighted)
    if weights is None or sum(weights[c] for c in present) <= 0:
        return mean(list(sats.values()))
    return sum(weights[c] * sats[c] for c in present) / sum(weights[c] for c in present)


def weighted_sum(run: Run, alternative: str) -> float | None:
    """crisis_mas_poc's MCDA score: Σ w s / Σ w of the satisfactions, weights whenever given."""
    return criteria_satisfaction(run, alternative, weighted=True)


def dqs(run: Run, *, weighted: bool = True, gt_boost: float | None = 0.9) -> dict:
    """DQS cascade: criteria satisfaction → logged MCDA → logged final score of a*."""
    a = run.recommended
    raw, method = None, None
    if a is not None:
        candidates = (
            ("criteria", criteria_satisfaction(run, a, weighted=weighted)),
            ("mcda", run.mcda.get(a)),
            ("final", run.final.get(a)),
        )
        for name, value in candidates:
            if value is not None:
                raw, method = value, name
                break
    match = None if run.correct is None or a is None else a == run.correct
    boosted = raw
    if raw is not None and match and gt_boost is not None:
        boosted = max(raw, gt_boost)
    return {"dqs": boosted, "dqs_raw": raw, "dqs_method": method, "gt_match": match}


# -- consensus (the methodology's "Consensus Level") -------------------------------------------


def cosine(u: list[float], v: list[float]) -> float:
    dot = sum(x * y for x, y in zip(u, v, strict=True))
    return dot / (math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v)))


def vectors(run: Run) -> dict[str, list[float]]:
    """Belief vectors over the union of the run's alternatives; a missing mass is 0."""
    alts = run.belief_alternatives
    return {g: [run.beliefs[g].get(a, 0.0) for a in alts] for g in sorted(run.beliefs)}


def pairwise_similarities(run: Run) -> dict[tuple[str, str], float]:
    vec = vectors(run)
    return {(g, h): cosine(vec[g], vec[h]) for g, h in combinations(sorted(vec), 2)}


def top_choice(masses: dict[str, float]) -> str:
    """The highest-mass alternative; an exact tie goes to the id that sorts first."""
    best = max(masses.values())
    return min(a for a, m in masses.items() if m == best)


def consensus(run: Run, *, single_agent_consensus: float | None = None) -> dict:
    sims = pairwise_similarities(run)
    tops = [top_choice(run.beliefs[g]) for g in sorted(run.beliefs)]
    n = len(tops)
    top_pref, agreement = None, None
    if n:
        counts = {a: tops.count(a) for a in set(tops)}
        most = max(counts.values())
        top_pref = min(a for a, c in counts.items() if c == most)
        agreement = most / n
    return {
        "consensus_level": mean(list(sims.values())) if sims else single_agent_consensus if n else None,
        "agreement_percentage": agreement,
        "top_preference": top_pref,
    }


# -- confidence (the methodology's "Confidence Score") -----------------------------------------


def confidence(run: Run, *, consensus_weight: float = 0.6, single_agent_consensus: float | None = None) -> dict:
    cs = [c for c in run.agent_confidence.values() if c is not None]
    cl = consensus(run, single_agent_consensus=single_agent_consensus)["consensus_level"]
    n_agents = len(run.agents)
    avg = mean(cs) if cs else None
    if n_agents >= 2 and cl is not None and avg is not None:
        decision = consensus_weight * cl + (1 - consensus_weight) * avg
    elif run.confidence is not None:
        decision = run.confidence
    elif len(cs) == 1 and n_agents == 1:
        decision = cs[0]
    else:
        decision = None
    variance = sum((c - avg) ** 2 for c in cs) / len(cs) if cs else None  # population (ddof=0)
    return {
        "decision_confidence": decision,
        "average_confidence": avg,
        "uncertainty": None if decision is None else 1 - decision,
        "confidence_variance": variance,
        "confidence_std": None if variance is None else math.sqrt(variance),
        "min_confidence": min(cs) if cs else None,
        "max_confidence": max(cs) if cs else None,
    }


# -- expert contribution balance (the methodology's "Expert Contribution Balance") -------------


def normalized_entropy(masses: dict[str, float], n_outcomes: int, *, renormalise: bool = True) -> float:
    total = sum(masses.values()) if renormalise else 1.0
    p = [m / total for m in masses.values()]
    h = -sum(x * math.log(x) for x in p if x > 0)
    return h / math.log(n_outcomes) if n_outcomes > 1 else 0.0


def gini(values: list[float]) -> float:
    """G = Σ (2i − n − 1) w_(i) / (n Σ w), ascending order, no correction; all-zero → 0."""
    w = sorted(values)
    n = len(w)
    if n == 0 or sum(w) == 0:
        return 0.0
    return sum((2 * i - n - 1) * x for i, x in enumerate(w, start=1)) / (n * sum(w))


def contributions(run: Run, *, entropy_support: str = "run", entropy_renormalise: bool = True) -> dict[str, dict]:
    """Per agent: (c_i + H_norm(m_i)) / 2, with N = the run's distinct belief alternatives."""
    out = {}
    for g in run.agents:
        h = None
        if g in run.beliefs:
            n = len(run.belief_alternatives) if entropy_support == "run" else len(run.beliefs[g])
            h = normalized_entropy(run.beliefs[g], n, renormalise=entropy_renormalise)
        c = run.agent_confidence.get(g)
        out[g] = {
            "normalized_entropy": h,
            "confidence": c,
            "contribution": None if h is None or c is None else (c + h) / 2,
            "top_choice": top_choice(run.beliefs[g]) if g in run.beliefs else None,
        }
    return out


def balance(run: Run, **entropy: object) -> dict:
    contrib = [v["contribution"] for v in contributions(run, **entropy).values() if v["contribution"] is not None]
    tops = [top_choice(run.beliefs[g]) for g in sorted(run.beliefs)]
    n = len(run.agents)
    g = gini(contrib) if contrib else None
    return {
        "gini_coefficient": g,
        "balance_score": None if g is None else 1 - g,
        "unique_preferences": len(set(tops)),
        "diversity_score": len(set(tops)) / n if n and tops else None,
        "num_agents": n,
    }


# -- efficiency (the methodology's "Efficiency Metrics") ---------------------------------------


def efficiency(run: Run, *, iterations: float = 1.0, api_calls: float = 3.0, seconds: float = 5.0) -> dict:
    def eff(value: float | None, baseline: float) -> float | None:
        return None if value is None else 1 / (1 + value / baseline)

    parts = {
        "iteration_efficiency": eff(run.iterations, iterations),
        "api_efficiency": eff(run.api_calls, api_calls),
        "time_efficiency": eff(run.seconds, seconds),
    }
    values = list(parts.values())
    parts["efficiency_score"] = None if None in values else mean(values)
    # The usage the methodology prints beside the efficiencies, under its names.
    usage = {
        "time_to_consensus": run.iterations,
        "api_calls_used": run.api_calls,
        "processing_time_seconds": run.seconds,
        "tokens_used": run.tokens,
        "cost_usd": run.cost_usd,
    }
    return usage | parts


# -- TOPSIS (Hwang & Yoon 1981), on the raw scores ---------------------------------------------


def topsis(run: Run) -> dict[str, dict]:
    criteria = sorted({c for s in run.scores.values() for c in s})
    weights = criteria_weights(run) or {c: 1.0 for c in criteria}
    total_w = sum(weights[c] for c in criteria)
    v: dict[str, dict[str, float]] = {a: {} for a in run.scores}
    best, worst = {}, {}
    for c in criteria:
        column = {a: s[c] for a, s in run.scores.items() if c in s}
        norm = math.sqrt(sum(x * x for x in column.values()))
        for a, x in column.items():
            v[a][c] = (weights[c] / total_w) * (x / norm if norm > 0 else 0.0)
        values = [v[a][c] for a in column]
        high, low = max(values), min(values)
        cost = run.criterion(c)["kind"] == "cost"
        best[c], worst[c] = (low, high) if cost else (high, low)
    out = {}
    for a in sorted(run.scores):
        d_best = math.sqrt(sum((x - best[c]) ** 2 for c, x in v[a].items()))
        d_worst = math.sqrt(sum((x - worst[c]) ** 2 for c, x in v[a].items()))
        close = 0.5 if d_best + d_worst == 0 else d_worst / (d_best + d_worst)
        out[a] = {"topsis_distance_best": d_best, "topsis_distance_worst": d_worst, "topsis_closeness": close}
    ranked = ranked_descending({a: out[a]["topsis_closeness"] for a in out})
    for rank, a in enumerate(ranked, start=1):
        out[a]["topsis_rank"] = rank
    return out


# -- Evidential Reasoning, analytical algorithm (Wang, Yang & Xu 2006) -------------------------


def agent_weights(run: Run) -> dict[str, float]:
    """Attribute weights: agents.weight normalised to sum 1; equal when any is missing or all 0."""
    agents = sorted(run.beliefs)
    raw = [run.agent_weight.get(g) for g in agents]
    if any(w is None for w in raw) or sum(raw) <= 0:
        return {g: 1 / len(agents) for g in agents}
    return {g: w / sum(raw) for g, w in zip(agents, raw, strict=True)}


def evidential_reasoning(run: Run) -> dict:
    r"""Yang & Xu's ER with agents as attributes and alternatives as grades.

    m_{n,i} = w_i β_{n,i};  m̄_{H,i} = 1 − w_i;  m̃_{H,i} = w_i (1 − Σ_n β_{n,i})
    k = [Σ_n Π_i (m_{n,i} + m̄_{H,i} + m̃_{H,i}) − (N − 1) Π_i (m̄_{H,i} + m̃_{H,i})]⁻¹
    β_n = k [Π_i (m_{n,i} + m̄ + m̃) − Π_i (m̄ + m̃)] / (1 − k Π_i m̄_{H,i})
    β_H = k [Π_i (m̄ + m̃) − Π_i m̄_{H,i}] / (1 − k Π_i m̄_{H,i})
    """
    grades = run.belief_alternatives
    agents = sorted(run.beliefs)
    w = agent_weights(run)
    beta = {g: {n: run.beliefs[g].get(n, 0.0) for n in grades} for g in agents}
    m_bar = {g: 1 - w[g] for g in agents}
    m_tilde = {g: w[g] * (1 - sum(beta[g].values())) for g in agents}
    m_h = {g: m_bar[g] + m_tilde[g] for g in agents}

    def prod(values: list[float]) -> float:
        return math.prod(values)

    with_grade = {n: prod([w[g] * beta[g][n] + m_h[g] for g in agents]) for n in grades}
    all_h = prod([m_h[g] for g in agents])
    all_bar = prod([m_bar[g] for g in agents])
    k = 1 / (sum(with_grade.values()) - (len(grades) - 1) * all_h)
    denominator = 1 - k * all_bar
    belief = {n: k * (with_grade[n] - all_h) / denominator for n in grades}
    unassigned = k * (all_h - all_bar) / denominator
    ranked = ranked_descending(belief)
    return {
        "er_belief": belief,
        "er_unassigned": unassigned,
        "er_rank": {n: i for i, n in enumerate(ranked, 1)},
    }


def weighted_average_beliefs(run: Run) -> dict:
    """crisis_mas_poc's "ER": Σ_i w_i m_i/Σm_i, renormalised to sum 1; nothing unassigned."""
    w = agent_weights(run)
    grades = run.belief_alternatives
    combined = {
        n: sum(w[g] * run.beliefs[g].get(n, 0.0) / sum(run.beliefs[g].values()) for g in run.beliefs) for n in grades
    }
    total = sum(combined.values())
    belief = {n: v / total for n, v in combined.items()}
    ranked = ranked_descending(belief)
    return {"er_belief": belief, "er_unassigned": 0.0, "er_rank": {n: i for i, n in enumerate(ranked, 1)}}


# -- conflicts (crisis_mas_poc's consensus model) ----------------------------------------------


SEVERITY = [(0.6, "high"), (0.3, "moderate"), (0.0, "low")]


def conflicts(run: Run, *, threshold: float = 0.3) -> dict[tuple[str, str], dict]:
    """Every pair of agents whose top choices differ with a disagreement of at least ``threshold``.

    Disagreement: ((m_a(t_a) - m_a(t_b)) + (m_b(t_b) - m_b(t_a))) / 2; severity 1 - cos(m_a, m_b),
    the cosine clipped to [0, 1]; compromise: argmax of 0.6 * mean + 0.4 * min of the two beliefs.
    """
    out = {}
    for g, h in combinations(sorted(run.beliefs), 2):
        mg, mh = run.beliefs[g], run.beliefs[h]
        tg, th = top_choice(mg), top_choice(mh)
        if tg == th:
            continue
        gap = ((mg[tg] - mg.get(th, 0.0)) + (mh[th] - mh.get(tg, 0.0))) / 2
        if gap < threshold:
            continue
        alternatives = sorted(set(mg) | set(mh))
        u, v = [mg.get(a, 0.0) for a in alternatives], [mh.get(a, 0.0) for a in alternatives]
        norm = math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v))
        cos = 0.0 if norm == 0 else max(0.0, min(1.0, sum(x * y for x, y in zip(u, v, strict=True)) / norm))
        severity = 1.0 - cos
        compromise = {a: 0.6 * ((mg.get(a, 0.0) + mh.get(a, 0.0)) / 2) + 0.4 * min(mg.get(a, 0.0), mh.get(a, 0.0))
                      for a in alternatives}  # fmt: skip
        best = max(compromise.values())
        out[g, h] = {
            "top_choice_a": tg,
            "top_choice_b": th,
            "belief_a": mg[tg],
            "belief_b": mh[th],
            "disagreement": gap,
            "severity": severity,
            "severity_level": next(level for low, level in SEVERITY if severity >= low),
            "compromise": min(a for a, c in compromise.items() if c == best),
            "compromise_score": best,
        }
    return out


# -- stability of the MCDA top alternative under weight perturbation ---------------------------

MASK = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(z: int) -> int:
    z = (z + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def run_key(run_id: str, seed: int) -> int:
    h = 0xCBF29CE484222325  # FNV-1a, 64 bits, over the UTF-8 bytes
    for byte in run_id.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return splitmix64(h ^ splitmix64(seed & MASK))


def uniform(key: int, position: int, draw: int) -> float:
    return (splitmix64((key + GOLDEN * ((draw << 32) + position + 1)) & MASK) >> 11) * 2.0**-53


def mcda_scores(run: Run, mcda: str, weights: dict[str, float]) -> dict[str, float]:
    """Every scored alternative's MCDA score under the criterion ``weights`` (TOPSIS normalises them)."""
    criteria = sorted({c for s in run.scores.values() for c in s})
    out = {}
    if mcda == "weighted_sum":
        for a, row in run.scores.items():
            total = sum(weights[c] for c in row)
            sats = {c: satisfaction(run, a, c) for c in row}
            out[a] = sum(weights[c] * sats[c] for c in row) / total if total > 0 else mean(list(sats.values()))
        return out
    w = {c: weights[c] / sum(weights.values()) for c in criteria}
    r, best, worst = {}, {}, {}
    for c in criteria:
        column = {a: row[c] for a, row in run.scores.items() if c in row}
        norm = math.sqrt(sum(x * x for x in column.values()))
        r[c] = {a: x / norm if norm > 0 else 0.0 for a, x in column.items()}
        high, low = max(column.values()), min(column.values())
        cost = run.criterion(c)["kind"] == "cost"
        best[c] = (low if cost else high) / norm if norm > 0 else 0.0
        worst[c] = (high if cost else low) / norm if norm > 0 else 0.0
    for a, row in run.scores.items():
        d_best = math.sqrt(sum(w[c] ** 2 * (r[c][a] - best[c]) ** 2 for c in row))
        d_worst = math.sqrt(sum(w[c] ** 2 * (r[c][a] - worst[c]) ** 2 for c in row))
        out[a] = 0.5 if d_best + d_worst == 0 else d_worst / (d_best + d_worst)
    return out


def first_within(values: dict[str, float]) -> str:
    """The first id among those within 1e-12 x max(1, |best|) of the best value."""
    best = max(values.values())
    return min(a for a, v in values.items() if v >= best - 1e-12 * max(1.0, abs(best)))


def ranking_stability(run: Run, *, mcda: str, draws: int, perturbation: float, seed: int) -> float | None:
    """Share of ``draws`` weightings w_c (1 + d (2u - 1)) that keep the unperturbed top alternative."""
    if not run.scores or draws == 0:
        return None
    criteria = sorted({c for s in run.scores.values() for c in s})
    given = criteria_weights(run)
    if mcda == "weighted_sum":
        base = {c: given[c] if given else 1.0 for c in criteria}
    else:  # TOPSIS perturbs the normalised shares
        base = {c: given[c] / sum(given.values()) if given else 1 / len(criteria) for c in criteria}
    reference = first_within(mcda_scores(run, mcda, base))
    key = run_key(run.run_id, seed)
    kept = 0
    for k in range(draws):
        weights = {c: base[c] * (1 + perturbation * (2 * uniform(key, j, k) - 1)) for j, c in enumerate(criteria)}
        kept += first_within(mcda_scores(run, mcda, weights)) == reference
    return kept / draws


def swept_winners(run: Run, *, mcda: str, steps: int, criterion: str, low: float, high: float) -> list[str] | None:
    """crisis_mas_poc's sweep: the top alternative at each step as one weight runs from low to high."""
    criteria = sorted({c for s in run.scores.values() for c in s})
    if steps == 0 or criterion not in criteria:
        return None
    given = criteria_weights(run)
    w = {c: given[c] if given else 1.0 for c in criteria}
    others = sum(w[c] for c in criteria if c != criterion)
    winners = []
    for k in range(steps):
        t = low + (high - low) * k / (steps - 1) if steps > 1 else low
        weights = {c: t if c == criterion else w[c] * (1 - t) / others if others > 0 else w[c] for c in criteria}
        winners.append(first_within(mcda_scores(run, mcda, weights)))
    return winners


def swept_stability(winners: list[str] | None) -> float | None:
    """1 - (distinct top alternatives - 1) / steps."""
    return None if winners is None else 1 - (len(set(winners)) - 1) / len(winners)


def winner_changes(winners: list[str] | None) -> int | None:
    """Steps whose top alternative is not the previous step's: A, B, A is 2."""
    return None if winners is None else sum(a != b for a, b in pairwise(winners))


def score_run(run: Run, params: dict) -> dict:
    """Every metric of one run under ``params`` (a DecisionParams as a dict): run, agents, alternatives, conflicts."""
    p = params
    er = (evidential_reasoning if p["er"] == "yang_xu" else weighted_average_beliefs)(run) if run.beliefs else None
    row = {
        **dqs(run, weighted=p["dqs_weighted"], gt_boost=p["gt_boost"]),
        **consensus(run, single_agent_consensus=p["single_agent_consensus"]),
        **confidence(run, consensus_weight=p["consensus_weight"], single_agent_consensus=p["single_agent_consensus"]),
        **balance(run, entropy_support=p["entropy_support"], entropy_renormalise=p["entropy_renormalise"]),
        **efficiency(
            run,
            iterations=p["baseline_iterations"],
            api_calls=p["baseline_api_calls"],
            seconds=p["baseline_seconds"],
        ),
        "er_unassigned": None if er is None else er["er_unassigned"],
    }
    found = conflicts(run, threshold=p["conflict_threshold"])
    level = row["consensus_level"]
    row["consensus_reached"] = None if level is None else level >= p["consensus_threshold"]
    row["num_conflicts"] = len(found) if run.beliefs else None
    if p["stability_method"] == "sweep":
        winners = swept_winners(
            run,
            mcda=p["mcda"],
            steps=p["stability_draws"],
            criterion=p["stability_criterion"],
            low=p["stability_sweep_low"],
            high=p["stability_sweep_high"],
        )
        row["ranking_stability"] = swept_stability(winners)
        row["num_winner_changes"] = winner_changes(winners)
    else:
        row["num_winner_changes"] = None  # random weightings have no order
        row["ranking_stability"] = ranking_stability(
            run,
            mcda=p["mcda"],
            draws=p["stability_draws"],
            perturbation=p["stability_perturbation"],
            seed=p["stability_seed"],
        )
    agents = contributions(run, entropy_support=p["entropy_support"], entropy_renormalise=p["entropy_renormalise"])
    tops = topsis(run) if run.scores else {}
    alternatives = {}
    for a in run.alternatives:
        scored = a in run.scores and bool(run.scores[a])
        entry = {
            "criteria_satisfaction": criteria_satisfaction(run, a, weighted=p["dqs_weighted"]) if scored else None,
            "weighted_sum": weighted_sum(run, a) if scored else None,
            **(
                tops.get(a)
                or dict.fromkeys(("topsis_closeness", "topsis_distance_best", "topsis_distance_worst", "topsis_rank"))
            ),
            "er_belief": er["er_belief"].get(a) if er else None,
            "er_rank": er["er_rank"].get(a) if er else None,
        }
        alternatives[a] = entry
    mcda = "topsis_closeness" if p["mcda"] == "topsis" else "weighted_sum"
    ranked = ranked_descending({a: e[mcda] for a, e in alternatives.items() if e[mcda] is not None})
    for a, entry in alternatives.items():
        entry["mcda_score"] = entry[mcda]
        entry["mcda_rank"] = ranked.index(a) + 1 if a in ranked else None
    return {"run": row, "agents": agents, "alternatives": alternatives, "conflicts": found}
