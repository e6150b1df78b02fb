r"""Find a document's reference list among its lines and split it into references.

Works on :class:`DocumentLine` lists from any reader (PDF, Word, LaTeX, Markdown, HTML, text),
using what each line carries: its text, and when the reader knows them its left edge (``x0``),
font size, Word's automatic number (``label``), whether the format calls it a heading, and
whether a paragraph starts on it. The steps (docs/documents.md says why each is so):

1. Page furniture a reader left (a running header repeated at the top of pages, a page number
   alone on a line at a page's edge) is set aside.
2. The start: the last heading naming a reference list (English, German, French, Spanish,
   Italian, Portuguese, Dutch, Scandinavian, Polish, Turkish, Russian, Greek, Chinese, Japanese
   and Korean words; numbered or not; any case) that is followed by lines that look like
   references. Without one: the numbered list at the end of the document; or, for a file that
   is nothing but a list, the whole file.
3. The end: an appendix, acknowledgements, biography or other closing heading, a new numbered
   section, a figure or table caption, a heading of the format, or running text (a long
   paragraph with no year). A numbered list is not ended by a heading-looking line when the
   next number of the list follows it closely (refextract's check).
4. The split: labels in sequence ("[1]", "1.", "(1)", "1", "[Smi20]", Word's numbers), else
   hanging or first-line indents (``x0``), else paragraph starts, else a line that starts
   "Surname, X." after a line that ended a reference. A page or column break is never a
   boundary on its own.
5. Each reference's lines are joined: a hyphen at a line end is dropped when it breaks a word
   ("Bio-" + "logy") and kept when it is a real one ("Smith-" + "Jones", "self-" +
   "assessment", "COVID-" + "19"), judged first by how the document itself writes the word.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from citeverify_core.references.document.model import (
    DocumentLine,
    DocumentText,
    ExtractedReference,
)

__all__ = ["FoundReferences", "find_references", "join_lines", "reference_heading"]

# ---------------------------------------------------------------------------------------------
# Patterns. Every pattern is applied to one line (cut to a bounded length where it could be
# long) and has no nested unbounded repetition, so a hostile line costs linear time.

_REF_WORDS = (
    r"references?(?:\s+(?:cited|list|and\s+notes|and\s+further\s+reading))?|list\s+of\s+references"
    r"|cited\s+references|reference\s+list|bibliography(?:\s+and\s+references)?"
    r"|bibliographical\s+references|select(?:ed)?\s+bibliography|works\s+cited|sources\s+cited"
    r"|literature(?:\s+cited)?|cited\s+literature|literature\s+references|sources"
    r"|literatur(?:verzeichnis|liste|angaben|hinweise)?|quellen(?:verzeichnis)?"
    r"|quellen-\s*und\s+literaturverzeichnis"
    r"|r[ée]f[ée]rences(?:\s+bibliographiques)?|bibliographie"
    r"|referencias(?:\s+bibliogr[áa]ficas)?|bibliograf[íi]a|fuentes"
    r"|riferimenti(?:\s+bibliografici)?|refer[êe]ncias(?:\s+bibliogr[áa]ficas)?"
    r"|literatuur(?:lijst)?|referenties|bronnen|bibliografie"
    r"|litteratur(?:liste|förteckning)?|referenser|kilder|k[äa]llor|l[äa]hteet|kirjallisuus"
    r"|pi[śs]miennictwo|literatura|bibliografia|kaynak[çc]a|kaynaklar"
    r"|список\s+(?:использованной\s+)?литературы|литература|библиография"
    r"|βιβλιογραφία|αναφορές|参考文献|参考资料|引用文献|참고\s?문헌"
)
_NUMBERING = r"(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVXLC]{1,6}\.?|[A-Z]\.|§\s?\d{1,2})"
_HEADING = re.compile(
    rf"^[\W_]{{0,4}}(?:{_NUMBERING}\s*)?(?P<word>{_REF_WORDS})[\s:.\W_]{{0,4}}$", re.I
)
# Small capitals read as "R EFERENCES": one capital, a space, the rest in capitals.
_SPLIT_CAPS = re.compile(r"\b([A-ZÀ-Þ])\s(?=[A-ZÀ-Þ]{2,}\b)")

# Headings that close a reference list: a whole short line ("Acknowledgements", "7 Notes").
_END_WORDS = (
    r"acknowledge?ments?|danksagung|remerciements|agradecimientos|ringraziamenti|agradecimentos"
    r"|dankwoord|funding(?:\s+(?:sources|information|statement))?|author\s+contributions?"
    r"|contributions|about\s+the\s+authors?|affiliations?|authors?['’]?\s+address(?:es)?"
    r"|addresses|correspondence|corresponding\s+author|authors?['’]?\s+biograph(?:y|ies)"
    r"|biograph(?:y|ies)|biographical\s+notes?|vitae?|curriculum\s+vitae|author\s+information"
    r"|(?:conflicts?|declarations?)\s+of\s+interests?|competing\s+interests|declarations?"
    r"|data\s+(?:and\s+code\s+)?availability(?:\s+statement)?|code\s+availability"
    r"|ethics(?:\s+statement)?|ethical\s+(?:approval|statement)|(?:neurips\s+paper\s+)?checklist"
    r"|glossary|index|notation|abbreviations|list\s+of\s+(?:figures|tables|abbreviations)"
    r"|figures|tables|footnotes|endnotes|notes|erklärung|eidesstattliche\s+erklärung"
    r"|supplement(?:ary|al)?(?:\s+(?:materials?|information|data|notes|results|figures|tables))?"
)
_END_HEADING = re.compile(
    rf"^[\W_]{{0,4}}(?:{_NUMBERING}\s*)?(?:{_END_WORDS})(?:\s+[A-Z0-9](?:\.\d+)?)?[\s:.]{{0,3}}$",
    re.I,
)
# Headings that close it and may carry a title: "Appendix A: Proofs", "Supplementary Material
# for ...", "Anhang", "Annexe 2".
_APPENDIX = re.compile(
    rf"^[\W_]{{0,4}}(?:{_NUMBERING}\s*)?(?:appendix|appendices|appendixes|annex(?:e|es)?|anhang"
    r"|anh[äa]nge|ap[ée]ndices?|allegati?|online\s+(?:appendix|supplement)"
    r"|supplement(?:ary|al)\s+(?:materials?|information))\b[^,]{0,80}$",
    re.I,
)
# "Appendix A: Proofs", "A Proof of Theorem 2", "A.1 Setup", "8 Discussion", "VII. CONCLUSION".
_SECTION = re.compile(
    r"^(?:[A-H](?:\.\d{1,2}){1,3}|\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+"
    r"[A-Z][A-Za-z\u00C0-\u024F'’\-]*(?:\s+[\w'’\-:&]+){0,8}$"
)
# "A Proofs" (an appendix in the NeurIPS style): only with a heading's look, as a title's line
# may start "A Survey of ...".
_LETTER_SECTION = re.compile(r"^[A-H]\s+[A-Z][A-Za-z\u00C0-\u024F'’\-]+(?:\s+[\w'’\-:&]+){0,8}$")
_CAPTION = re.compile(
    r"^(?:figure|fig\.|table|tab\.|abbildung|abb\.|tabelle|tableau|tabla|tabella|algorithm|"
    r"listing)\s*[A-Z]?\d{1,3}(?:\.\d{1,2})?\s*[.:|\-–—]",
    re.I,
)
_YEAR = re.compile(r"(?<![\d/.])(?:1[6-9]|20)\d\d[a-z]?(?!\d)|\b(?:n\.d\.|in press|forthcoming)")
# A label at the start of a line: "[12]", "[Smi20]", "(12)", "12.", "12)", or "12" before a word.
_LABEL = re.compile(
    r"^\s*(?:\[(?P<b>[^\[\]\s]{1,14})\]|\((?P<p>\d{1,3})\)|(?P<n>\d{1,3})[.)](?![\d.])"
    r"|(?P<bare>\d{1,3})(?=\s+[^\W\d_]))\s*"
)
_LABEL_ONLY = re.compile(r"^\s*(?:\[[^\[\]\s]{1,14}\]|\(\d{1,3}\)|\d{1,3}[.)]?)\s*$")
_PARTICLE = (
    r"(?:(?:van|von|der|den|de|del|della|di|da|du|le|la|dos|das|ten|ter|al|el|bin|st\.?|mc"
    r"|d['’])\s?)"
)
# "Smith, J." / "Smith, John" / "van der Berg, A." / "Smith J," / "Smith JA." / "SMITH, J." /
# "Smith-Jones, A." / "O'Neil, B." / "World Health Organization." (corporate: first words only).
_AUTHOR_START = re.compile(
    rf"^{_PARTICLE}{{0,3}}[^\W\d_a-z][\w'’\-]{{0,30}}(?:\s[^\W\d_a-z][\w'’\-]{{0,30}}){{0,2}}"
    r"(?:,\s?[^\W\d_]|\s[^\W\d_a-z]{1,3}[,.](?:\s|$)|\s(?:[^\W\d_a-z]\.\s?){1,3}[,\s(]"
    # "Cole L (2003)", "Smith AB (2001a)": JSS and other author-year styles without commas.
    r"|\s[^\W\d_a-z]{1,3}\s\((?:1[6-9]|20)\d\d)"
    # "S.G. Zhirov," / "A. Tarantino and" / "J.-P. Smith,": initials first.
    r"|^(?:[^\W\d_a-z]\.\s?-?){1,3}\s?[^\W\d_a-z][\w'’\-]{1,30}(?:,|\s(?:and|&|et)\s)"
)
_URL_TAIL = re.compile(r"(?:https?://|www\.|doi:\s?|\b10\.\d{4,9}/)\S*$", re.I)
_PAGE_NUMBER = re.compile(
    r"^[\s\-–—|]*(?:page|p\.|pg\.?|seite|página|pagina)?\s*\d{1,4}"
    r"(?:\s*(?:of|/|von|de|di)\s*\d{1,4})?[\s\-–—|]*$",
    re.I,
)
# A line ending in a first name's initial after a comma or another initial ("Bergsagel, G.",
# "P. L."): a list of authors cut by the line end ("Series A." may end a reference).
_TRAILING_INITIAL = re.compile(r"(?:,|\b[A-Z]\.)\s[A-Z]\.$")
# A given name and its middle initial after a comma or "and" ("..., Scott P. Carroll, Jose A." +
# "Andres, and David R. Angelini. 2011."), but not a journal's part ("Proc. R. Soc., Series A.").
_TRAILING_GIVEN_NAME = re.compile(
    r"(?:,|\band|&)\s(?!(?:Series|Ser|Part|Section|Sect|Vol|Volume|Supplement|Suppl|Appendix|"
    r"Annex|Phase|Type|Group|Class|Division|Chapter|Plate|Model|Version|Issue|Book)\b)"
    r"[A-Z][a-z][\w'’\-]{0,20}\s[A-Z]\.$"
)
# Words that end an author's or editor's part, never a reference ("... Spectroscopy.” Ed." +
# "Harold I. Schiff and Ulrich Platt. Optical Methods ...").
_ROLE_END = re.compile(
    r"(?:\b(?:[Ee]ds?|[Tt]rans|Hrsg|[Cc]omp)\.|\b(?:[Ee]dited|[Tt]ranslated)\sby)$"
)
_RULE = re.compile(r"^[\s\-–—_=*~#.·•]{3,}$")
# A repeated author printed as a rule at an entry's start: "———. 1990.", "—— (2004)",
# "--- 2004", "— (1907)" (not "–145", a page range's end: an en dash needs a second one).
_REPEATED_AUTHOR = re.compile(r"^(?:[—―]+|[–-]{2,}|_{3,})\s?(?=[.,:;(\s]|\d{4})")
_WORD = re.compile(r"[^\W\d_]+(?:[-‐][^\W\d_]+)*")
_FIRST_WORD = re.compile(r"[^\W\d_]+")
_LAST_FRAGMENT = re.compile(r"([^\W\d_]+(?:[-‐][^\W\d_]+)*)[-‐]$")
_SUBHEADING = re.compile(
    r"^(?:primary|secondary|archival|unpublished|published|online|web|other|further|cited|"
    r"additional|software|data(?:sets?)?|books?|articles?|journal\s+articles|reports?|"
    r"conference\s+papers|theses|patents|standards|legal|government|news(?:paper)?s?|"
    r"interviews|manuscripts?|printed|electronic|internet|audio-?visual|and|sources?|"
    r"materials?|resources?|documents?|works|literature|references?|\s)+:?$",
    re.I,
)

# Words a real hyphen joins to the next one far more often than a soft hyphen splits them.
_HYPHEN_PREFIXES = frozenset(
    {"self", "non", "cross", "well", "semi", "multi", "real", "high", "low", "large", "small",
     "long", "short", "fine", "zero", "few", "state", "end", "two", "three", "one", "data",
     "open", "closed", "single", "double", "top", "bottom", "user", "task", "object", "sub",
     "pre", "post", "anti", "co", "re", "mid", "intra", "ex", "quasi", "pseudo", "meta"}
)  # fmt: skip
# A prefix of the list above is not a real one when what follows is a word's ending.
_WORD_ENDINGS = frozenset(
    {"ing", "ings", "ness", "ment", "ments", "tion", "tions", "sion", "sions", "ple", "ples",
     "ly", "ally", "ship", "ular", "ity", "ities", "ish", "able", "ible", "ence", "ences",
     "ance", "ances", "al", "als", "ed", "er", "ers", "est", "ous", "ive", "ives", "ic", "ics",
     "ical", "ism", "ist", "ists", "ize", "ise", "ized", "ised", "ation", "ations", "nar", "ar",
     "ory", "ories", "ure", "ures", "ted", "ting", "cal", "tive", "sis", "ses", "vant"}
)  # fmt: skip
# Fragments that prefixes such as "re", "pre", "co", "sub" only join with a real hyphen when the
# document says so: these prefixes are only trusted before a word of the document (read on
# other lines: the tail of the split word itself is not counted). "anti", "post", "mid", "meta"
# and "intra" are trusted: hyphenation patterns seldom break a word right after them.
_WEAK_PREFIXES = frozenset({"re", "pre", "co", "sub", "ex"})
# Greek letters and chemical prefixes before a long tail name a compound or a term with a
# hyphen ("alpha-difluoromethylornithine", "gamma-aminobutyric"). Not "bio", "photo", "iso",
# "neo", "ultra": "bio-" + "logical", "iso-" + "lation" are soft breaks as often as not.
_LONG_TAIL_PREFIXES = frozenset(
    {"alpha", "beta", "gamma", "delta", "kappa", "omega", "sigma", "theta", "lambda", "tert",
     "cis"}
)  # fmt: skip
# Endings of a whole adjective ("analytical-" + "methodological", "social-" + "ecological"): a
# syllable break leaves a word's first part, which seldom ends so.
_ADJECTIVE_ENDINGS = ("ical", "ial", "ional", "ive", "ous", "ary", "ful", "less", "ic")
_VOWELS = frozenset("aeiouy")
# How a word's ending starts after a vowel ("situ-" + "ational", "individu-" + "ally").
_SUFFIX_STARTS = (
    "ation",
    "ition",
    "ution",
    "ual",
    "ous",
    "enc",
    "anc",
    "abl",
    "ibl",
    "ate",
    "ati",
    "ity",
    "ic",
    "al",
    "ing",
    "ed",
    "er",
    "es",
    "ion",
    "ism",
    "ist",
    "iz",
    "is",
    "olog",  # "bi-" + "ology", "The-" + "ologie": TeX's patterns break Greek words so
    "ograph",
)
_HYPHEN_SUFFIXES = frozenset(
    {"based", "driven", "aware", "free", "level", "scale", "specific", "oriented", "agnostic",
     "invariant", "dependent", "independent", "grained", "shot", "trained", "tuned", "wise",
     "like", "related", "guided", "conditioned", "centric", "centered", "constrained", "enabled",
     "efficient", "sensitive", "order", "dimensional", "valued", "world", "art", "to"}
)  # fmt: skip

T = TypeVar("T")

# Conjunctions after a suspended hyphen ("gesellschafts- und wissenschaftsgeschichtlich",
# "pre- and post-operative"): never the end of a word a syllable break cut.
_SUSPENDING = frozenset({"und", "oder", "bzw", "sowie", "and"})

#: The label group of :data:`_LABEL` that each labelled list mode reads.
_MODE_KIND = {"bracket": "b", "paren": "p", "dot": "n", "bare": "bare"}

#: Why an entry read from a damaged line is not to be trusted (ExtractedReference.unreliable).
UNRELIABLE_TEXT = "read from a font without a Unicode map: dashes or ligatures may be lost"

_MAX_HEADING_CHARS = 90
_MAX_REFERENCE_LINES = 40
_LOOKAHEAD = 8


@dataclass(slots=True)
class FoundReferences:
    """The reference list of a document and the rest of it.

    Attributes:
        references: The entries, in order.
        body: The lines outside the list (where in-text citations are looked for).
        heading: The heading the list was found under, or how it was found.
        notes: What a person should know ("the list ends before 'Appendix A', page 14").
        start: The index in the document's lines of the list's first line (its heading, when
            there is one); ``None`` when the format delimited the entries itself.
        end: The index of the first line after the list.
        incomplete: Why the list may not have been read whole ("the list runs past page 7,
            which has no text"), or ``None``: then no entry is called uncited or missing on
            the strength of this reading (precision first).
    """

    references: list[ExtractedReference]
    body: list[DocumentLine]
    heading: str | None = None
    notes: list[str] = field(default_factory=list)
    start: int | None = None
    end: int | None = None
    incomplete: str | None = None


def reference_heading(text: str) -> str | None:
    """The heading word(s) when ``text`` is a heading that names a reference list, else None.

    >>> reference_heading("VII. REFERENCES"), reference_heading("Literaturverzeichnis")
    ('REFERENCES', 'Literaturverzeichnis')
    >>> reference_heading("see the references below") is None
    True
    """
    line = text.strip()
    if not line or len(line) > _MAX_HEADING_CHARS:
        return None
    first = next((c for c in line if c.isalpha()), "")
    if first.islower():
        return None  # "literature." ending a sentence or a reference, not a heading
    if m := _HEADING.match(line):
        return m.group("word")
    if line.upper() == line and (m := _HEADING.match(_SPLIT_CAPS.sub(r"\1", line))):
        return m.group("word")
    return None


def find_references(text: DocumentText) -> FoundReferences:
    """The reference list of ``text``: its entries with labels and locations, and the body."""
    if text.entries:
        heading = "BibTeX entries" if text.entries[0].text.startswith("@") else "\\bibitem entries"
        return FoundReferences(list(text.entries), list(text.lines), heading=heading)
    lines = text.lines
    if not lines:
        return FoundReferences([], [])
    furniture = _page_furniture(lines)
    found = _find_start(lines, furniture)
    if found is None:
        return FoundReferences([], list(lines))
    first, heading_index, heading = found
    splitter = _Splitter(lines, furniture, first, _vocabulary(lines))
    groups, end, end_note = splitter.split()
    references = [splitter.reference(group, number) for number, group in enumerate(groups, 1)]
    # A sub-heading inside an author-date list ("Primary sources") is not an entry.
    references = [
        r
        for r in references
        if r.text and (r.label is not None or len(r.text) >= 60 or _looks_like_reference(r.text))
    ]
    references = [
        ExtractedReference(r.text, n, r.location, r.label, r.key, r.end, r.unreliable)
        for n, r in enumerate(references, 1)
    ]
    start = heading_index if heading_index is not None else first
    body = [*lines[:start], *lines[end:]]
    notes = list(splitter.notes)
    if end_note:
        notes.append(end_note)
    incomplete = (
        splitter.incomplete
        or _unread_pages(lines, groups, end, text.pages)
        or _numbering_gaps(references)
    )
    return FoundReferences(
        references,
        body,
        heading=heading,
        notes=notes,
        start=start,
        end=end,
        incomplete=incomplete,
    )


def _unread_pages(
    lines: Sequence[DocumentLine], groups: Sequence[_Group], end: int, pages: int | None
) -> str | None:
    """Why the list may run over pages that have no text (scanned, or unreadable), or None.

    A page between the list's first and last lines with no line at all, or pages after the
    list's last line when the list runs to the end of what was read: a figure page of images
    looks the same, and is taken as unread too (precision first: no finding is made then).
    """
    list_pages = sorted(
        {p for g in groups for j in g.indices if (p := lines[j].location.page) is not None}
    )
    if not list_pages:
        return None
    read_pages = {p for ln in lines if (p := ln.location.page) is not None}
    for page in range(list_pages[0], list_pages[-1]):
        if page not in read_pages:
            return f"the list runs past page {page}, which has no text that could be read"
    if end >= len(lines) and pages is not None and list_pages[-1] < pages:
        missing = [p for p in range(list_pages[-1] + 1, pages + 1) if p not in read_pages]
        if missing:
            return f"the list may go on on page {missing[0]}, which has no text that could be read"
    return None


def _numbering_gaps(references: Sequence[ExtractedReference]) -> str | None:
    """Why a numbered list may lack entries (its numbers skip some), or None."""
    numbers = [int(r.label) for r in references if r.label and r.label.isdigit()]
    if len(numbers) < 2 or len(numbers) * 10 < len(references) * 9:
        return None
    missing = sorted(set(range(min(numbers), max(numbers) + 1)) - set(numbers))
    if min(numbers) > 1:
        missing = [*range(1, min(numbers)), *missing]
    if not missing:
        return None
    shown = ", ".join(str(n) for n in missing[:5]) + (", ..." if len(missing) > 5 else "")
    return f"the list's numbers skip {shown}: entries were not read apart"


# ---------------------------------------------------------------------------------------------
# Page furniture


def _page_furniture(lines: Sequence[DocumentLine]) -> set[int]:
    """Indices of lines that are a page's running header or footer, or its page number.

    Only lines among the first two or last two of a page count: a line whose text (digits
    aside) is at an edge of at least three pages (two when the document has three pages or
    fewer), and a page number alone at an edge.
    """
    edges: dict[int, list[int]] = {}
    for i, line in enumerate(lines):
        if line.location.page is not None:
            edges.setdefault(line.location.page, []).append(i)
    if len(edges) < 2:
        return set()
    edge_indices: list[int] = []
    for indices in edges.values():
        edge_indices.extend(indices[:2])
        edge_indices.extend(i for i in indices[-2:] if i not in indices[:2])
    furniture: set[int] = set()
    by_text: dict[str, set[int]] = {}
    for i in edge_indices:
        raw = lines[i].text.strip()
        if not raw or len(raw) > 150:
            continue
        if _PAGE_NUMBER.match(raw):
            furniture.add(i)
            continue
        shape = re.sub(r"\d+", "#", raw.casefold())
        by_text.setdefault(shape, set()).add(i)
    needed = 2 if len(edges) <= 3 else 3
    for same in by_text.values():
        found = [(lines[i].location.page or 0, lines[i].text.strip(), i) for i in same]
        furniture.update(running_text(found, needed))
    return furniture


_DIGITS = re.compile(r"\d+")


def running_text(found: Sequence[tuple[int, str, T]], needed: int) -> list[T]:
    """Of ``(page, text, item)`` lines of one shape (digits aside), those that are running text.

    They are when they stand on at least ``needed`` pages and their numbers either agree or
    move with the page (a page number, "Page 3 of 9", "Vol. 3 (2020) 112"). Lines whose numbers
    differ otherwise are the text's own ("(1938)." ending a reference at the foot of several
    pages): only the lines among them that are the same word for word can be running text.
    """
    if len({page for page, _, _ in found}) < needed:
        return []
    numbers = [(page, [int(d) for d in _DIGITS.findall(text)[:8]]) for page, text, _ in found]
    if (
        len({text for _, text, _ in found}) == 1
        or not numbers[0][1]
        or any(
            len({nums[k] - page for page, nums in numbers}) == 1
            for k in range(min(len(nums) for _, nums in numbers))
        )
    ):
        return [item for _, _, item in found]
    by_text: dict[str, list[tuple[int, str, T]]] = {}
    for place in found:
        by_text.setdefault(place[1], []).append(place)
    return [
        item
        for same in by_text.values()
        if len({page for page, _, _ in same}) >= needed
        for _, _, item in same
    ]


# ---------------------------------------------------------------------------------------------
# The start of the list


def _find_start(
    lines: Sequence[DocumentLine], furniture: set[int]
) -> tuple[int, int | None, str] | None:
    """(index of the list's first line, index of its heading or None, how it was found)."""
    candidates = [
        i
        for i, line in enumerate(lines)
        if i not in furniture
        and reference_heading(line.text)
        and not _ends_a_sentence(lines, i, furniture)
    ]
    chosen: int | None = None
    for i in reversed(candidates):
        if _reference_like_after(lines, i + 1, furniture):
            chosen = i
            break
    if chosen is not None:
        # A running header "References" on each page of the list is not a new list: go back
        # to the first heading of the chain as long as what is between looks like references.
        for i in reversed([c for c in candidates if c < chosen]):
            if (
                chosen - i <= 150
                and _top_of_page(lines, chosen)
                and _same_heading(lines[i].text, lines[chosen].text)
                and _all_reference_like(lines, i + 1, chosen, furniture)
            ):
                chosen = i
            else:
                break
        heading = lines[chosen].text.strip()
        return chosen + 1, chosen, heading
    numbered = _numbered_list_at_end(lines, furniture)
    if numbered is not None:
        return numbered, None, "numbered list at the end"
    if _whole_document_is_a_list(lines, furniture):
        return 0, None, "the whole document (a list without a heading)"
    return None


def _ends_a_sentence(lines: Sequence[DocumentLine], i: int, furniture: set[int]) -> bool:
    """Line ``i`` ("Literature.") is the last word of the line before, not a heading.

    That is: the line before runs on (ends in a letter, a comma or a hyphen), is set in the
    same size, and line ``i`` ends with a full stop or is indented from it (a hanging indent).
    """
    j = i - 1
    while j >= 0 and (j in furniture or not lines[j].text.strip()):
        j -= 1
    if j < 0 or lines[j].location.page != lines[i].location.page:
        return False
    prev, line = lines[j], lines[i]
    tail = prev.text.rstrip()[-1:]
    if not (tail.isalpha() or tail in {",", "-", "‐"}):
        return False
    if prev.size is not None and line.size is not None and abs(prev.size - line.size) > 0.2:
        return False
    if line.heading:
        return False
    indented = prev.x0 is not None and line.x0 is not None and 2.0 < line.x0 - prev.x0 < 60
    return line.text.rstrip().endswith(".") or indented


def _top_of_page(lines: Sequence[DocumentLine], i: int) -> bool:
    """Line ``i`` is among the first three of its page or column (False without pages)."""
    line = lines[i]
    if line.location.page is None:
        return False  # no pages, no running headers
    before = 0
    for j in range(i - 1, max(-1, i - 4), -1):
        prev = lines[j]
        if prev.location.page != line.location.page or (
            prev.x0 is not None and line.x0 is not None and abs(prev.x0 - line.x0) > 100
        ):
            break
        before += 1
    return before < 3


def _same_heading(a: str, b: str) -> bool:
    return (reference_heading(a) or "").casefold() == (reference_heading(b) or "").casefold()


def _next_lines(
    lines: Sequence[DocumentLine], start: int, furniture: set[int], count: int
) -> list[str]:
    out: list[str] = []
    i = start
    while i < len(lines) and len(out) < count:
        t = lines[i].text.strip()
        if t and i not in furniture and not _RULE.match(t):
            out.append(t)
        i += 1
    return out


def _looks_like_reference(text: str) -> bool:
    """A cheap test: a label, a year, or an author at the start."""
    head = text[:300]
    return bool(_LABEL.match(head) or _YEAR.search(head) or _AUTHOR_START.match(head))


def _reference_like_after(lines: Sequence[DocumentLine], start: int, furniture: set[int]) -> bool:
    """The lines after ``start`` look like a reference list (not a table of contents)."""
    following = _next_lines(lines, start, furniture, 6)
    if not following:
        return False
    if any(reference_heading(t) for t in following[:1]):
        return False
    labelled = sum(1 for t in following if _LABEL.match(t[:40]) and not _LABEL_ONLY.match(t))
    years = sum(1 for t in following if _YEAR.search(t[:400]))
    if labelled and years:
        return True
    if years >= 2 or (years and len(following) <= 2):
        return True
    # MLA puts the year at an entry's end, often on its second or third line: one year and
    # lines that start with an author ("Caan, Michael N., ...") are a list too.
    # A first entry of six lines or more: look at ten.
    longer = _next_lines(lines, start, furniture, 10)
    authors = sum(1 for t in longer if _AUTHOR_START.match(t[:200]))
    if authors >= 2 and any(_YEAR.search(t[:400]) for t in longer):
        return True
    # Only labels and no years yet (a margin column of labels read before the text).
    return sum(1 for t in following if _LABEL_ONLY.match(t)) >= 3


def _all_reference_like(
    lines: Sequence[DocumentLine], start: int, stop: int, furniture: set[int]
) -> bool:
    texts = [
        lines[i].text.strip()
        for i in range(start, stop)
        if i not in furniture and lines[i].text.strip()
    ]
    if not texts:
        return True
    if any(_ends_list(t, lines[start].size) for t in texts):
        return False
    hits = sum(1 for t in texts if _YEAR.search(t[:400]) or _LABEL.match(t[:40]))
    return hits * 3 >= len(texts)


def _label_number(text: str) -> int | None:
    m = _LABEL.match(text[:40])
    if not m:
        return None
    value = m.group("b") or m.group("p") or m.group("n") or m.group("bare")
    return int(value) if value and value.isdigit() else None


def _numbered_list_at_end(lines: Sequence[DocumentLine], furniture: set[int]) -> int | None:
    """The index of "[1]"/"1." that starts the last numbered list with reference-like items."""
    numbers = [None if i in furniture else _line_number(line) for i, line in enumerate(lines)]
    ones = [i for i, number in enumerate(numbers) if number == 1][-50:]
    best: int | None = None
    best_count = 0
    for i in ones:
        expected, count, last = 2, 1, i
        years = int(bool(_YEAR.search(lines[i].text[:400])))
        for j in range(i + 1, len(lines)):
            if numbers[j] == expected:
                expected += 1
                count += 1
                last = j
                after = lines[j + 1].text[:400] if j + 1 < len(lines) else ""
                years += bool(_YEAR.search(lines[j].text[:400]) or _YEAR.search(after))
            elif j - last > _MAX_REFERENCE_LINES:
                break
        if count >= 2 and years * 2 >= count >= best_count:
            best, best_count = i, count
    return best


def _line_number(line: DocumentLine) -> int | None:
    """The number a line is labelled with (Word's or Markdown's, or its text's)."""
    if line.label:
        label = _label_text(line.label)
        return int(label) if label.isdigit() and len(label) < 6 else None
    return _label_number(line.text)


def _whole_document_is_a_list(lines: Sequence[DocumentLine], furniture: set[int]) -> bool:
    texts = [ln.text.strip() for i, ln in enumerate(lines) if i not in furniture]
    texts = [t for t in texts if t]
    if not texts or len(texts) > 20_000:
        return False
    like = sum(1 for t in texts if _YEAR.search(t[:400]) or _LABEL.match(t[:40]))
    return like * 10 >= len(texts) * 6


# ---------------------------------------------------------------------------------------------
# The end of the list


def _ends_list(text: str, size: float | None) -> bool:
    """``text`` is a heading or caption that comes after a reference list."""
    line = text.strip()
    if not line or len(line) > _MAX_HEADING_CHARS + 30:
        return False
    if _CAPTION.match(line):
        return True
    if len(line) > _MAX_HEADING_CHARS or _YEAR.search(line):
        return False
    if _END_HEADING.match(line):
        return True
    # "Appendix A: Proofs" (a reference's line running "Appendix to ..." has a comma, a year,
    # more words or a full stop).
    return bool(_APPENDIX.match(line)) and len(line.split()) <= 10 and not line.endswith(".")


def _capitals_heading(text: str) -> bool:
    """``text`` is a heading set in capitals: "A RESEARCH METHODS", "B PROOFS".

    Two to eight words, no year, no full stop or comma at its end.
    """
    words = text.split()
    return (
        2 <= len(words) <= 8
        and text.upper() == text
        and not text.endswith((".", ","))
        and not _YEAR.search(text)
        and sum(c.isalpha() for c in text) >= 6
    )


def _section_heading(line: DocumentLine, body_size: float | None) -> bool:
    """A new section starts here: a format's heading, a bigger font, or "8 Discussion"."""
    text = line.text.strip()
    if not text or len(text) > _MAX_HEADING_CHARS or reference_heading(text):
        return False
    if line.heading:
        return True
    if _YEAR.search(text) or "," in text or text.endswith("."):
        return False
    bigger = (
        line.size is not None
        and body_size is not None
        and line.size >= body_size + 1.5
        and len(text) < 70
    )
    if bigger:
        return True
    return bool(_SECTION.match(text))


# ---------------------------------------------------------------------------------------------
# The split


@dataclass(slots=True)
class _Group:
    indices: list[int]
    label: str | None = None


class _Splitter:
    """Splits the lines from ``first`` on into references and finds where the list ends."""

    def __init__(
        self,
        lines: Sequence[DocumentLine],
        furniture: set[int],
        first: int,
        vocabulary: tuple[Counter[str], Counter[str]],
    ) -> None:
        self.lines = lines
        self.furniture = furniture
        self.first = first
        self.words, self.compounds = vocabulary
        self.notes: list[str] = []
        self.dropped = 0
        self.figures = 0
        #: Why the list may not have been read whole (see FoundReferences.incomplete).
        self.incomplete: str | None = None
        window = lines[first : first + 400]
        # Footnotes are skipped inside the list, unless the reader put the list itself in a
        # page's footnote area (a list set smaller than the text, at a page's foot).
        self.skip_footnotes = sum(ln.footnote for ln in window) * 2 < len(window)
        own = [ln for ln in window if not (ln.footnote and self.skip_footnotes)]
        #: The size the list's entries are set in (its first lines, weighted by characters):
        #: what figure text is smaller than. Only the first lines: a short list may be
        #: followed by pages of text in another size.
        self.list_size = _main_size([ln for ln in own if ln.text.strip()][:8])
        # What a heading is bigger than: the document's text size weighted by characters,
        # footnotes aside, or the list's when bigger. Not the lines after the list's start
        # counted one by one: pages full of 10-pt notes there made 12-pt entries read as
        # headings, and the list "ended" after its first line.
        body = _main_size([ln for ln in lines[:50_000] if not ln.footnote])
        sizes = [s for s in (body, self.list_size) if s is not None]
        self.body_size = max(sizes) if sizes else None
        self.mode = self._label_mode()
        #: Bracketed labels are words ("[Smi20]", "[KNUTH]"): not numbers in sequence.
        self.word_labels = self.mode == "bracket" and self._first_label_is_a_word()
        self.base = self._column_bases()
        self.start_class = self._start_class()

    # -- what kind of list -------------------------------------------------------------------

    def _label_mode(self) -> str:
        """``word`` (Word's numbers), ``bracket``, ``paren``, ``dot``, ``bare`` or ``none``."""
        window = [
            ln
            for i, ln in enumerate(self.lines[self.first : self.first + 300], self.first)
            if ln.text.strip() and i not in self.furniture
        ][:60]
        if not window:
            return "none"
        if sum(1 for ln in window if ln.label) >= min(2, len(window)):
            return "word"
        kinds: Counter[str] = Counter()
        for ln in window:
            if m := _LABEL.match(ln.text[:40]):
                kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
                kinds[kind] += 1
        window = [ln for ln in window if not _SUBHEADING.match(ln.text.strip()[:120])] or window
        first_text = window[0].text
        if m := _LABEL.match(first_text[:40]):
            kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
            # The first line of the list is labelled: that is the list's kind (a bare "1" must
            # be followed by "2" to count, so that "2019 ..." does not make a list numbered).
            if kind != "bare" or kinds["bare"] >= 2:
                return {"b": "bracket", "p": "paren", "n": "dot", "bare": "bare"}[kind]
        if _LABEL_ONLY.match(first_text):
            return "margin"
        if kinds:
            kind, count = kinds.most_common(1)[0]
            # Labels after an unlabelled start count when they run in sequence ("(1973):" at a
            # line's start is a year, not a label).
            numbers = {n for ln in window if (n := _label_number(ln.text)) is not None}
            if count >= 3 and kind != "bare" and sum(1 for n in numbers if n + 1 in numbers) >= 2:
                return {"b": "bracket", "p": "paren", "n": "dot"}[kind]
        return "none"

    def _first_label_is_a_word(self) -> bool:
        for i in range(self.first, min(len(self.lines), self.first + 300)):
            m = _LABEL.match(self.lines[i].text[:40])
            if m and m.group("b") is not None and i not in self.furniture:
                return not m.group("b").isdigit()
        return False

    def _column_bases(self) -> dict[int, float]:
        """For each line with an ``x0``: the left edge of its column (on its page)."""
        base: dict[int, float] = {}
        stop = min(len(self.lines), self.first + 5000)
        by_page: dict[int | None, list[int]] = {}
        for i in range(self.first, stop):
            if self.lines[i].x0 is not None and self.lines[i].text.strip():
                by_page.setdefault(self.lines[i].location.page, []).append(i)
        all_x = sorted(self.lines[i].x0 or 0.0 for ids in by_page.values() for i in ids)
        global_bases = _clusters(all_x)
        for ids in by_page.values():
            xs = sorted(self.lines[i].x0 or 0.0 for i in ids)
            bases = _clusters(xs)
            local_of = {
                i: max((b for b in bases if b <= (self.lines[i].x0 or 0.0) + 0.5), default=0.0)
                for i in ids
            }
            members = Counter(local_of.values())
            for i in ids:
                x = self.lines[i].x0 or 0.0
                local = local_of[i]
                if members[local] < 4:
                    # Too few lines of this column on the page to know its edge: the edge of
                    # the column on all pages.
                    local = max((b for b in global_bases if b <= x + 0.5), default=local)
                base[i] = local
        return base

    def _indent(self, i: int) -> bool | None:
        """Whether line ``i`` is indented from its column's edge (None: no ``x0``)."""
        x = self.lines[i].x0
        if x is None or i not in self.base:
            return None
        return x - self.base[i] > 2.0

    def _start_class(self) -> bool | None:
        """Whether a reference's first line is the indented one (None: indents say nothing)."""
        starts: Counter[bool] = Counter()
        others: Counter[bool] = Counter()
        for i in range(self.first, min(len(self.lines), self.first + 120)):
            indent = self._indent(i)
            if indent is None or i in self.furniture or not self.lines[i].text.strip():
                continue
            if self.mode in {"bracket", "paren", "dot", "bare"}:
                (starts if _LABEL.match(self.lines[i].text[:40]) else others)[indent] += 1
            else:
                others[indent] += 1
        if self.mode in {"bracket", "paren", "dot", "bare"}:
            if not starts:
                return None
            start = starts.most_common(1)[0][0]
            return start if others[not start] > others[start] else None
        total = others[True] + others[False]
        if not total or min(others[True], others[False]) * 100 < total * 15:
            return None  # (nearly) everything flush, or everything indented: indents say nothing
        # An unlabelled list: its first line is a reference's first line.
        return next(
            (
                self._indent(i)
                for i in range(self.first, min(len(self.lines), self.first + 50))
                if self._indent(i) is not None
                and i not in self.furniture
                and self.lines[i].text.strip()
            ),
            None,
        )

    # -- the walk -----------------------------------------------------------------------------

    def split(self) -> tuple[list[_Group], int, str | None]:
        """The references' line groups, the index after the list, and a note on its end."""
        lines = self.lines
        groups: list[_Group] = []
        pending: list[str] = []  # labels read alone on their line (a margin column)
        expected = 1
        blank_before = False
        just_labelled = False
        end = len(lines)
        end_note: str | None = None
        i = self.first
        while i < len(lines):
            line = lines[i]
            text = line.text.strip()
            if not text:
                blank_before = True
                i += 1
                continue
            if i in self.furniture or _RULE.match(text):
                self.dropped += 1
                i += 1
                continue
            if line.footnote and self.skip_footnotes:
                # A page's footnote below the list's lines: never part of an entry.
                i += 1
                continue
            if groups and self._figure_text(i):
                # A figure's labels and numbers, set smaller than the list ("0.00 0.05 0.10").
                self.figures += 1
                i += 1
                continue
            if reference_heading(text) and not _ends_a_sentence(lines, i, self.furniture):
                # A running header repeating the heading, or a sub-list: never an entry.
                i += 1
                blank_before = True
                continue
            if self._is_end(i, expected, groups):
                # A figure or table inside the list (a float on a page of its own, or at a
                # page's top): its caption is not the list's end when the list goes on after.
                resume = self._resumes(i, expected, groups) if _CAPTION.match(text) else None
                if resume is None:
                    end = i
                    end_note = f"the list ends before {text[:60]!r} ({line.location})"
                    break
                self.figures += resume - i
                i = resume
                blank_before = True
                continue
            if _SUBHEADING.match(text[:120]) and (
                line.heading or not groups or _ended(self._previous_text(groups))
            ):
                i += 1
                blank_before = True
                continue
            if _LABEL_ONLY.match(text) and not line.label:
                number = _label_number(text + " x")
                if (number == expected or (number is None and text.startswith("["))) and (
                    self._margin_label(text, groups)
                ):
                    # A label read apart from its text (a margin column).
                    pending.append(_label_text(text))
                    if number is not None:
                        expected = number + 1
                    just_labelled = True
                    i += 1
                    continue
                if _PAGE_NUMBER.match(text):
                    self.dropped += 1
                    i += 1
                    continue
            start, label = self._starts(i, groups, expected, blank_before, pending)
            if just_labelled:
                start = True
            just_labelled = False
            blank_before = False
            if start or not groups:
                if label is None and pending:
                    label = pending.pop(0)
                groups.append(_Group([i], label))
                if label is not None and label.isdigit():
                    expected = max(expected, int(label) + 1)
            else:
                group = groups[-1]
                if len(group.indices) >= _MAX_REFERENCE_LINES:
                    end = i
                    end_note = f"the list ends before running text ({line.location})"
                    self.incomplete = "the list's end is unsure (an entry ran on for 40 lines)"
                    break
                group.indices.append(i)
            i += 1
        end = self._trim_running_text(groups, end)
        if self.figures:
            self.notes.append(
                f"{self.figures} line(s) of figures or tables inside the list left out of it"
            )
        if self.dropped:
            self.notes.append(
                f"{self.dropped} line(s) of page furniture (page numbers, running headers, "
                "rules) left out of the list"
            )
        return groups, end, end_note

    def _figure_text(self, i: int) -> bool:
        """Line ``i`` is a figure's text: set clearly smaller than the list, and no entry's start.

        Plots drawn into the page carry their axis labels and tick numbers as text, in a size
        of their own; a reference's line is set in the list's size (a superscript or a small
        capital does not make the whole line smaller).
        """
        line = self.lines[i]
        if line.size is None or self.list_size is None or line.label:
            return False
        if line.size > self.list_size - max(1.5, self.list_size * 0.2):
            return False
        text = line.text.strip()
        return not (_LABEL.match(text[:40]) and _label_number(text) is not None) and not (
            _AUTHOR_START.match(text[:120]) and _YEAR.search(text[:400])
        )

    def _resumes(self, i: int, expected: int, groups: list[_Group]) -> int | None:
        """Where the list goes on after a figure or table whose caption is line ``i``, or None.

        The list goes on when, within the caption's page and the next two, before any heading
        but captions, a line starts the entry that comes next: the next number of a numbered
        list; in an author-date list a line in the list's size that starts with an author
        (or a repeated author's rule) and has a year within its first lines, set as the list's
        first lines are, that sorts after the last entry, after a page or paragraph break.
        """
        page = self.lines[i].location.page
        if page is None or not groups:
            return None
        last_key = _sort_key(self.lines[groups[-1].indices[0]].text)
        numbered = self.mode in {"bracket", "paren", "dot", "bare", "word"}
        for j in range(i + 1, min(len(self.lines), i + 400)):
            line = self.lines[j]
            text = line.text.strip()
            if line.location.page is None or line.location.page > page + 2:
                return None
            if not text or j in self.furniture or line.footnote:
                continue
            if _CAPTION.match(text):
                continue
            if (
                line.heading
                or reference_heading(text)
                or (_ends_list(text, line.size) and not _CAPTION.match(text))
                or self._bigger(line)
            ):
                return None
            if numbered:
                number = _line_number(line)
                if number == expected:
                    return j
                continue
            if (
                self.list_size is not None
                and line.size is not None
                and abs(line.size - self.list_size) > 0.6
            ):
                continue  # a figure's or table's own text
            prev = self.lines[j - 1]
            broke = prev.location.page != line.location.page or line.starts_paragraph
            if (
                broke
                and (_AUTHOR_START.match(text[:120]) or _REPEATED_AUTHOR.match(text[:12]))
                and any(
                    _YEAR.search(self.lines[k].text[:400])
                    for k in range(j, min(j + 3, len(self.lines)))
                )
                and self._layout_start(j) is not False
                and (_REPEATED_AUTHOR.match(text[:12]) or _sort_key(text) >= last_key)
            ):
                return j
        return None

    def _margin_label(self, text: str, groups: list[_Group]) -> bool:
        """A label alone on its line is one (read apart from its text), not a reference's end.

        In a list whose labels stand in a margin column, always; in a list labelled as this
        line is ("[6]" in a list of "[n]"), after a finished reference. Never in an author-date
        list, nor where the text goes on: "...11(01)," + "1." and "...281-" + "6." are the ends
        of references that TeX put on a line of their own.
        """
        if self.mode == "margin":
            return True
        m = _LABEL.match(text + " x")
        if m is None or not groups or not _ended(self._previous_text(groups)):
            return False
        kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
        return _MODE_KIND.get(self.mode) == kind

    def _starts(
        self, i: int, groups: list[_Group], expected: int, blank_before: bool, pending: list[str]
    ) -> tuple[bool, str | None]:
        """Whether line ``i`` starts a reference, and its label."""
        line = self.lines[i]
        text = line.text.strip()
        if line.label:
            return True, _label_text(line.label)
        if self.mode == "word":
            return line.starts_paragraph, None
        prev = self._previous_text(groups)
        if self.mode in {"bracket", "paren", "dot", "bare"}:
            m = _LABEL.match(text[:40])
            if m:
                kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
                value = m.group(kind)
                if self.mode == "bracket" and kind == "b" and not value.isdigit():
                    # "[Smi20]": alphabetic labels have no sequence. In a numbered list a
                    # bracket at a line's start is the text's ("[99mTc]TRODAT-1").
                    return (True, value) if self.word_labels else (False, None)
                if value.isdigit():
                    number = int(value)
                    own_kind = kind == _MODE_KIND[self.mode]
                    if number == expected and (own_kind or not _LABEL_ONLY.match(text)):
                        return True, value  # not "6." alone in a "[n]" list: a page's end
                    # A gap in the numbering: believed when the layout agrees.
                    if (
                        expected < number <= expected + 3
                        and _ended(prev)
                        and self._layout_start(i) is not False
                        and own_kind
                    ):
                        return True, value
            return False, None
        # Unlabelled (author-date) lists, or labels read apart in a margin column. A labelled
        # line after a finished reference still starts one (a reader lost the earlier labels).
        m = _LABEL.match(text[:40])
        if m and _ended(prev) and (m.group("b") or m.group("p") or m.group("n")):
            return True, None
        if _REPEATED_AUTHOR.match(text[:12]) and not prev.endswith(("-", "‐")):
            return True, None  # "———. 1990." / "—— (2004)": the author before, again
        layout = self._layout_start(i)
        if layout is not None:
            return layout, None
        if self._column_break(i, groups):
            # A page or column break: the paragraph flag of the new column's first line says
            # nothing, the text does.
            return _ended(prev) and bool(_AUTHOR_START.match(text[:120])), None
        if line.starts_paragraph or blank_before:
            return True, None
        return (
            _ended(prev) and bool(_AUTHOR_START.match(text[:120])) and self._year_follows(i)
        ), None

    def _year_follows(self, i: int) -> bool:
        """A year comes in line ``i`` or the next two, before another author-like start.

        "Business, Economics, ..., pp.691–698." looks like an author but holds no year before
        the next entry: it is the end of the entry before (an author-date list only).
        """
        if not any(_YEAR.search(self.lines[j].text[:400]) for j in self._window(i, 60)):
            return True  # a list without years: the year says nothing
        for j in range(i, min(len(self.lines), i + 3)):
            text = self.lines[j].text.strip()
            if j > i and _ended(self.lines[j - 1].text) and _AUTHOR_START.match(text[:120]):
                return False  # the next entry starts before any year
            if _YEAR.search(text[:400]):
                return True
        return False

    def _window(self, i: int, size: int) -> range:
        return range(max(self.first, i - size // 2), min(len(self.lines), i + size // 2))

    def _layout_start(self, i: int) -> bool | None:
        """What the indent says: a first line (True), a continuation (False), nothing (None)."""
        if self.start_class is None:
            return None
        indent = self._indent(i)
        if indent is None:
            return None
        return indent == self.start_class

    def _column_break(self, i: int, groups: list[_Group]) -> bool:
        if not groups:
            return False
        prev = self.lines[groups[-1].indices[-1]]
        line = self.lines[i]
        if prev.location.page != line.location.page:
            return True
        if prev.x0 is not None and line.x0 is not None and abs(prev.x0 - line.x0) > 100:
            return True
        return line.location.line < prev.location.line

    def _previous_text(self, groups: list[_Group]) -> str:
        if not groups:
            return ""
        return self.lines[groups[-1].indices[-1]].text.strip()

    def _is_end(self, i: int, expected: int, groups: list[_Group]) -> bool:
        """Line ``i`` ends the list (a closing heading, a caption, a new section)."""
        line = self.lines[i]
        text = line.text.strip()
        if not groups:
            return False
        if not _ends_list(text, line.size):
            # A weaker sign ("8 Discussion", a bigger font, "A Proofs" in a bigger font) only
            # counts after a finished reference, not after a line ending in ",".
            section = _section_heading(line, self.body_size) or (
                _LETTER_SECTION.match(text[:120]) is not None
                and (self._bigger(line) or _capitals_heading(text))
            )
            if not section or (not line.heading and not _ended(self._previous_text(groups))):
                return False
        numbered = self.mode in {"bracket", "paren", "dot", "bare", "margin", "word"}
        if numbered and _LABEL.match(text[:40]) and _label_number(text) == expected:
            return False  # "8 Smith ..." in a list numbered without dots
        if self.mode in {"bracket", "paren", "dot", "bare"}:
            # refextract's check: a heading-looking line is not the end when the list's next
            # number follows within a few lines.
            for j in range(i + 1, min(len(self.lines), i + 1 + _LOOKAHEAD)):
                if _label_number(self.lines[j].text) == expected:
                    return False
        return True

    def _bigger(self, line: DocumentLine) -> bool:
        return (
            line.size is not None and self.body_size is not None and line.size >= self.body_size + 1
        )

    def _trim_running_text(self, groups: list[_Group], end: int) -> int:
        """Cut running text that follows the last reference; returns the new end."""
        while groups:
            group = groups[-1]
            texts = [self.lines[j].text.strip() for j in group.indices]
            joined = " ".join(texts)
            if (
                group.label is None
                and not _looks_like_reference(joined)
                and (len(joined) > 200 or len(groups) > 1)
            ):
                groups.pop()
                end = min(end, group.indices[0])
                continue
            # A labelled last reference that swallowed paragraphs of text: cut at the first
            # line after it that starts a paragraph with no year before it.
            if len(joined) > 1200:
                for k, j in enumerate(group.indices[1:], 1):
                    head = " ".join(texts[:k])
                    line = self.lines[j]
                    if (line.starts_paragraph or self._layout_start(j)) and _YEAR.search(head):
                        del group.indices[k:]
                        end = min(end, j)
                        break
            break
        return end

    # -- the reference -------------------------------------------------------------------------

    def reference(self, group: _Group, number: int) -> ExtractedReference:
        """The reference a group of lines makes."""
        first = self.lines[group.indices[0]]
        texts = [self.lines[j].text for j in group.indices]
        label = group.label
        head = texts[0]
        if not first.label and self.mode not in {"word", "none", "margin"}:
            m = _LABEL.match(head[:40])
            if m and (label is None or _label_text(m.group(0)) == label):
                label = _label_text(m.group(0))
                head = head[m.end() :]
        elif self.mode in {"none", "margin"} and label is None and (m := _LABEL.match(head[:40])):
            # A list whose labels a reader lost in part: a label is taken when it is bracketed
            # or is this entry's place in the list.
            value = m.group("b") or m.group("p") or m.group("n") or m.group("bare")
            if m.group("b") is not None or value == str(number):
                label = value
                head = head[m.end() :]
        texts[0] = head
        joined = join_lines(texts, self.words, self.compounds)
        last = self.lines[group.indices[-1]]
        damaged = any(self.lines[j].unreliable for j in group.indices)
        return ExtractedReference(
            text=joined,
            number=number,
            location=first.location,
            label=label,
            end=last.location if len(group.indices) > 1 else None,
            unreliable=UNRELIABLE_TEXT if damaged else None,
        )


def _main_size(lines: Sequence[DocumentLine]) -> float | None:
    """The font size most of the characters of ``lines`` are set in (None: no sizes)."""
    weights: Counter[float] = Counter()
    for line in lines:
        if line.size:
            weights[round(line.size * 2) / 2] += len(line.text.strip()[:500])
    return weights.most_common(1)[0][0] if weights else None


def _sort_key(text: str) -> str:
    """The letter an author-date entry sorts under: its first letter, accents and case aside."""
    for char in unicodedata.normalize("NFKD", text[:200]):
        if char.isalpha():
            return char.casefold()
    return ""


def _clusters(xs: list[float]) -> list[float]:
    """The left edges of the columns among sorted ``xs`` (a gap over 40 points starts one)."""
    bases: list[float] = []
    for x in xs:
        if not bases or x - bases[-1] > 40:
            bases.append(x)
    return bases


def _label_text(raw: str) -> str:
    return raw.strip().strip("[]().:").strip()


def _ended(text: str) -> bool:
    """``text`` (a line) ends a reference: a full stop, a closing bracket, a URL or DOI."""
    t = text.rstrip()
    if not t:
        return True
    tail = t[-40:]
    if _TRAILING_INITIAL.search(tail) or _TRAILING_GIVEN_NAME.search(tail):
        return False  # "..., P. L. Bergsagel, G." + "Matthews, R. W.": the author list goes on
    if _ROLE_END.search(tail):
        return False  # "Ed." + the editors' names
    if t.endswith((".", ")", "]", "”", '"')):
        return True
    return bool(_URL_TAIL.search(t[-200:]))


# ---------------------------------------------------------------------------------------------
# Joining lines


def _vocabulary(lines: Sequence[DocumentLine]) -> tuple[Counter[str], Counter[str]]:
    """The document's words and hyphenated compounds, as written inside its lines.

    A word cut by a line end is not counted: neither the last word of a line ending in a hyphen
    nor the first word of the next line.
    """
    words: Counter[str] = Counter()
    compounds: Counter[str] = Counter()
    after_hyphen = False
    for line in lines[:50_000]:
        text = line.text[:5000]
        if after_hyphen:  # the rest of that word ("Re-" + "actionary"): not a word either
            text = text.lstrip()
            text = text[text.find(" ") + 1 :] if " " in text else ""
        after_hyphen = text.rstrip().endswith(("-", "‐"))
        if after_hyphen:
            text = text.rstrip()
            text = text[: text.rfind(" ") + 1] if " " in text else ""
        for found in _WORD.findall(text):
            token = found.casefold().replace("‐", "-")
            if "-" in token:
                compounds[token] += 1
                for part in token.split("-"):
                    words[part] += 1
            else:
                words[token] += 1
    return words, compounds


def join_lines(
    texts: Sequence[str],
    words: Counter[str] | None = None,
    compounds: Counter[str] | None = None,
) -> str:
    """Lines of one reference as one string: line-end hyphens judged, whitespace normalised.

    ``words`` and ``compounds`` are the document's vocabulary (how it writes words elsewhere).

    >>> join_lines(["Bio-", "logy of cells."]), join_lines(["Smith-", "Jones, A."])
    ('Biology of cells.', 'Smith-Jones, A.')
    >>> join_lines(["A self-", "assessment of COVID-", "19"])
    'A self-assessment of COVID-19'
    """
    words = words if words is not None else Counter()
    compounds = compounds if compounds is not None else Counter()
    out = ""
    for raw in texts:
        text = raw.replace("\u00ad", "\u00ad ").strip() if raw.endswith("\u00ad") else raw.strip()
        text = " ".join(text.split())
        if not text:
            continue
        if not out:
            out = text
            continue
        out = _join_two(out, text, words, compounds)
    return " ".join(out.replace("\u00ad", "").split())


def _join_two(left: str, right: str, words: Counter[str], compounds: Counter[str]) -> str:
    if left.endswith("\u00ad"):
        return left[:-1] + right
    if left.endswith(("–", "—", "/")) and not left.endswith((" –", " —", " /")):
        return left + right  # "123–" + "145"; "https://x.org/" + "a"
    if left.endswith(("-", "‐")) and not left.endswith((" -", " ‐")):
        if _suspended(left, right):
            return left + " " + right
        keep = _real_hyphen(left, right, words, compounds)
        return (left if keep else left[:-1]) + right
    if _URL_TAIL.search(left[-200:]) and not left.endswith((".", ",")) and _url_goes_on(right):
        return left + right
    return left + " " + right


def _suspended(left: str, right: str) -> bool:
    """A suspended hyphen ends ``left``: "Kinder-" + "und Jugendpsychiatrie", "pre-" + "and"."""
    m = _LAST_FRAGMENT.search(left[-120:])
    first, _, rest = right.partition(" ")
    return bool(m and len(m.group(1)) >= 3 and rest and first.casefold() in _SUSPENDING)


def _url_goes_on(right: str) -> bool:
    """The next line continues a URL or DOI cut by the line end (not a new word)."""
    token = right.split(" ", 1)[0]
    if not token or token[0] in "([{\"'“" or token[0].isupper():
        return False
    if token.casefold() in {"accessed", "retrieved", "last", "visited", "and", "in", "pp.", "p."}:
        return False
    return bool(re.match(r"[\w./\-_~%#?=&:+]+$", token))


def _real_hyphen(left: str, right: str, words: Counter[str], compounds: Counter[str]) -> bool:
    """Whether the hyphen at the end of ``left`` is a real one (kept) or a soft break."""
    m = _LAST_FRAGMENT.search(left[-120:])
    if right[:1].isdigit() or not m:
        return True  # "COVID-" + "19"; "2019-" + "2020"; a hyphen after a digit
    b_match = _FIRST_WORD.match(right)
    if not b_match:
        return True
    fragment = m.group(1).replace("‐", "-")
    if "-" in fragment:
        return True  # "state-of-the-" + "art": part of a compound already
    a, b = fragment, b_match.group(0)
    if right[b_match.end() : b_match.end() + 1] in {"-", "‐"}:
        return True  # "state-" + "of-the-art"
    compound, joined = f"{a}-{b}".casefold(), f"{a}{b}".casefold()
    seen_compound, seen_joined = compounds.get(compound, 0), words.get(joined, 0)
    if seen_compound or seen_joined:
        return seen_compound >= seen_joined
    if b[0].isupper():
        # "Smith-" + "Jones", "Jean-" + "Pierre", "non-" + "English"; but a word in capitals
        # cut in two ("NET-" + "WORKS", "PsycEX-" + "TRA") is one word.
        return not (a[-2:].isupper() and b.isupper() and len(a) + len(b) >= 6 and len(b) >= 3)
    if a.isupper() and len(a) >= 2:
        return True  # "RNA-" + "seq", "GPU-" + "accelerated"
    low_a, low_b = a.casefold(), b.casefold()
    if low_a not in _HYPHEN_PREFIXES and joined in _split_words():
        return False  # "Cor-" + "related", "Influ-" + "ential": an English word cut in two
    if low_b in _HYPHEN_SUFFIXES and len(low_a) >= 3:
        return True  # "data-" + "driven", "model-" + "based"
    if low_a in _HYPHEN_PREFIXES and len(low_b) >= 4 and low_b not in _WORD_ENDINGS:
        if low_a in _WEAK_PREFIXES:
            return words.get(low_b, 0) > 0  # "re-" + "search" is "research"
        return True  # "self-" + "assessment", "multi-" + "task"
    if (
        low_a in _LONG_TAIL_PREFIXES
        and len(low_b) >= 6
        and low_b not in _WORD_ENDINGS
        and not (low_a == "alpha" and low_b.startswith("bet"))  # "alpha-" + "betical"
    ):
        return True  # "neo-" + "angiogenesis", "alpha-" + "difluoromethylornithine"
    if (
        len(low_a) >= 6
        and low_a.endswith(_ADJECTIVE_ENDINGS)
        and len(low_b) >= 6
        and not _ends_like_a_suffix(low_b)
    ):
        return True  # "analytical-" + "methodological"
    # A syllable break puts a consonant at the start of the next line ("docu-" + "ment"); a
    # vowel meeting a vowel is a joint of two parts ("neo-" + "angiogenesis").
    return (
        len(low_a) >= 3
        and low_a[-1] in _VOWELS
        and low_b[0] in _VOWELS
        and len(low_b) >= 6
        and not _ends_like_a_suffix(low_b)
        and not low_b.startswith(_SUFFIX_STARTS)
    )


@functools.cache
def _split_words() -> frozenset[str]:
    """English words the shape rules below would wrongly keep a line-end hyphen in.

    ``segment_words.txt`` (1,767 words, 22 KB) is derived from SCOWL's word list (its source,
    licence and how it was made are in its header): only the words that the rules get wrong,
    so the list stays small. Read once, when a hyphen first needs it.
    """
    data = (Path(__file__).parent / "segment_words.txt").read_text(encoding="utf-8")
    return frozenset(
        w for line in data.splitlines() if (w := line.strip()).isalpha() and w.islower()
    )


def _ends_like_a_suffix(tail: str) -> bool:
    """``tail`` is a word ending or little more ("ation", "ically"): a word's end, not a word."""
    return any(tail.endswith(e) and len(tail) - len(e) < 3 for e in _WORD_ENDINGS)
