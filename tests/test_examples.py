"""Every public name shows its use: an ``Examples`` section whose ``>>>`` lines print what they return.

The public names are those of the API modules' ``__all__`` (functions, classes and the public methods of
the classes, as :mod:`tests.hostile.test_api` lists them); the doctests (``--doctest-modules``) run the
examples, so an example that no longer holds fails there. Models: polars' ``Expr.str.len_chars`` and
pingouin's ``ttest``, a call and its printed result under a numpydoc ``Examples`` heading.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any

import pytest

import mas_eval
import mas_eval.ingest
import mas_eval.plots
import mas_eval.report
import mas_eval.stats

#: The modules whose ``__all__`` is the public API (the simulators are in ``mas_eval``'s).
MODULES = (mas_eval, mas_eval.stats, mas_eval.plots, mas_eval.report, mas_eval.ingest)

#: A numpydoc ``Examples`` heading, then a ``>>>`` line followed by a line of printed output.
_HEADING = re.compile(r"^\s*Examples\n\s*-{8,}\n", re.MULTILINE)
_PRINTED = re.compile(r"^\s*>>> .*\n(?:\s*\.\.\. .*\n)*\s*(?!>>>|\.\.\. )\S.*$", re.MULTILINE)


def _public() -> Iterator[tuple[str, Any]]:
    seen: set[int] = set()
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if id(obj) in seen or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            seen.add(id(obj))
            yield f"{module.__name__}.{name}", obj
            if not inspect.isclass(obj) or issubclass(obj, BaseException):
                continue
            for attr, raw in vars(obj).items():
                function = raw.__func__ if isinstance(raw, classmethod | staticmethod) else raw
                if not attr.startswith("_") and inspect.isfunction(function):
                    yield f"{module.__name__}.{name}.{attr}", function


PUBLIC = dict(_public())


def has_example(obj: Any) -> bool:
    """Whether ``obj``'s docstring has an ``Examples`` section with a call and its printed output."""
    doc = inspect.getdoc(obj) or ""
    heading = _HEADING.search(doc)
    return heading is not None and _PRINTED.search(doc, heading.end()) is not None


def test_every_public_name_shows_its_use() -> None:
    missing = sorted(name for name, obj in PUBLIC.items() if not has_example(obj))
    assert not missing, f"{len(missing)} public names without an Examples section that prints:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("Sum.\n\nExamples\n--------\n>>> 1 + 1\n2\n", True),
        ("Sum.\n\nExamples\n--------\n>>> x = 1\n", False),  # nothing printed
        ("Sum.\n\n>>> 1 + 1\n2\n", False),  # no heading
    ],
)
def test_an_example_is_a_heading_a_call_and_its_output(doc: str, expected: bool) -> None:
    def function() -> None: ...

    function.__doc__ = doc
    assert has_example(function) is expected
