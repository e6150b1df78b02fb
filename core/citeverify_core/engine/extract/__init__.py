"""Citation extraction: pure functions from an answer to what it cites.

One extractor per ``extract_patterns`` type. Each returns :class:`Found` items with a span into the
answer and a normalized value; checking them (context, lookups, format) happens elsewhere. The
academic identifiers are validated and normalized with idutils; case law is found by eyecite.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from citeverify_core.engine.extract.identifiers import extract_academic, extract_urls
from citeverify_core.engine.extract.legal import (
    MAX_CASE_LAW_CHARS,
    extract_case_law,
    extract_regulatory,
)
from citeverify_core.engine.extract.markers import CITATION_TYPES, citation_markers
from citeverify_core.engine.extract.numbers import NumberIndex
from citeverify_core.engine.extract.scan import (
    MAX_CITATIONS,
    MAX_MATCHES,
    Extracted,
    Found,
    _Classes,
    _Limited,
    _Taken,
)
from citeverify_core.engine.extract.statistics import MAX_NUMBER_CHARS, extract_statistics
from citeverify_core.policy.settings import CitationType
from citeverify_core.text import MARKER_RE

__all__ = [
    "CITATION_TYPES",
    "MAX_CASE_LAW_CHARS",
    "MAX_CITATIONS",
    "MAX_MATCHES",
    "MAX_NUMBER_CHARS",
    "Extracted",
    "Found",
    "NumberIndex",
    "citation_markers",
    "extract",
    "extract_academic",
    "extract_case_law",
    "extract_regulatory",
    "extract_statistics",
    "extract_urls",
    "find_markers",
]

# --- inline source markers -----------------------------------------------------------------------


_MARKER_LIST = re.compile(r"\s*(?:,|and)\s*")
_MARKER_RANGE = re.compile(r"\s*[–-]\s*")


def find_markers(text: str, *, limit: int | None = None) -> list[tuple[int, int, list[int]]]:
    """Inline source markers (``[1]``, ``[2, 3]``, ``[1-3]``, ``[Source 2]``, ``【3】``).

    Returns ``(start, end, numbers)`` with the 1-based source numbers as written; with ``limit``,
    at most that many markers.
    """
    markers: list[tuple[int, int, list[int]]] = []
    for m in MARKER_RE.finditer(text):
        if limit is not None and len(markers) >= limit:
            break
        raw = m.group(1) or m.group(2)
        if raw.isdigit():  # the common "[3]": no splitting
            markers.append((m.start(), m.end(), [int(raw)]))
            continue
        numbers: list[int] = []
        for part in _MARKER_LIST.split(raw):
            bounds = _MARKER_RANGE.split(part)
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


def extract(text: str, patterns: Iterable[CitationType], *, current_year: int) -> Extracted:
    """Extract every citation of the given types (``quote`` is handled with the context).

    At most ``MAX_CITATIONS``, the first in the text; ``truncated`` on the result names the types
    where a limit was reached.
    """
    wanted = set(patterns)
    found: list[Found] = []
    classes = _Classes(text) if wanted & {"case_law", "statistic"} else None
    limits = {t: _Limited() for t in ("academic", "url", "case_law", "regulatory", "statistic")}
    if "academic" in wanted:
        found.extend(extract_academic(text, limited=limits["academic"]))
    if "url" in wanted:
        # Identifier links (doi.org, PubMed, arXiv) are academic citations, not plain URLs; they
        # are skipped here even when academic extraction is off, so one link is one citation.
        taken = (
            [(f.start, f.end) for f in extract_academic(text, limited=limits["academic"])]
            if "academic" not in wanted
            else [(f.start, f.end) for f in found]
        )
        found.extend(extract_urls(text, taken=taken, limited=limits["url"]))
    statutes = (
        extract_regulatory(text, limited=limits["regulatory"])
        if wanted & {"case_law", "regulatory"}
        else []
    )
    if "case_law" in wanted:
        spans = [(f.start, f.end) for f in statutes]
        found.extend(
            extract_case_law(
                text,
                current_year=current_year,
                taken=spans,
                limited=limits["case_law"],
                classes=classes,
            )
        )
    if "regulatory" in wanted:
        found.extend(statutes)
    if "statistic" in wanted:
        statistics = extract_statistics(text, limited=limits["statistic"], classes=classes)
        if found:
            claimed = _Taken((f.start, f.end) for f in found)
            statistics = [f for f in statistics if not claimed.overlaps(f.start, f.end)]
        found.extend(statistics)
    found.sort(key=lambda f: (f.start, f.end))
    truncated = {t for t, limit in limits.items() if limit.hit and t in wanted}
    if len(found) > MAX_CITATIONS:
        truncated |= {f.type for f in found[MAX_CITATIONS:]}
        del found[MAX_CITATIONS:]
    return Extracted(found, truncated)
