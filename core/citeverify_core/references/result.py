"""The reference-verification API's result: status, message, APA 7 reference, labels, graph."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citeverify_core.references.compare import Comparison
from citeverify_core.references.model import (
    FIELDS,
    Author,
    FieldLabel,
    ParsedReference,
    Record,
    Status,
)

__all__ = ["ReferenceResult", "apa7", "build_result"]


class ReferenceResult(BaseModel):
    """What the reference verifier says about one reference (the API's result object).

    ``model_dump(mode="json")`` uses the API's documented key names exactly.
    """

    model_config = ConfigDict(frozen=True)

    status: Status = Field(description="verified, verified-with-error, needs-human or unverified.")
    message: str = Field(description="Markdown: a Reference Match line, Summary and Details.")
    reference: str = Field(description="Corrected APA 7 reference, or a status message.")
    field_results: dict[str, FieldLabel] = Field(description="The label of each of the 5 fields.")
    match_set_size: int = Field(description="Fields that matched evidence.")
    contained_set_size: int = Field(description="Fields with partial matches.")
    verificationGraph: dict[str, Any] | None = Field(
        description="The reasoning graph."
    )  # the API's key
    error: str | None = Field(default=None, description="Why the reference could not be checked.")
    notices: list[dict[str, str | None]] = Field(
        default_factory=list,
        description="Retraction, expression-of-concern and correction notices of the matched "
        "work (kind, date, the notice's doi, source), most serious first; empty when none is "
        "known. A retracted work is still verified: the reference names a real work.",
    )

    @property
    def retracted(self) -> bool:
        """The matched work was retracted (a notice of kind ``retraction``)."""
        return any(n.get("kind") == "retraction" for n in self.notices)


def _initials(given: str) -> str:
    parts = [p for p in given.replace("-", " - ").replace(".", " ").split() if p]
    out = []
    for p in parts:
        out.append("-" if p == "-" else f"{p[0].upper()}.")
    return " ".join(out).replace(" - ", "-")


def _apa_author(a: Author) -> str:
    return f"{a.family}, {_initials(a.given)}" if a.given else a.family


def apa7(record: Record) -> str:
    """An APA 7 reference for a record (plain text, no italics)."""
    names = [_apa_author(a) for a in record.authors]
    if len(names) > 20:
        names = [*names[:19], "...", names[-1]]
        authors = ", ".join(names[:-1]) + " " + names[-1]
    elif len(names) > 1:
        authors = ", ".join(names[:-1]) + ", & " + names[-1]
    else:
        authors = names[0] if names else ""
    year = f"({record.year})" if record.year else "(n.d.)"
    title = (record.title or "").rstrip(".")
    head = f"{authors} {year}. {title}." if authors else f"{title}. {year}."
    parts = [head]
    if record.venue:
        venue = record.venue
        if record.volume:
            venue += f", {record.volume}"
            if record.issue:
                venue += f"({record.issue})"
        if record.pages:
            venue += f", {record.pages.replace('-', '–')}"
        parts.append(venue + ".")
    if record.doi:
        parts.append(f"https://doi.org/{record.doi}")
    elif record.url:
        parts.append(record.url)
    return " ".join(parts)


_STATUS_TEXT = {
    "verified": "Verified",
    "verified-with-error": "Verified with errors",
    "needs-human": "Needs human review",
    "unverified": "Unverified",
}


def build_result(
    ref: ParsedReference,
    comparisons: list[Comparison],
    status: Status,
    best: Comparison | None,
    reasoning: str,
    *,
    sources: list[str],
    elapsed_ms: float,
    failures: Sequence[str] = (),
) -> ReferenceResult:
    """Assemble the result object and its verification graph.

    ``failures``: the sources that could not answer and why ("openalex timed out after 5s");
    shown in the message and in the graph's ``metadata.sourcesFailed``.
    """
    if best is not None:
        labels = {f.field: f.label for f in best.fields}
    else:
        labels = {name: ("ABSENT" if _missing(ref, name) else "UNCONFIRMED") for name in FIELDS}
    matches = sum(1 for v in labels.values() if v in {"MATCH", "MATCH_WITH_TYPO"})
    contained = sum(1 for v in labels.values() if v == "CONTAINS")
    if best is not None and status != "unverified":
        corrected = apa7(best.record)
        if len(corrected) > 2 * MAX_SHOWN_CHARS:
            corrected = corrected[: 2 * MAX_SHOWN_CHARS] + "…"
    elif failures and status == "needs-human":
        corrected = "Not checked: a source did not answer; check the reference by hand or again."
    else:
        corrected = "No matching work was found; the reference could not be verified."
    notices = best.record.notices if best is not None and status != "unverified" else ()
    return ReferenceResult(
        status=status,
        message=_message(ref, status, best, reasoning, corrected, failures),
        notices=[n.to_dict() for n in notices],
        reference=corrected,
        field_results=labels,
        match_set_size=matches,
        contained_set_size=contained,
        verificationGraph=_graph(
            ref,
            comparisons,
            status,
            best,
            reasoning,
            matches,
            contained,
            sources,
            elapsed_ms,
            failures,
        ),
    )


def _missing(ref: ParsedReference, name: str) -> bool:
    value = {
        "title": ref.title,
        "authors": ref.authors,
        "year": ref.year,
        "venue": ref.venue,
        "identifier": ref.doi,
    }[name]
    return not value


def _message(
    ref: ParsedReference,
    status: Status,
    best: Comparison | None,
    reasoning: str,
    corrected: str,
    failures: Sequence[str] = (),
) -> str:
    lines = [
        f"**Reference Match:** {_STATUS_TEXT[status]}"
        + (f" ({best.record.source})" if best else ""),
        "",
    ]
    lines += ["### Summary", "", reasoning[0].upper() + reasoning[1:] + "."]
    if failures and not reasoning.startswith("could not check"):
        lines += ["", f"Could not check: {'; '.join(failures)}."]
    if status in {"verified", "verified-with-error", "needs-human"} and best is not None:
        for notice in best.record.notices:
            # First, in bold: an editor checks exactly this.
            lines += ["", f"**{_NOTICE_TEXT.get(notice.kind, notice.kind)}:** {notice}"]
        lines += ["", f"Corrected reference: {corrected}"]
    lines += ["", "### Details", ""]
    if best is None:
        lines.append("No candidate record was close enough to compare.")
    else:
        lines += ["| Field | Result | Reference | Evidence |", "| --- | --- | --- | --- |"]
        for f in best.fields:
            lines.append(
                f"| {f.field} | {f.label} | {_cell(f.citation_value)} "
                f"| {_cell(f.candidate_value)} |"
            )
    return "\n".join(lines)


_NOTICE_TEXT = {
    "retraction": "Retracted",
    "expression-of-concern": "Expression of concern",
    "correction": "Corrected",
}

#: Records are untrusted (a dump may hold a 2-million-character title or 100,000 authors): the
#: message and the graph show at most this much of one value.
MAX_SHOWN_CHARS = 1000
MAX_SHOWN_ITEMS = 50


def _shown(value: Any) -> Any:
    """``value`` cut to what a result shows: long strings and lists end with "…"."""
    if isinstance(value, str) and len(value) > MAX_SHOWN_CHARS:
        return value[:MAX_SHOWN_CHARS] + "…"
    if isinstance(value, list | tuple):
        items = [_shown(v) for v in value[:MAX_SHOWN_ITEMS]]
        if len(value) > MAX_SHOWN_ITEMS:
            items.append(f"… {len(value) - MAX_SHOWN_ITEMS:,} more")
        return items
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    return value


def _cell(value: object) -> str:
    value = _shown(value)
    if value is None or value == []:
        return "—"
    if isinstance(value, list):
        value = "; ".join(map(str, value))
    return str(value).replace("|", "\\|")


def _graph(
    ref: ParsedReference,
    comparisons: list[Comparison],
    status: Status,
    best: Comparison | None,
    reasoning: str,
    matches: int,
    contained: int,
    sources: list[str],
    elapsed_ms: float,
    failures: Sequence[str] = (),
) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [
        {
            "id": "cit_1",
            "type": "CITATION",
            "rawText": ref.raw,
            "parsedFields": _shown(ref.fields()),
        }
    ]
    edges: list[dict[str, str]] = []
    best_id = None
    cmp_n = 0
    for i, c in enumerate(comparisons, 1):
        cand_id = f"cand_{i}"
        if c is best:
            best_id = cand_id
        nodes.append(
            {
                "id": cand_id,
                "type": "CANDIDATE",
                "sourceType": c.record.source,
                "sourceSuccess": True,
                "candidateFields": _shown(c.record.fields()),
                "notices": [n.to_dict() for n in c.record.notices[:MAX_SHOWN_ITEMS]],
                "comparisonSummary": {
                    "matches": c.count("MATCH", "MATCH_WITH_TYPO"),
                    "contains": c.count("CONTAINS"),
                    "absent": c.count("ABSENT"),
                    "unconfirmed": c.count("UNCONFIRMED"),
                    "contradictions": c.count("CONTRADICTION"),
                },
            }
        )
        edges.append({"source": "cit_1", "target": cand_id, "type": "FOUND"})
        for f in c.fields:
            cmp_n += 1
            cmp_id = f"cmp_{cmp_n}"
            nodes.append(
                {
                    "id": cmp_id,
                    "type": "COMPARISON",
                    "candidateId": cand_id,
                    "fieldName": f.field,
                    "result": f.label,
                    "citationValue": _shown(f.citation_value),
                    "candidateValue": _shown(f.candidate_value),
                    "reasoning": _shown(f.reasoning),
                }
            )
            edges.append({"source": cand_id, "target": cmp_id, "type": "COMPARED"})
    nodes.append(
        {
            "id": "result_1",
            "type": "RESULT",
            "status": status,
            "bestCandidateId": best_id,
            "reasoning": reasoning,
            "matchSetSize": matches,
            "containedSetSize": contained,
        }
    )
    created = (
        datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )
    metadata: dict[str, Any] = {
        "totalCandidates": len(comparisons),
        "sourcesQueried": sources,
        "processingTimeMs": round(elapsed_ms, 1),
    }
    if failures:  # only then: the API's graph has the three keys above
        metadata["sourcesFailed"] = _shown(list(failures))
    return {
        "version": "1.0",
        "createdAt": created,
        "citationId": "cit_1",
        "nodes": nodes,
        "edges": edges,
        "metadata": metadata,
    }
