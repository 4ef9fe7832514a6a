"""Synthetic benchmark-answer Datasets (MedAISure metrics) with a known MAS effect on recall of the reference.

:func:`simulate_answers` fills the ``runs`` and ``answers`` tables: benchmark runs in which a
multi-agent system (``"mas"``) and a single agent (``"single"``) answer the same items, with the
same reference answers, reference rationales and reference diagnoses. The MAS reproduces each
clinical entity of the reference answer, and each step of the reference rationale, more often by
an amount the caller chooses, so that ``compare`` on the per-item answer metrics has a known
difference to recover. Texts are built from small vocabularies: clinical entities (MedAISure's
lexicon terms and more common ones, with abbreviations and case variants) in short sentences,
reasoning steps made of a structure marker, an evidence marker and a fact of the diagnosis,
fallacy phrases, and filler sentences that hold none of them. Everything is generated
column-wise with NumPy and Polars: a million answers in a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, Interval, IntPair, Predicate, validate_params
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
from mas_eval.storage.dataset import Dataset

__all__ = ["CEILING", "ENTITIES", "TASKS", "simulate_answers"]

#: Clinical entities by category (MedAISure's categories and order): MedAISure's lexicon terms
#: first, then more common ones. An entry is a term, or a tuple of the ways to write one entity
#: (the first is its name); a sentence that starts with it capitalises it. Two forms of one entity
#: are the same lexicon term under MedAISure's normalisation and token map (MI → myocardial
#: infarction, SOB → shortness of breath, leukocytosis → white blood cell), so a scorer sees a
#: reproduced entity as the same one. No form contains another entity's form on word boundaries,
#: and no other fragment contains one.
ENTITIES: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "diagnoses": (
        "pneumonia", "sepsis", "stroke", "asthma", "diabetes", "heart failure",
        ("myocardial infarction", "MI"), ("COPD", "copd"), "pulmonary embolism",
        "atrial fibrillation", "hypertension", "anemia", "appendicitis", "cellulitis", "migraine", "influenza",
        "pancreatitis", "gastroenteritis", "hypothyroidism", "bronchitis", ("UTI",), ("DVT",), ("AKI",), ("DKA",),
    ),
    "treatments": (
        "antibiotics", "oxygen", "ventilation", "surgery", ("IV fluids", "iv fluids"), "dialysis", "intubation",
        "blood transfusion", "physiotherapy", "cardioversion", "thrombolysis", "nebulizer", "wound care", ("CPAP",),
    ),
    "medications": (
        "amoxicillin", "ceftriaxone", "azithromycin", "heparin", "aspirin", "insulin", "metformin", "furosemide",
        "salbutamol", "prednisone", "lisinopril", "atorvastatin", "warfarin", "paracetamol", "ibuprofen",
        "morphine", "vancomycin", "nitroglycerin", "ondansetron",
    ),
    "symptoms": (
        "fever", "cough", "dyspnea", "tachycardia", "hypotension",
        ("shortness of breath", "SOB"), "chest pain", "headache", "nausea", "vomiting",
        "fatigue", "dizziness", "abdominal pain", "wheezing", "confusion", "syncope", "palpitations", "rash", "edema",
    ),
    "labs": (
        ("WBC", "wbc"), "lactate", "troponin", "glucose",
        ("white blood cell count", "leukocytosis"), "creatinine", "hemoglobin",
        "potassium", "sodium", "procalcitonin", "lipase", ("CRP",), ("BNP",), ("INR",), ("TSH",), ("D-dimer",),
        ("HbA1c",), "blood culture",
    ),
}  # fmt: skip
CATEGORIES = tuple(ENTITIES)
#: The default task names (MedAISure's kinds of task).
TASKS = ("diagnostic_reasoning", "clinical_summarization", "patient_communication")
#: The sentences an entity is named in, by category ("{}" is the entity as written).
TEMPLATES: dict[str, tuple[str, ...]] = {
    "diagnoses": (
        "Most likely diagnosis: {}.", "{} is the leading diagnosis.", "Findings are consistent with {}.",
        "Working diagnosis - {}.",
    ),
    "treatments": ("Start {}.", "{} is indicated now.", "Plan: {}.", "Arrange {} promptly."),
    "medications": (
        "Give {}.", "Prescribe {} at the usual dose.", "{} should be started.", "Continue {} (check allergies).",
    ),
    "symptoms": ("Presents with {}.", "Reports {} since yesterday.", "{} on admission.", "Key symptom: {}."),
    "labs": ("Check {}.", "{} is abnormal.", "Repeat {} in the morning.", "Follow the {} trend."),
}  # fmt: skip
#: Which category each entity slot of a reference answer draws from: its first slot is the
#: reference diagnosis; a category appears at most twice.
SLOT_CATEGORIES = (
    "diagnoses", "symptoms", "medications", "labs", "treatments", "symptoms", "diagnoses", "labs", "medications",
    "treatments",
)  # fmt: skip
#: Sentences of an answer beyond its entities: no entity, no reasoning marker.
ANSWER_FILLERS = (
    "The patient is stable at the moment.",
    "Further details depend on the full history.",
    "Discuss the plan with the family today.",
    "Review again after the next round of results.",
    "Safety-netting advice was given!",
    "Follow-up in clinic in two weeks.",
    "The overall picture is reassuring, for now.",
    "Escalate early if the patient gets worse.",
    "Allergies: none known.",
    "Keep the patient nil by mouth until reviewed.",
    "Explain the plan in plain language.",
    "Document the discussion in the notes.",
)
#: A reasoning step is ``<structure><evidence><fact>.``: the structure opener depends on the
#: step's place (first, middle, last), the fact on the reference diagnosis.
STRUCTURE_FIRST = ("First, ", "Step one: ")
STRUCTURE_MIDDLE = ("Second, ", "Because of this, ", "Third, ", "Step two: ")
STRUCTURE_LAST = ("Therefore, ", "Thus, ", "Hence, ", "In conclusion, ", "So ")
STRUCTURE = (*STRUCTURE_FIRST, *STRUCTURE_MIDDLE, *STRUCTURE_LAST)
EVIDENCE = (
    "the lab results show ", "imaging shows ", "the vitals show ", "the chest xray shows ", "a CT scan shows ",
    "the main finding is ", "the evidence points to ", "a recent study supports ",
)  # fmt: skip
#: Facts by diagnosis (MedAISure's fact sets: pneumonia, sepsis, myocardial infarction); other
#: diagnoses get the generic facts.
FACTS: dict[str, tuple[str, ...]] = {
    "pneumonia": ("an infiltrate in the right lower lobe", "a need for antibiotics", "a new infiltrate on the xray"),
    "sepsis": ("a raised lactate", "hypotension despite IV fluids", "a need for more fluids"),
    "myocardial infarction": ("a rising troponin", "ST elevation on the EKG", "a need for aspirin and heparin"),
}
GENERIC_FACTS = ("a pattern that fits the diagnosis", "no other likely cause", "a clear change from baseline")
#: Sentences of a rationale beyond its steps: no reasoning marker (not even as a substring), no
#: fact keyword, no fallacy.
RATIONALE_FILLERS = (
    "The story fits with the history given by the patient.",
    "Nothing in the history argues against this view.",
    "The timeline of the illness matters here.",
    "We weighed the likely options with care.",
    "This view may change with new information.",
    "The team agreed on the plan at the bedside.",
    "Close review over the coming hours remains wise.",
    "Other causes remain possible but are rare.",
    "Age and other risks were taken into account.",
    "The patient and family were given time for questions.",
)
#: Fallacy phrases (one of MedAISure's fallacy markers each).
FALLACIES = (
    "Everyone knows this is how it goes.",
    "It is obviously true from the start.",
    "It got better after the drug, a post hoc reading.",
    "Here correlation implies causation.",
    "That begs the question of the cause.",
    "It is circular reasoning, but it holds.",
    "It is a non sequitur, yet it seems right.",
)

# -- model constants (see the Notes of `simulate_answers`) --------------------------------------------------
_P_LOW, _P_SPAN = 0.40, 0.30  # an item's single-agent reproduction probability: 0.40 + 0.30 * Beta(2, 2)
_P_NAME = 0.6  # the reference writes an entity by its name, else by any of its forms
_P_SAME_FORM = 0.6  # a reproduced entity keeps the reference's form, else any of its forms
_P_WRONG = {"diagnoses": 0.3, "medications": 0.2}  # a prediction adds a wrong entity of the category
_STEPS = (2, 4)  # steps of a reference rationale
_P_FALLACY = 0.15  # a rationale ends with a fallacy phrase
_LENGTH_SPREAD = 0.2  # a text's wanted length is answer_chars * U(0.8, 1.2)
_MAX_ANSWER_CHARS = 10_000
#: What a run of the default size costs (32 kB: 100,000 runs of 30 items simulated and written peak
#: 3.2 GB above the imports, most of it answer text decoded to be written), and so the most runs (250,000).
CEILING = SizeCeiling("simulate_answers", 32_000)
#: The most items of a case.
_MAX_ITEMS = 1_000_000
_MAX_ENTITIES = len(SLOT_CATEGORIES)
_AGENTS, _ROUNDS = (3, 5), (1, 3)  # a MAS run's team and rounds: an item costs agents * rounds + 1 calls
_PRICE_PER_MTOK = 0.6


@dataclass(frozen=True)
class _Vocabulary:
    """ENTITIES and the texts made of them.

    Entities are numbered category after category (category ``c`` owns ``category_start[c]``
    .. ``+ category_size[c]``); ``forms`` holds their written forms, entity ``e`` owning ``form_start[e]`` ..
    ``form_start[e] + form_count[e]``. ``sentences`` is ``""`` and then every form in every
    template of its category (form ``f``, template ``t`` at ``1 + f * T + t``); ``steps`` is
    ``""`` and then every structure × evidence × fact; a diagnosis's facts are
    ``fact_start[e]`` .. ``+ fact_count[e]``. ``display`` names each diagnosis as
    ``reference_diagnosis`` does.
    """

    category_start: np.ndarray
    category_size: np.ndarray
    form_start: np.ndarray
    form_count: np.ndarray
    forms: tuple[str, ...]
    sentences: pl.Series
    sentence_chars: np.ndarray
    steps: pl.Series
    step_chars: np.ndarray
    fact_start: np.ndarray
    fact_count: np.ndarray
    display: pl.Series


def _forms(entry: str | tuple[str, ...]) -> tuple[str, ...]:
    return entry if isinstance(entry, tuple) else (entry,)


def _sentence(template: str, form: str) -> str:
    """``template`` naming ``form``, with a capital first letter ("{} is abnormal." → "Lactate is abnormal.")."""
    text = template.format(form)
    return text[0].upper() + text[1:]


@cache
def _vocabulary() -> _Vocabulary:
    entries = [entry for category in CATEGORIES for entry in ENTITIES[category]]
    written = [_forms(entry) for entry in entries]
    sizes = np.array([len(ENTITIES[category]) for category in CATEGORIES])
    form_count = np.array([len(forms) for forms in written])
    forms = tuple(form for group in written for form in group)
    category_of_form = [category for category in CATEGORIES for entry in ENTITIES[category] for _ in _forms(entry)]
    sentences = [""]
    for form, category in zip(forms, category_of_form, strict=True):
        sentences += [f" {_sentence(template, form)}" for template in TEMPLATES[category]]
    # The facts: the generic ones first, then each diagnosis's own.
    facts = list(GENERIC_FACTS)
    fact_start, fact_count = [], []
    for e in range(sizes[0]):
        own = FACTS.get(written[e][0], ())
        fact_start.append(len(facts) if own else 0)
        fact_count.append(len(own) if own else len(GENERIC_FACTS))
        facts += own
    steps = ["", *(f" {s}{e}{f}." for s in STRUCTURE for e in EVIDENCE for f in facts)]
    sentence_series, sentence_chars = vocab(sentences)
    step_series, step_chars = vocab(steps)
    return _Vocabulary(
        category_start=np.concatenate([[0], np.cumsum(sizes)[:-1]]),
        category_size=sizes,
        form_start=np.concatenate([[0], np.cumsum(form_count)[:-1]]),
        form_count=form_count,
        forms=forms,
        sentences=sentence_series,
        sentence_chars=sentence_chars,
        steps=step_series,
        step_chars=step_chars,
        fact_start=np.array(fact_start),
        fact_count=np.array(fact_count),
        display=pl.Series([written[e][0][0].upper() + written[e][0][1:] for e in range(sizes[0])]),
    )


def _task_names(value: object) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) > 0
        and all(isinstance(v, str) and v != "" for v in value)
        and len(set(value)) == len(value)
    )


@validate_params(
    {
        "runs": [CEILING.constraint()],
        "seed": [Interval(int, 0)],
        "effect": [Interval(float, -1, 1)],
        "mas_share": [Interval(float, 0, 1, closed="neither")],
        "items": [IntPair(1, _MAX_ITEMS)],
        "entities": [IntPair(1)],
        "tasks": [Predicate(_task_names, "a non-empty list of distinct, non-empty task names")],
        "answer_chars": [Interval(int, 1, _MAX_ANSWER_CHARS)],
        "progress": [Predicate(callable, "a callable taking a description"), NONE],
    }
)
def simulate_answers(
    runs: int,
    *,
    seed: int,
    effect: float = 0.1,
    mas_share: float = 0.5,
    items: tuple[int, int] = (20, 40),
    entities: tuple[int, int] = (2, 5),
    tasks: Sequence[str] = TASKS,
    answer_chars: int = 300,
    progress: Callable[[str], object] | None = None,
) -> Dataset:
    r"""Simulate a benchmark-answer Dataset with a planted MAS-vs-single difference in answer recall.

    Parameters
    ----------
    runs : int
        Number of benchmark runs in total (>= 2), MAS and single-agent together. A run is one
        system answering every item of one case. At most 250,000 runs of the default size,
        fewer of larger ones (see Raises).
    seed : int
        Seed (>= 0) of ``numpy.random.default_rng``: the same arguments and seed give identical
        tables; another seed gives other data.
    effect : float, default 0.1
        How much more likely the MAS is than the single agent to reproduce each entity of the
        reference answer (and each step of the reference rationale), in [-1, 1]: a difference
        of probabilities (see Notes). ``0.0`` gives a null dataset.
    mas_share : float, default 0.5
        Share of the runs made by the MAS, in (0, 1). Both systems run every case.
    items : (int, int), default (20, 40)
        Inclusive range of the number of items of a case (min >= 1, max <= 1,000,000).
        ``runs=1000, items=(1000, 1000)`` gives a million answers.
    entities : (int, int), default (2, 5)
        Inclusive range of the number of clinical entities a reference answer names
        (min >= 1, max <= 10).
    tasks : sequence of str, default ("diagnostic_reasoning", "clinical_summarization", "patient_communication")
        Task names (distinct, non-empty); each case belongs to one, drawn uniformly.
    answer_chars : int, default 300
        Wanted length of each text in characters, in [1, 10000]: each prediction, rationale,
        reference and reference rationale is drawn around ``answer_chars`` × U(0.8, 1.2) and
        filled to within half a sentence of it, but never shorter than its entity sentences,
        reasoning steps and fallacy phrase.
    progress : callable, optional
        Called as ``progress(description)`` once after each table is generated, e.g.
        ``"answers: 2,000 rows, 2.4 MB of text"``; meant for a progress bar.

    Returns
    -------
    Dataset
        Tables ``runs, answers``, valid by construction (``validate()`` passes). String columns
        are held as integer codes and the texts as codes of their sentences, decoded whenever a
        table is read or written: the Dataset holds some 60 bytes of codes per answer, never
        the text itself.

    Raises
    ------
    InvalidParameterError
        An argument is of the wrong type or out of range (the message names the argument, its
        value and what is allowed); too few runs for both systems to run a case; more entities
        than a reference answer can name. Also a ``ValueError``. Also when the Dataset would
        not fit in 8 GB of memory (``MEMORY_CEILING_GB``): a run of the default size costs
        about 32 kB, a larger one (more items, longer texts) more, in proportion to its
        expected text; the message says how many runs of that size fit.

    Notes
    -----
    **Design.** With :math:`n_{min}` the run count of the less frequent system there are
    :math:`n_{min}` cases; each system's runs are dealt to the cases in turn, so every case is
    run by both systems, which answer the same items. Runs are ordered by case, answers by
    run and item; ids are ``"r0000001"``, ``"case000001"`` and ``"q0000001"`` (item ids are
    unique across cases, so ``pair_on="item_id"`` pairs the two systems' answers to one item).
    A case has a task (``runs.task`` and ``answers.task``, one per case) and 20–40 items by
    default; an item has a reference answer, reference rationale and reference diagnosis,
    shared by every run of its case.

    **Reference answers.** An item's reference names :math:`k` entities (``entities``), of the
    categories :data:`SLOT_CATEGORIES` in order: the first is a diagnosis (the item's
    ``reference_diagnosis``, capitalised), then a symptom, a medication, a lab, a treatment and
    second ones of each. Each entity is written by its name (60 %) or any of its forms
    (:data:`ENTITIES`: case variants and abbreviations such as ``"MI"``, ``"SOB"``, ``"COPD"``,
    ``"IV fluids"``) in one of four sentences of its category (:data:`TEMPLATES`), followed by
    filler sentences (:data:`ANSWER_FILLERS`) up to the wanted length. The reference rationale
    is 2–4 steps ``"<structure><evidence><fact>."`` (``"First, the lab results show a raised
    lactate."``): a structure marker by the step's place, an evidence marker, and a fact of the
    reference diagnosis (MedAISure's fact keywords for pneumonia, sepsis and myocardial
    infarction; generic facts for the others), after filler sentences (:data:`RATIONALE_FILLERS`,
    which hold no marker, fact keyword or fallacy, not even as a substring).

    **What effect means.** An item has a single-agent reproduction probability
    :math:`p_i = 0.40 + 0.30\,\mathrm{Beta}(2, 2)` (its difficulty). A single-agent answer to
    the item reproduces each entity of the reference independently with probability
    :math:`p_i`, a MAS answer with probability :math:`\mathrm{clip}(p_i + effect, 0, 1)`; a
    reproduced entity keeps the reference's form (60 %) or takes any of its forms, in a freshly
    drawn sentence of its category. So the expected share of reference entities found in the
    prediction (entity recall) is :math:`E[p_i]` for the single agent and exactly ``effect``
    more for the MAS as long as :math:`0 \le p_i + effect \le 1` for every item (always for
    :math:`-0.40 \le effect \le 0.30`; beyond, the clipping shrinks it). The rationale
    reproduces each step of the reference rationale (the same sentence) with the same
    probabilities, drawn independently. Both systems add wrong entities at the same rates (a
    diagnosis with probability 0.3, a medication with probability 0.2, never one the reference
    names) and end the rationale with a fallacy phrase (:data:`FALLACIES`) with probability
    0.15, so ``effect = 0`` gives systems that differ in cost only. Clinical accuracy (a
    weighted Jaccard) and reasoning quality rise with ``effect`` but not by exactly
    ``effect``: the wrong entities, the category weights, the fillers and the markers enter
    their ratios. Paired by item, the item's difficulty cancels from the difference.

    **Runs.** ``variant`` is ``"v1"``; a MAS run has a team of 3–5 agents deliberating 1–3
    rounds (``iterations``) and makes ``items × (agents × rounds + 1)`` API calls, a single
    run one per item; tokens are 2.5 per 4 characters of prediction and rationale per call,
    about 1.5 s per call, 0.6 USD per million tokens.

    Examples
    --------
    >>> from mas_eval.simulation.answers import simulate_answers
    >>> ds = simulate_answers(20, seed=3, items=(5, 8))
    >>> ds.validate().table_names
    ['runs', 'answers']
    >>> runs = ds.collect("runs")
    >>> runs.group_by("system").agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort("system").rows()
    [('mas', 10, 10), ('single', 10, 10)]
    >>> answers = ds.collect("answers").join(runs.select("run_id", "system"), on="run_id")
    >>> per_item = answers.group_by("item_id").agg(pl.col("system").sort(), pl.col("reference").n_unique())
    >>> per_item["system"].to_list()[0], per_item["reference"].unique().to_list()
    (['mas', 'single'], [1])
    """
    runs, seed, answer_chars = int(runs), int(seed), int(answer_chars)
    effect, mas_share = float(effect), float(mas_share)
    (items_low, items_high), (entities_low, entities_high) = ((int(lo), int(hi)) for lo, hi in (items, entities))
    task_names = tuple(tasks)
    check_at_most(
        "simulate_answers", "entities", tuple(entities), entities_high, _MAX_ENTITIES,
        "entities per reference answer", f"it names at most {_MAX_ENTITIES}",
    )  # fmt: skip
    CEILING.check(runs, _run_size, {"items": items, "answer_chars": answer_chars}, simulate_answers)
    n_mas, n_single, n_cases = split_runs(runs, mas_share, where="simulate_answers")

    rng = np.random.default_rng(seed)
    report = progress if progress is not None else (lambda _description: None)
    vocabulary = _vocabulary()
    d = _Design.draw(
        rng, n_mas=n_mas, n_single=n_single, n_cases=n_cases, items=(items_low, items_high), tasks=len(task_names)
    )
    answers, text_chars, all_chars = _answers(
        rng,
        d,
        vocabulary,
        effect=effect,
        entities=(entities_low, entities_high),
        answer_chars=answer_chars,
        tasks=task_names,
    )
    report(f"answers: {len(d.answer_run):,} rows, {all_chars / 1e6:,.1f} MB of text")
    runs_frame = _runs(rng, d, task_names, text_chars)
    report(f"runs: {d.runs:,} rows")
    return Dataset.from_frames(runs=runs_frame, answers=answers)


def _run_size(items: tuple[int, int], answer_chars: int) -> float:
    """Estimate the bytes of a run's four texts per item, plus 200 an answer row: what its memory grows with.

    A text is never much shorter than 120 characters (its entity sentences and reasoning steps).
    """
    return mean_of(items) * (4 * max(answer_chars, 120) + 200)


@dataclass
class _Design:
    """Who answered which items.

    Per run: system and case. Per case: task and items (``item_offsets``). Per answer (sorted
    by run, then item): run and item.
    """

    runs: int
    is_mas: np.ndarray
    case: np.ndarray
    task_of_case: np.ndarray
    item_offsets: np.ndarray
    answer_run: np.ndarray
    answer_item: np.ndarray
    run_ids: pl.Series
    case_ids: pl.Series
    item_ids: pl.Series

    @property
    def n_items(self) -> int:
        return int(self.item_offsets[-1])

    @classmethod
    def draw(
        cls,
        rng: np.random.Generator,
        *,
        n_mas: int,
        n_single: int,
        n_cases: int,
        items: tuple[int, int],
        tasks: int,
    ) -> _Design:
        runs = n_mas + n_single
        is_mas, case = deal_runs(n_mas, n_single, n_cases)

        task_of_case = rng.integers(0, tasks, n_cases)
        items_of_case = rng.integers(items[0], items[1] + 1, n_cases)
        _, _, item_offsets = expand(items_of_case)
        answer_run, position, _ = expand(items_of_case[case])
        answer_item = item_offsets[case[answer_run]] + position
        n_items = int(item_offsets[-1])
        return cls(
            runs=runs,
            is_mas=is_mas,
            case=case,
            task_of_case=task_of_case,
            item_offsets=item_offsets,
            answer_run=answer_run,
            answer_item=answer_item,
            run_ids=labels("r", runs, max(7, len(str(runs)))),
            case_ids=labels("case", n_cases, max(6, len(str(n_cases)))),
            item_ids=labels("q", n_items, max(7, len(str(n_items)))),
        )


# -- texts ----------------------------------------------------------------------------------------------------


class _Text:
    """One text column as codes of its fragments: ``add`` appends a fragment column, ``fill`` fillers.

    ``chars`` is each row's length so far (a space between fragments, none before the first:
    every fragment but the empty one starts with a space, and the decoded text is stripped).
    """

    def __init__(self, name: str, rows: int) -> None:
        self.name = name
        self.hidden: dict[str, tuple[np.ndarray, int]] = {}
        self.pieces: list[pl.Expr] = []
        self.chars = np.zeros(rows, dtype=np.int64)

    def add(self, values: pl.Series, lengths: np.ndarray, codes: np.ndarray) -> None:
        column = f"_{self.name}{len(self.pieces)}"
        self.hidden[column] = (codes, len(values))
        self.pieces.append(pl.lit(values).gather(pl.col(column)))
        self.chars += lengths[codes]

    def fill(self, rng: np.random.Generator, fillers: tuple[str, ...], wanted: np.ndarray) -> None:
        """Filler sentences, distinct within a text, until each is within half a sentence of ``wanted``."""
        values, lengths = vocab(["", *(f" {f}" for f in fillers)])
        first = rng.integers(0, len(fillers), len(wanted))
        open_ = self.chars < wanted
        k = 0
        while open_.any():
            code = 1 + (first + k) % len(fillers)
            open_ &= self.chars + lengths[code] / 2 <= wanted
            self.add(values, lengths, np.where(open_, code, 0))
            k += 1

    def expression(self) -> pl.Expr:
        return pl.concat_str(self.pieces).str.strip_chars_start()

    def length(self) -> np.ndarray:
        return np.maximum(self.chars - 1, 0)


def _wanted(rng: np.random.Generator, answer_chars: int, rows: int) -> np.ndarray:
    return answer_chars * rng.uniform(1.0 - _LENGTH_SPREAD, 1.0 + _LENGTH_SPREAD, rows)


def _other(rng: np.random.Generator, used: list[np.ndarray], size: int) -> np.ndarray:
    """Per row, a uniform index in ``range(size)`` other than its ``used`` ones (distinct; ``size`` for none)."""
    ordered = np.sort(np.stack(used, axis=1), axis=1)
    taken = (ordered < size).sum(axis=1)
    index = (rng.random(len(ordered)) * (size - taken)).astype(np.int64)
    for j in range(ordered.shape[1]):
        index += index >= ordered[:, j]
    return index


@dataclass
class _Reference:
    """The items' reference answers as codes (one row per item).

    ``entity``, ``named``, ``form_count``, ``form`` and ``sentence`` have one column per slot: the
    entity, whether the reference names it (the first ``k`` slots), its number of written forms,
    the form written and the sentence that writes it (0: none). ``p`` is the item's chance of an
    entity or step being reproduced, ``diagnosis`` its first entity, ``step`` the codes of its
    rationale's steps (0: none).
    """

    entity: np.ndarray
    named: np.ndarray
    form_count: np.ndarray
    form: np.ndarray
    sentence: np.ndarray
    p: np.ndarray
    diagnosis: np.ndarray
    step: np.ndarray


def _reference(
    rng: np.random.Generator, vocabulary: _Vocabulary, n_items: int, entities: tuple[int, int], templates: int
) -> _Reference:
    """Draw the items: entities of the reference, written forms, difficulty, and the rationale's steps."""
    # The items: entities of the reference (one per slot, the first k), written forms and difficulty.
    k = rng.integers(entities[0], entities[1] + 1, n_items)
    slots = entities[1]
    entity = np.zeros((n_items, slots), dtype=np.int64)
    first_of: dict[str, int] = {}
    for s, category in enumerate(SLOT_CATEGORIES[:slots]):
        c = CATEGORIES.index(category)
        size = int(vocabulary.category_size[c])
        if category in first_of:
            earlier = entity[:, first_of[category]] - vocabulary.category_start[c]
            local = (earlier + 1 + rng.integers(0, size - 1, n_items)) % size
        else:
            first_of[category] = s
            local = rng.integers(0, size, n_items)
        entity[:, s] = vocabulary.category_start[c] + local
    named = np.arange(slots) < k[:, None]
    count = vocabulary.form_count[entity]
    ref_form = vocabulary.form_start[entity] + np.where(
        rng.random((n_items, slots)) < _P_NAME, 0, (rng.random((n_items, slots)) * count).astype(np.int64)
    )
    ref_sentence = np.where(named, 1 + ref_form * templates + rng.integers(0, templates, (n_items, slots)), 0)
    p_item = _P_LOW + _P_SPAN * rng.beta(2.0, 2.0, n_items)
    diagnosis = entity[:, 0]

    # The reference rationale: 2-4 steps, structure by place, evidence, a fact of the diagnosis.
    n_steps = rng.integers(_STEPS[0], _STEPS[1] + 1, n_items)
    place = np.arange(_STEPS[1])
    structure = np.where(
        place == 0,
        rng.integers(0, len(STRUCTURE_FIRST), (n_items, _STEPS[1])),
        np.where(
            place == n_steps[:, None] - 1,
            len(STRUCTURE_FIRST) + len(STRUCTURE_MIDDLE) + rng.integers(0, len(STRUCTURE_LAST), (n_items, _STEPS[1])),
            len(STRUCTURE_FIRST) + rng.integers(0, len(STRUCTURE_MIDDLE), (n_items, _STEPS[1])),
        ),
    )
    evidence = rng.integers(0, len(EVIDENCE), (n_items, _STEPS[1]))
    n_facts = len(vocabulary.steps) // len(STRUCTURE) // len(EVIDENCE)
    fact = vocabulary.fact_start[diagnosis][:, None] + (
        rng.random((n_items, _STEPS[1])) * vocabulary.fact_count[diagnosis][:, None]
    ).astype(np.int64)
    ref_step = np.where(place < n_steps[:, None], 1 + (structure * len(EVIDENCE) + evidence) * n_facts + fact, 0)
    return _Reference(entity, named, count, ref_form, ref_sentence, p_item, diagnosis, ref_step)


def _reference_texts(
    rng: np.random.Generator, vocabulary: _Vocabulary, ref: _Reference, answer_chars: int
) -> tuple[_Text, _Text]:
    """Write the reference answer and rationale of each item (built per item, gathered to the answers later)."""
    n_items, slots = ref.named.shape
    reference = _Text("reference", n_items)
    for s in range(slots):
        reference.add(vocabulary.sentences, vocabulary.sentence_chars, ref.sentence[:, s])
    reference.fill(rng, ANSWER_FILLERS, _wanted(rng, answer_chars, n_items))
    reference_rationale = _Text("reference_rationale", n_items)
    steps_chars = vocabulary.step_chars[ref.step].sum(axis=1)
    reference_rationale.chars += steps_chars
    reference_rationale.fill(rng, RATIONALE_FILLERS, _wanted(rng, answer_chars, n_items))
    reference_rationale.chars -= steps_chars
    for s in range(_STEPS[1]):
        reference_rationale.add(vocabulary.steps, vocabulary.step_chars, ref.step[:, s])
    return reference, reference_rationale


def _prediction(
    rng: np.random.Generator,
    vocabulary: _Vocabulary,
    ref: _Reference,
    item: np.ndarray,
    p: np.ndarray,
    *,
    answer_chars: int,
    templates: int,
) -> _Text:
    """Write the answers' predictions: each reference entity reproduced with the run's probability, wrong ones added."""
    n, slots = len(item), ref.named.shape[1]
    sentences, sentence_chars = vocabulary.sentences, vocabulary.sentence_chars
    prediction = _Text("prediction", n)
    for s in range(slots):
        form = ref.form[item, s]
        other = vocabulary.form_start[ref.entity[item, s]] + (rng.random(n) * ref.form_count[item, s]).astype(np.int64)
        form = np.where(rng.random(n) < _P_SAME_FORM, form, other)
        code = 1 + form * templates + rng.integers(0, templates, n)
        prediction.add(sentences, sentence_chars, np.where(ref.named[item, s] & (rng.random(n) < p), code, 0))
    for category, p_wrong in _P_WRONG.items():
        c = CATEGORIES.index(category)
        size = int(vocabulary.category_size[c])
        own = [s for s, name in enumerate(SLOT_CATEGORIES[:slots]) if name == category]
        used = [np.where(ref.named[item, s], ref.entity[item, s] - vocabulary.category_start[c], size) for s in own]
        wrong = vocabulary.category_start[c] + _other(rng, used or [np.full(n, size)], size)
        form = vocabulary.form_start[wrong] + (rng.random(n) * vocabulary.form_count[wrong]).astype(np.int64)
        code = 1 + form * templates + rng.integers(0, templates, n)
        prediction.add(sentences, sentence_chars, np.where(rng.random(n) < p_wrong, code, 0))
    prediction.fill(rng, ANSWER_FILLERS, _wanted(rng, answer_chars, n))
    return prediction


def _rationale(
    rng: np.random.Generator,
    vocabulary: _Vocabulary,
    ref: _Reference,
    item: np.ndarray,
    p: np.ndarray,
    answer_chars: int,
) -> _Text:
    """Write the answers' rationales: each reference step kept with the run's probability, a fallacy at times."""
    n = len(item)
    rationale = _Text("rationale", n)
    kept = np.where(rng.random((n, _STEPS[1])) < p[:, None], ref.step[item], 0)
    fallacies, fallacy_chars = vocab(["", *(f" {f}" for f in FALLACIES)])
    fallacy = np.where(rng.random(n) < _P_FALLACY, 1 + rng.integers(0, len(FALLACIES), n), 0)
    own_chars = vocabulary.step_chars[kept].sum(axis=1) + fallacy_chars[fallacy]
    rationale.chars += own_chars
    rationale.fill(rng, RATIONALE_FILLERS, _wanted(rng, answer_chars, n))
    rationale.chars -= own_chars
    for s in range(_STEPS[1]):
        rationale.add(vocabulary.steps, vocabulary.step_chars, kept[:, s])
    rationale.add(fallacies, fallacy_chars, fallacy)
    return rationale


def _answers(
    rng: np.random.Generator,
    d: _Design,
    vocabulary: _Vocabulary,
    *,
    effect: float,
    entities: tuple[int, int],
    answer_chars: int,
    tasks: tuple[str, ...],
) -> tuple[pl.LazyFrame, np.ndarray, int]:
    """Make the answers table, the characters of prediction and rationale per run, and those of all its text."""
    n = len(d.answer_run)
    item, run = d.answer_item, d.answer_run
    templates = len(TEMPLATES[CATEGORIES[0]])
    ref = _reference(rng, vocabulary, d.n_items, entities, templates)
    reference, reference_rationale = _reference_texts(rng, vocabulary, ref, answer_chars)

    # The answers: each reference entity and step reproduced with the run's probability.
    p = ref.p[item]
    p = np.where(d.is_mas[run], np.clip(p + effect, 0.0, 1.0), p)
    prediction = _prediction(rng, vocabulary, ref, item, p, answer_chars=answer_chars, templates=templates)
    rationale = _rationale(rng, vocabulary, ref, item, p, answer_chars)

    # The system's diagnosis label: the item's with the run's probability, else another one. A
    # child generator draws it, so that every other column stays as the parent stream made it.
    (labels,) = rng.spawn(1)
    n_labels = len(vocabulary.display)
    diagnosis = ref.diagnosis
    wrong = (diagnosis[item] + 1 + labels.integers(0, max(n_labels - 1, 1), n)) % n_labels
    predicted_diagnosis = np.where(labels.random(n) < p, diagnosis[item], wrong)
    hidden = {**prediction.hidden, **rationale.hidden}
    for text in (reference, reference_rationale):
        hidden.update({column: (codes[item], size) for column, (codes, size) in text.hidden.items()})
    frame = coded_table(
        "answers",
        {
            "run_id": Coded(d.run_ids, run),
            "item_id": Coded(d.item_ids, item),
            "task": Coded(pl.Series(tasks), d.task_of_case[d.case[run]]),
            "prediction": prediction.expression(),
            "predicted_diagnosis": Coded(vocabulary.display, predicted_diagnosis),
            "rationale": rationale.expression(),
            "reference": reference.expression(),
            "reference_rationale": reference_rationale.expression(),
            "reference_diagnosis": Coded(vocabulary.display, diagnosis[item]),
            # The case's note is its reference rationale (its findings): clinical relevance asks
            # how much of it an answer keeps; no effect is planted on it. No specialty: MedAISure's
            # tables know two.
            "note": reference_rationale.expression(),
            "specialty": None,
        },
        hidden,
    )
    text_chars = np.bincount(run, weights=prediction.length() + rationale.length(), minlength=d.runs)
    references = reference.length() + reference_rationale.length()
    return frame, text_chars, int(text_chars.sum() + references[item].sum())


def _runs(rng: np.random.Generator, d: _Design, tasks: tuple[str, ...], text_chars: np.ndarray) -> pl.LazyFrame:
    items = np.diff(d.item_offsets)[d.case]
    agents = rng.integers(_AGENTS[0], _AGENTS[1] + 1, d.runs)
    rounds = rng.integers(_ROUNDS[0], _ROUNDS[1] + 1, d.runs)
    calls_per_item = np.where(d.is_mas, agents * rounds + 1, 1)
    api_calls = items * calls_per_item
    tokens = np.rint(text_chars * 2.5 / 4 * calls_per_item).astype(np.int64)
    return coded_table(
        "runs",
        {
            "run_id": d.run_ids,
            "system": Coded(pl.Series(SYSTEMS), ~d.is_mas),
            "case_id": Coded(d.case_ids, d.case),
            "task": Coded(pl.Series(tasks), d.task_of_case[d.case]),
            "variant": Coded(pl.Series(["v1"]), np.zeros(d.runs, dtype=np.uint8)),
            "seed": rng.integers(0, 2**31 - 1, d.runs),
            "epoch": None,
            "cluster": None,
            "recommended": None,
            "correct": None,
            "confidence": None,
            "iterations": np.where(d.is_mas, rounds, 1),
            "api_calls": api_calls,
            "seconds": np.round(api_calls * rng.lognormal(np.log(1.5), 0.3, d.runs), 3),
            "tokens": tokens,
            "input_tokens": None,
            "output_tokens": None,
            "cost_usd": np.round(tokens * _PRICE_PER_MTOK / 1e6, 6),
        },
    )
