"""Parse a reference string into title, authors, year, venue, volume, issue, pages, DOI and URL.

Styles: APA, Harvard, MLA, Chicago, Vancouver, IEEE (with or without a space after ``[n]``),
numbered lists, bare DOIs or URLs, BibTeX.

No maintained Python parser covers these styles without a model, so this is ours: a few cheap
clues decide the layout (a quoted title; an author list closed by a year; "Authors. Title.
Venue" sentences), the numeric tail (volume, issue, pages, month, year) marks where the venue
ends, and a field the parser had to guess is listed in ``ParsedReference.unsure``.
Hot path: ``bench/bench_references.py`` measures it (benchmark if changing).
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import replace

from citeverify_core.engine.extract import extract_academic, extract_urls
from citeverify_core.errors import InputError
from citeverify_core.references.folding import TAGS, fold
from citeverify_core.references.parse.authors import _authors, _namey
from citeverify_core.references.parse.bibtex import (
    bibtex_entries,
    parse_bibtex,
    split_reference_list,
)
from citeverify_core.references.parse.clues import (
    _DOI_TAIL,
    _NUMBERING,
    _QUOTED,
    _YEAR_PAREN,
    MAX_BIBTEX_CHARS,
    MAX_REFERENCE_CHARS,
    ParsedCitation,
    _Numbers,
    junk_line,
)
from citeverify_core.references.parse.layout import (
    _author_date_head,
    _clean_title,
    _clean_venue,
    _leading_authors,
    _numbers,
    _pick_year,
    _quote_ends_title,
    _split_tail,
    _strip_trailing_year,
    _title_position,
    _title_venue,
    _titleless,
    _years,
)

__all__ = [
    "MAX_BIBTEX_CHARS",
    "MAX_REFERENCE_CHARS",
    "ParsedCitation",
    "alternative_reading",
    "bibtex_entries",
    "junk_line",
    "parse_bibtex",
    "parse_reference",
    "split_reference_list",
]


def parse_reference(text: str) -> ParsedCitation:
    """Parse one reference string.

    The length is checked before anything else: an oversized string costs nothing.

    Raises:
        InputError: the reference is not a string, is empty, or is longer than 1,200 characters
            (a BibTeX entry: its bibliographic fields).
    """
    if not isinstance(text, str):
        msg = f"a reference must be a string, got {type(text).__name__}"
        raise InputError(msg, path="reference")
    size = len(text)
    if size > MAX_REFERENCE_CHARS:
        if size <= MAX_BIBTEX_CHARS and text.lstrip()[:1] == "@":
            return parse_bibtex(text)
        msg = f"a reference is at most {MAX_REFERENCE_CHARS:,} characters, got {size:,}"
        raise InputError(msg, path="reference")
    raw = text
    text = unicodedata.normalize("NFC", " ".join(text.split()))
    if not text:
        raise InputError("a reference must not be empty", path="reference")
    if text[0] == "@":
        return parse_bibtex(raw)
    return _parse_text(raw, text)


#: Crossref's "not available" placeholder ("&NA; 1992. “Oral Contraceptives.” Reactions Weekly
#: &NA; (383)"), with the comma or semicolon after it.
_NOT_AVAILABLE = re.compile(r"&NA;[,;]?\s*")


#: A quoted title whose closing quote follows its comma or period (IEEE, MLA, Chicago), with
#: quotes inside it.
_QUOTED_NESTED = re.compile(
    r"(?:^|(?<=[\s,.:;(\]]))[\"“](?P<title>[^\"“”]{1,300}[\"“”‘’][^\n]{0,300}?)[,.?!][\"”](?=\s|$)"
)


def _entities(text: str) -> str:
    """HTML and XML character references decoded ("&amp;", "&#8211;"), "&NA;" removed."""
    text = _NOT_AVAILABLE.sub("", text)
    if "&" in text and ";" in text:
        text = " ".join(html.unescape(text).split())
    return text


def _parse_text(raw: str, text: str) -> ParsedCitation:
    text = _NUMBERING.sub("", text, count=1)
    if "<" in text:
        text = TAGS.sub("", text)  # JATS and HTML markup: "<italic>", "<title>"
    if "&" in text:
        text = _entities(text)
    doi = url = None
    for found in extract_academic(text):
        if found.kind == "doi":
            doi = found.normalized
            break
    urls = extract_urls(text)
    if urls:
        url = urls[0].text
    body = _DOI_TAIL.sub("", text) if (doi or url) else text
    body = body.strip(" ,;")
    if not body or (doi and len(body) < 8):
        return ParsedCitation(raw=raw, doi=doi, url=url, style="identifier")

    unsure: set[str] = set()
    quoted = _QUOTED.search(body)
    if quoted is not None and (
        not _title_position(body[: quoted.start()]) or not _quote_ends_title(body, quoted.end())
    ):
        quoted = None  # quotes inside a title ("... “Qidian” in Ming Dynasty")
    if quoted is None and ("“" in body or '"' in body):
        # A quoted title with a quote inside, closed by its punctuation: “Alan Sokal’s
        # “transgressing boundaries,” Venue (the inner quote is never closed, or is).
        nested = _QUOTED_NESTED.search(body)
        if (
            nested is not None
            and _title_position(body[: nested.start()])
            and _quote_ends_title(body, nested.end())
        ):
            quoted = nested
    titleless = _titleless(body) if quoted is None else None
    head = None if titleless is not None else _author_date_head(body)
    title: str | None
    venue: str | None
    year: int | None
    numbers: _Numbers | None = None
    if titleless is not None:
        # ACS, AIP, Elsevier: no title; authors, venue, year and numbers (see _titleless).
        style, title = "titleless", None
        authors_part, venue, year, numbers = titleless
    elif quoted and (head is None or head[2] >= quoted.start()):
        # MLA, IEEE, Chicago: Authors[. Year]. "Title." Venue ...
        style = "quoted"
        title = quoted.group("title")
        authors_part = body[: quoted.start()].strip()
        rest = body[quoted.end() :].strip(" ,.")
        years = _years(authors_part)
        authors_part = _strip_trailing_year(authors_part)
        year = years[-1] if years else _pick_year(rest, prefer_last=True)
        if m := re.match(r"(?:1[5-9]|20)\d{2}[a-z]?\.\s+", rest):
            rest = rest[m.end() :]  # Chicago without authors: “Title.” 2014. Venue
        venue, tail = _split_tail(
            re.sub(r"^(?:in:?|in\s+proc\w*\.?\s+of)\s+", "", rest, flags=re.I)
        )
    elif head is not None:
        # APA, Harvard, Chicago author-date: Authors (Year). Title. Venue ... / Authors, Year. ...
        style = "author-date"
        authors_part, year, end = head
        title, venue, tail = _title_venue(body[end:].lstrip(" .,:"))
        if (
            venue is None
            and title
            and tail
            and not _namey(authors_part)
            and not re.search(r",\s*[^\W\d_]\.|&", authors_part)
        ):
            # APA without authors: "Title. (1996). Venue, 141(1), 345."
            title, venue, authors_part = authors_part, title, ""
            unsure.add("title")
    else:
        # Vancouver, Chicago notes, plain: Authors. Title. Venue. Year;Volume(Issue):Pages.
        style = "sentences"
        spaced = re.sub(r"(\bet al\.|[a-z]{2}\.|\b[A-Z]{1,3}\.)(?=[A-Z][a-z])", r"\1 ", body)
        authors_part, after = _leading_authors(spaced)
        title, venue, tail = _title_venue(after)
        year = _pick_year(tail, prefer_last=False) or _pick_year(venue or "", prefer_last=True)
        if year is None:
            year = _pick_year(after.replace(title or "", " "), prefer_last=True)
        if year is None:
            year = _pick_year(body, prefer_last=True)
        if not authors_part:
            unsure.add("authors")
        unsure.add("title")
    authors, et_al, elided = _authors(authors_part)
    volume, issue, pages = numbers if numbers is not None else _numbers(tail)
    title = _clean_title(title)
    if title is None:
        unsure.add("title")
    if year is None:
        unsure.add("year")
    return ParsedCitation(
        raw=raw,
        title=title,
        authors=authors,
        et_al=et_al,
        year=year,
        venue=_clean_venue(venue),
        doi=doi,
        url=url,
        style=style,
        unsure=frozenset(unsure),
        volume=volume,
        issue=issue,
        pages=pages,
        elided=elided,
    )


#: Names with initials, "&", "et al.": an author list, never a title read first.
_NAMES_WITH_INITIALS = re.compile(r",\s*[^\W\d_]\.|\s&\s|\bet al\b|^[^\W\d_]+,\s[^\W\d_]+,")


def alternative_reading(ref: ParsedCitation) -> ParsedCitation | None:
    """The other reading of an APA reference without authors, or None.

    APA puts the title first when there are no authors: "Frontmatter. (2017). Messtechnik.",
    "Seasonal cycle of mean sea-level. (1986). Deep Sea Research Part B. Oceanographic
    Literature Review, 33(3), 207." The first reading takes what precedes the year for the
    authors (an organisation looks the same: "World Health Organization. (2010). Title."), so
    the verifier tries this one when the first finds nothing. Never for names with initials.
    """
    if ref.style != "author-date" or not ref.raw or len(ref.raw) > MAX_REFERENCE_CHARS:
        return None
    text = _NUMBERING.sub("", " ".join(ref.raw.split()), count=1)
    if "<" in text:
        text = TAGS.sub("", text)
    if "&" in text:
        text = _entities(text)
    body = _DOI_TAIL.sub("", text).strip(" ,;") if (ref.doi or ref.url) else text
    paren = _YEAR_PAREN.search(body)
    if paren is None or not paren.group("year"):
        return None
    before = body[: paren.start()].strip(" .")
    after = body[paren.end() :].strip(" .,:")
    if not before or not after or _NAMES_WITH_INITIALS.search(body[: paren.start()]):
        return None
    title = _clean_title(before)
    venue, tail = _split_tail(after)
    if title is None or fold_equal(title, ref.title):
        return None
    volume, issue, pages = _numbers(tail)
    return replace(
        ref,
        title=title,
        authors=(),
        et_al=False,
        elided=False,
        venue=_clean_venue(venue),
        volume=volume,
        issue=issue,
        pages=pages,
        unsure=ref.unsure | {"title", "authors"},
    )


def fold_equal(a: str | None, b: str | None) -> bool:
    """Whether two optional strings are the same once folded."""
    return a is not None and b is not None and fold(a) == fold(b)
