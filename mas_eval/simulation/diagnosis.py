"""Synthetic differential-diagnosis Datasets (LDDx v6 metrics guide, Local-DDx shape) with a known MAS effect on recall.

:func:`simulate_diagnosis` fills the diagnosis tables (``runs``, ``agents``, ``messages``,
``ddx``, ``ground_truth``, ``interventions``) the way :mod:`mas_eval.ingest.lddx` fills them
from Local-DDx's files: seven rounds of a team of specialists, the team's can't-miss and final
lists, and a single-agent baseline on the same cases. The MAS's final list finds each
ground-truth diagnosis more often, by an amount the caller chooses, so that ``compare`` has a
known difference in ``traditional_recall`` to recover. Transcripts are built from small
vocabularies (reasoning keywords, structured markers, exclusion phrases, diagnosis names from the
shipped synonym table, intervention keywords from the shipped intervention table), so that
every diagnosis metric gets non-trivial values. Everything is generated column-wise with NumPy
and Polars: tens of thousands of runs and hundreds of megabytes of text in seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, Interval, IntPair, Predicate, validate_params
from mas_eval.data.schema import DDX_STANCES, TABLES
from mas_eval.data.vocabulary import (
    CANT_MISS,
    DEBATE,
    FINAL_ROUND,
    INDEPENDENT,
    MASTER_LIST,
    ROUNDS,
    SPECIALIZED_RANKING,
    SYMPTOM_MANAGEMENT,
    TEAM,
    VOTING,
)
from mas_eval.metrics.diagnosis.equivalence import normalise
from mas_eval.metrics.diagnosis.tables import shipped_table
from mas_eval.simulation._shared import (
    SYSTEMS,
    Coded,
    SizeCeiling,
    check_at_most,
    coded_table,
    deal_runs,
    expand,
    labels,
    mean_of,
    split_runs,
    vocab,
)
from mas_eval.simulation.diagnosis_words import (
    AGENT_NAMES,
    DIAGNOSES,
    EXCLUSIONS,
    FINDINGS,
    LINE_FINDINGS,
    MARKERS,
    OPENERS,
    OTHER_ACTIONS,
    PERCENTS,
    PLAIN,
    REASONING,
    ROLES,
    SINGLE_ROLE,
    SYMPTOMS,
    TREAT_ENDINGS,
    TREAT_VERBS,
)
from mas_eval.simulation.diagnosis_words import (
    SPECIALTIES as SPECIALTIES,
)
from mas_eval.storage.dataset import Dataset

__all__ = ["CEILING", "DIAGNOSES", "simulate_diagnosis"]


# -- model constants (see the Notes of `simulate_diagnosis`) ---------------------------------------------
_N_DISTRACTORS = 7  # other diagnoses a case's runs consider besides its ground truth
_P_LOW, _P_SPAN = 0.30, 0.30  # single-agent hit probability of a case: 0.30 + 0.30 * Beta(2, 2)
_P_DISPLAY_TRUTH, _P_DISPLAY_OTHER = 0.6, 0.75  # a final-list diagnosis is written as its canonical name
_FINAL_DISTRACTORS = (1, 3)  # wrong diagnoses in a final list
_AGENT_LIST = (3, 6)  # diagnoses in an agent's independent differential
_AGENT_TRUTH_BONUS = 0.3  # ground truth ranks higher in agents' lists
_P_STRUCTURED = 0.7  # agents whose independent differential carries evidence lists
_EVIDENCE_ITEMS = (1, 4)
_P_DEBATED, _P_EXCLUDE_TRUTH, _P_EXCLUDE_OTHER = 0.5, 0.15, 0.35  # debate rows, and which are "excluded"
_VOTES = 3  # diagnoses ranked in a vote
_P_CANT_MISS = (0.35, 0.4, 0.08)  # can't-miss: a ground truth, a wrong final diagnosis, another diagnosis
_P_CANT_MISS_EVIDENCE = 0.85  # else the can't-miss diagnosis has an empty evidence list
_P_EXCLUSION, _P_EXCLUDE_TARGET_TRUTH = 0.35, 0.5  # debate/vote messages with an exclusion sentence
_P_MARKER = 0.3  # debate messages opening with a structured marker
_REASONING_SENTENCES = {True: 5, False: 4}  # at most this many reasoning sentences in a message: MAS, single
_LENGTH_SPREAD = 0.3  # a message's wanted length is response_chars * U(0.7, 1.3)
_P_TREAT = 0.3  # a ground truth with a treating keyword gets an intervention naming it
_OTHER_INTERVENTIONS = (1, 3)
_DX_LINES = 3
_MAX_RESPONSE_CHARS = 20_000
_PRICE_PER_MTOK = 0.6
#: What a run of the default size costs (24 kB: 100,000 runs simulated and written peak 2.4 GB above
#: the imports, most of it message text decoded to be written), and so the most runs (330,000).
CEILING = SizeCeiling("simulate_diagnosis", 24_000)
#: The most agents of a MAS run, and messages of a run.
_MAX_AGENTS, _MAX_RESPONSES = 1_000, 100_000

_TEAM_ROUNDS = (SPECIALIZED_RANKING, SYMPTOM_MANAGEMENT, MASTER_LIST)
_ROUND_INDEX = {name: i for i, name in enumerate(ROUNDS)}
_ROUND_LABELS = pl.Series([*ROUNDS, FINAL_ROUND])


@dataclass(frozen=True)
class _Vocabulary:
    """DIAGNOSES with the ways of writing them, and the intervention keywords that treat them.

    ``forms`` holds every written form, canonical name first for each diagnosis
    (``form_start[d]`` .. ``form_start[d] + form_count[d]``); ``keywords`` the intervention
    keywords, ``keyword_start``/``keyword_count`` those treating each diagnosis.
    """

    names: tuple[str, ...]
    specialty: np.ndarray
    forms: pl.Series
    form_start: np.ndarray
    form_count: np.ndarray
    keywords: tuple[str, ...]
    keyword_start: np.ndarray
    keyword_count: np.ndarray


def _abbreviation(term: str) -> bool:
    """Whether ``term`` is a short term without spaces that is written in capitals ("aki" → "AKI"; not "flu")."""
    return " " not in term and len(term) <= 4 and term not in {"afib", "flu", "mono", "pheo"}


@cache
def _vocabulary() -> _Vocabulary:
    """Collect the written forms of each diagnosis: its name, lower case, its shipped synonyms and abbreviations.

    The synonyms are the shipped table's terms whose canonical name is the diagnosis (compared
    normalised); an abbreviation also gives ``"<Name> (<ABBR>)"``. A form shared by two
    diagnoses would be ambiguous and is left out (there is none in the shipped table).
    """
    names = tuple(name for group in DIAGNOSES.values() for name in group)
    specialty = np.repeat(np.arange(len(DIAGNOSES)), [len(group) for group in DIAGNOSES.values()])
    key = normalise(pl.col("name"))
    pool = pl.DataFrame({"name": names}).with_columns(key=key)
    synonyms = shipped_table("synonyms.csv", ("term", "canonical")).with_columns(key=normalise(pl.col("canonical")))
    terms = dict(pool.join(synonyms, on="key", how="left").group_by("name").agg(pl.col("term").drop_nulls()).rows())
    treating = shipped_table("interventions.csv", ("keyword", "diagnosis")).with_columns(
        key=normalise(pl.col("diagnosis"))
    )
    keywords_of = dict(
        pool.join(treating, on="key", how="left").group_by("name").agg(pl.col("keyword").drop_nulls()).rows()
    )
    written: list[list[str]] = []
    for name in names:
        own = sorted(terms.get(name, []))
        forms = [name, name.lower()]
        forms += [term.upper() if _abbreviation(term) else term for term in own]
        forms += [f"{name} ({term.upper()})" for term in own if _abbreviation(term)]
        written.append(list(dict.fromkeys(forms)))
    seen: dict[str, int] = {}
    for forms in written:
        for form in forms:
            seen[form] = seen.get(form, 0) + 1
    written = [[f for f in forms if seen[f] == 1 or f == forms[0]] for forms in written]
    keyword_lists = [sorted(set(keywords_of.get(name, []))) for name in names]
    return _Vocabulary(
        names=names,
        specialty=specialty,
        forms=pl.Series("forms", [form for forms in written for form in forms]),
        form_start=_starts(len(forms) for forms in written),
        form_count=np.array([len(forms) for forms in written]),
        keywords=tuple(k for ks in keyword_lists for k in ks),
        keyword_start=_starts(len(ks) for ks in keyword_lists),
        keyword_count=np.array([len(ks) for ks in keyword_lists]),
    )


def _starts(counts: Iterable[int]) -> np.ndarray:
    """Where each of consecutive groups of ``counts`` items starts."""
    sizes = np.fromiter(counts, dtype=np.int64)
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)


# -- the simulation ---------------------------------------------------------------------------------------


@validate_params(
    {
        "runs": [CEILING.constraint()],
        "seed": [Interval(int, 0)],
        "effect": [Interval(float, -1, 1)],
        "mas_share": [Interval(float, 0, 1, closed="neither")],
        "agents": [IntPair(2, _MAX_AGENTS)],
        "rounds": [Interval(int, 3, len(ROUNDS))],
        "responses": [Interval(int, 1, _MAX_RESPONSES)],
        "response_chars": [Interval(int, 1, _MAX_RESPONSE_CHARS)],
        "ground_truth": [IntPair(1)],
        # A label is made for every task: no more of them than runs.
        "tasks": [Interval(int, 1, CEILING.runs)],
        "progress": [Predicate(callable, "a callable taking a description"), NONE],
    }
)
def simulate_diagnosis(
    runs: int,
    *,
    seed: int,
    effect: float = 0.15,
    mas_share: float = 0.5,
    agents: tuple[int, int] = (5, 9),
    rounds: int = 7,
    responses: int = 30,
    response_chars: int = 1500,
    ground_truth: tuple[int, int] = (2, 5),
    tasks: int = 2,
    progress: Callable[[str], object] | None = None,
) -> Dataset:
    r"""Simulate a differential-diagnosis Dataset with a planted MAS-vs-single difference in recall.

    Parameters
    ----------
    runs : int
        Number of runs in total (>= 2), MAS and single-agent together; at most 330,000 runs of
        the default size, fewer of larger ones (see Raises).
    seed : int
        Seed (>= 0) of ``numpy.random.default_rng``: the same arguments and seed give identical
        tables; another seed gives other data.
    effect : float, default 0.15
        How much more often the MAS's final list holds each ground-truth diagnosis than the
        single agent's, in [-1, 1]: the true difference MAS − single of the expected
        ``traditional_recall`` (see Notes). ``0.0`` gives a null dataset for recall.
    mas_share : float, default 0.5
        Share of the runs made by the MAS, in (0, 1). Both systems run every case.
    agents : (int, int), default (5, 9)
        Inclusive range of the number of agents of a MAS run (min >= 2, max <= 1000). A
        single-agent run has exactly one agent.
    rounds : int, default 7
        Rounds of a MAS run, in [3, 7]: the first ``rounds`` of Local-DDx's seven, in its
        order (specialized ranking, symptom management, independent differentials, master
        list, debate, vote, can't-miss). A single-agent run has two: symptom management and
        its independent differential.
    responses : int, default 30
        Messages of a MAS run with all seven rounds (1 to 100,000): the ranking, symptom-management
        and master-list rounds have one each, every agent gives its independent differential,
        and the rest goes to the debate (half, more when the vote and the can't-miss round
        are full), the vote and the can't-miss round (a quarter each, at most one message per
        agent). A run never has fewer messages than its team rounds and its agents' differentials;
        a round left without messages is left out (its ``ddx`` rows too).
    response_chars : int, default 1500
        Wanted length of a message in characters, in [1, 20000]: each message's length is
        drawn around ``response_chars`` × U(0.7, 1.3) and filled to within half a sentence
        of it, but never shorter than its opening line, differential and exclusion sentence.
    ground_truth : (int, int), default (2, 5)
        Inclusive range of the number of ground-truth diagnoses of a case (min >= 1, max <= 8).
    tasks : int, default 2
        Number of tasks (``"ddx1"``, ``"ddx2"``, ...), at most the runs' ceiling; each case
        belongs to one.
    progress : callable, optional
        Called as ``progress(description)`` once after each table is generated, e.g.
        ``"messages: 16,000 rows, 24.0 MB of text"``; meant for a progress bar.

    Returns
    -------
    Dataset
        Tables ``runs, agents, ddx, ground_truth, messages, interventions``, valid by
        construction (``validate()`` passes). String columns are held as integer codes and the
        message texts and evidence lists as codes of their fragments, decoded whenever a table
        is read or written (streamed when written): the Dataset holds some 50 bytes of codes
        per message, never the text itself.

    Raises
    ------
    InvalidParameterError
        An argument is of the wrong type or out of range (the message names the argument, its
        value and what is allowed); too few runs for both systems to run a case; more
        ground-truth diagnoses than a specialty has. Also a ``ValueError``. Also when the
        Dataset would not fit in 8 GB of memory (``MEMORY_CEILING_GB``): a run of the default
        size costs about 24 kB, a larger one (more agents or messages, longer messages) more,
        in proportion to its expected text and ``ddx`` rows; the message says how many runs
        of that size fit.

    Notes
    -----
    **Design.** With :math:`n_{min}` the run count of the less frequent system there are
    :math:`n_{min}` cases; each system's runs are dealt to the cases in turn, so every case is
    run by both systems. Runs are ordered by case; ids are ``"r0000001"``, ``"case000001"``.
    A case has a specialty, :math:`g` ground-truth diagnoses of that specialty
    (:data:`DIAGNOSES`, by canonical name) and 7 other diagnoses its runs consider
    (distractors: the rest of the specialty, then others). MAS agents are named doctors whose
    roles are specialties; the single agent is an internist.

    **What effect means.** A case has a single-agent hit probability
    :math:`p_c = 0.30 + 0.30\,\mathrm{Beta}(2, 2)`. A single-agent run's final list holds each
    ground-truth diagnosis of its case independently with probability :math:`p_c`, a MAS
    run's with probability :math:`\mathrm{clip}(p_c + effect, 0, 1)`; each list also holds
    1–3 distractors, which match no ground truth. A planted diagnosis is written as its
    canonical name (60 %), else as one of its other forms (lower case, a synonym or an
    abbreviation of the shipped synonym table, ``"Name (ABBR)"``), which the ``exact`` and
    ``synonym`` tiers of the equivalence resolve. So each ground-truth diagnosis is a TP with
    probability :math:`p_c` or :math:`p_c + effect`, the expected share of ground truth found
    (``traditional_recall`` = TP / ``|GT|`` under preset ``"spec"``) differs by ``effect`` exactly
    as long as :math:`0 \le p_c + effect \le 1` for every case (always for
    :math:`-0.30 \le effect \le 0.40`; beyond, the clipping shrinks it), and the difference
    cancels case by case, so paired comparisons see it best. Under preset ``"lddx-v6"``
    recall also counts can't-miss diagnoses mentioned by three or more agents, which only
    MAS runs have: the difference there is larger than ``effect``.

    **Everything else** follows from the rounds, not from ``effect``: each agent's independent
    differential (3–6 of the case's diagnoses, ground truth ranked higher; 70 % of agents
    give evidence lists of 1–4 findings), the master list (their union, ``mentions`` = agents
    naming it), the debate (half of each speaker's diagnoses, "excluded" for 15 % of ground
    truths and 35 % of others, else "proposed"), the votes (each voter's top three), the
    team's can't-miss list (35 % of ground truths, 40 % of the final list's distractors, 8 %
    of other diagnoses; ``mentions`` 1 to the team size; an evidence list, empty for 15 %), the
    ground-truth side's AE (exclusion sentences such as ``"We should rule out X"`` or
    ``"X is unlikely"`` in 35 % of debate and vote messages, about a ground truth half the time)
    and TM-SM (each ground truth that an intervention keyword of the shipped table treats gets
    ``"[Symptom]: Give <keyword>"`` with probability 0.3, besides 1–3 other interventions).
    Messages open with a round heading, or in the debate with a structured marker
    (``**Your Position**`` ... ) 30 % of the time; list the speaker's first three diagnoses;
    and are filled with sentences that hold no reasoning keyword, or one each (about 0–5 such
    sentences per MAS message, uniformly, 0–4 per single-agent one; three distinct keywords or a
    marker make a debate response high-value, so about half of them are). Costs: one API call
    per message plus one, about 6 s per message, 2.5 tokens per 4 characters of text, 0.6 USD
    per million tokens.

    Examples
    --------
    >>> from mas_eval.simulation.diagnosis import simulate_diagnosis
    >>> ds = simulate_diagnosis(40, seed=3, agents=(3, 4), responses=12, response_chars=300)
    >>> ds.validate().table_names
    ['runs', 'agents', 'ddx', 'ground_truth', 'messages', 'interventions']
    >>> runs = ds.collect("runs")
    >>> runs.group_by("system").agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort("system").rows()
    [('mas', 20, 20), ('single', 20, 20)]
    >>> messages = ds.collect("messages").join(runs.select("run_id", "system"), on="run_id")
    >>> sorted(messages.filter(pl.col("system") == "single")["round"].unique())
    ['symptom_management', 'team_independent_differentials']
    >>> final = ds.collect("ddx").filter(pl.col("round") == "final")
    >>> final.select("agent_id", "stance").unique().rows()
    [('team', 'final')]
    """
    runs, seed, rounds, responses, response_chars, tasks = (
        int(v) for v in (runs, seed, rounds, responses, response_chars, tasks)
    )
    effect, mas_share = float(effect), float(mas_share)
    (agents_low, agents_high), (truth_low, truth_high) = ((int(lo), int(hi)) for lo, hi in (agents, ground_truth))
    smallest = min(len(group) for group in DIAGNOSES.values())
    check_at_most(
        "simulate_diagnosis", "ground_truth", tuple(ground_truth), truth_high, smallest,
        "ground-truth diagnoses per case", f"a specialty has {smallest}",
    )  # fmt: skip
    sizes = {"mas_share": mas_share, "agents": agents, "responses": responses, "response_chars": response_chars}
    CEILING.check(runs, _run_size, sizes, simulate_diagnosis)
    n_mas, n_single, n_cases = split_runs(runs, mas_share, where="simulate_diagnosis")

    rng = np.random.default_rng(seed)
    report = progress if progress is not None else (lambda _description: None)
    vocabulary = _vocabulary()
    d = _Design.draw(
        rng,
        vocabulary,
        n_mas=n_mas,
        n_single=n_single,
        n_cases=n_cases,
        effect=effect,
        agents=(agents_low, agents_high),
        rounds=rounds,
        responses=responses,
        ground_truth=(truth_low, truth_high),
        tasks=tasks,
    )
    items = _agent_lists(rng, d, vocabulary)
    tables: dict[str, pl.LazyFrame] = {}
    tables["messages"], text_chars = _messages(rng, d, vocabulary, items, response_chars)
    report(f"messages: {len(d.message_run):,} rows, {text_chars.sum() / 1e6:,.1f} MB of text")
    tables["runs"] = _runs(rng, d, text_chars)
    report(f"runs: {d.runs:,} rows")
    tables["agents"] = _agents(d)
    report(f"agents: {len(d.agent_run):,} rows")
    tables["ddx"], n_ddx = _ddx(rng, d, vocabulary, items)
    report(f"ddx: {n_ddx:,} rows")
    tables["ground_truth"] = _ground_truth(d, vocabulary)
    report(f"ground_truth: {int(d.n_truth.sum()):,} rows")
    tables["interventions"], n_interventions = _interventions(rng, d, vocabulary)
    report(f"interventions: {n_interventions:,} rows")
    return Dataset.from_frames(**{name: tables[name] for name in TABLES if name in tables})


def _run_size(mas_share: float, agents: tuple[int, int], responses: int, response_chars: int) -> float:
    """Estimate the bytes of a run's message text, plus 100 a ``ddx`` row: what its memory grows with.

    A MAS run has ``responses`` messages, or one per agent and team round if more; a single-agent
    run two; a message is never much shorter than 200 characters. ``ddx`` rows: about 5.5 per
    MAS agent and 40 for the team's lists, 4 for a single agent (fitted to simulated runs).
    """
    team = mean_of(agents)
    text = max(response_chars, 200)
    mas = max(responses, team + len(_TEAM_ROUNDS)) * text + 100 * (5.5 * team + 40)
    single = 2 * text + 100 * 4
    return mas_share * mas + (1 - mas_share) * single


@dataclass
class _Design:
    """Who ran which case, with which team, and who speaks when.

    Per case: specialty, task, ground-truth count ``n_truth`` and ``candidates``, the pool
    indices of its diagnoses (ground truth in the first ``n_truth`` slots, then the
    distractors). Per run: system, case, hit probability, team size, messages per round
    (``counts``, runs × 7) and each round's first speaker (``start``). Per agent: run,
    position, name. Per message: run, round, turn (0-based) and speaking agent.
    """

    runs: int
    is_mas: np.ndarray
    case: np.ndarray
    p_hit: np.ndarray
    n_agents: np.ndarray
    counts: np.ndarray
    start: np.ndarray
    specialty_of_case: np.ndarray
    task_of_case: np.ndarray
    n_truth: np.ndarray
    candidates: np.ndarray
    agent_run: np.ndarray
    agent_pos: np.ndarray
    agent_offsets: np.ndarray
    agent_name: np.ndarray
    message_run: np.ndarray
    message_round: np.ndarray
    message_turn: np.ndarray
    message_agent: np.ndarray
    run_ids: pl.Series
    case_ids: pl.Series
    agent_labels: pl.Series
    tasks: int
    slots: int

    @classmethod
    def draw(
        cls,
        rng: np.random.Generator,
        vocabulary: _Vocabulary,
        *,
        n_mas: int,
        n_single: int,
        n_cases: int,
        effect: float,
        agents: tuple[int, int],
        rounds: int,
        responses: int,
        ground_truth: tuple[int, int],
        tasks: int,
    ) -> _Design:
        runs = n_mas + n_single
        is_mas, case = deal_runs(n_mas, n_single, n_cases)

        n_specialties = len(DIAGNOSES)
        specialty_of_case = rng.integers(0, n_specialties, n_cases)
        task_of_case = rng.integers(0, tasks, n_cases)
        n_truth = rng.integers(ground_truth[0], ground_truth[1] + 1, n_cases)
        # The case's specialty first, in random order, then the other diagnoses in random order.
        other = vocabulary.specialty[None, :] != specialty_of_case[:, None]
        slots = ground_truth[1] + _N_DISTRACTORS
        candidates = np.argsort(rng.random((n_cases, len(vocabulary.names))) + other, axis=1)[:, :slots]
        p_case = _P_LOW + _P_SPAN * rng.beta(2.0, 2.0, n_cases)
        p_hit = np.where(is_mas, np.clip(p_case[case] + effect, 0.0, 1.0), p_case[case])

        n_agents = np.where(is_mas, rng.integers(agents[0], agents[1] + 1, runs), 1)
        agent_run, agent_pos, agent_offsets = expand(n_agents)
        n_names = max(agents[1], len(AGENT_NAMES))
        agent_name = (rng.integers(0, n_names, runs)[agent_run] + agent_pos) % n_names
        names = [
            AGENT_NAMES[i % len(AGENT_NAMES)] + (f" {i // len(AGENT_NAMES) + 1}" * (i >= len(AGENT_NAMES)))
            for i in range(n_names)
        ]

        counts = _message_counts(is_mas, n_agents, rounds, responses)
        start = rng.integers(0, n_agents[:, None], (runs, len(ROUNDS)))
        run_round, turn0, _ = expand(counts.ravel())
        message_run = run_round // len(ROUNDS)
        message_round = run_round % len(ROUNDS)
        team_round = np.isin(message_round, [_ROUND_INDEX[r] for r in _TEAM_ROUNDS])
        team_size = n_agents[message_run]
        position = np.where(
            team_round,
            0,
            np.where(message_round == _ROUND_INDEX[INDEPENDENT], turn0, (start.ravel()[run_round] + turn0) % team_size),
        )
        return cls(
            runs=runs,
            is_mas=is_mas,
            case=case,
            p_hit=p_hit,
            n_agents=n_agents,
            counts=counts,
            start=start,
            specialty_of_case=specialty_of_case,
            task_of_case=task_of_case,
            n_truth=n_truth,
            candidates=candidates,
            agent_run=agent_run,
            agent_pos=agent_pos,
            agent_offsets=agent_offsets,
            agent_name=agent_name,
            message_run=message_run,
            message_round=message_round,
            message_turn=turn0,
            message_agent=agent_offsets[message_run] + position,
            run_ids=labels("r", runs, max(7, len(str(runs)))),
            case_ids=labels("case", n_cases, max(6, len(str(n_cases)))),
            agent_labels=pl.Series([*names, TEAM]),
            tasks=tasks,
            slots=slots,
        )

    def spoke(self, round_: str) -> np.ndarray:
        """Per agent: whether it has a message in ``round_``."""
        r = _ROUND_INDEX[round_]
        n = self.n_agents[self.agent_run]
        after_start = (self.agent_pos - self.start[self.agent_run, r]) % n
        return after_start < self.counts[self.agent_run, r]


def _message_counts(is_mas: np.ndarray, n_agents: np.ndarray, rounds: int, responses: int) -> np.ndarray:
    """Messages per run and round (runs × 7), as the ``responses`` parameter describes."""
    present = np.arange(len(ROUNDS)) < rounds
    counts = np.zeros((len(is_mas), len(ROUNDS)), dtype=np.int64)
    for name in _TEAM_ROUNDS:
        counts[:, _ROUND_INDEX[name]] = present[_ROUND_INDEX[name]]
    counts[:, _ROUND_INDEX[INDEPENDENT]] = n_agents
    budget = np.maximum(responses - counts.sum(axis=1), 0)
    votes = np.minimum(n_agents, budget // 4) * present[_ROUND_INDEX[VOTING]]
    cant_miss = np.minimum(n_agents, budget // 4) * present[_ROUND_INDEX[CANT_MISS]]
    counts[:, _ROUND_INDEX[VOTING]] = votes
    counts[:, _ROUND_INDEX[CANT_MISS]] = cant_miss
    counts[:, _ROUND_INDEX[DEBATE]] = (budget - votes - cant_miss) * present[_ROUND_INDEX[DEBATE]]
    # A single agent gives its differential and manages the symptoms: no team rounds.
    counts[~is_mas] = 0
    counts[~is_mas, _ROUND_INDEX[INDEPENDENT]] = 1
    counts[~is_mas, _ROUND_INDEX[SYMPTOM_MANAGEMENT]] = 1
    return counts


# -- helpers ------------------------------------------------------------------------------------------------


def _top(keys: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Find the ``count[i]`` smallest keys of each row ``i``: (row, column, rank from 1), row by row, best first."""
    order = np.argsort(keys, axis=1, kind="stable")
    row, position = np.nonzero(np.arange(keys.shape[1]) < count[:, None])
    return row, order[row, position], position + 1


def _form(
    rng: np.random.Generator, vocabulary: _Vocabulary, canon: np.ndarray, p_canonical: float | np.ndarray
) -> np.ndarray:
    """Codes into ``vocabulary.forms``: the canonical name with probability ``p_canonical``, else another form."""
    count = vocabulary.form_count[canon]
    other = (rng.random(len(canon)) >= p_canonical) & (count > 1)
    offset = np.where(other, 1 + (rng.random(len(canon)) * (count - 1)).astype(np.int64), 0)
    return vocabulary.form_start[canon] + offset


def _gather(vocabulary: pl.Series, column: str) -> pl.Expr:
    return pl.lit(vocabulary).gather(pl.col(column))


# -- tables ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Items:
    """The agents' independent differentials: one entry per (agent, position), agent after agent.

    ``agent`` indexes the agents, ``slot`` the case's candidates, ``canon`` the diagnoses;
    ``form`` is how it is written, ``rank`` its position (from 1), ``truth`` whether it is a
    ground truth; agent ``a`` owns entries ``offsets[a]:offsets[a + 1]``; ``structured`` says
    per agent whether its differential carries evidence lists.
    """

    agent: np.ndarray
    canon: np.ndarray
    form: np.ndarray
    rank: np.ndarray
    truth: np.ndarray
    offsets: np.ndarray
    structured: np.ndarray


def _agent_lists(rng: np.random.Generator, d: _Design, vocabulary: _Vocabulary) -> _Items:
    n = len(d.agent_run)
    case = d.case[d.agent_run]
    truth = d.n_truth[case]
    slot = np.arange(d.slots)
    keys = rng.random((n, d.slots)) - _AGENT_TRUTH_BONUS * (slot < truth[:, None])
    keys[slot >= truth[:, None] + _N_DISTRACTORS] = np.inf
    size = rng.integers(_AGENT_LIST[0], _AGENT_LIST[1] + 1, n)
    agent, chosen, rank = _top(keys, size)
    canon = d.candidates[case[agent], chosen]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(size, out=offsets[1:])
    return _Items(
        agent=agent,
        canon=canon,
        form=_form(rng, vocabulary, canon, _P_DISPLAY_OTHER),
        rank=rank,
        truth=chosen < truth[agent],
        offsets=offsets,
        structured=rng.random(n) < _P_STRUCTURED,
    )


def _exclusions(
    rng: np.random.Generator, d: _Design, vocabulary: _Vocabulary, round_: np.ndarray, case: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Draw each message's exclusion sentence: its template and the form it excludes (codes from 1; 0: none).

    A message of the debate or the vote excludes one of the case's diagnoses, a ground truth half the time.
    """
    n = len(round_)
    excludes = np.isin(round_, [_ROUND_INDEX[DEBATE], _ROUND_INDEX[VOTING]]) & (rng.random(n) < _P_EXCLUSION)
    truth = d.n_truth[case]
    slot = np.where(
        rng.random(n) < _P_EXCLUDE_TARGET_TRUTH,
        (rng.random(n) * truth).astype(np.int64),
        truth + rng.integers(0, _N_DISTRACTORS, n),
    )
    canon = d.candidates[case, slot]
    lower = np.minimum(rng.random(n) < 0.5, vocabulary.form_count[canon] - 1)
    template = 1 + rng.integers(0, len(EXCLUSIONS), n)
    return np.where(excludes, template, 0), np.where(excludes, vocabulary.form_start[canon] + lower + 1, 0)


def _messages(
    rng: np.random.Generator, d: _Design, vocabulary: _Vocabulary, items: _Items, response_chars: int
) -> tuple[pl.LazyFrame, np.ndarray]:
    """Make the transcript, each message's text as codes of its fragments; and the characters of text per run."""
    n = len(d.message_run)
    round_ = d.message_round
    case = d.case[d.message_run]
    hidden: dict[str, tuple[np.ndarray, int]] = {}
    pieces: list[pl.Expr] = []
    length = np.zeros(n, dtype=np.int64)

    def add(column: str, values: pl.Series, lengths: np.ndarray, codes: np.ndarray) -> None:
        nonlocal length
        hidden[column] = (codes, len(values))
        pieces.append(_gather(values, column))
        length += lengths[codes]

    openers = [text for name in ROUNDS for text in OPENERS[name]]
    first = np.cumsum([0] + [len(OPENERS[name]) for name in ROUNDS])[:-1]
    options = np.array([len(OPENERS[name]) for name in ROUNDS])
    opener = 1 + first[round_] + (rng.random(n) * options[round_]).astype(np.int64)
    marker = (round_ == _ROUND_INDEX[DEBATE]) & (rng.random(n) < _P_MARKER)
    opener[marker] = 1 + len(openers) + rng.integers(0, len(MARKERS), int(marker.sum()))
    add("_opener", *vocab(["", *openers, *MARKERS]), opener)

    # The speaker's first diagnoses, written as in its ddx rows: "2. AKI - 40% - the vital signs".
    forms, form_lengths = vocab(["", *vocabulary.forms.to_list()])
    numbers, number_lengths = vocab(["", *(f"\n{j + 1}. " for j in range(_DX_LINES))])
    tails, tail_lengths = vocab(["", *(f" - {p} - {f}" for p in PERCENTS for f in LINE_FINDINGS)])
    speaker = d.message_agent
    listed = items.offsets[speaker + 1] - items.offsets[speaker]
    for j in range(_DX_LINES):
        has = j < listed
        entry = np.where(has, items.offsets[speaker] + j, 0)
        add(f"_number{j}", numbers, number_lengths, np.where(has, j + 1, 0))
        add(f"_dx{j}", forms, form_lengths, np.where(has, items.form[entry] + 1, 0))
        add(f"_tail{j}", tails, tail_lengths, np.where(has, 1 + rng.integers(0, len(tails) - 1, n), 0))

    template, excluded = _exclusions(rng, d, vocabulary, round_, case)
    add("_before", *vocab(["", *(before for before, _ in EXCLUSIONS)]), template)
    add("_excluded", forms, form_lengths, excluded)
    add("_after", *vocab(["", *(after for _, after in EXCLUSIONS)]), template)
    del template, excluded

    # Filler sentences until the message is within half a sentence of its wanted length.
    fillers, filler_lengths = vocab(["", *PLAIN, *REASONING])
    wanted = response_chars * rng.uniform(1.0 - _LENGTH_SPREAD, 1.0 + _LENGTH_SPREAD, n)
    # About as many reasoning sentences as drawn, whatever the length: each filler is one with this probability.
    most = np.where(d.is_mas[d.message_run], _REASONING_SENTENCES[True], _REASONING_SENTENCES[False])
    sentences = np.maximum((wanted - length) / filler_lengths[1:].mean(), 1.0)
    density = np.minimum(rng.integers(0, most + 1) / sentences, 1.0)
    open_ = length < wanted
    k = 0
    while open_.any():
        reasoning = rng.random(n) < density
        code = np.where(
            reasoning, 1 + len(PLAIN) + rng.integers(0, len(REASONING), n), 1 + rng.integers(0, len(PLAIN), n)
        )
        open_ &= length + filler_lengths[code] / 2 <= wanted
        add(f"_filler{k}", fillers, filler_lengths, np.where(open_, code, 0))
        k += 1

    frame = coded_table(
        "messages",
        {
            "run_id": Coded(d.run_ids, d.message_run),
            "round": Coded(_ROUND_LABELS, round_),
            "agent_id": Coded(d.agent_labels, d.agent_name[speaker]),
            "turn": d.message_turn + 1,
            "text": pl.concat_str(pieces),
            "source": None,
        },
        hidden,
    )
    return frame, np.bincount(d.message_run, weights=length, minlength=d.runs)


def _runs(rng: np.random.Generator, d: _Design, text_chars: np.ndarray) -> pl.LazyFrame:
    messages = d.counts.sum(axis=1)
    debate = d.counts[:, _ROUND_INDEX[DEBATE]]
    tokens = np.rint(text_chars * 2.5 / 4).astype(np.int64)
    return coded_table(
        "runs",
        {
            "run_id": d.run_ids,
            "system": Coded(pl.Series(SYSTEMS), ~d.is_mas),
            "case_id": Coded(d.case_ids, d.case),
            "task": Coded(labels("ddx", d.tasks), d.task_of_case[d.case]),
            "variant": Coded(pl.Series(["v1"]), np.zeros(d.runs, dtype=np.uint8)),
            "seed": rng.integers(0, 2**31 - 1, d.runs),
            "epoch": None,
            "cluster": None,
            "recommended": None,
            "correct": None,
            "confidence": None,
            "iterations": np.where(d.is_mas, np.maximum(1, -(-debate // d.n_agents)), 1),
            "api_calls": messages + 1,
            "seconds": np.round(messages * rng.lognormal(np.log(6.0), 0.3, d.runs), 3),
            "tokens": tokens,
            "input_tokens": None,
            "output_tokens": None,
            "cost_usd": np.round(tokens * _PRICE_PER_MTOK / 1e6, 6),
        },
    )


def _agents(d: _Design) -> pl.LazyFrame:
    mas = d.is_mas[d.agent_run]
    role = np.where(
        mas, (d.specialty_of_case[d.case[d.agent_run]] + d.agent_pos) % len(ROLES), ROLES.index(SINGLE_ROLE)
    )
    return coded_table(
        "agents",
        {
            "run_id": Coded(d.run_ids, d.agent_run),
            "agent_id": Coded(d.agent_labels, d.agent_name),
            "confidence": None,
            "role": Coded(pl.Series(ROLES), role),
            "weight": None,
        },
    )


def _ddx(rng: np.random.Generator, d: _Design, vocabulary: _Vocabulary, items: _Items) -> tuple[pl.LazyFrame, int]:
    """Every round's lists: independent, master, debate, votes, can't-miss and final (see the Notes)."""
    team = len(d.agent_labels) - 1
    parts: list[dict[str, np.ndarray]] = []

    def add(
        run: np.ndarray,
        round_: str,
        agent: np.ndarray | int,
        form: np.ndarray,
        stance: np.ndarray | str,
        rank: np.ndarray,
        mentions: np.ndarray | int = 1,
        evidence: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        size = len(run)
        has, count = evidence if evidence is not None else (np.zeros(size, bool), np.zeros(size, np.int64))
        parts.append(
            {
                "run": run,
                "round": np.full(size, _ROUND_LABELS.to_list().index(round_)),
                "agent": np.broadcast_to(agent, size),
                "form": form,
                "stance": np.broadcast_to(DDX_STANCES.index(stance), size) if isinstance(stance, str) else stance,
                "rank": rank,
                "mentions": np.broadcast_to(mentions, size),
                "has": has,
                "count": count,
            }
        )

    proposed, excluded = DDX_STANCES.index("proposed"), DDX_STANCES.index("excluded")
    item_run = d.agent_run[items.agent]
    item_agent = d.agent_name[items.agent]
    evidence = rng.integers(_EVIDENCE_ITEMS[0], _EVIDENCE_ITEMS[1] + 1, len(item_run))
    add(
        item_run,
        INDEPENDENT,
        item_agent,
        items.form,
        "proposed",
        items.rank,
        1,
        (items.structured[items.agent], evidence),
    )

    run, canon, rank, mentions = _master_list(d, vocabulary, items, item_run)
    add(run, MASTER_LIST, team, vocabulary.form_start[canon], "proposed", rank, mentions)

    debated = d.spoke(DEBATE)[items.agent] & (rng.random(len(item_run)) < _P_DEBATED)
    refuted = rng.random(len(item_run)) < np.where(items.truth, _P_EXCLUDE_TRUTH, _P_EXCLUDE_OTHER)
    stance = np.where(refuted, excluded, proposed)[debated]
    add(item_run[debated], DEBATE, item_agent[debated], items.form[debated], stance, items.rank[debated])

    voted = d.spoke(VOTING)[items.agent] & (items.rank <= _VOTES)
    add(item_run[voted], VOTING, item_agent[voted], items.form[voted], "proposed", items.rank[voted])

    # The final list: each ground truth with the run's hit probability, and 1-3 distractors.
    truth = d.n_truth[d.case][:, None]
    slot = np.arange(d.slots)[None, :]
    is_truth, valid = slot < truth, slot < truth + _N_DISTRACTORS
    hit = is_truth & (rng.random((d.runs, d.slots)) < d.p_hit[:, None])
    distractor = valid & ~is_truth
    order = np.argsort(np.where(distractor, rng.random((d.runs, d.slots)), np.inf), axis=1)
    wrong = rng.integers(_FINAL_DISTRACTORS[0], _FINAL_DISTRACTORS[1] + 1, d.runs)
    chosen = np.zeros_like(distractor)
    np.put_along_axis(chosen, order, np.arange(d.slots)[None, :] < wrong[:, None], axis=1)
    final = hit | chosen
    run, final_slot, rank = _top(np.where(final, rng.random(final.shape) - 0.5 * is_truth, np.inf), final.sum(axis=1))
    canon = d.candidates[d.case[run], final_slot]
    form = _form(rng, vocabulary, canon, np.where(final_slot < truth[run, 0], _P_DISPLAY_TRUTH, _P_DISPLAY_OTHER))
    add(run, FINAL_ROUND, team, form, "final", rank)

    # The team's can't-miss list: some ground truths, some of the final list's distractors, a few others.
    has_round = d.counts[:, _ROUND_INDEX[CANT_MISS]] > 0
    p_truth, p_wrong, p_other = _P_CANT_MISS
    p = np.where(is_truth, p_truth, np.where(chosen, p_wrong, np.where(valid, p_other, 0.0)))
    critical = (rng.random((d.runs, d.slots)) < p) & has_round[:, None]
    run, slot_, rank = _top(np.where(critical, rng.random(critical.shape), np.inf), critical.sum(axis=1))
    canon = d.candidates[d.case[run], slot_]
    mentions = 1 + rng.binomial(d.n_agents[run] - 1, 0.4)
    reasons = np.where(rng.random(len(run)) < _P_CANT_MISS_EVIDENCE, rng.integers(1, 4, len(run)), 0)
    form = _form(rng, vocabulary, canon, _P_DISPLAY_OTHER)
    add(run, CANT_MISS, team, form, "critical", rank, mentions, (np.ones(len(run), bool), reasons))

    return _ddx_table(rng, d, vocabulary, parts)


def _master_list(
    d: _Design, vocabulary: _Vocabulary, items: _Items, item_run: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pool the agents' diagnoses into the master list, most often named first: run, diagnosis, rank, mentions."""
    named = d.counts[item_run, _ROUND_INDEX[MASTER_LIST]] > 0
    pooled, mentions = np.unique(item_run[named] * len(vocabulary.names) + items.canon[named], return_counts=True)
    run, canon = pooled // len(vocabulary.names), pooled % len(vocabulary.names)
    order = np.lexsort((canon, -mentions, run))
    run, canon, mentions = run[order], canon[order], mentions[order]
    _, first, size = np.unique(run, return_index=True, return_counts=True)
    rank = np.arange(len(run)) - np.repeat(first, size) + 1
    return run, canon, rank, mentions


def _ddx_table(
    rng: np.random.Generator, d: _Design, vocabulary: _Vocabulary, parts: list[dict[str, np.ndarray]]
) -> tuple[pl.LazyFrame, int]:
    """Put the rounds' lists together as the ``ddx`` table, in key order, with their evidence; and its rows."""
    columns = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    order = np.lexsort((columns["rank"], columns["agent"], columns["round"], columns["run"]))
    columns = {key: value[order] for key, value in columns.items()}
    n = len(order)
    # An evidence list is 0-4 consecutive findings: one of few lists, gathered by code (0: null).
    longest = _EVIDENCE_ITEMS[1] + 1
    lists = [
        [FINDINGS[(first + i) % len(FINDINGS)] for i in range(size)]
        for first in range(len(FINDINGS))
        for size in range(longest)
    ]
    first = rng.integers(0, len(FINDINGS), n)
    evidence = np.where(columns["has"], 1 + first * longest + columns["count"], 0)
    evidence_lists = pl.Series([None, *lists], dtype=pl.List(pl.String))
    frame = coded_table(
        "ddx",
        {
            "run_id": Coded(d.run_ids, columns["run"]),
            "round": Coded(_ROUND_LABELS, columns["round"]),
            "agent_id": Coded(d.agent_labels, columns["agent"]),
            "diagnosis": Coded(vocabulary.forms, columns["form"]),
            "stance": Coded(pl.Series(DDX_STANCES), columns["stance"]),
            "rank": columns["rank"],
            "mentions": columns["mentions"],
            "evidence": _gather(evidence_lists, "_evidence"),
        },
        {"_evidence": (evidence, len(evidence_lists))},
    )
    return frame, n


def _ground_truth(d: _Design, vocabulary: _Vocabulary) -> pl.LazyFrame:
    case, slot = np.nonzero(np.arange(d.slots) < d.n_truth[:, None])
    return coded_table(
        "ground_truth",
        {
            "case_id": Coded(d.case_ids, case),
            "diagnosis": Coded(pl.Series(vocabulary.names), d.candidates[case, slot]),
        },
    )


def _interventions(rng: np.random.Generator, d: _Design, vocabulary: _Vocabulary) -> tuple[pl.LazyFrame, int]:
    """Interventions naming a keyword that treats a ground truth (TM-SM), and others that treat none."""
    canon = d.candidates[d.case]
    treatable = (np.arange(d.slots) < d.n_truth[d.case][:, None]) & (vocabulary.keyword_count[canon] > 0)
    treat_run, treat_slot = np.nonzero(treatable & (rng.random(treatable.shape) < _P_TREAT))
    treated = canon[treat_run, treat_slot]
    keyword = vocabulary.keyword_start[treated] + (rng.random(len(treated)) * vocabulary.keyword_count[treated]).astype(
        np.int64
    )
    other_run, _, _ = expand(rng.integers(_OTHER_INTERVENTIONS[0], _OTHER_INTERVENTIONS[1] + 1, d.runs))
    n_other = len(other_run)
    run = np.concatenate([treat_run, other_run])
    middle = np.concatenate([keyword, len(vocabulary.keywords) + rng.integers(0, len(OTHER_ACTIONS), n_other)])
    verb = np.concatenate([1 + rng.integers(0, len(TREAT_VERBS), len(treated)), np.zeros(n_other, np.int64)])
    ending = np.concatenate([rng.integers(0, len(TREAT_ENDINGS), len(treated)), np.zeros(n_other, np.int64)])
    order = np.argsort(run, kind="stable")
    run, middle, verb, ending = run[order], middle[order], verb[order], ending[order]
    # Each intervention of a run is for another symptom, so that no text repeats within a run.
    first = np.concatenate([[0], np.cumsum(np.bincount(run, minlength=d.runs))[:-1]])
    symptom = (rng.integers(0, len(SYMPTOMS), d.runs)[run] + np.arange(len(run)) - first[run]) % len(SYMPTOMS)
    vocabularies = {
        "_symptom": (pl.Series([f"[{s}]: " for s in SYMPTOMS]), symptom),
        "_verb": (pl.Series(["", *TREAT_VERBS]), verb),
        "_action": (pl.Series([*vocabulary.keywords, *OTHER_ACTIONS]), middle),
        "_ending": (pl.Series(TREAT_ENDINGS), ending),
    }
    frame = coded_table(
        "interventions",
        {
            "run_id": Coded(d.run_ids, run),
            "text": pl.concat_str([_gather(values, column) for column, (values, _) in vocabularies.items()]),
        },
        {column: (codes, len(values)) for column, (values, codes) in vocabularies.items()},
    )
    return frame, len(run)
