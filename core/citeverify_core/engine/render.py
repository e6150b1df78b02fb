"""Plain-text rendering of results, for terminals and logs."""

from __future__ import annotations

import html
import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeverify_core.engine.results import VerificationResult

__all__ = ["render_html", "render_text"]


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
            if c.semantic_score is not None:
                decided = "decided by" if c.tier == "semantic" else "scored by"
                lines.append(f"{pad}{decided} the semantic tier: {c.semantic_score:.2f}")
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


_STYLE = (
    "<style>.cv{font-family:system-ui,sans-serif;line-height:1.5;max-width:60em}"
    ".cv .ok{background:#dff5e1}.cv .no{background:#fde2e1}.cv .na{background:#eee}"
    ".cv .mis{background:#fff3cd;border-bottom:2px dotted #ef6c00}"
    ".cv .mis::after{content:' \\26A0 wrong source';color:#ef6c00;font-size:80%}"
    ".cv .q-ok{border-bottom:2px solid #2e7d32}.cv .q-no{border-bottom:2px dashed #c62828}"
    ".cv .badge{display:inline-block;padding:0 .5em;border-radius:.3em;color:#fff;font-weight:600}"
    ".cv .allow{background:#2e7d32}.cv .block{background:#c62828}.cv .flag{background:#ef6c00}"
    ".cv table{border-collapse:collapse;font-size:90%}.cv td,.cv th{padding:.15em .6em;"
    "border-bottom:1px solid #ddd;text-align:left}</style>"
)


def render_html(result: VerificationResult) -> str:
    """Render a result as HTML for notebooks.

    The answer with supported and unsupported claims highlighted, quotes underlined (solid:
    found, dashed: not found), and a table of citations. Everything from the answer is escaped.
    """
    d = result.details
    badge = result.verdict if result.verified or result.verdict == "block" else "flag"
    head = (
        f'<div class="cv">{_STYLE}<p><span class="badge {badge}">{result.verdict.upper()}</span> '
        f"<code>{html.escape(result.reason_code)}</code> &middot; action <b>{result.action}</b>"
        f" &middot; groundedness <b>{_pct(d.groundedness).strip()}</b>"
        + (
            f" &middot; claim confidence <b>{_pct(d.claim_confidence).strip()}</b>"
            if d.claim_confidence is not None
            else ""
        )
        + "</p>"
    )
    withheld = not result.original_answer and result.action == "redact"
    if withheld:
        # The removed text was withheld (include_original=False): the spans index a text we do
        # not have, so the redacted answer is shown as it is.
        body = html.escape(result.answer)
    else:
        marks: list[tuple[int, int, str, str]] = []
        for c in d.claims or []:
            cls = {True: "ok", False: "no", None: "na"}[c.verified]
            title = f"groundedness {_pct(c.groundedness).strip()}"
            if c.missing_words:
                title += "; not in context: " + ", ".join(c.missing_words[:10])
            if c.semantic_score is not None:
                title += f"; semantic score {c.semantic_score:.2f} ({c.tier} tier decided)"
            if c.misattributed:
                # Visible, not only in the hover text: a claim its cited source does not support,
                # even when other documents do.
                title += "; the cited source does not support it"
                cls = "mis" if c.verified else cls
            marks.append((c.span[0], c.span[1], cls, title))
        body = _highlight(result.original_answer or result.answer, marks, d.quotes or [])
    parts = [head, f"<p>{body}</p>"]
    if d.citations:
        rows = "".join(
            f"<tr><td>{html.escape(c.type)}</td><td>{html.escape(c.text)}</td>"
            f"<td>{html.escape(c.status)}</td><td>{html.escape(c.reason)}</td></tr>"
            for c in d.citations
        )
        parts.append(
            "<table><tr><th>type</th><th>citation</th><th>status</th><th>why</th></tr>"
            f"{rows}</table>"
        )
    if result.reasons:
        items = "".join(f"<li>{html.escape(r)}</li>" for r in result.reasons)
        parts.append(f"<p>Why unverified:</p><ul>{items}</ul>")
    if result.action == "redact" and not withheld:
        parts.append(f"<p>Redacted answer: <i>{html.escape(result.answer)}</i></p>")
    parts.append("</div>")
    return "".join(parts)


def _highlight(text: str, marks: list[tuple[int, int, str, str]], quotes: list[Any]) -> str:
    out: list[str] = []
    pos = 0
    quote_spans = [(q.span[0], q.span[1], "q-ok" if q.matched else "q-no") for q in quotes]
    for start, end, cls, title in sorted(marks):
        out.append(html.escape(text[pos:start]))
        inner = _underline(text, start, end, quote_spans)
        out.append(f'<span class="{cls}" title="{html.escape(title)}">{inner}</span>')
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _underline(text: str, start: int, end: int, quotes: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = start
    for qs, qe, cls in quotes:
        if qs >= start and qe <= end and qs >= pos:
            out.append(html.escape(text[pos:qs]))
            out.append(f'<span class="{cls}">{html.escape(text[qs:qe])}</span>')
            pos = qe
    out.append(html.escape(text[pos:end]))
    return "".join(out)
