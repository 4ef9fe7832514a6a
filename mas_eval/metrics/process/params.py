"""Parameters of the process family: whether to compute ``redundancy``.

What turns and words are is fixed in mas_eval.metrics.process.trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mas_eval.constraints import Boolean
from mas_eval.presets import Params, param

__all__ = ["ProcessParams"]


@dataclass(frozen=True)
class ProcessParams(Params):
    """Parameters of the process family.

    Attributes
    ----------
    redundancy
        Compute ``redundancy``, the word-set Jaccard between different agents' turns of a round
        (:mod:`~mas_eval.metrics.process.redundancy`); off by default, when the column is null.
        It reads every word of every turn in a round where two agents spoke: little on short
        turns, but on long transcripts (Local-DDx's responses of 1,500 characters and more)
        several times what the rest of scoring costs (docs/performance.md), so it is asked for
        (``score(ds, redundancy=True)``, ``--set redundancy=true``), as the decision family's
        ``ranking_stability`` is (``stability_draws``).

    Notes
    -----
    The overhead against a control system is not a column of the family but a statistic over
    the scored runs, :func:`mas_eval.stats.overhead`, and the control is its parameter
    (``control="single"``): a run's overhead depends on other runs, the control's on the same
    case, which a family computing each shard on its own cannot see (:mod:`mas_eval.metrics.process`).

    Examples
    --------
    >>> ProcessParams().redundancy, ProcessParams(redundancy=True).redundancy
    (False, True)
    >>> from mas_eval.errors import InvalidParameterError
    >>> try:
    ...     ProcessParams(redundancy="yes")
    ... except InvalidParameterError as error:
    ...     print(error)
    score: redundancy='yes' is invalid; redundancy must be True or False
    """

    section: ClassVar[str] = "process"
    where: ClassVar[str] = "score"

    redundancy: bool = param(False, Boolean())
