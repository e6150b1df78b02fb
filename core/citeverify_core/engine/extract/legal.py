"""Case law (found by eyecite, in windows around cheap hints) and statutes and regulations.

eyecite is the ``caselaw`` extra. Without it, case citations of the form "Name v. Name, volume
Reporter page" are still found (by the pattern that catches reporters eyecite does not know), but
are reported ``unchecked``, with a note in ``result.notes`` and a :class:`MissingExtraWarning`
once a process; short forms, "Id.", "supra" and citations without a case name are not found.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any

from citeverify_core.engine.extract.scan import (
    Found,
    _class_hits,
    _Classes,
    _has,
    _Limited,
    _scan,
    _Taken,
)
from citeverify_core.errors import MissingExtraWarning, missing_extra_message

__all__ = [
    "CASE_LAW_UNCHECKED",
    "MAX_CASE_LAW_CHARS",
    "case_law_notes",
    "extract_case_law",
    "extract_regulatory",
]

# --- case law ------------------------------------------------------------------------------------

# Cheap pre-filter: eyecite is thorough but runs at about 1 MB/s, so it only sees windows around
# something that looks like "volume reporter page", "Id.", "supra" or "v.".
# Reporters are abbreviations with a period ("U.S.", "F.3d", "S. Ct.", "N.E.2d"), so a hint is a
# number followed by a capitalized token that has one. Digit first: the scan runs at C speed.
_CASE_HINTS = (
    (re.compile(r"\d{1,4}\s+[A-Z][A-Za-z]{0,8}\."), None),
    (re.compile(r" v\. "), _has(" v. ")),
    (re.compile(r"\b(?:Id|Ibid)\.|\bsupra\b"), _has("Id.", "Ibid.", "supra")),
)

# A case name and a "volume reporter page" that eyecite may not know (fabricated reporters).
# Every token and gap is bounded: the pattern is tried at each capital letter of a window, and an
# unbounded token made a long run of capitals quadratic (40,000 letters took
# seconds).
_CASE_LIKE = re.compile(
    r"(?P<name>(?:[A-Z][\w.'&-]{0,40}\s{1,3}){1,5}v\.\s{1,3}"
    r"(?:[A-Z][\w.'&-]{0,40},?\s{1,3}){0,5}?[A-Z][\w.'&-]{0,40}),\s{1,3}"
    r"(?P<volume>\d{1,4})\s{1,3}"
    r"(?P<reporter>[A-Z][A-Za-z.']{0,20}(?:\s{1,3}(?:\d[a-z]{1,2}|[A-Z][A-Za-z.']{0,20})){0,4})"
    r"\s{1,3}(?P<page>\d{1,5})"
)
_WINDOW = 200
#: Widening a window to whitespace stops after this many characters (a token that long is no
#: part of a citation; unbounded, a text without spaces made each window the whole text).
_WIDEN = 64
#: At most this many characters of windows go to eyecite in one answer. eyecite reads dense
#: legal text at 100-250 KB/s, so this bounds case-law extraction to about half a second
#: whatever the answer (a long run of "Id. supra" otherwise takes seconds to minutes).
#: Citations past the budget are not found; docs/citations.md says so.
MAX_CASE_LAW_CHARS = 30_000
#: Merged windows grow to at most this size; the next one overlaps it (citations found twice are
#: kept once). eyecite resolves each citation's pin cites by scanning its whole input, so one
#: window of dense citations was quadratic (100,000 characters of "Roe v. Wade, 410 U.S. 113
#: (1973)." took seconds).
_MAX_WINDOW = 4_000


def _windows(
    text: str, taken: _Taken, limited: _Limited, classes: _Classes | None = None
) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    hints = sorted(_hints(text, limited, classes))
    budget = MAX_CASE_LAW_CHARS
    for hint_start, hint_end in hints:
        if taken.overlaps(hint_start, hint_end):
            continue  # "42 U.S.C." looks like "5 U.S." but is a statute, already found
        start = max(0, hint_start - _WINDOW)
        end = min(len(text), hint_end + _WINDOW)
        # Widen to whitespace so that no token is cut.
        floor, ceiling = max(0, start - _WIDEN), min(len(text), end + _WIDEN)
        while start > floor and not text[start - 1].isspace():
            start -= 1
        while end < ceiling and not text[end].isspace():
            end += 1
        if spans and start <= spans[-1][1] and end - spans[-1][0] <= _MAX_WINDOW:
            grown = max(0, end - spans[-1][1])
            if grown > budget:
                limited.hit = True
                break
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            grown = end - start
            if grown > budget:
                limited.hit = True
                break
            spans.append((start, end))
        budget -= grown
    return spans


def _hints(text: str, limited: _Limited, classes: _Classes | None) -> Iterator[tuple[int, int]]:
    """The spans of the ``_CASE_HINTS`` matches, pattern by pattern, at most ``MAX_MATCHES``."""
    (number, number_gate), *others = _CASE_HINTS
    candidates = None
    if classes is not None and classes.usable:
        candidates = _class_hits(classes.bytes, (b"0 A", b"0  "), 0)
    if candidates is not None:
        yield from limited(_number_hints(text, candidates))
    else:
        yield from (m.span() for m in _scan(text, number, number_gate, limited))
    for pattern, gate in others:
        yield from (m.span() for m in _scan(text, pattern, gate, limited))


def _number_hints(text: str, candidates: list[int]) -> Iterator[tuple[int, int]]:
    """The matches of the first case hint, tried only at ``candidates``.

    A match is "1 to 4 digits, whitespace, a capital": it starts at most 3 digits before the
    last digit of a run, and that digit stands before a space class byte (whitespace among
    others) and a capital or another space class byte.
    """
    pattern = _CASE_HINTS[0][0]
    for last in candidates:
        start = last
        while start > last - 3 and start and text[start - 1].isdecimal():
            start -= 1
        if m := pattern.match(text, start):
            yield m.span()


#: Why a case citation found without eyecite is unchecked (its ``reason``).
_NO_EYECITE = missing_extra_message("checking its reporter, volume and page", "caselaw")
#: The note in ``result.notes`` when an answer has such citations (and the warning, once).
CASE_LAW_UNCHECKED = (
    "case-law citations were found by a plain pattern and not checked: "
    + missing_extra_message("checking them", "caselaw")
)


@cache
def _eyecite() -> Callable[[str], list[Any]] | None:
    """The ``get_citations`` of eyecite, or None when the caselaw extra is not installed."""
    # Imported on first use: eyecite builds its reporter tokenizer at import (about 1 s).
    try:
        from eyecite import get_citations  # noqa: PLC0415 - start-up time
    except ModuleNotFoundError as exc:
        if exc.name != "eyecite":
            raise  # eyecite is there but broken: not a missing extra
        warnings.warn(CASE_LAW_UNCHECKED, MissingExtraWarning, stacklevel=1)
        return None
    import logging  # noqa: PLC0415 - start-up time: only with eyecite

    logging.getLogger("eyecite").setLevel(logging.ERROR)  # it logs "Unknown overlap case"
    return get_citations


def case_law_notes(checked: Iterable[tuple[str, str]]) -> list[str]:
    """``[CASE_LAW_UNCHECKED]`` when a case citation was left unchecked, else ``[]``.

    Args:
        checked: The ``(type, status)`` of each citation of a result.
    """
    unchecked = ("case_law", "unchecked") in set(checked)
    return [CASE_LAW_UNCHECKED] if unchecked else []


def extract_case_law(
    text: str,
    *,
    current_year: int,
    taken: Iterable[tuple[int, int]] = (),
    limited: _Limited | None = None,
    classes: _Classes | None = None,
) -> list[Found]:
    """Case citations via eyecite (full, short, id., supra), with a format check.

    Full citations pass when eyecite knows the reporter, volume and page are numbers and the
    year, if given, is not in the future. A "Name v. Name, volume Reporter page" that eyecite does
    not recognize is reported with a failed format check (unknown reporter); without eyecite
    (the caselaw extra), with no check (``format_ok`` None). Spans in ``taken`` (statutes) are
    not searched for cases.
    """
    found: list[Found] = []
    windows = _windows(text, _Taken(taken), limited or _Limited(), classes or _Classes(text))
    if not windows:
        return found
    get_citations = _eyecite()
    starts: set[int] = set()
    for w_start, w_end in windows:
        window = text[w_start:w_end]
        in_window: list[Found] = []
        for cite in get_citations(window) if get_citations is not None else ():
            f = _from_eyecite(cite, window, w_start, current_year)
            if f is not None and f.start not in starts:
                starts.add(f.start)
                in_window.append(f)
        found.extend(in_window)
        if "v." not in window:
            continue  # the fallback below needs a case name
        known = _Taken((f.start, f.end) for f in in_window)
        for m in _CASE_LIKE.finditer(window):
            start, end = w_start + m.start("volume"), w_start + m.end("page")
            if known.overlaps(start, end) or w_start + m.start() in starts:
                continue
            starts.add(w_start + m.start())
            reporter = m.group("reporter")
            checked = get_citations is not None
            found.append(
                Found(
                    "case_law",
                    "case",
                    w_start + m.start(),
                    end,
                    m.group(),
                    f"{m.group('volume')} {reporter} {m.group('page')}",
                    format_ok=False if checked else None,
                    note=f"unknown reporter {reporter!r}" if checked else _NO_EYECITE,
                )
            )
    found.sort(key=lambda f: f.start)
    return found


def _from_eyecite(cite: Any, window: str, offset: int, current_year: int) -> Found | None:
    kind = type(cite).__name__
    start, end = cite.span()
    if kind == "FullCaseCitation":
        full_start, _ = cite.full_span()
        year = getattr(cite.metadata, "year", None)
        groups = cite.groups
        problems = []
        if not str(groups.get("volume", "")).isdigit():
            problems.append(f"volume {groups.get('volume')!r} is not a number")
        if not str(groups.get("page", "")).isdigit():
            problems.append(f"page {groups.get('page')!r} is not a number")
        if year is not None and str(year).isdigit() and int(year) > current_year:
            problems.append(f"year {year} is in the future")
        reporter = groups.get("reporter", "")
        note = "; ".join(problems) or f"known reporter {reporter!r}"
        start = min(start, full_start)
        text = window[start:end]
        return Found(
            "case_law",
            "case",
            offset + start,
            offset + end,
            text,
            cite.corrected_citation(),
            format_ok=not problems,
            note=note,
        )
    if kind == "ShortCaseCitation":
        return Found(
            "case_law", "short_case", offset + start, offset + end, window[start:end],
            cite.corrected_citation(), format_ok=True, note="short form of a known reporter",
        )  # fmt: skip
    if kind in {"IdCitation", "SupraCitation"}:
        short = "id" if kind == "IdCitation" else "supra"
        return Found(
            "case_law", short, offset + start, offset + end, window[start:end],
            window[start:end].strip().lower(), format_ok=True, note=f"{short} reference",
        )  # fmt: skip
    return None


# --- regulations ---------------------------------------------------------------------------------

_SECTION = r"(?:\s*§§?\s*|\s+(?:sec(?:tion)?s?\.?\s+)?)"
_REGULATORY: list[tuple[str, re.Pattern[str]]] = [
    ("usc", re.compile(
        rf"\b(\d{{1,2}})\s+U\.?\s?S\.?\s?C\.?(?:\s+A\.?)?{_SECTION}"
        r"(\d+[a-z]?(?:-\d+)?(?:\([a-z0-9]+\))*)"
    )),
    ("cfr", re.compile(
        rf"\b(\d{{1,2}})\s+C\.?\s?F\.?\s?R\.?(?:{_SECTION}|\s+(?:Part|pt\.)\s+)"
        r"(\d+(?:\.\d+)?(?:\([a-z0-9]+\))*)"
    )),
    ("federal_register", re.compile(r"\b(\d{1,3})\s+(?:Fed\.\s?Reg\.|FR)\s+(\d{1,6})\b")),
    ("public_law", re.compile(
        r"\b(?:Pub(?:lic)?\.?\s?L(?:aw|\.)?)(?:\s+No\.)?\s+(\d{1,3})[-–](\d{1,4})\b"
    )),
    ("eu_act", re.compile(
        r"\b(Regulation|Directive|Decision)\s+(?:\((EU|EC|EEC|Euratom)\)\s+)?(?:No\.?\s+)?"
        r"(\d{1,4})/(\d{1,4})(?:/(EU|EC|EEC|Euratom))?\b"
    )),
]  # fmt: skip


_REGULATORY_GATES = {
    "usc": _has("U.S.C", "USC", "U. S. C"),
    "cfr": _has("C.F.R", "CFR", "C. F. R"),
    "federal_register": _has("Fed. Reg", "Fed.Reg", " FR "),
    "public_law": _has("pub. l", "pub.l", "public law", "pub l", fold=True),
    "eu_act": _has("Regulation", "Directive", "Decision"),
}


def extract_regulatory(text: str, *, limited: _Limited | None = None) -> list[Found]:
    """U.S.C., C.F.R., Federal Register, Public Law, and EU regulations and directives."""
    found = []
    for kind, pattern in _REGULATORY:
        for m in _scan(text, pattern, _REGULATORY_GATES[kind], limited):
            if kind == "eu_act" and not (m.group(2) or m.group(5)):
                continue  # "Decision 3/4" in prose is not an EU act: the series must be named
            normalized = _normalize_regulatory(kind, m)
            found.append(Found("regulatory", kind, m.start(), m.end(), m.group(), normalized))
    return found


def _normalize_regulatory(kind: str, m: re.Match[str]) -> str:
    if kind == "usc":
        return f"{m.group(1)} U.S.C. § {m.group(2)}"
    if kind == "cfr":
        return f"{m.group(1)} C.F.R. § {m.group(2)}"
    if kind == "federal_register":
        return f"{m.group(1)} Fed. Reg. {m.group(2)}"
    if kind == "public_law":
        return f"Pub. L. No. {m.group(1)}-{m.group(2)}"
    series = m.group(2) or m.group(5)
    return f"{m.group(1)} ({series}) {m.group(3)}/{m.group(4)}"
