"""Compare a parsed reference with a candidate record, field by field, and decide a status.

Every threshold is here, in one place, with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz

from citeverify.references._model import FIELDS, FieldLabel, ParsedReference, Record, Status
from citeverify.references._text import norm

__all__ = ["Comparison", "FieldComparison", "compare", "decide"]

#: Title similarity (rapidfuzz ratio, 0-100, on normalized text) for MATCH_WITH_TYPO.
TITLE_TYPO = 90
#: A title at least this long, that is the start of (or contained in) the record's title, is
#: CONTAINS (a title without its subtitle).
TITLE_CONTAINED_MIN_CHARS = 15
#: Author surname similarity for a misspelled surname (MATCH_WITH_TYPO).
AUTHOR_TYPO = 80
#: Venue similarity for MATCH_WITH_TYPO.
VENUE_TYPO = 88
#: A candidate whose title scores below this (token_set_ratio) is not the cited work at all.
CANDIDATE_MIN_TITLE = 60
#: Two candidates whose scores differ by less than this are ambiguous (needs-human).
AMBIGUITY_MARGIN = 0.05

_WEIGHTS = {"title": 0.45, "authors": 0.25, "year": 0.1, "venue": 0.1, "identifier": 0.1}
_LABEL_SCORE = {
    "MATCH": 1.0, "MATCH_WITH_TYPO": 0.85, "CONTAINS": 0.7, "ABSENT": 0.5,
    "UNCONFIRMED": 0.5, "CONTRADICTION": 0.0,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class FieldComparison:
    """One field of one candidate: the label and why."""

    field: str
    label: FieldLabel
    citation_value: object
    candidate_value: object
    reasoning: str


@dataclass(frozen=True, slots=True)
class Comparison:
    """All five fields of one candidate, with an overall score in [0, 1]."""

    record: Record
    fields: tuple[FieldComparison, ...]
    score: float

    def label(self, name: str) -> FieldLabel:
        """The label of one field."""
        return next(f.label for f in self.fields if f.field == name)

    def count(self, *labels: str) -> int:
        """How many fields carry one of ``labels``."""
        return sum(1 for f in self.fields if f.label in labels)


def compare(ref: ParsedReference, record: Record) -> Comparison:
    """Label each field of ``record`` against what ``ref`` says."""
    fields = (
        _title(ref.title, record.title),
        _authors(ref, record),
        _year(ref.year, record.year),
        _venue(ref.venue, record.venue),
        _identifier(ref, record),
    )
    score = sum(_WEIGHTS[f.field] * _LABEL_SCORE[f.label] for f in fields)
    return Comparison(record, fields, round(score, 4))


def _absent(name: str, candidate: object) -> FieldComparison:
    return FieldComparison(name, "ABSENT", None, candidate, f"the reference gives no {name}")


def _unconfirmed(name: str, value: object) -> FieldComparison:
    return FieldComparison(name, "UNCONFIRMED", value, None, f"the candidate has no {name}")


def _title(cited: str | None, found: str | None) -> FieldComparison:
    if not cited:
        return _absent("title", found)
    if not found:
        return _unconfirmed("title", cited)
    a, b = norm(cited), norm(found)
    if a == b:
        return FieldComparison(
            "title", "MATCH", cited, found, "titles are identical after normalization"
        )
    ratio = fuzz.ratio(a, b)
    if ratio >= TITLE_TYPO:
        return FieldComparison(
            "title",
            "MATCH_WITH_TYPO",
            cited,
            found,
            f"titles differ by a few characters ({ratio:.0f}% similar)",
        )
    if len(a) >= TITLE_CONTAINED_MIN_CHARS and (b.startswith(a) or a in b or b in a):
        return FieldComparison(
            "title",
            "CONTAINS",
            cited,
            found,
            "one title is contained in the other (subtitle or truncation)",
        )
    return FieldComparison(
        "title", "CONTRADICTION", cited, found, f"titles differ ({ratio:.0f}% similar)"
    )


def _authors(ref: ParsedReference, record: Record) -> FieldComparison:
    cited = [norm(a.family) for a in ref.authors if a.family]
    found = [norm(a.family) for a in record.authors if a.family]
    shown_cited = [a.family for a in ref.authors]
    shown_found = [str(a) for a in record.authors]
    if not cited:
        return _absent("authors", shown_found)
    if not found:
        return _unconfirmed("authors", shown_cited)
    exact, typo, missing = 0, [], []
    for name in cited:
        if name in found:
            exact += 1
            continue
        best = max(found, key=lambda f: fuzz.ratio(name, f))
        if fuzz.ratio(name, best) >= AUTHOR_TYPO:
            typo.append((name, best))
        else:
            missing.append(name)
    if missing:
        why = f"not among the record's authors: {', '.join(missing)}"
        return FieldComparison("authors", "CONTRADICTION", shown_cited, shown_found, why)
    if typo:
        why = "; ".join(f"{a!r} looks like {b!r}" for a, b in typo)
        return FieldComparison("authors", "MATCH_WITH_TYPO", shown_cited, shown_found, why)
    if len(cited) < len(found) and not ref.et_al:
        why = f"{len(cited)} of the record's {len(found)} authors are listed"
        return FieldComparison("authors", "CONTAINS", shown_cited, shown_found, why)
    return FieldComparison(
        "authors", "MATCH", shown_cited, shown_found, "every cited author is on the record"
    )


def _year(cited: int | None, found: int | None) -> FieldComparison:
    if cited is None:
        return _absent("year", found)
    if found is None:
        return _unconfirmed("year", cited)
    if cited == found:
        return FieldComparison("year", "MATCH", cited, found, "same year")
    return FieldComparison("year", "CONTRADICTION", cited, found, f"the record says {found}")


def _abbreviates(short: str, long: str) -> bool:
    """Whether ``short`` abbreviates ``long`` word by word ("anal biochem", "analytical ...")."""
    s, l_ = (
        short.split(),
        [w for w in long.split() if w not in {"of", "the", "and", "for", "in", "de", "und"}],
    )
    if not s or len(s) > len(l_):
        return False
    j = 0
    for word in s:
        while j < len(l_) and not l_[j].startswith(word):
            j += 1
        if j == len(l_):
            return False
        j += 1
    return True


def _venue(cited: str | None, found: str | None) -> FieldComparison:
    if not cited:
        return _absent("venue", found)
    if not found:
        return _unconfirmed("venue", cited)
    a, b = norm(cited), norm(found)
    if a == b:
        return FieldComparison("venue", "MATCH", cited, found, "same venue")
    if _abbreviates(a, b) or _abbreviates(b, a) or a in b or b in a:
        return FieldComparison(
            "venue", "CONTAINS", cited, found, "an abbreviated or partial venue name"
        )
    ratio = fuzz.ratio(a, b)
    if ratio >= VENUE_TYPO:
        return FieldComparison("venue", "MATCH_WITH_TYPO", cited, found, f"{ratio:.0f}% similar")
    return FieldComparison(
        "venue", "CONTRADICTION", cited, found, f"the record's venue is {found!r}"
    )


def _identifier(ref: ParsedReference, record: Record) -> FieldComparison:
    if not ref.doi:
        return _absent("identifier", record.doi)
    if not record.doi:
        return _unconfirmed("identifier", ref.doi)
    if ref.doi.lower() == record.doi.lower():
        return FieldComparison("identifier", "MATCH", ref.doi, record.doi, "same DOI")
    return FieldComparison(
        "identifier", "CONTRADICTION", ref.doi, record.doi, "the record has another DOI"
    )


def decide(
    ref: ParsedReference, comparisons: list[Comparison]
) -> tuple[Status, Comparison | None, str]:
    """The status, the best candidate and the reasoning (seed 004: "Verification Statuses")."""
    plausible = [
        c for c in comparisons
        if c.label("title") in {"MATCH", "MATCH_WITH_TYPO", "CONTAINS"}
        or c.label("identifier") == "MATCH"
    ]  # fmt: skip
    if not plausible:
        if (
            comparisons
            and ref.doi
            and any(c.label("identifier") == "CONTRADICTION" for c in comparisons)
        ):
            return (
                "unverified",
                None,
                "no record matches the title, and the DOI belongs to another work",
            )
        return "unverified", None, "no candidate matches the reference"
    plausible.sort(key=lambda c: c.score, reverse=True)
    best = plausible[0]
    others = [
        c
        for c in plausible[1:]
        if (c.record.doi or c.record.title) != (best.record.doi or best.record.title)
    ]
    if (
        others
        and best.score - others[0].score < AMBIGUITY_MARGIN
        and best.label("identifier") != "MATCH"
    ):
        return "needs-human", best, "two candidates match about equally well"
    title = best.label("title")
    if title not in {"MATCH", "MATCH_WITH_TYPO", "CONTAINS"}:
        # Found by its DOI only: the DOI points to a work the title does not describe.
        return (
            "unverified",
            best,
            "the DOI resolves to a work whose title differs from the reference",
        )
    errors = [f.field for f in best.fields if f.label in {"CONTRADICTION", "MATCH_WITH_TYPO"}]
    errors += [
        f.field for f in best.fields if f.label == "CONTAINS" and f.field in {"title", "authors"}
    ]
    confirmed = best.count("MATCH", "MATCH_WITH_TYPO", "CONTAINS")
    if confirmed < 2:
        return "needs-human", best, "too little evidence: only one field could be compared"
    if errors:
        fields = ", ".join(dict.fromkeys(errors))
        return (
            "verified-with-error",
            best,
            f"the work exists but the reference has errors in: {fields}",
        )
    return "verified", best, f"{confirmed} of {len(FIELDS)} fields confirmed, none contradicted"
