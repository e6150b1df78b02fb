"""Reference-list splitting on real annotated reference zones: GROBID's reference-segmenter set.

Data: GROBID's public training corpus (Apache-2.0, https://github.com/kermitt2/grobid), folder
``grobid-trainer/resources/dataset/reference-segmenter/`` with ``corpus/tei/`` and
``evaluation/tei/`` (the three evaluation files are other annotations of three corpus
documents). Each file is one paper's reference zone as GROBID's PDF reader saw it: every
reference in a ``<bibl>`` (its printed label in ``<label>``), line breaks as ``<lb/>``, and text
outside any ``<bibl>`` (the heading, page headers, footnotes) left between them. Nothing is copied
into this project: ``--grobid`` names a GROBID checkout, its bare git mirror (read with ``git
show``, no work tree needed), the reference-segmenter folder or any folder of ``*.tei.xml``.

What is measured: the zone is rebuilt as the lines it had (a line per ``<lb/>``; a ``<bibl>`` that
starts without a ``<lb/>`` before it starts in the middle of a line, as in the PDF), text outside
the ``<bibl>`` elements included. A "References" line is put before it and the whole is given to
the public plain-text path a user has for a reference list, :func:`extract_document` of
``citeverify_core.references.document`` on the bytes of a ``.txt`` file (``name="<file>.txt"``:
the same reader as a ``.txt`` path; no left edges or fonts, so the splitter sees text only).

Files: ``corpus/tei/*.tei.xml`` and ``evaluation/tei/*.tei.xml`` (GROBID's ``*.tei.xml.missing``
placeholders are not read). The three evaluation files annotate three corpus documents again:
they get their own row and stay out of the total. Ten files have no ``<lb/>`` at all (one
``<bibl>`` per line of the XML): their lines are lost, so they are read one reference per line
and reported on their own row, out of the total.

Scoring, per file:

- each annotated ``<bibl>`` (its ``<label>`` removed) and each extracted reference (``text``,
  whose label citeverify removes) is reduced to a key: NFKC, whitespace, hyphens and dashes
  removed, so that line-end hyphen joining is not scored here, only splitting;
- **exact**: equal keys (one-to-one, the nearer of two equal texts); **near**: the best
  remaining pair with a rapidfuzz (else difflib) ratio >= 90; **missed**: annotated references
  left; **spurious**: ours left;
- **merged**: annotated starts inside one of our entries (an entry holding k starts counts
  k-1); **split**: our starts inside an annotated reference (an entry's label alone on the line
  above counts as its start);
- every boundary error is put in a class from the lines around it (``classify_merge``,
  ``classify_split``), and references in no entry in an extent class (``_dropped``: the list cut
  early, a second heading...). Classes that are not the splitter's fault are reported as not
  blamed and their references counted as **excluded**: GROBID annotating a numbered item's parts
  as references ("[3] A; B", "a) ... b) ..."), a reference starting in the middle of a line (no
  line break to split at), labels missing from the zone's text, a rule read as "9" by OCR,
  footnote lines before the first label, and annotation errors (two references in one
  ``<bibl>``, a label or rule put at the end of the reference before).

``--bibl-only`` leaves the text outside ``<bibl>`` out of the zone (headings, page furniture,
footnotes), to see what that noise costs.

The splitter runs with its rules alone (``use_line_labeller(None)``): the shipped line labeller
(``segment_labels.json``) was trained on these zones, so its figure here would not be a measure.
``--with-model`` adds it anyway; ``bench_line_labels_crf.py`` measures it held out.

Run: ``.venv/bin/python bench/bench_reference_zones.py --grobid /path/to/grobid`` (``--limit 20``
for a quick run, ``--show 30`` to print failures, ``--json out.json`` for every figure and
failure).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import unicodedata
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path

from citeverify_core.errors import DocumentError
from citeverify_core.references.document import extract_document
from citeverify_core.references.document.segment_labels import use_line_labeller

DATASET = "grobid-trainer/resources/dataset/reference-segmenter"
GROUPS = ("corpus", "evaluation")
NEAR = 90.0


def _difflib_ratio(a: str, b: str) -> float:
    from difflib import SequenceMatcher

    return 100.0 * SequenceMatcher(None, a, b, autojunk=False).ratio()


def _ratio_function() -> Callable[[str, str], float]:
    try:
        from rapidfuzz.fuzz import ratio
    except ImportError:
        return _difflib_ratio
    return ratio


RATIO = _ratio_function()


# ---------------------------------------------------------------------------------------------
# Reading the annotated zones


@dataclass(slots=True)
class Bibl:
    """One annotated reference."""

    text: str  # whole, label included, whitespace normalised
    body: str  # without its <label>
    label: str | None
    first: int = -1  # zone line of its first character
    last: int = -1
    midline: bool = False  # it starts after other text on its line
    before: str = ""  # that text


@dataclass(slots=True)
class Zone:
    """One file: its rebuilt lines and annotated references."""

    group: str
    name: str
    lines: list[str]
    owners: list[list[int]]  # per line: the bibls with text on it, in order (-1: outside any)
    bibls: list[Bibl]
    lines_lost: bool = False  # no <lb/>: one line per line of the XML

    @property
    def labelled(self) -> bool:
        """Most references carry a <label>."""
        return sum(b.label is not None for b in self.bibls) * 2 > len(self.bibls)


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _norm(text: str) -> str:
    return " ".join(text.split())


def read_zone(data: bytes, group: str, name: str, *, bibl_only: bool = False) -> Zone | None:
    """The zone of one TEI file, or None when it has no ``<listBibl>``.

    ``bibl_only``: text outside every ``<bibl>`` (headings, page furniture, footnotes) is left
    out. A file without any ``<lb/>`` (ten of GROBID's: one ``<bibl>`` per line of the XML) has lost
    its lines: its XML line breaks are taken instead, and it is reported on its own.
    """
    root = ET.fromstring(data)
    newline_breaks = b"<lb" not in data
    zone_el = next((e for e in root.iter() if _local(e.tag) == "listBibl"), None)
    if zone_el is None:
        return None
    pieces: list[list[tuple[str, int, bool]]] = [[]]  # per line: (text, bibl or -1, in label)
    bibls: list[Bibl] = []

    def emit(text: str | None, owner: int, in_label: bool) -> None:
        if bibl_only and owner < 0:
            text = "\n" * text.count("\n") if text else None  # its line breaks only
        if not text:
            return
        if not newline_breaks:
            pieces[-1].append((text.replace("\n", " "), owner, in_label))
            return
        for n, part in enumerate(text.split("\n")):
            if n:
                pieces.append([])
            pieces[-1].append((part, owner, in_label))

    def walk(el: ET.Element, owner: int, in_label: bool) -> None:
        emit(el.text, owner, in_label)
        for child in el:
            tag = _local(child.tag)
            if tag == "lb":
                pieces.append([])
            else:
                inner, inner_label = owner, in_label or tag == "label"
                if tag == "bibl":
                    inner = len(bibls)
                    bibls.append(Bibl(text="", body="", label=None))
                walk(child, inner, inner_label)
            emit(child.tail, owner, in_label)

    walk(zone_el, -1, False)
    texts: dict[int, list[str]] = defaultdict(list)
    bodies: dict[int, list[str]] = defaultdict(list)
    labels: dict[int, list[str]] = defaultdict(list)
    lines: list[str] = []
    owners: list[list[int]] = []
    for line_pieces in pieces:
        line = _norm("".join(t for t, _, _ in line_pieces))
        if not line:
            continue
        index = len(lines)
        seen: list[int] = []
        so_far: list[str] = []
        for text, owner, in_label in line_pieces:
            so_far.append(text)
            if owner >= 0:
                texts[owner].append(text)
                (labels if in_label else bodies)[owner].append(text)
            if not text.strip():
                continue
            if owner >= 0 and bibls[owner].first < 0:
                bibls[owner].first = index
                bibls[owner].midline = bool(seen)
                bibls[owner].before = _norm("".join(so_far[:-1]))
            if owner >= 0:
                bibls[owner].last = index
            if owner not in seen:
                seen.append(owner)
        for owner in seen:
            if owner >= 0:  # a line break inside the reference
                texts[owner].append(" ")
                bodies[owner].append(" ")
        lines.append(line)
        owners.append(seen)
    for i, bibl in enumerate(bibls):
        bibl.text = _norm("".join(texts[i]))
        bibl.body = _norm("".join(bodies[i])).lstrip(".):]- ")
        bibl.label = _norm("".join(labels[i])) or None
    kept = [b for b in bibls if b.first >= 0 and b.text]
    if len(kept) != len(bibls):  # empty <bibl>: renumber the owners
        renumber = {id(b): i for i, b in enumerate(kept)}
        new = {old: renumber[id(b)] for old, b in enumerate(bibls) if id(b) in renumber}
        owners = [[new.get(o, -1) if o >= 0 else -1 for o in line] for line in owners]
    return Zone(
        group=group,
        name=name,
        lines=lines,
        owners=owners,
        bibls=kept,
        lines_lost=newline_breaks,
    )


def _git_dir(path: Path) -> Path | None:
    """The git directory of a bare mirror or a checkout, or None."""
    if (path / "objects").is_dir() and (path / "HEAD").is_file():
        return path
    if (path / ".git").is_dir() and not (path / DATASET).is_dir():
        return path / ".git"
    return None


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True
    ).stdout


def tei_files(source: Path, dataset: str) -> Iterator[tuple[str, str, bytes]]:
    """(group, file name, bytes) of every TEI file, corpus first."""
    git_dir = _git_dir(source)
    if git_dir is not None:
        listed = _git(git_dir, "ls-tree", "-r", "-z", "--name-only", "HEAD", dataset)
        paths = sorted(p for p in listed.decode().split("\0") if p.endswith(".tei.xml"))
        if not paths:
            sys.exit(f"{source}: no *.tei.xml under {dataset} at HEAD")
        for name in sorted(paths, key=lambda p: (_group(p), p)):
            yield _group(name), Path(name).name, _git(git_dir, "show", f"HEAD:{name}")
        return
    root = source / dataset if (source / dataset).is_dir() else source
    found = sorted(root.rglob("*.tei.xml"), key=lambda p: (_group(str(p)), str(p)))
    if not found:
        sys.exit(f"{source}: no *.tei.xml found (expected {dataset} or a folder of TEI files)")
    for path in found:
        yield _group(str(path.relative_to(root))), path.name, path.read_bytes()


def _group(path: str) -> str:
    parts = Path(path).parts
    return next((g for g in GROUPS if g in parts), parts[0] if len(parts) > 1 else "files")


# ---------------------------------------------------------------------------------------------
# Running citeverify and scoring


@dataclass(slots=True)
class Ours:
    """One reference citeverify found, on the zone's lines."""

    text: str
    label: str | None
    first: int
    last: int


HEADING_LINES = 1  # "References" before the zone


def run_citeverify(zone: Zone) -> tuple[list[Ours], str | None]:
    """Our references for the zone (public plain-text path), and the error code if none."""
    text = "References\n" + "\n".join(zone.lines) + "\n"
    try:
        doc = extract_document(text.encode(), name=Path(zone.name).stem + ".txt")
    except DocumentError as exc:
        return [], exc.code
    found: list[Ours] = []
    for ref in doc.references:
        first = ref.location.line - 1 - HEADING_LINES
        last = (ref.end.line if ref.end is not None else ref.location.line) - 1 - HEADING_LINES
        found.append(Ours(text=ref.text, label=ref.label, first=first, last=last))
    return found, None


_DROPPED = re.compile(r"[\s\-‐‑‒–—―−\u00ad]+")


def key(text: str) -> str:
    """What two texts must share to count as the same reference (splitting only is scored)."""
    return _DROPPED.sub("", unicodedata.normalize("NFKC", text))


@dataclass(slots=True)
class Failure:
    """One boundary error (or a reference found with other text), for the analysis."""

    file: str
    kind: str  # merge, split, dropped, noise, text
    cls: str
    blamed: bool
    line: int
    context: list[str]
    annotated: list[str]
    ours: list[str]
    refs: int = 1  # annotated references it concerns


@dataclass(slots=True)
class FileResult:
    """One file's figures."""

    group: str
    name: str
    labelled: bool
    lines_lost: bool
    refs: int
    found: int
    exact: int
    near: int
    missed: int
    spurious: int
    merged: int
    split: int
    merged_blamed: int
    split_blamed: int
    excluded: int  # annotated references involved in an error not blamed on the splitter
    error: str | None
    cpu: float
    failures: list[Failure] = field(default_factory=list)


def match(
    ann: Sequence[str], ours: Sequence[str], ann_at: Sequence[int], our_at: Sequence[int]
) -> tuple[int, int, set[int], set[int]]:
    """Exact and near pairs of keys: (exact, near, annotated matched, ours matched).

    ``ann_at`` and ``our_at`` are the first lines: of two equal texts (a reference printed
    twice), the nearer one is paired.
    """
    by_key: dict[str, list[int]] = defaultdict(list)
    for j, k in enumerate(ours):
        by_key[k].append(j)
    same = sorted(
        (abs(our_at[j] - ann_at[i]), i, j) for i, k in enumerate(ann) for j in by_key.get(k, ())
    )
    got_a: set[int] = set()
    got_o: set[int] = set()
    for _, i, j in same:
        if i not in got_a and j not in got_o:
            got_o.add(j)
            got_a.add(i)
    exact = len(got_a)
    pairs = sorted(
        (
            (score, i, j)
            for i, a in enumerate(ann)
            if i not in got_a
            for j, o in enumerate(ours)
            if j not in got_o and (score := RATIO(a, o)) >= NEAR
        ),
        reverse=True,
    )
    near = 0
    for _, i, j in pairs:
        if i not in got_a and j not in got_o:
            got_a.add(i)
            got_o.add(j)
            near += 1
    return exact, near, got_a, got_o


# ---------------------------------------------------------------------------------------------
# Classifying boundary errors (from the two lines around the boundary)

LABEL_START = re.compile(r"^(?:\[[^\]\s]{1,20}\]|\(\d{1,4}\)|\d{1,4}\s*[.)\]]|\d{1,4}\s)")
LABEL_ONLY = re.compile(r"^(?:\[[^\]\s]{1,20}\]|\(\d{1,4}\)|\d{1,4}\.?)$")
RULE_ALONE = re.compile(r"^[-‐‑–—―_]{2,}\s?[.,]?$")
RULE_START = re.compile(r"^[-‐‑–—―_]{2,}|^[—―]")
ONE_HYPHEN_RULE = re.compile(r"^[-‐‑–]\s?[,.]")
OCR_RULE = re.compile(r"^9\s?(?:[,.]|\.?\s?(?:1[6-9]|20)\d\d)")  # "——" read as "9" by OCR
INITIAL_END = re.compile(r"(?:^|[\s.,(])[A-ZÀ-Þ]\.$")
UNFINISHED_END = re.compile(r"(?:[,;:&/(\-‐]|\band|\bet|\bin|\bof|\bthe|\bund)$", re.I)
ENDED = (".", ")", "]", '"', "”", "'", "’")
GIVEN_NAME_FIRST = re.compile(
    r"^[A-ZÀ-Þ][a-zà-ÿ]+(?:[\s-][A-ZÀ-Þ](?:[a-zà-ÿ]+|\.))*\s(?:(?:van|von|de|der|del|di|da|le|la)\s)*"
    r"[A-ZÀ-Þ][\w'’\-]+(?:[.,:]|\s(?:and|&)\s|$)"
)
CAPS_NAME = re.compile(r"^(?:[A-ZÀ-Þ]\.\s?-?)*\s?[A-ZÀ-Þ][A-ZÀ-Þ'’\-]{2,}[\s,.]")
URL_BITS = re.compile(r"(?:https?://|www\.|doi\.org|doi:|\.html?$|/$)", re.I)
HEADING_LIKE = re.compile(
    r"^\W*(?:[\dIVX]+\.?\s*)?(?:r\s?e\s?f\s?e\s?r\s?e\s?n\s?c\s?e\s?s?|b\s?i\s?b\s?l\s?i\s?o\s?g\s?r\s?a\s?p\s?h\s?y"
    r"|literature(?:\s+cited)?|references\s+cited)\W*$",
    re.I,
)
try:  # the splitter's own author-start and year patterns, to say which of its tests failed
    from citeverify_core.references.document.segment_patterns import AUTHOR_START, YEAR
except ImportError:  # pragma: no cover - the patterns moved: a rougher diagnosis
    AUTHOR_START = re.compile(r"^[A-ZÀ-Þ][\w'’\-]+,?\s(?:[A-ZÀ-Þ]\.|[A-ZÀ-Þ]{1,3}[,.\s])")
    YEAR = re.compile(r"(?<![\d/.])(?:1[6-9]|20)\d\d[a-z]?(?!\d)")


@dataclass(slots=True)
class Quirks:
    """What in a zone is not the splitter's to get right."""

    sub_parts: set[int]  # unlabelled <bibl> inside a numbered item ("[3] A; B" as two)
    lost_labels: set[int]  # unlabelled <bibl> where the list's numbers skip: labels not in the text
    noise_start: bool  # lines outside <bibl> (not a heading) before the first reference


def _label_number(label: str | None) -> int | None:
    """The number a label starts with ("[3] a)" -> 3; "b )" and "[Smi20]" -> None)."""
    m = re.match(r"\W*(\d{1,4})\b", label or "")
    return int(m.group(1)) if m else None


def zone_quirks(zone: Zone) -> Quirks:
    """The zone's annotation quirks and lossy spots."""
    sub_parts: set[int] = set()
    lost: set[int] = set()
    numbered = [i for i, b in enumerate(zone.bibls) if _label_number(b.label) is not None]
    if len(numbered) * 3 >= len(zone.bibls):  # "b )" sub-items and unlabelled bibls between
        for prev, nxt in zip([-1, *numbered], [*numbered, len(zone.bibls)], strict=True):
            between = set(range(prev + 1, nxt))
            if not between:
                continue
            n1 = _label_number(zone.bibls[prev].label) if prev >= 0 else 0
            n2 = _label_number(zone.bibls[nxt].label) if nxt < len(zone.bibls) else None
            if n1 is not None and n2 is not None and n2 - n1 - 1 >= len(between):
                lost |= between
            else:
                sub_parts |= between
    first = min((b.first for b in zone.bibls), default=0)
    noise_start = any(
        -1 in zone.owners[j] and not HEADING_LIKE.match(zone.lines[j]) for j in range(first)
    )
    return Quirks(sub_parts, lost, noise_start)


def _year_distance(zone: Zone, i: int, b: int) -> int | None:
    """Lines from ``i`` to the first of bibl ``b``'s lines with a year (None: no year)."""
    for j in range(i, zone.bibls[b].last + 1):
        if YEAR.search(zone.lines[j]):
            return j - i
    return None


RULE_OR_LABEL = re.compile(r"^(?:[-‐‑–—―_]+\s?[.,]?|\[?\(?\d{1,4}[.)\]]?)$")
SUB_PART = "annotation: a numbered item's parts as references ('[3] A; B', 'a) .. b) ..')"
ANNOTATION_TAIL = "annotation: a rule or label put at the end of the previous reference"
TWO_IN_ONE = "annotation: two references in one <bibl>"


def _two_in_one(zone: Zone, i: int) -> bool:
    """Line ``i`` starts a second reference inside an annotated one (the annotation is wrong)."""
    b = next((b for b in zone.owners[i] if b >= 0), -1)
    if b < 0 or zone.bibls[b].first >= i:
        return False
    bibl = zone.bibls[b]
    head = " ".join(zone.lines[bibl.first : i])
    tail = " ".join(zone.lines[i : bibl.last + 1])
    prev = zone.lines[i - 1].rstrip()
    ended = prev.endswith(ENDED) or prev[-1:].isdigit()
    number = _label_number(zone.lines[i])
    if number is not None and number == (_label_number(zone.lines[bibl.first]) or -9) + 1:
        return True  # "10. A ..." then "11. B ..." in one <bibl>
    return (
        ended
        and not INITIAL_END.search(prev)
        and bool(AUTHOR_START.match(zone.lines[i]))
        and bool(YEAR.search(head))
        and bool(YEAR.search(tail))
    )


def classify_merge(zone: Zone, q: Quirks, i: int, b: int) -> tuple[str, bool]:
    """The class of an annotated start at line ``i`` (of bibl ``b``) that we did not make."""
    prev, cur = zone.lines[i - 1], zone.lines[i]
    if -1 in zone.owners[i - 1] or -1 in zone.owners[i]:
        return "zone noise: text outside <bibl> at the boundary", False
    if LABEL_ONLY.match(prev) and b - 1 in zone.owners[i - 1]:
        return ANNOTATION_TAIL, False
    if 0 in q.lost_labels:
        return "lossy: numbered list whose first labels are missing from the text", False
    if b in q.sub_parts:
        return SUB_PART, False
    if b in q.lost_labels:
        return "lossy: numbered list whose labels are missing from the zone's text", False
    if zone.labelled:
        if q.noise_start:
            return "zone noise: footnote lines before the first label hide the numbering", False
        if LABEL_START.match(cur) and _label_number(cur) == 1:
            return "numbered: numbering restarts at 1 (a second list in the zone)", True
        if LABEL_START.match(cur) and q.lost_labels:
            return "lossy: a label after labels missing from the text (out of sequence)", False
        if LABEL_START.match(cur):
            return "numbered: label not taken as the next entry", True
        return "numbered: other", True
    if OCR_RULE.match(cur):
        return "lossy: repeated-author rule read as '9' by OCR ('9 1979.')", False
    if RULE_ALONE.match(cur):
        return "author-date: repeated-author rule alone on its line ('--.' + year)", True
    if ONE_HYPHEN_RULE.match(cur):
        return "author-date: repeated-author rule of one hyphen ('-, S. K. Jain')", True
    if RULE_START.match(cur):
        return "author-date: repeated-author rule (other)", True
    if cur[:1].islower():
        return "author-date: next entry starts in lower case (particle: van, de, d')", True
    end = prev.rstrip()
    if not end.endswith(ENDED):
        if URL_BITS.search(end.split()[-1]):
            return "author-date: previous entry ends with a URL/DOI, no full stop", True
        if UNFINISHED_END.search(end):
            return "author-date: previous entry ends with , ; : or 'and'", True
        if end[-1:].isdigit():
            return (
                "author-date: previous entry ends with a number, no full stop (ApJ, 678, 297)",
                True,
            )
        return "author-date: previous entry ends with a word, no full stop (Neuroimage; PMID)", True
    if INITIAL_END.search(end):
        return "author-date: previous entry ends with an initial ('... Smith, J.')", True
    if not AUTHOR_START.match(cur):
        if GIVEN_NAME_FIRST.match(cur):
            return "author-date: author with given name first ('Eugene Charniak. 2001.')", True
        if CAPS_NAME.match(cur):
            return "author-date: author in capitals ('B. SOLASTIOUK.')", True
        return "author-date: next entry does not start like an author (org, title, OCR)", True
    distance = _year_distance(zone, i, b)
    if distance is None or distance > 2:
        return "author-date: author start, but no year within three lines (long author list)", True
    return "author-date: author start after a finished entry, not taken (other)", True


def classify_split(zone: Zone, q: Quirks, i: int) -> tuple[str, bool]:
    """The class of a start we made at line ``i`` inside an annotated reference."""
    prev, cur = zone.lines[i - 1], zone.lines[i]
    if -1 in zone.owners[i - 1] or -1 in zone.owners[i]:
        return "zone noise: text outside <bibl> at the boundary", False
    if any(
        b >= 0 and zone.bibls[b].first == i and RULE_OR_LABEL.match(zone.bibls[b].before)
        for b in zone.owners[i]
    ) or (
        LABEL_ONLY.match(cur)
        and i + 1 < len(zone.lines)
        and any(b >= 0 and zone.bibls[b].first == i + 1 for b in zone.owners[i + 1])
    ):
        return ANNOTATION_TAIL, False
    if _two_in_one(zone, i):
        return TWO_IN_ONE, False
    if zone.labelled and q.noise_start:
        return "zone noise: footnote lines before the first label hide the numbering", False
    if LABEL_START.match(cur):
        return "a number or bracket at a line start taken as a label", True
    if zone.labelled:
        return "numbered: split without a label", True
    if RULE_START.match(cur):
        return "a rule inside an entry taken as a new entry", True
    if URL_BITS.search(prev.split()[-1]) or URL_BITS.match(cur):
        return "split at a URL/DOI broken across lines", True
    if INITIAL_END.search(prev) or prev.endswith(","):
        return "split inside an author/editor list (line ends with an initial or comma)", True
    if AUTHOR_START.match(cur) or CAPS_NAME.match(cur):
        return "split at a publisher/journal line read as an author ('J. Climate, 13')", True
    return "split at another line after a finished sentence", True


# ---------------------------------------------------------------------------------------------

LONG_ENTRY_LINES = 40  # docs/documents.md: "a reference over 40 lines" ends the list


def _dropped(
    zone: Zone, ours: Sequence[Ours], error: str | None
) -> Iterator[tuple[str, list[int]]]:
    """(class, bibls) of annotated references that are in none of our entries."""
    covered = {j for o in ours for j in range(o.first, o.last + 1)}
    left = [
        i
        for i, b in enumerate(zone.bibls)
        if not any(j in covered for j in range(b.first, b.last + 1))
    ]
    if not left:
        return
    if not ours:
        yield f"extent: no list found ({error})", left
        return
    head = [i for i in left if zone.bibls[i].last < ours[0].first]
    tail = [i for i in left if zone.bibls[i].first > ours[-1].last]
    inside = [i for i in left if i not in head and i not in tail]
    if head:
        second = any(
            HEADING_LIKE.match(zone.lines[j])
            for j in range(zone.bibls[head[-1]].last + 1, ours[0].first + 1)
        )
        yield (
            (
                "extent: a second 'References' heading in the zone; the list above it is dropped"
                if second
                else "extent: list starts too late"
            ),
            head,
        )
    if tail:
        last = ours[-1]
        starts = sum(last.first <= b.first <= last.last for b in zone.bibls)
        if last.last - last.first + 1 >= LONG_ENTRY_LINES:
            yield (
                (
                    "extent: list cut after an entry of 40 lines made of merged references"
                    if starts > 1
                    else "extent: list cut after one real reference of 40+ lines (huge author list)"
                ),
                tail,
            )
        else:
            yield "extent: list ends too early (other)", tail
    if inside:
        yield "extent: references left out inside the list", inside


def score(zone: Zone) -> FileResult:
    """Run citeverify on one zone and compare."""
    cpu0 = time.process_time()
    ours, error = run_citeverify(zone)
    cpu = time.process_time() - cpu0
    for k, o in enumerate(ours):  # its label alone on the line above: the entry starts there
        above = zone.lines[o.first - 1] if o.first > 0 else ""
        if (
            o.label
            and o.first - 1 > (ours[k - 1].last if k else -1)
            and LABEL_ONLY.match(above)
            and re.sub(r"\W", "", above) == re.sub(r"\W", "", o.label)
        ):
            o.first -= 1
    ann_keys = [key(b.body) for b in zone.bibls]
    our_keys = [key(o.text) for o in ours]
    exact, near, got_a, got_o = match(
        ann_keys, our_keys, [b.first for b in zone.bibls], [o.first for o in ours]
    )
    quirks = zone_quirks(zone)
    failures: list[Failure] = []
    excluded: set[int] = set()
    n = len(zone.lines)

    def context(i: int) -> list[str]:
        return [
            f"{'>' if j == i else ' '}{j:4d} {zone.lines[j][:110]}"
            for j in range(max(0, i - 2), min(n, i + 2))
        ]

    def ann_at(i: int) -> list[str]:
        return [zone.bibls[b].text[:160] for b in dict.fromkeys(zone.owners[i]) if b >= 0]

    def ours_at(i: int) -> list[str]:
        return [o.text[:160] for o in ours if o.first <= i <= o.last]

    def fail(kind: str, cls: str, blamed: bool, i: int, refs: int = 1) -> None:
        failures.append(
            Failure(zone.name, kind, cls, blamed, i, context(i), ann_at(i), ours_at(i), refs)
        )

    line_starts = {b.first for b in zone.bibls if not b.midline}
    merged = merged_blamed = 0
    for o in ours:
        inside = [i for i, b in enumerate(zone.bibls) if o.first <= b.first <= o.last]
        for b in inside[1:]:
            merged += 1
            bibl = zone.bibls[b]
            if bibl.midline and RULE_OR_LABEL.match(bibl.before):
                cls, blamed = ANNOTATION_TAIL, False
            elif b in quirks.sub_parts:
                cls, blamed = SUB_PART, False
            elif bibl.midline:
                cls, blamed = "lossy: reference starts mid-line (no line break to split at)", False
            else:
                cls, blamed = classify_merge(zone, quirks, bibl.first, b)
            merged_blamed += blamed
            if not blamed:
                excluded.update((b, b - 1))
            fail("merge", cls, blamed, bibl.first)
    split = split_blamed = 0
    for i in sorted({o.first for o in ours}):
        if i in line_starts or not 0 < i < n:
            continue
        if not any(b >= 0 and zone.bibls[b].first < i for b in zone.owners[i]):
            fail("noise", "zone noise: an entry made of text outside <bibl>", False, i)
            continue
        split += 1
        cls, blamed = classify_split(zone, quirks, i)
        split_blamed += blamed
        if not blamed:
            excluded.update(b for b in zone.owners[i] if b >= 0)
        fail("split", cls, blamed, i)
    for dropped_class, bibls in _dropped(zone, ours, error):
        cls = dropped_class
        i = zone.bibls[bibls[0]].first
        blamed = True
        if "merged references" in cls:  # the merges' blame: zone noise, lost labels...
            last = ours[-1]
            blamed = any(
                f.blamed
                for f in failures
                if f.kind == "merge" and last.first <= f.line <= last.last
            )
            if not blamed:
                cls += ", after merges not blamed"
                excluded.update(bibls)
        failures.append(
            Failure(
                zone.name,
                "dropped",
                cls,
                blamed,
                i,
                context(i),
                [zone.bibls[b].text[:160] for b in bibls[:2]],
                [f"({len(bibls)} references in no entry)"],
                len(bibls),
            )
        )
    for i, bibl in enumerate(zone.bibls):  # right lines, other text
        same = [o for o in ours if o.first == bibl.first and o.last == bibl.last]
        if i not in got_a and same and not bibl.midline and i not in excluded:
            failures.append(
                Failure(
                    zone.name,
                    "text",
                    "same lines, text differs",
                    True,
                    bibl.first,
                    context(bibl.first),
                    [bibl.body[:200]],
                    [same[0].text[:200]],
                )
            )
    return FileResult(
        group=zone.group,
        name=zone.name,
        labelled=zone.labelled,
        lines_lost=zone.lines_lost,
        refs=len(zone.bibls),
        found=len(ours),
        exact=exact,
        near=near,
        missed=len(zone.bibls) - len(got_a),
        spurious=len(ours) - len(got_o),
        merged=merged,
        split=split,
        merged_blamed=merged_blamed,
        split_blamed=split_blamed,
        excluded=len(excluded - got_a),
        error=error,
        cpu=cpu,
        failures=failures,
    )


# ---------------------------------------------------------------------------------------------
# Reporting

COLUMNS = ("files", "refs", "found", "exact", "near", "missed", "spurious", "merged", "split")


def _sum(results: Sequence[FileResult]) -> dict[str, int]:
    total = dict.fromkeys((*COLUMNS, "merged_blamed", "split_blamed", "excluded"), 0)
    for r in results:
        total["files"] += 1
        for c in total:
            if c != "files":
                total[c] += int(getattr(r, c))
    return total


def _row(name: str, t: dict[str, int]) -> str:
    refs = t["refs"] or 1
    blame_base = (t["refs"] - t["excluded"]) or 1
    return (
        f"| {name} | {t['files']} | {t['refs']} | {t['found']} | "
        f"{t['exact']} ({100 * t['exact'] / refs:.1f}%) | "
        f"{100 * (t['exact'] + t['near']) / refs:.1f}% | {t['missed']} | {t['spurious']} | "
        f"{t['merged']} ({t['merged_blamed']}) | {t['split']} ({t['split_blamed']}) | "
        f"{t['excluded']} | {100 * t['exact'] / blame_base:.1f}% |"
    )


def table(rows: Sequence[tuple[str, Sequence[FileResult]]]) -> str:
    """A markdown table of figures per group."""
    head = (
        "| group | files | refs | ours | exact | exact+near | missed | spurious | "
        "merged (blamed) | split (blamed) | excluded | exact w/o excluded |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    )
    return "\n".join([head, *(_row(name, _sum(rs)) for name, rs in rows if rs)])


def class_table(failures: Sequence[Failure]) -> str:
    """Failure classes, most frequent first."""
    counts: Counter[tuple[str, str, bool]] = Counter()
    files: dict[tuple[str, str, bool], set[str]] = defaultdict(set)
    for f in failures:
        counts[f.kind, f.cls, f.blamed] += f.refs
        files[f.kind, f.cls, f.blamed].add(f.file)
    lines = ["| kind | class | blamed | refs | files |", "|---|---|---|--:|--:|"]
    lines += [
        f"| {kind} | {cls} | {'yes' if blamed else 'no'} | {count} | {len(files[kind, cls, blamed])} |"
        for (kind, cls, blamed), count in sorted(
            counts.items(), key=lambda kv: (not kv[0][2], -kv[1])
        )
    ]
    return "\n".join(lines)


def show(failures: Sequence[Failure], count: int) -> None:
    """Print ``count`` failures, blamed ones first, spread over the classes."""
    by_class: dict[str, list[Failure]] = defaultdict(list)
    for f in failures:
        by_class[f"{f.kind}: {f.cls}"].append(f)
    order = sorted(by_class.items(), key=lambda kv: (not kv[1][0].blamed, -len(kv[1])))
    shown = 0
    while shown < count and any(order_list for _, order_list in order):
        for cls, items in order:
            if not items or shown >= count:
                continue
            f = items.pop(0)
            shown += 1
            print(f"\n### {cls}  [{f.file}, line {f.line}]")
            print("\n".join(f.context))
            for a in f.annotated:
                print(f"  annotated: {a}")
            for o in f.ours:
                print(f"  ours:      {o}")


def main(argv: Sequence[str] | None = None) -> int:
    with ExitStack() as stack:
        return _main(argv, stack)


def _main(argv: Sequence[str] | None, stack: ExitStack) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--grobid",
        type=Path,
        required=True,
        help="a GROBID checkout, its bare git mirror, or a folder of *.tei.xml",
    )
    parser.add_argument("--dataset", default=DATASET, help="the folder inside the repository")
    parser.add_argument("--limit", type=int, default=None, help="read only the first N files")
    parser.add_argument("--show", type=int, default=0, help="print N failures")
    parser.add_argument(
        "--bibl-only",
        action="store_true",
        help="leave out the zone's text outside <bibl> (headings, page furniture, footnotes)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument(
        "--with-model",
        action="store_true",
        help="split with the shipped line labeller too (trained on these very zones: not a "
        "measure; bench_line_labels_crf.py measures it held out, five-fold by file)",
    )
    args = parser.parse_args(argv)
    if not args.with_model:
        # The rules alone by default: the shipped model has seen every zone here.
        stack.enter_context(use_line_labeller(None))

    cpu0, wall0 = time.process_time(), time.perf_counter()
    results: list[FileResult] = []
    skipped: list[str] = []
    for group, name, data in tei_files(args.grobid, args.dataset):
        if args.limit is not None and len(results) >= args.limit:
            break
        zone = read_zone(data, group, name, bibl_only=args.bibl_only)
        if zone is None or not zone.bibls:
            skipped.append(name)
            continue
        results.append(score(zone))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0

    corpus_names = {r.name for r in results if r.group == "corpus"}
    unique = [r for r in results if r.group == "corpus" or r.name not in corpus_names]
    lost = [r for r in unique if r.lines_lost]
    kept = [r for r in unique if not r.lines_lost]
    rows: list[tuple[str, Sequence[FileResult]]] = [
        (f"{g} (with <lb/>)", [r for r in results if r.group == g and not r.lines_lost])
        for g in dict.fromkeys(r.group for r in results)
    ]
    rows += [
        ("numbered lists (<label>)", [r for r in kept if r.labelled]),
        ("unlabelled lists", [r for r in kept if not r.labelled]),
        ("**total (unique documents with <lb/>)**", kept),
        ("no <lb/>: one reference per line (not in the total)", lost),
    ]
    failures = [f for r in kept for f in r.failures]
    print(f"GROBID reference zones: {len(results)} files read, {len(skipped)} without references")
    print(
        f"(not in the total: {len(results) - len(unique)} evaluation files that repeat a corpus "
        f"document, {len(lost)} files without <lb/> whose lines are lost)\n"
    )
    print(table(rows))
    print(
        "\nexact/exact+near: share of annotated references; merged: references lost in our "
        "entries that hold several annotated starts; split: extra starts inside annotated "
        "references; (blamed): the splitter's own errors; excluded: references in errors "
        "that are not (GROBID's sub-references, mid-line starts, labels lost from the text, "
        "zone noise, annotation errors)."
    )
    print(
        f"\nCPU {cpu:.2f} s ({sum(r.cpu for r in results):.2f} s in extract_document), "
        f"wall {wall:.2f} s\n"
    )
    print(class_table(failures))
    if args.show:
        show(failures, args.show)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "cpu_seconds": cpu,
                    "files": [asdict(r) for r in results],
                    "skipped": skipped,
                },
                ensure_ascii=False,
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
