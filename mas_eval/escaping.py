r"""User text made safe for each place it is written: the terminal, Markdown, LaTeX, CSV.

Names (systems, tasks, metrics, case ids, column names, file paths) come from the user's data
and paths, so they may hold anything: control characters, markup of any output format, a
spreadsheet formula. Each output format escapes them with one function from here:

* :func:`visible`: control characters shown as escapes (``\x1b``, ``\n``, ``\u202e``), so that
  none reaches a terminal or a reader raw; the terminal's consoles print user text through it;
  :func:`visible_texts` does the same to a column of texts (the case viewer's transcripts);
* :func:`one_line`: the same, but line breaks and tabs as spaces (a table row stays one line);
* :func:`markdown_text`: one line of plain text for Markdown, its HTML and Markdown syntax escaped;
* :func:`typeset_text`: one line of text a LaTeX document takes (composed, no invisible format characters);
* :func:`spreadsheet_safe` and :func:`spreadsheet_restored`: CSV text cells a spreadsheet will not
  run as formulas, and back.

Ordinary non-ASCII text, right-to-left letters included, is kept as it is.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # polars loads with the first CSV: the terminal's text needs none of it
    import polars as pl

__all__ = [
    "CONTROLS", "FORMULA_START", "html_text", "markdown_text", "one_line", "spreadsheet_restored", "spreadsheet_safe",
    "typeset_text", "visible", "visible_texts",
]  # fmt: skip

#: The characters never written raw: C0 controls, DEL, C1 controls, the bidirectional embeddings,
#: overrides and isolates (U+202A-202E, U+2066-2069: they reorder what a reader sees, as in
#: "Trojan Source") and marks (U+200E, U+200F, U+061C), the zero-width space, word joiner and
#: byte-order mark (U+200B, U+2060, U+FEFF: two names that print alike would be different), the
#: line and paragraph separators (U+2028, U+2029), and lone surrogates (U+D800-DFFF: no text
#: holds one; a name read from bytes that are not UTF-8 does). The zero-width joiner and
#: non-joiner (U+200C, U+200D) are kept: scripts and emoji need them.
CONTROLS = (
    *range(0x00, 0x20),
    0x7F,
    *range(0x80, 0xA0),
    0x061C,
    0x200B,
    0x200E,
    0x200F,
    *range(0x202A, 0x202F),
    0x2060,
    *range(0x2066, 0x206A),
    0x2028,
    0x2029,
    *range(0xD800, 0xE000),
    0xFEFF,
)
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_VISIBLE = {c: _NAMED.get(c, f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in CONTROLS}
#: What Python's ``str.splitlines`` takes for a line break, and the tab: a space on one line.
_BREAKS = {c: " " for c in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029)}
_ONE_LINE = _VISIBLE | _BREAKS
_KEEP_BREAKS = {c: escaped for c, escaped in _VISIBLE.items() if c not in (0x09, 0x0A, 0x0D)}


def visible(text: str, *, breaks: bool = True) -> str:
    r"""``text`` with every control character of :data:`CONTROLS` written as its escape.

    ``breaks=False`` keeps tabs and line breaks (``\t``, ``\n``, ``\r``) as they are, for a
    format where they are white space (HTML).

    Examples
    --------
    >>> print(visible("a\tb\n\x1b[31mred\u202e מערכת"))
    a\tb\n\x1b[31mred\u202e מערכת
    """
    return text.translate(_VISIBLE if breaks else _KEEP_BREAKS)


def visible_texts(texts: pl.Series, *, breaks: bool = True) -> pl.Series:
    r"""Each text of ``texts`` as :func:`visible` writes it: its control characters as escapes.

    Vectorised (one Aho–Corasick pass, :meth:`polars.Expr.str.replace_many`), and only over a
    column that holds a control character at all: most transcripts hold none but line breaks.

    Examples
    --------
    >>> import polars as pl
    >>> visible_texts(pl.Series(["a\tb\n\x1b[31m", None, "\u202e מערכת"]), breaks=False).to_list()
    ['a\tb\n\\x1b[31m', None, '\\u202e מערכת']
    """
    # A Polars string holds no surrogate (nor can a regex name one): the table's other characters.
    table = {c: shown for c, shown in (_VISIBLE if breaks else _KEEP_BREAKS).items() if not 0xD800 <= c < 0xE000}
    pattern = "[" + "".join(f"\\x{{{c:x}}}" for c in table) + "]"
    if not texts.str.contains(pattern).any():
        return texts
    return texts.str.replace_many([chr(c) for c in table], list(table.values()))


def one_line(text: str) -> str:
    r"""``text`` on one line: line breaks and tabs as spaces, the other control characters as escapes.

    Examples
    --------
    >>> print(one_line("a\n\nb\tc\r\x1b[31m"))
    a  b c \x1b[31m
    """
    return text.translate(_ONE_LINE)


#: Markdown syntax that means something anywhere in a line, escaped by a backslash (CommonMark
#: lets any ASCII punctuation be); ``_`` between two letters or digits means nothing.
_MARKDOWN_INLINE = re.compile(r"[\\`*\[\]|#~$]|_(?![^\W_])|(?<![^\W_])_")
#: Syntax that means something at the start of a line only: a list item (``- a``, ``+ a``, ``1. a``,
#: ``1) a``) or a rule (``---``); a number (``-0.5``, ``0.5``) is none.
_MARKDOWN_START = re.compile(r"\A([-+])(?!\d)|\A(\d{1,9})([.)])(?=\s|\Z)")
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def typeset_text(text: str) -> str:
    r"""Prepare ``text`` for a typesetting program (pdfLaTeX), before its markup is escaped.

    The text is composed (NFC: an accent written as a letter and a combining mark, which pdfLaTeX
    refuses, made one letter, as most fonts have it), on one line (:func:`one_line`: control characters and the
    marks of :data:`CONTROLS` as escapes), and the other invisible format characters (the
    zero-width joiners, a soft hyphen: Unicode's category Cf) dropped, which print as nothing.

    Examples
    --------
    >>> typeset_text("Amélie​‍") == "Amélie\\u200b"
    True
    """
    import unicodedata

    composed = one_line(unicodedata.normalize("NFC", text))
    return "".join(c for c in composed if unicodedata.category(c) != "Cf")


def markdown_text(text: str) -> str:
    r"""Escape ``text`` as one line of Markdown that reads as the text itself, wherever it is put.

    It may be put in a table cell, a heading, a paragraph, emphasis, a list item or an image's alt text.

    Line breaks and tabs become spaces and other control characters escapes (:func:`one_line`);
    ``&``, ``<`` and ``>`` become HTML entities, so that no renderer passes HTML through; the
    characters of Markdown's syntax (``\ ` * _ [ ] | # ~ $``, and a list marker at the start) are
    escaped by a backslash; surrounding spaces are dropped (Markdown drops them anyway, and
    ``* text*`` is no emphasis).

    Examples
    --------
    >>> print(markdown_text("<script>alert(1)</script> | a_b *c* [x](y)"))
    &lt;script&gt;alert(1)&lt;/script&gt; \| a_b \*c\* \[x\](y)
    >>> print(markdown_text("1. item\n\n# not a heading"))
    1\. item  \# not a heading
    """
    text = _MARKDOWN_INLINE.sub(lambda m: "\\" + m.group(), one_line(text).strip(" "))
    text = _MARKDOWN_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", text)
    return text.translate(_HTML)


def html_text(text: str) -> str:
    r"""Escape ``text`` as HTML text or a quoted attribute value, so that no markup or script passes.

    Control characters become escapes (:func:`visible`), ``& < > " '`` character references.

    Examples
    --------
    >>> print(html_text("<b onclick='x()'>a&b</b>\x1b[31m"))
    &lt;b onclick=&#x27;x()&#x27;&gt;a&amp;b&lt;/b&gt;\x1b[31m
    """
    return html.escape(visible(text), quote=True)


#: A text cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV Injection").
FORMULA_START = "=+-@\t\r"
#: ... unless it is a plain number (``-0.5``, ``+1e-3``), which a spreadsheet reads as that number.
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$"


def _formula(text: pl.Expr, quotes: str) -> pl.Expr:
    """Whether ``text`` is ``quotes`` (a regex of leading quotes) then a formula.

    A formula is a cell starting with a character of :data:`FORMULA_START` that is no plain number.
    """
    return text.str.contains(f"^{quotes}[=+@\\t\\r-]") & ~text.str.contains(f"^{quotes}{_NUMBER}")


def _text_columns(frame: pl.DataFrame) -> list[str]:
    import polars as pl

    return [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.String | pl.Categorical | pl.Enum)]


def spreadsheet_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with each text cell that a spreadsheet would run as a formula prefixed with ``'``.

    As the OWASP "CSV Injection" guidance says: a text cell starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return (:data:`FORMULA_START`) is prefixed with a single quote,
    which a spreadsheet shows rather than runs; a plain number (``-0.5``) is left as it is, and
    numeric columns are never touched. So that :func:`spreadsheet_restored` gives every cell
    back exactly, a cell that is such a prefixed cell already (quotes, then a formula) gets one
    quote more. Categorical columns come back as text.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"task": ["=HYPERLINK(1)", "-2+3", "-2", "'=x", "a=b"], "d": [-1.0] * 5})
    >>> spreadsheet_safe(frame)["task"].to_list()
    ["'=HYPERLINK(1)", "'-2+3", '-2', "''=x", 'a=b']
    >>> spreadsheet_restored(spreadsheet_safe(frame)).equals(frame)
    True
    """
    import polars as pl

    def safe(name: str) -> pl.Expr:
        text = pl.col(name).cast(pl.String)
        return pl.when(_formula(text, "'*")).then(pl.lit("'") + text).otherwise(text).alias(name)

    return frame.with_columns(safe(name) for name in _text_columns(frame))


def spreadsheet_restored(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` as it was before :func:`spreadsheet_safe`: the quote it added taken off each text cell.

    A cell loses its first character when it is one or more single quotes followed by a formula
    (what :func:`spreadsheet_safe` writes), and only then: any other cell is kept as it is.
    """
    import polars as pl

    def restored(name: str) -> pl.Expr:
        text = pl.col(name)
        return pl.when(_formula(text, "'+")).then(text.str.slice(1)).otherwise(text).alias(name)

    return frame.with_columns(restored(name) for name in _text_columns(frame))
