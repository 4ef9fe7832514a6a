"""A report's figures as inline SVG, drawn once however many formats show them.

The HTML page inlines each figure's SVG and the JSON report carries it: both read it here, so a
report written as both draws each figure to SVG once (:func:`figure_svg` keeps what it drew for
as long as the figure lives).
"""

from __future__ import annotations

import io
import re
import weakref
from typing import TYPE_CHECKING

from mas_eval.escaping import visible

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from mas_eval.report.parts import ReportFigure

__all__ = ["figure_svg"]

#: The XML prolog and DOCTYPE of matplotlib's SVG: an inline <svg> needs neither (the DOCTYPE names a URL).
_PROLOG = re.compile(r"\A.*?(?=<svg)", re.DOTALL)
#: Its RDF metadata block: vocabulary URLs a page has no use for.
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
#: What each live figure drew, by the name that salts its ids.
_DRAWN: weakref.WeakKeyDictionary[Figure, dict[str, str]] = weakref.WeakKeyDictionary()


def figure_svg(figure: ReportFigure) -> str:
    """``figure`` as an inline ``<svg>`` element; ids salted with its name so figures never share one.

    Text is drawn as paths (its characters kept only in escaped comments), so no name from the data
    becomes markup. Control characters that a name put in an artist's id (``gid="points:<system>"``)
    are written as escapes (matplotlib escapes the markup, not those).

    >>> from matplotlib.figure import Figure
    >>> from mas_eval.report.parts import ReportFigure
    >>> shown = ReportFigure("empty", "", Figure(figsize=(1, 1)))
    >>> svg = figure_svg(shown)
    >>> svg.startswith("<svg"), figure_svg(shown) is svg
    (True, True)
    """
    drawn = _DRAWN.setdefault(figure.figure, {})
    if figure.name not in drawn:
        import matplotlib as mpl

        buffer = io.StringIO()
        with mpl.rc_context({"svg.hashsalt": figure.name, "svg.fonttype": "path"}):
            figure.figure.savefig(buffer, format="svg", metadata={"Date": None})
        text = _METADATA.sub("", _PROLOG.sub("", buffer.getvalue(), count=1), count=1)
        drawn[figure.name] = visible(text, breaks=False)
    return drawn[figure.name]
