"""Fixtures shared by the report tests: a module defines ``scores``, and ``report`` is its report."""

from __future__ import annotations

import pytest

import mas_eval
from mas_eval.report import Report, build


@pytest.fixture(scope="module")
def report(scores: mas_eval.Scores) -> Report:
    """The report, titled "Pilot", of the module's own ``scores`` fixture (built once per module)."""
    return build(scores, title="Pilot")
