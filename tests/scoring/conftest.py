"""Fixtures shared by the scoring tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from mas_eval import Dataset
from tests.conftest import CHECKOUT


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample Dataset written in 5 shards (once per module)."""
    return Dataset.open(CHECKOUT / "data" / "sample").write(tmp_path_factory.mktemp("ds") / "sample", shards=5)
