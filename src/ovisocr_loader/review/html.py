"""HTML for the review site: one page per document, and the index.

Every element carries ``data-kind``, every page ``data-page`` and, when flagged,
``data-flag`` (space-separated: ``error``, ``loop_trimmed``, ``truncated``,
``blank``), so tests and tools can find them. Text is always escaped; table
HTML goes through :func:`~.sanitize.safe_table_html`. A Content-Security-Policy
forbids any request but the site's own images.
"""

from __future__ import annotations

from html import escape

from ..document import PageResult, ParsedDocument
from ..elements import Element
from ..writes import shown_name
from .sanitize import safe_table_html

#: What the browser may load: the site's own images, its inline style; nothing else.
CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"

FLAG_LABELS = {"error": "failed", "loop_trimmed": "loop trimmed",
               "truncated": "truncated", "blank": "blank"}

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f4f5f7}
header{background:#1d2430;color:#fff;padding:12px 24px}header a{color:#9cc3ff}
main{padding:16px 24px}h1{font-size:20px;margin:4px 0}
.page{background:#fff;border:1px solid #d5d9e0;border-radius:6px;margin:0 0 20px;padding:12px}
.page[data-flag]{border:3px solid #d9480f}
.page h2{font-size:16px;margin:0 0 8px}
.columns{display:flex;gap:16px;align-items:flex-start}
.image{flex:0 0 46%;position:sticky;top:8px}
.frame{position:relative;border:1px solid #ccd}.frame img{display:block;width:100%;height:auto}
.box{position:absolute;border:3px solid #e8590c;background:rgba(232,89,12,.12);
  color:#fff;font:bold 12px sans-serif;text-decoration:none}
.box span{background:#e8590c;padding:0 4px}
.noimage{padding:40px;text-align:center;color:#667;background:#eef}
.elements{flex:1;min-width:0}
.elements>*{margin:0 0 8px;padding:4px 6px;border-left:3px solid #dde}
.elements [data-kind=heading]{border-left-color:#364fc7}
.elements [data-kind=table]{border-left-color:#2b8a3e;overflow-x:auto}
.elements [data-kind=formula]{border-left-color:#862e9c;white-space:pre-wrap;
  font-family:ui-monospace,monospace;background:#f8f0fc}
.elements [data-kind=figure]{border-left-color:#e8590c;background:#fff4e6}
.elements [data-kind=page_furniture]{color:#889}
.elements :target{outline:3px solid #e8590c}
table{border-collapse:collapse}td,th{border:1px solid #99a;padding:2px 6px}th{background:#eef}
.kind{font:11px ui-monospace,monospace;color:#889;margin-right:6px}
.flag{display:inline-block;background:#d9480f;color:#fff;border-radius:3px;padding:0 6px;
  margin-left:6px;font-size:13px}
.error{background:#fff0f0;border:1px solid #d9480f;padding:8px}
.index td,.index th{padding:4px 10px}
"""


def document_page(doc: ParsedDocument, images: dict[int, str | None], index_href: str
                  ) -> str:
    """The page of one document: its pages, each image beside its elements."""
    name = shown_name(doc.source)
    body = [f'<header><a href="{escape(index_href)}">All documents</a>'
            f"<h1>{escape(name)}</h1><p>{escape(_summary(doc))}</p></header><main>"]
    if doc.error is not None:
        body.append(f'<p class="error" data-flag="error">{escape(doc.error.text)}</p>')
    body.extend(_page(page, images.get(page.page_number)) for page in doc.pages)
    body.append("</main>")
    return _html(name, "".join(body))


def index_page(entries: list[tuple[ParsedDocument, str]]) -> str:
    """The list of documents, each with its page count and flagged pages."""
    rows = []
    for doc, href in entries:
        flags = {f: [p.page_number for p in doc.pages if f in p.flags]
                 for f in FLAG_LABELS}
        if doc.error is not None:
            flags["error"] = [0]
        flagged = " ".join(f for f, pages in flags.items() if pages)
        shown = "".join(f'<span class="flag">{FLAG_LABELS[f]}: {_pages(pages)}</span>'
                        for f, pages in flags.items() if pages)
        attr = f' data-flag="{flagged}"' if flagged else ""
        name = escape(shown_name(doc.source))
        rows.append(f'<tr data-document="{name}"{attr}><td><a href="'
                    f'{escape(href)}">{name}</a></td><td>{len(doc.pages)}</td>'
                    f"<td>{shown or 'none'}</td></tr>")
    table = ('<table class="index"><tr><th>document</th><th>pages</th><th>flags</th></tr>'
             + "".join(rows) + "</table>")
    return _html("OCR review", f"<header><h1>OCR review: {len(entries)} documents</h1>"
                               f"</header><main>{table}</main>")


def _page(page: PageResult, image: str | None) -> str:
    number = page.page_number
    flags = page.flags
    attr = f' data-flag="{" ".join(flags)}"' if flags else ""
    badges = "".join(f'<span class="flag" data-flag-name="{f}">{FLAG_LABELS[f]}</span>'
                     for f in flags)
    turn = (f'<span class="kind"> shown as read: turned {page.rotation}° clockwise</span>'
            if page.rotation else "")
    parts = [f'<section class="page" id="page-{number}" data-page="{number}"{attr}>'
             f"<h2>Page {number}{badges}{turn}</h2>"]
    if page.error is not None:
        parts.append(f'<p class="error">{escape(page.error.text)}</p>')
    parts.append(f'<div class="columns"><div class="image">{_image(page, image)}</div>'
                 f'<div class="elements">{"".join(_elements(page.elements))}'
                 "</div></div></section>")
    return "".join(parts)


def _image(page: PageResult, src: str | None) -> str:
    if src is None:
        return '<p class="noimage">page image not available</p>'
    boxes = []
    figures = [e for e in page.elements if e.kind == "figure"]
    for number, figure in enumerate(figures, start=1):
        if figure.bbox is None:
            continue
        left, top, right, bottom = (min(v, 1000) / 10 for v in figure.bbox)
        boxes.append(f'<a class="box" data-kind="figure" href="#{_anchor(figure)}" '
                     f'title="Figure {number}" style="left:{left:g}%;top:{top:g}%;'
                     f'width:{right - left:g}%;height:{bottom - top:g}%">'
                     f"<span>{number}</span></a>")
    return (f'<div class="frame"><img src="{escape(src)}" alt="page {page.page_number}" '
            'loading="lazy" decoding="async">'
            + "".join(boxes) + "</div>")


def _element(element: Element, figure_number: int = 0) -> str:
    kind = element.kind
    label = f'<span class="kind">{kind}</span>'
    common = f'data-kind="{kind}" id="{_anchor(element)}"'
    if kind == "heading":
        level = min(6, max(3, (element.level or 1) + 2))
        return f"<h{level} {common}>{label}{escape(element.text)}</h{level}>"
    if kind == "table" and element.table is not None:
        return f"<div {common}>{label}{safe_table_html(element.table.html)}</div>"
    if kind == "formula":
        return f"<pre {common}>{label}{escape(element.latex or element.text)}</pre>"
    if kind == "figure":
        number = f"Figure {figure_number}: " if figure_number else ""
        return (f"<figure {common}>{label}{number}"
                f"{escape(element.text or '(no alt text)')}</figure>")
    return f"<div {common}>{label}{escape(element.text)}</div>"


def _elements(elements: list[Element]) -> list[str]:
    """Each element's HTML; figures numbered as their boxes on the image are."""
    figures = [e for e in elements if e.kind == "figure"]
    return [_element(e, figures.index(e) + 1 if e.kind == "figure" else 0)
            for e in elements]


def _anchor(element: Element) -> str:
    return f"p{element.page_number}-e{element.index}"


def _summary(doc: ParsedDocument) -> str:
    flagged = sum(1 for p in doc.pages if p.flags)
    return (f"{len(doc.pages)} of {doc.total_pages} pages, {flagged} flagged; "
            f"model {doc.model or 'unknown'}")


def _pages(numbers: list[int]) -> str:
    return "file" if numbers == [0] else "p. " + ", ".join(map(str, numbers))


def _html(title: str, body: str) -> str:
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name=viewport content="width=device-width,initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body>{body}</body></html>\n")
