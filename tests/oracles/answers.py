"""The MedAISure metrics overview's answer metrics for one answer, literally: plain Python, read next to the formulas.

A text is normalised to a list of words; terms are tuples of words. The reference tables are the
raw rows the package ships (or a test's own), compiled here with this module's own normalisation,
synonym map and chain following, so that nothing of the vectorised compilation is reused: only
the tables (data) and the list of separator characters (data) are shared.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from mas_eval.metrics.answers.normalise import APOSTROPHES, SEPARATORS

CATEGORIES = ("diagnoses", "treatments", "medications", "symptoms", "labs")
CATEGORY_WEIGHTS = {"diagnoses": 3.0, "treatments": 2.0, "medications": 2.0, "symptoms": 1.0, "labs": 1.0}
REASONING_WEIGHTS = {"f1": 0.4, "structure": 0.15, "evidence": 0.2, "factual": 0.25}

_SEPARATOR = "[" + "".join(re.escape(c) for c in SEPARATORS) + "]"
_POSSESSIVE = re.compile("[" + "".join(APOSTROPHES) + "]s(?:" + _SEPARATOR + r"|\Z)")


# --- normalisation ----------------------------------------------------------------------------------------


def words(text: str | None) -> list[str]:
    """Lowercase; an apostrophe + "s" before a separator (or the end) dropped with that separator;
    every separator character splits words."""
    if text is None:
        return []
    text = _POSSESSIVE.sub(" ", text.lower())
    return [word for word in re.split(_SEPARATOR, text) if word]


def leftmost_longest(tokens: list[str], terms: set[tuple[str, ...]]) -> list[tuple[int, tuple[str, ...]]]:
    """Scanning the words from the left: at each word the longest term starting there, then after it."""
    found, i = [], 0
    longest = max((len(t) for t in terms), default=0)
    while i < len(tokens):
        for size in range(min(longest, len(tokens) - i), 0, -1):
            candidate = tuple(tokens[i : i + size])
            if candidate in terms:
                found.append((i, candidate))
                i += size
                break
        else:
            i += 1
    return found


def leftmost_longest_substrings(text: str, terms: set[str]) -> list[str]:
    """The same, on the characters of a string: at each position the longest term starting there."""
    found, p = [], 0
    while p < len(text):
        match = max((t for t in terms if text.startswith(t, p)), key=len, default=None)
        if match is None:
            p += 1
        else:
            found.append(match)
            p += len(match)
    return found


def apply_synonyms(tokens: list[str], synonyms: dict[tuple[str, ...], tuple[str, ...]]) -> list[str]:
    """Each leftmost-longest synonym term replaced by its canonical name (canonical names map to themselves)."""
    out, i = [], 0
    matches = dict(leftmost_longest(tokens, set(synonyms)))
    while i < len(tokens):
        if i in matches:
            out += synonyms[matches[i]]
            i += len(matches[i])
        else:
            out.append(tokens[i])
            i += 1
    return out


def present(tokens: list[str], term: tuple[str, ...], matching: str) -> bool:
    text, needle = " ".join(tokens), " ".join(term)
    return f" {needle} " in f" {text} " if matching == "word_boundary" else needle in text


# --- the vocabulary -----------------------------------------------------------------------------------------


@dataclass
class Vocabulary:
    """The tables, compiled by this module."""

    synonyms: dict[tuple[str, ...], tuple[str, ...]]
    lexicon: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    markers: dict[tuple[str, str], list[tuple[str, ...]]] = field(default_factory=dict)
    facts: dict[tuple[str, ...], dict[str, list[tuple[str, ...]]]] = field(default_factory=dict)

    def normalise(self, text: str | None) -> list[str]:
        return apply_synonyms(words(text), self.synonyms)


def compile_vocabulary(
    synonyms: list[tuple[str, str]],
    lexicon: list[tuple[str, str]],
    markers: list[tuple[str, str]],
    facts: list[tuple[str, str]],
) -> Vocabulary:
    mapping = {}
    for term, canonical in synonyms:
        t, c = tuple(words(term)), tuple(words(canonical))
        if t != c:
            assert mapping.get(t, c) == c, f"{t} has two canonical names"
            mapping[t] = c
    resolved = {}
    for term, target in mapping.items():
        seen = {term}
        while target in mapping:  # follow the chain a -> b -> c
            assert target not in seen, "cycle"
            seen.add(target)
            target = mapping[target]
        resolved[term] = target
    table = {**{c: c for c in resolved.values()}, **resolved}
    vocabulary = Vocabulary(table)
    for term, category in lexicon:
        vocabulary.lexicon.setdefault(tuple(vocabulary.normalise(term)), set()).add(category)
    for kind, cell in markers:
        forms = [tuple(vocabulary.normalise(form)) for form in cell.split("|")]
        vocabulary.markers[(kind, "|".join(" ".join(f) for f in forms))] = forms
    for diagnosis, cell in facts:
        forms = [tuple(vocabulary.normalise(form)) for form in cell.split("|")]
        name = "|".join(" ".join(f) for f in forms)
        vocabulary.facts.setdefault(tuple(vocabulary.normalise(diagnosis)), {})[name] = forms
    return vocabulary


# --- clinical accuracy ------------------------------------------------------------------------------------


def entities(tokens: list[str], vocabulary: Vocabulary, matching: str) -> dict[str, set[tuple[str, ...]]]:
    """The lexicon terms found (leftmost-longest, non-overlapping), by category."""
    if matching == "word_boundary":
        found = [term for _, term in leftmost_longest(tokens, set(vocabulary.lexicon))]
    else:
        strings = {" ".join(t): t for t in vocabulary.lexicon}
        found = [strings[s] for s in leftmost_longest_substrings(" ".join(tokens), set(strings))]
    out: dict[str, set[tuple[str, ...]]] = {c: set() for c in CATEGORIES}
    for term in found:
        for category in vocabulary.lexicon[term]:
            out[category].add(term)
    return out


def clinical_accuracy(
    prediction: str | None,
    reference: str | None,
    vocabulary: Vocabulary,
    *,
    weights: dict[str, float] = CATEGORY_WEIGHTS,
    matching: str = "word_boundary",
) -> dict[str, object]:
    """sum_c w_c |P_c & R_c| / sum_c w_c |P_c | R_c|; without entities, the normalised texts compared."""
    p_words, r_words = vocabulary.normalise(prediction), vocabulary.normalise(reference)
    p_ent, r_ent = entities(p_words, vocabulary, matching), entities(r_words, vocabulary, matching)
    out: dict[str, object] = {}
    inter = union = 0.0
    for c in CATEGORIES:
        i, u = len(p_ent[c] & r_ent[c]), len(p_ent[c] | r_ent[c])
        out[f"entity_jaccard_{c}"] = i / u if u else None
        inter += weights[c] * i
        union += weights[c] * u
    out["accuracy_fallback_used"] = union <= 0
    if union > 0:
        out["clinical_accuracy"] = inter / union
    elif not p_words and not r_words:
        out["clinical_accuracy"] = 1.0
    elif not p_words or not r_words:
        out["clinical_accuracy"] = 0.0
    else:
        contained = present(r_words, tuple(p_words), matching) or present(p_words, tuple(r_words), matching)
        out["clinical_accuracy"] = 1.0 if contained else 0.0
    return out


# --- reasoning quality ------------------------------------------------------------------------------------


def token_f1(a: list[str], b: list[str]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    common = sum((Counter(a) & Counter(b)).values())
    precision, recall = common / len(a), common / len(b)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def reasoning_quality(
    item: dict[str, str | None],
    vocabulary: Vocabulary,
    *,
    weights: dict[str, float] = REASONING_WEIGHTS,
    matching: str = "word_boundary",
    reference_fallback: bool = True,
    prediction_fallback: bool = True,
    factual_formula: str = "share",
    factual_source: str = "diagnosis",
) -> dict[str, float]:
    """clamp01(0.4 F1 + 0.15 structure + 0.2 evidence + 0.25 factual - fallacy)."""
    norm = vocabulary.normalise
    reasoning = norm(item.get("rationale"))
    if not reasoning and prediction_fallback:
        reasoning = norm(item.get("prediction"))
    reference = norm(item.get("reference_rationale"))
    if not reference and reference_fallback:
        reference = norm(item.get("reference"))
    first, second = ("reference_diagnosis", "reference")[:: 1 if factual_source == "diagnosis" else -1]
    diagnosis = norm(item.get(first)) or norm(item.get(second))

    hits = dict.fromkeys(("structure", "evidence", "fallacy"), 0)
    for (kind, _name), forms in vocabulary.markers.items():
        hits[kind] += any(present(reasoning, form, matching) for form in forms)
    structure = min(1.0, hits["structure"] / 3)
    evidence = min(1.0, hits["evidence"] / 3)
    fallacy = min(0.4, 0.15 * hits["fallacy"])

    expected: dict[str, list[tuple[str, ...]]] = {}
    for key, facts in vocabulary.facts.items():
        if present(diagnosis, key, matching):
            expected |= facts
    if expected:
        found = sum(any(present(reasoning, form, matching) for form in forms) for forms in expected.values())
        share = found / len(expected)
        half_capped = min(1, found / max(1, len(expected) // 2))  # MedAISure's: half the set scores 1
        factual = share if factual_formula == "share" else half_capped
    else:
        factual = evidence

    f1 = token_f1(reasoning, reference)
    score = (
        weights["f1"] * f1
        + weights["structure"] * structure
        + weights["evidence"] * evidence
        + weights["factual"] * factual
        - fallacy
    )
    return {
        "reasoning_quality": max(0.0, min(1.0, score)),
        "token_f1": f1,
        "structure": structure,
        "evidence": evidence,
        "factual_consistency": factual,
        "fallacy_penalty": fallacy,
    }


def score_item(
    item: dict[str, str | None],
    vocabulary: Vocabulary,
    *,
    category_weights: dict[str, float] = CATEGORY_WEIGHTS,
    reasoning_weights: dict[str, float] = REASONING_WEIGHTS,
    matching: str = "word_boundary",
    reference_fallback: bool = True,
    label_options: dict[str, object] | None = None,
    **reasoning_options: object,
) -> dict[str, object]:
    """Every item column of the answers family for one answer (``reasoning_options``: those of
    :func:`reasoning_quality`, ``prediction_fallback``, ``factual_formula``, ``factual_source``;
    ``label_options``: those of :func:`label_scores`)."""
    accuracy = clinical_accuracy(
        item.get("prediction"), item.get("reference"), vocabulary, weights=category_weights, matching=matching
    )
    reasoning = reasoning_quality(
        item,
        vocabulary,
        weights=reasoning_weights,
        matching=matching,
        reference_fallback=reference_fallback,
        **reasoning_options,
    )
    return accuracy | reasoning | spec_label_scores(item, vocabulary, **(label_options or {}))


# --- MedAISure's code (preset "medaisure"; tests/data/medaisure_behaviour.md) ------------------------------
#
# Its own normalisation, tables used as written, phrases then words, substring markers and facts,
# min(1, found / max(1, n // 2)), and Python's `or` for missing texts ("   " is given).

MEDAISURE_DELETED = ".,!?;:-()[]{}'\""


def medaisure_text(text: str | None) -> str:
    """Lowercase; every whitespace run one space, stripped; then the 15 characters deleted."""
    text = re.sub(r"\s+", " ", (text or "").lower()).strip()
    return "".join(c for c in text if c not in MEDAISURE_DELETED)


def as_written(term: str) -> str:
    return re.sub(r"\s+", " ", term.lower()).strip()


@dataclass
class MedaisureVocabulary:
    """The tables as MedAISure holds them: lists and sets of strings, as written."""

    lexicon: dict[str, list[str]]  # category -> terms, in the order the phrases are looked for
    token_map: dict[str, str]
    markers: dict[str, set[str]]  # kind -> markers
    facts: dict[str, set[str]]  # diagnosis -> keywords


def compile_medaisure(
    synonyms: list[tuple[str, str]],
    lexicon: list[tuple[str, str]],
    markers: list[tuple[str, str]],
    facts: list[tuple[str, str]],
) -> MedaisureVocabulary:
    """One form per marker and fact row (MedAISure's tables have no alternatives)."""
    by_category: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    for term, category in lexicon:
        by_category[category].append(as_written(term))
    by_category = {c: sorted(set(terms)) for c, terms in by_category.items()}
    token_map = {as_written(t): as_written(c) for t, c in synonyms if as_written(t) != as_written(c)}
    marker_sets: dict[str, set[str]] = {"structure": set(), "evidence": set(), "fallacy": set()}
    for kind, marker in markers:
        marker_sets[kind].add(as_written(marker))
    fact_sets: dict[str, set[str]] = {}
    for diagnosis, fact in facts:
        fact_sets.setdefault(as_written(diagnosis), set()).add(as_written(fact))
    return MedaisureVocabulary(by_category, token_map, marker_sets, fact_sets)


def medaisure_entities(text: str, vocabulary: MedaisureVocabulary) -> dict[str, set[str]]:
    """Phrases (terms with a space) as substrings, category by category, each removed (replaced by
    a space) once found; then every word left, through the token map, in every category holding it."""
    out: dict[str, set[str]] = {c: set() for c in CATEGORIES}
    for category, terms in vocabulary.lexicon.items():
        for term in terms:
            if " " in term and term in text:
                out[category].add(term)
                text = text.replace(term, " ")
    for word in text.split():
        word = vocabulary.token_map.get(word, word)
        for category, terms in vocabulary.lexicon.items():
            if word in terms:
                out[category].add(word)
    return out


def medaisure_accuracy(
    prediction: str | None, reference: str | None, vocabulary: MedaisureVocabulary
) -> dict[str, object]:
    p, r = medaisure_text(prediction), medaisure_text(reference)
    p_ent, r_ent = medaisure_entities(p, vocabulary), medaisure_entities(r, vocabulary)
    out: dict[str, object] = {}
    inter = union = 0.0
    for c in CATEGORIES:
        i, u = len(p_ent[c] & r_ent[c]), len(p_ent[c] | r_ent[c])
        out[f"entity_jaccard_{c}"] = i / u if u else None  # MedAISure: 1.0
        inter += CATEGORY_WEIGHTS[c] * i
        union += CATEGORY_WEIGHTS[c] * u
    out["accuracy_fallback_used"] = union <= 0
    if union > 0:
        out["clinical_accuracy"] = inter / union
    elif not p and not r:
        out["clinical_accuracy"] = 1.0
    elif not p or not r:
        out["clinical_accuracy"] = 0.0
    else:
        out["clinical_accuracy"] = 1.0 if p == r or p in r or r in p else 0.0
    return out


def medaisure_reasoning(
    item: dict[str, str | None], vocabulary: MedaisureVocabulary, *, prediction_fallback: bool = False
) -> dict[str, float]:
    raw = item.get("rationale") or (item.get("prediction") if prediction_fallback else None)
    t, a = medaisure_text(raw), medaisure_text(item.get("reference_rationale"))
    hits = {kind: sum(m in t for m in markers) if t else 0 for kind, markers in vocabulary.markers.items()}
    structure, evidence = min(1, hits["structure"] / 3.0), min(1, hits["evidence"] / 3.0)
    fallacy = min(0.4, 0.15 * hits["fallacy"])
    d = medaisure_text(item.get("reference") or item.get("reference_diagnosis"))
    expected = set().union(*(facts for key, facts in vocabulary.facts.items() if key in d)) if d else set()
    if not t:
        factual = 0.0
    elif not expected:
        factual = evidence
    else:
        factual = min(1, sum(k in t for k in expected) / max(1, len(expected) // 2))
    f1 = token_f1(t.split(), a.split())
    score = 0.4 * f1 + 0.15 * structure + 0.2 * evidence + 0.25 * factual - fallacy
    return {
        "reasoning_quality": max(0.0, min(1.0, score)),
        "token_f1": f1,
        "structure": structure,
        "evidence": evidence,
        "factual_consistency": factual,
        "fallacy_penalty": fallacy,
    }


def score_item_medaisure(
    item: dict[str, str | None],
    vocabulary: MedaisureVocabulary,
    *,
    prediction_fallback: bool = False,
    label_synonyms: dict[str, str] | None = None,
) -> dict[str, object]:
    """Every item column of the answers family under preset "medaisure" (``label_synonyms``: the
    label map's rows, ``term -> canonical``)."""
    accuracy = medaisure_accuracy(item.get("prediction"), item.get("reference"), vocabulary)
    reasoning = medaisure_reasoning(item, vocabulary, prediction_fallback=prediction_fallback)
    labels = medaisure_label_scores(item, vocabulary, label_synonyms or {}, **MEDAISURE_LABEL_OPTIONS)
    return accuracy | reasoning | labels


# --- diagnostic accuracy and clinical relevance (MedAISure's DiagnosticAccuracyMetric, ClinicalRelevanceMetric) ----
#
# The specialty tables of MedAISure's clinical.py, restated here for the oracle.

KNOWN = {
    "cardiology": {"myocardial infarction", "mi", "heart failure"},
    "infectious_disease": {"sepsis", "pneumonia", "flu"},
}
CRITICAL = {"cardiology": {"myocardial infarction", "mi"}, "infectious_disease": {"sepsis"}}
THRESHOLDS = {"cardiology": 0.35, "infectious_disease": 0.30}
#: Preset "medaisure"'s settings of the two metrics; the document's are the defaults of label_scores.
MEDAISURE_LABEL_OPTIONS = {"critical_weight": 1.5, "unscored": False, "boost": 0.02, "factor": 0.8, "python_or": True}


def label_scores(
    item: dict[str, str | None],
    normalise: Callable[[str | None], str],
    specialty_of: Callable[[str | None], str],
    keyword_counts: dict[str, int],
    table_label: Callable[[str], str],
    *,
    critical_weight: float = 1.0,
    unscored: bool = True,
    boost: float = 0.0,
    cap: float = 0.1,
    threshold: float = 0.25,
    factor: float = 1.0,
    python_or: bool = False,
) -> dict[str, object]:
    """Diagnostic accuracy and clinical relevance of one item, with their parts, step by step.

    ``normalise``: a text to its normalised string ("" for None); ``specialty_of``: a specialty
    to its table key; ``keyword_counts``: one-word lexicon term -> categories listing it;
    ``table_label``: a label of the specialty tables as the texts are normalised.
    """
    out: dict[str, object] = {}
    t = normalise(item.get("reference_diagnosis"))
    if python_or:  # MedAISure's `label or prediction`: a label of spaces alone is given
        p = normalise(item.get("predicted_diagnosis") or item.get("prediction"))
    else:  # the label if it has words, else the answer
        p = normalise(item.get("predicted_diagnosis")) or normalise(item.get("prediction"))
    s = specialty_of(item.get("specialty")) if item.get("specialty") else None
    if unscored and not t:
        out |= dict.fromkeys(("diagnostic_accuracy", "diagnostic_weight", "diagnostic_critical",
                              "diagnostic_known_label"))  # fmt: skip
    else:
        known, critical, weight = True, False, 1.0
        if s in KNOWN:
            known = bool(p) and p in {table_label(label) for label in KNOWN[s]}
        if s in CRITICAL and t in {table_label(label) for label in CRITICAL[s]}:
            critical, weight = True, critical_weight
        out |= {
            "diagnostic_accuracy": 1.0 if t and p and t == p else 0.0,
            "diagnostic_weight": weight,
            "diagnostic_critical": critical,
            "diagnostic_known_label": known,
        }
    note, summary = set(normalise(item.get("note")).split()), set(normalise(item.get("prediction")).split())
    if unscored and not note:
        return out | dict.fromkeys(("clinical_relevance", "relevance_jaccard", "relevance_boost",
                                    "relevance_threshold", "relevance_meets_threshold"))  # fmt: skip
    if not note and not summary:
        jaccard = 1.0
    elif not note or not summary:
        jaccard = 0.0
    else:
        jaccard = len(note & summary) / len(note | summary)
    shared = sum(keyword_counts.get(word, 0) for word in note & summary)
    bonus = min(cap, shared * boost) if shared else 0.0
    raw = min(1.0, jaccard + bonus)
    theta = THRESHOLDS.get(s, threshold) if s else threshold
    meets = raw >= theta
    return out | {
        "clinical_relevance": raw if meets else max(0.0, raw * factor),
        "relevance_jaccard": jaccard,
        "relevance_boost": bonus,
        "relevance_threshold": theta,
        "relevance_meets_threshold": meets,
    }


def spec_label_scores(item: dict[str, str | None], vocabulary: Vocabulary, **options: object) -> dict[str, object]:
    """:func:`label_scores` under the document's normalisation: words through the synonym map."""
    counts = {term[0]: len(categories) for term, categories in vocabulary.lexicon.items() if len(term) == 1}
    return label_scores(
        item,
        lambda text: " ".join(vocabulary.normalise(text)),
        lambda text: "_".join(words(text)),
        counts,
        lambda label: " ".join(vocabulary.normalise(label)),
        **options,
    )


def medaisure_label_scores(
    item: dict[str, str | None], vocabulary: MedaisureVocabulary, label_synonyms: dict[str, str], **options: object
) -> dict[str, object]:
    """:func:`label_scores` as MedAISure's code: its string, the label map looked up whole; the
    one-word lexicon terms counted once per category listing them."""

    def label(text: str | None) -> str:
        normal = medaisure_text(text)
        return label_synonyms.get(normal, normal)

    counts: dict[str, int] = {}
    for terms in vocabulary.lexicon.values():
        for term in terms:
            if " " not in term:
                counts[term] = counts.get(term, 0) + 1

    def score(item_: dict[str, str | None]) -> dict[str, object]:
        diagnostic = label_scores(item_, label, medaisure_text, counts, lambda x: x, **options)
        # Relevance compares the texts' words without the label map.
        relevance = label_scores(item_, medaisure_text, medaisure_text, counts, lambda x: x, **options)
        return {k: v for k, v in diagnostic.items() if k.startswith("diagnostic")} | {
            k: v for k, v in relevance.items() if not k.startswith("diagnostic")
        }

    return score(item)
