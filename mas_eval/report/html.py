"""The report as one self-contained HTML page: CSS and SVG figures inline, every string escaped.

Jinja2 autoescapes every value the template prints, and shows the control characters in text
as escapes (:func:`~mas_eval.escaping.visible`; a bidirectional override in a name would
reorder what the reader sees); the only markup inserted as is is the SVG that matplotlib wrote,
whose text it escapes itself (drawn as paths, names kept in escaped comments). Nothing in the
page refers to another file or host.
"""

from __future__ import annotations

import io
import re
from functools import cache
from typing import TYPE_CHECKING

from markupsafe import Markup

from mas_eval._version import __version__
from mas_eval.escaping import visible
from mas_eval.report.cells import cells

if TYPE_CHECKING:
    import jinja2

    from mas_eval.report.parts import Document, ReportFigure

__all__ = ["environment", "figure_svg", "render_html"]

#: The XML prolog and DOCTYPE of matplotlib's SVG: an inline <svg> needs neither (the DOCTYPE names a URL).
_PROLOG = re.compile(r"\A.*?(?=<svg)", re.DOTALL)
#: Its RDF metadata block: vocabulary URLs a page has no use for.
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)


@cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment of the package's HTML templates (autoescaped), made once."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("mas_eval.report", "templates"),
        autoescape=True,
        trim_blocks=False,
        undefined=jinja2.StrictUndefined,
        finalize=_shown,
    )


def _shown(value: object) -> object:
    """A value the template prints: text with its control characters as escapes (tabs and line
    breaks are white space in HTML); markup inserted as is (the figures' SVG) and numbers as they are."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value, breaks=False)
    return value


def figure_svg(figure: ReportFigure) -> str:
    """``figure`` as an inline ``<svg>`` element; ids salted with its name so figures never share one.

    Control characters that a name put in an artist's id (``gid="points:<system>"``) are written
    as escapes, as in the rest of the page (matplotlib escapes the markup, not those)."""
    import matplotlib as mpl

    buffer = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": figure.name, "svg.fonttype": "path"}):
        figure.figure.savefig(buffer, format="svg", metadata={"Date": None})
    return visible(_METADATA.sub("", _PROLOG.sub("", buffer.getvalue(), count=1), count=1), breaks=False)


def render_html(report: Document) -> str:
    """The report as an HTML page (see the module docstring)."""
    template = environment().get_template("report.html.j2")
    return template.render(
        report=report,
        cases=getattr(report, "cases", None),
        version=__version__,
        preset=report.provenance.get("parameters", {}).get("preset", ""),
        cells=cells,
        svg=lambda figure: Markup(figure_svg(figure)),  # matplotlib's own SVG, its text escaped
    )
