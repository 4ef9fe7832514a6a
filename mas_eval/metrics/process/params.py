"""Parameters of the process family: none (what turns and words are is fixed in mas_eval.metrics.process.trace)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mas_eval.presets import Params

__all__ = ["ProcessParams"]


@dataclass(frozen=True)
class ProcessParams(Params):
    """Parameters of the process family: it has none; the class keeps the family's shape (and a
    preset section, ``"process"``).

    The overhead against a control system is not a column of the family but a statistic over
    the scored runs, :func:`mas_eval.stats.overhead`, and the control is its parameter
    (``control="single"``): a run's overhead depends on other runs, the control's on the same
    case, which a family computing each shard on its own cannot see (:mod:`mas_eval.metrics.process`).
    """

    section: ClassVar[str] = "process"
    where: ClassVar[str] = "score"
