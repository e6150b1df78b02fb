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

import re
import unicodedata

from citeverify_core.engine.extract import extract_academic, extract_urls
from citeverify_core.errors import InputError
from citeverify_core.references.model import Author, ParsedReference
from citeverify_core.references.normalize import TAGS

__all__ = [
    "MAX_BIBTEX_CHARS",
    "MAX_REFERENCE_CHARS",
    "ParsedCitation",
    "bibtex_entries",
    "junk_line",
    "parse_bibtex",
    "parse_reference",
    "split_reference_list",
]

#: The seed's limit on one reference string.
MAX_REFERENCE_CHARS = 1200
#: A BibTeX entry may be longer (abstracts, keywords, files and notes do not count towards the
#: 1,200 characters, issue 10), but not without bound.
MAX_BIBTEX_CHARS = 20_000
#: BibTeX fields that say nothing about which work is cited: not counted towards the limit.
_NON_BIBLIOGRAPHIC = frozenset(
    {"abstract", "keywords", "file", "note", "annote", "annotation", "comment", "comments",
     "mendeley-tags", "mendeley-groups", "groups", "owner", "timestamp", "urldate", "language"}
)  # fmt: skip


#: The parser's result type: since issue 10 every field is on :class:`ParsedReference` (this
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
    """Why a line of a reference list is not a reference, or None (issue 10).

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


def _parse_text(raw: str, text: str) -> ParsedCitation:
    text = _NUMBERING.sub("", text, count=1)
    if "<" in text:
        text = TAGS.sub("", text)  # JATS and HTML markup: "<italic>", "<title>"
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


# --- layout -------------------------------------------------------------------------------------

_Y = r"(?P<year>(?:1[5-9]|20)\d{2})[a-z]?"
_NUM = r"[A-Za-z]{0,3}\d[\w]*(?:\s*[-–]\s*[A-Za-z]{0,3}\d[\w]*)?"
# Pages as deposited: "333–NP" (no last page), "n/a–n/a" and "no–no" (article numbers unknown).
# Roman numerals ("xi", front matter), "P_46" (J-STAGE), a bare "n/a" or "no".
_PAGES = (
    rf"(?:{_NUM}|[A-Za-z]{{0,3}}\d\w*\s*[-–]\s*[A-Za-z]{{1,3}}|n/a(?:\s*[-–]\s*n/a)?"
    r"|no(?:\s*[-–]\s*no)?|[ivxlc]{1,8}|[A-Z]_\d+(?:\s*[-–]\s*[A-Z]_\d+)?)"
)
# The numeric ends of the styles without a title (ACS, AIP, Elsevier and most physics and
# chemistry lists): "Venue 2003, 8, 343-351." / "Venue 8, 343 (2003)." / "Venue 8 (2003) 343."
_TITLELESS_TAILS = (
    re.compile(rf"\s(?P<vol>{_NUM}),\s*(?:(?P<pages>{_PAGES})\s*)?\({_Y}\)\.?$"),
    re.compile(rf"\s(?P<vol>{_NUM})\s*\({_Y}\)(?:\s*(?P<pages>{_PAGES}))?\.?$"),
    re.compile(rf"\s\({_Y}\)(?:\s*(?P<pages>{_PAGES}))?\.?$"),
    re.compile(
        rf"\s{_Y},\s*(?P<vol>{_NUM}|[IVXLC]{{1,8}})(?:\s*\((?P<iss>[^()]{{1,12}})\))?"
        rf"(?:,\s*(?P<pages>{_PAGES}))?\.?$"
    ),
    re.compile(rf"\s{_Y}\.?$"),
)
# A particle after the initials: "Boer, W. de", "Silva, J. L. e".
_ACS_PARTICLES = r"(?:\s?(?:de|da|do|dos|das|e|van|von|der|den|du|la|le|del|della|di|y|ten|ter)\b)*"
_ACS_LAST_NAME = re.compile(
    rf"^(?P<name>[^,;.]+,\s(?:[^\W\d_]\.\s?-?\s?)+{_ACS_PARTICLES}\s?(?:et al\.\s)?)\s*"
    # "2007 IEEE Information Theory Workshop", "2012 6th International Conference on ..."
    r"(?P<venue>[^\W\d_].*|(?:19|20)\d\d\s(?:\d{1,3}(?:st|nd|rd|th)\s)?[^\W\d_].*)$"
)
#: An ACS name whose last initial is the first word of an abbreviated journal: "J." or "Z."
#: after at least one other initial, before an abbreviated word ("Phys.", "Am.").
_JOURNAL_INITIAL = re.compile(r"(?<=\.)\s?[JZ]\.\s?$")
_ABBREVIATED_WORD = re.compile(r"[A-Z][a-z]{0,11}\.(?:\s|$)")
_ACS_NAME = re.compile(rf"^[^,;.\d]+(?:,\s(?:[^\W\d_]\.\s?-?\s?)+{_ACS_PARTICLES})?$")
# "A. van der Hoorn": up to 3 words after the initials.
_INITIALS_FIRST = re.compile(
    r"^(?:and\s+)?(?:[^\W\d_]\.\s?-?\s?){1,4}\S+(?:\s\S+){0,3}$|^et al\.?$"
)


def _titleless(body: str) -> _Titleless | None:
    """Authors, venue, year, volume, issue and pages of a reference without a title, or None.

    ACS "Jones, R. W.; Staley, R. H. J. Phys. Chem. 1982, 86, 1669-1674.", AIP "R.W. Jones and
    R.H. Staley, J. Phys. Chem. 86, 1669 (1982).", Elsevier "R.W. Jones, R.H. Staley, J. Phys.
    Chem. 86 (1982) 1669." Matching them is the index's work (issue 10: first author, year,
    container, volume, first page).
    """
    for pattern in _TITLELESS_TAILS:
        m = pattern.search(body)
        if m is not None:
            found = _titleless_head(body[: m.start()].strip(" ,."), m)
            if found is not None:
                return found
    return None


def _titleless_head(head: str, m: re.Match[str]) -> _Titleless | None:
    groups = m.groupdict()
    volume = groups.get("vol")
    if volume and not groups.get("pages") and not groups.get("iss") and re.search("[-–]", volume):
        # "Business Analytics for Managers 2014, 1–15.": a book's pages, no volume.
        groups["pages"], volume = volume, None
    pages = re.sub(r"\s*[-–—]\s*", "-", groups["pages"]) if groups.get("pages") else None
    numbers = (volume, groups.get("iss"), pages)
    year = int(groups["year"])
    if not head or len(head) > 600 or "“" in head or '"' in head:
        return None
    acs_names = ";" in head and all(
        _ACS_NAME.match(chunk.strip()) for chunk in head.split(";")[:-1]
    )
    if acs_names or (";" not in head and _ACS_LAST_NAME.match(head)):
        # ACS: "Family, I. I.; Family, I. I. Venue"
        authors_text, _, last = head.rpartition("; ")
        m_last = _ACS_LAST_NAME.match(last)
        if m_last is None:
            name, dot, venue = last.partition(". ")  # "MCINTOSH; NICHOL. Venue"
            if not dot or not venue:
                return None
            authors_text = f"{authors_text}; {name}" if authors_text else name
        else:
            venue = m_last.group("venue")
            name = m_last.group("name")
            if (shift := _JOURNAL_INITIAL.search(name)) and _ABBREVIATED_WORD.match(venue):
                # "Staley, R. H. J. Phys. Chem.": the last "J." opens the venue (J., Z.).
                name, venue = name[: shift.start()], f"{shift.group().strip()} {venue}"
            authors_text = f"{authors_text}; {name}" if authors_text else name
        if _SPLIT.search(venue) and not _abbreviated_venue(venue):
            return None  # a sentence: a title is there
        return authors_text, venue, year, numbers
    # AIP, Elsevier: "I. Family, I. Family, and I. Family, Venue"
    chunks = [c.strip() for c in head.split(", ")]
    k = 0
    while k < len(chunks) - 1 and all(
        _INITIALS_FIRST.match(part.strip())
        for part in re.split(r"(?:^|\s+)and\s+", chunks[k])
        if part.strip()
    ):
        k += 1
    if len(chunks) - k != 1 and not (k and volume and all(map(_title_case, chunks[k:]))):
        # "Authors, Title, Venue": a title is there. (A journal with commas is in title case
        # and has a volume: "Journal of Neurology, Neurosurgery & Psychiatry 73 (2002) 371";
        # "Introduction to Nonlinear Acoustics, Nauka, Moscow (1966)" is a book's title.)
        return None
    venue = ", ".join(chunks[k:])
    if _SPLIT.search(venue) and not _abbreviated_venue(venue) and not (k and _title_case(venue)):
        return None  # a sentence: a title is there ("Acta Radiologica. Diagnosis" is a venue)
    if not re.search(r"[^\W\d_]{3,}", venue):
        return None
    return ", ".join(chunks[:k]), venue, year, numbers


def _title_case(text: str) -> bool:
    """Every word of 4 letters or more starts with a capital (a venue's words, not a title's)."""
    return all(w[:1].isupper() for w in re.findall(r"[^\W\d_]{4,}", text))


def _abbreviated_venue(venue: str) -> bool:
    """Every word before the last one is an abbreviation ("J. Phys. Chem. A", "Phys. Rev. B")."""
    words = venue.split()
    return all(
        (w.endswith(".") and len(w) <= 7) or not w[:1].isupper() or len(w) <= 2 for w in words[:-1]
    )


def _author_date_head(body: str) -> tuple[str, int | None, int] | None:
    """``(authors, year, end)`` when the string opens with an author list closed by a year."""
    paren = _YEAR_PAREN.search(body, 0, 900)
    if paren is not None:
        before = body[: paren.start()]
        title_first = before.rstrip().endswith((".", "?", "!")) and body[
            paren.end() : paren.end() + 1
        ] in {".", ","}  # APA without authors: "Title. (2015). Venue, 74(8), 1-2."
        if paren.start() < len(body) // 2 or _namey(before) or not before.strip() or title_first:
            year = int(paren.group("year")) if paren.group("year") else None
            return before, year, paren.end()
    # "Jones, R.W. & Staley, R.H., 1982. Title" (Harvard), "Jones, Roger. 1982. Title" (Chicago)
    # "Smith, J. (2005. Title" (an unclosed parenthesis) is read the same way.
    for m in re.finditer(r",?\s+\(?((?:1[5-9]|20)\d{2})[a-z]?\)?[.,]\s+", body[:900]):
        before = body[: m.start()]
        if _namey(before) or before.strip(" .").lower() in _ANONYMOUS:
            return before, int(m.group(1)), m.end()
        if len(before) > 600:
            break
    return None


def _leading_authors(body: str) -> tuple[str, str]:
    """Split "Authors. Title. ..." into the author list and the rest."""
    segments = _segments(body)
    if len(segments) < 2:
        return "", body
    first = body[: segments[1][0]].strip()
    name_part, colon, title_part = first.partition(": ")
    if colon and _namey(name_part.replace(";", ",")):
        # "Authors: Title. Venue" (a colon after the names, common in Springer journals).
        return name_part, title_part + " " + body[segments[1][0] :]
    end = 0
    for start, stop in segments[:-1]:
        seg = body[start:stop].strip().rstrip(".")
        if not _namey(seg.replace(";", ",")):
            break
        if end and not any(_initial(w) or _initial(w + ".") for w in seg.split()):
            break  # a second segment of names has initials ("L.R." | "Rabiner and B.")
        end = stop
    if end == 0:
        return "", body
    return body[:end].strip(), body[end:].strip()


def _segments(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``[start, end)``: split after ``.?!`` and a space, before a capital."""
    spans = []
    start = 0
    for m in _SPLIT.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def _title_position(before: str) -> bool:
    """Whether a quoted passage after ``before`` is the title.

    The names, a year or nothing come before it, or the end of a sentence.
    """
    before = _strip_trailing_year(before.strip())
    if before.endswith((".", ",")):
        return True
    before = before.strip(" ,.")
    return not before or _namey(before) or before.lower() in _ANONYMOUS


def _quote_ends_title(body: str, end: int) -> bool:
    """Whether a closing quote ends the title, not a quote inside it.

    Inside: a colon or a lowercase word follows ("“His mam”: the value of", "“Qidian” in").
    """
    nxt = body[end:].lstrip()[:1]
    if body[end - 2 : end - 1] in {",", ".", "?", "!"}:
        return True  # IEEE, MLA, Chicago: “Title,” “Title.”
    return nxt != ":" and not nxt.islower()


def _numeric(piece: str) -> bool:
    """A segment of numbers only ("1982;86(9):1669-74", "Apr. 1982").

    Not a venue that starts with a year ("2012 6th International Conference ...").
    """
    if not re.match(r"\s*(?:\d|" + _MONTH + ")", piece, re.I):
        return False
    if re.match(r"\s*(?:1[5-9]|20)\d{2}[a-z]?\s*(?:[;:]|\.?$)", piece):
        return True  # Vancouver "1982;394(1 The Brattlebo):330-42", "2011."
    words = re.sub(_MONTH + r"|\b(?:vol|no|pp|suppl|p|n\. pag)\b", " ", piece, flags=re.I)
    return not re.search(r"[^\W\d_]{3,}", words)


def _is_abbreviation(word: str) -> bool:
    """A journal-abbreviation word ("J", "Phys", "Chem", "Proc"), or an initial."""
    bare = word.strip(".")
    return 0 < len(bare) <= 5 and bare[0].isupper() and " " not in bare


def _title_venue(text: str) -> tuple[str | None, str | None, str]:
    """Split "Title. Venue, 86(9), 1-10." into title, venue and the numeric tail."""
    text = _EDITOR_LIST.sub(".", text.strip(), count=1)
    if not text:
        return None, None, ""
    spans = _segments(text)
    pieces = [text[a:b] for a, b in spans]
    # The segment where the numeric tail starts (a segment of numbers only counts as tail).
    for k, piece in enumerate(pieces):
        if k == 0:
            continue
        m = _TAIL.search(" " + piece)
        if m is not None and m.start() == 0 and (not piece[:1].isdigit() or _numeric(piece)):
            # the whole segment is tail: the venue is the previous segment
            if k >= 2:
                return _join_title_venue(pieces[:k], " ".join(pieces[k:]))
            return pieces[0], None, " ".join(pieces[k:])
    if len(pieces) == 1:
        m = _TAIL.search(text)
        if m is not None and m.start() > 0 and re.match(r"[.,;:]?\s*\d", text[m.start() :]):
            return text[: m.start()], None, text[m.start() :]
        return text, None, ""
    venue_piece = pieces[-1]
    m = _TAIL.search(venue_piece)
    if m is not None:
        venue_text, tail = venue_piece[: m.start()], venue_piece[m.start() :]
    else:
        venue_text, tail = venue_piece, ""
    title, venue, _ = _join_title_venue([*pieces[:-1], venue_text], "")
    return title, venue, tail


def _join_title_venue(pieces: list[str], tail: str) -> tuple[str | None, str | None, str]:
    """The last piece is the venue, with the abbreviation pieces before it ("J. Phys. Chem.")."""
    j = len(pieces) - 1
    while j > 1 and _is_abbreviation(pieces[j - 1]) and _is_abbreviation(pieces[j].split()[0]):
        j -= 1
    title = " ".join(pieces[:j]).strip() or None
    venue, more = _split_tail(" ".join(pieces[j:]))
    return title, venue, f"{more} {tail}".strip()


def _split_tail(rest: str) -> tuple[str | None, str]:
    """Venue and numeric tail of what follows a quoted title."""
    rest = rest.strip(" .,;:")
    if not rest:
        return None, ""
    m = _TAIL.search(rest)
    if m is None:
        return rest, ""
    return rest[: m.start()] or None, rest[m.start() :]


def _clean_title(title: str | None) -> str | None:
    if title is None:
        return None
    title = title.strip(' ,;:"“”‘’')
    title = re.sub(r"\s*\[[^\]]*\]\.?$", "", title)  # "[Doctoral dissertation]", "[Internet]"
    title = title.rstrip(" .,;:")
    return title or None


def _clean_venue(venue: str | None) -> str | None:
    if not venue:
        return None
    venue = venue.strip(" .,;:")
    venue = re.sub(r"^(?:in:?\s+)", "", venue, flags=re.I)
    venue = re.sub(r"\s*\((?:[^()]*\d[^()]*)\)$", "", venue)  # "(October 31)", "(2012)"
    if re.search(r"\b(?:Press|Publish\w*|Verlag|Books|Wiley|Springer|Elsevier)\b", venue):
        venue = _PUBLISHER_PLACE.sub("", venue)  # "Chicago: University of Chicago Press"
    return venue.strip(" .,;:") or None


# --- years and numbers ----------------------------------------------------------------------------


def _years(text: str) -> list[int]:
    """Years in ``text``, never a page (``pp. 1735-1780``), a volume (``1502 (1)``) or an id."""
    out = []
    for m in _YEAR.finditer(text):
        before = text[max(0, m.start() - 6) : m.start()]
        if re.search(r"(?:\bpp?|\b[Vv]ol|\b[Nn]o|\b[Nn]r|\b[Aa]rt)\.?\s*$", before):
            continue  # "pp. 1735", "p. 2001", "vol. 1999", "no. 2004"
        after = text[m.end() : m.end() + 4]
        if re.match(r"\s?\(\s?\d", after):  # "1502 (1)": a volume and its issue
            continue
        out.append(int(m.group(1)))
    return out


def _pick_year(text: str, *, prefer_last: bool) -> int | None:
    paren = _YEAR_PAREN.search(text)
    if paren is not None and paren.group("year"):
        return int(paren.group("year"))
    years = _years(text)
    if not years:
        return None
    return years[-1] if prefer_last else years[0]


def _strip_trailing_year(text: str) -> str:
    text = _YEAR_PAREN.sub("", text)
    return re.sub(r"[.,]?\s*(?:1[5-9]|20)\d{2}[a-z]?\.?\s*$", "", text.strip())


_VOLUME_PATTERNS = (
    re.compile(r"\bvol(?:\.|ume\b)?\s*(?P<v>\d[\w\-–]*)", re.I),
    re.compile(r"(?:^|[\s,])(?P<v>\d{1,5})\.(?P<i>\d{1,4})\b(?!\.\d)"),  # MLA 86.9
    re.compile(  # 86(9), 86 (9), never "(1982)"
        r"(?:^|[\s,;.])(?P<v>\d{1,5})\s*\(\s*(?!(?:1[5-9]|20)\d{2}\))(?P<i>[\w\-–/ ]{1,12}?)\s*\)"
    ),
    re.compile(r";\s*(?P<v>\d{1,5})\s*(?::|$)"),  # Vancouver 1982;86:1-9
    re.compile(r"^[\s,.]*(?P<v>\d{1,5})(?=\s*[,:]\s*(?:pp?\.\s*)?\w?\d)"),  # "86, 1669-1674"
    re.compile(r"^[\s,.]*(?P<v>\d{1,5})[\s.]*$"),  # "AAPG Bulletin, 65."
)
_ISSUE = re.compile(r"\b(?:no|nr|issue)\.?\s*(?P<i>\d[\w\-–/]*)", re.I)
_PAGES_PATTERNS = (
    re.compile(r"\bpp?\.\s*(?P<p>\w?\d+(?:\s*[-–—]\s*\w?\d+)?)", re.I),
    re.compile(r"[,:]\s*(?P<p>[A-Za-z]?\d+\s*[-–—]\s*[A-Za-z]?\d+)"),
    re.compile(r"\)\s*[,:]\s*(?P<p>[A-Za-z]?\d+)\b(?!\s*\()"),
    re.compile(r"^[\s,.]*\d{1,5}\s*,\s*(?P<p>[A-Za-z]?\d+)\b(?!\s*\()"),
)


def _numbers(tail: str) -> _Numbers:
    """Volume, issue and pages of the numeric tail."""
    if not tail:
        return None, None, None
    volume = issue = pages = None
    for pattern in _VOLUME_PATTERNS:
        m = pattern.search(tail)
        if m is not None:
            volume = m.group("v")
            issue = m.groupdict().get("i")
            break
    if issue is None and (m := _ISSUE.search(tail)) is not None:
        issue = m.group("i")
    for pattern in _PAGES_PATTERNS:
        m = pattern.search(tail)
        if m is not None and not _YEAR_PAREN.fullmatch(f"({m.group('p')})"):
            pages = re.sub(r"\s*[-–—]\s*", "-", m.group("p"))
            break
    return volume, (issue.strip() if issue else None), pages


# --- authors --------------------------------------------------------------------------------------


def _namey(segment: str) -> bool:
    """Whether a segment reads as a list of names.

    Only capitalized words, initials, particles and connectors, with a comma, an initial or an
    "and" somewhere.
    """
    words = segment.replace(",", " ").replace(";", " ").split()
    if not words or len(words) > 400:
        return False
    for w in words:
        low = w.lower()
        if low in _CONNECTOR_WORDS or low in _PARTICLES or low in _SUFFIXES:
            continue
        if low in {"et", "al", "al.", "...", "…", "(eds.)", "(ed.)", "(eds)", "(ed)"}:
            continue
        if _initial(w) or (len(w) == 1 and _initial(w + ".")):
            continue
        bare = w.strip(".")
        if not bare or not (bare[0].isupper() and bare[0].isalpha()) or not _NAME_WORD.match(bare):
            return False
    if "," not in segment and ";" not in segment and len(words) > 6:
        return False  # "ESTIMATION OF VENTILATION REQUIREMENTS OF A PLASTIC GREENHOUSE"
    if any(len(chunk.split()) > 5 for chunk in re.split(r"[,;&]|\band\b", segment)):
        return False  # "CASE OF DELIVERY BY PERFORATION AND EXTRACTION, IN A CASE OF ..."
    return (
        "," in segment
        or ";" in segment
        or any(_initial(w) or (len(w) == 1 and w.isupper()) for w in words)
        or _vancouver_list(segment)
        or any(w.lower() in {"and", "&"} for w in words)
    )


def _vancouver_list(segment: str) -> bool:
    """Vancouver names, each ending with its initials: "Jones RW, Staley RH", "OWEN WJB"."""
    chunks = [c.split() for c in re.split(r"[,;]", _ET_AL.sub("", segment).rstrip(" ."))]
    return all(len(c) >= 2 and _VANCOUVER_INITIALS.match(c[-1]) for c in chunks if c) and any(
        chunks
    )


def _initial(word: str) -> bool:
    """An initial: "R.", "R.W.", "J.-L.", "Th.", "R" (capitalized: "v." is a particle)."""
    return word[:1].isupper() and bool(_INITIAL_WORD.match(word))


def _is_initials(chunk: str) -> bool:
    """Initials only: "R. W.", "R.W.", "J.-L.", "WAH", also with particles ("W. de", "J. de S.")."""
    words = [w for w in chunk.split() if not (w.islower() and w in _PARTICLES)]
    if len(words) == 1 and _VANCOUVER_INITIALS.match(words[0]) and len(chunk.split()) == 1:
        return True  # "Ellis, WAH, Marples, TG"
    return bool(words) and all(_initial(w) for w in words)


def _is_given(chunk: str) -> bool:
    """A given-names chunk: "Roger W.", "Thomas S.", "Anna", "Jean-Luc" (1-3 words)."""
    words = chunk.split()
    return 0 < len(words) <= 3 and all(
        w[0].isupper() and (_initial(w) or _NAME_WORD.match(w)) for w in words
    )


def _authors(text: str | None) -> tuple[tuple[Author, ...], bool, bool]:
    """Authors, whether the list ends in "et al.", and whether it is elided ("A, B, ... Z")."""
    if not text:
        return (), False, False
    text = text.strip(" ,;:")
    et_al = bool(_ET_AL.search(text))
    if et_al:
        text = _ET_AL.sub("", text)
    elided = bool(_ELISION.search(text))
    if elided:
        text = _ELISION.sub(" & ", text)
    text = _EDITORS.sub(" ", text).strip(" ,;&")
    text = re.sub(r",?\s+eds?\.?$", "", text)
    if text.endswith(".") and not _initial(text.split()[-1] if text.split() else ""):
        text = text[:-1]
    if not text or text.lower() in _ANONYMOUS:
        return (), et_al, elided
    plain = not re.search(r"[,;&]|\band\b", text)
    words = text.split()
    initials = any(_initial(w) for w in words[:-1]) or any(
        _initial(w) or _VANCOUVER_INITIALS.match(w) for w in words[1:]
    )
    if plain and (len(words) == 1 or not initials):
        # A corporate author ("World Health Organization", "WHO", "ASTM"): one name, whole.
        return (Author(text.strip(" .")),), et_al, elided
    # Chunks between separators; after ";", "&" or "and" a new author starts for sure.
    chunks: list[tuple[str, bool]] = []
    for part, sep in _split_keep(text):
        if part.strip(" .,"):
            chunks.append((part.strip(), sep))
    out: list[Author] = []
    i = 0
    while i < len(chunks):
        chunk, _ = chunks[i]
        nxt = chunks[i + 1] if i + 1 < len(chunks) else None
        if chunk.lower().rstrip(".") + "." in _SUFFIXES or chunk.lower() in _SUFFIXES:
            i += 1
            continue
        words = chunk.split()
        bare_family = not any(_initial(w) for w in words) and not (
            len(words) >= 2 and _VANCOUVER_INITIALS.match(words[-1])
        )
        pairs = nxt is not None and not nxt[1] and bare_family
        if (
            pairs
            and nxt is not None
            and (
                _is_initials(nxt[0])
                or (i == 0 and "&" not in text and _family_like(words) and _is_given(nxt[0]))
            )
        ):
            # "Jones, R. W." (APA, Harvard), "Jones, Roger W." (first author in MLA, Chicago)
            out.append(Author(chunk, nxt[0]))
            i += 2
            continue
        author = _one_name(words)
        if author is not None:
            out.append(author)
        i += 1
    return tuple(out), et_al, elided


def _family_like(words: list[str]) -> bool:
    """One family name, maybe with particles: "Lou", "van der Berg", "Gröschel-Stewart"."""
    core = [w for w in words if w.lower() not in _PARTICLES]
    return len(core) == 1


def _split_keep(text: str) -> list[tuple[str, bool]]:
    """Split on "," ";" "&" "and"; each chunk says whether a hard separator preceded it."""
    out: list[tuple[str, bool]] = []
    hard = False
    pos = 0
    for m in re.finditer(r"\s*(?:(;)|(,)\s*(?:(&|\band\b)\s*)?|\s(&|\band\b)\s*)", text):
        out.append((text[pos : m.start()], hard))
        hard = bool(m.group(1) or m.group(3) or m.group(4))
        pos = m.end()
    out.append((text[pos:], hard))
    return out


def _one_name(words: list[str]) -> Author | None:
    """One name without a comma: "R. W. Jones", "Ralph H. Staley", "Jones RW", "Jian Pan"."""
    while words and words[-1].lower() in _SUFFIXES:
        words = words[:-1]
    words = [w for w in words if w.lower() not in _CONNECTOR_WORDS]
    if not words:
        return None
    if len(words) == 1:
        w = words[0].strip(".")
        if not w or _initial(words[0]) or w.lower() in _ANONYMOUS:
            return None
        return Author(w) if w[0].isalpha() else None
    if _VANCOUVER_INITIALS.match(words[-1]) and not _initial(words[0]):
        # Vancouver "Jones RW", "OWEN WJB", "de Reuck J"
        return Author(" ".join(words[:-1]), words[-1])
    k = len(words)
    while k > 0 and _initial(words[k - 1]):
        k -= 1
    if 0 < k < len(words) and not _initial(words[0]):
        # "Jones R. W.", "v. Thurzó E." (family first, initials after)
        return Author(" ".join(words[:k]), " ".join(words[k:]))
    # Given names first: the family starts after the last initial, or at the last word with its
    # particles ("R. W. Jones", "Ralph H. Staley", "S. Van Lierde", "Ludwig van Beethoven").
    last_initial = max((k for k, w in enumerate(words) if _initial(w)), default=-1)
    if 0 <= last_initial < len(words) - 1:
        start = last_initial + 1
    else:
        start = len(words) - 1
        while start > 0 and words[start - 1].islower() and words[start - 1] in _PARTICLES:
            start -= 1
    family = " ".join(words[start:]).strip(" .")
    if not family:
        return None
    return Author(family, " ".join(words[:start]))


# --- BibTeX -----------------------------------------------------------------------------------


def bibtex_entries(text: str, *, bibliographic_only: bool = False) -> list[str]:
    """The entries of a .bib file, each as a standalone BibTeX string.

    Read by bibtexparser: ``@string`` macros are expanded, ``@comment`` and ``@preamble`` are
    not entries, and an "@" inside a field (an e-mail address) is just text. With
    ``bibliographic_only``, fields that do not describe the work (abstract, note, file, ...) are
    left out.
    """
    import bibtexparser  # noqa: PLC0415 - only BibTeX input needs it
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry  # noqa: PLC0415

    library = bibtexparser.parse_string(text)  # type: ignore[attr-defined]
    out = []
    for block in library.blocks:
        if isinstance(block, Entry):
            entry, values = block, [(f.key, str(f.value)) for f in block.fields]
        elif isinstance(block, DuplicateBlockKeyBlock) and isinstance(
            block.ignore_error_block, Entry
        ):
            # A second entry with a key already used is still a reference of the list; the
            # parser left its values raw (braces or quotes around them, macros unexpanded).
            entry = block.ignore_error_block
            values = [(f.key, _unbraced(str(f.value))) for f in entry.fields]
        else:
            continue
        if bibliographic_only:
            values = [(k, v) for k, v in values if k.lower() not in _NON_BIBLIOGRAPHIC]
        fields = ",\n".join(f"  {key} = {{{value}}}" for key, value in values)
        out.append(f"@{entry.entry_type}{{{entry.key},\n{fields}\n}}")
    return out


def _unbraced(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and (value[0], value[-1]) in {("{", "}"), ('"', '"')}:
        return value[1:-1]
    return value


def split_reference_list(
    text: str, *, bibtex: bool = False, bibliographic_only: bool = False
) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """The references of a list with their numbers, and the lines skipped (number, reason, text).

    BibTeX (``bibtex=True``) is read by bibtexparser (``@string``, ``@comment``, ``@preamble`` and
    an "@" inside a field are not entries); other text has one reference a line, and headings,
    rules and page footers are skipped with the reason (issue 10). ``bibliographic_only`` drops
    the fields that do not describe the work (abstract, keywords, file, note, ...).
    """
    if bibtex:
        entries = bibtex_entries(text, bibliographic_only=bibliographic_only)
        return list(enumerate(entries, 1)), []
    references: list[tuple[int, str]] = []
    skipped: list[tuple[int, str, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if (reason := junk_line(line)) is not None:
            skipped.append((number, reason, line))
        else:
            references.append((number, line))
    return references, skipped


def parse_bibtex(text: str) -> ParsedCitation:
    """Parse one BibTeX entry (with bibtexparser).

    Raises:
        InputError: the text holds no BibTeX entry, or its bibliographic fields are longer than
            1,200 characters.
    """
    if len(text) > MAX_BIBTEX_CHARS:
        msg = f"a BibTeX entry is at most {MAX_BIBTEX_CHARS:,} characters, got {len(text):,}"
        raise InputError(msg, path="reference")
    import bibtexparser  # noqa: PLC0415 - only BibTeX input needs it

    library = bibtexparser.parse_string(text)  # type: ignore[attr-defined]
    if not library.entries:
        msg = "no BibTeX entry could be read from the reference"
        raise InputError(msg, path="reference")
    entry = library.entries[0]
    fields = {f.key.lower(): str(f.value) for f in entry.fields}
    size = sum(len(k) + len(v) for k, v in fields.items() if k not in _NON_BIBLIOGRAPHIC)
    if size > MAX_REFERENCE_CHARS:
        msg = (
            f"a reference is at most {MAX_REFERENCE_CHARS:,} characters, got {size:,} "
            "(bibliographic fields of the BibTeX entry)"
        )
        raise InputError(msg, path="reference")

    def clean(value: str | None) -> str | None:
        if not value:
            return None
        return " ".join(re.sub(r"[{}]", "", value).split()) or None

    authors: list[Author] = []
    for name in _bibtex_names(fields.get("author") or ""):
        if name.startswith("{") and name.endswith("}"):
            # "{World Health Organization}": braces keep a corporate name whole.
            corporate = clean(name)
            if corporate:
                authors.append(Author(corporate))
            continue
        plain = clean(name) or ""
        if not plain or plain.lower() == "others":
            continue
        if "," in plain:
            family, _, given = plain.partition(",")
            # "von Last, Jr, First": the given names are after the last comma.
            given = given.rpartition(",")[2] if given.count(",") else given
            if family.strip():
                authors.append(Author(family.strip(), given.strip()))
            continue
        one = _one_name(plain.split())
        if one is not None:
            authors.append(one)
    year_match = re.search(r"(?:1[5-9]|20)\d{2}", fields.get("year", "") or fields.get("date", ""))
    doi = clean(fields.get("doi"))
    return ParsedCitation(
        raw=text,
        title=_clean_title(clean(fields.get("title"))),
        authors=tuple(authors),
        et_al="others" in (fields.get("author") or "").split(),
        year=int(year_match.group()) if year_match else None,
        venue=clean(fields.get("journal") or fields.get("booktitle") or fields.get("publisher")),
        doi=doi.lower() if doi else None,
        url=clean(fields.get("url")),
        style="bibtex",
        volume=clean(fields.get("volume")),
        issue=clean(fields.get("number") or fields.get("issue")),
        pages=(clean(fields.get("pages")) or "").replace("--", "-") or None,
    )


def _bibtex_names(value: str) -> list[str]:
    """Split a BibTeX author field on " and " outside braces."""
    names: list[str] = []
    depth = start = 0
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif depth == 0 and value.startswith(" and ", i):
            names.append(value[start:i].strip())
            start = i + 5
            i += 5
            continue
        i += 1
    names.append(value[start:].strip())
    return [n for n in names if n]
