"""Markdown as document lines.

``#`` and underlined headings, list items (an ordered item's number its label), fenced code
left out, links, emphasis and escapes reduced to their text.
"""

from __future__ import annotations

import re

from citeverify_core.references.document.markup_common import nfc as _nfc
from citeverify_core.references.document.model import DocumentLine, DocumentText, Location

__all__ = ["read_markdown"]

_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_SETEXT = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")
_MD_ITEM = re.compile(r"^\s{0,8}(?:(?P<bullet>[-*+])|(?P<number>\d{1,9})[.)])\s+")
_MD_LINK = re.compile(r"!?\[([^\[\]]{0,1000})\]\(([^()\s]{0,2000})(?:\s+\"[^\"]{0,300}\")?\)")
_MD_EMPHASIS = re.compile(r"(\*{1,3}|(?<![\w\\])_{1,3})(?=\S)([^*_\n]{1,2000}?)(?<=\S)\1")
_MD_CODE = re.compile(r"`{1,3}([^`\n]{0,2000})`{1,3}")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_MD_AUTOLINK = re.compile(r"<(https?://[^<>\s]{1,2000})>")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]{0,500}>")


def _markdown_inline(text: str) -> str:
    def link(m: re.Match[str]) -> str:
        label, url = m.group(1), m.group(2)
        if not url or url in label or not url.startswith(("http://", "https://")):
            return label
        return f"{label} {url}" if label else url

    # Functions, not templates: a template is expanded per match, ten times slower.
    if "`" in text:
        text = _MD_CODE.sub(lambda m: m.group(1), text)
    if "](" in text:
        text = _MD_LINK.sub(link, text)
    if "<" in text:
        text = _MD_AUTOLINK.sub(lambda m: m.group(1), text)
        text = _HTML_TAG.sub("", text)
    if "*" in text or "_" in text:
        text = _MD_EMPHASIS.sub(lambda m: m.group(2), text)
    if "\\" in text:
        text = _MD_ESCAPE.sub(lambda m: m.group(1), text)
    return " ".join(text.split())


def read_markdown(text: str) -> DocumentText:
    """A Markdown document's lines and title."""
    lines: list[DocumentLine] = []
    title: str | None = None
    blank = True
    fence = False
    raw = text.splitlines()
    for number, source in enumerate(raw, 1):
        line = source
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence = not fence
            blank = True
            continue
        if fence:
            continue
        if not stripped:
            blank = True
            continue
        if (
            _MD_SETEXT.match(line)
            and lines
            and not blank
            and lines[-1].location.line == number - 1
            and (stripped.startswith("=") or not _MD_ITEM.match(line))
        ):
            previous = lines.pop()
            lines.append(
                DocumentLine(previous.text, previous.location, heading=True, starts_paragraph=True)
            )
            if stripped.startswith("=") and title is None:
                title = previous.text
            blank = True
            continue
        if m := _MD_HEADING.match(line):
            heading = _markdown_inline(m.group(2))
            if title is None and len(m.group(1)) == 1 and heading:
                title = heading
            if heading:
                lines.append(
                    DocumentLine(
                        _nfc(heading), Location(line=number), heading=True, starts_paragraph=True
                    )
                )
            blank = True
            continue
        label = None
        item = False
        if m := _MD_ITEM.match(line):
            item = True
            label = m.group("number")
            line = line[m.end() :]
        elif stripped.startswith(">"):
            line = stripped.lstrip("> ")
        content = _markdown_inline(line)
        if not content:
            continue
        lines.append(
            DocumentLine(
                _nfc(content),
                Location(line=number),
                label=label,
                starts_paragraph=blank or item,
            )
        )
        blank = False
    return DocumentText(format="md", lines=lines, title=title)
