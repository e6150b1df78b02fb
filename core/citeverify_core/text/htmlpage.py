"""Self-contained HTML pages: the CSS, tables and SVG bar charts the reports share.

The batch report (``citeverify batch --report``) and a document's report (``citeverify refs
FILE --report``) are one file each: inline CSS and SVG, no script, no external resource, so
they read the same offline and in any browser. Every string shown goes through
:func:`html.escape` here: what a report shows (answers, reference strings) is untrusted.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

__all__ = ["CSS", "bars", "hbars", "kpis", "page", "table"]

CSS = """
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


def bars(
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
        color = html.escape(colors[i]) if colors else "#4263eb"
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


def hbars(items: Sequence[tuple[str, int]], *, title: str, width: int = 480) -> str:
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


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    numeric: set[int],
    *,
    row_classes: Sequence[str] | None = None,
    markup: set[int] | None = None,
    classes: dict[int, str] | None = None,
) -> str:
    """A table; every cell is escaped, except the columns in ``markup`` (HTML made by us).

    Args:
        headers: The column names.
        rows: The cells; an ``int`` is shown with thousands separators.
        numeric: The columns aligned right.
        row_classes: A CSS class for each row ("" for none).
        markup: Columns whose cells are already HTML (built by the caller, escaped there).
        classes: A CSS class for the cells of a column (``numeric`` ones are ``n``).
    """
    if not rows:
        return '<p class="empty">none</p>'
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for r, row in enumerate(rows):
        cells = []
        for i, cell in enumerate(row):
            text = f"{cell:,}" if isinstance(cell, int) else str(cell)
            name = "n" if i in numeric else (classes or {}).get(i, "")
            cls = f' class="{html.escape(name)}"' if name else ""
            shown = text if markup and i in markup else html.escape(text)
            cells.append(f"<td{cls}>{shown}</td>")
        kind = row_classes[r] if row_classes else ""
        tr = f'<tr class="{html.escape(kind)}">' if kind else "<tr>"
        body.append(tr + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def kpis(items: Sequence[tuple[str, str]]) -> str:
    """Big figures with their names (the top of a report)."""
    shown = "".join(
        f'<div class="kpi"><b>{html.escape(value)}</b><span>{html.escape(name)}</span></div>'
        for name, value in items
    )
    return f'<div class="kpis">{shown}</div>'


def page(title: str, subtitle: str, sections: Sequence[str], *, css: str = "") -> str:
    """One HTML document: ``title`` and ``subtitle`` (escaped here), then ``sections`` (HTML)."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}{css}</style></head><body><main>"
        f"<h1>{html.escape(title)}</h1><p class='sub'>{html.escape(subtitle)}</p>"
        f'<div class="grid">{"".join(sections)}</div></main></body></html>'
    )
