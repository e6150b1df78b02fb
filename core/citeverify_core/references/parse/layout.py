"""Where a reference's title, venue and numeric tail (volume, issue, pages, year) are."""

from __future__ import annotations

import re

from citeverify_core.references.parse.authors import _initial, _namey
from citeverify_core.references.parse.clues import (
    _ANONYMOUS,
    _EDITOR_LIST,
    _MONTH,
    _PUBLISHER_PLACE,
    _SPLIT,
    _TAIL,
    _YEAR,
    _YEAR_PAREN,
    _Numbers,
    _Titleless,
)

__all__: list[str] = []  # used by the parser's modules only


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
    Chem. 86 (1982) 1669." Matching them is the index's work (first author, year,
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
    for m in re.finditer(r"(?:^|,?\s+)\(?((?:1[5-9]|20)\d{2})[a-z]?\)?[.,]\s+", body[:900]):
        before = body[: m.start()]
        if not before or _namey(before) or before.strip(" .").lower() in _ANONYMOUS:
            # (Nothing before the year: no authors, "1992. Oral contraceptives. Venue, 3, 10.")
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

    The names, a year or nothing come before it, or the end of a sentence. A year closed by a
    period ("... Sauers. 2016. “Title.”", Chicago) ends a sentence even when the names before it
    cannot be read ("tyler Keshel", "Rydygier. 1881.").
    """
    if re.search(r"(?:^|[.,]\s)(?:1[5-9]|20)\d{2}[a-z]?\.$", before.strip()):
        return True
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


#: A designator in brackets at the end of a title, not part of it: "[Internet]", "[Doctoral
#: dissertation, Harvard University]", "[Data set]", "[Abstract]" (up to 3 words, or opening
#: with a designator word). A longer bracket is a translated title and stays ("Cotinin
#: [Biomonitoring methods in German language, 2002]"): a typo in it is a typo of the title.
TITLE_DESIGNATOR = re.compile(
    r"\s*\[(?:[^\[\]\s]+(?:\s[^\[\]\s]+){0,2}|(?:doctoral|master|dissertation|thesis|internet"
    r"|data|computer|video|audio|podcast|editorial|letter|abstract|review|preprint|online|poster"
    r"|film|lecture|unpublished|conference|paper|in\s)[^\[\]]*)\]\.?$",
    re.I,
)


def _clean_title(title: str | None) -> str | None:
    if title is None:
        return None
    title = title.strip(' ,;:"“”‘’')
    title = TITLE_DESIGNATOR.sub("", title)  # "[Doctoral dissertation]", "[Internet]"
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
        if re.search(r"(?:\bpp?|\b[Vv]ol|\b[Nn]o|\b[Nn]r|\b[Aa]rt)\.?\s*$|\):\s?$", before):
            continue  # "pp. 1735", "p. 2001", "vol. 1999", "no. 2004", MLA's "(2004): 2094"
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
    # The period of a last initial stays: "Mayo Robson, A.W. 1887." -> "Mayo Robson, A.W."
    return re.sub(
        r"(?:(?<!\b[^\W\d_])[.,]|(?<=\b[^\W\d_]),)?\s*(?:1[5-9]|20)\d{2}[a-z]?\.?\s*$",
        "",
        text.strip(),
    )


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
