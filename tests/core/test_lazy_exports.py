"""Lazily exported names stay what they name, whatever was imported first.

Importing a submodule sets an attribute of its package: a submodule named like the function
its package exports lazily would replace that function by the module (``plots.beliefs`` was one).
"""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

PACKAGES = [
    "mas_eval",
    "mas_eval.plots",
    "mas_eval.report",
    "mas_eval.stats",
    "mas_eval.ingest",
    "mas_eval.metrics.answers",
]
#: Subpackages exported as such (``mas_eval.plots``): modules by design.
SUBPACKAGES = {"plots", "report"}


@pytest.mark.parametrize("name", PACKAGES)
def test_no_submodule_hides_an_exported_name(name: str) -> None:
    package = importlib.import_module(name)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{name}.{module.name}")
    hidden = [
        attr
        for attr in package.__all__
        if isinstance(getattr(package, attr), types.ModuleType) and not (name == "mas_eval" and attr in SUBPACKAGES)
    ]
    assert not hidden, f"{name}: {hidden} name submodules, not the exported objects"


def test_the_old_name_of_comparison_table_hands_on_its_names_and_warns() -> None:
    # mas_eval.stats.report was renamed mas_eval.stats.comparison_table; the old path stays one release.
    from mas_eval.stats import comparison_table

    old = importlib.import_module("mas_eval.stats.report")  # importing alone does not warn
    for name in ("read_comparisons", "write_comparisons", "group_columns", "ComparisonDisplay"):
        with pytest.warns(DeprecationWarning, match=f"import {name} from there"):
            assert getattr(old, name) is getattr(comparison_table, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = old.nothing
