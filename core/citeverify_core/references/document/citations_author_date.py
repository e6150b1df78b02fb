r"""Author-date citations: ``(Smith et al., 2020)``, ``Smith (2020)``, MLA's ``(Smith 42)``.

Inside parentheses or brackets each work is read as names, then years (or MLA's pages), then
an optional locator; before the names only a prefix ("see", "e.g.,"). A narrative citation is
names in the running text right before a bracket of years. See :func:`author_date`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from citeverify_core.references.document.citations_base import (
    _BRACKET,
    _DASHES,
    _NOT_NAMES,
    _PARENS,
    _PARTICLES,
    _YEAR,
    MAX_CITATION_SITES,
    _Body,
    _Cite,
    _Entry,
    _initials,
    _is_name_suffix,
    _name_key,
    _near_hint,
    _same_name,
)
from citeverify_core.references.folding import fold

#: Characters looked at before "(2020)" for the names of a narrative citation.
_LOOK_BACK = 120

_YEAR_ITEM = rf"(?:{_YEAR}(?:[a-z](?![\w]))?|n\.\s?d\.|in\s+press|forthcoming)"
_YEARS = rf"(?P<years>{_YEAR_ITEM}(?:\s?,\s?(?:{_YEAR_ITEM}|[a-z](?![\w.])))*)"
# A locator after the year: "p. 4", ": 12-15", "Chapter 6", "Section 2.3", "Table 1", "§ 4";
# up to three ("1988, Chapter 6, p. 3"). The words are read in any case (a scoped flag: see
# citations_numeric's _LOCATOR_WORDS on why not re.I).
_LOC_WORD = (
    r"(?i:pp?|para|paras|chaps?|ch|chapters?|secs?|sections?|sect|figs?|figures?|tabs?|tables?|"
    r"vols?|volumes?|no|nos|art|arts|ll?|lines?|app|appendix|appendices|thm|theorems?|lemma|"
    r"eqs?|equations?|examples?|ex|parts?|pts?|n|nn|notes?|fn|footnotes?|cols?|columns?|"
    r"books?|bk|pages?|slides?|props?|propositions?|defs?|definitions?|cor|corollary|§§?)"
)
_ONE_LOC = (
    rf"\s?[,:]\s?(?:{_LOC_WORD}\.?\s?~?)?"
    rf"[\dIVXLCivxlc][\w.{_DASHES}]{{0,15}}(?:\s?[{_DASHES}]\s?\d{{1,5}})?"
)
# Words after the year and its locator, in lowercase and without digits or brackets:
# "(see Zeileis 2006a, for more details)", "(Smith 2020, and references therein)".
_POST = r"(?:\s?,\s(?P<post>[a-z][^\d()\[\];]{1,80}?))?"
_LOC = rf"(?P<loc>(?:{_ONE_LOC}){{1,3}})?{_POST}"
_MLA_PAGES = (
    rf"(?P<pages>(?:(?:pp?|para|paras|ch|chap|sec|ll?)\.?\s?)?\d{{1,5}}[a-z]?"
    rf"(?:\s?[{_DASHES}]\s?\d{{1,5}})?(?:\s?,\s?\d{{1,5}}(?:\s?[{_DASHES}]\s?\d{{1,5}})?){{0,5}})"
)
_MLA_ONLY_PAGES = re.compile(rf"^\s*{_MLA_PAGES}\s*$")
_MLA_SEGMENT = re.compile(rf"^(?P<names>[^\d]{{1,200}}?)(?:[\s,]+{_MLA_PAGES})?[\s.,]*$", re.S)
_SEGMENT = re.compile(rf"^(?P<names>.{{1,200}}?)[\s,]+{_YEARS}{_LOC}[\s.,]*$", re.S)
_ONLY_YEARS = re.compile(rf"^\s*{_YEARS}{_LOC}\s*$")
_SPLIT_WORKS = re.compile(r"\s*;\s*|(?:(?<=\d)|(?<=\d[a-z])),\s+(?=[A-Z])")
_INITIALS = re.compile(r"(?:[^\W\d_]\.){1,3}(?:-[^\W\d_]\.)?")
_ET_AL = re.compile(r"et\.?\s+al\b\.?")
_COMMA = re.compile(r"\s?,\s?")
_ONE_YEAR = re.compile(rf"({_YEAR})([a-z]?)")
_ABBREVIATION = re.compile(r"\s?\[[^\[\]]{0,20}\]")
_TOKEN = re.compile(r"et\.?\s+al\b\.?|&|,|[^\s,;&()\[\]]+")
# A note's publication details, "(Chicago: University of Chicago Press, 1990)", "(Cambridge,
# MA: MIT Press 2004)": a place, a colon, a publisher. No citation names its authors so.
_PUBLICATION = re.compile(
    r"(?:^|\s)[A-Z][^\s:;,()]{1,30}(?:,?\s[A-Z][^\s:;,()]{0,30}){0,3}:\s[A-Z]"
)
_PUBLISHER_WORDS = frozenset(
    {"press", "university", "universitaire", "universitaires", "verlag", "publishers",
     "publishing", "books", "editions", "éditions", "editore", "editorial", "presses"}
)  # fmt: skip
_JOINED = re.compile(r"\s(?:and|&|und|et|y)\s|&")
# A name word no author has: a country code ("GB", "USA"), a slash ("GB/USA").
_NOT_SURNAME = re.compile(r"(?:^|\s)[A-Z]{2,3}(?:$|\s)|/")
_CONNECTORS = frozenset({"and", "&", "und", "et", "y"})
# The words of _NOT_NAMES that begin a sentence before a name: "In Smith (2020)", "As Lee".
_FUNCTION_WORD_LIST = """
    in on at by for from to of the a an and but or as since until after before during
    between through about see cf also thus hence however moreover further furthermore both each
    all some most many only even yet still now then here there this that these those our we it
    its their when where while which with without within if because although though whereas
    unlike like following according recently notably similarly likewise finally overall
    conversely alternatively additionally consequently accordingly interestingly importantly
    specifically typically generally traditionally previously subsequently later earlier
    today e.g e.g. i.e i.e. eg ie"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_LIST.split())
# What may stand before the names inside parentheses: "(see Smith, 2020)", "(e.g., Lee, 2019)".
_PREFIX_END = frozenset(
    {"see", "also", "e.g.", "e.g.,", "eg", "cf.", "cf", "i.e.", "i.e.,", "in", "by", "from",
     "example", "examples", "review", "reviews", "reviewed", "cited", "following", "after",
     "and", "or", "but", "esp.", "especially", "notably", "including", "like", "as",
     "with", "per", "via", "compare", "contra", "discussed", ",", ":"}
)  # fmt: skip
# A word of a name: a letter, then no digit, space or bracket ("O’Neil", "King‐Taylor", and
# the mojibake of indexes, "CrÃ©pin"). Capitalised unless its script has no case ("최종원").
_NAME_WORD = re.compile(r"^[^\W\d_][^\s\d()\[\]{},;:]*$")

# --- author-date --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Names:
    """The names of an author-date citation: "Smith", "Smith and Jones", "Smith et al."."""

    names: tuple[str, ...]  # as written, one per person or body
    et_al: bool
    remainder: tuple[str, ...]  # the tokens before the names


def _name_run(tokens: list[str]) -> _Names | None:
    """The names that end ``tokens`` (walking back), or ``None`` when they do not end in names.

    Words such as "In", "Table", "Page" that begin the run are kept here; :func:`_without_stop`
    drops them (a surname may be such a word: "Page, S. T.", "See, S. G.").
    """
    et_al = False
    i = len(tokens)
    if i and _ET_AL.fullmatch(tokens[i - 1]):
        et_al = True
        i -= 1
    people: list[list[str]] = [[]]
    steps = 0
    while i > 0 and steps < 16:
        steps += 1
        token = tokens[i - 1]
        low = token.casefold()
        if token == "," or low in _CONNECTORS:
            if not people[-1]:
                break
            if token == "," and all(_is_name_suffix(w) for w in people[-1]):
                i -= 1  # "Henderson, Jr.": the comma is inside one name
                continue
            people.append([])
        elif not people[-1] and not token[0].islower() and _is_name_suffix(token):
            # "Henderson Jr.", "Ford III", "Cytel Inc.": a generation or a company's legal
            # form ends the name (it ends in "." or is all capitals, as a name word is not).
            people[-1].insert(0, token)
        elif low in _PARTICLES and people[-1]:
            people[-1].insert(0, token)
        elif (
            not token[0].islower()
            and len(token) <= 40
            and token[-1] != "."
            and _NAME_WORD.match(token)
        ):
            if people[-1] and people[-1][0].casefold() not in _PARTICLES and len(people[-1]) >= 4:
                break
            people[-1].insert(0, token)
        else:
            break
        i -= 1
    # Undo a trailing separator that named nobody ("In this study, Smith (2020)").
    while people and not people[-1]:
        people.pop()
        i += 1
    while i < len(tokens) and (tokens[i] == "," or tokens[i].casefold() in _CONNECTORS):
        i += 1
    if not people:
        return None
    return _Names(tuple(" ".join(p) for p in reversed(people)), et_al, tuple(tokens[:i]))


def _shortened(names: _Names) -> list[_Names]:
    """``names``, then without each word in turn that begins it and may name nobody.

    "As Law" gives "As Law", "Law"; "In Smith" gives "In Smith", "Smith"; "Page & Lee" gives
    "Page & Lee", "Lee". The last is what is left when no such word names anybody.
    """
    variants = [names]
    first = names.names[0].split()
    rest = names.names[1:]
    remainder = list(names.remainder)
    while first and (first[0].casefold().rstrip(".") in _NOT_NAMES or first[0] in _PARTICLES):
        if first[0] in _PARTICLES and len(first) > 1:
            break
        remainder.append(first.pop(0))
        if first:
            variants.append(_Names((" ".join(first), *rest), names.et_al, tuple(remainder)))
        elif rest:
            variants.append(_Names(rest, names.et_al, tuple(remainder)))
            break
    return variants


def _surname_shaped(name: str) -> bool:
    """One surname, possibly with particles: "Smith", "van der Berg", "O’Neil", "García-López"."""
    words = name.split()
    core = [w for w in words if w.casefold() not in _PARTICLES]
    return len(core) == 1 and (
        core[0][1:].islower()
        or re.fullmatch(
            r"(?:Mc|Mac|De|Di|Da|Le|La|Van|Von|O['’]|D['’])[^\W\d_][^\W\d_'’\-]+(?:-[^\W\d_]+)?",
            core[0],
        )
        is not None
        or bool(re.fullmatch(r"[^\W\d_]+(?:[-'’][^\W\d_]+)+", core[0]))
    )


@dataclass(frozen=True, slots=True)
class _Year:
    year: int | None  # None: "n.d.", "in press"
    suffix: str | None
    label: str


def _years(text: str) -> list[_Year]:
    """The years of "2020a, b, 2021": 2020a, 2020b, 2021."""
    if not text.strip():
        return [_Year(None, None, "")]  # MLA's "(Smith)": a name and no page
    found: list[_Year] = []
    for part in _COMMA.split(text):
        item = part.strip()
        if m := _ONE_YEAR.fullmatch(item):
            found.append(_Year(int(m.group(1)), m.group(2) or None, item))
        elif len(item) == 1 and item.isalpha() and found and found[-1].year is not None:
            found.append(_Year(found[-1].year, item, f"{found[-1].year}{item}"))
        elif item:
            found.append(_Year(None, None, " ".join(item.split())))
    return found


_ANY_WORD = re.compile(r"\w+")  # every word of an entry (its digits too)


class _AuthorDate:
    """Author-date citations found and matched against the list."""

    def __init__(self, entries: list[_Entry], *, mla: bool = False) -> None:
        self.entries = entries
        self.mla = mla  # MLA cites "(Smith 42)": the number is a page, the name alone matches
        self.by_name: dict[str, list[_Entry]] = {}
        #: By the whole surname without spaces: "GEF-" + "FLAUT" (a line-end hyphen) cites it.
        self.by_joined: dict[str, list[_Entry]] = {}
        for e in entries:
            if e.names:
                self.by_name.setdefault(e.names[0].split()[-1], []).append(e)
                self.by_joined.setdefault(e.names[0].replace(" ", ""), []).append(e)
        self.words: dict[int, str] = {}
        self.cache: dict[
            tuple[tuple[str, ...], bool, int | None, str | None, str],
            tuple[int | None, frozenset[int]],
        ] = {}

    def match(self, names: _Names, year: _Year) -> tuple[int | None, frozenset[int]]:
        """The entry a name and a year name (or ``None``), and the entries it might also mean."""
        cache_key = (names.names, names.et_al, year.year, year.suffix, year.label)
        if cache_key in self.cache:
            return self.cache[cache_key]
        keys = [_name_key(n) for n in names.names]
        first = keys[0]
        candidates = [
            e
            for e in self.by_name.get(first.split()[-1] if first else "", [])
            if e.names and _same_name(first, e.names[0]) and self._year_fits(e, year)
        ]
        if not candidates and " " in first:
            joined = self.by_joined.get(first.replace(" ", ""), [])
            candidates = [e for e in joined if self._year_fits(e, year)]
        wanted = f" {fold(names.names[0])} "
        if not candidates:
            # The parser may have misread the entry: the name among the words before its year.
            candidates = [
                e
                for e in self.entries
                if wanted.strip() and wanted in e.head and self._year_fits(e, year, loose=True)
            ]
        if not candidates and wanted.strip():
            # A work listed under its title or its series, the cited person named further on
            # as its editor or compiler ("CinémAction Nr. 115, 2005: ... Zusammengestellt von
            # Yona Dureau" cited "Dureau (2005)"): the name as a word anywhere in the entry.
            candidates = [
                e for e in self.entries if e.year == year.year and wanted in self._words(e)
            ]
        cited = names.names[0]
        if not candidates and 2 <= len(cited) <= 10 and cited.isalpha() and cited.isupper():
            # "(WHO, 2020)" for World Health Organization: the initials of its words.
            candidates = [
                e
                for e in self.entries
                if _initials(e.first_display) == cited and self._year_fits(e, year)
            ]
        if not candidates and year.year is not None:
            # An entry in which no year can be read (one split in two by a page break, the
            # year gone with its second half) is matched by its first author alone.
            candidates = [
                e
                for e in self.by_name.get(first.split()[-1] if first else "", [])
                if e.year is None and e.names and _same_name(first, e.names[0])
            ]
        if self.mla and year.year is not None and len(candidates) > 1:
            # In an MLA-like list the number is a page, but where it is the year of some of
            # the author's works it chooses among them: "(Affymetrix, 2001)" cites the 2001
            # edition of a list that prints its years last (plainnat), not the 1999 one.
            candidates = [e for e in candidates if e.year == year.year] or candidates
        result: tuple[int | None, frozenset[int]] = (None, frozenset())
        if candidates:
            result = self._choose(candidates, keys, names.et_al, year)
        self.cache[cache_key] = result
        return result

    def _words(self, e: _Entry) -> str:
        """The entry's folded words, spaced at both ends (made once per entry)."""
        words = self.words.get(e.number)
        if words is None:
            words = self.words[e.number] = " " + " ".join(_ANY_WORD.findall(fold(e.ref.text))) + " "
        return words

    def _year_fits(self, e: _Entry, year: _Year, *, loose: bool = False) -> bool:
        if self.mla:
            return True
        if year.year is None:
            return e.year is None or year.label.casefold() in e.ref.text.casefold()
        return e.year == year.year or (loose and year.year in e.years)

    @staticmethod
    def _choose(
        candidates: list[_Entry], keys: list[str], et_al: bool, year: _Year
    ) -> tuple[int | None, frozenset[int]]:
        def narrowed(pool: list[_Entry], keep: Iterable[_Entry]) -> list[_Entry]:
            kept = list(keep)
            return kept or pool

        pool = candidates
        if len(pool) > 1:
            if et_al:
                pool = narrowed(pool, (e for e in pool if len(e.names) >= 3 or e.et_al))
            elif len(keys) >= 2:
                pool = narrowed(
                    pool,
                    (
                        e
                        for e in pool
                        if len(e.names) >= 2
                        and _same_name(keys[1], e.names[1])
                        and (len(keys) > 2 or (len(e.names) == 2 and not e.et_al))
                    ),
                )
            else:
                pool = narrowed(pool, (e for e in pool if len(e.names) <= 1 and not e.et_al))
        if len(pool) > 1 and year.suffix:
            own = [e for e in pool if e.suffix == year.suffix]
            if own:
                pool = own
            else:
                index = ord(year.suffix) - ord("a")
                pool = sorted(pool, key=lambda e: e.number)
                pool = [pool[index]] if 0 <= index < len(pool) else pool
        pool = sorted(pool, key=lambda e: e.number)
        return pool[0].number, frozenset(e.number for e in pool[1:])

    def target(self, names: _Names, year: _Year) -> str:
        """How a target is shown: "Smith 2020a", "Smith and Jones 2020", "Smith et al. 2020"."""
        if names.et_al:
            who = f"{names.names[0]} et al."
        elif len(names.names) == 2:
            who = f"{names.names[0]} and {names.names[1]}"
        elif len(names.names) > 2:
            who = f"{names.names[0]} et al."
        else:
            who = names.names[0]
        return f"{who} {year.label}".strip()


def _author_date(
    body: _Body, entries: list[_Entry], *, mla: bool = False
) -> tuple[list[_Cite], bool]:
    """Parenthetical ``(Smith, 2020; Lee, 2019a)`` and narrative ``Smith et al. (2020)``.

    Inside parentheses, each work (split at ";" and at ", " after a year) must end with a year
    (or "n.d.", "in press") and an optional page, and the words before the year must end with
    names: capitalised words, particles ("van der"), "and"/"&", "et al."; before the names only
    a prefix ("see", "e.g.,") or other words ending in lowercase or a comma. The first name may
    not be a word such as "In", "Table", "Fig", "January" ("(In 2020)", "(Table 2, 2020)").

    Narrative: parentheses or brackets holding only years, right after names. A narrative
    citation that names no entry is reported only when its name is surname-shaped and not
    preceded by another capitalised word ("Project Apollo (1969)" is no citation; "Smith
    (2020)" is). Numbers in brackets are not citations in an author-date document.
    """
    matcher = _AuthorDate(entries, mla=mla)
    text = body.text
    cites: list[_Cite] = []
    sites = 0
    # "[Smith et al. 2020]", "Smith et al. [2020]" (ACM); MLA cites in parentheses only.
    for pattern in (_PARENS,) if mla else (_PARENS, _BRACKET):
        for m in pattern.finditer(text):
            sites += 1
            if sites > MAX_CITATION_SITES:
                return sorted(cites, key=lambda c: c.start), True
            inner = text[m.start() + 1 : m.end() - 1]
            if mla:
                cite = _mla_citation(text, m.start(), m.end(), inner, matcher)
                if cite is not None:
                    cites.append(cite)
                continue
            only = _ONLY_YEARS.match(inner)
            if only is not None:
                cite = _narrative(text, m.start(), m.end(), only.group("years"), matcher)
                if cite is not None and only.group("post"):
                    cite = _only_matched(cite)  # "Smith (2020, for a review)": sure if it matches
                if cite is not None:
                    cites.append(cite)
                continue
            cite = _parenthetical(m.start(), m.group(0), inner, matcher)
            if cite is not None:
                cites.append(cite)
    return sorted(cites, key=lambda c: c.start), False


def _resolve(
    tokens: list[str], years: str, matcher: _AuthorDate
) -> tuple[_Names, list[_Year], list[int | None], set[int], tuple[str, ...]] | None:
    """The names ending ``tokens`` with each year of ``years``, matched to entries.

    A run that begins with a word such as "In", "As" or "Law" is read with it when that matches
    an entry ("As Law (2004)" with Law, J. in the list), else without it ("In Smith (2020)");
    see :func:`_shortened`. Also returned: the words dropped from the names returned.
    """
    full = _name_run(tokens)
    if full is None:
        return None
    variants = _shortened(full)
    last: _Names | None = variants[-1]
    if variants[-1].names[0].split()[0].casefold().rstrip(".") in _NOT_NAMES:
        last = None  # nothing but such words: a citation only where it matches
    chosen = last
    found: list[int | None] = []
    also: set[int] = set()
    listed = _years(years)
    for year in listed:
        number: int | None = None
        more: frozenset[int] = frozenset()
        for variant in variants:
            number, more = matcher.match(variant, year)
            if number is not None:
                chosen = variant
                break
        if number is None and last is not None:
            words = last.names[0].split()
            if len(words) > 1 and words[-2].casefold() not in _PARTICLES:
                # "Following Smith (2020)": the words before the surname may be the sentence's.
                shorter = _Names((words[-1], *last.names[1:]), last.et_al, last.remainder)
                number, more = matcher.match(shorter, year)
        found.append(number)
        also |= more
    if chosen is None:
        return None  # only a word such as "Page" that names no entry
    return chosen, listed, found, also, chosen.remainder[len(full.remainder) :]


def _parenthetical(start: int, written: str, inner: str, matcher: _AuthorDate) -> _Cite | None:
    targets: list[str] = []
    found: list[int | None] = []
    also: set[int] = set()
    for work in _SPLIT_WORKS.split(inner):
        m = _SEGMENT.match(work.strip())
        if m is None or _PUBLICATION.search(m.group("names")):
            continue
        # "(World Health Organization [WHO], 2021)": the abbreviation is no name.
        tokens = _TOKEN.findall(_ABBREVIATION.sub("", m.group("names")))
        resolved = _resolve(tokens, m.group("years"), matcher)
        if resolved is None:
            continue
        names, years, numbers, more, _ = resolved
        if names.remainder:
            last = names.remainder[-1]
            if (
                last.casefold() not in _PREFIX_END
                and not last.islower()
                and not _INITIALS.fullmatch(last)  # "(J. Smith, 2020)"
            ):
                continue
        if any(not re.search(r"[^\W\d_]{2,}", n) for n in names.names):
            continue
        if None in numbers and any(_NOT_SURNAME.search(n) for n in names.names):
            # "(Daniel Haller, GB 1965)": a film's director and country, not authors.
            years = [y for y, x in zip(years, numbers, strict=True) if x is not None]
            numbers = [x for x in numbers if x is not None]
            if not numbers:
                continue
        work_targets = [matcher.target(names, year) for year in years]
        publisher = any(w.casefold() in _PUBLISHER_WORDS for n in names.names for w in n.split())
        if m.group("post") or publisher:
            # Words after the year ("for more details") make the form less certain, and a
            # publisher ("Oxford University Press 1990") is a note's detail, not an author: a
            # work that names no entry is left out rather than reported.
            work_targets = [t for t, x in zip(work_targets, numbers, strict=True) if x is not None]
            numbers = [x for x in numbers if x is not None]
        targets.extend(work_targets)
        found.extend(numbers)
        also |= more
    if not targets:
        return None
    return _Cite(start, written, "author-date", targets, found, also)


def _only_matched(cite: _Cite) -> _Cite | None:
    """``cite`` without its targets that name no entry (``None`` when none is left)."""
    kept = [(t, x) for t, x in zip(cite.targets, cite.entries, strict=True) if x is not None]
    if not kept:
        return None
    return _Cite(cite.start, cite.text, cite.kind, [t for t, _ in kept], [x for _, x in kept],
                 cite.also)  # fmt: skip


def _mla_citation(
    text: str, start: int, end: int, inner: str, matcher: _AuthorDate
) -> _Cite | None:
    """MLA's ``(Smith 42)``, ``(Smith and Lee 3-5; Kim et al.)``, ``(Smith)``, ``Smith (42)``.

    The number is a page (it may look like a year: "(Seitz et al. 1738)"): an entry is matched
    by its first author alone. A work that names no entry is reported only in an unmistakable
    form, "(Smith 42)" or "(Smith et al.)"; "(Fourier)" or "(Patient)" alone may be anything.
    """
    only = _MLA_ONLY_PAGES.match(inner)
    if only is not None:
        return _narrative(text, start, end, only.group("pages"), matcher)
    targets: list[str] = []
    found: list[int | None] = []
    also: set[int] = set()
    for work in inner.split(";"):
        m = _MLA_SEGMENT.match(work.strip())
        if m is None:
            continue
        page = m.group("pages") or ""
        tokens = _TOKEN.findall(m.group("names"))
        resolved = _resolve(tokens, page, matcher)
        if resolved is None:
            continue
        names, years, numbers, more, _ = resolved
        if names.remainder and names.remainder[-1].casefold() not in _PREFIX_END:
            continue  # "(the model of Smith 42)": words, not a citation
        if any(not re.search(r"[^\W\d_]{2,}", n) for n in names.names):
            continue
        if None in numbers and (
            not (page or names.et_al) or not all(_surname_shaped(n) for n in names.names)
        ):
            continue  # "(Smith 42)" and "(Smith et al.)" cite; "(Fourier)" may be anything
        targets.extend(matcher.target(names, year) for year in years)
        found.extend(numbers)
        also |= more
    if not targets:
        return None
    return _Cite(start, text[start:end], "author-date", targets, found, also)


def _narrative(text: str, start: int, end: int, years: str, matcher: _AuthorDate) -> _Cite | None:
    before = text[max(0, start - _LOOK_BACK) : start]
    if not before or not (before[-1].isalpha() or before[-1] in " .’'"):
        return None
    # "Smith’s (2020) study", "Jones’ (2004)", German "Buss’ (2004)": the possessive goes.
    before = re.sub(r"(?<=[^\W\d_])['’]s?\s*$", "", before.rstrip())
    tokens = _TOKEN.findall(before)
    if not tokens:
        return None
    resolved = _resolve(tokens, years, matcher)
    if resolved is None:
        return None
    names, listed, found, also, dropped = resolved
    targets = [matcher.target(names, year) for year in listed]
    first_at = before.rfind(names.names[0].split()[0])
    if None in found:
        # Unmatched: only a citation when it is unmistakably one (see _author_date).
        previous = names.remainder[-1] if names.remainder else ""
        if (
            not all(_surname_shaped(n) for n in names.names)
            or (previous[:1].isupper() and previous.casefold().rstrip(".") not in _NOT_NAMES)
            # "Project Apollo (1969)": a dropped word that is a noun, not "In" or "As".
            or any(w.casefold().rstrip(".,") not in _FUNCTION_WORDS for w in dropped)
            # "Müller, Hans (2000)": a surname and a given name; two authors are joined by
            # "and" or "&" in running text.
            or (len(names.names) >= 2 and not _JOINED.search(before[max(first_at, 0) :]))
        ):
            if all(x is None for x in found):
                return None
            targets = [t for t, x in zip(targets, found, strict=True) if x is not None]
            found = [x for x in found if x is not None]
    offset = max(0, start - _LOOK_BACK) + max(first_at, 0)
    return _Cite(offset, text[offset:end], "author-date", targets, found, also)


_WORD = re.compile(r"(?<![\w’'-])[^\W\d_][^\W\d_'’-]+")


def _numbers_are_pages(cites: list[_Cite], entries: list[_Entry]) -> bool:
    """Whether most author-date citations name a listed first author with a year it lacks.

    Then the numbers are MLA's pages and the list was not recognised as MLA (its titles not
    read): more such citations than matched ones.
    """
    matched = sum(1 for c in cites for x in c.entries if x is not None)
    unmatched = list(
        dict.fromkeys(
            t for c in cites for t, x in zip(c.targets, c.entries, strict=True) if x is None
        )
    )
    near = sum(1 for t in unmatched[:200] if _near_hint(t, entries))
    return near > matched


def _mla_like(entries: list[_Entry]) -> bool:
    """Whether most entries with a year have it after their title, as MLA's have."""
    dated = [e for e in entries if e.year is not None and len(e.title) >= 8]
    return bool(dated) and sum(e.year_late for e in dated) * 3 >= len(dated) * 2


def _named_in(text: str, entries: list[_Entry]) -> set[int]:
    """The entries whose first author's surname is a capitalised word of ``text`` (one pass)."""
    wanted: dict[str, list[int]] = {}
    for e in entries:
        if e.names:
            wanted.setdefault(e.names[0].split()[-1], []).append(e.number)
    lengths = {len(key) for key in wanted}
    named: set[int] = set()
    seen: set[str] = set()
    # Words of two letters or more; each distinct word folded once (a text of "A A A ...").
    for m in _WORD.finditer(text):
        word = m.group(0)
        if word in seen or not word[0].isupper() or len(word) not in lengths:
            continue
        seen.add(word)
        # An ASCII word of letters folds to its lowercase; fold() is for the others.
        if numbers := wanted.get(word.lower() if word.isascii() else fold(word)):
            named.update(numbers)
    return named
