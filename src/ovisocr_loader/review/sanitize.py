"""Model-written table HTML, made safe to show: only table markup survives.

The model's HTML goes into a page people open in a browser, so nothing of it is
trusted: every tag outside the table vocabulary is unwrapped (its text kept),
scripts and styles are dropped, and the only attributes left are numeric
``rowspan``/``colspan``.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, Comment, Tag

TABLE_TAGS = {"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "br"}
SPANS = ("rowspan", "colspan")
DROPPED = {"script", "style", "iframe", "object", "embed", "link", "meta", "img"}


def safe_table_html(html: str) -> str:
    """``html`` with table markup only (rowspan/colspan kept when they are numbers)."""
    soup = BeautifulSoup(html, "html.parser")
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in list(soup.find_all(True)):
        if not isinstance(tag, Tag) or tag.decomposed:   # inside a dropped tag
            continue
        if tag.name in DROPPED:
            tag.decompose()
        elif tag.name not in TABLE_TAGS:
            tag.unwrap()
        else:
            tag.attrs = {k: v for k, v in tag.attrs.items()
                         if k in SPANS and str(v).isdigit() and 0 < int(str(v)) <= 1000}
    return str(soup)
