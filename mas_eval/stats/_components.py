"""The columns of a variance-components table and the float array type, shared by variance.py and planning.py.

:func:`~mas_eval.stats.variance.variance_components` writes such a table and
:func:`~mas_eval.stats.planning.plan` reads it; only ``stats/`` uses this module.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

#: The columns :func:`variance_components` returns after its ``by`` columns.
COMPONENT_COLUMNS = (
    "quantity", "estimate", "ci_low", "ci_high", "share", "dof", "cases", "runs", "epochs", "judges",
    "difference", "method", "note",
)  # fmt: skip
