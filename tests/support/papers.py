"""Realistic test papers with their ground truth (issue 26): shared by the tests and the bench.

A *paper* is made from works of the multistyle dev set (``../shared/datasets/
crossref-multistyle-dev-1000.jsonl``) in one citation style: a title, body paragraphs whose
in-text citations take the style's form (``[3]``, ``[3–5]``, ``(Jones & Staley, 1982)``,
``Jones and Staley (1982)``, MLA's ``(Jones and Staley 1671)``), a reference list under a heading
that varies ("References", "REFERENCES", "Bibliography", "Works Cited", "Literatur"), and
sometimes an appendix after the list. The reference strings are the dev set's own renderings
(Vancouver and IEEE-with-a-space rendered by ``bench/bench_reference_accuracy.py``, whose
functions are reused here), without the set's "[1]" / "(1)" / "1 " label: the paper prints its
own labels.

A paper is then *built* by a producer in a layout:

- producers: ``reportlab`` (canvas, standard Times fonts, justified lines with the ``Tw`` word
  spacing operator), ``fpdf2`` (the Vera TrueType font that ships with reportlab, embedded with
  a ToUnicode map; justified lines drawn word by word), ``docx`` (python-docx: Word automatic
  numbering from a real numbering definition in numbering.xml for numbered styles, hanging
  indents for author-date ones), ``tex`` (``thebibliography``) and ``md``;
- layouts (:data:`LAYOUTS`): one column, two columns, hanging indents, labels in a margin
  column, justified text hyphenated at line ends, page breaks inside references, running
  headers and footers with page numbers, review-copy line numbers, and ``journal`` (most of
  them at once). Both PDF producers share one line-breaking engine below, so that every line
  break, soft hyphen and page break is ours and known.

The ground truth (:meth:`Built.truth`) holds the exact reference strings in order as printed
(after the transliteration a font needed, recorded per reference), their labels, DOIs, the
dev-set row of each work, fabricated entries, the planted consistency errors, and the references
that a page or column break splits. Everything is deterministic given the seed.
"""

from __future__ import annotations

import importlib.util
import io
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache, partial
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

__all__ = [
    "AUTHOR_DATE",
    "DEV_SET",
    "LAYOUTS",
    "NUMBERED",
    "PRODUCERS",
    "STYLES",
    "Built",
    "Layout",
    "Paper",
    "TruthReference",
    "bench_module",
    "build",
    "layouts_for",
    "load_rows",
    "make_paper",
    "normalise",
    "typeset_latex",
]

ROOT = Path(__file__).resolve().parents[2]
DEV_SET = ROOT.parent / "shared" / "datasets" / "crossref-multistyle-dev-1000.jsonl"

#: The paper styles -> the style of bench_reference_accuracy.py whose strings they print.
STYLES: dict[str, str] = {
    "APA": "APA",
    "Chicago": "Chicago",
    "Harvard": "Harvard",
    "MLA": "MLA",
    "IEEE": "IEEE [1] R.",
    "Vancouver": "Vancouver",
    "ACS": "ACS",
    "AIP": "AIP",
    "Elsevier": "Elsevier",
}
AUTHOR_DATE = ("APA", "Chicago", "Harvard", "MLA")
NUMBERED = ("IEEE", "Vancouver", "ACS", "AIP", "Elsevier")
TITLELESS = ("ACS", "AIP", "Elsevier")
#: How each numbered style prints its labels in the list ("{}" is the number).
LABEL_FORMS = {"IEEE": "[{}]", "Vancouver": "{}.", "ACS": "({})", "AIP": "{}", "Elsevier": "[{}]"}
#: The dev set's own label at the start of a string, removed (the paper prints its own).
_SET_LABEL = re.compile(r"^(?:\[1\]\s*|\(1\)\s+|1\s+)")
_TAGS = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?>")
HEADINGS = ("References", "REFERENCES", "Bibliography", "Works Cited", "Literatur")

ProducerName = Literal["reportlab", "platypus", "fpdf2", "docx", "tex", "md"]
PRODUCERS: dict[str, str] = {
    "reportlab": "pdf",
    "platypus": "pdf",
    "fpdf2": "pdf",
    "docx": "docx",
    "tex": "tex",
    "md": "md",
}


def normalise(text: str) -> str:
    """NFC with whitespace collapsed: how the truth and an extracted string are compared."""
    return " ".join(unicodedata.normalize("NFC", text).split())


# --- the dev set, through the reference bench ----------------------------------------------------


@cache
def bench_module() -> ModuleType:
    """``bench/bench_reference_accuracy.py`` as a module (its rendering and index building)."""
    name = "bench_reference_accuracy"
    if name in sys.modules:  # the bench scripts import it by name
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def load_rows(limit: int | None = None) -> list[dict[str, Any]]:
    """The dev set's rows (``work`` and ``strings``); the caller checks :data:`DEV_SET` exists."""
    rows: list[dict[str, Any]] = bench_module().load_rows(DEV_SET, limit)
    return rows


# --- the paper's content -------------------------------------------------------------------------


@dataclass(frozen=True)
class TruthReference:
    """One entry of a paper's list as the document prints it.

    Attributes:
        number: Position in the list, from 1.
        text: The reference string without its label (the truth an extractor must return).
        label: The printed label without brackets ("12"), None in author-date styles.
        doi: The cited work's DOI (lower case); None for a fabricated entry.
        row: The dev-set row of the work.
        kind: ``correct`` or ``fabricated`` (a real work's title replaced by another's).
        cited: Whether the body cites it (False: a planted uncited entry).
        key: The LaTeX citation key.
        cite_as: Author-date styles: "Family year" as a consistency finding names it.
        transliterated: Characters the producer's font cannot show were replaced.
    """

    number: int
    text: str
    label: str | None
    doi: str | None
    row: int
    kind: Literal["correct", "fabricated"]
    cited: bool
    key: str
    cite_as: str | None = None
    transliterated: bool = False


@dataclass(frozen=True)
class Planted:
    """A planted consistency error: ``missing-entry`` (cited, not listed) or ``uncited-entry``."""

    kind: Literal["missing-entry", "uncited-entry"]
    target: str  # a label, or "Family year"
    entry: int | None = None


@dataclass
class Paper:
    """A paper's content, before any producer or layout.

    ``blocks`` is the body before the list: ``("heading", text)`` and ``("para", segments)``
    where a segment is plain text or a citation ``("cite", text, keys)`` (the keys serve
    LaTeX). ``appendix`` is what follows the list (same shape), possibly empty.
    """

    style: str
    seed: int
    title: str
    authors: str
    heading: str
    references: list[TruthReference]
    blocks: list[tuple[str, Any]]
    appendix: list[tuple[str, Any]]
    planted: list[Planted] = field(default_factory=list)

    @property
    def numbered(self) -> bool:
        """Numbered labels (IEEE, Vancouver, ACS, AIP, Elsevier)."""
        return self.style in NUMBERED


_FILLER = (
    "The present study extends this line of work to a broader set of conditions.",
    "We follow the usual protocol and report the mean of five independent runs.",
    "Table 2 summarises the parameters used in every experiment.",
    "Such effects are small but consistent across the samples we examined.",
    "A detailed derivation is given in the supplementary material.",
    "The measurements were repeated at three temperatures to check the trend.",
    "Two anonymous reviewers suggested the additional controls reported here.",
    "All data were collected between 2019 and 2023 under the same conditions.",
    "This interpretation remains open to debate, as discussed in Section 4.",
    "Nevertheless, the agreement between model and experiment is remarkable.",
    "The self-consistent treatment avoids the well-known pitfalls of earlier approaches.",
    "Figure 3 shows the distribution of the residuals after the correction.",
    "In what follows we adopt the notation of the previous section throughout.",
    "The comparison highlights both the strengths and the limitations of each approach.",
    "Uncertainties are given as one standard deviation unless stated otherwise.",
    "Preliminary results of this kind have motivated considerable experimental effort.",
    "The characterisation of intermediate structures remains particularly challenging.",
    "Our implementation is available from the corresponding author upon request.",
)
_CITE_SENTENCES = (
    "Earlier work on {topic} has been reported {cite}.",
    "The {topic} problem was addressed in detail {cite}.",
    "Related results on {topic} are available {cite}.",
    "Several authors have examined {topic} {cite}, with comparable conclusions.",
    "A different view of {topic} is taken {cite}.",
    "See {cite} for a review of {topic}.",
)
_NARRATIVE = (
    "{cite} studied {topic} in a related setting.",
    "As {cite} showed, {topic} depends on the conditions chosen.",
    "{cite} reported similar findings on {topic}.",
)
_SECTIONS = ("Introduction", "Related work", "Methods", "Results", "Discussion", "Conclusion")


def _families(work: dict[str, Any]) -> list[str]:
    return [a["family"] for a in work.get("author") or [] if a.get("family")]


def _year(work: dict[str, Any]) -> int | None:
    try:
        return int(work["issued"]["date-parts"][0][0])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _names(style: str, families: list[str]) -> str:
    """The authors as an in-text citation names them."""
    if len(families) == 1:
        return families[0]
    if len(families) == 2:
        amp = " & " if style == "APA" else " and "
        return families[0] + amp + families[1]
    return f"{families[0]} et al."


def _first_page(work: dict[str, Any]) -> str | None:
    page = (work.get("page") or "").split("-")[0]
    return page if page.isdigit() else None


def _author_date_cite(
    style: str, works: list[dict[str, Any]], narrative: bool, rng: random.Random
) -> str:
    """``(Jones & Staley, 1982; Bilgen, 2000)``, ``Jones and Staley (1982)``, MLA's pages."""
    parts = []
    for w in works:
        names = _names(style, _families(w))
        if style == "MLA":
            page = _first_page(w)
            if narrative:
                return f"{names} ({page})" if page else names
            parts.append(f"{names} {page}" if page else names)
        elif narrative:
            return f"{names} ({_year(w)})"
        elif style == "APA":
            parts.append(f"{names}, {_year(w)}")
        elif style == "Harvard":
            parts.append(f"{names}, {_year(w)}" if rng.random() < 0.5 else f"{names} {_year(w)}")
        else:  # Chicago
            parts.append(f"{names} {_year(w)}")
    return "(" + "; ".join(parts) + ")"


def _numeric_cite(style: str, numbers: list[int]) -> str:
    """``[3]``, ``[3, 7]``, ``[3–5]`` (IEEE: ``[3]–[5]``)."""
    numbers = sorted(numbers)
    if len(numbers) >= 3 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        if style == "IEEE":
            return f"[{numbers[0]}]–[{numbers[-1]}]"
        return f"[{numbers[0]}–{numbers[-1]}]"
    return "[" + ", ".join(str(n) for n in numbers) + "]"


def _topic(work: dict[str, Any]) -> str:
    title = (work.get("title") or ["this question"])[0]
    words = re.sub(r"<[^>]+>", "", title).split()[:5]
    return " ".join(words).rstrip(".,:;").lower() or "this question"


def _eligible(style: str, row: dict[str, Any]) -> str | None:
    """The row's string in ``style`` without the set's label, or None when unusable here."""
    bench = bench_module()
    text = bench.style_text(STYLES[style], row)
    work = row["work"]
    if not text or len(text) > 1000 or not _families(work) or _year(work) is None:
        return None
    first = _families(work)[0]
    if len(first) < 2 or not first[0].isupper():  # a metadata slip ("s, H., 1934."), not a name
        return None
    if not (work.get("title") or [None])[0]:
        return None
    if style in NUMBERED and style != "Vancouver":
        text = _SET_LABEL.sub("", text, count=1)
    # Crossref's markup (<i>, <sub>, <title>) is typeset, not printed: a paper shows its text.
    return normalise(_TAGS.sub("", text))


def make_paper(
    rows: Sequence[dict[str, Any]],
    style: str,
    *,
    seed: int = 0,
    n_refs: int = 30,
    planted: bool = False,
    fabricated: int = 0,
    absent: Collection[int] = (),
    paragraphs: int | None = None,
    appendix: bool | None = None,
) -> Paper:
    """A paper citing ``n_refs`` works of ``rows`` in ``style``, deterministic given ``seed``.

    Args:
        rows: The dev set's rows (``work`` and ``strings``).
        style: A key of :data:`STYLES`.
        seed: Chooses the works, the order, the heading, the citations.
        n_refs: Entries in the list (a planted uncited entry among them).
        planted: Plant one citation with no entry and one entry never cited.
        fabricated: Entries whose title is replaced by another work's title (titled styles).
        absent: Rows the caller leaves out of its index: fabricated titles come from them.
        paragraphs: Body paragraphs (default: about two per cited group, at least 6).
        appendix: An appendix after the list (default: chosen by the seed, one in three).
    """
    if style not in STYLES:
        msg = f"unknown style {style!r}; styles: {', '.join(STYLES)}"
        raise ValueError(msg)
    rng = random.Random(f"{style}/{seed}")
    order = list(range(len(rows)))
    rng.shuffle(order)
    chosen: list[tuple[int, str]] = []
    seen_families: set[str] = set()
    seen_titles: set[str] = set()
    for i in order:
        text = _eligible(style, rows[i])
        if text is None:
            continue
        work = rows[i]["work"]
        family = _fold(_families(work)[0])
        title = _fold(work["title"][0])
        # One work per first author: no "2020a" and no ambiguous author-date citation.
        if family in seen_families or title in seen_titles:
            continue
        seen_families.add(family)
        seen_titles.add(title)
        chosen.append((i, text))
        if len(chosen) == n_refs + 1:
            break
    if len(chosen) < n_refs + 1:
        msg = f"only {len(chosen) - 1} usable works for {style}"
        raise ValueError(msg)
    missing_row, _ = chosen.pop()  # a work cited but never listed, when planted
    kinds: dict[int, Literal["correct", "fabricated"]] = dict.fromkeys(
        (i for i, _ in chosen), "correct"
    )
    texts = dict(chosen)
    if fabricated and style not in TITLELESS:
        bench = bench_module()
        donors = [a for a in sorted(absent) if a not in texts] or [
            i for i in order if i not in texts and i != missing_row
        ]
        for k, (i, text) in enumerate(rng.sample(chosen, min(fabricated, len(chosen)))):
            other = rows[donors[(k * 7 + seed) % len(donors)]]["work"]
            fake = bench.inject(
                STYLES[style], text, rows[i]["work"], "fabricated title", rng, other
            )
            if fake and fake != text:
                texts[i] = normalise(fake)
                kinds[i] = "fabricated"
    rows_in = [i for i, _ in chosen]
    if style in NUMBERED:
        rng.shuffle(rows_in)  # numbered by first citation: the list's order is the citing order
    else:
        rows_in.sort(key=lambda i: (_fold(texts[i]), i))
    uncited_row = None
    if planted:
        uncited_row = rng.choice(rows_in)
        if style in NUMBERED:  # never cited: numbered last, so the others keep citing order
            rows_in.remove(uncited_row)
            rows_in.append(uncited_row)
    refs: list[TruthReference] = []
    for n, i in enumerate(rows_in, 1):
        work = rows[i]["work"]
        doi = None if kinds[i] == "fabricated" else str(work["DOI"]).lower()
        cite_as = None if style in NUMBERED else f"{_families(work)[0]} {_year(work)}"
        refs.append(
            TruthReference(
                number=n,
                text=texts[i],
                label=str(n) if style in NUMBERED else None,
                doi=doi,
                row=i,
                kind=kinds[i],
                cited=i != uncited_row,
                key=f"ref{i}",
                cite_as=cite_as,
            )
        )
    plants: list[Planted] = []
    heading = _heading(style, rng)
    blocks = _body(rows, style, refs, rng, paragraphs)
    if planted:
        uncited = next(r for r in refs if not r.cited)
        plants.append(
            Planted("uncited-entry", uncited.label or uncited.cite_as or "", uncited.number)
        )
        work = rows[missing_row]["work"]
        if style in NUMBERED:
            target = str(len(refs) + 1)
            cite = _numeric_cite(style, [len(refs) + 1])
        else:
            target = f"{_families(work)[0]} {_year(work)}"
            cite = _author_date_cite(style, [work], False, rng)
        plants.append(Planted("missing-entry", target))
        sentence = f"A last related study of {_topic(work)} is mentioned for completeness "
        blocks.append(("para", [sentence, ("cite", cite, (f"ref{missing_row}",)), "."]))
    title_work = rows[rows_in[0]]["work"]
    title = f"On {_topic(title_work)}: a study of {_topic(rows[rows_in[-1]]['work'])}"
    title = title[0].upper() + title[1:]
    authors = rng.choice(
        (
            "A. Writer, B. Reader and C. Editor",
            "Maria Example and John Sample",
            "T. Müller-Lüdenscheidt, J. Smith-Jones",
        )
    )
    with_appendix = rng.random() < 1 / 3 if appendix is None else appendix
    after: list[tuple[str, Any]] = []
    if with_appendix:
        after = [
            ("heading", "Appendix A. Supplementary data"),
            ("para", [" ".join(rng.sample(_FILLER, 4))]),
            ("heading", "Appendix B. Proof of Lemma 2"),
            ("para", [" ".join(rng.sample(_FILLER, 3))]),
        ]
    return Paper(
        style=style,
        seed=seed,
        title=title,
        authors=authors,
        heading=heading,
        references=refs,
        blocks=blocks,
        appendix=after,
        planted=plants,
    )


def _heading(style: str, rng: random.Random) -> str:
    if style == "MLA":
        return rng.choice(("Works Cited", "Works Cited", "References", "WORKS CITED"))
    return rng.choice(HEADINGS)


def _body(
    rows: Sequence[dict[str, Any]],
    style: str,
    refs: list[TruthReference],
    rng: random.Random,
    paragraphs: int | None,
) -> list[tuple[str, Any]]:
    """Sections of paragraphs citing every cited entry at least once, in the style's form."""
    cited = [r for r in refs if r.cited]
    groups: list[list[TruthReference]] = []
    k = 0
    while k < len(cited):
        size = 1 if rng.random() < 0.7 else rng.choice((2, 3))
        group = cited[k : k + size]
        k += size
        if style in NUMBERED and k > 4 and rng.random() < 0.2:
            group = [*group, cited[rng.randrange(0, k - len(group))]]  # cite an earlier one again
        groups.append(group)
    if style not in NUMBERED:
        rng.shuffle(groups)
    n_paras = paragraphs if paragraphs is not None else max(6, len(groups) // 2 + 2)
    per_para: list[list[list[TruthReference]]] = [[] for _ in range(n_paras)]
    for g, group in enumerate(groups):
        per_para[g * n_paras // max(1, len(groups))].append(group)
    blocks: list[tuple[str, Any]] = []
    sections = len(_SECTIONS)
    for p in range(n_paras):
        if p * sections // n_paras != (p - 1) * sections // n_paras or p == 0:
            s = p * sections // n_paras
            blocks.append(("heading", f"{s + 1} {_SECTIONS[s]}"))
        segments: list[Any] = []
        for group in per_para[p]:
            segments.append(" ".join(rng.sample(_FILLER, rng.randint(1, 2))) + " ")
            works = [rows[r.row]["work"] for r in group]
            keys = tuple(r.key for r in group)
            narrative = style not in NUMBERED and len(group) == 1 and rng.random() < 0.4
            if style in NUMBERED:
                cite = _numeric_cite(style, [r.number for r in group])
            else:
                cite = _author_date_cite(style, works, narrative, rng)
            template = rng.choice(_NARRATIVE if narrative else _CITE_SENTENCES)
            before, _, after = template.partition("{cite}")
            topic = _topic(works[0])
            segments.append(before.format(topic=topic))
            segments.append(("cite", cite, keys))
            segments.append(after.format(topic=topic) + " ")
        segments.append(" ".join(rng.sample(_FILLER, rng.randint(2, 4))))
        if isinstance(segments[0], str) and segments[0]:
            segments[0] = segments[0][0].upper() + segments[0][1:]
        blocks.append(("para", segments))
    return blocks


def _segments_text(segments: Sequence[Any], cite: Callable[[Any], str] | None = None) -> str:
    out = []
    for s in segments:
        if isinstance(s, str):
            out.append(s)
        else:
            out.append(cite(s) if cite else s[1])
    text = " ".join("".join(out).split())
    return re.sub(r"\s+([.,;])", r"\1", text)


# --- layouts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """How a PDF (and, where Word has it, a .docx) is laid out."""

    name: str
    columns: int = 1
    hanging: bool = False  # author-date: continuation lines indented
    margin_labels: bool = False  # numbered: labels in their own column, text indented
    justify: bool = False
    hyphenate: bool = False
    split_references: bool = False  # force a page (column) break inside some references
    headers: bool = False  # running header and footer with page numbers
    line_numbers: bool = False  # review copy: numbered lines in the left margin
    ligatures: bool = False  # "fi" and "fl" drawn as the ligature glyphs (fpdf2's Vera has them)


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout("one-column"),
        Layout("two-column", columns=2),
        Layout("hanging", hanging=True),
        Layout("margin-labels", margin_labels=True),
        Layout("justified", justify=True, hyphenate=True, ligatures=True),
        Layout("page-break", split_references=True),
        Layout("headers", headers=True),
        Layout("line-numbers", line_numbers=True),
        Layout(
            "journal",
            columns=2,
            hanging=True,
            margin_labels=True,
            justify=True,
            hyphenate=True,
            split_references=True,
            headers=True,
            ligatures=True,
        ),
    )
}


def layouts_for(style: str) -> list[str]:
    """The layouts that make sense for ``style`` (hanging indents: author-date; margins: numbered)."""
    skip = "margin-labels" if style in AUTHOR_DATE else "hanging"
    return [name for name in LAYOUTS if name != skip]


# --- transliteration for fonts that cannot show a character --------------------------------------

_TRANSLIT = {
    "‐": "-", "‑": "-", "‒": "-", "−": "-", "′": "'", "″": '"', "\u202f": " ", "\u2002": " ",
    "\u2009": " ", "\u2003": " ", "\u200b": "", "�": "?", "ı": "i", "ƶ": "z", "ł": "l",
    "Ł": "L", "ø": "o", "đ": "d", "Đ": "D", "ß": "ss",
}  # fmt: skip
_GREEK = "αβγδεζηθικλμνξοπρστυφχψω"
_GREEK_NAMES = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
]
_CYRILLIC = dict(
    zip(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
        [
            "a",
            "b",
            "v",
            "g",
            "d",
            "e",
            "e",
            "zh",
            "z",
            "i",
            "i",
            "k",
            "l",
            "m",
            "n",
            "o",
            "p",
            "r",
            "s",
            "t",
            "u",
            "f",
            "kh",
            "ts",
            "ch",
            "sh",
            "shch",
            "",
            "y",
            "",
            "e",
            "yu",
            "ya",
        ],
        strict=True,
    )
)


def _translit_char(ch: str) -> str:
    if ch in _TRANSLIT:
        return _TRANSLIT[ch]
    low = ch.lower()
    if low in _GREEK:
        name = _GREEK_NAMES[_GREEK.index(low)]
        return name if ch == low else name.capitalize()
    if low in _CYRILLIC:
        latin = _CYRILLIC[low]
        return latin if ch == low else latin.capitalize()
    decomposed = unicodedata.normalize("NFKD", ch)
    return "".join(c for c in decomposed if not unicodedata.combining(c)) or "?"


def transliterate(text: str, can_show: Callable[[str], bool]) -> str:
    """``text`` with each character ``can_show`` refuses replaced (Greek and Cyrillic by name)."""
    out = []
    for ch in text:
        if can_show(ch):
            out.append(ch)
            continue
        rep = _translit_char(ch)
        out.append(rep if all(can_show(c) for c in rep) else "?")
    return "".join(out)


# --- the line engine shared by the PDF producers -------------------------------------------------

PAGE_W, PAGE_H = 595.0, 842.0  # A4 in points
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 66.0, 72.0, 72.0
GUTTER = 20.0
_VOWELS = set("aeiouyäöüéèàáíóúâêîôû")
#: Letter pairs a hyphenator does not split (nor leaves a lone first letter of).
_DIGRAPHS = {"ch", "sh", "th", "ph", "gh", "ck", "qu", "wh", "rh"}


@dataclass
class Run:
    """Text drawn at a place: one line, or (justified) its words spread over ``width``."""

    x: float
    y: float  # baseline, from the page's bottom
    text: str
    font: str
    size: float
    words: tuple[str, ...] | None = None
    width: float | None = None
    decoration: bool = False  # a header, footer or line number


@dataclass(frozen=True)
class _Fonts:
    regular: str
    bold: str
    measure: Callable[[str, str, float], float]
    can_show: Callable[[str], bool]


def _soft_split(word: str, fits: Callable[[str], bool], soft: bool) -> tuple[str, str] | None:
    """The longest ``head-`` + ``tail`` of ``word`` whose head fits, or None.

    A real hyphen is a break point as it is ("Smith-" + "Jones", kept by a reader); with
    ``soft``, also a syllable by a simple rule (a soft break, "docu-" + "ment", that a reader
    must undo): between two consonants after a vowel, or before a consonant that a vowel
    follows, three letters at least on each side, letters only.
    """
    for k in range(len(word) - 2, 1, -1):  # a real hyphen
        real = word[k] == "-" and word[k - 1].isalpha() and word[k + 1].isalpha()
        if real and fits(word[: k + 1]):
            return word[: k + 1], word[k + 1 :]
    m = re.match(r"^([^\W\d_]+)", word)
    if not soft or not m or len(m.group(1)) < 8 or "-" in word:
        return None
    core = m.group(1)
    for k in range(len(core) - 3, 2, -1):
        a, b, c = core[k - 1].lower(), core[k].lower(), core[k + 1].lower()
        vc_cv = a not in _VOWELS and b not in _VOWELS and c in _VOWELS and core[k - 2] in _VOWELS
        v_cv = a in _VOWELS and b not in _VOWELS and c in _VOWELS
        if a + b in _DIGRAPHS or b + c in _DIGRAPHS:
            continue
        if (vc_cv or v_cv) and fits(word[:k] + "-"):
            return word[:k] + "-", word[k:]
    return None


def _fits(measure: Callable[[str], float], room: float, text: str) -> bool:
    return measure(text) <= room


def _wrap(
    text: str,
    first: float,
    rest: float,
    measure: Callable[[str], float],
    hyphenate: bool,
) -> list[list[str]]:
    """Greedy line breaking of ``text`` into lines of words (the first line ``first`` wide)."""
    words = text.split()
    lines: list[list[str]] = []
    line: list[str] = []
    k = 0
    while k < len(words):
        width = first if not lines else rest
        word = words[k]
        trial = " ".join([*line, word])
        if measure(trial) <= width:
            line.append(word)
            k += 1
            continue
        room = width - (measure(" ".join(line) + " ") if line else 0.0)
        split = _soft_split(word, partial(_fits, measure, room), hyphenate)
        if split:
            lines.append([*line, split[0]])
            line = []
            words[k] = split[1]
            continue
        if not line:  # a word longer than the line: cut it where it must be cut
            cut = len(word)
            while cut > 1 and measure(word[:cut]) > width:
                cut -= 1
            lines.append([word[:cut]])
            words[k] = word[cut:]
            continue
        if len(line) > 1 and line[-1].endswith("-"):
            # "(4S)-4- Hydroxy": a line ending in a hyphen then a space would read as a break
            # inside a word; a typesetter keeps such a word with the next one.
            words[k:k] = [line.pop()]
        lines.append(line)
        line = []
    if line:
        lines.append(line)
    return lines


class _Flow:
    """Pages of runs filled column by column, top to bottom."""

    def __init__(self, layout: Layout, fonts: _Fonts) -> None:
        self.layout = layout
        self.fonts = fonts
        self.pages: list[list[Run]] = [[]]
        self.col = 0
        self.top = PAGE_H - MARGIN_TOP
        self.first_top = self.top
        self.y = self.top
        width = PAGE_W - 2 * MARGIN_X
        self.col_w = (width - GUTTER * (layout.columns - 1)) / layout.columns
        self.frames: list[tuple[int, int]] = []

    @property
    def x(self) -> float:
        return MARGIN_X + self.col * (self.col_w + GUTTER)

    @property
    def frame(self) -> tuple[int, int]:
        return len(self.pages), self.col

    def next_frame(self) -> None:
        self.col += 1
        if self.col >= self.layout.columns:
            self.col = 0
            self.pages.append([])
        self.y = self.top if len(self.pages) > 1 or self.col == 0 else self.first_top

    def space(self, h: float) -> None:
        if self.y not in {self.top, self.first_top}:
            self.y -= h

    def line(self, lead: float) -> float:
        """Room for one line; returns its baseline."""
        if self.y - lead < MARGIN_BOTTOM:
            self.next_frame()
        self.y -= lead
        return self.y

    def put(self, run: Run) -> None:
        self.pages[-1].append(run)

    def full_width(self, lines: list[str], font: str, size: float) -> None:
        """Lines across all columns at the top of page 1 (the title), centred."""
        for text in lines:
            self.y -= size * 1.3
            w = self.fonts.measure(text, font, size)
            self.put(Run((PAGE_W - w) / 2, self.y, text, font, size))
        self.y -= size
        self.first_top = self.y

    def paragraph(
        self,
        text: str,
        *,
        size: float,
        font: str | None = None,
        indent_first: float = 0.0,
        indent_rest: float = 0.0,
        label: str | None = None,
        label_column: float = 0.0,
        break_after_first: bool = False,
    ) -> tuple[tuple[int, int], tuple[int, int]]:
        """Lay a paragraph out; returns the frames of its first and last lines."""
        font = font or self.fonts.regular
        fonts = self.fonts

        def measure(s: str) -> float:
            return fonts.measure(s, font, size)

        lead = size * 1.22
        width = self.col_w
        lines = _wrap(
            text,
            width - indent_first - label_column,
            width - indent_rest - label_column,
            measure,
            self.layout.hyphenate,
        )
        start = end = self.frame
        for n, words in enumerate(lines):
            y = self.line(lead)
            if n == 0:
                start = self.frame
            end = self.frame
            x = self.x + label_column + (indent_first if n == 0 else indent_rest)
            if n == 0 and label is not None:
                self.put(Run(self.x, y, label, font, size))
            last = n == len(lines) - 1
            avail = width - (x - self.x)
            if self.layout.justify and not last and len(words) > 1:
                self.put(Run(x, y, " ".join(words), font, size, tuple(words), avail))
            else:
                self.put(Run(x, y, " ".join(words), font, size))
            if n == 0 and break_after_first and len(lines) > 1:
                self.next_frame()
        return start, end


def _layout_pdf(
    paper: Paper, refs: list[TruthReference], layout: Layout, fonts: _Fonts
) -> tuple[list[list[Run]], list[int]]:
    """The runs of every page, and the numbers of the references a break splits."""
    flow = _Flow(layout, fonts)
    show = fonts.can_show

    def tr(s: str) -> str:
        return transliterate(s, show)

    title_lines = _wrap(
        tr(paper.title), 440, 440, lambda s: fonts.measure(s, fonts.bold, 15), False
    )
    flow.full_width([" ".join(w) for w in title_lines], fonts.bold, 15)
    flow.full_width([tr(paper.authors)], fonts.regular, 10)
    body_size = 10.0 if layout.columns == 1 else 9.0
    ref_size = body_size - 1

    def blocks(items: list[tuple[str, Any]]) -> None:
        for kind, content in items:
            if kind == "heading":
                flow.space(8)
                flow.paragraph(tr(content), size=body_size + 1, font=fonts.bold)
                flow.space(2)
            else:
                flow.paragraph(tr(_segments_text(content)), size=body_size, indent_first=12)

    blocks(paper.blocks)
    flow.space(10)
    flow.paragraph(tr(paper.heading), size=body_size + 1, font=fonts.bold)
    flow.space(4)
    split: list[int] = []
    numbered = paper.numbered
    label_w = 0.0
    if numbered and layout.margin_labels:
        shown_labels = [LABEL_FORMS[paper.style].format(r.number) for r in refs]
        widest = max(fonts.measure(s, fonts.regular, ref_size) for s in shown_labels)
        label_w = widest + 5
    for k, ref in enumerate(refs):
        text = ref.text
        label = None
        if numbered:
            shown = LABEL_FORMS[paper.style].format(ref.label)
            if layout.margin_labels:
                label = shown
            else:
                text = f"{shown} {text}"
        hanging = not numbered and layout.hanging
        if not hanging and not layout.margin_labels:
            flow.space(ref_size * 0.45)  # entries apart by a little space
        start, end = flow.paragraph(
            text,
            size=ref_size,
            indent_rest=14 if hanging else 0,
            label=label,
            label_column=label_w,
            break_after_first=layout.split_references and k % 7 == 3,
        )
        if start != end:
            split.append(ref.number)
    if paper.appendix:
        flow.next_frame() if layout.columns == 1 else flow.space(14)
        blocks(paper.appendix)
    pages = flow.pages
    _decorate(pages, paper, layout, fonts)
    return pages, split


def _decorate(pages: list[list[Run]], paper: Paper, layout: Layout, fonts: _Fonts) -> None:
    """Running headers and footers, page numbers, review-copy line numbers."""
    total = len(pages)
    counted = 0
    short = transliterate(" ".join(paper.title.split()[:6]), fonts.can_show)
    for p, runs in enumerate(pages, 1):
        extra: list[Run] = []
        if layout.headers:
            journal = f"Journal of Generated Papers 12 (2026) {100 + 1}–{100 + total}"
            left, right = (journal, short) if p % 2 else (short, journal)
            extra.append(Run(MARGIN_X, PAGE_H - 40, left, fonts.regular, 8, decoration=True))
            w = fonts.measure(right, fonts.regular, 8)
            extra.append(
                Run(PAGE_W - MARGIN_X - w, PAGE_H - 40, right, fonts.regular, 8, decoration=True)
            )
            foot = f"Page {p} of {total}" if paper.seed % 2 else str(100 + p)
            w = fonts.measure(foot, fonts.regular, 9)
            extra.append(Run((PAGE_W - w) / 2, 40, foot, fonts.regular, 9, decoration=True))
        if layout.line_numbers:
            ys = sorted({round(r.y, 2) for r in runs}, reverse=True)
            if paper.seed % 2:  # numbered anew on each page, or on through the document
                counted = 0
            for y in ys:
                counted += 1
                num = str(counted)
                w = fonts.measure(num, fonts.regular, 7)
                extra.append(Run(MARGIN_X - 14 - w, y, num, fonts.regular, 7, decoration=True))
        runs.extend(extra)


# --- producers -----------------------------------------------------------------------------------


@cache
def _vera_paths() -> tuple[str, str]:
    import reportlab

    fonts = Path(reportlab.__file__).parent / "fonts"
    return str(fonts / "Vera.ttf"), str(fonts / "VeraBd.ttf")


@cache
def _vera_cmap() -> frozenset[int]:
    from reportlab.pdfbase.ttfonts import TTFontFile

    return frozenset(TTFontFile(_vera_paths()[0]).charToGlyph)


def _cp1252(ch: str) -> bool:
    try:
        ch.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return ch.isprintable() or ch == " "


def _reportlab_fonts() -> _Fonts:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return _Fonts("Times-Roman", "Times-Bold", stringWidth, _cp1252)


@cache
def _register_vera() -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    regular, bold = _vera_paths()
    pdfmetrics.registerFont(TTFont("Vera", regular))
    pdfmetrics.registerFont(TTFont("VeraBd", bold))


def _fpdf_fonts() -> _Fonts:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    _register_vera()
    cmap = _vera_cmap()
    return _Fonts("Vera", "VeraBd", stringWidth, lambda ch: ord(ch) in cmap or ch == " ")


def _render_reportlab(pages: list[list[Run]], title: str) -> bytes:
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(PAGE_W, PAGE_H), invariant=True)
    c.setTitle(title)
    c.setAuthor("citeverify test papers")
    from reportlab.pdfbase.pdfmetrics import stringWidth

    for runs in pages:
        for run in runs:
            if run.words and run.width:
                natural = stringWidth(run.text, run.font, run.size)
                spaces = run.text.count(" ")
                t = c.beginText(run.x, run.y)
                t.setFont(run.font, run.size)
                t.setWordSpace((run.width - natural) / spaces if spaces else 0)
                t.textLine(run.text)
                c.drawText(t)
            else:
                c.setFont(run.font, run.size)
                c.drawString(run.x, run.y, run.text)
        c.showPage()
    c.save()
    return buf.getvalue()


def _ligate(text: str) -> str:
    """ "fi" and "fl" as their ligature glyphs, as TeX and most typesetters draw them."""
    return text.replace("fi", "ﬁ").replace("fl", "ﬂ")


def _render_fpdf(pages: list[list[Run]], title: str, ligatures: bool = False) -> bytes:
    from fpdf import FPDF
    from reportlab.pdfbase.pdfmetrics import stringWidth

    pdf = FPDF(unit="pt", format=(PAGE_W, PAGE_H))
    pdf.set_creation_date(datetime(2026, 1, 1, tzinfo=UTC))
    pdf.set_title(title)
    pdf.set_auto_page_break(auto=False)
    regular, bold = _vera_paths()
    pdf.add_font("Vera", "", regular)
    pdf.add_font("VeraBd", "", bold)
    for runs in pages:
        pdf.add_page()
        for run in runs:
            if ligatures and not run.decoration:
                words = tuple(_ligate(w) for w in run.words) if run.words else None
                run = replace(run, text=_ligate(run.text), words=words)  # noqa: PLW2901
            pdf.set_font(run.font, size=run.size)
            y = PAGE_H - run.y
            if run.words and run.width:
                # Justified: each word where it goes (as TeX's output places them).
                natural = sum(stringWidth(w, run.font, run.size) for w in run.words)
                gap = (run.width - natural) / (len(run.words) - 1)
                x = run.x
                for w in run.words:
                    pdf.text(x, y, w)
                    x += stringWidth(w, run.font, run.size) + gap
            else:
                pdf.text(run.x, y, run.text)
    return bytes(pdf.output())


def _render_platypus(paper: Paper, refs: list[TruthReference], layout: Layout) -> tuple[bytes, int]:
    """reportlab's own flow (platypus): its line breaking, its frames, no hyphenation.

    Honours columns, hanging indents, margin labels (as bullets), justification and running
    headers and footers; page breaks inside references happen where platypus splits.
    """
    from xml.sax.saxutils import escape

    from reportlab.lib.enums import TA_JUSTIFY, TA_LEFT
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.platypus import (
        BaseDocTemplate,
        Frame,
        PageTemplate,
        Paragraph,
        Spacer,
    )

    def tr(text: str) -> str:
        return escape(transliterate(text, _cp1252))

    size = 10.0 if layout.columns == 1 else 9.0
    align = TA_JUSTIFY if layout.justify else TA_LEFT
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=size, leading=size * 1.25,
                          firstLineIndent=12, alignment=align, spaceBefore=2)  # fmt: skip
    head = ParagraphStyle("head", fontName="Helvetica-Bold", fontSize=size + 1,
                          leading=size * 1.5, spaceBefore=8, spaceAfter=3)  # fmt: skip
    title = ParagraphStyle("title", fontName="Helvetica-Bold", fontSize=15, leading=19,
                           alignment=1, spaceAfter=6)  # fmt: skip
    ref_size = size - 1
    label_w = 0.0
    if paper.numbered and layout.margin_labels:
        label_w = 5 + max(
            stringWidth(LABEL_FORMS[paper.style].format(r.label), "Helvetica", ref_size)
            for r in refs
        )
    hanging = not paper.numbered and layout.hanging
    ref_style = ParagraphStyle(
        "ref",
        fontName="Helvetica",
        fontSize=ref_size,
        leading=ref_size * 1.22,
        alignment=align,
        leftIndent=label_w or (14 if hanging else 0),
        firstLineIndent=-14 if hanging else 0,
        bulletIndent=0,
        bulletFontName="Helvetica",
        bulletFontSize=ref_size,
        spaceBefore=0 if hanging or label_w else ref_size * 0.45,
    )
    story: list[Any] = [Paragraph(tr(paper.title), title), Paragraph(tr(paper.authors), body)]

    def blocks(items: list[tuple[str, Any]]) -> None:
        for kind, content in items:
            if kind == "heading":
                story.append(Paragraph(tr(content), head))
            else:
                story.append(Paragraph(tr(_segments_text(content)), body))

    blocks(paper.blocks)
    story.append(Spacer(1, 6))
    story.append(Paragraph(tr(paper.heading), head))
    for ref in refs:
        text = tr(ref.text)
        if paper.numbered:
            shown = LABEL_FORMS[paper.style].format(ref.label)
            if label_w:
                story.append(Paragraph(text, ref_style, bulletText=shown))
                continue
            text = f"{shown} {text}"
        story.append(Paragraph(text, ref_style))
    blocks(paper.appendix)
    pages = [0]
    short = transliterate(" ".join(paper.title.split()[:6]), _cp1252)

    def decorate(canvas: Any, doc: Any) -> None:
        pages[0] = doc.page
        if not layout.headers:
            return
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.drawString(MARGIN_X, PAGE_H - 40, "Journal of Generated Papers 12 (2026)")
        canvas.drawRightString(PAGE_W - MARGIN_X, PAGE_H - 40, short)
        canvas.setFont("Helvetica", 9)
        canvas.drawCentredString(PAGE_W / 2, 40, str(doc.page))
        canvas.restoreState()

    width = PAGE_W - 2 * MARGIN_X
    col_w = (width - GUTTER * (layout.columns - 1)) / layout.columns
    height = PAGE_H - MARGIN_TOP - MARGIN_BOTTOM
    frames = [
        Frame(
            MARGIN_X + c * (col_w + GUTTER),
            MARGIN_BOTTOM,
            col_w,
            height,
            id=f"c{c}",
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        )
        for c in range(layout.columns)
    ]
    buf = io.BytesIO()
    doc = BaseDocTemplate(
        buf,
        pagesize=(PAGE_W, PAGE_H),
        title=paper.title,
        author="citeverify test papers",
        invariant=True,
    )
    doc.addPageTemplates([PageTemplate(id="page", frames=frames, onPage=decorate)])
    doc.build(story)
    return buf.getvalue(), pages[0]


def _render_docx(paper: Paper, refs: list[TruthReference], layout: Layout) -> bytes:
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls, qn
    from docx.shared import Pt

    document = docx.Document()
    props = document.core_properties
    props.title = paper.title
    props.author = "citeverify test papers"
    props.created = props.modified = datetime(2026, 1, 1)
    document.add_heading(paper.title, level=0)
    document.add_paragraph(paper.authors)
    justify = WD_ALIGN_PARAGRAPH.JUSTIFY if layout.justify else None

    def blocks(items: list[tuple[str, Any]]) -> None:
        for kind, content in items:
            if kind == "heading":
                document.add_heading(content, level=1)
            else:
                p = document.add_paragraph(_segments_text(content))
                p.alignment = justify

    blocks(paper.blocks)
    document.add_heading(paper.heading, level=1)
    num_id = None
    if paper.numbered:
        # A real numbering definition (numbering.xml): Word draws the labels, the text has none.
        numbering = document.part.numbering_part.element
        lvl_text = LABEL_FORMS[paper.style].replace("{}", "%1")
        abstract = parse_xml(
            f'<w:abstractNum {nsdecls("w")} w:abstractNumId="77">'
            '<w:multiLevelType w:val="singleLevel"/>'
            '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/>'
            f'<w:lvlText w:val="{lvl_text}"/><w:lvlJc w:val="left"/>'
            '<w:pPr><w:ind w:left="567" w:hanging="567"/></w:pPr></w:lvl></w:abstractNum>'
        )
        nums = numbering.findall(qn("w:num"))
        if nums:
            nums[0].addprevious(abstract)
        else:
            numbering.append(abstract)
        numbering.append(
            parse_xml(f'<w:num {nsdecls("w")} w:numId="77"><w:abstractNumId w:val="77"/></w:num>')
        )
        num_id = 77
    for ref in refs:
        p = document.add_paragraph(ref.text)
        p.alignment = justify
        fmt = p.paragraph_format
        fmt.space_after = Pt(3)
        if num_id is not None:
            ppr = p._p.get_or_add_pPr()
            ppr.append(
                parse_xml(
                    f'<w:numPr {nsdecls("w")}><w:ilvl w:val="0"/>'
                    f'<w:numId w:val="{num_id}"/></w:numPr>'
                )
            )
        elif layout.hanging or layout.name in {"one-column", "journal"}:
            fmt.left_indent = Pt(18)
            fmt.first_line_indent = Pt(-18)
    blocks(paper.appendix)
    section = document.sections[0]
    if layout.headers:
        section.header.paragraphs[0].text = "Journal of Generated Papers 12 (2026)"
        section.footer.paragraphs[0].text = "Page"
    sect = section._sectPr
    if layout.columns > 1:
        sect.append(parse_xml(f'<w:cols {nsdecls("w")} w:num="2" w:space="454"/>'))
    if layout.line_numbers:
        sect.append(
            parse_xml(f'<w:lnNumType {nsdecls("w")} w:countBy="1" w:restart="continuous"/>')
        )
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}  # fmt: skip


def _tex_escape(text: str) -> str:
    return "".join(_TEX_SPECIAL.get(c, c) for c in text)


def _typeset_escape(text: str) -> str:
    """``text`` for pdflatex itself: also the characters that TeX's fonts or ligatures change."""
    out = _tex_escape(text).replace("<", r"\textless{}").replace(">", r"\textgreater{}")
    out = out.replace("|", r"\textbar{}").replace('"', r"\textquotedbl{}")
    out = out.replace("--", "-{}-").replace("''", "'{}'").replace("``", "`{}`")
    return out.replace(",,", ",{},")


def _render_tex(
    paper: Paper,
    refs: list[TruthReference],
    *,
    documentclass: str = "article",
    preamble: Sequence[str] = (),
    typeset: bool = False,
) -> bytes:
    """The paper as LaTeX (``thebibliography``, ``\\cite``; natbib for author-date styles).

    For pdflatex: ``documentclass`` is a class name or what follows ``\\documentclass``
    (``"[conference]{IEEEtran}"``), ``preamble`` adds lines (fonts, encodings), and ``typeset``
    escapes what TeX's fonts and ligatures would change (``<``, ``|``, ``--``).
    """
    escape = _typeset_escape if typeset else _tex_escape
    declared = documentclass if documentclass.endswith("}") else f"{{{documentclass}}}"

    def cite(seg: Any) -> str:
        keys = ",".join(seg[2])
        if paper.numbered:
            return rf"\cite{{{keys}}}"
        return rf"\citet{{{keys}}}" if not seg[1].startswith("(") else rf"\citep{{{keys}}}"

    def para(segments: Sequence[Any]) -> str:
        out = []
        for s in segments:
            out.append(escape(s) if isinstance(s, str) else cite(s))
        return " ".join("".join(out).split())

    lines = [
        rf"\documentclass{declared}",
        r"\usepackage[utf8]{inputenc}",
        *preamble,
        "" if paper.numbered else r"\usepackage{natbib}",
        rf"\title{{{escape(paper.title)}}}",
        rf"\author{{{escape(paper.authors)}}}",
        r"\begin{document}",
        r"\maketitle",
    ]
    for kind, content in paper.blocks:
        if kind == "heading":
            lines.append(rf"\section{{{escape(content.split(' ', 1)[1])}}}")
        else:
            lines += ["", para(content), ""]
    lines.append(rf"\renewcommand{{\refname}}{{{escape(paper.heading)}}}")
    lines.append(r"\begin{thebibliography}{99}")
    for ref in refs:
        opt = ""
        if not paper.numbered and ref.cite_as:
            family, year = ref.cite_as.rsplit(" ", 1)
            opt = f"[{escape(family)}({year})]"
        lines.append(rf"\bibitem{opt}{{{ref.key}}} {escape(ref.text)}")
    lines.append(r"\end{thebibliography}")
    if paper.appendix:
        lines.append(r"\appendix")
        for kind, content in paper.appendix:
            if kind == "heading":
                lines.append(rf"\section{{{escape(content)}}}")
            else:
                lines += ["", para(content), ""]
    lines.append(r"\end{document}")
    return ("\n".join(lines) + "\n").encode()


#: LaTeX classes for :func:`typeset_latex`: name -> (what follows ``\\documentclass``, preamble).
LATEX_CLASSES: dict[str, tuple[str, tuple[str, ...]]] = {
    "article": ("{article}", ()),  # Computer Modern in OT1: accents drawn over their letters
    "twocolumn-times": (
        "[twocolumn]{article}",
        (r"\usepackage[T1]{fontenc}", r"\usepackage{mathptmx}"),
    ),
    "ieeetran": ("[conference]{IEEEtran}", ()),  # numbered styles only
}


def latex_can_set(ch: str) -> bool:
    """What pdflatex sets from UTF-8 input with the default inputenc and these fonts."""
    return 0x20 <= ord(ch) < 0x7F or 0xA0 <= ord(ch) < 0x180 or ch in "\n“”‘’–—…"


def typeset_latex(paper: Paper, latex_class: str) -> tuple[bytes, Paper] | None:
    """``paper`` typeset by pdflatex (twice: citations resolved), and the paper as typeset.

    Characters pdflatex cannot set are transliterated first (in the references, so the
    returned paper's truth is what the PDF shows, and in the body). None when pdflatex is
    not installed or the class is missing; :class:`RuntimeError` when TeX fails.
    """
    if shutil.which("pdflatex") is None:
        return None
    declared, preamble = LATEX_CLASSES[latex_class]
    refs = [
        replace(r, text=normalise(transliterate(r.text, latex_can_set))) for r in paper.references
    ]
    paper = replace(paper, references=refs)
    tex = _render_tex(paper, refs, documentclass=declared, preamble=preamble, typeset=True)
    tex = transliterate(tex.decode(), latex_can_set).encode()  # the body cites titles too
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "paper.tex").write_bytes(tex)
        for _ in range(2):
            done = subprocess.run(
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
                cwd=folder,
                capture_output=True,
                timeout=120,
                check=False,
            )
            if done.returncode != 0:
                log = (folder / "paper.log").read_text(errors="replace")
                if "File `IEEEtran.cls' not found" in log:
                    return None
                error = next((ln for ln in log.splitlines() if ln.startswith("!")), "?")
                msg = f"pdflatex failed on {paper.style} in {latex_class}: {error}"
                raise RuntimeError(msg)
        return (folder / "paper.pdf").read_bytes(), paper


def _render_md(paper: Paper, refs: list[TruthReference]) -> bytes:
    lines = [f"# {paper.title}", "", f"*{paper.authors}*", ""]

    def blocks(items: list[tuple[str, Any]]) -> None:
        for kind, content in items:
            if kind == "heading":
                lines.extend([f"## {content}", ""])
            else:
                lines.extend([_segments_text(content), ""])

    blocks(paper.blocks)
    lines.extend([f"## {paper.heading}", ""])
    for ref in refs:
        if paper.numbered:
            form = "{}." if paper.seed % 2 else LABEL_FORMS[paper.style]
            lines.append(f"{form.format(ref.label)} {ref.text}")
        else:
            lines.extend([ref.text, ""])
    lines.append("")
    blocks(paper.appendix)
    return "\n".join(lines).encode()


@dataclass
class Built:
    """A paper as one producer made it in one layout, with its ground truth."""

    paper: Paper
    producer: str
    layout: Layout
    name: str
    data: bytes
    references: list[TruthReference]
    split: list[int] = field(default_factory=list)
    pages: int | None = None

    @property
    def format(self) -> str:
        """The file's format (its suffix without the dot)."""
        return PRODUCERS[self.producer]

    def truth(self) -> dict[str, Any]:
        """The ground truth as JSON-ready data."""
        return {
            "name": self.name,
            "style": self.paper.style,
            "layout": self.layout.name,
            "producer": self.producer,
            "seed": self.paper.seed,
            "title": self.paper.title,
            "heading": self.paper.heading,
            "appendix": bool(self.paper.appendix),
            "pages": self.pages,
            "split_references": self.split,
            "references": [
                {
                    "number": r.number,
                    "label": r.label,
                    "text": r.text,
                    "doi": r.doi,
                    "row": r.row,
                    "kind": r.kind,
                    "cited": r.cited,
                    "key": r.key,
                    "cite_as": r.cite_as,
                    "transliterated": r.transliterated,
                }
                for r in self.references
            ],
            "planted": [
                {"kind": p.kind, "target": p.target, "entry": p.entry} for p in self.paper.planted
            ],
        }


def build(paper: Paper, producer: str, layout: str | Layout = "one-column") -> Built:
    """``paper`` made by ``producer`` (a key of :data:`PRODUCERS`) in ``layout``."""
    lay = LAYOUTS[layout] if isinstance(layout, str) else layout
    if producer not in PRODUCERS:
        msg = f"unknown producer {producer!r}; producers: {', '.join(PRODUCERS)}"
        raise ValueError(msg)
    name = f"{paper.style.lower()}-{lay.name}-{producer}-{paper.seed}.{PRODUCERS[producer]}"
    refs = paper.references
    if producer in {"reportlab", "fpdf2"}:
        fonts = _reportlab_fonts() if producer == "reportlab" else _fpdf_fonts()
        shown = []
        for r in refs:
            text = normalise(transliterate(r.text, fonts.can_show))
            shown.append(replace(r, text=text, transliterated=text != r.text))
        pages, split = _layout_pdf(paper, shown, lay, fonts)
        title = transliterate(paper.title, fonts.can_show)
        if producer == "reportlab":
            data = _render_reportlab(pages, title)
        else:
            data = _render_fpdf(pages, title, ligatures=lay.ligatures)
        return Built(paper, producer, lay, name, data, shown, split, len(pages))
    if producer == "platypus":
        shown = []
        for r in refs:
            text = normalise(transliterate(r.text, _cp1252))
            shown.append(replace(r, text=text, transliterated=text != r.text))
        data, n_pages = _render_platypus(paper, shown, lay)
        return Built(paper, producer, lay, name, data, shown, [], n_pages)
    if producer == "docx":
        data = _render_docx(paper, refs, lay)
    elif producer == "tex":
        data = _render_tex(paper, refs)
    else:
        data = _render_md(paper, refs)
    return Built(paper, producer, lay, name, data, list(refs))
