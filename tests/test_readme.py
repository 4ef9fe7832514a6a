"""Every code block of the README runs as written (issue 9, item 18).

The README's examples are what a new user copies first; one that fails verbatim (as the
expression-namespace snippet did, with an undefined ``frame``) costs them more than a missing
example would. Python blocks run in order in one namespace from the repository root; shell
blocks run line by line in a scratch folder that sees the bundled ``data/``; the JSON record
is ingested. ``make`` lines are dry-run (``make -n``): the suite itself is ``make test``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mas_eval import Dataset
from mas_eval.ingest import ingest_jsonl
from tests.conftest import checkout_env

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
#: Languages a README block may have; a block without one would escape these tests.
LANGUAGES = ("python", "bash", "json", "text")


def blocks(language: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(README.read_text(encoding="utf-8")) if lang == language]


def test_every_block_names_a_language_these_tests_know() -> None:
    found = [lang for lang, _ in _FENCE.findall(README.read_text(encoding="utf-8"))]
    assert found, "no code blocks found: the pattern is broken"
    assert set(found) <= set(LANGUAGES), found


def test_python_blocks_run_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # In a scratch folder that sees the bundled data/, so that what a block writes stays there.
    (tmp_path / "data").symlink_to(ROOT / "data")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    code = blocks("python")
    assert len(code) >= 2
    for number, body in enumerate(code, start=1):
        exec(compile(body, f"README.md python block {number}", "exec"), namespace)


def test_shell_blocks_run_line_by_line(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data")
    # `mas-eval` is this interpreter's script, and imports the checkout under test from the scratch folder.
    env = checkout_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    ran = 0
    for body in blocks("bash"):
        for line in body.splitlines():
            command = line.split("  #")[0].strip()
            if not command or command.startswith("#"):
                continue
            if command.startswith("make "):
                target = shlex.split(command)[1]
                args = ["make", "-n", "-C", str(ROOT), target]
            else:
                args = ["bash", "-c", command]
            done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
            assert done.returncode == 0, f"{command!r} failed:\n{done.stderr}"
            ran += 1
    assert ran >= 8


def test_the_json_record_ingests(tmp_path: Path) -> None:
    (record,) = blocks("json")
    path = tmp_path / "record.jsonl"
    path.write_text(json.dumps(json.loads(record)) + "\n", encoding="utf-8")
    result = ingest_jsonl([path], tmp_path / "ds")
    ds = Dataset.open(result.out).validate()
    assert result.runs == 1
    assert set(ds.table_names) >= {"runs", "agents", "beliefs", "criteria", "scores", "alt_scores", "answers"}
