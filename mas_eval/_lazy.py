"""Attributes of a package imported on first use, so that importing it stays cheap.

The statistics layer pulls in SciPy and statsmodels, slow to import (docs/performance.md); the
command line's ``--help`` and a notebook that only scores should not pay for that.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` that import ``name`` from module ``where[name]`` when asked."""

    def get_attribute(name: str) -> Any:
        module = where.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(module), name)
        globals_of_package = importlib.import_module(package).__dict__
        globals_of_package[name] = value  # later lookups do not come back here
        return value

    def list_attributes() -> list[str]:
        return sorted({*importlib.import_module(package).__dict__, *where})

    return get_attribute, list_attributes
