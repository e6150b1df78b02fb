"""The findings: citations naming no entry, entries not cited, numbering and duplicates.

Precision first: an ``uncited-entry`` is only reported for an entry whose citations could all
have been read (see :func:`_uncited_findings` and the coverage in ``consistency.py``).
"""

from __future__ import annotations

import bisect
import collections
import difflib
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from citeverify_core.references.document.citations_base import (
    _YEAR_IN,
    MAX_CITATION_SITES,
    MAX_RANGE,
    _Body,
    _Cite,
    _Entry,
    _ListKind,
    _near_hint,
)
from citeverify_core.references.document.model import ConsistencyFinding, ExtractedReference
from citeverify_core.references.folding import fold

#: Findings of one kind about the list's numbering before they are summed up in one.
_MAX_ORDER_FINDINGS = 10


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
        if r.label and r.label.strip().isdecimal() and len(r.label.strip()) <= 6
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


_VOLUME = re.compile(
    r"\b(?i:vol(?:ume)?s?|bd|band|tome|t|part|pt|teil|book|bk|no|number)\.?\s?~?"
    r"([IVXLC]{1,7}|[ivxlc]{1,7}|\d{1,4}[A-Za-z]?)\b"
)


def _volumes(text: str) -> list[str]:
    """The volume, part and number designations of a reference: ["iii"] of "Vol. III"."""
    return [m.group(1).casefold() for m in itertools.islice(_VOLUME.finditer(text[:1500]), 10)]


def _same_work(a: _Entry, b: _Entry) -> bool:
    """The same first author and year (checked by the caller) and a near-identical title."""
    if not a.title or not b.title:
        return False
    if _volumes(a.ref.text) != _volumes(b.ref.text):
        return False  # "Vol. III" and "Vol. IV": two volumes of one multi-volume work
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
    numbers = [int(e.ref.label) for e in entries if e.ref.label and e.ref.label.isdecimal()]
    found: list[ConsistencyFinding] = []
    for target, cite in first.items():
        where = body.location(cite.start)
        more = count[target] - 1
        times = f" (and {more} more time{'s' * (more > 1)})" if more else ""
        if kind == "numeric" and target.isdecimal():
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


@dataclass(slots=True)
class _Uncited:
    """The ``uncited-entry`` findings, and the entries not checked by reason."""

    findings: list[ConsistencyFinding]
    reported: set[int]
    not_checked: dict[str, int]


#: Reasons an entry was not checked (the coverage's, and the notes').
FORMS = "citation forms not read"
NOT_WHOLE = "the reference list may not have been read whole"
DAMAGED = "damaged text (a font without a Unicode map)"
TOO_MANY = "too many citation-like places to read them all"
NO_AUTHOR = "no author read in the entry"
OUTPUT = "the entry looks like a program's output"
#: Why an entry cannot be cited in the list's way: no label in a numbered list, no key, no
#: year in a list where almost every entry has one (most likely the tail of a split entry).
NO_HANDLE = "no label, key or year read in the entry"


def _uncited_findings(
    cites: list[_Cite],
    entries: list[_Entry],
    kind: _ListKind,
    *,
    unsure: Mapping[int, str] | None = None,
    cite_all: bool = False,
    other_forms: bool = True,
) -> _Uncited:
    """Entries no citation names, except those in ``unsure`` (entry number -> reason).

    An entry is checked when it is found cited, or when it could have been and was not
    (then it is reported). The others are counted by reason: ``unsure``'s; too few entries
    cited at all (citations in a form not read: superscripts, footnotes); no way to cite it.
    ``other_forms``: the body shows citations may be in a form not read (see
    ``consistency._other_forms``).
    """
    unsure = unsure or {}
    cited: set[int] = set()
    for cite in cites:
        cited.update(x for x in cite.entries if x is not None)
        cited |= cite.also
    if cite_all:
        cited |= {e.number for e in entries}  # \nocite{*}
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
    not_checked: collections.Counter[str] = collections.Counter()
    chosen = {e.number for e in candidates}
    for e in entries:
        if e.number not in chosen and e.number not in cited:
            not_checked[NO_HANDLE] += 1
    # Citations in a form not read (superscripts, footnotes) or a body read in part would make
    # every entry look uncited: say nothing unless at least half the entries are cited. Labels
    # and keys are read in every form the document shows (brackets, superscripts, \cite): when
    # some are read and nothing shows another form, the others are not cited.
    too_few = not candidates or len(cited) < math.ceil(len(candidates) / 2)
    if too_few and cited and kind in {"numeric", "alpha", "key"} and not other_forms:
        too_few = False
    findings: list[ConsistencyFinding] = []
    reported: set[int] = set()
    for e in candidates:
        if e.number in cited:
            continue
        if e.number in unsure:
            not_checked[unsure[e.number]] += 1
        elif kind == "author-date" and e.guessed:
            # No author could be read ("A Reference Guide to ...", an entry split in two): how
            # it is cited cannot be known.
            not_checked[NO_AUTHOR] += 1
        elif too_few:
            not_checked[FORMS] += 1
        else:
            reported.add(e.number)
            findings.append(
                ConsistencyFinding(
                    "uncited-entry",
                    f"Reference {_name(e.ref)} ({_where(e.ref)}) is not cited in the text: "
                    "cite it or remove it from the list.",
                    target=e.ref.key if kind == "key" else (e.ref.label or _display(e)),
                    entry=e.number,
                    location=e.ref.location,
                )
            )
    return _Uncited(findings, reported, dict(not_checked))


_CAPITALISED = re.compile(r"(?<![\w’'-])[^\W\d_][^\W\d_'’-]+")
_NEAR = 80


def _named_near_year(body: _Body, entries: list[_Entry]) -> dict[int, int]:
    """Entries whose first author's surname the body has within a few words of their year.

    Returns the number of such places by entry. One pass over the words and one over the
    years; each surname's places are capped, so the work stays linear in the text.
    """
    wanted: dict[str, list[_Entry]] = {}
    for e in entries:
        if e.names and e.names[0] and e.years:
            wanted.setdefault(e.names[0].split()[-1], []).append(e)
    if not wanted:
        return {}
    text = body.text
    years: dict[int, list[int]] = {}
    for m in itertools.islice(_YEAR_IN.finditer(text), MAX_CITATION_SITES):
        years.setdefault(int(m.group(1)), []).append(m.start())
    found: collections.Counter[int] = collections.Counter()
    places = 0
    for m in _CAPITALISED.finditer(text):
        word = m.group(0)
        if not word[0].isupper():
            continue
        listed = wanted.get(word.lower() if word.isascii() else fold(word))
        if not listed:
            continue
        places += 1
        if places > MAX_CITATION_SITES:
            break
        for e in listed:
            for year in e.years:
                spots = years.get(year, [])
                k = bisect.bisect_left(spots, m.start() - _NEAR)
                if k < len(spots) and spots[k] <= m.end() + _NEAR:
                    found[e.number] += 1
                    break
    return dict(found)


def _display(e: _Entry) -> str | None:
    if not e.first_display:
        return None
    return f"{e.first_display} {e.year}{e.suffix or ''}" if e.year else e.first_display
