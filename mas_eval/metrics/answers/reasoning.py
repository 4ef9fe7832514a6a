r"""Reasoning quality of a rationale against the reference (the MedAISure metrics overview, "Reasoning Quality").

.. math::

    RQ = \operatorname{clamp}_{[0,1]}\left(0.4\,F_1 + 0.15\,S + 0.2\,E + 0.25\,F - \Phi\right)

* :math:`F_1`: token-multiset F1 of the predicted and the reference reasoning texts:
  :math:`2|A \cap B| / (|A| + |B|)` with multiset intersection (a word twice on both sides
  counts twice); 1 when both texts are empty, 0 when one is;
* :math:`S = \min(1, h_s/3)`, :math:`E = \min(1, h_e/3)`: :math:`h` the number of distinct
  structure or evidence markers present in the predicted reasoning;
* :math:`\Phi = \min(0.4, 0.15\,h_f)`: :math:`h_f` the distinct fallacy markers present;
* :math:`F`: the share of the reference diagnosis's fact set found in the predicted reasoning,
  the fact set being the union of the sets of the fact-table diagnoses present in the reference
  diagnosis (else in the reference answer); when it names none, :math:`F = E` (the fallback to evidence).
  With ``factual_formula="half_capped"`` (MedAISure's code) :math:`F = \min(1, f / \max(1, \lfloor n/2 \rfloor))`
  for :math:`f` facts found of :math:`n`: half the set scores 1.

Markers and facts are present when one of their forms occurs in the normalised text (on word
boundaries, or as a substring under ``matching="substring"``). All presence tests of all
answers are one overlapping Aho–Corasick pass; the token multisets are sorted lists of word hashes
in which the k-th repeat of a word is tagged with k, so that their intersection is a set intersection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
import polars as pl

from mas_eval.metrics.answers.normalise import EMPTY, Matching, spaced
from mas_eval.metrics.answers.vocabulary import MARKER_KINDS, Vocabulary

__all__ = [
    "DEFAULT_REASONING_WEIGHTS",
    "FALLACY_CAP",
    "FALLACY_STEP",
    "MARKER_SATURATION",
    "FactualFormula",
    "FactualSource",
    "f1_of_token_sets",
    "reasoning_columns",
    "token_counts",
    "token_f1",
    "with_marker_counts",
]

#: MedAISure's component weights (its ``_W_WEIGHTS``).
DEFAULT_REASONING_WEIGHTS: dict[str, float] = {"f1": 0.4, "structure": 0.15, "evidence": 0.2, "factual": 0.25}
#: Structure and evidence reach 1 at this many distinct markers.
MARKER_SATURATION = 3
#: Penalty per distinct fallacy marker, and its cap.
FALLACY_STEP, FALLACY_CAP = 0.15, 0.4

_BOUNDARY = "  "

#: Factual consistency from ``f`` facts found of ``n`` expected: ``"share"`` (the document,
#: ``f / n``) or ``"half_capped"`` (MedAISure's code, ``min(1, f / max(1, n // 2))``).
FactualFormula = Literal["share", "half_capped"]
#: Where the fact set's diagnoses are looked for first: the reference diagnosis (the document),
#: or the reference answer (MedAISure's code); the other text when the first is missing.
FactualSource = Literal["diagnosis", "answer"]


def _sorted_hashes(spaced_text: pl.Expr, gap: str = _BOUNDARY) -> pl.Expr:
    """Return the hashes of the words of spaced texts, sorted within each text.

    With ``gap`` one space (MedAISure's normalisation), words are what splitting on single spaces leaves.
    """
    word = pl.element()
    split = (
        spaced_text.fill_null(EMPTY).str.split(" ")
        if gap == " "
        else spaced_text.fill_null(EMPTY).str.strip_chars(" ").str.split(_BOUNDARY)
    )
    return split.list.eval(word.filter(word != "").hash()).list.sort()


def _tagged(sorted_hashes: pl.Series) -> pl.Series:
    """Turn each list of sorted hashes into a set of tagged hashes.

    The k-th repeat of a word (k = 0, 1, …) is ``hash(word) + k``, so that set intersection counts
    repeats as a multiset intersection does.

    k is a value's position less the position of the first equal value of its list, computed on
    all lists' values at once (a per-list search was most of the reasoning's cost); the lists are
    then rebuilt from the same offsets.
    """
    import pyarrow as pa  # the lists' offsets and values back into a list column, without a copy per list

    lengths = sorted_hashes.list.len().to_numpy().astype(np.int64)
    values = sorted_hashes.explode(empty_as_null=False, keep_nulls=False).to_numpy()
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    position = np.arange(len(values))
    first = np.ones(len(values), dtype=bool)
    first[1:] = values[1:] != values[:-1]
    first[offsets[:-1][lengths > 0]] = True
    start = np.maximum.accumulate(np.where(first, position, 0)) if len(values) else position
    tagged = values + (position - start).astype(np.uint64)  # wraps as Polars' UInt64 addition does
    lists = pa.LargeListArray.from_arrays(pl.Series(offsets).to_arrow(), pl.Series(tagged, dtype=pl.UInt64).to_arrow())
    return pl.Series(sorted_hashes.name, lists)


def token_counts(prediction: pl.Series, reference: pl.Series, gap: str = _BOUNDARY) -> pl.DataFrame:
    """Count the words of two Series of spaced texts (null is empty) and of their multiset intersection.

    The columns are ``_n_prediction``, ``_n_reference`` and ``_n_common``: what
    :func:`f1_of_token_sets` reads.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers.normalise import spaced
    >>> from mas_eval.metrics.answers.reasoning import token_counts
    >>> prediction = pl.select(spaced(pl.Series(["the cough is viral", None]))).to_series()
    >>> reference = pl.select(spaced(pl.Series(["a viral cough", None]))).to_series()
    >>> token_counts(prediction, reference).rows()
    [(4, 3, 2), (0, 0, 0)]
    """
    hashes = pl.DataFrame({"a": prediction, "b": reference}, schema={"a": pl.String, "b": pl.String}).select(
        _sorted_hashes(pl.col("a"), gap), _sorted_hashes(pl.col("b"), gap)
    )
    a, b = pl.col("a"), pl.col("b")
    return hashes.select(_tagged(hashes["a"]), _tagged(hashes["b"])).select(
        a.list.len().alias("_n_prediction"),
        b.list.len().alias("_n_reference"),
        a.list.set_intersection(b).list.len().alias("_n_common"),
    )


def f1_of_token_sets() -> pl.Expr:
    """Return the token-multiset F1 from the columns of :func:`token_counts`: ``2PR / (P + R)``.

    It is computed in that order (as MedAISure does, so that its numbers are reproduced to the
    last bit); 1 when both are empty, 0 when one is.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.metrics.answers.reasoning import f1_of_token_sets
    >>> counts = pl.DataFrame({"_n_prediction": [4, 0, 2], "_n_reference": [3, 0, 0], "_n_common": [2, 0, 0]})
    >>> counts.select(f1=f1_of_token_sets())["f1"].round(4).to_list()
    [0.5714, 1.0, 0.0]
    """
    common, n_a, n_b = pl.col("_n_common"), pl.col("_n_prediction"), pl.col("_n_reference")
    precision, recall = common / n_a, common / n_b
    f1 = pl.when(common > 0).then(2 * precision * recall / (precision + recall)).otherwise(0.0)
    return pl.when((n_a == 0) & (n_b == 0)).then(1.0).otherwise(f1)


def token_f1(prediction: str | pl.Series, reference: str | pl.Series) -> pl.Series:
    r"""Token-multiset F1 of two texts (or two Series of texts; null is empty), normalised without synonyms.

    Notes
    -----
    .. math:: F_1 = \frac{2 P R}{P + R} = \frac{2 |A \cap B|}{|A| + |B|}, \quad
              P = \frac{|A \cap B|}{|A|},\; R = \frac{|A \cap B|}{|B|}

    with :math:`A, B` the word multisets; 1.0 when both are empty, 0.0 when one is. Words are
    compared by a 64-bit hash (two different words of one pair collide with probability about
    :math:`n^2 / 2^{64}`). :func:`~mas_eval.metrics.answers.suite.answer_scores` computes it on the
    texts through the synonym map, from :func:`token_counts` and :func:`f1_of_token_sets`.

    Examples
    --------
    >>> token_f1("the the the cause", "The cause.").item()  # 2·(1 + 1) / (4 + 2)
    0.6666666666666666
    """
    frame = pl.DataFrame({"a": prediction, "b": reference}, schema={"a": pl.String, "b": pl.String})
    texts = frame.select(spaced(pl.col("a")), spaced(pl.col("b")))
    counts = token_counts(texts["a"], texts["b"])
    return counts.select(f1_of_token_sets().alias("token_f1")).to_series()


def with_marker_counts(
    texts: pl.LazyFrame, reasoning: str, diagnosis: str, vocabulary: Vocabulary, matching: Matching
) -> pl.LazyFrame:
    """Add the distinct markers of each kind present (``hits_<kind>``) and the facts to ``texts``.

    The facts are those expected (``facts_expected``) and found (``facts_found``).

    ``reasoning`` (the predicted reasoning) and ``diagnosis`` (the reference diagnosis) are spaced
    texts of ``texts`` (null is empty).

    Notes
    -----
    Every marker and fact has a role code (``4 · number + kind``). Per item: the forms present in
    the reasoning (one overlapping Aho–Corasick pass) give the set of codes present; the
    fact-table diagnoses present in the reference diagnosis give the set of facts expected; the
    facts found are the intersection of the two. List operations only: nothing is exploded or joined.
    """
    presence, diagnoses = vocabulary.presence_patterns(matching), vocabulary.diagnosis_patterns(matching)
    present, expected = pl.col("_roles_present"), pl.col("_roles_expected")
    kind = pl.element() % 4
    return (
        texts.with_columns(
            presence.find(pl.col(reasoning).fill_null(EMPTY), overlapping=True).alias("_roles_present"),
            diagnoses.find(pl.col(diagnosis).fill_null(EMPTY), overlapping=True).alias("_roles_expected"),
        )
        .with_columns(presence.payloads(present), diagnoses.payloads(expected))
        .with_columns(
            *(
                present.list.eval(kind == index).list.sum().cast(pl.UInt32).alias(f"hits_{name}")
                for index, name in enumerate(MARKER_KINDS)
            ),
            facts_expected=expected.list.len().cast(pl.UInt32),
            facts_found=expected.list.set_intersection(present).list.len().cast(pl.UInt32),
        )
        .drop("_roles_present", "_roles_expected")
    )


def reasoning_columns(weights: Mapping[str, float], factual_formula: FactualFormula = "share") -> list[pl.Expr]:
    """Return ``reasoning_quality`` and its components; factual consistency by ``factual_formula``.

    They are computed from ``token_f1``, ``hits_<kind>``, ``facts_expected`` and ``facts_found``
    (:func:`with_marker_counts`).
    """
    hits = {kind: pl.col(f"hits_{kind}") for kind in MARKER_KINDS}
    # Times the reciprocal, not divided by the constant: Polars divides a column of one row but
    # multiplies a longer one by the reciprocal, and a run's bits must not depend on its shard.
    per_marker = 1.0 / MARKER_SATURATION
    structure = pl.min_horizontal(1.0, hits["structure"] * per_marker)
    evidence = pl.min_horizontal(1.0, hits["evidence"] * per_marker)
    fallacy = pl.min_horizontal(FALLACY_CAP, FALLACY_STEP * hits["fallacy"])
    expected = pl.col("facts_expected")
    if factual_formula == "half_capped":
        found = pl.min_horizontal(1.0, pl.col("facts_found") / pl.max_horizontal(1, expected // 2))
    else:
        found = pl.col("facts_found") / expected
    factual = pl.when(expected > 0).then(found).otherwise(evidence)
    weighted = (
        weights["f1"] * pl.col("token_f1")
        + weights["structure"] * structure
        + weights["evidence"] * evidence
        + weights["factual"] * factual
        - fallacy
    )
    return [
        weighted.clip(0.0, 1.0).alias("reasoning_quality"),
        structure.alias("structure"),
        evidence.alias("evidence"),
        factual.alias("factual_consistency"),
        fallacy.alias("fallacy_penalty"),
    ]
