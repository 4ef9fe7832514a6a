r"""Clinical equivalence of diagnosis strings (the LDDx v6 metrics guide, "AI-Enhanced Diagnosis Classification").

Local-DDx asks an LLM whether a system's diagnosis is "clinically equivalent" to a ground-truth
one ("Heart Attack" vs. "Myocardial Infarction"). Here the question is answered by deterministic
tiers first, tried in order; a pair records the first ``tier`` that matches and its ``score``:

========================  ================================================================  ====================
tier                      rule (on normalised strings, see :func:`normalise`)                score
========================  ================================================================  ====================
``exact``                 the normalised strings are equal                                   1
``synonym``               they share a canonical key: the synonym table, a parenthesised     1
                          abbreviation, or the same name once qualifiers and a cause tail
                          ("secondary to …") are set aside
``containment``           one informative-token set is a proper subset of the other,         ``|small|/|large|``
                          with at least ``min_tokens`` tokens in the smaller
``token_set``             Jaccard similarity of the informative-token sets                   the Jaccard value
                          ``>= threshold``
``cause``                 the *left* string names a cause ("hypoglycemia due to               the cause's score
                          insulinoma") and that cause matches the right string by one of
                          the tiers above
``judge``                 an optional user callable, asked once per unresolved unique        its answer
                          normalised pair, answers cached on disk
``unmatched``             none of the above                                                  0
========================  ================================================================  ====================

The ``cause`` tier is one-way, the one rule that is: left is the system's diagnosis (a final list)
and right what it is checked against (the ground truth). "X due to Y" asserts Y, so a system that
wrote it named the ground truth "Y": Local-DDx's judge accepted "Hypoglycemia Due To Insulinoma"
for "insulinoma". The other way round it would not be sound: a system that wrote only "Y" names the
cause of the ground truth "X due to Y", whose diagnosis is X (the consequence), and "hypertensive
nephropathy" (kidney damage caused by hypertension) is not "hypertension due to renal disease".

Everything is computed once per unique string and once per unique pair of strings (joins and
list expressions, no per-row Python), then joined back to the pairs of each group, so repeated
diagnoses across thousands of runs cost nothing extra. The one exception is the judge.

>>> system = pl.DataFrame({"run_id": ["r1", "r1"], "diagnosis": ["Heart attack", "Pneumonia"]})
>>> truth = pl.DataFrame({"run_id": ["r1", "r1"], "diagnosis": ["Myocardial infarction", "Pneumothorax"]})
>>> pairs = match_pairs(system, truth, left_on="diagnosis", right_on="diagnosis", by="run_id")
>>> pairs.filter(pl.col("tier") != "unmatched").rows()
[('r1', 'Heart attack', 'Myocardial infarction', 'synonym', 1.0)]
>>> assign(pairs).select("left", "right").rows()
[('Heart attack', 'Myocardial infarction')]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import polars as pl

from mas_eval.constraints import Boolean, Interval, check_columns, check_parameter, validate_params
from mas_eval.errors import DataError, InvalidParameterError, SchemaError, format_keys
from mas_eval.metrics.diagnosis.tables import shipped_table, string_table
from mas_eval.storage.inputs import input_file, read_parquet
from mas_eval.storage.outputs import atomic_file

__all__ = [
    "CAUSE_PHRASES",
    "GENERIC",
    "HEDGES",
    "NEGATIONS",
    "QUALIFIERS",
    "STOPWORDS",
    "TIERS",
    "aliases",
    "assign",
    "follow_chains",
    "match_pairs",
    "normalise",
    "synonym_table",
]

#: The tiers, best first; ``tier`` columns are this Enum.
TIERS = ("exact", "synonym", "containment", "token_set", "cause", "judge", "unmatched")
TIER = pl.Enum(TIERS)

#: Words of uncertainty, dropped by :func:`normalise` ("suspected PE" names PE), with "r/o" and "rule out".
HEDGES = frozenset(
    {"suspected", "suspect", "possible", "possibly", "probable", "probably", "likely", "presumed", "presumptive"}
    | {"query", "questionable", "provisional"}
)
#: Qualifiers: kept in the normalised string, set aside for the synonym key and the token sets, and
#: compared by class — two strings whose values of one class are disjoint never match (below the judge).
QUALIFIERS = {
    "acute": ("course", 1),
    "hyperacute": ("course", 1),
    "subacute": ("course", 2),
    "chronic": ("course", 4),
    "primary": ("origin", 1),
    "essential": ("origin", 1),
    "secondary": ("origin", 2),
    "left": ("side", 1),
    "right": ("side", 2),
}
#: Negation words: the token after one is negated ("non ST elevation"); a token negated on one side
#: and present plainly on the other blocks every tier below exact.
NEGATIONS = frozenset({"non", "not", "no", "without"})
#: Function words, not informative.
STOPWORDS = frozenset(
    {"a", "an", "the", "of", "and", "or", "with", "in", "on", "at", "to", "for", "by", "from", "as", "into"}
    | {"is", "are", "was", "were", "be", "this", "that", "its", "his", "her", "their", "than", "vs", "versus"}
)
#: Generic words: severity, timing and kind say nothing about which disease it is. "disease",
#: "disorder" and "syndrome" are *not* generic: "Cushing disease" is not "Cushing syndrome".
GENERIC = frozenset(
    {"type", "form", "unspecified", "nos", "other", "severe", "mild", "moderate", "early", "late", "new", "onset"}
    | {"recurrent", "related", "associated", "induced", "condition", "patient"}
)
#: A cause tail ("X secondary to Y") names X: the synonym key and the token sets use the text before it.
CAUSE_PHRASES = (
    "secondary to", "due to", "caused by", "induced by", "related to", "attributable to", "as a result of",
    "resulting from",
)  # fmt: skip

_NOT_WORD = r"[^\p{L}\p{N}]"
#: Characters NFKD leaves alone: typographic apostrophes, and Greek letters spelt out (β-thalassaemia).
_CHARACTERS = {
    "\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'", "`": "'",
    "α": " alpha ", "β": " beta ", "γ": " gamma ", "δ": " delta ", "κ": " kappa ", "λ": " lambda ",
}  # fmt: skip
_LIST_MARKER = r"^\s*(?:[-*•·]+|\(?\d{1,2}[.)])\s+"
_LABEL = (
    r"^\s*(?:(?:final|working|provisional|principal|main|leading|differential|most likely)\s+)?"
    r"(?:diagnosis|diagnoses|dx|ddx|impression|assessment)\s*\d*\s*:"
)
#: British to American spelling, as (pattern, replacement) on lowercase text, in this order.
_SPELLING = (
    (r"a+e([mscdt])", "e${1}"),  # anaemia, haem-, ischaemia, leukaemia, aetiology, caecum, paediatric, anaesthesia
    (rf"(^|{_NOT_WORD})oe", "${1}e"),  # oedema, oesophagus, oestrogen
    (r"(rh|pn|c|f|m)oe", "${1}e"),  # diarrhoea, dyspnoea, coeliac, foetal, amoebic
    (r"(tum|lab)our", "${1}or"),  # tumour, labour
    (r"leuc", "leuk"),  # leucocyte, leucopenia
    (rf"(\p{{L}}{{2}})is(e|ed|es|ing|ation|ations)({_NOT_WORD}|$)", "${1}iz${2}${3}"),  # generalised
)
_HEAD = rf"^(.*?) ({'|'.join(CAUSE_PHRASES)})(?: |$)"
#: The cause a cause tail names: "hypoglycemia due to insulinoma" → "insulinoma".
_CAUSE = rf"^(.*?) (?:{'|'.join(CAUSE_PHRASES)}) (.+)$"
_RULE_OUT = r"(^| )rule(?: rule| out)* out( |$)"
_SYNONYMS_FILE = "synonyms.csv"


# --- normalisation ------------------------------------------------------------------------------------


def _prepare(expr: pl.Expr) -> pl.Expr:
    """Lowercase, unicode folded, list marker and "Diagnosis:" label gone, commentary after a colon cut."""
    text = expr.str.normalize("NFKD").str.replace_all(r"\p{M}+", "").str.to_lowercase()
    text = text.str.replace_many(list(_CHARACTERS), list(_CHARACTERS.values()))
    text = text.str.replace(_LIST_MARKER, "").str.replace(_LABEL, "")
    return text.str.split(":").list.first()


def _clean(expr: pl.Expr) -> pl.Expr:
    """Possessives, "r/o", British spellings, punctuation, hedge words and "rule out" gone; single spaces."""
    text = expr.str.replace_all(rf"'s({_NOT_WORD}|$)", "${1}")
    text = text.str.replace_all(rf"(^|{_NOT_WORD})r\s*/\s*o({_NOT_WORD}|$)", "${1} ${2}")
    for pattern, replacement in _SPELLING:
        text = text.str.replace_all(pattern, replacement)
    text = text.str.replace_all(rf"{_NOT_WORD}+", " ").str.strip_chars(" ")
    word = pl.element()
    text = text.str.split(" ").list.eval(word.filter((word != "") & ~word.is_in(list(HEDGES)))).list.join(" ")
    return text.str.replace_all(_RULE_OUT, " ").str.replace_all(" +", " ").str.strip_chars(" ")


def normalise(expr: pl.Expr) -> pl.Expr:
    """Normalise diagnosis strings: the form the ``exact`` tier compares.

    Parameters
    ----------
    expr
        A string expression.

    Returns
    -------
    pl.Expr
        Lowercase words of letters and digits separated by single spaces (``""`` when nothing is left).

    Notes
    -----
    In order:

    1. Unicode NFKD with combining marks dropped (Ménière → meniere); lowercase; typographic
       apostrophes to ``'``; Greek letters spelt out (β → beta);
    2. a leading list marker (``-``, ``*``, ``1.``, ``2)``) and a label such as ``Final diagnosis:``
       are dropped, then everything from the first colon on (``"Hemochromatosis: the labs show…"``
       names hemochromatosis; the rest is commentary);
    3. parenthesised text is dropped (``"Acute Kidney Injury (AKI)"`` → ``acute kidney injury``;
       :func:`aliases` keeps it as an alternative name) unless nothing else is left (``"(Sarcoidosis)"``);
    4. possessive ``'s`` is dropped (Crohn's → crohn), ``r/o`` too; British spellings become
       American (anaemia → anemia, oedema → edema, oesophagitis → esophagitis, haemorrhage →
       hemorrhage, diarrhoea → diarrhea, tumour → tumor, generalised → generalized);
    5. every run of characters other than letters and digits becomes one space (hyphens, dashes,
       quotes, brackets, slashes);
    6. the hedge words :data:`HEDGES` and any "rule out" are dropped.

    Qualifiers (acute, chronic, primary, secondary, …), "disease", "syndrome" and a "secondary to …"
    tail are kept: the tiers below ``exact`` decide what they mean. The function is idempotent.

    Examples
    --------
    >>> s = pl.Series(["Acute Kidney Injury (AKI)", "Hirschsprung’s disease", "suspected ANAEMIA?", "R/O STEMI"])
    >>> pl.select(normalise(s)).to_series().to_list()
    ['acute kidney injury', 'hirschsprung disease', 'anemia', 'stemi']
    >>> pl.select(normalise(pl.lit("Final diagnosis: Hemochromatosis: ferritin > 1000"))).item()
    'hemochromatosis'
    """
    return _clean(_main(_prepare(expr)))


def _main(text: pl.Expr) -> pl.Expr:
    """Drop the parenthesised parts of prepared text, unless nothing else is left."""
    without = text.str.replace_all(r"\([^()]*\)", " ")
    return pl.when(without.str.contains(r"[\p{L}\p{N}]")).then(without).otherwise(text)


def aliases(expr: pl.Expr) -> pl.Expr:
    """Return the parenthesised alternative names of diagnosis strings, normalised (``"X (AKI)"`` → ``["aki"]``).

    Notes
    -----
    Every innermost ``( … )`` before the first colon is an alias; each is cleaned as in
    :func:`normalise` and empty ones are dropped. The ``synonym`` tier uses aliases as keys, so
    "AKI" matches "Acute Kidney Injury (AKI)"; the token tiers do not use them.

    Examples
    --------
    >>> pl.select(aliases(pl.lit("Peripheral arterial disease (PAD)"))).item().to_list()
    ['pad']
    """
    return _aliases(_prepare(expr))


def _aliases(text: pl.Expr) -> pl.Expr:
    word = pl.element()
    found = text.str.extract_all(r"\([^()]*\)")
    cleaned = _clean(word.str.strip_prefix("(").str.strip_suffix(")"))
    return found.list.eval(cleaned).list.eval(word.filter(word != ""))


def _head(text: pl.Expr) -> pl.Expr:
    """Return the text before the first cause phrase ("hypertension secondary to ckd" → "hypertension")."""
    return pl.coalesce(text.str.extract(_HEAD, 1), text)


def _cause(text: pl.Expr) -> pl.Expr:
    """Return the text after the first cause phrase ("hypertension secondary to ckd" → "ckd").

    Null when there is none, or when a negation word stands just before the phrase ("not due to"
    names no cause).
    """
    denied = text.str.extract(_CAUSE, 1).str.split(" ").list.last().is_in(list(NEGATIONS))
    return pl.when(~denied).then(text.str.extract(_CAUSE, 2))


def _without(text: pl.Expr, words: frozenset[str] | Sequence[str]) -> pl.Expr:
    word = pl.element()
    return text.str.split(" ").list.eval(word.filter((word != "") & ~word.is_in(list(words)))).list.join(" ")


def _core(text: pl.Expr) -> pl.Expr:
    """Drop the qualifier words of the text ("acute mi" → "mi")."""
    return _without(text, list(QUALIFIERS))


# --- the synonym table ----------------------------------------------------------------------------------


def _shipped() -> pl.DataFrame:
    return shipped_table(_SYNONYMS_FILE, ("term", "canonical"))


def _check_table(table: object, name: str) -> pl.DataFrame:
    """``table`` as a (term, canonical) String frame, or a clear error."""
    meaning = {"term": "a diagnosis string", "canonical": "the name it means"}
    table = string_table(table, name, meaning, "a synonym table")
    normalised = table.with_row_index("row").with_columns(
        term_n=normalise(pl.col("term")), canonical_n=normalise(pl.col("canonical"))
    )
    empty = normalised.filter((pl.col("term_n") == "") | (pl.col("canonical_n") == ""))
    if empty.height:
        shown = format_keys(empty.select("row", "term", "canonical").to_dicts())
        msg = (
            f"{name}: {empty.height} row(s) whose term or canonical is empty once normalised (punctuation "
            f"and the hedge words {sorted(HEDGES)[:3]}… are dropped): {shown}; remove them"
        )
        raise DataError(msg)
    clash = (
        normalised.filter(pl.col("term_n") != pl.col("canonical_n"))
        .group_by("term_n")
        .agg(pl.col("canonical_n").unique().sort())
        .filter(pl.col("canonical_n").list.len() > 1)
        .sort("term_n")
    )
    if clash.height:
        shown = format_keys(clash.rename({"term_n": "term", "canonical_n": "canonicals"}).to_dicts())
        msg = f"{name}: {clash.height} term(s) mapped to different canonical names: {shown}; keep one row per term"
        raise DataError(msg)
    return table


def synonym_table(extra: pl.DataFrame | None = None, *, replace: bool = False) -> pl.DataFrame:
    """Return the synonym table: the shipped one, extended or replaced by ``extra``.

    Parameters
    ----------
    extra
        Rows to add, with String columns ``term`` and ``canonical`` (other columns are ignored).
    replace
        Use ``extra`` alone instead of adding it to the shipped table.

    Returns
    -------
    pl.DataFrame
        Columns ``term, canonical``; pass it as ``synonyms=`` to :func:`match_pairs`.

    Notes
    -----
    The shipped table (``mas_eval/metrics/diagnosis/synonyms.csv``) holds several hundred
    abbreviations and synonyms of common diagnoses (general medical knowledge). Terms and
    canonical names are compared after :func:`normalise`; chains are followed (a → b → c means
    a → c). Where ``extra`` maps a term the shipped table also maps, ``extra`` wins. A table is
    refused when a column is missing or not strings, a value is null or normalises to nothing, a
    term maps to two canonical names, or the mappings form a cycle.

    Examples
    --------
    >>> table = synonym_table(pl.DataFrame({"term": ["Widowmaker"], "canonical": ["LAD occlusion"]}))
    >>> table.filter(pl.col("term").is_in(["mi", "Widowmaker"])).rows()
    [('mi', 'myocardial infarction'), ('Widowmaker', 'LAD occlusion')]
    """
    shipped = _shipped()
    if extra is None:
        if replace:
            msg = "synonym_table: replace=True needs a table in extra"
            raise InvalidParameterError(msg)
        return shipped.clone()
    added = _check_table(extra, "synonym_table(extra)")
    if replace:
        return added
    overridden = added.select(term_n=normalise(pl.col("term"))).to_series()
    kept = shipped.filter(~normalise(pl.col("term")).is_in(overridden.implode()))
    return pl.concat([kept, added])


@cache
def _resolved_shipped() -> pl.DataFrame:
    return _resolve_table(_shipped())


def _resolve(synonyms: pl.DataFrame | None) -> pl.DataFrame:
    """Return the table as normalised (term, canonical) pairs, chains followed; no self-maps."""
    return _resolved_shipped() if synonyms is None else _resolve_table(_check_table(synonyms, "synonyms"))


def _resolve_table(table: pl.DataFrame) -> pl.DataFrame:
    mapping = (
        table.select(term=normalise(pl.col("term")), canonical=normalise(pl.col("canonical")))
        .filter(pl.col("term") != pl.col("canonical"))
        .unique()
    )
    return follow_chains(mapping)


def follow_chains(mapping: pl.DataFrame) -> pl.DataFrame:
    """Follow every chain of a ``term → canonical`` table to its end (a → b, b → c: a → c), sorted by term.

    One join per step over the whole table (at most as many steps as rows); a chain that leads
    back to its own term is a :class:`DataError` naming up to five such terms.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.diagnosis.equivalence import follow_chains
    >>> follow_chains(pl.DataFrame({"term": ["a", "b"], "canonical": ["b", "c"]})).rows()
    [('a', 'c'), ('b', 'c')]
    """
    hop = mapping.rename({"term": "canonical", "canonical": "next"})
    resolved = mapping
    for _ in range(mapping.height + 1):  # one step of every chain at a time, not one row at a time
        stepped = resolved.join(hop, on="canonical", how="left").select(
            "term", canonical=pl.coalesce("next", "canonical")
        )
        cycle = stepped.filter(pl.col("term") == pl.col("canonical"))
        if cycle.height:
            terms = sorted(cycle["term"].to_list())[:5]
            msg = f"synonyms: the mappings of {terms} lead back to themselves (a cycle); break the cycle"
            raise DataError(msg)
        if stepped.sort("term").equals(resolved.sort("term")):
            break
        resolved = stepped
    return resolved.sort("term")


# --- per string and per pair ----------------------------------------------------------------------------


def _tokens(text: pl.Expr) -> pl.Expr:
    """Return the informative tokens of the text.

    Plurals are folded (``-ies`` → ``-y``, then a final ``s``); stopwords, generic words,
    qualifiers and negations are left out.
    """
    word = pl.element()
    excluded = sorted(STOPWORDS | GENERIC | NEGATIONS | set(QUALIFIERS))
    folded = word.str.replace(r"^(.{2,})ies$", "${1}y").str.replace(r"^(.{2,}[^siu])s$", "${1}")
    return text.list.eval(folded).list.eval(word.filter((word != "") & ~word.is_in(excluded))).list.unique()


def _string_features(strings: pl.LazyFrame, table: pl.DataFrame) -> pl.LazyFrame:
    """Return the features of the strings, one row per unique raw string.

    The features are ``n`` (normalised), ``cause`` (normalised, or null), ``keys``, ``tokens``,
    ``negated``, ``plain`` and the qualifier masks ``course``, ``origin``, ``side``.
    """
    lookup = table.lazy()
    prepared = strings.with_columns(prepared=_prepare(pl.col("raw")))
    alias = pl.col("prepared").str.extract_all(r"\([^()]*\)")
    forms = (
        pl.concat(
            [
                prepared.select("raw", text=_main(pl.col("prepared")), main=pl.lit(True)),
                prepared.select("raw", text=alias, main=pl.lit(False))
                .explode("text")
                .drop_nulls("text")
                .with_columns(pl.col("text").str.strip_prefix("(").str.strip_suffix(")")),
            ]
        )
        .with_columns(form=_clean(pl.col("text")))  # the normalised string and the aliases, cleaned at once
        .filter(pl.col("main") | (pl.col("form") != ""))
        .with_columns(head=_head(pl.col("form")), phrase=pl.col("form").str.extract(_HEAD, 2))
        .with_columns(core=_core(pl.col("head")))
        .join(lookup.rename({"term": "head", "canonical": "by_head"}), on="head", how="left")
        .join(lookup.rename({"term": "core", "canonical": "by_core"}), on="core", how="left")
    )
    keys = (
        forms.select("raw", key=pl.concat_list(pl.coalesce("by_head", "head"), pl.coalesce("by_core", "core")))
        .explode("key")
        .with_columns(key_core=_core(pl.col("key")))
        .select("raw", key=pl.concat_list("key", "key_core"))
        .explode("key")
        .filter(pl.col("key") != "")
        .group_by("raw")
        .agg(keys=pl.col("key").unique())
    )
    word = pl.element()
    main = forms.filter("main").select(
        "raw",
        n="form",
        cause=_cause(pl.col("form")),
        secondary=pl.col("phrase") == "secondary to",
        said=pl.col("head").str.split(" "),
        canonical=pl.coalesce("by_head", "by_core", "head").str.split(" "),
    )
    qualifier_words = pl.concat_list("said", "canonical")
    masks = {}
    for word_, (kind, bit) in QUALIFIERS.items():
        masks[kind] = masks.get(kind, pl.lit(0)) | pl.when(qualifier_words.list.contains(word_)).then(bit).otherwise(0)
    masks["origin"] = masks["origin"] | pl.when(pl.col("secondary")).then(QUALIFIERS["secondary"][1]).otherwise(0)
    negated = pl.col("canonical").list.eval(word.filter(word.shift(1).is_in(list(NEGATIONS))))
    main = main.select(
        "raw",
        "n",
        "cause",
        tokens=_tokens(pl.col("canonical")),
        negated=_tokens(negated),
        **{kind: mask.cast(pl.Int8) for kind, mask in masks.items()},
    ).with_columns(plain=pl.col("tokens").list.set_difference("negated"))
    return main.join(keys, on="raw", how="left").with_columns(pl.col("keys").fill_null(pl.lit([], pl.List(pl.String))))


def _deterministic(pairs: pl.LazyFrame, *, threshold: float, min_tokens: int) -> pl.LazyFrame:
    """Tier and score of each unique (raw left, raw right) pair with ``*_l``/``*_r`` features (null: unresolved)."""

    def shared(a: str, b: str) -> pl.Expr:
        return pl.col(a).list.set_intersection(pl.col(b)).list.len()

    kinds = {kind for kind, _ in QUALIFIERS.values()}
    conflict = pl.any_horizontal(
        [
            (pl.col(f"{k}_l") != 0) & (pl.col(f"{k}_r") != 0) & ((pl.col(f"{k}_l") & pl.col(f"{k}_r")) == 0)
            for k in sorted(kinds)
        ]
        + [shared("negated_l", "plain_r") > 0, shared("negated_r", "plain_l") > 0]
    )
    usable = (pl.col("n_l") != "") & (pl.col("n_r") != "")
    inter = shared("tokens_l", "tokens_r")
    size_l, size_r = pl.col("tokens_l").list.len(), pl.col("tokens_r").list.len()
    small, large = pl.min_horizontal(size_l, size_r), pl.max_horizontal(size_l, size_r)
    union = size_l + size_r - inter
    jaccard = inter.cast(pl.Float64) / union
    open_ = usable & ~conflict
    contained = open_ & (inter == small) & (small >= min_tokens) & (size_l != size_r)
    similar = open_ & (union > 0) & (jaccard >= threshold)
    synonym = open_ & (shared("keys_l", "keys_r") > 0)
    exact = usable & (pl.col("n_l") == pl.col("n_r"))
    tier = (
        pl.when(exact)
        .then(pl.lit("exact"))
        .when(synonym)
        .then(pl.lit("synonym"))
        .when(contained)
        .then(pl.lit("containment"))
        .when(similar)
        .then(pl.lit("token_set"))
    )
    score = (
        pl.when(exact | synonym)
        .then(1.0)
        .when(contained)
        .then(small.cast(pl.Float64) / large)
        .when(similar)
        .then(jaccard)
    )
    return pairs.with_columns(tier=tier.cast(TIER), score=score, usable=usable)


def _by_cause(
    resolved: pl.DataFrame, features: pl.DataFrame, table: pl.DataFrame, *, threshold: float, min_tokens: int
) -> pl.DataFrame:
    """Set tier ``cause`` in ``resolved`` where the left string's cause matches the right one and nothing else did.

    The cause ("insulinoma" of "hypoglycemia due to insulinoma") is compared with the right string
    as a diagnosis of its own, by the tiers above (exact to token_set, with their conflicts); the
    pair takes that comparison's score.
    """
    asked = resolved.filter(pl.col("tier").is_null() & pl.col("usable") & pl.col("cause_l").is_not_null())
    if asked.is_empty():
        return resolved.drop("cause_l")
    causes = _string_features(asked.select(raw="cause_l").unique().lazy(), table).drop("cause")
    pairs = (
        asked.lazy()
        .select("left", "right", "cause_l")
        .join(causes.rename(lambda c: f"{c}_l"), left_on="cause_l", right_on="raw_l")
        .join(features.lazy().rename(lambda c: f"{c}_r"), left_on="right", right_on="raw_r")
    )
    found = (
        _deterministic(pairs, threshold=threshold, min_tokens=min_tokens)
        .filter(pl.col("tier").is_not_null())
        .select("left", "right", by_cause="score")
        .collect()
    )
    return (
        resolved.join(found, on=["left", "right"], how="left")
        .with_columns(
            tier=pl.when(pl.col("by_cause").is_not_null()).then(pl.lit("cause", dtype=TIER)).otherwise("tier"),
            score=pl.coalesce("score", "by_cause"),
        )
        .drop("cause_l", "by_cause")
    )


# --- the judge ------------------------------------------------------------------------------------------


_CACHE_SCHEMA = {"left": pl.String, "right": pl.String, "score": pl.Float64}
#: What a judge may return.
_JUDGE_ANSWER = [Boolean(), Interval(float, 0, 1)]


def _read_cache(cache_path: Path | None) -> pl.DataFrame:
    empty = pl.DataFrame(schema=_CACHE_SCHEMA)
    if cache_path is None or not (cache_path.exists() or cache_path.is_symlink()):
        return empty
    fix = "delete it or choose another cache_path"
    input_file(cache_path, "a Parquet file", fix, where="judge cache", error=DataError)
    try:
        cached = read_parquet(cache_path)
    except Exception as exc:  # a corrupt or foreign file: say which, and how to recover
        msg = f"judge cache {cache_path} is not a readable Parquet file ({exc}); delete it or choose another cache_path"
        raise DataError(msg) from exc
    fix = "a cache has left, right, score: delete it or choose another cache_path"
    check_columns(cached.schema, empty.columns, f"judge cache {cache_path}", fix=fix)
    return cached.select(pl.col("left", "right").cast(pl.String), pl.col("score").cast(pl.Float64))


def _judge_score(answer: object, left: str, right: str) -> float:
    """Return a judge's answer as a score in [0, 1]: ``True``/``False`` → 1/0, a number as is."""
    if isinstance(answer, bool) or getattr(getattr(answer, "dtype", None), "kind", None) == "b":
        return 1.0 if answer else 0.0
    try:
        value = float(answer)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = math.nan
    if not (0.0 <= value <= 1.0):  # then ``answer`` is neither a bool nor a number in [0, 1]: refused
        check_parameter(f"judge({left!r}, {right!r})", answer, _JUDGE_ANSWER, where="match_pairs")
    return value


def _write_cache(cache_path: Path, cached: pl.DataFrame, answered: list[tuple[str, str, float]]) -> None:
    if not answered:
        return
    new = pl.DataFrame(answered, schema=cached.schema, orient="row")
    table = pl.concat([cached, new]).unique(["left", "right"], keep="last").sort("left", "right")
    with atomic_file(cache_path, overwrite=True) as staging:
        table.write_parquet(staging)


def _ask(
    unresolved: pl.DataFrame,
    judge: Callable[[str, str], bool | float] | None,
    cache_path: Path | None,
) -> pl.DataFrame:
    """Scores for the unique normalised pairs ``(left, right)``: cached answers first, then the judge."""
    cached = _read_cache(cache_path)
    known = unresolved.join(cached, on=["left", "right"], how="inner")
    if judge is None:
        return known
    todo = unresolved.join(cached, on=["left", "right"], how="anti").sort("left", "right")
    answered: list[tuple[str, str, float]] = []
    try:
        for left, right in todo.iter_rows():  # the one per-pair loop: a user callable, once per unique pair
            answered.append((left, right, _judge_score(judge(left, right), left, right)))
    finally:
        if cache_path is not None:  # keep what was paid for, even when the judge fails halfway
            _write_cache(cache_path, cached, answered)
    new = pl.DataFrame(answered, schema=cached.schema, orient="row")
    return pl.concat([known, new])


# --- the public API -------------------------------------------------------------------------------------


def _columns(frame: pl.DataFrame | pl.LazyFrame, column: str, by: list[str], side: str) -> pl.LazyFrame:
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        msg = f"match_pairs: {side} must be a polars DataFrame or LazyFrame, not {type(frame).__name__}"
        raise InvalidParameterError(msg)
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    check_columns(schema, [column, *by], f"match_pairs: {side}")
    dtype = schema[column]
    if dtype not in (pl.String, pl.Categorical) and not isinstance(dtype, pl.Enum | pl.Null):
        msg = f"match_pairs: {side} column {column!r} must hold diagnosis strings, not {dtype}"
        raise SchemaError(msg)
    out = "left" if side == "left" else "right"
    return lazy.select(*by, pl.col(column).cast(pl.String).alias(out)).drop_nulls(out).unique()


_PARAMS = {
    "threshold": [Interval(float, 0, 1, closed="right")],
    "judge_threshold": [Interval(float, 0, 1, closed="right")],
    "min_tokens": [Interval(int, 1)],
}


@validate_params(_PARAMS)
def match_pairs(
    left: pl.DataFrame | pl.LazyFrame,
    right: pl.DataFrame | pl.LazyFrame,
    *,
    left_on: str,
    right_on: str,
    by: str | Sequence[str] | None = None,
    synonyms: pl.DataFrame | None = None,
    threshold: float = 0.6,
    min_tokens: int = 1,
    judge: Callable[[str, str], bool | float] | None = None,
    judge_threshold: float = 0.5,
    cache_path: str | Path | None = None,
) -> pl.DataFrame:
    r"""Every pair of a left and a right diagnosis in the same group, with its best tier and score.

    Parameters
    ----------
    left, right
        Frames of diagnoses, e.g. a system's final list and the ground truth. Every tier is
        symmetric but ``cause``, which reads the left string's cause: put on the left the
        diagnoses whose cause may stand for them (the system's), on the right what they are checked against.
    left_on, right_on
        Their diagnosis columns (strings). Null diagnoses are ignored.
    by
        Group columns present in both frames (e.g. ``"run_id"``); pairs are formed within a group
        only. ``None`` pairs everything with everything.
    synonyms
        A synonym table (columns ``term, canonical``); ``None`` is the shipped one. Extend it with
        :func:`synonym_table` (``synonyms=synonym_table(mine)``); a table passed directly replaces it.
    threshold
        Least Jaccard similarity of the informative-token sets for ``token_set``, in (0, 1].
    min_tokens
        Least number of informative tokens of the smaller side for ``containment``.
    judge
        Optional ``judge(left, right) -> bool | float`` (e.g. an LLM client), called with the two
        *normalised* strings of each unique pair no deterministic tier resolved, once per pair.
        ``True``/``False`` score 1/0; a number in [0, 1] is its score.
    judge_threshold
        Least judge score that counts as a match, in (0, 1].
    cache_path
        Parquet file of judge answers (``left, right, score``, normalised strings). Cached answers
        are used without asking the judge (also when ``judge`` is ``None``); new ones are added
        and the file rewritten atomically. One cache per judge: the key is the pair, not the judge.

    Returns
    -------
    pl.DataFrame
        One row per distinct (group, left string, right string): ``*by, left, right, tier, score``;
        ``tier`` is an Enum of :data:`TIERS`, ``score`` a float (0 when unmatched). Sorted by
        ``by``, ``left``, ``right``.

    Notes
    -----
    Per unique string (see :func:`normalise`, :func:`aliases`): its *head* is the normalised
    text before a cause phrase (:data:`CAUSE_PHRASES`: "X secondary to Y" names X); its *core* is
    the head without the qualifier words of :data:`QUALIFIERS`; ``canon(x)`` is the synonym
    table's canonical name for ``x`` (or ``x``). Its *keys* are, for the normalised string and each
    alias, ``canon(head)``, ``canon(core)`` and the cores of those two. Its *name* is
    ``canon(head)`` if the table has the head, else ``canon(core)`` if it has the core, else the
    head; its *informative tokens* are the name's words with plurals folded (``bodies`` → ``body``,
    then ``stones`` → ``stone``: "dementia with Lewy bodies" has the tokens of "Lewy body dementia")
    and without :data:`STOPWORDS`, :data:`GENERIC`, :data:`NEGATIONS` and qualifiers. Its *cause* is
    the normalised text after the first cause phrase ("insulinoma" of "hypoglycemia due to
    insulinoma"), none when a negation word stands just before the phrase ("not due to").

    A pair has a *conflict* when, for a qualifier class (course: acute/subacute/chronic; origin:
    primary/secondary; side: left/right), both strings carry values (in the head, the name, or
    "secondary to") and share none — "acute" vs "chronic" renal failure — or when a token negated
    on one side (the word after "non", "not", "no", "without") is a plain token of the other
    (NSTEMI vs STEMI, non-Hodgkin vs Hodgkin lymphoma). Then, for :math:`A, B` the token sets:

    * ``exact``: equal normalised strings (score 1);
    * ``synonym``: no conflict and a shared key (score 1);
    * ``containment``: no conflict, :math:`A \subsetneq B` or :math:`B \subsetneq A`, and
      :math:`\min(|A|,|B|) \ge` ``min_tokens``; score :math:`\min/\max` of the sizes (which is
      their Jaccard similarity), so a short name found in a long sentence matches, weakly;
    * ``token_set``: no conflict and :math:`J = |A \cap B| / |A \cup B| \ge` ``threshold``
      (score :math:`J`; equal sets, e.g. word order changed, score 1);
    * ``cause``: none of the above, and the left string's cause, compared with the right string as
      a diagnosis of its own, matches it by one of the four tiers above (conflicts included); the
      score is that tier's. One-way (see the module's notes): "sepsis secondary to pneumonia"
      matches "pneumonia", "pneumonia" does not match "sepsis secondary to pneumonia";
    * ``judge``: the judge's score, when at least ``judge_threshold``;
    * otherwise ``unmatched`` (score 0). A string that normalises to nothing matches nothing.

    Examples
    --------
    >>> left = pl.DataFrame({"dx": ["AKI", "Diabetes mellitus type 2", "Pneumonia"]})
    >>> right = pl.DataFrame({"dx": ["Acute Kidney Injury (AKI)", "Type 2 diabetes mellitus", "Pneumothorax"]})
    >>> pairs = match_pairs(left, right, left_on="dx", right_on="dx")
    >>> pairs.filter(pl.col("tier") != "unmatched").select("tier", "score").rows()
    [('synonym', 1.0), ('token_set', 1.0)]
    >>> system, truth = pl.DataFrame({"dx": ["Hypoglycemia due to insulinoma"]}), pl.DataFrame({"dx": ["Insulinoma"]})
    >>> match_pairs(system, truth, left_on="dx", right_on="dx").select("tier", "score").rows()
    [('cause', 1.0)]
    >>> match_pairs(truth, system, left_on="dx", right_on="dx").select("tier", "score").rows()
    [('unmatched', 0.0)]
    """
    groups = [by] if isinstance(by, str) else list(by or [])
    reserved = sorted(set(groups) & {"left", "right", "tier", "score"})
    if reserved:
        msg = f"match_pairs: by={groups} uses the output column name(s) {reserved}; rename those columns first"
        raise InvalidParameterError(msg)
    if len(set(groups)) != len(groups):
        msg = f"match_pairs: by={groups} names a column twice"
        raise InvalidParameterError(msg)
    if judge is not None and not callable(judge):
        msg = f"match_pairs: judge must be a callable judge(left, right) -> bool | float, not {type(judge).__name__}"
        raise InvalidParameterError(msg)
    table = _resolve(synonyms)
    lefts = _columns(left, left_on, groups, "left")
    rights = _columns(right, right_on, groups, "right")
    left_schema, right_schema = lefts.collect_schema(), rights.collect_schema()
    differ = [c for c in groups if left_schema[c] != right_schema[c]]
    if differ:
        shown = ", ".join(f"{c} ({left_schema[c]} vs {right_schema[c]})" for c in differ)
        msg = f"match_pairs: the by column(s) {shown} have different types in left and right; cast one side"
        raise SchemaError(msg)
    # Each side sorted and unique: pairs in the order of the output, without sorting all of them.
    lefts, rights = lefts.sort([*groups, "left"]), rights.sort([*groups, "right"])
    if groups:
        grouped = lefts.join(rights, on=groups, how="inner", maintain_order="left_right").collect()
    else:
        grouped = lefts.join(rights, how="cross").sort("left", "right").collect()

    strings = pl.concat([grouped.select(raw="left"), grouped.select(raw="right")]).unique().lazy()
    features = _string_features(strings, table).collect()
    unique_pairs = (
        grouped.lazy()
        .select("left", "right")
        .unique()
        .join(features.lazy().rename(lambda c: f"{c}_l"), left_on="left", right_on="raw_l")
        .join(features.lazy().rename(lambda c: f"{c}_r"), left_on="right", right_on="raw_r")
    )
    resolved = _deterministic(unique_pairs, threshold=threshold, min_tokens=min_tokens).select(
        "left", "right", "n_l", "n_r", "usable", "cause_l", "tier", "score"
    )
    resolved = _by_cause(resolved.collect(), features, table, threshold=threshold, min_tokens=min_tokens)
    open_pairs = resolved.filter(pl.col("tier").is_null() & pl.col("usable"))
    if open_pairs.height and (judge is not None or cache_path is not None):
        asked = open_pairs.select(left="n_l", right="n_r").unique()
        answers = _ask(asked, judge, None if cache_path is None else Path(cache_path))
        answers = answers.filter(pl.col("score") >= judge_threshold).rename({"left": "n_l", "right": "n_r"})
        resolved = resolved.join(answers.rename({"score": "judged"}), on=["n_l", "n_r"], how="left").with_columns(
            tier=pl.when(pl.col("tier").is_null() & pl.col("judged").is_not_null())
            .then(pl.lit("judge", dtype=TIER))
            .otherwise("tier"),
            score=pl.coalesce("score", "judged"),
        )
    resolved = resolved.select(
        "left", "right", pl.col("tier").fill_null(pl.lit("unmatched", dtype=TIER)), pl.col("score").fill_null(0.0)
    )
    return grouped.join(resolved, on=["left", "right"], how="left", maintain_order="left")


def assign(pairs: pl.DataFrame) -> pl.DataFrame:
    """One-to-one matches from :func:`match_pairs` output: greedy, best score first.

    Parameters
    ----------
    pairs
        Columns ``left, right, tier, score``; every other column is a group key.

    Returns
    -------
    pl.DataFrame
        The matched pairs (``tier != "unmatched"``), each left and each right string at most once
        per group, sorted by group, ``left``, ``right``.

    Notes
    -----
    Pairs are taken in the order: higher ``score``, then better tier (exact, synonym,
    containment, token_set, cause, judge), then ``left`` and ``right`` in code-point order; a pair is
    kept when neither its left nor its right string is taken yet. This is computed in rounds: a
    pair first in that order among all open pairs of its left string and of its right string is
    kept (greedy would keep it too), the strings it uses are closed, repeat; the result equals the
    sequential greedy one.

    Examples
    --------
    >>> pairs = pl.DataFrame({"left": ["mi", "mi"], "right": ["myocardial infarction", "stemi"],
    ...                       "tier": ["synonym", "containment"], "score": [1.0, 0.5]})
    >>> assign(pairs).rows()
    [('mi', 'myocardial infarction', 'synonym', 1.0)]
    """
    required = ("left", "right", "tier", "score")
    check_columns(pairs.schema, required, "assign: pairs", fix="pass the output of match_pairs")
    groups = [c for c in pairs.columns if c not in required]
    rank = "__rank"
    edges = (
        pairs.with_columns(pl.col("tier").cast(pl.String).cast(TIER))
        .filter(pl.col("tier") != "unmatched")
        .sort(["score", "tier", "left", "right"], descending=[True, False, False, False], nulls_last=True)
        .with_row_index(rank)
    )
    kept = []
    while edges.height:
        first = (pl.col(rank) == pl.col(rank).min().over([*groups, "left"])) & (
            pl.col(rank) == pl.col(rank).min().over([*groups, "right"])
        )
        best = edges.filter(first)
        kept.append(best)
        for side in ("left", "right"):
            edges = edges.join(best.select(*groups, side), on=[*groups, side], how="anti", nulls_equal=True)
    if not kept:
        return pairs.clear().with_columns(pl.col("tier").cast(pl.String).cast(TIER)).select(pairs.columns)
    return pl.concat(kept).drop(rank).select(pairs.columns).sort([*groups, "left", "right"], nulls_last=True)
