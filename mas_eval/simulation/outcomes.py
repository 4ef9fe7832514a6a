"""Synthetic benchmark logs with epochs: a MAS and a single agent on the same cases, each case run several times.

:func:`simulate_outcomes` fills ``runs`` (with ``epoch`` and the input/output token split),
``usage`` (calls, tokens, cost and time per agent and model) and ``outcomes`` (a pass/fail score
``match`` with a planted MAS effect and per-case difficulty, and a numeric score ``f1``), as an
evaluation tool such as inspect_ai logs them ("Outcomes of any benchmark"); with ``trace=True``
also the transcript (``messages``: rounds of turns, one agent leading by a planted share) and
the ``tool_calls``. It serves tests and demos of the outcomes and process families and of the
statistics over epochs: pass@k, majority vote, compute-matched comparisons, the overhead against
the single agent. Every table is generated column-wise with NumPy, never with a Python loop over runs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, Boolean, Interval, IntPair, Predicate, validate_params
from mas_eval.errors import InvalidParameterError
from mas_eval.simulation._shared import SYSTEMS, Coded, SizeCeiling, coded_table, deal_runs, expand, labels, split_runs
from mas_eval.storage.dataset import Dataset

__all__ = ["CEILING", "MODELS", "SCORES", "TOOLS", "WORDS", "simulate_outcomes"]

#: The scores every run gets, in ``outcomes`` (sorted, as the family's columns are).
SCORES = ("f1", "match")
#: The models and their prices in USD per million (input, output) tokens: the MAS's coordinator
#: and the single agent call the large one, the MAS's other agents the small one.
MODELS = ("model-large", "model-small")
_PRICES = np.array([[3.0, 15.0], [0.5, 1.5]])
#: Agent ids: the MAS's first agent coordinates, the others solve; the single agent solves alone.
COORDINATOR, SOLVER = "coordinator", "solver"

_TOKEN_SHAPE = 20.0  # a run's tokens: mean * Gamma(20) / 20, a spread of about 22 %
_COORDINATION_WEIGHT = 2.0  # the coordinator's Gamma shape against 1 for each other agent
_OUTPUT_LOW, _OUTPUT_SPAN = 0.10, 0.20  # share of an agent's tokens it generates
_F1_LOW, _F1_PASSED, _F1_CONCENTRATION = 0.30, 0.50, 10.0  # f1 ~ Beta around 0.3 (+0.5 when passed)
_TOKENS_PER_SECOND, _SECONDS_PER_CALL = 60.0, 0.4
#: The words of the simulated turns (each turn draws 6-14 of them, with repeats) and the tools called.
WORDS = (
    "the", "flood", "river", "bridge", "north", "south", "evacuate", "shelter", "route", "level", "rising", "risk",
    "school", "hospital", "power", "road", "closed", "open", "team", "plan", "agree", "disagree", "because", "data",
    "sensor", "forecast", "rain", "hours", "now", "later", "first", "second", "priority", "supplies", "boats",
    "volunteers", "report", "confirm", "map", "zone",
)  # fmt: skip
_WORDS_PER_TURN = (6, 14)
TOOLS = ("search", "map", "weather")
_TOOL_SECONDS = 0.8  # a tool call's time: exponential with this mean
#: The user's prompt opening every transcript (the turn 0 of the first round, not an agent's).
_PROMPT, _USER = "Decide what to do about the case.", "user"

#: What a run of the default size costs (simulated and written, measured at 100,000 runs), and so
#: the most runs :func:`simulate_outcomes` makes.
CEILING = SizeCeiling("simulate_outcomes", 1_500)


def _size(agents: tuple[int, int], trace: bool, rounds: int, tool_rate: float) -> float:
    """Estimate the rows of a run of the MAS over every table: what its memory grows with.

    The tables are runs, usage, outcomes; with ``trace``, messages and tool calls, a message with
    its text counted as 4 rows.
    """
    team = (agents[0] + agents[1]) / 2
    turns = rounds * team if trace else 0.0
    return 1 + team + len(SCORES) + 4 * (turns + 1) * trace + turns * tool_rate


@validate_params(
    {
        "runs": [CEILING.constraint()],
        "seed": [Interval(int, 0)],
        "effect": [Interval(float, -1, 1, closed="neither")],
        "mas_share": [Interval(float, 0, 1, closed="neither")],
        "epochs": [Interval(int, 1, 1_000)],
        "tasks": [Interval(int, 1, CEILING.runs)],
        "single_pass": [Interval(float, 0, 1, closed="neither")],
        "case_sd": [Interval(float, 0, 10)],
        "agents": [IntPair(2, 100)],
        "mas_tokens": [Interval(int, 1, 10**9)],
        "single_tokens": [Interval(int, 1, 10**9)],
        "trace": [Boolean()],
        "rounds": [Interval(int, 1, 100)],
        "lead_share": [Interval(float, 0, 1), NONE],
        "tool_rate": [Interval(float, 0, 20)],
        "tool_failure": [Interval(float, 0, 1)],
        "progress": [Predicate(callable, "a callable taking a description"), NONE],
    }
)
def simulate_outcomes(
    runs: int,
    *,
    seed: int,
    effect: float = 0.15,
    mas_share: float = 0.5,
    epochs: int = 5,
    tasks: int = 3,
    single_pass: float = 0.6,
    case_sd: float = 1.0,
    agents: tuple[int, int] = (3, 5),
    mas_tokens: int = 6_000,
    single_tokens: int = 1_500,
    trace: bool = False,
    rounds: int = 3,
    lead_share: float | None = None,
    tool_rate: float = 0.5,
    tool_failure: float = 0.1,
    progress: Callable[[str], object] | None = None,
) -> Dataset:
    r"""Simulate a Dataset of scored runs with epochs, per-agent usage and a planted MAS effect.

    Parameters
    ----------
    runs : int
        Runs in total (MAS and single agent together), at least 2; at most 5,300,000 of the
        default size, fewer with larger teams.
    seed : int
        Seed (>= 0) of ``numpy.random.default_rng``: the same arguments give identical tables.
    effect : float, default 0.15
        The MAS's pass probability minus the single agent's on a case of median difficulty, in
        (-1, 1); ``single_pass + effect`` must lie in (0, 1). Over cases of spread difficulty
        the mean difference is somewhat smaller (Notes).
    mas_share : float, default 0.5
        Share of the runs made by the MAS, in (0, 1).
    epochs : int, default 5
        Runs of each case by the less frequent system (by each system at ``mas_share=0.5``):
        ``runs.epoch`` numbers them 1, 2, ... per system and case. The more frequent system, and
        any runs left over, spread over the same cases (some cases get an epoch more).
    tasks : int, default 3
        Tasks ``"task1"``...; case ``i`` belongs to task ``i mod tasks``.
    single_pass : float, default 0.6
        The single agent's pass probability on a case of median difficulty, in (0, 1).
    case_sd : float, default 1.0
        Standard deviation of a case's difficulty on the logit scale (0: every case alike).
    agents : (int, int), default (3, 5)
        Inclusive range of a MAS run's agents (min >= 2, max <= 100): one coordinator
        (``"coordinator"``, large model) and solvers ``"solver1"``... (small model). The single
        agent is ``"solver"`` on the large model.
    mas_tokens, single_tokens : int, default 6000, 1500
        Mean tokens of a MAS run and of a single-agent run.
    trace : bool, default False
        Also write the runs' transcripts (``messages``) and tool calls (``tool_calls``), and
        ``runs.tool_calls``/``tool_errors``: what the process family reads.
    rounds : int, default 3
        Rounds of a transcript (1 to 100): in each, a MAS run has as many turns as agents, the
        single agent one.
    lead_share : float, optional
        Share of a MAS run's turns that its coordinator takes, in [0, 1]: each turn is the
        coordinator's with this probability, else a solver's drawn uniformly. By default every
        agent speaks once a round (equal shares).
    tool_rate : float, default 0.5
        Mean tool calls per turn (Poisson), 0 to 20.
    tool_failure : float, default 0.1
        Probability that a tool call ends in an error, in [0, 1].
    progress : callable, optional
        Called as ``progress(description)`` after each table, e.g. ``"runs: 1,000 rows"``.

    Returns
    -------
    Dataset
        Tables ``runs`` (``epoch``, ``tokens``, ``input_tokens``, ``output_tokens``,
        ``cost_usd``, ``api_calls``, ``seconds``: the sums of the run's usage), ``usage`` and
        ``outcomes`` (``match``: pass/fail; ``f1``: a value in (0, 1)); with ``trace``, also
        ``messages`` (rounds ``round1``...: the user's prompt, role ``user`` and source
        ``input``, then the agents' turns, role ``assistant``) and ``tool_calls``; valid by
        construction.

    Raises
    ------
    InvalidParameterError
        An argument out of range, ``single_pass + effect`` outside (0, 1), too few runs for
        ``epochs``, or more runs than fit in memory (the message says how many do).

    Notes
    -----
    Case :math:`c` has difficulty :math:`d_c \sim N(0, case\_sd^2)`; a run of system
    :math:`s` passes with probability

    .. math:: p = \operatorname{expit}\big(\operatorname{logit}(\pi_s) + d_c\big),\quad
              \pi_{single} = single\_pass,\ \pi_{mas} = single\_pass + effect

    independently across epochs. ``f1`` is :math:`\mathrm{Beta}` with mean 0.3 (0.8 when the
    run passed) and concentration 10. A run's tokens are its system's mean times
    :math:`\mathrm{Gamma}(20)/20`, split over its agents by Gamma weights (shape 2 for the
    coordinator, 1 for each solver: the coordination overhead), 10-30 % of each agent's tokens
    generated (output); calls are :math:`1 + \mathrm{Poisson}(1.5)` per MAS agent and
    :math:`1 + \mathrm{Poisson}(0.5)` for the single agent; cost is tokens times the model's price.

    To plant "the MAS better at equal epochs, the single agent better at equal tokens", give
    the single agent a pass probability above 1/2 whose majority over :math:`k` epochs beats
    the MAS, and :math:`k` times fewer tokens: ``single_pass=0.65, effect=0.1, case_sd=0,
    single_tokens=mas_tokens // 7`` gives the MAS 0.75 against 0.65 per run, while the single
    agent's majority over 7 epochs (the tokens of one MAS run) passes with probability 0.80.

    A transcript's turns draw 6-14 words each from :data:`WORDS`, so different agents' turns
    share words by chance (the process family's ``redundancy``). Each turn makes
    :math:`\mathrm{Poisson}(tool\_rate)` tool calls of :data:`TOOLS`, each failing with
    probability ``tool_failure``. With ``lead_share`` :math:`p` and :math:`n` agents, the
    coordinator's expected share of the turns is :math:`p`, and each solver's
    :math:`(1 - p)/(n - 1)`.

    Examples
    --------
    >>> ds = simulate_outcomes(40, seed=0, trace=True, lead_share=0.8)
    >>> ds.table_names
    ['runs', 'messages', 'usage', 'tool_calls', 'outcomes']
    """
    if not 0 < single_pass + effect < 1:
        msg = (
            f"simulate_outcomes: single_pass + effect = {single_pass + effect:g} is the MAS's pass probability; "
            "it must lie in (0, 1): lower effect or single_pass"
        )
        raise InvalidParameterError(msg)
    if agents[0] > agents[1]:
        msg = f"simulate_outcomes: agents={agents!r} is not a range MIN,MAX with MIN <= MAX"
        raise InvalidParameterError(msg)
    size = {"agents": agents, "trace": trace, "rounds": rounds, "tool_rate": tool_rate}
    CEILING.check(runs, _size, size, simulate_outcomes)
    report = progress if progress is not None else (lambda _step: None)
    rng = np.random.default_rng(seed)
    n_mas, n_single, n_cases = split_runs(runs, mas_share, epochs, where="simulate_outcomes")
    is_mas, case = deal_runs(n_mas, n_single, n_cases)

    difficulty = rng.normal(0.0, case_sd, n_cases)
    base = np.where(is_mas, single_pass + effect, single_pass)
    p = 1.0 / (1.0 + np.exp(-(np.log(base / (1 - base)) + difficulty[case])))
    passed = rng.random(runs) < p
    f1_mean = _F1_LOW + _F1_PASSED * passed
    x = rng.standard_gamma(f1_mean * _F1_CONCENTRATION)
    f1 = x / (x + rng.standard_gamma((1 - f1_mean) * _F1_CONCENTRATION))

    team = np.where(is_mas, rng.integers(agents[0], agents[1] + 1, runs), 1)
    total = np.maximum(
        np.rint(np.where(is_mas, mas_tokens, single_tokens) * rng.standard_gamma(_TOKEN_SHAPE, runs) / _TOKEN_SHAPE),
        team,
    ).astype(np.int64)
    parent, position, offsets = expand(team)
    run_ids = labels("r", runs, max(7, len(str(runs))))
    usage_frame, sums = _usage(rng, run_ids, is_mas, total, parent, position, offsets)
    transcript = _trace(rng, run_ids, is_mas, team, rounds, lead_share, tool_rate, tool_failure) if trace else {}
    tool_counts = transcript.pop("counts", {})
    tables = {"runs": _runs(run_ids, is_mas, case, total, sums, tool_counts, n_cases=n_cases, tasks=tasks)}
    report(f"runs: {runs:,} rows")
    tables["usage"] = usage_frame
    report(f"usage: {len(parent):,} rows")
    tables["outcomes"] = _outcomes(run_ids, f1, passed)
    report(f"outcomes: {runs * len(SCORES):,} rows")
    for name, frame in transcript.items():
        tables[name] = frame
        report(f"{name}: {frame.select(pl.len()).collect().item():,} rows")
    return Dataset.from_frames(**tables)


def _epochs(is_mas: np.ndarray, case: np.ndarray) -> np.ndarray:
    """Rank each run among its system's runs of the case, from 1: its epoch.

    Runs come by case, then repeat, the MAS's first.
    """
    group = case * 2 + (~is_mas)
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], group[order], side="left")
    epoch = np.empty(len(case), dtype=np.int64)
    epoch[order] = np.arange(len(case)) - starts + 1
    return epoch


def _runs(
    run_ids: pl.Series,
    is_mas: np.ndarray,
    case: np.ndarray,
    total: np.ndarray,
    sums: dict[str, np.ndarray],
    tool_counts: dict[str, np.ndarray],
    *,
    n_cases: int,
    tasks: int,
) -> pl.LazyFrame:
    """Make the runs table: ids, system, case, task, epoch, the tokens, the usage sums and tool counts per run."""
    return coded_table(
        "runs",
        {
            "run_id": run_ids,
            "system": Coded(pl.Series(SYSTEMS), (~is_mas).astype(np.uint8)),
            "case_id": Coded(labels("case", n_cases, max(6, len(str(n_cases)))), case),
            "task": Coded(labels("task", tasks), case % tasks),
            "variant": None,
            "seed": None,
            "epoch": _epochs(is_mas, case),
            "cluster": None,
            "recommended": None,
            "correct": None,
            "confidence": None,
            "iterations": None,
            "api_calls": sums["calls"],
            "seconds": sums["seconds"],
            "tokens": total,
            "input_tokens": sums["input_tokens"],
            "output_tokens": sums["output_tokens"],
            "cost_usd": sums["cost_usd"],
            "tool_calls": tool_counts.get("calls"),
            "tool_errors": tool_counts.get("errors"),
        },
        where="simulate_outcomes",
    )


def _outcomes(run_ids: pl.Series, f1: np.ndarray, passed: np.ndarray) -> pl.LazyFrame:
    """Make the outcomes table: two rows per run, by name: f1 (a value), then match (pass/fail)."""
    runs = len(run_ids)
    return coded_table(
        "outcomes",
        {
            "run_id": Coded(run_ids, np.repeat(np.arange(runs), len(SCORES))),
            "name": Coded(pl.Series(SCORES), np.tile(np.arange(len(SCORES)), runs)),
            "value": np.column_stack([np.round(f1, 4), passed.astype(np.float64)]).ravel(),
            "passed": pl.Series(np.column_stack([passed, passed]).ravel()).set(
                pl.Series(np.tile([True, False], runs)), None
            ),
        },
        where="simulate_outcomes",
    )


def _usage(
    rng: np.random.Generator,
    run_ids: pl.Series,
    is_mas: np.ndarray,
    total: np.ndarray,
    parent: np.ndarray,
    position: np.ndarray,
    offsets: np.ndarray,
) -> tuple[pl.LazyFrame, dict[str, np.ndarray]]:
    """Make the usage rows (one per agent of a run, in run order) and their sums per run."""
    mas_row = is_mas[parent]
    coordinator = mas_row & (position == 0)
    weight = rng.standard_gamma(np.where(coordinator, _COORDINATION_WEIGHT, 1.0))
    # Integer split of the run's tokens: each agent gets the difference of the rounded-down running
    # shares, so the agents' tokens add up to the run's exactly.
    running = np.cumsum(weight)
    before = np.concatenate([[0.0], running])[offsets[:-1]]
    share_to = (running - before[parent]) / (running[offsets[1:] - 1] - before)[parent]
    upto = np.floor(share_to * total[parent]).astype(np.int64)
    upto[offsets[1:] - 1] = total
    tokens = upto - np.concatenate([[0], upto[:-1]])
    tokens[offsets[:-1]] = upto[offsets[:-1]]
    output = np.rint(tokens * (_OUTPUT_LOW + _OUTPUT_SPAN * rng.random(len(tokens)))).astype(np.int64)
    inputs = tokens - output
    calls = 1 + rng.poisson(np.where(mas_row, 1.5, 0.5))
    model = np.where(mas_row & ~coordinator, 1, 0)
    cost = np.round((inputs * _PRICES[model, 0] + output * _PRICES[model, 1]) / 1e6, 8)
    seconds = np.round(output / _TOKENS_PER_SECOND + _SECONDS_PER_CALL * calls, 3)
    solver_ids = pl.Series([COORDINATOR, SOLVER, *(f"{SOLVER}{i}" for i in range(1, int(position.max(initial=0)) + 1))])
    agent = np.where(coordinator, 0, np.where(mas_row, position + 1, 1))
    frame = coded_table(
        "usage",
        {
            "run_id": Coded(run_ids, parent),
            "agent_id": Coded(solver_ids, agent),
            "model": Coded(pl.Series(MODELS), model),
            "calls": calls,
            "input_tokens": inputs,
            "output_tokens": output,
            "cost_usd": cost,
            "seconds": seconds,
        },
        where="simulate_outcomes",
    )
    starts = offsets[:-1]
    sums = {
        "calls": np.add.reduceat(calls, starts),
        "input_tokens": np.add.reduceat(inputs, starts),
        "output_tokens": np.add.reduceat(output, starts),
        "cost_usd": np.round(np.add.reduceat(cost, starts), 8),
        "seconds": np.round(np.add.reduceat(seconds, starts), 3),
    }
    return frame, sums


def _trace(
    rng: np.random.Generator,
    run_ids: pl.Series,
    is_mas: np.ndarray,
    team: np.ndarray,
    rounds: int,
    lead_share: float | None,
    tool_rate: float,
    tool_failure: float,
) -> dict:
    """Make the runs' ``messages`` and ``tool_calls``, and per run the tool calls and errors (``counts``)."""
    runs = len(is_mas)
    per_round = np.where(is_mas, team, 1)
    turn_run, position, _ = expand(per_round * rounds)
    size = per_round[turn_run]
    # Agents are numbered as in usage: 0 the coordinator, 1 the single agent, k + 1 the MAS's solver k.
    if lead_share is None:
        speaker = position % size
    else:
        leads = rng.random(len(turn_run)) < lead_share
        solver = 1 + np.floor(rng.random(len(turn_run)) * (size - 1)).astype(np.int64)
        speaker = np.where(leads, 0, solver)
    mas_turn = is_mas[turn_run]
    agent = np.where(mas_turn, np.where(speaker == 0, 0, speaker + 1), 1)
    round_of = position // size
    turn_of = position % size + 1
    lengths = rng.integers(_WORDS_PER_TURN[0], _WORDS_PER_TURN[1] + 1, len(turn_run))
    word_turn, _, _ = expand(lengths)
    drawn = pl.Series(WORDS).gather(rng.integers(0, len(WORDS), len(word_turn)))
    text = (
        pl.DataFrame({"turn": word_turn, "word": drawn})
        .group_by("turn", maintain_order=True)
        .agg(pl.col("word").str.join(" "))["word"]
    )
    # The prompt of each run first (turn 0 of round 1), then its agents' turns.
    order = np.argsort(np.concatenate([np.arange(runs), turn_run]), kind="stable")
    prompt = np.concatenate([np.ones(runs, dtype=bool), np.zeros(len(turn_run), dtype=bool)])[order]
    agents = pl.Series([COORDINATOR, SOLVER, *(f"{SOLVER}{i}" for i in range(1, int(team.max(initial=1)))), _USER])
    messages = coded_table(
        "messages",
        {
            "run_id": Coded(run_ids, np.concatenate([np.arange(runs), turn_run])[order]),
            "round": Coded(labels("round", rounds), np.concatenate([np.zeros(runs, dtype=np.int64), round_of])[order]),
            "agent_id": Coded(agents, np.concatenate([np.full(runs, len(agents) - 1), agent])[order]),
            "turn": np.concatenate([np.zeros(runs, dtype=np.int64), turn_of])[order],
            "text": pl.concat([pl.Series([_PROMPT] * runs), text])[order],
            "source": Coded(pl.Series(["input", "generate"]), (~prompt).astype(np.uint8)),
            "role": Coded(pl.Series([_USER, "assistant"]), (~prompt).astype(np.uint8)),
            "model": Coded(
                pl.Series([*MODELS, None]), np.concatenate([np.full(runs, 2), np.where(agent >= 2, 1, 0)])[order]
            ),
        },
        where="simulate_outcomes",
    )
    calls = rng.poisson(tool_rate, len(turn_run))
    call_turn, _, _ = expand(calls)
    call_run = turn_run[call_turn]
    per_run = np.bincount(call_run, minlength=runs)
    starts = np.concatenate([[0], np.cumsum(per_run)[:-1]])
    failed = rng.random(len(call_turn)) < tool_failure
    tool_calls = coded_table(
        "tool_calls",
        {
            "run_id": Coded(run_ids, call_run),
            "agent_id": Coded(agents, agent[call_turn]),
            "turn": np.arange(len(call_turn), dtype=np.int64) - starts[call_run] + 1,
            "tool": Coded(pl.Series(TOOLS), rng.integers(0, len(TOOLS), len(call_turn))),
            "error": Coded(pl.Series(["timeout", None]), (~failed).astype(np.uint8)),
            "seconds": np.round(rng.exponential(_TOOL_SECONDS, len(call_turn)), 3),
            "message_turn": turn_of[call_turn].astype(np.int64),
        },
        where="simulate_outcomes",
    )
    errors = np.bincount(call_run, weights=failed, minlength=runs).astype(np.int64)
    return {"messages": messages, "tool_calls": tool_calls, "counts": {"calls": per_run, "errors": errors}}
