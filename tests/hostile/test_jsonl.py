r"""Canonical JSONL run records that escape a lone UTF-16 surrogate (``"\ud800"``).

JSON can write one; no text holds one. Polars' decoder stored ``"c\ud800x"`` as ``"c\x00x"``, a
case id changed without a word. Decided: the line is refused, in one line naming the file and the
line and the escape (or set aside in the rejects file with ``--skip-invalid``, the rest ingested);
a surrogate pair (one character above U+FFFF, as ``json.dumps`` writes an emoji) and an escaped
backslash before ``ud800`` (the text ``\ud800``) are read as they are.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mas_eval import Dataset
from mas_eval.ingest import ingest_jsonl
from tests.promises import assert_refused, assert_unchanged, run, tree


def _line(case_id_json: str, run_id: str = "r1", system: str = "mas") -> str:
    """A record whose case_id is the JSON string text ``case_id_json`` (escapes as written)."""
    return f'{{"run_id": "{run_id}", "system": "{system}", "case_id": "{case_id_json}"}}\n'


def test_a_lone_surrogate_is_refused_naming_file_line_and_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "runs.jsonl"
    source.write_text(_line("c1", "r0", "single") + _line("c\\ud800x"))
    before = tree(tmp_path)
    done = run(capsys, "ingest", source, "--out", tmp_path / "ds")
    assert_refused(done, says=[f"{source}:2:", "the escape \\ud800 is a lone UTF-16 surrogate, not a character"])
    assert_unchanged(before, tmp_path)


def test_with_skip_invalid_the_line_is_set_aside_and_the_rest_ingested(tmp_path: Path) -> None:
    source = tmp_path / "runs.jsonl"
    source.write_text(_line("c1", "r0", "single") + _line("\\udc00", "r1") + _line("c2", "r2"))
    result = ingest_jsonl([source], tmp_path / "ds", skip_invalid=True)
    assert (result.runs, result.rejected) == (2, 1)
    assert Dataset.open(tmp_path / "ds").collect("runs")["case_id"].to_list() == ["c1", "c2"]
    rejected = json.loads(result.rejects.read_text())  # type: ignore[union-attr]
    assert rejected["line"] == 2 and "\\udc00 is a lone UTF-16 surrogate" in rejected["error"]


def test_a_surrogate_pair_and_an_escaped_backslash_are_read_as_they_are(tmp_path: Path) -> None:
    source = tmp_path / "runs.jsonl"
    # json.dumps writes an emoji as a pair of escapes; "\\ud800" is a backslash and the letters ud800.
    source.write_text(_line(json.dumps("😀")[1:-1], "r0", "single") + _line("a\\\\ud800", "r1"))
    ingest_jsonl([source], tmp_path / "ds")
    assert Dataset.open(tmp_path / "ds").collect("runs")["case_id"].to_list() == ["😀", "a\\ud800"]


def _with_surrogate(text: str, surrogate: int, at: int) -> str:
    """``text`` as the inside of a JSON string, with the escape of ``surrogate`` put in near ``at``."""
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    cut = min(at, len(escaped))
    while cut and escaped[cut - 1] == "\\":  # not inside an escape (\\ or \")
        cut -= 1
    return escaped[:cut] + f"\\u{surrogate:04x}" + escaped[cut:]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.text(st.characters(codec="utf-8", exclude_categories=["Cc"]), max_size=6),
            st.integers(0xD800, 0xDFFF),
            st.integers(0, 8),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    )
)  # 10: each draw ingests a file of up to 24 lines, half of them holding a surrogate escape
def test_any_surrogate_escape_is_refused_alone_and_kept_in_a_pair(
    tmp_path_factory: pytest.TempPathFactory, draws: list[tuple[str, int, int, bool]]
) -> None:
    folder = tmp_path_factory.mktemp("surrogates")
    lines, kept, lone = [], [], 0
    for i, (text, surrogate, at, paired) in enumerate(draws):
        lines.append(_line(json.dumps(text)[1:-1], f"plain{i}", "single"))
        kept.append((f"plain{i}", text))
        if paired:  # a high surrogate and a low one: the character they encode
            high, low = 0xD800 + (surrogate & 0x3FF), 0xDC00 + (surrogate >> 6 & 0x3FF)
            lines.append(_line(f"\\u{high:04x}\\u{low:04x}", f"pair{i}"))
            kept.append((f"pair{i}", chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))))
        else:
            lines.append(_line(_with_surrogate(text, surrogate, at), f"lone{i}"))
            lone += 1
    source = folder / "runs.jsonl"
    source.write_text("".join(lines), encoding="utf-8")
    result = ingest_jsonl([source], folder / "ds", skip_invalid=True)
    assert result.rejected == lone
    runs = Dataset.open(folder / "ds").collect("runs").sort("run_id")
    assert runs.select("run_id", "case_id").rows() == sorted(kept)
