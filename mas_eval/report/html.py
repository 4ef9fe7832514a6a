"""The report as one self-contained HTML page: CSS and SVG figures inline, every string escaped.

Jinja2 autoescapes every value the template prints, and shows the control characters in text
as escapes (:func:`~mas_eval.escaping.visible`; a bidirectional override in a name would
reorder what the reader sees); the only markup inserted as is is the SVG that matplotlib wrote,
whose text it escapes itself (drawn as paths, names kept in escaped comments). Nothing in the
page refers to another file or host.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from markupsafe import Markup

from mas_eval._version import __version__
from mas_eval.escaping import visible
from mas_eval.report.cells import cells
from mas_eval.report.parts import arrange
from mas_eval.report.svg import figure_svg

if TYPE_CHECKING:
    import jinja2

    from mas_eval.report.parts import Document

__all__ = ["environment", "figure_svg", "render_html"]


@cache
def environment() -> jinja2.Environment:
    """Return the Jinja2 environment of the package's HTML templates (autoescaped), made once."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("mas_eval.report", "templates"),
        autoescape=True,
        trim_blocks=False,
        undefined=jinja2.StrictUndefined,
        finalize=_shown,
    )


def _shown(value: object) -> object:
    """Return a value as the template prints it: text with its control characters as escapes.

    Tabs and line breaks are white space in HTML; markup is inserted as is (the figures' SVG) and numbers as they are.
    """
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value, breaks=False)
    return value


def render_html(report: Document) -> str:
    """Render the report as an HTML page (see the module docstring)."""
    template = environment().get_template("report.html.j2")
    return template.render(
        report=report,
        sections=arrange(report.sections)[0],
        cases=getattr(report, "cases", None),
        version=__version__,
        preset=report.provenance.get("parameters", {}).get("preset", ""),
        cells=cells,
        svg=lambda figure: Markup(figure_svg(figure)),  # matplotlib's own SVG, its text escaped
    )
