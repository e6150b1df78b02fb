"""Citation extraction (seed 000, step 4): pure functions from an answer to what it cites.

One extractor per ``extract_patterns`` type. Each returns :class:`Found` items with a span into the
answer and a normalized value; checking them (context, lookups, format) happens elsewhere. The
academic identifiers are validated and normalized with idutils; case law is found by eyecite.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

import idutils

from citeverify._policy import CitationType
from citeverify._text import MARKER_RE

__all__ = ["Found", "extract", "find_markers", "numbers_in", "statistic_values"]


@dataclass(frozen=True, slots=True)
class Found:
    """One citation found in an answer.

    Attributes:
        type: The ``extract_patterns`` type.
        kind: Finer kind: doi, pmid, pmcid, arxiv, url, case, short_case, id, supra, usc, cfr,
            federal_register, public_law, eu_act, percent, currency, amount, p_value,
            sample_size, ratio.
        start: Start of the citation in the answer.
        end: End (exclusive).
        text: The citation as written.
        normalized: Canonical form (lower-case DOI, digits of a PMID, ``12%`` ...).
        values: For statistics, the normalized numbers the context must contain.
        format_ok: For case law, whether the format check passed (None elsewhere).
        note: Why the format check passed or failed.
    """

    type: CitationType
    kind: str
    start: int
    end: int
    text: str
    normalized: str
    values: tuple[str, ...] = ()
    format_ok: bool | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


# --- helpers -------------------------------------------------------------------------------------

_TRAILING = ".,;:!?'\"”’»…"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim(text: str, start: int, end: int) -> int:
    """Trim trailing punctuation and unbalanced closing brackets; return the new end."""
    while end > start:
        ch = text[end - 1]
        if ch in _TRAILING:
            end -= 1
        elif ch in _PAIRS:
            piece = text[start:end]
            if piece.count(ch) > piece.count(_PAIRS[ch]):
                end -= 1
            else:
                break
        else:
            break
    return end


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e in spans)


# --- academic: DOIs, PubMed IDs, PMCIDs, arXiv IDs -----------------------------------------------

_DOI = re.compile(
    r"(?:\bdoi:\s*|\bhttps?://(?:dx\.)?doi\.org/|(?<![\w/.]))(10\.\d{4,9}/[^\s\"<>“”‘’]+)",
    re.IGNORECASE,
)
_PMID = re.compile(
    r"\bPMID:?\s*(\d{1,9})\b"
    r"|\bhttps?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/(\d{1,9})\b/?",
    re.IGNORECASE,
)
_PMCID = re.compile(
    r"(?:\bhttps?://(?:www\.)?ncbi\.nlm\.nih\.gov/pmc/articles/)?\bPMC\d{4,9}\b/?", re.IGNORECASE
)
_ARXIV = re.compile(
    r"(?:\barXiv:\s*|\bhttps?://(?:www\.)?arxiv\.org/(?:abs|pdf)/)"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z.-]*/\d{7}(?:v\d+)?)(?:\.pdf)?",
    re.IGNORECASE,
)


def extract_academic(text: str) -> list[Found]:
    """DOIs (bare, ``doi:``, doi.org links), PubMed IDs, PMCIDs and arXiv IDs."""
    found: list[Found] = []
    if "10." in text:
        for m in _DOI.finditer(text):
            end = _trim(text, m.start(1), m.end(1))
            doi = text[m.start(1) : end]
            if not idutils.is_doi(doi):
                continue
            normalized = idutils.normalize_doi(doi).lower()
            found.append(
                Found("academic", "doi", m.start(), end, text[m.start() : end], normalized)
            )
    lowered = text.lower()
    if "pmid" in lowered or "pubmed" in lowered:
        for m in _PMID.finditer(text):
            pmid = m.group(1) or m.group(2)
            if idutils.is_pmid(pmid):
                end = _trim(text, m.start(), m.end())
                found.append(Found("academic", "pmid", m.start(), end, text[m.start() : end], pmid))
    if "pmc" in lowered:
        for m in _PMCID.finditer(text):
            end = _trim(text, m.start(), m.end())
            pmc = re.search(r"PMC\d+", m.group(), re.IGNORECASE)
            assert pmc is not None
            pmcid = pmc.group().upper()
            if idutils.is_pmcid(pmcid):
                found.append(
                    Found("academic", "pmcid", m.start(), end, text[m.start() : end], pmcid)
                )
    if "arxiv" in lowered:
        for m in _ARXIV.finditer(text):
            ident = m.group(1)
            if idutils.is_arxiv(f"arXiv:{ident}"):
                normalized = idutils.normalize_arxiv(f"arXiv:{ident}")
                found.append(Found("academic", "arxiv", m.start(), m.end(), m.group(), normalized))
    return found


# --- URLs ----------------------------------------------------------------------------------------

_URL = re.compile(r"\bhttps?://[^\s<>\"'`“”‘’{}|\\^]+", re.IGNORECASE)


def extract_urls(text: str, *, taken: list[tuple[int, int]] = ()) -> list[Found]:  # type: ignore[assignment]
    """http(s) URLs, trailing punctuation and unbalanced brackets trimmed.

    URLs inside ``taken`` spans (already found as DOIs, PubMed or arXiv links) are skipped.
    """
    if "://" not in text:
        return []
    found = []
    for m in _URL.finditer(text):
        end = _trim(text, m.start(), m.end())
        if end - m.start() <= len("https://") or _overlaps(taken, m.start(), end):
            continue
        url = text[m.start() : end]
        scheme, rest = url.split("://", 1)
        host, sep, path = rest.partition("/")
        normalized = f"{scheme.lower()}://{host.lower()}{sep}{path}"
        found.append(Found("url", "url", m.start(), end, url, normalized))
    return found


# --- case law ------------------------------------------------------------------------------------

# Cheap pre-filter: eyecite is thorough but runs at about 1 MB/s, so it only sees windows around
# something that looks like "volume reporter page", "Id.", "supra" or "v.".
_CASE_HINT = re.compile(r"\b\d{1,4}\s+[A-Z][A-Za-z.'&]{0,12}|\b(?:Id|Ibid)\.|\bsupra\b|\sv\.\s")
# A case name and a "volume reporter page" that eyecite may not know (fabricated reporters).
_CASE_LIKE = re.compile(
    r"(?P<name>(?:[A-Z][\w.'&-]*\s+){1,5}v\.\s+(?:[A-Z][\w.'&-]*,?\s+){0,5}?[A-Z][\w.'&-]*),\s+"
    r"(?P<volume>\d{1,4})\s+(?P<reporter>[A-Z][A-Za-z.']*(?:\s+(?:\d[a-z]{1,2}|[A-Z][A-Za-z.']*)){0,4})"
    r"\s+(?P<page>\d{1,5})"
)
_WINDOW = 300


def _windows(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for m in _CASE_HINT.finditer(text):
        start = max(0, m.start() - _WINDOW)
        end = min(len(text), m.end() + _WINDOW)
        # Widen to whitespace so that no token is cut.
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        while end < len(text) and not text[end].isspace():
            end += 1
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


@cache
def _eyecite() -> Callable[[str], list[Any]]:
    # Imported on first use: eyecite builds its reporter tokenizer at import (about 1 s).
    logging.getLogger("eyecite").setLevel(logging.ERROR)  # it logs "Unknown overlap case"
    from eyecite import get_citations  # noqa: PLC0415

    return get_citations


def extract_case_law(text: str, *, current_year: int) -> list[Found]:
    """Case citations via eyecite (full, short, id., supra), with a format check.

    Full citations pass when eyecite knows the reporter, volume and page are numbers and the
    year, if given, is not in the future. A "Name v. Name, volume Reporter page" that eyecite does
    not recognize is reported with a failed format check (unknown reporter).
    """
    found: list[Found] = []
    get_citations = _eyecite() if _CASE_HINT.search(text) else None
    if get_citations is None:
        return found
    for w_start, w_end in _windows(text):
        window = text[w_start:w_end]
        for cite in get_citations(window):
            f = _from_eyecite(cite, window, w_start, current_year)
            if f is not None and not any(g.start == f.start for g in found):
                found.append(f)
        taken = [(f.start, f.end) for f in found]
        for m in _CASE_LIKE.finditer(window):
            start, end = w_start + m.start("volume"), w_start + m.end("page")
            if _overlaps(taken, start, end):
                continue
            reporter = m.group("reporter")
            found.append(
                Found(
                    "case_law",
                    "case",
                    w_start + m.start(),
                    end,
                    m.group(),
                    f"{m.group('volume')} {reporter} {m.group('page')}",
                    format_ok=False,
                    note=f"unknown reporter {reporter!r}",
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
            extra={"year": year},
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


def extract_regulatory(text: str) -> list[Found]:
    """U.S.C., C.F.R., Federal Register, Public Law, and EU regulations and directives."""
    found = []
    for kind, pattern in _REGULATORY:
        for m in pattern.finditer(text):
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


# --- statistics ----------------------------------------------------------------------------------

_NUM = r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_SCALE = r"(?:\s?(million|billion|trillion|thousand|mn|bn|m|k)\b)?"
_CURRENCY_SYMBOL = r"(US\$|\$|€|£|¥|USD\s?|EUR\s?|GBP\s?)"
_UNITS = (
    r"mg|g|kg|µg|μg|mcg|ng|ml|mL|l|L|dl|dL|mmol|mol|km|m|cm|mm|nm|mi|miles|ft|feet|kWh|MWh|"
    r"GWh|TWh|W|kW|MW|GW|Hz|kHz|MHz|GHz|°C|°F|mmHg|bpm|kcal|cal|ha|acres|tonnes|tons|"
    r"patients|participants|subjects|respondents|people|persons|adults|children|deaths|cases|"
    r"households|students|employees"
)
_STATISTICS: list[tuple[str, re.Pattern[str]]] = [
    ("percent", re.compile(
        _NUM + r"\s?(%|percent\b|per\s?cent\b|pct\b|percentage points?\b)", re.IGNORECASE
    )),
    ("currency", re.compile(_CURRENCY_SYMBOL + r"\s?(\d[\d,]*(?:\.\d+)?)" + _SCALE, re.IGNORECASE)),
    ("currency", re.compile(
        _NUM + _SCALE + r"\s?(dollars|euros|pounds|yen|USD|EUR|GBP)\b", re.IGNORECASE
    )),
    ("p_value", re.compile(r"(?<![\w.])[pP]\s?(?:<|>|=|≤|≥|<=|>=)\s?(0?\.\d+|[01](?:\.\d+)?)")),
    ("sample_size", re.compile(r"(?<![\w.])[nN]\s?=\s?(\d{1,3}(?:,\d{3})+|\d+)\b")),
    ("ratio", re.compile(
        r"\b(?:odds ratio|hazard ratio|risk ratio|relative risk|OR|HR|RR|aOR|aHR)"
        r"\s?(?:=|of|:|was|is)?\s?(\d+(?:\.\d+)?)"
    )),
    ("ratio", re.compile(r"(?<![\w.:])(\d{1,3})\s?:\s?(\d{1,3})(?![\w.:])(?=\s+(?:ratio|odds)\b)")),
    ("ratio", re.compile(r"\bratio of\s+(\d{1,3})\s?:\s?(\d{1,3})\b")),
    ("ratio", re.compile(
        r"(?<![\w.])(\d{1,3})\s+(?:in|out of)\s+(\d{1,4})\b(?!\s*(?:AM|PM|am|pm))"
    )),
    # After the ratios, so that "1 in 5 adults" is a ratio, not "5 adults".
    ("amount", re.compile(_NUM + r"\s?(" + _UNITS + r")(?![\w/])")),
]  # fmt: skip
_SCALES = {
    "thousand": 10**3, "k": 10**3, "million": 10**6, "mn": 10**6, "m": 10**6,
    "billion": 10**9, "bn": 10**9, "trillion": 10**12,
}  # fmt: skip


def _number(raw: str) -> Decimal | None:
    try:
        return Decimal(raw.replace(",", ""))
    except InvalidOperation:
        return None


def _canon(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def statistic_values(kind: str, m: re.Match[str]) -> tuple[str, ...]:
    """The normalized numbers a statistic's context must contain (any one of each group)."""
    groups = [g for g in m.groups() if g is not None]
    numbers = [
        n for n in (_number(g) for g in groups if re.fullmatch(r"[\d,.]+", g)) if n is not None
    ]
    if not numbers:
        return ()
    if kind == "currency":
        scale = next((g.lower() for g in groups if g.lower() in _SCALES), None)
        value = numbers[0]
        # "$3.5 million" is supported by "3.5 million" and by "3,500,000".
        return (
            (_canon(value),) if scale is None else (_canon(value), _canon(value * _SCALES[scale]))
        )
    return tuple(_canon(n) for n in numbers)


def extract_statistics(text: str) -> list[Found]:
    """Percentages, currency amounts, amounts with units, p-values, sample sizes, ratios."""
    if not any(ch.isdigit() for ch in text):
        return []
    found: list[Found] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _STATISTICS:
        for m in pattern.finditer(text):
            if _overlaps(taken, m.start(), m.end()):
                continue
            values = statistic_values(kind, m)
            if not values:
                continue
            normalized = values[0] + ("%" if kind == "percent" else "")
            if kind == "ratio" and len(values) == 2:
                normalized = f"{values[0]}:{values[1]}"
            found.append(
                Found("statistic", kind, m.start(), m.end(), m.group(), normalized, values=values)
            )
            taken.append((m.start(), m.end()))
    found.sort(key=lambda f: f.start)
    return found


_PERCENT_AFTER = re.compile(r"\s?(?:%|percent\b|per\s?cent\b|pct\b)", re.IGNORECASE)
_CONTEXT_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)" + _SCALE, re.IGNORECASE
)


def numbers_in(text: str) -> frozenset[str]:
    """Every number of a context document, normalized.

    "3.5 million" also gives "3500000"; a percentage also gives "12%", so that a percentage in
    the answer is supported only by a percentage ("9 percent" is not backed by "9 million").
    """
    out: set[str] = set()
    for m in _CONTEXT_NUMBER.finditer(text):
        value = _number(m.group(1))
        if value is None:
            continue
        out.add(_canon(value))
        if m.group(2):
            out.add(_canon(value * _SCALES[m.group(2).lower()]))
        if _PERCENT_AFTER.match(text, m.end()):
            out.add(_canon(value) + "%")
    return frozenset(out)


# --- inline source markers -----------------------------------------------------------------------


def find_markers(text: str) -> list[tuple[int, int, list[int]]]:
    """Inline source markers (``[1]``, ``[2, 3]``, ``[1-3]``, ``[Source 2]``, ``【3】``).

    Returns ``(start, end, numbers)`` with the 1-based source numbers as written.
    """
    markers = []
    for m in MARKER_RE.finditer(text):
        raw = m.group(1) or m.group(2)
        numbers: list[int] = []
        for part in re.split(r"\s*(?:,|and)\s*", raw):
            bounds = re.split(r"\s*[–-]\s*", part)
            if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
                lo, hi = int(bounds[0]), int(bounds[1])
                if lo <= hi and hi - lo < 50:
                    numbers.extend(range(lo, hi + 1))
            elif part.isdigit():
                numbers.append(int(part))
        if numbers:
            markers.append((m.start(), m.end(), numbers))
    return markers


# --- all together --------------------------------------------------------------------------------


def extract(text: str, patterns: Iterable[CitationType], *, current_year: int) -> list[Found]:
    """Extract every citation of the given types (``quote`` is handled with the context)."""
    wanted = set(patterns)
    found: list[Found] = []
    if "academic" in wanted:
        found.extend(extract_academic(text))
    if "url" in wanted:
        # Identifier links (doi.org, PubMed, arXiv) are academic citations, not plain URLs; they
        # are skipped here even when academic extraction is off, so one link is one citation.
        taken = (
            [(f.start, f.end) for f in extract_academic(text)]
            if "academic" not in wanted
            else [(f.start, f.end) for f in found]
        )
        found.extend(extract_urls(text, taken=taken))
    if "case_law" in wanted:
        found.extend(extract_case_law(text, current_year=current_year))
    if "regulatory" in wanted:
        found.extend(extract_regulatory(text))
    if "statistic" in wanted:
        taken = [(f.start, f.end) for f in found]
        found.extend(f for f in extract_statistics(text) if not _overlaps(taken, f.start, f.end))
    found.sort(key=lambda f: (f.start, f.end))
    return found
