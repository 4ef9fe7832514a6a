"""Parameters of the process family: whether to compute ``redundancy`` (what turns and words are is fixed in
mas_eval.metrics.process.trace)."""

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
        It reads every word of every turn of a round where two agents spoke: on short turns it
        costs little, but on long transcripts it costs several times the rest of scoring (on
        Local-DDx runs of thirty ~1,500-character responses, the diagnosis family and all the
        others together take a fraction of its time; docs/performance.md gives the figures),
        so it is asked for (``score(ds, redundancy=True)``, ``--set redundancy=true``), as the
        decision family's ``ranking_stability`` is.

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
