"""What reference parsing reads by: limits, patterns of years, names and tails, junk lines."""

from __future__ import annotations

import re

from citeverify_core.references.model import ParsedReference

__all__ = ["MAX_BIBTEX_CHARS", "MAX_REFERENCE_CHARS", "ParsedCitation", "junk_line"]

#: The reference-verification API's limit on one reference string.
MAX_REFERENCE_CHARS = 1200
#: A BibTeX entry may be longer (abstracts, keywords, files and notes do not count towards the
#: 1,200 characters), but not without bound.
MAX_BIBTEX_CHARS = 20_000
#: BibTeX fields that say nothing about which work is cited: not counted towards the limit.
_NON_BIBLIOGRAPHIC = frozenset(
    {"abstract", "keywords", "file", "note", "annote", "annotation", "comment", "comments",
     "mendeley-tags", "mendeley-groups", "groups", "owner", "timestamp", "urldate", "language"}
)  # fmt: skip


#: The parser's result type: every field is on :class:`ParsedReference` (this
#: name stays for callers of the parser).
ParsedCitation = ParsedReference
#: Volume, issue and pages.
_Numbers = tuple[str | None, str | None, str | None]
#: A titleless reference's authors, venue, year and numbers.
_Titleless = tuple[str, str, int, _Numbers]


# "[1]", "[1] ", "(1) ", "1. ", "1 R. W. Jones" (AIP), never a year.
_NUMBERING = re.compile(
    r"^\s*(?:\[\d{1,4}\]\s*|\(\d{1,4}\)\s+|\d{1,3}[.)]\s+|\d{1,3}\s+(?=[^\W\d_]\.)"
    r"|\d{1,3}(?=[A-Z][a-z]{2})"  # AIP as deposited: "1Toxicology and Applied ..."
    r"|\d{1,3}(?=[A-Z]{3,}[\s,.:]))"  # and "1JAMA 301, 1182 (2009).", "1IEEE Transactions"
)
_YEAR = re.compile(r"(?<![\w/.:–\-])((?:1[5-9]|20)\d{2})(?![\w–\-/]|\.\d|\s?[-–]\s?\d)[a-z]?")
_YEAR_PAREN = re.compile(  # never an issue after its volume: "130(1754)"
    r"(?<!\d)(?<!\d\s)\(\s*(?P<year>(?:1[5-9]|20)\d{2})[a-z]?(?:[,/][^()]{0,30})?\)"
    r"|\((?P<nd>n\.\s?d\.|in press)\)",
    re.I,
)
_QUOTED = re.compile(
    r"(?:^|(?<=[\s,.:;(\]]))[\"“”‘](?P<title>[^\"“”]{2,600}?)[,.?!]?[\"“”](?=[\s,.;:)]|$)"
)
_ET_AL = re.compile(r",?\s*\bet\.?\s+al\b\.?|,?\s*\bu\.\s?a\.(?=\s|$)", re.I)
_ELISION = re.compile(r",?\s*(?:\.\s?\.\s?\.|…)\s*,?\s*&?\s*")
_DOI_TAIL = re.compile(
    r"[\s,.;]*(?:\bdoi\s*:|https?://|\bDOI\b|\bAvailable\s+(?:at|from)\b).*$", re.I
)
_MONTH = (
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Spring|Summer|Fall|Autumn|Winter)"
    r"[a-z]*\.?"
)
# Where a venue ends: the numeric tail (", vol. 86", " 86 (9)", " 86.9 (1982)", ", 151(1), ",
# ": 75-80", ", Apr. 1982", ". 1982;86(9)").
_TAIL = re.compile(
    rf"(?:,\s*|\s+)(?:vol(?:\.|ume)?\s*\d|no\.\s*\d|pp?\.\s*\w|\d+(?![^\W\d_])|\(\s*(?:\d|{_MONTH})|{_MONTH}\s+\d)"
    r"|[:;]\s*\d|\.\s+\d",
    re.I,
)
_SPLIT = re.compile(r"(?<=[.?!])\s+(?=[\"“‘(\[]?[^\W_])")
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "2nd", "3rd"})
_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "le", "la", "dos", "das",
     "do", "ten", "ter", "zu", "v.", "i", "e"}
)  # fmt: skip
_CONNECTOR_WORDS = frozenset({"and", "&", "und", "et", "y"})
_ANONYMOUS = frozenset({"anon", "anon.", "anonymous", "n.n.", "unknown"})
_INITIAL_WORD = re.compile(r"^(?:[^\W\d_][a-z]?\.)+(?:-(?:[^\W\d_][a-z]?\.?)+)*$|^[^\W\d_]$")
_VANCOUVER_INITIALS = re.compile(r"^[^\W\d_a-z]{1,3}$")
# Harvard's editors after a chapter title: "Title S. Ourselin & D. R. Haynor, eds. Book".
_EDITOR_LIST = re.compile(
    r"\s(?:[^\W\d_]\.\s?-?){1,3}[^\s,.]+(?:\set al\.)?"
    r"(?:(?:,\s&?|\s&)\s?(?:[^\W\d_]\.\s?-?){1,3}[^\s,.]+)*,\s(?:eds?|hrsg)\.(?=\s)",
    re.I,
)
_NAME_WORD = re.compile(r"^[^\W\d_][\w'’\-–‐.]*$")
_EDITORS = re.compile(r"\s*\((?:eds?\.?|editors?|hrsg\.?|coord\.?)\)\s*", re.I)
_PUBLISHER_PLACE = re.compile(r"^[A-Z][\w.]*(?:\s[A-Z][\w.]*)?(?:,\s?[A-Z]{2})?:\s+(?=\S)")


_HEADING = re.compile(
    r"^\W*(?:\d+\.?\s*)?(?:references?(?:\s+(?:cited|list))?|bibliography|works\s+cited|"
    r"literature(?:\s+cited)?|sources|notes|endnotes|further\s+reading|citations|"
    r"literaturverzeichnis|références|referencias|bibliografía|bibliografia)\W*$",
    re.I,
)
_RULE = re.compile(r"^[\s\-–—_=*~#.·•]{3,}$")
_PAGE_FOOTER = re.compile(
    r"^[\s\-–—|]*(?:page|p\.|pg\.?|seite|página)?\s*\d{1,4}(?:\s*(?:of|/|von|de)\s*\d{1,4})?"
    r"[\s\-–—|]*$",
    re.I,
)


def junk_line(text: str) -> str | None:
    """Why a line of a reference list is not a reference, or None.

    Headings ("References", "Bibliography"), rules ("-----") and page footers ("Page 12 of 30",
    "- 12 -") are skipped and reported, not verified. Cheap: lines over 200 characters are
    never junk.
    """
    if len(text) > 200:
        return None
    line = text.strip()
    if not line:
        return "empty line"
    if _RULE.match(line):
        return "a rule"
    if _HEADING.match(line):
        return "a heading"
    if _PAGE_FOOTER.match(line):
        return "a page number"
    if not re.search(r"[^\W\d_]{2,}", line):
        return "no words"
    return None
