"""The tags an HTML fragment opens and its text, for tests that check what a page shows."""

from __future__ import annotations

from html.parser import HTMLParser


class HtmlText(HTMLParser):
    """The tags an HTML fragment opens (``tags``) and its text pieces (``text``)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> HtmlText:
    """``html`` fed whole to an :class:`HtmlText`."""
    page = HtmlText()
    page.feed(html)
    page.close()
    return page
