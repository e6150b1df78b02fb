"""Compare a parsed reference with a candidate record, field by field, and decide a status.

Every threshold is here, in one place, with its reason.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from citeverify_core.references.folding import _CONTROLS, TAGS
from citeverify_core.references.folding import fold as _fold_uncached
from citeverify_core.references.model import (
    FIELDS,
    Author,
    FieldLabel,
    ParsedReference,
    Record,
    Status,
)
from citeverify_core.references.parse.authors import _authors as read_authors
from citeverify_core.references.parse.authors import _namey
from citeverify_core.references.parse.clues import _NUMBERING
from citeverify_core.references.parse.layout import (
    TITLE_DESIGNATOR,
    _clean_venue,
    _pick_year,
    _split_tail,
    _strip_trailing_year,
    _years,
)

__all__ = ["Comparison", "FieldComparison", "compare", "decide"]

#: ``fold`` memoized: in a batch the same names, venues and titles come back (fold was a
#: quarter of the verifier's time; bench/bench_references.py, benchmark if changing).
fold = functools.lru_cache(maxsize=1 << 16)(_fold_uncached)

#: Title similarity (rapidfuzz ratio, 0-100, on normalized text) for MATCH_WITH_TYPO.
TITLE_TYPO = 90
#: A title shorter than this is never a typo of another (edits, see _few_edits).
TITLE_TYPO_MIN_CHARS = 5
#: A title at least this long, that is the start of (or contained in) the record's title, is
#: CONTAINS (a title without its subtitle).
TITLE_CONTAINED_MIN_CHARS = 15
#: A title at least this long, found with a typo inside the other title (rapidfuzz
#: partial_ratio >= TITLE_TYPO), is CONTAINS.
TITLE_PARTIAL_MIN_CHARS = 25
#: Author surname similarity for a misspelled surname (MATCH_WITH_TYPO).
AUTHOR_TYPO = 80
#: Venue similarity for MATCH_WITH_TYPO.
VENUE_TYPO = 88
#: A candidate whose title scores below this (token_set_ratio) is not the cited work at all.
CANDIDATE_MIN_TITLE = 60
#: Two candidates whose scores differ by less than this are ambiguous (needs-human).
AMBIGUITY_MARGIN = 0.05

_WEIGHTS = {"title": 0.45, "authors": 0.25, "year": 0.1, "venue": 0.1, "identifier": 0.1}
_LABEL_SCORE = {
    "MATCH": 1.0, "MATCH_WITH_TYPO": 0.85, "CONTAINS": 0.7, "ABSENT": 0.5,
    "UNCONFIRMED": 0.5, "CONTRADICTION": 0.0,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class FieldComparison:
    """One field of one candidate: the label and why."""

    field: str
    label: FieldLabel
    citation_value: object
    candidate_value: object
    reasoning: str


@dataclass(frozen=True, slots=True)
class Comparison:
    """All five fields of one candidate, with an overall score in [0, 1]."""

    record: Record
    fields: tuple[FieldComparison, ...]
    score: float

    def label(self, name: str) -> FieldLabel:
        """The label of one field."""
        return next(f.label for f in self.fields if f.field == name)

    def count(self, *labels: str) -> int:
        """How many fields carry one of ``labels``."""
        return sum(1 for f in self.fields if f.label in labels)


def compare(ref: ParsedReference, record: Record) -> Comparison:
    """Label each field of ``record`` against what ``ref`` says.

    When the record's whole title is in the reference string but the parser cut the title
    elsewhere (a title with sentences of its own, a review's title with its book's details, a
    title run into the venue), the string is read again around the record's title: see
    :func:`_reanchored`.
    """
    title = _title(ref.title, record.title, record.venue)
    if title.label in {"CONTAINS", "MATCH_WITH_TYPO"} and record.title:
        reread = _reanchored(ref, record)
        if reread is not None:
            ref = reread
            title = FieldComparison(
                "title",
                "MATCH",
                title.citation_value,
                record.title,
                "the record's title is in the reference whole (the reference was read again "
                "around it)",
            )
    fields = (
        title,
        _authors(ref, record),
        _year(ref.year, record.year),
        _venue(ref.venue, record.venue),
        _identifier(ref, record),
    )
    score = sum(_WEIGHTS[f.field] * _LABEL_SCORE[f.label] for f in fields)
    return Comparison(record, fields, round(score, 4))


#: A designator in brackets at the end of a title ("[Internet]", "[Doctoral dissertation]"):
#: the parser drops it from the cited title, so the record's title is compared without it too.
_TRAILING_BRACKET = TITLE_DESIGNATOR
#: Where a title can begin or end in a reference string: its start or end, punctuation, a quote.
_TITLE_EDGE_BEFORE = re.compile(r"(?:^|[\s.,;:“\"‘(\]])$")
_TITLE_EDGE_AFTER = re.compile(r"^\s*(?:$|[.,;:?!”\"’)\[])")


def _title_form(title: str) -> str:
    """A title as compared: markup and a trailing bracketed part removed, folded."""
    title = TAGS.sub("", title)
    bare = _TRAILING_BRACKET.sub("", title)
    return fold(bare if bare.strip() else title)


def _folded_with_positions(text: str) -> tuple[str, list[int]]:
    """``text`` folded as :func:`fold` does, with each folded character's index in ``text``.

    Character by character; punctuation becomes a space.
    """
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if _CONTROLS.match(ch):
            continue
        for c in unicodedata.normalize("NFKD", ch.casefold()):
            if unicodedata.combining(c):
                continue
            out.append(c if c.isalnum() else " ")
            where.append(i)
    return "".join(out), where


def _reanchored(ref: ParsedReference, record: Record) -> ParsedReference | None:
    """``ref`` read again around the record's title, when that title is in the string whole.

    The parser guesses where a title ends (at a sentence's end, a quote, a year); a title with
    sentences inside ("Book Review: Title. Place: Publisher, 1990. 100 pp."), a period in a
    parenthesis ("(Adv. Funct. Mater. 19/2010)") or names it failed to read puts the boundary
    elsewhere, and the title looks shortened (CONTAINS) or longer than the record's. If the
    record's whole title (at least 15 characters) stands in the string between punctuation, the
    venue is what follows it, and, when the parser read no authors, the authors what precedes
    it. A cited title longer than the record's is read so only if the venue that follows agrees
    with the record's: "Introduction to algebra. Venue" is not the record "Introduction".
    A misspelled title, a wrong word, or a title missing its subtitle is not in the string
    whole, so its error stays.
    """
    assert record.title is not None
    wanted = fold(TAGS.sub("", record.title))
    cited = fold(TAGS.sub("", ref.title or ""))
    if len(wanted) < TITLE_CONTAINED_MIN_CHARS or not ref.raw:
        return None
    text = " ".join(TAGS.sub("", ref.raw).split())
    folded, where = _folded_with_positions(text)
    pattern = r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, wanted.split())) + r"(?![^\W_])"
    m = re.search(pattern, folded)
    if m is None:
        return None
    start, end = where[m.start()], where[m.end() - 1] + 1
    before, after = text[:start], text[end:]
    if not _TITLE_EDGE_BEFORE.search(before) or not _TITLE_EDGE_AFTER.match(after):
        return None
    venue_text, _ = _split_tail(re.sub(r"^[\s.,;:?!”\"’)\]]+", "", after))
    venue_text = re.sub(r"^(?:in:?|in\s+proc\w*\.?\s+of)\s+", "", venue_text or "", flags=re.I)
    venue = _clean_venue(venue_text)
    longer = len(cited) > len(wanted)
    if longer and (not record.venue or not venue or not _same_venue(venue, record.venue)):
        return None
    # The year next to the authors (APA, Harvard, Chicago), else the first after the title
    # (Vancouver "Venue. 1992;89(2):300", IEEE, MLA); never one inside the title.
    year = ref.year
    if years_before := _years(before):
        year = years_before[-1]
    elif (found := _pick_year(after, prefer_last=False)) is not None:
        year = found
    authors, et_al = ref.authors, ref.et_al
    folded_before = fold(before)
    if not authors or any(fold(a.family) not in folded_before for a in authors if fold(a.family)):
        # No names read, or names read from the title itself (a review's title opens with the
        # reviewed book's authors: "Palissa A. Schmid, G. H., Radunz, A. (1993): Title ...").
        names = _strip_trailing_year(_NUMBERING.sub("", before, count=1)).strip(' .,;:“"‘(')
        if names and _namey(names):
            authors, et_al, _ = read_authors(names)
    return replace(ref, title=record.title, venue=venue, authors=authors, et_al=et_al, year=year)


def _same_venue(cited: str, found: str) -> bool:
    """Whether two venues are the same, in full, abbreviated or misspelled.

    Not a part of it: "Sea coast studies. Ocean Letters" after a title is not "Ocean Letters".
    """
    a, b = fold(cited), fold(found)
    return (
        a == b
        or _venue_words(a) == _venue_words(b)
        or _abbreviates(a, b)
        or _abbreviates(b, a)
        or fuzz.ratio(a, b) >= VENUE_TYPO
    )


def _absent(name: str, candidate: object) -> FieldComparison:
    return FieldComparison(name, "ABSENT", None, candidate, f"the reference gives no {name}")


def _unconfirmed(name: str, value: object) -> FieldComparison:
    return FieldComparison(name, "UNCONFIRMED", value, None, f"the candidate has no {name}")


def _title(cited: str | None, found: str | None, venue: str | None = None) -> FieldComparison:
    if not cited:
        return _absent("title", found)
    if not found:
        return _unconfirmed("title", cited)
    a, b = _title_form(cited), _title_form(found)
    if venue and a.startswith(b + " ") and fold(venue).startswith(a[len(b) + 1 :]):
        # The start of a venue with a period inside ("Acta Radiologica. Diagnosis") was read as
        # the end of the title: the record shows where the title ends.
        a = b
    if a == b:
        return FieldComparison(
            "title", "MATCH", cited, found, "titles are identical after normalization"
        )
    ratio = fuzz.ratio(a, b)
    if ratio >= TITLE_TYPO or _few_edits(a, b):
        return FieldComparison(
            "title",
            "MATCH_WITH_TYPO",
            cited,
            found,
            f"titles differ by a few characters ({ratio:.0f}% similar)",
        )
    if len(a) >= TITLE_CONTAINED_MIN_CHARS and (b.startswith(a) or a in b or b in a):
        return FieldComparison(
            "title",
            "CONTAINS",
            cited,
            found,
            "one title is contained in the other (subtitle or truncation)",
        )
    shorter = min(len(a), len(b))
    if shorter >= TITLE_PARTIAL_MIN_CHARS and fuzz.partial_ratio(a, b) >= TITLE_TYPO:
        return FieldComparison(
            "title",
            "CONTAINS",
            cited,
            found,
            "one title is contained in the other, with a typo (subtitle or extra words)",
        )
    return FieldComparison(
        "title", "CONTRADICTION", cited, found, f"titles differ ({ratio:.0f}% similar)"
    )


def _few_edits(a: str, b: str) -> bool:
    """A typo in a short title, which TITLE_TYPO misses ("Ripotse" / "Riposte": 86% similar).

    One edit (a transposition counts as one) in 5-9 characters, two from 10.
    """
    shorter = min(len(a), len(b))
    if shorter < TITLE_TYPO_MIN_CHARS:
        return False
    return OSA.distance(a, b, score_cutoff=2) <= (1 if shorter < 10 else 2)


def _same_name(cited: str, found: str) -> int:
    """2: the same family name, 1: a misspelling of it, 0: another name.

    Compound and particle names match on their words ("van lierde" / "lierde",
    "galan puchades" / "galan-puchades", "fuentes i ferrer" / "ferrer").
    """
    if cited == found:
        return 2
    a, b = cited.split(), found.split()
    if a and b and (set(a) <= set(b) or set(b) <= set(a)):
        return 2
    if cited.replace(" ", "") == found.replace(" ", ""):
        return 2
    return 1 if fuzz.ratio(cited, found) >= AUTHOR_TYPO else 0


def _authors(ref: ParsedReference, record: Record) -> FieldComparison:
    """Names and their order.

    "A, B" cited for "B, A" is an error, like a dropped or an added author; "et al." and APA's
    "A, B, ... Z" elision are not.
    """
    cited, found = _families(ref.authors), _families(record.authors)
    shown_cited = [a.family for a in ref.authors]
    shown_found = [str(a) for a in record.authors]
    if not cited:
        return _absent("authors", shown_found)
    if not found:
        return _unconfirmed("authors", shown_cited)

    def field(label: FieldLabel, why: str) -> FieldComparison:
        return FieldComparison("authors", label, shown_cited, shown_found, why)

    # Which record name each cited name is (the best one, exact before a typo).
    unknown: list[str] = []
    typos: list[tuple[str, str]] = []
    bests: list[int] = []
    exact = set(found)
    for name in cited:
        if name in exact:  # the common case, without a fuzzy comparison per name
            bests.append(2)
            continue
        scores = [_same_name(name, f) for f in found]
        best = max(scores)
        bests.append(best)
        if best == 0:
            unknown.append(name)
        elif best == 1:
            typos.append((name, found[scores.index(1)]))
    if unknown:
        return field("CONTRADICTION", f"not among the record's authors: {', '.join(unknown)}")
    # Positions: the cited list is the record's list, its beginning ("et al."), or its
    # beginning and its last name (the elision).
    elided = ref.elided
    expected = found[: len(cited)]
    if elided and len(cited) >= 2:
        # "A, B, ... Z": Z is a later author on the record, normally the last one (CSL
        # renderers differ on which name follows the ellipsis).
        later = found[len(cited) - 1 :] or [""]
        last = max(later, key=lambda f: (_same_name(cited[-1], f), f == found[-1]))
        expected = [*found[: len(cited) - 1], last]
    # In its place, each name is as close to the record's as it is anywhere in the list.
    in_order = len(expected) == len(cited) and all(
        _same_name(c, e) >= b for c, e, b in zip(cited, expected, bests, strict=True)
    )
    if not in_order:
        if not elided and len(cited) < len(found) and _subsequence(cited, found):
            why = f"{len(cited)} of the record's {len(found)} authors are listed (one left out)"
            return field("CONTAINS", why)
        if len(cited) > len(found):
            why = f"{len(cited)} authors cited, the record lists {len(found)}"
        else:
            why = "the authors are listed in another order than on the record"
        return field("CONTRADICTION", why)
    if typos:
        return field("MATCH_WITH_TYPO", "; ".join(f"{a!r} looks like {b!r}" for a, b in typos))
    if len(cited) < len(found) and not ref.et_al and not elided:
        return field("CONTAINS", f"{len(cited)} of the record's {len(found)} authors are listed")
    return field("MATCH", "the cited authors are the record's, in its order")


def _families(authors: Iterable[Author]) -> list[str]:
    """The normalized family names, the empty ones left out."""
    return [n for n in (fold(a.family) for a in authors) if n]


def _subsequence(cited: list[str], found: list[str]) -> bool:
    """Whether the cited names appear in the record's list in the same order."""
    j = 0
    for name in cited:
        while j < len(found) and not _same_name(name, found[j]):
            j += 1
        if j == len(found):
            return False
        j += 1
    return True


def _year(cited: int | None, found: int | None) -> FieldComparison:
    if cited is None:
        return _absent("year", found)
    if found is None:
        return _unconfirmed("year", cited)
    if cited == found:
        return FieldComparison("year", "MATCH", cited, found, "same year")
    return FieldComparison("year", "CONTRADICTION", cited, found, f"the record says {found}")


#: Words a venue abbreviation leaves out (ISO 4 drops articles, prepositions, conjunctions).
_VENUE_STOP = frozenset(
    {"of", "the", "and", "for", "in", "on", "at", "an", "de", "des", "du", "la", "le",
     "les", "und", "der", "die", "das", "fur", "et", "di", "del", "della", "to"}
)  # fmt: skip
#: Words an abbreviated proceedings name may add or leave out ("Proc.", "In").
_VENUE_OPTIONAL = frozenset({"proc", "proceedings", "proceeding", "in", "conf"})
_ORDINAL = frozenset(
    {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
     "tenth", "annual"}
)  # fmt: skip


def _venue_words(venue: str) -> list[str]:
    """Content words of a venue: no stop words, years or ordinals ("2016", "5th", "first")."""
    return [
        w
        for w in venue.split()
        if w not in _VENUE_STOP
        and w not in _ORDINAL
        and not w.isdigit()
        and not (w[:1].isdigit() and w[-2:] in {"st", "nd", "rd", "th"})
    ]


def _abbreviates_word(short: str, long: str) -> bool:
    """ISO 4 style: "phys" for "physical", "natl" for "national".

    Same first letter, and the abbreviation's letters in order.
    """
    if short == long or long.startswith(short):
        return True
    if len(short) < 2 or short[0] != long[0] or len(short) >= len(long):
        return False
    it = iter(long)
    return all(ch in it for ch in short)


def _abbreviates(short: str, long: str) -> bool:
    """Whether venue ``short`` abbreviates ``long`` word by word, or is its acronym.

    "anal biochem" / "analytical biochemistry"; "proc ieee conf comput vis pattern recognit
    cvpr" / "2016 ieee conference on computer vision and pattern recognition cvpr"; "jama" /
    "journal of the american medical association".
    """
    s, l_ = _venue_words(short), _venue_words(long)
    if not s or not l_:
        return False
    if len(s) == 1 and len(l_) >= 2 and s[0] == "".join(w[0] for w in l_):
        return True
    i = j = 0
    while i < len(s) and j < len(l_):
        if _abbreviates_word(s[i], l_[j]):
            i += 1
            j += 1
        elif s[i] in _VENUE_OPTIONAL:
            i += 1
        elif l_[j] in _VENUE_OPTIONAL:
            j += 1
        else:
            return False
    rest_s = [w for w in s[i:] if w not in _VENUE_OPTIONAL]
    rest_l = [w for w in l_[j:] if w not in _VENUE_OPTIONAL]
    return not rest_s and not rest_l


def _venue(cited: str | None, found: str | None) -> FieldComparison:
    if not cited:
        return _absent("venue", found)
    if not found:
        return _unconfirmed("venue", cited)
    a, b = fold(cited), fold(found)
    if a == b or _venue_words(a) == _venue_words(b):
        return FieldComparison("venue", "MATCH", cited, found, "same venue")
    if _abbreviates(a, b) or _abbreviates(b, a):
        return FieldComparison("venue", "CONTAINS", cited, found, "an abbreviated venue name")
    if _contained(a, b):
        return FieldComparison("venue", "CONTAINS", cited, found, "a partial venue name")
    ratio = fuzz.ratio(a, b)
    if ratio >= VENUE_TYPO:
        return FieldComparison("venue", "MATCH_WITH_TYPO", cited, found, f"{ratio:.0f}% similar")
    return FieldComparison(
        "venue", "CONTRADICTION", cited, found, f"the record's venue is {found!r}"
    )


def _contained(a: str, b: str) -> bool:
    """One venue is a run of the other's words ("physica b" in "physica b condensed matter")."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 4 and f" {short} " in f" {long} "


def _identifier(ref: ParsedReference, record: Record) -> FieldComparison:
    if not ref.doi:
        return _absent("identifier", record.doi)
    if not record.doi:
        return _unconfirmed("identifier", ref.doi)
    if ref.doi.lower() == record.doi.lower():
        return FieldComparison("identifier", "MATCH", ref.doi, record.doi, "same DOI")
    return FieldComparison(
        "identifier", "CONTRADICTION", ref.doi, record.doi, "the record has another DOI"
    )


def decide(
    ref: ParsedReference, comparisons: list[Comparison]
) -> tuple[Status, Comparison | None, str]:
    """The status, the best candidate and the reasoning.

    The statuses are those the reference-verification API documents.
    """
    plausible = [
        c for c in comparisons
        if c.label("title") in {"MATCH", "MATCH_WITH_TYPO", "CONTAINS"}
        or c.label("identifier") == "MATCH"
        or _titleless_match(ref, c)
    ]  # fmt: skip
    if not plausible:
        if (
            comparisons
            and ref.doi
            and any(c.label("identifier") == "CONTRADICTION" for c in comparisons)
        ):
            return (
                "unverified",
                None,
                "no record matches the title, and the DOI belongs to another work",
            )
        return "unverified", None, "no candidate matches the reference"
    if ref.style == "titleless" and not ref.title:
        # Without a title, the volume and the first page tell works of one author, year and
        # venue apart (a record without them is a book, a chapter, or another work).
        ranked = sorted(
            ((_numbers_agree(ref, c.record), c) for c in plausible),
            key=lambda p: (p[0], p[1].score),
            reverse=True,
        )
        plausible = [c for _, c in ranked]
        rivals = [c for agree, c in ranked if agree == ranked[0][0]]
    else:
        plausible.sort(key=lambda c: c.score, reverse=True)
        rivals = plausible
    best = plausible[0]
    others = [
        c
        for c in rivals[1:]
        if (c.record.doi or c.record.title) != (best.record.doi or best.record.title)
    ]
    if (
        others
        and best.score - others[0].score < AMBIGUITY_MARGIN
        and best.label("identifier") != "MATCH"
    ):
        return "needs-human", best, "two candidates match about equally well"
    title = best.label("title")
    if title not in {"MATCH", "MATCH_WITH_TYPO", "CONTAINS"} and not _titleless_match(ref, best):
        # Found by its DOI only: the DOI points to a work the title does not describe.
        return (
            "unverified",
            best,
            "the DOI resolves to a work whose title differs from the reference",
        )
    errors = [f.field for f in best.fields if f.label in {"CONTRADICTION", "MATCH_WITH_TYPO"}]
    errors += [
        f.field for f in best.fields if f.label == "CONTAINS" and f.field in {"title", "authors"}
    ]
    if _another_work(ref, best):
        return (
            "needs-human",
            best,
            "only the title agrees: the authors are none of the record's and another field "
            "contradicts it (a title shared by several works)",
        )
    confirmed = best.count("MATCH", "MATCH_WITH_TYPO", "CONTAINS")
    if confirmed < 2:
        return "needs-human", best, "too little evidence: only one field could be compared"
    if errors:
        fields = ", ".join(dict.fromkeys(errors))
        return (
            "verified-with-error",
            best,
            f"the work exists but the reference has errors in: {fields}",
        )
    return "verified", best, f"{confirmed} of {len(FIELDS)} fields confirmed, none contradicted"


def _another_work(ref: ParsedReference, best: Comparison) -> bool:
    """Another work with the same title (generic titles).

    The title matches, but no cited author is on the record and the year or venue contradicts it.
    """
    if best.label("identifier") == "MATCH" or best.label("authors") != "CONTRADICTION":
        return False
    found, cited = _families(best.record.authors), _families(ref.authors)
    if any(_same_name(c, f) for c in cited for f in found):
        return False
    return "CONTRADICTION" in {best.label("year"), best.label("venue")}


def _first_page(pages: str | None) -> str:
    """The first page of a record's pages (after the last comma).

    Deposits put more before it: "30(7), 766-770", "Volume 13, 793-800", "467-468, 654-658".
    """
    return re.split(r"\s*[-–—]\s*", (pages or "").rsplit(", ", 1)[-1], maxsplit=1)[0]


def _numbers_agree(ref: ParsedReference, record: Record) -> int:
    """How many of volume and first page the reference and the record share (0-2).

    A book or chapter has pages and no volume: "Advances in Cancer Research 89 (1979)" cites
    page 89, which the parser reads as the volume.
    """
    agree = 0
    found = _first_page(record.pages)
    if ref.volume and record.volume and fold(ref.volume) == fold(record.volume):
        agree += 1
    elif ref.volume and not record.volume and not ref.pages and found:
        agree += fold(ref.volume) == fold(found)
    if ref.first_page and found and fold(ref.first_page) == fold(found):
        agree += 1
    return agree


def _titleless_match(ref: ParsedReference, c: Comparison) -> bool:
    """Whether a reference without a title (ACS, AIP, Elsevier) is this record.

    The year agrees, the authors, the venue, the volume and the first page do not contradict
    it, and: the volume and the first page agree; or the first page and the authors agree; or
    one of the numbers and the venue agree; or, without numbers to compare, the authors and the
    venue both agree.
    """
    if ref.title or ref.style != "titleless" or c.label("year") != "MATCH":
        return False
    if "CONTRADICTION" in {c.label("authors"), c.label("venue")}:
        return False
    volume = ref.volume
    if volume and c.record.volume and fold(volume) != fold(c.record.volume):
        return False
    first = ref.first_page
    found = _first_page(c.record.pages)
    if first and found and fold(first) != fold(found):
        return False
    authors = c.label("authors") == "MATCH"
    venue = c.label("venue") in {"MATCH", "CONTAINS"}
    if first and found:  # the first pages agree
        return bool(volume) or authors or venue
    if venue and _numbers_agree(ref, c.record):
        return True
    return authors and venue
