"""Reference verification accuracy on real Crossref works rendered in many citation styles.

Issue 10. From ``../shared/datasets/crossref-multistyle-dev-1000.jsonl`` (1,000 real Crossref
works, each rendered by CSL in 8 styles; a development set, see its SOURCES.md) this builds a
local index of the works plus distractors of our own making:

- same-title traps: the title of a work with other authors, another year and another journal;
- near titles: a work's title with its last words replaced (another work, same topic);
- generic titles ("Editorial", "Introduction", ...) shared by many records;
- works left out of the index (one in ten): their references must never be ``verified``; half
  of them have a same-title trap in the index.

Then, per style, it measures the share of correct references returned ``verified``, the precision
of matches (the right DOI among ``verified`` and ``verified-with-error``), and for each injected
error (swapped first two authors, dropped author, year +-1, title typo, wrong journal, a
fabricated title with real authors) the share caught with the right status and field label.

Styles: the dataset's APA, Chicago author-date, Harvard, MLA, IEEE as deposited (``[1]R. W.``),
IEEE with a space (``[1] R. W.``), Vancouver (rendered here from the metadata: the set has none),
and the titleless ACS, AIP and Elsevier (no title in the string: matched on first author, year,
venue, volume and first page through the index's year and volume query).

Run: ``python -m uv run python bench/bench_reference_accuracy.py`` (``--works 300`` for a
quicker run). It never reads ``../shared/datasets/measure/`` (held out by the maintainers).
``--half tune`` (the works on even lines) and ``--half holdout`` (odd lines) split the dev set:
the parser and the comparison are tuned on the first half's false flags only, and the second
half, whose strings nobody reads while tuning, estimates the rates on unseen works.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeverify_core.references import (
    LocalIndex,
    ParsedReference,
    Record,
    ReferenceVerifier,
    parse_reference,
    record_from_work,
)
from citeverify_core.references.folding import fold

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEV_SET = SHARED / "datasets" / "crossref-multistyle-dev-1000.jsonl"

#: Column name -> key of ``strings`` in the dataset (None: rendered here).
STYLES: dict[str, str | None] = {
    "APA": "apa",
    "Chicago": "chicago-author-date",
    "Harvard": "harvard3",
    "MLA": "modern-language-association",
    "IEEE [1]R.": "ieee",
    "IEEE [1] R.": None,
    "Vancouver": None,
    "ACS": "american-chemical-society",
    "AIP": "american-institute-of-physics",
    "Elsevier": "elsevier-without-titles",
}
TITLED = ("APA", "Chicago", "Harvard", "MLA", "IEEE [1]R.", "IEEE [1] R.", "Vancouver")
TITLELESS = ("ACS", "AIP", "Elsevier")
ERRORS = ("swapped authors", "dropped author", "year +-1", "title typo", "wrong journal",
          "fabricated title")  # fmt: skip
#: The field whose label must say what is wrong, per injected error.
ERROR_FIELD = {
    "swapped authors": "authors",
    "dropped author": "authors",
    "year +-1": "year",
    "title typo": "title",
    "wrong journal": "venue",
}
#: Issue 10's targets.
TARGETS = {
    "verified": 0.95,
    "titleless": 0.90,
    "precision": 0.995,
    "swapped authors": 0.95,
    "dropped author": 0.90,
    "year +-1": 0.97,
    "title typo": 0.97,
    "wrong journal": 0.97,
    "fabricated title": 0.98,
}
GENERIC_TITLES = ("Editorial", "Introduction", "Preface", "Book reviews", "Erratum",
                  "Letter to the editor", "Foreword", "Index")  # fmt: skip
_ERROR_LABELS = {"CONTRADICTION", "MATCH_WITH_TYPO", "CONTAINS"}


@dataclass(frozen=True)
class Case:
    """One reference string and what a correct verifier says about it."""

    style: str
    kind: str  # "correct", "absent", "generic" or one of ERRORS
    text: str
    doi: str | None  # the cited work (None: not in the index)


@dataclass
class Report:
    """Outcomes per style and kind."""

    outcomes: dict[tuple[str, str], list[bool]] = field(default_factory=lambda: defaultdict(list))
    matched: int = 0  # verified or verified-with-error
    matched_right: int = 0
    #: The same, per style (the titleless styles' precision is reported on its own).
    style_matched: Counter[str] = field(default_factory=Counter)
    style_right: Counter[str] = field(default_factory=Counter)
    absent_verified: int = 0
    exceptions: int = 0
    flags: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    #: Titleless styles: strings whose first author, year, venue, volume and first page are
    #: all read (what matching them needs; the index does not match on them yet).
    titleless_parsed: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    refs_per_s: float = 0.0

    def rate(self, kind: str, styles: Iterable[str]) -> float | None:
        hits = [ok for s in styles for ok in self.outcomes.get((s, kind), [])]
        return sum(hits) / len(hits) if hits else None

    def count(self, kind: str, styles: Iterable[str]) -> int:
        return sum(len(self.outcomes.get((s, kind), [])) for s in styles)

    @property
    def precision(self) -> float:
        return self.matched_right / self.matched if self.matched else 1.0

    def style_precision(self, styles: Iterable[str]) -> tuple[int, int]:
        """Right DOIs and matches (verified + verified-with-error) over ``styles``."""
        styles = list(styles)
        return (
            sum(self.style_right[s] for s in styles),
            sum(self.style_matched[s] for s in styles),
        )


# --- the data -------------------------------------------------------------------------------------


def load_rows(path: Path = DEV_SET, limit: int | None = None) -> list[dict[str, Any]]:
    """The dev set's rows (``work`` and ``strings``)."""
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return rows[:limit] if limit else rows


def split(rows: Sequence[dict[str, Any]], half: str | None) -> list[dict[str, Any]]:
    """One half of the dev set: ``tune`` (even lines), ``holdout`` (odd lines), None (all).

    The parser and the comparison are tuned on the ``tune`` half only; the ``holdout`` half
    estimates how they do on works nobody looked at (the maintainers' held-out set stays
    unread). Each half gets its own index, absent works and distractors.
    """
    if half is None:
        return list(rows)
    parity = 0 if half == "tune" else 1
    return [row for i, row in enumerate(rows) if i % 2 == parity]


def _record(work: dict[str, Any]) -> Record:
    record = record_from_work(work)
    assert record is not None, work.get("DOI")
    return record


def build_index(rows: Sequence[dict[str, Any]], seed: int = 3) -> tuple[LocalIndex, set[int]]:
    """The index of the present works and the distractors; returns it and the absent rows."""
    rng = random.Random(seed)
    absent = {i for i in range(len(rows)) if i % 10 == 9}
    records = [_record(rows[i]["work"]) for i in range(len(rows)) if i not in absent]
    works = [_record(r["work"]) for r in rows]
    n = len(works)
    for i, w in enumerate(works):
        other = works[(i * 7 + 13) % n]
        third = works[(i * 11 + 5) % n]
        if (i not in absent and i % 4 == 0) or (i in absent and i % 20 == 9):
            # A same-title trap: another work with this title, other authors, year and venue.
            records.append(
                Record(
                    source="LOCAL",
                    title=w.title,
                    authors=other.authors or third.authors,
                    year=(w.year or 2000) + rng.choice((-6, -4, -3, 3, 5, 8)),
                    venue=third.venue if fold(third.venue or "") != fold(w.venue or "") else None,
                    doi=f"10.55555/trap.{i}",
                    volume=str(rng.randint(1, 90)),
                    pages=f"{rng.randint(1, 400)}-{rng.randint(401, 900)}",
                )
            )
        if i not in absent and i % 5 == 1 and w.title and other.title:
            # A near title: the same opening, other closing words (another work on the topic).
            words_ = w.title.split()
            keep = max(2, len(words_) * 2 // 3)
            tail = other.title.split()[-max(2, len(words_) - keep) :]
            records.append(
                Record(
                    source="LOCAL",
                    title=" ".join(words_[:keep] + tail),
                    authors=third.authors,
                    year=third.year,
                    venue=third.venue,
                    doi=f"10.55555/near.{i}",
                )
            )
    for g, title in enumerate(GENERIC_TITLES):
        for k in range(6):
            w = works[(g * 31 + k * 17) % n]
            records.append(
                Record(
                    source="LOCAL",
                    title=title,
                    authors=w.authors[:1],
                    year=w.year,
                    venue=w.venue,
                    doi=f"10.55555/generic.{g}.{k}",
                )
            )
    index = LocalIndex(":memory:")
    index.add(records)
    return index, absent


# --- rendering and injecting errors -------------------------------------------------------------


def _initials(given: str) -> str:
    return "".join(p[0] for p in re.split(r"[\s.\-]+", given) if p and p[0].isalpha())


def vancouver(work: dict[str, Any]) -> str:
    """A Vancouver (NLM) reference from Crossref metadata (the dataset has no Vancouver strings)."""
    authors = [
        f"{a.get('family', '')} {_initials(a.get('given', ''))}".strip()
        for a in work.get("author") or []
        if a.get("family")
    ]
    names = ", ".join(authors[:6]) + (", et al" if len(authors) > 6 else "")
    title = (work.get("title") or [""])[0].rstrip(".")
    title += "" if title.endswith(("?", "!")) else "."
    container = (work.get("container-title") or [""])[0]
    year = work["issued"]["date-parts"][0][0]
    tail = f"{year}"
    if work.get("volume"):
        tail += f";{work['volume']}"
        if work.get("issue"):
            tail += f"({work['issue']})"
    if work.get("page"):
        first, _, last = work["page"].partition("-")
        if last.isdigit() and first.isdigit() and len(last) == len(first):
            common = 0
            while common < len(last) - 1 and first[common] == last[common]:
                common += 1
            last = last[common:]  # NLM elides page ranges: 1669-74
        tail += f":{first}" + (f"-{last}" if last else "")
    parts = [f"{names}." if names else "", title, f"{container}." if container else "", f"{tail}."]
    return " ".join(p for p in parts if p)


def _find(text: str, part: str, start: int = 0) -> int:
    """Case-insensitive find (the styles change the title's case); -1 when missing."""
    if not part or len(text.lower()) != len(text) or len(part.lower()) != len(part):
        return -1
    return text.lower().find(part.lower(), start)


def _title_span(text: str, title: str | None) -> tuple[int, int] | None:
    if not title:
        return None
    bare = title.rstrip(".")
    at = _find(text, bare)
    return (at, at + len(bare)) if at >= 0 else None


def _author_region(style: str, text: str, year: int | None) -> tuple[int, int] | None:
    """Where the author list is in a rendered string, by the style's layout."""
    start = 0
    if style.startswith("IEEE"):
        start = text.index("]") + 1 if text.startswith("[") else 0
        end = text.find(", “")
    elif style == "APA":
        end = text.find(f" ({year}")
    elif style == "Harvard":
        end = text.find(f", {year}.")
    elif style == "Chicago":
        end = text.find(f" {year}.")
    elif style == "MLA":
        end = text.find(" “")
    else:
        return None
    if end <= start:
        return None
    while start < end and text[start] == " ":
        start += 1
    return start, end


def _split_authors(style: str, region: str) -> list[str]:
    if style == "APA":
        return re.split(r"(?<=\.),\s+(?:&\s+)?", region)
    if style == "Harvard":
        return re.split(r"(?<=\.),\s+|\s+&\s+", region)
    if style in {"Chicago", "MLA"}:
        body = region[:-1] if region.endswith(".") and not re.search(r"\b\w\.$", region) else region
        first = body.split(", ", 2)
        if len(first) < 3:
            return [body] if len(first) <= 2 else []
        rest = re.sub(r"^and\s+", "", first[2])
        return [f"{first[0]}, {first[1]}", *re.split(r",\s+(?:and\s+)?", rest)]
    return re.split(r",\s+and\s+|\s+and\s+|,\s+", region)  # IEEE


def _join_authors(style: str, units: list[str]) -> str:
    if len(units) == 1:
        out = units[0]
    elif style == "APA":
        out = ", ".join(units[:-1]) + ", & " + units[-1]
    elif style == "Harvard":
        out = ", ".join(units[:-1]) + " & " + units[-1]
    elif style in {"Chicago", "MLA"}:
        out = ", ".join(units[:-1]) + ", and " + units[-1]
    else:
        out = (", ".join(units[:-1]) + ("," if len(units) > 2 else "")) + " and " + units[-1]
    if style in {"Chicago", "MLA"} and not out.endswith("."):
        out += "."
    return out


def inject(
    style: str, text: str, work: dict[str, Any], kind: str, rng: random.Random, other: Any
) -> str | None:
    """``text`` with one error of ``kind``, or None when the string does not allow it."""
    title = (work.get("title") or [None])[0]
    authors = [a for a in work.get("author") or [] if a.get("family")]
    year = work["issued"]["date-parts"][0][0]
    span = _title_span(text, title)
    if span is None:
        return None
    t0, t1 = span
    if kind in {"swapped authors", "dropped author"}:
        families = [a["family"] for a in authors]
        if len(families) < 2 or len({fold(f) for f in families[:2]}) < 2:
            return None
        if kind == "dropped author" and len(families) > 5:
            return None  # past the styles' "et al." thresholds
        region = _author_region(style, text, year)
        if region is None:
            return None
        a0, a1 = region
        head = text[a0:a1]
        if kind == "swapped authors":
            f1, f2 = families[0], families[1]
            p1 = re.search(rf"\b{re.escape(f1)}\b", head)
            p2 = re.search(rf"\b{re.escape(f2)}\b", head[p1.end() :]) if p1 else None
            if p1 is None or p2 is None:
                return None
            s2 = p1.end() + p2.start()
            swapped = head[: p1.start()] + f2 + head[p1.end() : s2] + f1 + head[s2 + len(f2) :]
            return text[:a0] + swapped + text[a1:]
        units = _split_authors(style, head)
        if len(units) != len(families) or any(not u.strip() for u in units):
            return None
        drop = len(units) - 1 if len(units) == 2 or rng.random() < 0.5 else 1
        return text[:a0] + _join_authors(style, units[:drop] + units[drop + 1 :]) + text[a1:]
    if kind == "year +-1":
        new = str(year + rng.choice((-1, 1)))
        pattern = rf"(?<!\d){year}(?!\d)"
        head, tail = re.subn(pattern, new, text[:t0]), re.subn(pattern, new, text[t1:])
        if head[1] + tail[1] == 0:
            return None
        return head[0] + text[t0:t1] + tail[0]
    if kind == "title typo":
        words = list(re.finditer(r"[^\W\d_]{6,}", text[t0:t1]))
        if not words:
            return None
        m = rng.choice(words)
        w = m.group()
        k = rng.randrange(1, len(w) - 2)
        typo = w[:k] + w[k + 1] + w[k] + w[k + 2 :]
        if typo == w:
            typo = w[:k] + w[k + 2 :] if len(w) > 6 else w[:k] + "x" + w[k + 1 :]
        return text[: t0 + m.start()] + typo + text[t0 + m.end() :]
    if kind == "wrong journal":
        container = (work.get("container-title") or [None])[0]
        replacement = (other.get("container-title") or [None])[0]
        if not container or not replacement:
            return None
        a, b = fold(container), fold(replacement)
        if a == b or a in b or b in a:
            return None
        at = _find(text, container, t1)
        if at < 0:
            return None
        return text[:at] + replacement + text[at + len(container) :]
    if kind == "fabricated title":
        fake = (other.get("title") or [None])[0]
        if not fake:
            return None
        return text[:t0] + fake.rstrip(".") + text[t1:]
    msg = f"unknown error kind {kind!r}"
    raise ValueError(msg)


def style_text(style: str, row: dict[str, Any]) -> str | None:
    """The reference string of ``row`` in ``style``."""
    key = STYLES[style]
    if key is not None:
        return row["strings"].get(key) or None
    if style == "Vancouver":
        return vancouver(row["work"])
    ieee = row["strings"].get("ieee")
    return re.sub(r"^\[(\d+)\](?=\S)", r"[\1] ", ieee) if ieee else None


def cases(rows: Sequence[dict[str, Any]], absent: set[int], seed: int = 5) -> Iterator[Case]:
    """Every case of the benchmark, deterministic."""
    rng = random.Random(seed)
    absent_rows = sorted(absent)
    n = len(rows)
    for i, row in enumerate(rows):
        doi = row["work"]["DOI"].lower()
        for style in STYLES:
            text = style_text(style, row)
            if text is None:
                continue
            if i in absent:
                yield Case(style, "absent", text, None)
                continue
            yield Case(style, "correct", text, doi)
            if style in TITLELESS:
                continue
            for kind in ERRORS:
                if kind == "fabricated title":
                    other = rows[absent_rows[(i * 3 + 1) % len(absent_rows)]]["work"]
                else:
                    other = rows[(i * 7 + 3) % n]["work"]
                if style == "Vancouver":
                    bad = _inject_vancouver(row["work"], kind, rng, other)
                else:
                    bad = inject(style, text, row["work"], kind, rng, other)
                if bad is not None and bad != text:
                    yield Case(style, kind, bad, doi if kind != "fabricated title" else None)
    # Generic titles cited with authors, year and journal that no record of that title has.
    for g, title in enumerate(GENERIC_TITLES):
        w = rows[(g * 53 + 29) % n]["work"]
        first = (w.get("author") or [{"family": "Doe", "given": "J."}])[0]
        yield Case(
            "APA",
            "generic",
            f"{first.get('family') or first.get('name') or 'Doe'}, {first.get('given', '')} (1937). {title}. Journal of Nothing, 3(2), 1–2.",
            None,
        )


def _inject_vancouver(
    work: dict[str, Any], kind: str, rng: random.Random, other: dict[str, Any]
) -> str | None:
    w = json.loads(json.dumps(work))
    authors = [a for a in w.get("author") or [] if a.get("family")]
    if kind == "swapped authors":
        if len(authors) < 2 or fold(authors[0]["family"]) == fold(authors[1]["family"]):
            return None
        authors[0]["family"], authors[1]["family"] = authors[1]["family"], authors[0]["family"]
    elif kind == "dropped author":
        if not 2 <= len(authors) <= 6:
            return None
        del authors[len(authors) - 1 if len(authors) == 2 or rng.random() < 0.5 else 1]
    elif kind == "year +-1":
        w["issued"] = {"date-parts": [[w["issued"]["date-parts"][0][0] + rng.choice((-1, 1))]]}
    elif kind in {"title typo", "wrong journal", "fabricated title"}:
        return inject("Vancouver", vancouver(work), work, kind, rng, other)
    w["author"] = authors
    return vancouver(w)


# --- measuring ------------------------------------------------------------------------------------


def best_doi(result: Any) -> str | None:
    """The DOI of the best candidate in a result's verification graph."""
    graph = result.verificationGraph or {}
    nodes = graph.get("nodes", [])
    best = next((n.get("bestCandidateId") for n in nodes if n.get("type") == "RESULT"), None)
    for node in nodes:
        if node.get("id") == best and best is not None:
            doi = node.get("candidateFields", {}).get("doi")
            return doi.lower() if isinstance(doi, str) else None
    return None


def measure(rows: Sequence[dict[str, Any]], *, verbose: bool = False) -> Report:
    """Build the index, verify every case, and count."""
    index, absent = build_index(rows)
    verifier = ReferenceVerifier(index)
    all_cases = list(cases(rows, absent))
    report = Report()
    start = time.perf_counter()
    results = verifier.verify_references([c.text for c in all_cases])
    report.refs_per_s = len(all_cases) / (time.perf_counter() - start)
    for case, result in zip(all_cases, results, strict=True):
        if result.error:
            report.exceptions += 1
        got = best_doi(result)
        matched = result.status in {"verified", "verified-with-error"}
        if matched and case.kind != "fabricated title":
            right = bool(case.doi and got == case.doi)
            report.matched += 1
            report.matched_right += right
            report.style_matched[case.style] += 1
            report.style_right[case.style] += right
        if case.kind == "correct":
            ok = result.status == "verified" and got == case.doi
            if not ok:
                flags = [f"{k} {v}" for k, v in result.field_results.items() if v != "MATCH"]
                report.flags[case.style][f"{result.status}: " + ", ".join(flags)] += 1
                if verbose:
                    print(f"  [{case.style}] {result.status} {flags}\n    {case.text}")
        elif case.kind in {"absent", "generic"}:
            ok = result.status != "verified"
            report.absent_verified += not ok
        elif case.kind == "fabricated title":
            ok = result.status in {"unverified", "needs-human"}
        else:
            label = result.field_results.get(ERROR_FIELD[case.kind])
            ok = (
                result.status == "verified-with-error"
                and got == case.doi
                and label in _ERROR_LABELS
            )
        if verbose and not ok and case.kind not in {"correct"}:
            print(
                f"  [{case.style}/{case.kind}] {result.status} {result.field_results}\n    {case.text}"
            )
        report.outcomes[(case.style, case.kind)].append(ok)
    for row in rows:
        for style in TITLELESS:
            text = style_text(style, row)
            if text and len(text) <= 1200:
                ref = parse_reference(text)
                report.titleless_parsed[style].append(_titleless_ok(ref, row))
    index.close()
    return report


def _titleless_ok(ref: ParsedReference, row: dict[str, Any]) -> bool:
    work = row["work"]
    families = [fold(a.get("family", "")) for a in work.get("author") or []]
    first = fold(ref.authors[0].family) if ref.authors else ""
    page = (work.get("page") or "").split("-")[0] or None
    return (
        first == (families[0] if families else "")
        and ref.year == work["issued"]["date-parts"][0][0]
        and fold(ref.venue or "") == fold((work.get("container-title") or [""])[0])
        and (ref.volume or None) == (work.get("volume") or None)
        and ref.first_page == page
    )


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def table(report: Report) -> str:
    """The accuracy table per style and per injected error (Markdown)."""
    kinds = ("correct", *ERRORS)
    head = ["style", "verified (correct)", *ERRORS]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for style in STYLES:
        cells = [style] + [_pct(report.rate(k, [style])) for k in kinds]
        lines.append("| " + " | ".join(cells) + " |")
    titled = [_pct(report.rate(k, TITLED)) for k in kinds]
    lines.append("| **titled styles** | " + " | ".join(f"**{c}**" for c in titled) + " |")
    counts = [str(report.count(k, TITLED)) for k in kinds]
    lines.append("| cases (titled) | " + " | ".join(counts) + " |")
    lines.append(
        "| target | >= 95% each | " + " | ".join(f">= {TARGETS[k]:.0%}" for k in ERRORS) + " |"
    )
    return "\n".join(lines)


def misses(report: Report) -> list[str]:
    """The targets of issue 10 that are not met."""
    out = []
    titleless = report.rate("correct", TITLELESS)
    if titleless is not None and titleless < TARGETS["titleless"]:
        out.append(f"titleless: {titleless:.1%} matched < {TARGETS['titleless']:.0%}")
    for style in TITLED:
        rate = report.rate("correct", [style])
        if rate is not None and rate < TARGETS["verified"]:
            out.append(f"{style}: {rate:.1%} verified < {TARGETS['verified']:.0%}")
    for kind in ERRORS:
        rate = report.rate(kind, TITLED)
        if rate is not None and rate < TARGETS[kind]:
            out.append(f"{kind}: {rate:.1%} caught < {TARGETS[kind]:.0%}")
    if report.precision < TARGETS["precision"]:
        out.append(f"precision {report.precision:.2%} < {TARGETS['precision']:.1%}")
    if report.absent_verified:
        out.append(f"{report.absent_verified} absent works verified")
    if report.exceptions:
        out.append(f"{report.exceptions} references could not be read")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--works", type=int, help="only the first N works of the dev set")
    parser.add_argument(
        "--half",
        choices=("tune", "holdout"),
        help="only the works on even lines of the dev set (tune) or on odd lines (holdout)",
    )
    parser.add_argument("--verbose", action="store_true", help="print every miss")
    parser.add_argument("--flags", type=int, default=4, help="false flags shown per style")
    args = parser.parse_args(argv)
    if not DEV_SET.is_file():
        print(f"skipped: the dev set is not at {DEV_SET} (../shared is outside this repository)")
        return 0
    rows = split(load_rows(), args.half)
    if args.works:
        rows = rows[: args.works]
    report = measure(rows, verbose=args.verbose)
    n_cases = sum(len(v) for v in report.outcomes.values())
    which = {None: "", "tune": " (tune half)", "holdout": " (holdout half)"}[args.half]
    print(
        f"{len(rows)} works{which}, {n_cases:,} references, {report.refs_per_s:,.0f} references/s\n"
    )
    print(table(report))
    print(
        f"\nprecision (right DOI among verified + verified-with-error): "
        f"{report.matched_right}/{report.matched} = {report.precision:.2%} (target >= 99.5%)"
    )
    absent_n = report.count("absent", STYLES) + report.count("generic", STYLES)
    print(f"absent works and generic titles returned verified: {report.absent_verified}/{absent_n}")
    print(
        f"references that could not be read (over the seed's 1,200 characters): {report.exceptions}"
    )
    parsed = ", ".join(
        f"{style} {sum(v) / len(v):.1%}" for style, v in report.titleless_parsed.items() if v
    )
    print(f"titleless strings with first author, year, venue, volume and first page read: {parsed}")
    matched = ", ".join(f"{style} {_pct(report.rate('correct', [style]))}" for style in TITLELESS)
    print(
        f"titleless references matched to the right work (target >= 90%): {matched}; "
        f"all three {_pct(report.rate('correct', TITLELESS))}"
    )
    right, matched = report.style_precision(TITLELESS)
    absent = [ok for s in TITLELESS for ok in report.outcomes.get((s, "absent"), [])]
    print(
        f"titleless precision: {right}/{matched} = {right / max(matched, 1):.2%}; "
        f"absent works returned verified: {absent.count(False)}/{len(absent)}"
    )
    if args.flags:
        print("\nmost common outcomes of correct references not verified:")
        for style in STYLES:
            for flag, n in report.flags[style].most_common(args.flags):
                print(f"  {style:>12}: {n:4}  {flag}")
    missed = misses(report)
    print("\ntargets missed: " + ("; ".join(missed) if missed else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
