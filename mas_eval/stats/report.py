"""Deprecated: the old name of :mod:`mas_eval.stats.comparison_table`, kept for one release.

The module was named beside the package :mod:`mas_eval.report`; its names now live in
:mod:`mas_eval.stats.comparison_table` (or :mod:`mas_eval.stats`). Each name taken from here
still works and warns (``DeprecationWarning``) where it is taken.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

#: Nothing new is public here: every name is handed on, with a warning, from the new module.
__all__: list[str] = []

#: Every name the old module had that a caller could take (the CLI, the report's cells and the tests took some).
_MOVED = frozenset(
    [
        "FORMATS",
        "SUMMARY_COLUMNS",
        "ComparisonCells",
        "ComparisonDisplay",
        "check_comparisons_path",
        "comparison_cells",
        "display",
        "read_comparisons",
        "summary_view",
        "write_comparisons",
        "COMPARISON_CELLS",
        "JSON_SHAPE",
        "group_columns",
    ]
)


def __getattr__(name: str) -> Any:
    """Return ``name`` from :mod:`mas_eval.stats.comparison_table`, with a ``DeprecationWarning``."""
    if name not in _MOVED:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    warnings.warn(
        f"mas_eval.stats.report is renamed mas_eval.stats.comparison_table; import {name} from there "
        "(the old name goes in the next release)",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("mas_eval.stats.comparison_table"), name)
