r"""Citations in the text against the reference list (issue 26).

:func:`check_consistency` reads the body of a document (its lines outside the reference list,
in reading order), finds the in-text citations, matches each to the entries of the list, and
reports where the two disagree: a citation that names no entry (``missing-entry``), an entry no
citation names (``uncited-entry``), a numbered list that is not numbered 1, 2, 3, ...
(``out-of-order``), and an entry listed twice (``duplicate-entry``).

What is read depends on the list (docs/documents.md, "Citation consistency", says it for users):

* Entries with citation keys (``\bibitem{key}``, BibTeX) and a body with ``\cite``-like commands:
  the keys of ``\cite``, ``\citep[p.~3]{a,b}``, ``\citet``, ``\parencite``, ``\textcite``,
  ``\autocite``, ``\citeauthor``, ``\cites{a}{b}``, ``\nocite`` (``\nocite{*}`` cites all).
* Entries labelled with numbers ("[12]", "12."): brackets of numbers, ``[12]``, ``[3-5]``,
  ``[1, 4, 7]``, ``[1,3–5]``, ``[3]–[5]``, ``[12, p. 4]``; when no bracket cites, numbers in
  parentheses, ``(12)``, ``(2, 3)``. Author-date forms are not read then.
* Entries with alphabetic labels ("[Smi20]"): brackets of such labels.
* Otherwise (an author-date list): ``(Smith et al., 2020)``, ``(Smith & Jones, 2020; Lee,
  2019a)``, ``(Smith 2020, p. 4)``, ``(see Smith, 2020, 2021)``, ``Smith (2020a)``, ``Smith et
  al. (2020)``, ``Smith and Jones [2020]``, ``[Smith et al. 2020]``. Brackets of numbers are
  not citations then.

The rule that matters most: no finding on a clean document. So a thing that looks like a
citation is taken only when it is very likely one, and a citation that names no entry is only
reported when its form leaves no doubt (see the comments at ``_numeric`` and ``_author_date``).
Every pattern is linear in the text, the look-back for a name is bounded, and at most
:data:`MAX_CITATION_SITES` places are examined (beyond that no uncited entry is reported).
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from citeverify_core.errors import InputError
from citeverify_core.references.document.model import (
    ConsistencyFinding,
    DocumentLine,
    ExtractedReference,
    InTextCitation,
    Location,
)
from citeverify_core.references.folding import fold
from citeverify_core.references.parse import parse_reference

__all__ = ["MAX_CITATION_SITES", "MAX_RANGE", "check_consistency"]

#: Places that look like citations examined at most (a real paper has a few hundred).
MAX_CITATION_SITES = 20_000
#: A range "[3-40]" is expanded to its numbers when it spans at most this many.
MAX_RANGE = 100
#: Findings of one kind about the list's numbering before they are summed up in one.
_MAX_ORDER_FINDINGS = 10
#: Characters looked at before "(2020)" for the names of a narrative citation.
_LOOK_BACK = 120

_ListKind = Literal["key", "numeric", "alpha", "author-date"]
_DASHES = "-–—‑−"

# --- patterns -----------------------------------------------------------------------------------

_CITE_COMMAND = re.compile(
    r"\\(?P<cmd>[A-Za-z]{0,12}cite[A-Za-z]{0,8}|nocite)\*?"
    r"(?P<args>(?:\s{0,3}\[[^\[\]{}\n]{0,300}\]|\s{0,3}\([^(){}\n]{0,300}\)"
    r"|\s{0,3}\{[^{}\n]{0,2000}\}){1,8})"
)
_BRACE = re.compile(r"\{([^{}]*)\}")
_SPACES = re.compile(r"\s+")
_COMMENT = re.compile(r"(?<!\\)%")

_NUM_ITEM = rf"\d{{1,4}}(?:\s?[{_DASHES}]\s?\d{{1,4}})?"
# Case-insensitive in a scoped group: a pattern compiled with re.I loses the engine's fast
# search for its first character ("["), and costs microseconds at every character of the text.
_LOCATOR_WORDS = (
    r"(?i:pp?\.|p|ch\.|chap\.|chapter|sec\.|section|§|thm\.|theorem|lemma|prop\.|fig\.|"
    r"figure|eq\.|table|tab\.|app\.|appendix|def\.|definition|cor\.|corollary|para\.|vol\.)"
)
# Brackets are found first (a cheap pattern), then their insides are read (bounded).
_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\]")
_RANGE_TO = re.compile(rf"\s?[{_DASHES}]\s?\[(\d{{1,4}})\]")
_NUMERIC = re.compile(
    r"(?:(?i:see(?:\s+also)?|e\.\s?g\.,?|cf\.|i\.\s?e\.,?)\s+)?"
    rf"(?P<items>{_NUM_ITEM}(?:\s?[,;]\s?{_NUM_ITEM}){{0,60}})"
    rf"(?P<loc>,\s?{_LOCATOR_WORDS}\s?~?[\w.{_DASHES}]{{1,12}})?"
)
_ALPHA_ITEM = r"[A-Za-z][A-Za-z+'.\-]{0,10}\d{2,4}[a-z]?"
_ALPHA = re.compile(
    rf"(?P<items>{_ALPHA_ITEM}(?:\s?[,;]\s?{_ALPHA_ITEM}){{0,30}})"
    rf"(?P<loc>,\s?{_LOCATOR_WORDS}\s?~?[\w.{_DASHES}]{{1,12}})?"
)

_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_YEAR_ITEM = rf"(?:{_YEAR}(?:[a-z](?![\w]))?|n\.\s?d\.|in\s+press|forthcoming)"
_YEARS = rf"(?P<years>{_YEAR_ITEM}(?:\s?,\s?(?:{_YEAR_ITEM}|[a-z](?![\w.])))*)"
_LOC = (
    r"(?P<loc>\s?[,:]\s?(?:(?:pp?|para|paras|chap|ch|sec|fig|vol|no|art|ll?)\.?\s?)?"
    rf"[\dIVXLCivxlc][\w.{_DASHES}]{{0,15}}(?:\s?[{_DASHES}]\s?\d{{1,5}})?)?"
)
_MLA_PAGES = (
    rf"(?P<pages>(?:(?:pp?|para|paras|ch|chap|sec|ll?)\.?\s?)?\d{{1,5}}[a-z]?"
    rf"(?:\s?[{_DASHES}]\s?\d{{1,5}})?(?:\s?,\s?\d{{1,5}}(?:\s?[{_DASHES}]\s?\d{{1,5}})?){{0,5}})"
)
_MLA_ONLY_PAGES = re.compile(rf"^\s*{_MLA_PAGES}\s*$")
_MLA_SEGMENT = re.compile(rf"^(?P<names>[^\d]{{1,200}}?)(?:[\s,]+{_MLA_PAGES})?[\s.,]*$", re.S)
_PARENS = re.compile(r"\(([^()\n]{1,400})\)")
_SEGMENT = re.compile(rf"^(?P<names>.{{1,200}}?)[\s,]+{_YEARS}{_LOC}[\s.,]*$", re.S)
_ONLY_YEARS = re.compile(rf"^\s*{_YEARS}{_LOC}\s*$")
_SPLIT_WORKS = re.compile(r"\s*;\s*|(?:(?<=\d)|(?<=\d[a-z])),\s+(?=[A-Z])")
_YEAR_IN = re.compile(rf"(?<![\d/.])({_YEAR})(?![\d])")
_INITIALS = re.compile(r"(?:[^\W\d_]\.){1,3}(?:-[^\W\d_]\.)?")
_ET_AL = re.compile(r"et\.?\s+al\b\.?")
_COMMA = re.compile(r"\s?,\s?")
_ONE_YEAR = re.compile(rf"({_YEAR})([a-z]?)")
_ABBREVIATION = re.compile(r"\s?\[[^\[\]]{0,20}\]")
_TOKEN = re.compile(r"et\.?\s+al\b\.?|&|,|[^\s,;&()\[\]]+")

_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "le", "la", "dos", "das",
     "do", "ten", "ter", "zu", "d'", "d’", "l'", "l’", "al", "el", "bin", "ibn", "st.", "mac"}
)  # fmt: skip
_CONNECTORS = frozenset({"and", "&", "und", "et", "y"})
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
    sample group condition session block figure supplementary supplement online appendices"""
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())
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

    @property
    def number(self) -> int:
        return self.ref.number


def _name_key(name: str) -> str:
    """A surname folded, particles dropped: "van der Berg" -> "berg", "O’Neil" -> "o neil"."""
    words = fold(name).split()
    kept = [w for w in words if w not in _PARTICLES]
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
    if not names:
        # The parser gave up: the first surname-like word (not an initial) of the text.
        for word in re.findall(r"[^\W\d_][\w'’\-]+", text[:300]):
            if word[0].isupper() and fold(word) not in _NOT_NAMES:
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
    )


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
    """The body as one string, and where each of its lines starts in it."""

    text: str
    starts: list[int]
    locations: list[Location]

    def location(self, offset: int) -> Location:
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.locations[max(i, 0)]


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
    for line in body:
        text = _SPACES.sub(" ", line.text).strip()  # a line may hold line breaks and tabs
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
        parts.append(text)
        size += len(text)
        previous = "" if line.heading else text
    return _Body("".join(parts), starts, locations)


# --- citations ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Cite:
    """A citation found, before it becomes an :class:`InTextCitation`."""

    start: int
    text: str
    kind: Literal["numeric", "author-date", "key"]
    targets: list[str]
    entries: list[int | None]
    also: set[int] = field(default_factory=set)  # entries an ambiguous target may mean


def _key_citations(body: _Body, entries: list[_Entry]) -> tuple[list[_Cite], bool, bool]:
    r"""``\cite``-like commands: (citations, ``\nocite{*}`` seen, the site limit reached)."""
    by_key: dict[str, int] = {}
    by_folded: dict[str, int] = {}
    for e in entries:
        if e.ref.key:
            by_key.setdefault(e.ref.key.strip(), e.number)
            by_folded.setdefault(e.ref.key.strip().casefold(), e.number)
    cites: list[_Cite] = []
    cite_all = False
    for n, m in enumerate(_CITE_COMMAND.finditer(body.text)):
        if n >= MAX_CITATION_SITES:
            return cites, cite_all, True
        if _commented(body, m.start()):
            continue
        keys: list[str] = []
        for group in _BRACE.findall(m.group("args")):
            keys.extend(k.strip() for k in group.split(",") if k.strip())
        if "*" in keys and m.group("cmd") == "nocite":
            cite_all = True
            continue
        keys = [k for k in keys if re.fullmatch(r"[^\s\\{}%#~]{1,120}", k)]
        if not keys:
            continue
        found = [by_key.get(k, by_folded.get(k.casefold())) for k in keys]
        cites.append(_Cite(m.start(), m.group(0), "key", keys, found))
    return cites, cite_all, False


def _commented(body: _Body, offset: int) -> bool:
    r"""Whether a LaTeX comment (``%`` not escaped) on the same line comes before ``offset``."""
    i = bisect.bisect_right(body.starts, offset) - 1
    line_start = body.starts[i] if i >= 0 else 0
    return _COMMENT.search(body.text, line_start, offset) is not None


_MATH_WORDS = frozenset(
    {"interval", "intervals", "range", "ranges", "domain", "matrix", "vector", "array", "arrays",
     "segment", "window", "bounds", "bounded", "support", "index", "indices", "shape", "size",
     "sizes", "dimension", "dimensions", "between", "values", "value", "coordinates", "point",
     "points", "tensor", "layers", "units", "set", "sets", "list", "tuple", "entries", "weights",
     "seeds", "kernel", "stride", "padding", "grid", "box", "boxes", "mean", "median", "ci"}
)  # fmt: skip
_UNIT = re.compile(
    r"\s?(?:%|°|‰|(?:[kMGTmµnp]?(?:m|g|s|Hz|W|V|A|J|eV|B|b|L|l|Pa)|mm|cm|km|nm|µm|ms|min|h|"
    r"hours?|days?|weeks?|months?|years?|px|pixels?|dB|K|°C|kg|mg|ml|mL|bp|kb|Mb|fps|ppm)\b)"
)
_LAST_WORDS = re.compile(r"([A-Za-z]+)\W{0,3}(?:([A-Za-z]+)\W{0,3})?(?:([A-Za-z]+)\W{0,3})?$")


def _math_context(text: str, start: int, end: int, *, loose: bool) -> bool:
    r"""Whether a bracket ``text[start:end]`` is mathematics or a quantity.

    After "=", "∈", "≤", "\\in"; before "^", "_", "="; inside or around another bracket
    ("[[1, 2], [3, 4]]"). When ``loose`` (a bracket that would name no entry): also before a
    unit ("[10, 30] mm") and within three words after "interval", "range", "matrix", "shape",
    "between", ... ("the range is [10, 30]"); not always, as "between [3] and [5]" cites.
    """
    before = text[max(0, start - 40) : start].rstrip()
    after = text[end : end + 3].lstrip(" ,")
    if before and before[-1] in "=∈∉⊂⊆⊃≤≥<>×·*^_+−/|\\[":
        return True
    if after and after[0] in "^_×=→∪∩⊂⊆]":
        return True
    if not loose:
        return False
    if _UNIT.match(text, end, end + 12):
        return True
    words = _LAST_WORDS.search(before)
    return words is not None and any(
        w is not None and w.lower() in _MATH_WORDS for w in words.groups()
    )


def _expand(item: str) -> list[int] | None:
    """The numbers of "12" or "3-5"; ``None`` for what is no citation (a leading zero)."""
    parts = re.split(rf"\s?[{_DASHES}]\s?", item)
    if any(p.startswith("0") for p in parts):
        return None
    numbers = [int(p) for p in parts]
    if len(numbers) == 1:
        return numbers
    low, high = numbers
    if low < high <= low + MAX_RANGE:
        return list(range(low, high + 1))
    return [low, high]


def _brackets(
    text: str, inside: re.Pattern[str], *, ranges: bool, spans: re.Pattern[str] = _BRACKET
) -> Iterator[tuple[int, int, re.Match[str], str | None]]:
    """Brackets whose inside ``inside`` reads whole: (start, end, the reading, "5" of "[3]-[5]")."""
    skip = 0
    for m in spans.finditer(text):
        if m.start() < skip:
            continue  # the "[5]" of "[3]-[5]"
        read = inside.fullmatch(m.group(1).strip())  # pdfminer's "[ 12 ]"
        if read is None:
            continue
        end, to_label = m.end(), None
        if ranges and (to := _RANGE_TO.match(text, end)) is not None:
            end, to_label = to.end(), to.group(1)
            skip = end
        yield m.start(), end, read, to_label


def _numeric(
    body: _Body, entries: list[_Entry], *, parens: bool = False
) -> tuple[list[_Cite], bool]:
    """Brackets of numbers against a numbered list (``parens``: numbers in parentheses).

    A bracket is a citation when: no number in it starts with 0 ("[0, 1]"); none is beyond
    ``max(2 × the highest label, highest label + 20)`` (a year, a quantity: "[2020]", "[100,
    500]"); it is not mathematics (see :func:`_math_context`); and, when one of its numbers
    names no entry, it does not stick to the word before it ("x[14]").

    In parentheses (read only when no bracket cites, see :func:`check_consistency`), also not
    after "Eq.", "Fig.", "Table", "Step", ...; and a number naming no entry is taken only alone,
    not after "and"/"or"/"to", and not at the end of a line (where equations are numbered).
    """
    labels: dict[str, int] = {}
    for e in entries:
        if e.ref.label is not None:
            labels.setdefault(e.ref.label.strip(), e.number)
    numbers = [int(k) for k in labels if k.isdigit()]
    top = max(numbers, default=0)
    bound = max(2 * top, top + 20)
    text = body.text
    cites: list[_Cite] = []
    found_in = _brackets(text, _NUMERIC, ranges=not parens, spans=_PARENS if parens else _BRACKET)
    for n, (start, end, m, to_label) in enumerate(found_in):
        if n >= MAX_CITATION_SITES:
            return cites, True
        items = re.split(r"\s?[,;]\s?", m.group("items"))
        expanded: list[int] = []
        for item in items:
            got = _expand(item)
            if got is None:
                expanded = []
                break
            expanded.extend(got)
        if to_label and expanded:
            to = int(to_label)
            low = expanded[-1]
            if low < to <= low + MAX_RANGE:
                expanded.extend(range(low + 1, to + 1))
            else:
                expanded.append(to)
        if not expanded or any(x == 0 or x > bound for x in expanded):
            continue
        found = [labels.get(str(x)) for x in expanded]
        if _math_context(text, start, end, loose=None in found):
            continue
        glued = start > 0 and (text[start - 1].isalnum() or text[start - 1] in ")]")
        if glued and None in found:
            continue
        if parens and _not_cited_in_parentheses(body, start, end, len(expanded), None in found):
            continue
        targets = [str(x) for x in dict.fromkeys(expanded)]
        cites.append(
            _Cite(start, text[start:end], "numeric", targets, [labels.get(t) for t in targets])
        )
    return cites, False


_NOT_CITING_WORDS = frozenset(
    {"eq", "eqs", "equation", "equations", "fig", "figs", "figure", "figures", "table",
     "tables", "step", "steps", "section", "sections", "chapter", "theorem", "lemma",
     "proposition", "corollary", "definition", "condition", "conditions", "constraint",
     "constraints", "problem", "rule", "item", "items", "case", "cases", "stage", "phase",
     "formula", "inequality", "assumption", "hypothesis", "study", "experiment", "model"}
)  # fmt: skip


def _not_cited_in_parentheses(body: _Body, start: int, end: int, count: int, unknown: bool) -> bool:
    """Whether numbers in parentheses are an equation's, a step's, a list item's: no citation."""
    text = body.text
    words = _LAST_WORDS.search(text[max(0, start - 40) : start].rstrip())
    last = (words.group(words.lastindex or 1) or "").lower() if words else ""
    if last in _NOT_CITING_WORDS:
        return True
    if not unknown:
        return False
    i = bisect.bisect_right(body.starts, end)
    next_line = body.starts[i] if i < len(body.starts) else len(text)
    at_line_end = not text[end:next_line].strip(" .,;")
    return count > 1 or last in {"and", "or", "to", "through"} or at_line_end


def _alpha(body: _Body, entries: list[_Entry]) -> tuple[list[_Cite], bool]:
    """Brackets of alphabetic labels ("[Smi20, KLM+19]") against a list labelled so."""
    labels: dict[str, int] = {}
    for e in entries:
        if e.ref.label is not None:
            labels.setdefault(e.ref.label.strip(), e.number)
    text = body.text
    cites: list[_Cite] = []
    for n, (start, end, m, _) in enumerate(_brackets(text, _ALPHA, ranges=False)):
        if n >= MAX_CITATION_SITES:
            return cites, True
        targets = list(dict.fromkeys(re.split(r"\s?[,;]\s?", m.group("items"))))
        found = [labels.get(t) for t in targets]
        if None in found and (
            _math_context(text, start, end, loose=True) or (start > 0 and text[start - 1].isalnum())
        ):
            continue
        cites.append(_Cite(start, text[start:end], "numeric", targets, found))
    return cites, False


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
            people.append([])
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
        if not candidates:
            # The parser may have misread the entry: the name among the words before its year.
            wanted = f" {fold(names.names[0])} "
            candidates = [
                e
                for e in self.entries
                if wanted.strip() and wanted in e.head and self._year_fits(e, year, loose=True)
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
        result: tuple[int | None, frozenset[int]] = (None, frozenset())
        if candidates:
            result = self._choose(candidates, keys, names.et_al, year)
        self.cache[cache_key] = result
        return result

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
        if m is None:
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
        targets.extend(matcher.target(names, year) for year in years)
        found.extend(numbers)
        also |= more
    if not targets:
        return None
    return _Cite(start, written, "author-date", targets, found, also)


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
    before = re.sub(r"['’]s\s*$", "", before.rstrip())  # "Smith’s (2020) study"
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


# --- the list -----------------------------------------------------------------------------------


def _list_kind(references: Sequence[ExtractedReference], text: str) -> _ListKind:
    n = len(references)
    keyed = sum(1 for r in references if r.key)
    if keyed * 2 >= n and _CITE_COMMAND.search(text):
        return "key"
    labels = [r.label.strip() for r in references if r.label and r.label.strip()]
    digits = sum(1 for label in labels if label.isdigit())
    if labels and digits * 2 >= n:
        return "numeric"
    if len(labels) * 2 >= n:
        return "alpha"
    return "author-date"


def _where(ref: ExtractedReference) -> str:
    return str(ref.location)


def _name(ref: ExtractedReference) -> str:
    """How a message names an entry: "[12]" or "entry 12" with its first words."""
    words = " ".join(ref.text.split()[:8])
    if len(ref.text.split()) > 8:
        words += " …"
    head = f"[{ref.label}]" if ref.label else f"entry {ref.number}"
    return f"{head} “{words}”"


def _order_findings(references: Sequence[ExtractedReference]) -> list[ConsistencyFinding]:
    """A numbered list must run 1, 2, 3, ...: gaps, reversals and a wrong start."""
    numbered = [
        (int(r.label.strip()), r)
        for r in references
        if r.label and r.label.strip().isdigit() and len(r.label.strip()) <= 6
    ]
    if len(numbered) * 2 < len(references) or not numbered:
        return []
    present = {x for x, _ in numbered}
    found: list[ConsistencyFinding] = []
    first, ref = numbered[0]
    if first != 1:
        found.append(
            ConsistencyFinding(
                "out-of-order",
                f"The numbered reference list starts at [{first}] ({_where(ref)}), "
                "not at [1]: renumber it or restore the missing entries.",
                target=str(first),
                entry=ref.number,
                location=ref.location,
            )
        )
    for (a, _), (b, ref) in itertools.pairwise(numbered):
        if b == a + 1 or b == a:  # the same label twice is a duplicate-entry
            continue
        if b > a + 1:
            absent = [x for x in range(a + 1, min(b, a + 1 + MAX_RANGE)) if x not in present]
            if not absent:
                continue  # the skipped numbers are elsewhere in the list: reported there
            gap = ", ".join(f"[{x}]" for x in absent[:5]) + (" …" if len(absent) > 5 else "")
            message = (
                f"The reference list jumps from [{a}] to [{b}] ({_where(ref)}): {gap} "
                f"{'is' if len(absent) == 1 else 'are'} missing from the list or it is "
                "misnumbered."
            )
        else:
            message = (
                f"Reference [{b}] ({_where(ref)}) comes after [{a}]: "
                "the list's numbers go backwards there."
            )
        found.append(
            ConsistencyFinding("out-of-order", message, target=str(b), entry=ref.number,
                               location=ref.location)
        )  # fmt: skip
    if len(found) > _MAX_ORDER_FINDINGS:
        where = found[0].location
        found = [
            ConsistencyFinding(
                "out-of-order",
                f"The numbered reference list is out of sequence in {len(found)} places "
                f"(first at {where}): check its numbering.",
                target=found[0].target,
                entry=found[0].entry,
                location=where,
            )
        ]
    return found


def _duplicate_findings(entries: list[_Entry]) -> list[ConsistencyFinding]:
    """Two entries with one label or key, or one work (first author, year, title) twice."""
    found: list[ConsistencyFinding] = []
    reported: set[int] = set()
    for attribute in ("label", "key"):
        seen: dict[str, _Entry] = {}
        for e in entries:
            value = getattr(e.ref, attribute)
            if not value or not value.strip():
                continue
            value = value.strip()
            if value in seen:
                earlier = seen[value]
                shown = f"[{value}]" if attribute == "label" else f"key “{value}”"
                found.append(
                    ConsistencyFinding(
                        "duplicate-entry",
                        f"Two entries have the {attribute} {shown}: {_name(earlier.ref)} "
                        f"({_where(earlier.ref)}) and {_name(e.ref)} ({_where(e.ref)}); "
                        f"give each its own {attribute}.",
                        target=value,
                        entry=e.number,
                        location=e.ref.location,
                    )
                )
                reported.add(e.number)
            else:
                seen[value] = e
    groups: dict[tuple[str, int | None], list[_Entry]] = {}
    for e in entries:
        if e.names and e.year is not None:
            groups.setdefault((e.names[0], e.year), []).append(e)
    for group in groups.values():
        for i, later in enumerate(group[:50]):
            if later.number in reported:
                continue
            for earlier in group[:i]:
                if _same_work(earlier, later):
                    found.append(
                        ConsistencyFinding(
                            "duplicate-entry",
                            f"{_name(later.ref)} ({_where(later.ref)}) lists the same work as "
                            f"{_name(earlier.ref)} ({_where(earlier.ref)}): keep one of them.",
                            target=later.ref.label or earlier.first_display or None,
                            entry=later.number,
                            location=later.ref.location,
                        )
                    )
                    reported.add(later.number)
                    break
    return found


def _same_work(a: _Entry, b: _Entry) -> bool:
    """The same first author and year (checked by the caller) and a near-identical title."""
    if not a.title or not b.title:
        return False
    if a.title == b.title:
        return len(a.title) >= 12
    if min(len(a.title), len(b.title)) < 20:
        return False
    if re.findall(r"\d+", a.title) != re.findall(r"\d+", b.title):
        return False  # "Part 1" and "Part 2"
    if {"i", "ii", "iii", "iv"} & set(a.title.split()) != {"i", "ii", "iii", "iv"} & set(
        b.title.split()
    ):
        return False
    matcher = difflib.SequenceMatcher(None, a.title[:300], b.title[:300], autojunk=False)
    return matcher.quick_ratio() >= 0.93 and matcher.ratio() >= 0.93


# --- findings about citations -------------------------------------------------------------------


def _missing_findings(
    cites: list[_Cite], kind: _ListKind, entries: list[_Entry], body: _Body
) -> list[ConsistencyFinding]:
    first: dict[str, _Cite] = {}
    count: dict[str, int] = {}
    for cite in cites:
        for target, number in zip(cite.targets, cite.entries, strict=True):
            if number is None:
                first.setdefault(target, cite)
                count[target] = count.get(target, 0) + 1
    if not first:
        return []
    numbers = [int(e.ref.label) for e in entries if e.ref.label and e.ref.label.isdigit()]
    found: list[ConsistencyFinding] = []
    for target, cite in first.items():
        where = body.location(cite.start)
        more = count[target] - 1
        times = f" (and {more} more time{'s' * (more > 1)})" if more else ""
        if kind == "numeric" and target.isdigit():
            has = f"its numbers go up to [{max(numbers)}]" if numbers else "it has no numbers"
            alone = cite.text in {f"[{target}]", f"({target})"}
            shown = cite.text if alone else f"[{target}] (in {cite.text})"
            message = (
                f"{shown} on {where}{times} names no entry of the reference list ({has}): "
                "add the entry or correct the number."
            )
        elif kind == "key":
            message = (
                f"The citation key “{target}” ({cite.text}) on {where}{times} has no entry in "
                "the bibliography: add the entry or correct the key."
            )
        elif kind == "author-date":
            hint = _near_hint(target, entries)
            message = (
                f"{cite.text} on {where}{times} cites {target}, which is not in the reference "
                f"list{hint}: add the entry or correct the citation."
            )
        else:
            message = (
                f"[{target}] ({cite.text}) on {where}{times} names no entry of the reference "
                "list: add the entry or correct the label."
            )
        found.append(ConsistencyFinding("missing-entry", message, target=target, location=where))
    return found


#: What LaTeX prints for a citation whose key has no entry: "[?]" (and "[?, ?]"), natbib's
#: "(?)", "(??)" and "?? (??)".
_UNRESOLVED = re.compile(r"\[\?{1,2}(?:\s?,\s?\?{1,2}){0,20}\]|(?:\?\?\s)?\(\?{1,2}\)")


def _unresolved_findings(body: _Body) -> list[ConsistencyFinding]:
    """One ``missing-entry`` finding for the citations LaTeX could not resolve ("[?]").

    A typeset paper no longer says which key was missing, only that one was: the finding
    points at the first place, and counts the others.
    """
    found = list(itertools.islice(_UNRESOLVED.finditer(body.text), 10_000))
    if not found:
        return []
    first = found[0]
    where = body.location(first.start())
    more = len(found) - 1
    times = f" (and {more} more time{'s' * (more > 1)})" if more else ""
    message = (
        f"{first.group()} on {where}{times} is a citation LaTeX could not resolve: its key has "
        "no entry in the bibliography. Add the entry or correct the key."
    )
    return [ConsistencyFinding("missing-entry", message, target="?", location=where)]


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


def _uncited_findings(
    cites: list[_Cite], entries: list[_Entry], kind: _ListKind
) -> list[ConsistencyFinding]:
    cited: set[int] = set()
    for cite in cites:
        cited.update(x for x in cite.entries if x is not None)
        cited |= cite.also
    if kind in {"numeric", "alpha"}:
        # Only a labelled entry can be cited by its label; one label twice is a duplicate-entry.
        labels = {e.ref.label.strip() for e in entries if e.number in cited and e.ref.label}
        cited |= {e.number for e in entries if e.ref.label and e.ref.label.strip() in labels}
        candidates = [e for e in entries if e.ref.label and e.ref.label.strip()]
    elif kind == "key":
        candidates = [e for e in entries if e.ref.key]
    else:
        candidates = entries
        dated = sum(1 for e in entries if e.years)
        if dated * 10 >= len(entries) * 9:
            # Almost every entry has a year, this one none: it cannot be cited "(Name, year)";
            # it is most likely the tail of an entry split in two ("Physical Review B, 40(8),
            # 5774-5779."), not an uncited work.
            candidates = [e for e in entries if e.years]
    # Citations in a form not read (superscripts, footnotes) or a body read in part would make
    # every entry look uncited: say nothing unless at least half the entries are cited.
    if not candidates or len(cited) < math.ceil(len(candidates) / 2):
        return []
    return [
        ConsistencyFinding(
            "uncited-entry",
            f"Reference {_name(e.ref)} ({_where(e.ref)}) is not cited in the text: "
            "cite it or remove it from the list.",
            target=e.ref.key if kind == "key" else (e.ref.label or _display(e)),
            entry=e.number,
            location=e.ref.location,
        )
        for e in candidates
        if e.number not in cited
    ]


def _display(e: _Entry) -> str | None:
    if not e.first_display:
        return None
    return f"{e.first_display} {e.year}{e.suffix or ''}" if e.year else e.first_display


# --- entry point --------------------------------------------------------------------------------


def check_consistency(
    body: Sequence[DocumentLine], references: Sequence[ExtractedReference]
) -> tuple[list[InTextCitation], list[ConsistencyFinding]]:
    """The in-text citations of ``body``, matched to ``references``, and the disagreements.

    Args:
        body: The document's lines outside its reference list, in reading order.
        references: The entries of the list.

    Returns:
        The citations found (in text order) and the findings: citations naming no entry (in
        text order, one per target), entries never cited (in list order), then the list's
        numbering and its duplicates.
    """
    if not references:
        return [], []
    joined = _join(body)
    entries = [_entry(r) for r in references]
    kind = _list_kind(references, joined.text)
    cite_all = capped = False
    if kind == "key":
        cites, cite_all, capped = _key_citations(joined, entries)
    elif kind == "numeric":
        cites, capped = _numeric(joined, entries)
        if not any(x is not None for c in cites for x in c.entries):
            # No bracket cites: the document may cite "(12)", as some Vancouver journals do.
            # Read so only when those name at least half the entries (else they are equations,
            # list items, ...).
            in_parens, capped_parens = _numeric(joined, entries, parens=True)
            named = {x for c in in_parens for x in c.entries if x is not None}
            if len(named) * 2 >= len(entries):
                cites, capped = in_parens, capped_parens
    elif kind == "alpha":
        cites, capped = _alpha(joined, entries)
    else:
        mla = _mla_like(entries)
        cites, capped = _author_date(joined, entries, mla=mla)
        if not mla and _numbers_are_pages(cites, entries):
            mla = True  # "(Seitz et al. 1738)" with Seitz 2006 listed: MLA's pages, not years
            cites, capped = _author_date(joined, entries, mla=True)
        if mla:
            # MLA names an author in running text without parentheses ("As Odom and Adams
            # showed"): an entry whose first author's surname the body has is not reported.
            named = _named_in(joined.text, entries)
            cites.append(_Cite(0, "", "author-date", [], [], named))
    findings = _missing_findings(cites, kind, entries, joined) + _unresolved_findings(joined)
    if not cite_all and not capped:
        findings += _uncited_findings(cites, entries, kind)
    cites = [c for c in cites if c.targets]
    findings += _order_findings(references)
    findings += _duplicate_findings(entries)
    citations = [
        InTextCitation(
            text=" ".join(c.text.split()),
            kind=c.kind,
            targets=tuple(c.targets),
            entries=tuple(c.entries),
            location=joined.location(c.start),
        )
        for c in cites
    ]
    return citations, findings
