"""``--report report.html``: one self-contained page (inline CSS and SVG, no script, no CDN).

The charts are drawn here, in Python, as SVG bars: the file reads the same offline, in any
browser, and in a notebook (``IPython.display.HTML(report_html(summary))``).
"""

from __future__ import annotations

import datetime
import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citeverify_core.batch.local import BatchSummary

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d232b;
background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}
.sub{color:#5b6573;margin:0 0 20px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:16px}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:16px;overflow:hidden}
.wide{grid-column:1/-1}
.kpis{display:flex;gap:24px;flex-wrap:wrap}.kpi b{display:block;font-size:22px}
.kpi span{color:#5b6573;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;border-bottom:1px solid #eceef1;
text-align:left;vertical-align:top}th{font-size:12px;color:#5b6573;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
svg text{font:11px system-ui,sans-serif;fill:#39424e}
.empty{color:#8a94a1;font-style:italic}
"""
_COLORS = {
    "allow": "#2f9e44",
    "flag": "#f08c00",
    "redact": "#7048e8",
    "block": "#e03131",
}


def _bars(
    labels: Sequence[str],
    values: Sequence[int],
    *,
    title: str,
    colors: Sequence[str] | None = None,
    width: int = 480,
    height: int = 200,
) -> str:
    """A vertical bar chart as SVG (class ``chart``; each bar a ``rect.bar`` with a title)."""
    top = max(values, default=0) or 1
    n = max(len(values), 1)
    left, bottom, head = 8, 34, 16
    slot = (width - 2 * left) / n
    bar_w = max(slot * 0.72, 2)
    parts = [
        f'<svg class="chart" role="img" aria-label="{html.escape(title)}" '
        f'viewBox="0 0 {width} {height}" width="100%" preserveAspectRatio="xMidYMid meet">'
    ]
    base = height - bottom
    parts.append(
        f'<line x1="{left}" y1="{base}" x2="{width - left}" y2="{base}" stroke="#c5cbd3"/>'
    )
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = (base - head) * value / top
        x = left + i * slot + (slot - bar_w) / 2
        color = colors[i] if colors else "#4263eb"
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{base - h:.1f}" width="{bar_w:.1f}" '
            f'height="{max(h, 0):.1f}" fill="{color}" rx="2">'
            f"<title>{html.escape(label)}: {value:,}</title></rect>"
        )
        cx = x + bar_w / 2
        parts.append(
            f'<text x="{cx:.1f}" y="{base - h - 4:.1f}" text-anchor="middle">{value:,}</text>'
        )
        parts.append(
            f'<text x="{cx:.1f}" y="{base + 14}" text-anchor="middle">{html.escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _hbars(items: Sequence[tuple[str, int]], *, title: str, width: int = 480) -> str:
    """A horizontal bar chart (long labels), as SVG."""
    if not items:
        return '<p class="empty">none</p>'
    row, label_w = 22, 130
    height = row * len(items) + 8
    top = max(v for _, v in items) or 1
    parts = [
        f'<svg class="chart" role="img" aria-label="{html.escape(title)}" '
        f'viewBox="0 0 {width} {height}" width="100%">'
    ]
    for i, (label, value) in enumerate(items):
        y = 4 + i * row
        w = (width - label_w - 60) * value / top
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{html.escape(label)}</text>'
            f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{max(w, 1):.1f}" '
            f'height="{row - 8}" '
            f'fill="#4263eb" rx="2"><title>{html.escape(label)}: {value:,}</title></rect>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 14}">{value:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], numeric: set[int]) -> str:
    if not rows:
        return '<p class="empty">none</p>'
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            text = f"{cell:,}" if isinstance(cell, int) else str(cell)
            cls = ' class="n"' if i in numeric else ""
            cells.append(f"<td{cls}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _bins(count: int) -> list[str]:
    return [f"{i / count:.1f}" for i in range(count)]


def report_html(summary: BatchSummary, *, source: str = "") -> str:
    """The report of a batch run, as one HTML document."""
    s = summary.stats
    total = s.rows + s.errors
    actions = ["allow", "flag", "redact", "block"]
    action_counts = [s.actions.get(a, 0) for a in actions]
    blocked_or_flagged = sum(action_counts[1:])
    kpis = [
        ("records", f"{total:,}"),
        ("verified rows", f"{s.rows:,}"),
        ("unreadable", f"{s.errors:,}"),
        ("not allowed as is", f"{blocked_or_flagged / s.rows:.1%}" if s.rows else "-"),
        ("unsupported claims", f"{s.unsupported_claims:,} of {s.claims:,}"),
        ("altered quotes", f"{s.altered_quotes:,} of {s.quotes:,}"),
        ("records/s", f"{summary.records_per_second:,.0f}"),
    ]
    kpi_html = "".join(f'<div class="kpi"><b>{v}</b><span>{k}</span></div>' for k, v in kpis)
    citations = sorted(s.citations.items(), key=lambda kv: (-kv[1], kv[0]))
    slow = [(f"{ms:,.1f}", ident, claims) for ms, ident, claims in s.slowest]
    generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    grounded_note = (
        f" ({s.groundedness_null:,} records without a checked context are not shown)"
        if s.groundedness_null
        else ""
    )
    sections = [
        f'<section class="wide"><div class="kpis">{kpi_html}</div></section>',
        "<section><h2>Verdicts (actions)</h2>"
        + _bars(
            actions,
            action_counts,
            title="actions",
            colors=[_COLORS[a] for a in actions],
        )
        + "</section>",
        "<section><h2>Citations by status</h2>"
        + _hbars(citations, title="citations by status")
        + "</section>",
        f"<section><h2>Groundedness</h2><p class='sub'>share of the answer's words found in "
        f"its documents{html.escape(grounded_note)}</p>"
        + _bars(_bins(len(s.groundedness)), s.groundedness, title="groundedness histogram")
        + "</section>",
        "<section><h2>Claim confidence</h2><p class='sub'>share of an answer's claims that "
        "pass min_groundedness</p>"
        + _bars(_bins(len(s.confidence)), s.confidence, title="claim confidence histogram")
        + "</section>",
        '<section class="wide"><h2>Most frequent unsupported claims</h2>'
        + _table(["claim", "records"], s.unsupported.most_common(15), {1})
        + "</section>",
        '<section class="wide"><h2>Most frequent unmatched quotes</h2>'
        + _table(["quote", "records"], s.unmatched.most_common(15), {1})
        + "</section>",
        "<section><h2>Slowest records</h2>"
        + _table(["ms", "id", "claims"], slow, {0, 2})
        + "</section>",
        "<section><h2>Unreadable records</h2>"
        + _table(["reason", "records"], s.error_reasons.most_common(10), {1})
        + f"<p class='sub'>listed in {html.escape(summary.errors_file.name)}</p></section>",
    ]
    title = f"citeverify batch report: {Path(source).name if source else summary.output.name}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body><main>"
        f"<h1>{html.escape(title)}</h1><p class='sub'>{html.escape(summary.output.name)}, "
        f"{generated}, {summary.seconds:,.1f} s</p>"
        f'<div class="grid">{"".join(sections)}</div></main></body></html>'
    )


def write_report(path: Path, summary: BatchSummary, *, source: str = "") -> None:
    """Write the report to ``path``."""
    path.write_text(report_html(summary, source=source), encoding="utf-8")
