"""Parse a reference string into title, authors, year, venue, DOI and URL.

Styles: APA, Harvard, MLA, Chicago, Vancouver, IEEE, numbered lists, bare DOIs or URLs, BibTeX.

No maintained Python parser covers these styles without a model, so this is ours: a few cheap
clues (a quoted title, a parenthesized year, the first sentence of author names) decide the
layout, and a field the parser had to guess is listed in ``ParsedReference.unsure``.
"""

from __future__ import annotations

import re
import unicodedata

from citeverify._errors import InputError
from citeverify._extract import extract_academic, extract_urls
from citeverify.references._model import Author, ParsedReference

__all__ = ["MAX_REFERENCE_CHARS", "parse_bibtex", "parse_reference"]

#: The seed's limit on one reference string.
MAX_REFERENCE_CHARS = 1200

_NUMBERING = re.compile(r"^\s*(?:\[\d{1,4}\]|\d{1,4}[.)]|\(\d{1,4}\))\s+")
_YEAR_PAREN = re.compile(
    r"\((?P<year>(?:1[5-9]|20)\d{2})[a-z]?(?:,[^)]{0,30})?\)|\((?P<nd>n\.\s?d\.|in press)\)", re.I
)
_YEAR_ANY = re.compile(r"(?<![\d/.])(?P<year>(?:1[5-9]|20)\d{2})[a-z]?(?![\d/])")
_QUOTED = re.compile(r"[\"“”](?P<title>[^\"“”]{3,400}?)[,.?!]?[\"“”]")
_ET_AL = re.compile(r"\bet\.?\s+al\.?", re.I)
# A sentence end: a period, ? or ! followed by a space, not after an initial ("T. S."), nor
# inside "et al." or "Vol.".
_SENTENCE_END = re.compile(r"(?<!\b[A-Z])(?<!\bet al)(?<!\bVol)(?<!\bno)(?<!\bpp)[.?!](?=\s+|$)")
_DOI_TAIL = re.compile(r"\s*(?:doi:|https?://\S+|DOI\s*:?).*$", re.I)
_PAGES = re.compile(r"\b(?:pp?\.\s*)?\d+\s*[-–]\s*\d+\b")
_INITIALS = re.compile(r"^(?:[A-Z]\.?-?\s?){1,4}$")
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'’\-]*", re.UNICODE)
# Candidate sentence ends for "Authors. Title. Venue" layouts, initials included: which pieces
# are names is decided afterwards by _namey().
_SEGMENT_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9\"“(\[])")
_TRAILING_YEAR = re.compile(r"[,\s]\s*\(?((?:1[5-9]|20)\d{2})[a-z]?\)?$")
_BARE_YEAR = re.compile(r"^\(?(?:1[5-9]|20)\d{2}[a-z]?\)?\.?$")
_CONNECTORS = {"and", "&", "et", "al", "al.", "et.", "jr", "jr.", "sr", "sr."}
_PARTICLES = {
    "van",
    "von",
    "der",
    "den",
    "de",
    "del",
    "della",
    "di",
    "da",
    "du",
    "le",
    "la",
    "dos",
    "v.",
}


def parse_reference(text: str) -> ParsedReference:
    """Parse one reference string.

    Raises:
        InputError: the reference is not a string, is empty, or is longer than 1,200 characters.
    """
    if not isinstance(text, str):
        msg = f"a reference must be a string, got {type(text).__name__}"
        raise InputError(msg, path="reference")
    raw = text
    text = unicodedata.normalize("NFC", " ".join(text.split()))
    if not text:
        raise InputError("a reference must not be empty", path="reference")
    if len(raw) > MAX_REFERENCE_CHARS:
        msg = f"a reference is at most {MAX_REFERENCE_CHARS:,} characters, got {len(raw):,}"
        raise InputError(msg, path="reference")
    if text.lstrip().startswith("@"):
        return parse_bibtex(text)
    text = _NUMBERING.sub("", text)

    doi = url = None
    for found in extract_academic(text):
        if found.kind == "doi":
            doi = found.normalized
            break
    urls = extract_urls(text)
    if urls:
        url = urls[0].text
    body = _DOI_TAIL.sub("", text) if (doi or url) else text
    body = body.strip().rstrip(".")
    if not body or (doi and len(body) < 8):
        return ParsedReference(raw=raw, doi=doi, url=url, style="identifier")

    unsure: set[str] = set()
    et_al = bool(_ET_AL.search(body))
    quoted = _QUOTED.search(body)
    paren = _YEAR_PAREN.search(body)
    if quoted:  # MLA, IEEE, Chicago, Harvard with quotes
        style = "quoted"
        title = quoted.group("title").strip()
        authors_part = body[: quoted.start()]
        rest = body[quoted.end() :]
        year = _year(paren) if paren else _last_year(rest) or _last_year(authors_part)
        authors_part = _YEAR_PAREN.sub("", authors_part)
        authors_part = re.sub(r"[.,]?\s*(?:1[5-9]|20)\d{2}[a-z]?\.?\s*$", "", authors_part.strip())
        venue = _venue(rest)
    elif paren and (paren.start() < len(body) // 2 or _namey(body[: paren.start()])):
        # APA, Harvard: "Authors (Year). Title. Venue" (a long author list may pass mid-string)
        style = "author-date"
        year = _year(paren)
        authors_part = body[: paren.start()]
        after = body[paren.end() :].lstrip(" .,:")
        title, rest = _first_sentence(after)
        venue = _venue(rest)
    else:  # Vancouver, Chicago notes, plain: "Authors. Title. Venue ..."
        style = "sentences"
        # Deposited strings often lose the space after a period ("et al.Short", "design.Eur").
        spaced = re.sub(r"(\bet al\.|[a-z]{2}\.|\b[A-Z]{1,3}\.)(?=[A-Z][a-z])", r"\1 ", body)
        segments = [s.strip() for s in _SEGMENT_END.split(spaced) if s.strip()]
        # "Authors: Title. Venue" (a colon after the names, common in Springer journals).
        head, colon, tail = segments[0].partition(": ") if segments else ("", "", "")
        if colon and _namey(head.replace(";", ",")) and tail:
            segments[:1] = [head, tail]
        n_names = 0
        year = None
        names: list[str] = []
        while n_names < len(segments) - 1:
            # "Dentler, R. and Hafner, A., 1997" / "Gottlieb, J.;Leyser, Y. 1981": a year may
            # close the author list (Harvard without parentheses).
            seg = segments[n_names].rstrip(".")
            tail = _TRAILING_YEAR.search(seg)
            core = seg[: tail.start()] if tail else seg
            if not _namey(core.replace(";", ",")):
                break
            names.append(core)
            n_names += 1
            if tail:
                year = int(tail.group(1))
                break
        if year is None and n_names < len(segments) - 1 and _BARE_YEAR.match(segments[n_names]):
            year = int(segments[n_names][:4])  # "Authors. 1981. Title."
            n_names += 1
        authors_part = ". ".join(names)
        title = segments[n_names] if n_names < len(segments) else None
        rest = ". ".join(segments[n_names + 1 :])
        venue = _venue(rest)
        year = year or _last_year(rest) or _last_year(body)
        if not n_names:
            unsure.add("authors")
        unsure.add("title")
    authors = _authors(authors_part)
    if title is None:
        unsure.add("title")
    if year is None and not (paren and paren.group("nd")):
        unsure.add("year")
    return ParsedReference(
        raw=raw,
        title=_clean_title(title),
        authors=authors,
        et_al=et_al,
        year=year,
        venue=venue,
        doi=doi,
        url=url,
        style=style,
        unsure=frozenset(unsure),
    )


def _year(m: re.Match[str] | None) -> int | None:
    if m is None or not m.group("year"):
        return None
    return int(m.group("year"))


def _last_year(text: str) -> int | None:
    years = [int(m.group("year")) for m in _YEAR_ANY.finditer(text)]
    return years[-1] if years else None


def _first_sentence(text: str) -> tuple[str | None, str]:
    text = text.strip()
    if not text:
        return None, ""
    m = _SENTENCE_END.search(text)
    if m is None:
        return text, ""
    head = text[: m.end() if text[m.start()] in "?!" else m.start()].strip()
    return head or None, text[m.end() :].strip()


def _venue(rest: str) -> str | None:
    rest = rest.strip(" .,;:")
    rest = re.sub(r"^(?:in:?\s+)", "", rest, flags=re.I)
    if not rest:
        return None
    # The venue ends at the first volume, number, page, year or publisher detail.
    cut = re.split(
        r",\s*(?:vol\.|no\.|pp?\.|\d)|\.\s+(?:\d|vol|pp)|\s+\d+\s*\(|;\s*\d|\s+(?:1[5-9]|20)\d{2}\b|,\s*(?:1[5-9]|20)\d{2}|\(\d|\.\s*$",
        rest,
        maxsplit=1,
        flags=re.I,
    )
    venue = cut[0].strip(" .,;:")
    venue = re.sub(r"^[A-Z][\w .]+:\s+(?=\S)", "", venue)  # "Chicago: University of Chicago Press"
    return venue or None


def _clean_title(title: str | None) -> str | None:
    if title is None:
        return None
    title = title.strip(' .,;:"“”')
    title = re.sub(r"\s*\[[^\]]*\]$", "", title)  # "[Doctoral dissertation]", "[Internet]"
    return title or None


def _namey(segment: str) -> bool:
    """Whether a segment reads as a list of names.

    Only capitalized words, initials, particles and connectors, with a comma, an initial or an
    "and" somewhere.
    """
    words = segment.rstrip(".").replace(",", " ").split()
    if not words or len(words) > 150:
        return False
    for w in words:
        bare = w.strip(".")
        if w.lower() in _CONNECTORS or w.lower() in _PARTICLES or _INITIALS.match(w):
            continue
        if not bare or not (bare[0].isupper() and bare[0].isalpha()):
            return False
    return (
        "," in segment
        or any(_INITIALS.match(w) for w in words)
        or any(w.lower() in {"and", "&"} for w in words)
    )


def _authors(text: str | None) -> tuple[Author, ...]:
    if not text:
        return ()
    text = _ET_AL.sub("", text).strip(" ,;&")
    if text.endswith(".") and not _INITIALS.match(text.split()[-1]):
        text = text[:-1]
    words = text.replace(",", " ").split()
    plain = "," not in text and "&" not in text and " and " not in text
    if plain and (len(words) == 1 or not any(_INITIALS.match(w) for w in words)):
        # A corporate author ("World Health Organization", "WHO", "ASTM"): one name, whole.
        return (Author(text.strip(" .")),) if text.strip(" .") else ()
    text = re.sub(r"\s*\((?:eds?\.?|editors?)\)\s*", " ", text, flags=re.I)
    if not text:
        return ()
    parts = [p.strip() for p in re.split(r"\s*(?:;|&|\band\b)\s*", text) if p.strip(" ,.")]
    authors: list[Author] = []
    for part in parts:
        authors.extend(_names(part.strip(" ,")))
    return tuple(authors)


def _names(part: str) -> list[Author]:
    """One chunk between separators: "Kuhn, T. S.", "Suresh MR, Milstein C", "T. S. Kuhn"."""
    pieces = [p.strip() for p in part.split(",") if p.strip()]
    out: list[Author] = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        words = piece.split()
        if len(words) >= 2 and _INITIALS.match(words[0]) and not _INITIALS.match(words[-1]):
            # "A. Vaswani" (IEEE): given names first
            out.append(Author(" ".join(words[1:]), words[0]))
            i += 1
            continue
        if nxt is not None and (
            _INITIALS.match(nxt)
            or (len(nxt.split()) <= 2 and len(words) <= 3 and not _INITIALS.match(words[-1]))
        ):
            # "Family, Given" (APA, MLA first author, Chicago)
            out.append(Author(piece, nxt))
            i += 2
            continue
        if len(words) >= 2 and _INITIALS.match(words[-1]) and words[-1].isupper():
            # Vancouver "Suresh MR"
            out.append(Author(" ".join(words[:-1]), words[-1]))
        elif len(words) >= 2:
            # "T. S. Kuhn", "Thomas Kuhn", "Ludwig van Beethoven"
            family_start = len(words) - 1
            while family_start > 0 and words[family_start - 1].lower() in _PARTICLES:
                family_start -= 1
            out.append(Author(" ".join(words[family_start:]), " ".join(words[:family_start])))
        elif words and _NAME_TOKEN.match(words[0]):
            out.append(Author(words[0]))
        i += 1
    return [a for a in out if a.family and not _INITIALS.match(a.family)]


def parse_bibtex(text: str) -> ParsedReference:
    """Parse one BibTeX entry (with bibtexparser).

    Raises:
        InputError: the text holds no BibTeX entry.
    """
    import bibtexparser  # noqa: PLC0415 - only BibTeX input needs it

    library = bibtexparser.parse_string(text)  # type: ignore[attr-defined]
    if not library.entries:
        msg = "no BibTeX entry could be read from the reference"
        raise InputError(msg, path="reference")
    entry = library.entries[0]
    fields = {f.key.lower(): str(f.value) for f in entry.fields}

    def clean(value: str | None) -> str | None:
        return re.sub(r"[{}]", "", value).strip() if value else None

    authors = tuple(
        Author(*(p.strip() for p in name.split(",", 1))) if "," in name else _names(name.strip())[0]
        for name in re.split(r"\s+and\s+", clean(fields.get("author")) or "")
        if name.strip() and name.strip().lower() != "others"
    )
    year_match = re.search(r"\d{4}", fields.get("year", ""))
    doi = fields.get("doi")
    return ParsedReference(
        raw=text,
        title=clean(fields.get("title")),
        authors=authors,
        et_al="others" in (fields.get("author") or ""),
        year=int(year_match.group()) if year_match else None,
        venue=clean(fields.get("journal") or fields.get("booktitle") or fields.get("publisher")),
        doi=doi.lower() if doi else None,
        url=fields.get("url"),
        style="bibtex",
    )
