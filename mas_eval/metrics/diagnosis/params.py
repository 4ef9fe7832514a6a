"""Parameters of the diagnosis family (the LDDx v6 metrics guide), each with what it accepts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from mas_eval.constraints import NONE, Boolean, Interval, Options, Predicate
from mas_eval.presets import Params, param

__all__ = ["DiagnosisParams", "KeywordCounting", "LabelRules"]

#: Whose rules partition the diagnoses and make the scores: the LDDx v6 metrics guide's, or Local-DDx's
#: code (its v6 evaluator, or v8's deterministic one).
LabelRules = Literal["spec", "lddx-v6", "lddx-v8"]
#: How a keyword "hit" is counted: once per keyword present, or every occurrence.
KeywordCounting = Literal["presence", "occurrences"]

_FILE = Predicate(lambda value: isinstance(value, str | Path) and str(value) != "", "a file path")


@dataclass(frozen=True)
class DiagnosisParams(Params):
    """Parameters of the diagnosis family (the LDDx v6 metrics guide).

    Attributes
    ----------
    label_rules
        ``"spec"`` (the guide: CAA on the system side, every label in CRQ's
        denominator) or ``"lddx-v6"`` (Local-DDx's evaluator: CAA on the ground-truth side,
        promoted to TP from ``caa_mentions`` mentions; TM-SM before AE; CRQ without TM-SM) or
        ``"lddx-v8"`` (Local-DDx v8's deterministic evaluator: no CAA, AE from a mention near a
        word of consideration in any response, recall over ``TP + FN``); see
        :func:`~mas_eval.metrics.diagnosis.labels.classify` and
        :mod:`~mas_eval.metrics.diagnosis.scores`.
    equivalence_threshold
        Least token-set Jaccard similarity that makes two diagnoses equivalent, in (0, 1]
        (:func:`~mas_eval.metrics.diagnosis.equivalence.match_pairs`).
    caa_mentions
        ``"lddx-v6"``: least mentions of a can't-miss diagnosis that make its ground truth TP.
    tempo_count_mentions
        TempoScore of the independent round counts every stated diagnosis, repeats included
        (Local-DDx's code), instead of the unique ones (the document).
    credibility_debate
        Score each agent's debate responses in its credibility (the guide). Local-DDx v8's Dr.
        Reed looks an agent's response up by its name, and v8 keys its debate responses by
        sub-round (``<name>_round<n>``), so its credibility leaves the debate out: ``False``.
    keyword_counting
        A credibility keyword hit is a keyword present in the text (``"presence"``, what
        reproduces Local-DDx's recorded scores) or every occurrence (``"occurrences"``).
    vote_keep_share, vote_at_most
        The credibility-weighted vote keeps the diagnoses with at least this share of the top
        score, at most this many (``consensus_ddx``).
    synonyms_file
        A CSV of ``term,canonical`` rows added to the shipped synonym table; ``None``: the
        shipped table alone.
    interventions_file
        A CSV of ``keyword,diagnosis`` rows added to the shipped intervention table (TM-SM).
    judge_cache
        A Parquet file of an equivalence judge's answers (``left, right, score``, as
        :func:`~mas_eval.metrics.diagnosis.equivalence.match_pairs` writes it): pairs no
        deterministic tier resolves are looked up in it. Scoring never calls a judge; run
        ``classify(..., judge=..., cache_path=...)`` once to fill the cache.

    Examples
    --------
    >>> DiagnosisParams.of_preset("lddx-v6").label_rules
    'lddx-v6'
    >>> from mas_eval.errors import InvalidParameterError
    >>> try:
    ...     DiagnosisParams(equivalence_threshold=0)
    ... except InvalidParameterError as error:
    ...     print(error)
    score: equivalence_threshold=0 is invalid; equivalence_threshold must be a number in (0, 1]
    """

    section: ClassVar[str] = "diagnosis"
    where: ClassVar[str] = "score"

    label_rules: LabelRules = param("spec", Options.of(LabelRules))
    equivalence_threshold: float = param(0.6, Interval(float, 0, 1, closed="right"))
    caa_mentions: int = param(3, Interval(int, 1, None))
    tempo_count_mentions: bool = param(False, Boolean())
    credibility_debate: bool = param(True, Boolean())
    keyword_counting: KeywordCounting = param("presence", Options.of(KeywordCounting))
    vote_keep_share: float = param(0.3, Interval(float, 0, 1))
    vote_at_most: int = param(10, Interval(int, 1, None))
    synonyms_file: str | None = param(None, _FILE, NONE)
    interventions_file: str | None = param(None, _FILE, NONE)
    judge_cache: str | None = param(None, _FILE, NONE)
