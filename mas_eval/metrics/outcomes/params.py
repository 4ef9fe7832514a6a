"""Parameters of the outcomes family: none yet (its columns are the logged scores and usage as recorded)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mas_eval.presets import Params

__all__ = ["OutcomesParams"]


@dataclass(frozen=True)
class OutcomesParams(Params):
    """Parameters of the outcomes family: it has none.

    The class keeps the family's shape (and a preset section, ``"outcomes"``, for parameters to come).
    """

    section: ClassVar[str] = "outcomes"
    where: ClassVar[str] = "score"
