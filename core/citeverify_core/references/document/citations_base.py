r"""What every citation reader shares: the entries as matching needs them, the body as text.

:func:`entry` reads what matching needs of one reference (its first authors' surnames, its
year, its title) once; :func:`join` makes the body one string with the location of each line.
The numeric, author-date and note readers (``citations_numeric``, ``citations_author_date``,
``citations_notes``) and the findings (``consistency_findings``) all work on these.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from citeverify_core.errors import InputError
from citeverify_core.references.document.model import (
    DocumentLine,
    ExtractedReference,
    Location,
)
from citeverify_core.references.folding import fold
from citeverify_core.references.parse import parse_reference

#: Places that look like citations examined at most (a real paper has a few hundred).
MAX_CITATION_SITES = 20_000
#: A range "[3-40]" is expanded to its numbers when it spans at most this many.
MAX_RANGE = 100

_ListKind = Literal["key", "numeric", "alpha", "author-date"]
_DASHES = "-–—‑−"
_SPACES = re.compile(r"\s+")
_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\]")
_PARENS = re.compile(r"\(([^()\n]{1,400})\)")
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_YEAR_IN = re.compile(rf"(?<![\d/.])({_YEAR})(?![\d])")

_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "le", "la", "dos", "das",
     "do", "ten", "ter", "zu", "d'", "d’", "l'", "l’", "al", "el", "bin", "ibn", "st.", "mac"}
)  # fmt: skip
# Capitalised words that begin a name run but are no names: "In (2020)", "Table (2020)".
_NOT_NAME_WORDS = """
    in on at by for from to of the a an and but or as since until till after before during
    between through throughout around about circa ca approx approximately up year years table
    tables tab fig figs figure figures section sect sec chapter chap ch eq eqs equation equations
    appendix app part vol volume no number page pages see cf also note notes example examples
    spring summer fall autumn winter ad bc bce ce version release edition ed study studies
    experiment experiments phase step stage model data dataset total mean this that these those
    our we it its their here there then thus hence however moreover further furthermore both
    each all some most many early late mid only even yet still now today established founded
    published released born died census fiscal fy updated accessed retrieved revised when where
    while which who what with without within per via vs et al i ii iii iv v january february
    march april may june july august september october november december jan feb mar apr jun jul
    aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday q1 q2 q3 q4
    eg ie cf e.g i.e if is are was were be been has have had not no yes new old first second third
    last next previous recent recently following according based given using unlike like compared
    whereas although though because hence therefore overall similarly likewise finally
    globally historically currently previously originally initially subsequently later earlier
    yesterday together conversely alternatively additionally consequently accordingly notably
    interestingly importantly specifically typically generally traditionally nationally
    internationally worldwide elsewhere meanwhile thereafter afterwards soon figs tables
    copyright received accepted submitted preprint draft online available proceedings conference
    workshop symposium journal university institute department press company corporation inc
    ltd census survey report reports act law bill treaty war agreement protocol declaration
    convention summit election elections budget plan strategy program programme project
    initiative campaign database corpus benchmark challenge competition task track update
    windows linux python java matlab excel spss stata github wikipedia google twitter facebook
    covid sars pandemic crisis recession revolution reform season wave round cohort trial
    sample group condition session block figure supplementary supplement online appendices
    author authors surname lastname name editor editors"""
# ("Author (2002) Title of website, ...": a style guide's placeholder for a name, no citation)
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())

# --- entries ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    """What matching needs of one entry of the list."""

    ref: ExtractedReference
    names: tuple[str, ...]  # folded family names, particles removed
    et_al: bool  # the entry itself says "et al." (Harvard's "Yu, Z. et al., 2011")
    year: int | None
    suffix: str | None  # the "a" of a printed "2020a"
    years: frozenset[int]
    head: str  # folded text before its first year: where its authors are
    title: str
    first_display: str
    year_late: bool = False  # its year comes after its title (MLA, Chicago notes)
    guessed: bool = False  # no author parsed: ``names`` is the first capitalised word

    @property
    def number(self) -> int:
        return self.ref.number


#: Words after a name that are no surname: a person's generation ("Henderson Jr.", "Ford III")
#: and a company's legal form ("Cytel Inc."). Folded, without the full stop.
_NAME_SUFFIXES = frozenset(
    {"jr", "sr", "ii", "iii", "iv", "inc", "ltd", "llc", "corp", "co", "gmbh", "ag", "plc",
     "sa", "s a", "nv", "bv", "ab", "oy", "kg", "ev", "e v", "pty", "lp", "llp"}
)  # fmt: skip


def _is_name_suffix(token: str) -> bool:
    """Whether a written word is a generation or legal-form suffix ("Jr.", "III", "Inc.")."""
    return len(token) <= 6 and fold(token).strip() in _NAME_SUFFIXES


def _name_key(name: str) -> str:
    """A surname folded, particles and suffixes dropped: "van der Berg" -> "berg".

    "O’Neil" -> "o neil"; "Henderson Jr." -> "henderson"; "Cytel Inc." -> "cytel".
    """
    words = fold(name).split()
    kept = [w for w in words if w not in _PARTICLES and w not in _NAME_SUFFIXES]
    return " ".join(kept or words)


def _entry(ref: ExtractedReference) -> _Entry:
    text = ref.text
    names: tuple[str, ...] = ()
    et_al = False
    year: int | None = None
    title = ""
    display = ""
    try:
        parsed = parse_reference(text[:1200]) if text.strip() else None
    except (InputError, ValueError):
        parsed = None
    if parsed is not None:
        names = tuple(k for k in (_name_key(a.family) for a in parsed.authors) if k)
        year = parsed.year
        et_al = parsed.et_al or parsed.elided
        title = fold(parsed.title or "")
        if parsed.authors:
            display = parsed.authors[0].family
    all_years = [int(m.group(1)) for m in _YEAR_IN.finditer(text[:1500])]
    if year is None and all_years:
        year = all_years[0]
    guessed = not names
    if names and len(names[0]) == 1:
        # "R. Apetz, Zetel, ..." (given names first, then a comma, then the title) parsed as
        # the family "R": the names are not known.
        names, guessed = (), True
    if not names:
        # The parser gave up: the first surname-like word (not an initial) of the text.
        for word in re.findall(r"[^\W\d_][\w'’\-]+", text[:300]):
            if word[0].isupper() and fold(word) not in _NOT_NAMES and len(word) >= 2:
                names = (_name_key(word),)
                display = word
                break
    suffix = None
    if year is not None and (m := re.search(rf"(?<!\d){year}([a-z])(?![\w])", text[:1500])):
        suffix = m.group(1)
    first_year = _YEAR_IN.search(text[:1500])
    head = fold(text[: first_year.start()] if first_year else text[:200])
    return _Entry(
        ref=ref,
        names=names,
        et_al=et_al,
        year=year,
        suffix=suffix,
        years=frozenset(all_years),
        head=f" {head} ",
        title=title or fold(text[:300]),
        first_display=display or (names[0] if names else ""),
        # MLA puts the year at the end ("... Placenta 29 (2008): 12-19."), APA right after the
        # authors: the title before the first year tells them apart.
        year_late=first_year is not None and len(title) >= 8 and title[:25] in head,
        guessed=guessed,
    )


# An entry by the author of the entry before: a rule ("———. 2004.", "– Das Buch"), "Idem",
# "Id.", German "Ders."/"Dies.", Latin "Eadem".
_SAME_AUTHOR = re.compile(
    r"^\s*(?:[-–—―‒_]{1,12}(?=[\s.,:(]|$)|(?:Idem|Eadem|Id\.|Ders\.|Dies\.)(?=\W))"
)


def _entries(references: Sequence[ExtractedReference]) -> list[_Entry]:
    """The entries of the list; one printed with a rule or "Idem" has the names before it."""
    entries: list[_Entry] = []
    for ref in references:
        e = _entry(ref)
        if entries and _SAME_AUTHOR.match(ref.text):
            before = entries[-1]
            e.names, e.et_al, e.guessed = before.names, before.et_al, before.guessed
            e.first_display = before.first_display
        entries.append(e)
    return entries


def _initials(name: str) -> str:
    """The initials of a body's name: "WHO" of "World Health Organization" ("of" skipped)."""
    words = [w for w in re.findall(r"[^\W\d_]+", name) if w[0].isupper()]
    return "".join(w[0] for w in words) if len(words) >= 2 else ""


def _same_name(cited: str, listed: str) -> bool:
    """Whether a cited surname key and an entry's surname key name the same person."""
    if not cited or not listed:
        return False
    if cited == listed or cited.replace(" ", "") == listed.replace(" ", ""):
        return True  # also "GEF-" + "FLAUT" cut by a line end (TeX hyphenates capitals too)
    # "Lopez" cites "Garcia Lopez"; "As Lee" does not cite "Lee".
    a, b = cited.split(), listed.split()
    return len(a) <= len(b) and b[-len(a) :] == a


# --- the body -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Body:
    """The body as one string, and where each of its lines starts in it.

    ``origin[i]`` is the index in ``lines`` of the line that starts at ``starts[i]``: what its
    format says of it (a footnote, damaged text, raised spans) is looked up there.
    """

    text: str
    starts: list[int]
    locations: list[Location]
    lines: Sequence[DocumentLine] = ()
    origin: list[int] = field(default_factory=list)

    def location(self, offset: int) -> Location:
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.locations[max(i, 0)]

    def line_at(self, offset: int) -> DocumentLine | None:
        """The line the character at ``offset`` was read from."""
        i = bisect.bisect_right(self.starts, offset) - 1
        if i < 0 or i >= len(self.origin):
            return None
        return self.lines[self.origin[i]]


# A line a program printed: R's and knitr's "[1] 0.5 2", "## [20] 132 139", a console prompt
# "R> x[1]", "> fit <- lm(y ~ x)". Its values are numbers, quoted strings, R's constants, or
# words with "_", "=", "$", "@", "/" ("LC_TIME=en_US.UTF-8"); never running text.
_QUOTED = re.compile(r"\"[^\"]{0,200}\"")
_OUTPUT_INDEX = re.compile(r"^(?:##\s?)?\[(?:\d{1,7}|\d{1,7},|,\d{1,7}|\d{1,7},\d{1,7})\]\s")
_PROMPT = re.compile(r"^(?:R>|>|\+)\s.{0,300}?(?:[\w.]\(|<-|[\w.]\[|\$)")
_CODE_VALUE = re.compile(
    r"[-+]?(?:\d[\d.,:]*(?:-\d[\d.,:]*)?(?:[eE][-+]?\d+)?%?|\.\d+)|\"[^\"]{0,80}\"?|'[^']{0,80}'?|"
    r"TRUE|FALSE|NA|NaN|NULL|-?Inf|<NA>|[\w.]{0,40}[_=$@/<>\\][^\s]{0,80}|[\w.]+\(\)?|[A-Za-z_.]+\d[\w.]*"
)


def _code_output(text: str) -> bool:
    """Whether a line is a program's output or a console prompt, not running text."""
    if text.startswith("##") or _PROMPT.match(text):
        return True  # knitr prints "## " before every line of output
    index = _OUTPUT_INDEX.match(text)
    if index is None:
        return False
    values = _QUOTED.sub(" 0 ", text[index.end() :]).split()[:40]
    if not values:
        return False
    other = [v for v in values if not _CODE_VALUE.fullmatch(v)]
    # A table row R prints ("[5] 7 9 3 | e -1"): numbers, and only marks or a letter besides.
    numbers = sum(1 for v in values if v[-1].isdecimal())
    return not other or (numbers >= 2 and all(len(v) <= 2 for v in other))


def _join(body: Sequence[DocumentLine]) -> _Body:
    """The lines joined: a space between lines of a paragraph, a newline between paragraphs.

    A hyphen at a line end between lowercase letters is a soft one ("cita-" + "tion") and goes;
    another ("García-" + "López", "[3–" + "5]") stays and joins without a space.
    """
    parts: list[str] = []
    starts: list[int] = []
    locations: list[Location] = []
    size = 0
    previous = ""
    origin: list[int] = []
    for index, line in enumerate(body):
        text = _SPACES.sub(" ", line.text).strip()  # a line may hold line breaks and tabs
        if text[:1] in "[#>R" and _code_output(text):
            text = ""  # R's "[20] 132 139" is no citation [20]: the line is left out
        if not text:
            if parts and parts[-1] != "\n":
                parts.append("\n")
                size += 1
            previous = ""
            continue
        if previous:
            if line.starts_paragraph or line.heading:
                sep = "\n"
            elif previous[-1] in _DASHES and len(previous) >= 2 and previous[-2].isalpha():
                sep = ""
                if previous[-2].islower() and text[0].islower() and previous[-1] == "-":
                    parts[-1] = parts[-1][:-1]
                    size -= 1
            elif previous[-1] in _DASHES:
                sep = ""
            else:
                sep = " "
            parts.append(sep)
            size += len(sep)
        starts.append(size)
        locations.append(line.location)
        origin.append(index)
        parts.append(text)
        size += len(text)
        previous = "" if line.heading else text
    return _Body("".join(parts), starts, locations, body, origin)


@dataclass(slots=True)
class _Cite:
    """A citation found, before it becomes an :class:`InTextCitation`."""

    start: int
    text: str
    kind: Literal["numeric", "author-date", "key", "note"]
    targets: list[str]
    entries: list[int | None]
    also: set[int] = field(default_factory=set)  # entries an ambiguous target may mean


def _near_hint(target: str, entries: list[_Entry]) -> str:
    """A hint " (it has Smith 2021)" when the list has the name with another year."""
    name = _name_key(target.split(" et al.", 1)[0].split(" and ", 1)[0].rsplit(" ", 1)[0])
    near = [
        f"{e.first_display} {e.year}{e.suffix or ''}"
        for e in entries
        if e.names and e.year is not None and _same_name(name, e.names[0])
    ]
    if not near:
        return ""
    shown = ", ".join(dict.fromkeys(near[:3]))
    return f" (it has {shown})"
