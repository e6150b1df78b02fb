"""Plain-text rendering of results, for terminals and logs."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citeverify._result import VerificationResult

__all__ = ["render_text"]


def _pct(value: float | None) -> str:
    return "  n/a" if value is None else f"{value * 100:4.0f}%"


def render_text(result: VerificationResult, *, width: int = 100) -> str:
    """Render a result as a readable report: verdict, scores, claims, quotes, reasons."""
    d = result.details
    lines = [
        f"Verdict: {result.verdict.upper()}  ({result.reason_code}, action: {result.action})",
        f"Groundedness: {_pct(d.groundedness).strip()}"
        + (
            f"   Claim confidence: {_pct(d.claim_confidence).strip()}"
            if d.claim_confidence is not None
            else ""
        ),
    ]
    if d.claims:
        lines.append("")
        lines.append("Claims:")
        for i, c in enumerate(d.claims, 1):
            mark = {True: "ok ", False: "NO ", None: " - "}[c.verified]
            head = f"  {i:>2}. [{mark}] {_pct(c.groundedness)}  "
            body = textwrap.shorten(c.text, width=max(20, width - len(head)), placeholder=" ...")
            lines.append(head + body)
            pad = " " * len(head)
            if c.missing_words:
                missing = ", ".join(c.missing_words[:12]) + (
                    " ..." if len(c.missing_words) > 12 else ""
                )
                lines.append(f"{pad}not in context: {missing}")
            if c.best_document is not None and c.verified is False:
                best = _pct(c.best_document_groundedness).strip()
                lines.append(f"{pad}closest document: #{c.best_document} ({best})")
            if c.cited_documents:
                cited = ", ".join(f"#{i}" for i in c.cited_documents)
                state = "MISATTRIBUTED" if c.misattributed else "supports it"
                share = _pct(c.cited_groundedness).strip()
                lines.append(f"{pad}cites {cited}: {state} ({share} of its words)")
            lines.extend(f"{pad}{p}" for p in c.problems)
    if d.quotes:
        lines.append("")
        lines.append("Quotes:")
        for q in d.quotes:
            if q.matched:
                where = f"found in document #{q.document}"
                if q.document_span is not None:
                    where += f" at {q.document_span[0]}-{q.document_span[1]}"
            elif q.matched is False:
                where = "NOT FOUND in the context"
            else:
                where = "not checked"
            text = textwrap.shorten(q.text, width=60, placeholder=" ...")
            lines.append(f'  "{text}": {where}')
    other = [c for c in d.citations or [] if c.type != "quote"]
    if other:
        lines.append("")
        lines.append("Citations:")
        for cit in other:
            mark = {True: "ok ", False: "NO ", None: " - "}[cit.verified]
            text = textwrap.shorten(cit.text, width=50, placeholder=" ...")
            lines.append(f"  [{mark}] {cit.type:<10} {text}: {cit.status} ({cit.reason})")
    if result.reasons:
        lines.append("")
        lines.append("Why unverified:")
        lines.extend(f"  - {r}" for r in result.reasons)
    if result.action == "redact":
        lines.append("")
        lines.append("Redacted answer:")
        lines.extend(
            textwrap.wrap(
                result.answer, width=width - 2, initial_indent="  ", subsequent_indent="  "
            )
        )
    if result.notes:
        lines.append("")
        lines.extend(f"Note: {n}" for n in result.notes)
    return "\n".join(lines)
