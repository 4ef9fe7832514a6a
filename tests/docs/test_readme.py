"""Every code block of the README runs as written, and the README stays a newcomer's page.

The README's examples are what a new user copies first; one that fails verbatim costs them more
than a missing example would (``tests/docs/doc_blocks.py`` says how each kind of block runs). The
JSON run record (on the documentation's Dataset page) is ingested. The page names no development
history (``tests/docs/test_doc_pages.py`` checks it with the documentation's pages).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mas_eval import Dataset
from mas_eval.ingest import ingest_jsonl
from tests.conftest import CHECKOUT
from tests.docs.doc_blocks import LANGUAGES, blocks, run_page

pytestmark = pytest.mark.docs

README = CHECKOUT / "README.md"


def test_every_block_names_a_language_these_tests_know() -> None:
    found = [lang for lang, _ in blocks(README)]
    assert found, "no code blocks found: the pattern is broken"
    assert set(found) <= set(LANGUAGES), found


def test_the_readme_runs_as_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    counts = run_page(README, tmp_path)
    assert counts["pycon"] >= 1 and counts["bash"] >= 4


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_json_record_ingests(tmp_path: Path) -> None:
    found = 0
    for path in (README, *sorted((CHECKOUT / "docs").rglob("*.md"))):
        for language, record in blocks(path):
            if language != "json":
                continue
            target = tmp_path / "record.jsonl"
            target.write_text(json.dumps(json.loads(record)) + "\n", encoding="utf-8")
            result = ingest_jsonl([target], tmp_path / "ds", overwrite=True)
            ds = Dataset.open(result.out).validate()
            assert result.runs == 1
            assert set(ds.table_names) >= {"runs", "agents", "beliefs", "criteria", "scores", "alt_scores", "answers"}
            found += 1
    assert found, "no JSON run record in the README or the documentation"
