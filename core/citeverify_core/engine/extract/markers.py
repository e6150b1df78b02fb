"""Citation markers: the parts of an answer that say where a claim comes from, not what it says.

Their words are not answer words (``extensions.citation_words: ignore``, docs/semantics.md):

- parenthetical author-year references: ``(Smith et al., 2020)``, ``(Smith & Jones, 2019; Lee,
  2021)``, ``(Smith, 2020, p. 4)``, ``(WHO 2021: 12)``, also in square brackets;
- source notes: ``(Source: hours.md)``, ``[Sources: a, b]``, and ``Source: hours.md`` ending a
  sentence or line;
- bracketed document names at the end of a claim or clause: ``[hours.md]``, ``[doc1]``,
  ``[Louvre FAQ]``;
- the DOIs, PubMed IDs, PMCIDs, arXiv IDs and URLs that extraction found as citations (they keep
  their own check and lookup; only their words leave the word overlap).

Each pattern accepts only a citation's shape, so that prose in parentheses or brackets stays
counted: ``(the museum is closed on Mondays)`` has lower-case words before any year, and a
bracketed name must be a file name, a document id or a short capitalized title followed by the
end of a clause. Every repetition is bounded and each pattern starts at a literal bracket or at
"source"/"reference", so hostile inputs stay linear.

The patterns are long (compiling them took about 20 ms at import, on every ``citeverify check``):
each is compiled on first use (:func:`_pattern`), and only when the text has what it starts at.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from citeverify_core.engine.extract.scan import Found

__all__ = ["CITATION_TYPES", "citation_markers"]

#: The extracted citation types whose spans are citation markers. Case law and statutes are cited
#: in running prose ("Smith v. Jones held ..."), and statistics are content.
CITATION_TYPES = frozenset({"academic", "url"})

# --- author-year references -----------------------------------------------------------------------

# A surname: capitalized, with particles ("van der Berg", "de la Cruz") and hyphens, or an
# organization of a few capitalized words ("World Health Organization", "WHO").
_PARTICLE = r"(?:van|von|der|den|de|del|della|da|di|du|dos|das|la|le|al|el|bin|ibn|ten|ter)\s+"
_SURNAME = (
    rf"(?:{_PARTICLE}){{0,3}}"
    r"(?!(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|In|On|At|Since|From|Until|Before|After|About|Around|By|For|To|The)\b)"
    r"[A-Z\u00c0-\u00de][\w'’\-]{0,40}"
    r"(?:\s+(?:of|the|for|and|&)?\s*[A-Z\u00c0-\u00de][\w'’\-]{0,40}){0,4}"
)
_AUTHORS = (
    rf"{_SURNAME}(?:\s+et\s+al\.?|\s+and\s+(?:others|colleagues)"
    rf"|(?:\s*,\s*{_SURNAME}){{0,5}},?\s+(?:&|and)\s+{_SURNAME})?"
)
_YEAR = r"(?:(?:1[5-9]|20)\d\d[a-z]?|n\.\s?d\.|in\s+press|forthcoming)"
_LOCATOR = (
    r"(?:,\s*(?:pp?\.|ch(?:ap)?\.|sec\.|§§?|para\.|fig\.|table|vol\.)\s*\d{1,5}"
    r"(?:\s*[-–]\s*\d{1,5})?|:\s*\d{1,5}(?:\s*[-–]\s*\d{1,5})?)?"
)
_PREFIX = r"(?:(?:see(?:\s+also)?|cf\.|e\.g\.,?|i\.e\.,?|as\s+cited\s+in)\s+)?"
_REFERENCE = rf"{_PREFIX}{_AUTHORS},?\s+{_YEAR}(?:\s*,\s*{_YEAR}){{0,5}}{_LOCATOR}"
_AUTHOR_YEAR = (
    rf"\(\s*{_REFERENCE}(?:\s*;\s*{_REFERENCE}){{0,9}}\s*\)"
    rf"|\[\s*{_REFERENCE}(?:\s*;\s*{_REFERENCE}){{0,9}}\s*\]"
)

# --- source notes and bracketed document names ---------------------------------------------------

# A word of a title: capitalized, a number, or a small word inside it.
_TITLE_WORD = r"(?:[A-Z0-9\u00c0-\u00de][\w'’&.\-]{0,30}|of|the|and|&|for|on|in|de|du|la|le|to)"
_TITLE = rf"[A-Z0-9\u00c0-\u00de][\w'’&.\-]{{0,30}}(?:[ \t]+{_TITLE_WORD}){{0,5}}"
_FILE = r"[\w][\w .\-]{0,60}\.[A-Za-z][A-Za-z0-9]{0,4}"
_DOC_ID = r"(?:doc(?:ument)?|source|src|ref|chunk|passage|context|node)[ _#-]?\d{1,4}"
# A document: a URL, a document id, a file name, or a capitalized name of at most six words (a
# name in lower case may be a sentence: it stays counted).
_SOURCE = (
    r"(?:https?://[^\s()\[\]<>]{1,500}"
    rf"|{_DOC_ID}"
    rf"|{_FILE}"
    rf"|[\"“]?{_TITLE}[\"”]?)"
    # A place in it: "Annual Report 2023, p. 12".
    r"(?:,?\s*(?:pp?\.|pages?|para\.|§§?|sec\.|ch\.|slide|table|fig\.)\s*\d{1,5}"
    r"(?:\s*[-–]\s*\d{1,5})?)?"
)
_SOURCES = rf"{_SOURCE}(?:\s*[,;]\s*(?:and\s+)?{_SOURCE}){{0,9}}"
_LABEL = r"(?:\*\*|__)?(?i:sources?|references?|refs?|citations?)(?:\*\*|__)?\s*:(?:\*\*|__)?"
_NOTE_IN_BRACKETS = rf"\(\s*{_LABEL}\s*{_SOURCES}\s*\)|\[\s*{_LABEL}\s*{_SOURCES}\s*\]"
# "Source: hours.md" as a sentence of its own: after a sentence end or a line start, and up to
# the end of its line or a period before the next sentence.
_NOTE_AT_END = (
    rf"(?:(?<=[.!?])|(?<=[.!?][\"'”’)\]])|^)[ \t]*{_LABEL}[ \t]*{_SOURCES}"
    r"(?:[ \t]*\.?[ \t]*$|\.(?=[ \t]+[\"“A-Z\u00c0-\u00de]))"
)
_NAME_IN_BRACKETS = (
    rf"\[(?:{_DOC_ID}|{_FILE}|{_TITLE})\]"
    # At the end of a claim or clause: not "[He] said" (an insertion in a quotation), nor a
    # Markdown link's text ("[Louvre FAQ](https://...)").
    r"(?=[ \t]*(?:[.!?,;:)\]【\[]|$))"
)


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    """``source`` compiled (multiline: ``^`` and ``$`` at line ends), once per process."""
    return re.compile(source, re.MULTILINE)


def citation_markers(text: str, found: Iterable[Found] = ()) -> list[tuple[int, int]]:
    """The spans of ``text`` that are citation markers, sorted and merged.

    ``found``: the citations extraction found in ``text``; those of :data:`CITATION_TYPES` are
    markers too.
    """
    spans = [(f.start, f.end) for f in found if f.type in CITATION_TYPES]
    if "(" in text or "[" in text:
        spans.extend(m.span() for m in _pattern(_AUTHOR_YEAR).finditer(text))
        spans.extend(m.span() for m in _pattern(_NAME_IN_BRACKETS).finditer(text))
    lowered = text.lower()
    if ":" in text and any(w in lowered for w in ("source", "ref", "citation")):
        if "(" in text or "[" in text:
            spans.extend(m.span() for m in _pattern(_NOTE_IN_BRACKETS).finditer(text))
        note_at_end = _pattern(_NOTE_AT_END)
        spans.extend(_trimmed(text, m.start(), m.end()) for m in note_at_end.finditer(text))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """A match without its surrounding blanks (a claim's span does not hold them)."""
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    return start, end
