r"""Names that hide: zero-width and right-to-left marks, decomposed accents, lone surrogates.

A system named ``ma\u200bs`` printed as ``mas``: two names that read alike on the terminal were two
systems. The terminal, Markdown, HTML and the error line now show every mark of
:data:`mas_eval.escaping.CONTROLS` as its escape (``\u200b``, ``\u202e``); the LaTeX tables are
composed (NFC: ``e`` and a combining accent, which pdfLaTeX refuses, become ``é``) and drop the
other invisible format characters; a lone surrogate (what ``$'\xff'`` on the command line becomes)
is shown as its escape and never reaches a UTF-8 writer raw.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mas_eval
from mas_eval.escaping import CONTROLS, html_text, markdown_text, typeset_text, visible
from mas_eval.report.latex import escape_latex
from tests.promises import assert_refused, assert_unchanged, run, tree

HIDDEN = "\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2060\ufeff\u061c"
TREATMENT, CONTROL = "ma\u200bs\u202e", "sin\u200fgle\u2066"


@pytest.fixture(scope="module")
def hidden_scores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Scores of two systems whose names hold zero-width and bidirectional marks."""
    folder = tmp_path_factory.mktemp("names")
    ds = mas_eval.simulate(40, seed=2)
    tables = {name: ds.collect(name) for name in ds.table_names}
    tables["runs"] = tables["runs"].with_columns(pl.col("system").replace({"mas": TREATMENT, "single": CONTROL}))
    mas_eval.score(mas_eval.Dataset.from_frames(**tables)).write(folder / "scores")
    return folder / "scores"


def test_the_terminal_shows_hidden_marks_in_names_as_escapes(
    hidden_scores: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(capsys, "compare", hidden_scores, "--treatment", TREATMENT, "--control", CONTROL, "--metrics", "dqs")
    assert done.code == 0, done.err
    assert "ma\\u200bs\\u202e" in done.out and "sin\\u200fgle\\u2066" in done.out
    assert not set(done.out) & set(HIDDEN), [hex(ord(c)) for c in set(done.out) & set(HIDDEN)]


def test_an_error_line_shows_them_too(hidden_scores: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree(hidden_scores)
    done = run(capsys, "compare", hidden_scores, "--treatment", "ma\u200bs", "--metrics", "dqs")
    line = assert_refused(done, says="ma\\u200bs")
    assert not set(line) & set(HIDDEN)
    assert_unchanged(before, hidden_scores)


@pytest.mark.slow
def test_the_latex_tables_are_composed_and_hold_no_invisible_character(hidden_scores: Path, tmp_path: Path) -> None:
    report = mas_eval.report.build(mas_eval.Scores.open(hidden_scores), treatment=TREATMENT, control=CONTROL)
    report.title = "Ame\u0301lie\u200d\u00ad"  # a decomposed accent, a zero-width joiner, a soft hyphen
    tex = report.write(tmp_path / "report.tex").read_text(encoding="utf-8")
    assert unicodedata.is_normalized("NFC", tex)
    assert "Amélie" in tex and "ma\\textbackslash{}u200bs\\textbackslash{}u202e" in tex
    assert not [c for c in tex if unicodedata.category(c) in ("Cf", "Cs", "Mn")]


@settings(max_examples=40, deadline=None)  # 40: pure string functions
@given(st.text(st.characters(categories=["Cf", "Cs", "Mn", "Zl", "Zp", "Cc", "Ll"]), max_size=12))
def test_no_output_writes_a_hidden_character_or_a_surrogate_raw(text: str) -> None:
    raw = {chr(c) for c in CONTROLS}
    for shown in (visible(text), markdown_text(text), html_text(text)):
        assert not set(shown) & raw
        shown.encode("utf-8")  # no lone surrogate reaches a UTF-8 writer
    latex = escape_latex(text)
    latex.encode("utf-8")
    assert unicodedata.is_normalized("NFC", latex)
    assert not [c for c in latex if unicodedata.category(c) in ("Cf", "Cs", "Cc")]
    # A combining mark is kept (composed where a letter has it): the text is not changed beyond that.
    assert typeset_text(text) == "".join(
        c
        for c in unicodedata.normalize("NFC", "".join(visible(ch) if ord(ch) in CONTROLS else ch for ch in text))
        if unicodedata.category(c) != "Cf"
    ) or any(ch in "\n\t\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029" for ch in text)


@pytest.mark.slow
def test_a_lone_surrogate_in_a_title_is_written_as_its_escape(hidden_scores: Path, tmp_path: Path) -> None:
    # What `--title $'\xff'` gives Python; each writer encodes UTF-8, which holds no surrogate.
    report = mas_eval.report.build(mas_eval.Scores.open(hidden_scores), treatment=TREATMENT, control=CONTROL)
    report.title = "run \udcff"
    shown = {".md": "\\udcff", ".html": "\\udcff", ".tex": "\\textbackslash{}udcff", ".json": "\\udcff"}
    for suffix, escape in shown.items():
        text = report.write(tmp_path / f"report{suffix}").read_text(encoding="utf-8")
        assert escape in text, suffix
