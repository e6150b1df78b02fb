"""HTML as document lines, with the standard library's parser.

``<h1>``-``<h6>`` headings, ``<li>`` items (their ``<ol>`` number the label), ``<p>``
paragraphs, ``<title>``; scripts and styles dropped, entities decoded, nothing fetched.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.markup_common import nfc as _nfc
from citeverify_core.references.document.model import DocumentLine, DocumentText, Location

__all__ = ["read_html"]

_BLOCKS = frozenset(
    {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "br", "tr", "td", "th", "table", "section",
     "article", "header", "footer", "main", "nav", "aside", "blockquote", "pre", "hr", "figure",
     "figcaption", "caption", "address", "form", "fieldset", "details", "summary", "body",
     "h1", "h2", "h3", "h4", "h5", "h6", "tbody", "thead", "tfoot"}
)  # fmt: skip
_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "math", "head", "iframe"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_MAX_DEPTH = 500
_MAX_LINE_CHARS = 20_000


class _HtmlLines(HTMLParser):
    """Collects an HTML document's blocks as lines (bounded: nesting is not recursion here)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[DocumentLine] = []
        self.title_parts: list[str] = []
        self.in_title = False
        self.skipping = 0
        self.parts: list[str] = []
        self.size = 0
        self.line_no = 1
        self.heading = False
        self.paragraph = True
        self.label: str | None = None
        self.lists: list[list[int | None]] = []  # per open list: [next number] or [None] (ul)

    def _flush(self) -> None:
        text = " ".join("".join(self.parts).split())
        self.parts, self.size = [], 0
        if text:
            self.lines.append(
                DocumentLine(
                    _nfc(text),
                    Location(line=self.line_no),
                    label=self.label,
                    heading=self.heading,
                    starts_paragraph=self.paragraph,
                )
            )
            self.paragraph = False
            self.label = None
            self.heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED and tag != "head":
            self.skipping += 1
            return
        if tag == "title":
            self.in_title = True
            return
        if tag not in _BLOCKS:
            return
        self._flush()
        if tag == "br":
            return
        self.line_no = self.getpos()[0]
        if tag in {"ol", "ul"}:
            if len(self.lists) < _MAX_DEPTH:
                start = dict(attrs).get("start") if tag == "ol" else None
                first = int(start) if start and start.strip().lstrip("-").isdecimal() else 1
                self.lists.append([first if tag == "ol" else None])
            return
        if tag == "li":
            self.paragraph = True
            self.heading = False
            self.label = None
            if self.lists and self.lists[-1][0] is not None:
                value = dict(attrs).get("value")
                number = int(value) if value and value.strip().isdecimal() else self.lists[-1][0]
                self.label = str(number)
                self.lists[-1][0] = number + 1
            return
        if tag in _HEADINGS:
            self.heading = True
        # A <p> straight inside an <li> keeps the item's label (no text came since).
        self.paragraph = True

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED and tag != "head":
            self.skipping = max(0, self.skipping - 1)
            return
        if tag == "title":
            self.in_title = False
            return
        if tag in {"ol", "ul"} and self.lists:
            self._flush()
            self.lists.pop()
            return
        if tag in _BLOCKS:
            self._flush()
            self.heading = False
            self.paragraph = True

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if self.in_title:
            if sum(len(p) for p in self.title_parts) < 2000:
                self.title_parts.append(data.replace(_LT, "<"))
            return
        if not self.parts:
            self.line_no = self.getpos()[0]
        if self.size + len(data) > _MAX_LINE_CHARS:
            self.parts.append(data[: max(0, _MAX_LINE_CHARS - self.size)].replace(_LT, "<"))
            self.size = _MAX_LINE_CHARS
            self._flush()
            return
        self.parts.append(data.replace(_LT, "<"))
        self.size += len(data)


_STRAY_LT = re.compile(r"<(?![A-Za-z/!?])")
_LT = "\ue000"  # a stray "<", put back in the text (an entity would cost a decode each)
_TAG_START = re.compile(r"<[A-Za-z/!?]")
_MAX_TAGS = 200_000
_UNCLOSED_TAG = re.compile(r"<(?=[A-Za-z/!?][^<>]*(?:<|$))")


def _without_comments(text: str) -> str:
    """``text`` without its ``<!-- -->`` comments; an unclosed one hides the rest (as in HTML)."""
    out: list[str] = []
    i = 0
    while True:
        start = text.find("<!--", i)
        if start < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        end = text.find("-->", start + 4)
        if end < 0:
            break
        i = end + 3
    return "".join(out)


def read_html(text: str) -> DocumentText:
    """An HTML document's lines and title."""
    notes: list[str] = []
    # html.parser spends a Python step on every "<": a "<" that opens no tag is made text in
    # one pass, and a document is read up to its 400,000th tag (a paper has far fewer).
    text = _STRAY_LT.sub(_LT, _without_comments(text))
    # A "<" whose tag never closes (another "<" or the end comes first) is text: html.parser
    # would rescan to the end from each one.
    text = _UNCLOSED_TAG.sub(_LT, text)
    for count, m in enumerate(_TAG_START.finditer(text), 1):
        if count > _MAX_TAGS:
            text = text[: m.start()]
            notes.append(f"the HTML is read up to its {_MAX_TAGS:,}th tag")
            break
    parser = _HtmlLines()
    try:
        # Fed in pieces: html.parser keeps unparsed text between feeds, so an unclosed "<"
        # is not rescanned from the start of the document on every feed.
        parser.feed(text)
        parser.close()
    except (AssertionError, ValueError) as exc:  # older html.parser raised on some markup
        msg = f"not readable HTML ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from exc
    parser._flush()
    title = " ".join("".join(parser.title_parts).split()) or None
    if title is None:
        title = next((ln.text for ln in parser.lines if ln.heading), None)
    return DocumentText(format="html", lines=parser.lines, title=title and _nfc(title), notes=notes)
