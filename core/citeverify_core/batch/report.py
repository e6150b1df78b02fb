"""``--report report.html``: one self-contained page (inline CSS and SVG, no script, no CDN).

The charts are drawn here, in Python, as SVG bars: the file reads the same offline, in any
browser, and in a notebook (``IPython.display.HTML(report_html(summary))``).
"""

from __future__ import annotations

import datetime
import html
from pathlib import Path
from typing import TYPE_CHECKING

from citeverify_core.text.htmlpage import bars as _bars
from citeverify_core.text.htmlpage import hbars as _hbars
from citeverify_core.text.htmlpage import kpis as _kpis
from citeverify_core.text.htmlpage import page as _page
from citeverify_core.text.htmlpage import table as _table

if TYPE_CHECKING:
    from citeverify_core.batch.local import BatchSummary

_COLORS = {
    "allow": "#2f9e44",
    "flag": "#f08c00",
    "redact": "#7048e8",
    "block": "#e03131",
}


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
    citations = sorted(s.citations.items(), key=lambda kv: (-kv[1], kv[0]))
    slow = [(f"{ms:,.1f}", ident, claims) for ms, ident, claims in s.slowest]
    generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    grounded_note = (
        f" ({s.groundedness_null:,} records without a checked context are not shown)"
        if s.groundedness_null
        else ""
    )
    sections = [
        f'<section class="wide">{_kpis(kpis)}</section>',
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
    subtitle = f"{summary.output.name}, {generated}, {summary.seconds:,.1f} s"
    return _page(title, subtitle, sections)


def write_report(path: Path, summary: BatchSummary, *, source: str = "") -> None:
    """Write the report to ``path``."""
    path.write_text(report_html(summary, source=source), encoding="utf-8")
