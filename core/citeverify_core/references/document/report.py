"""A document's report: its references verified, with their locations and the citation findings.

::

    report = verify_document(extract_document("paper.pdf"), ReferenceVerifier("index.sqlite"))
    report.counts()                    # {"verified": 10, "verified-with-error": 1, ...}
    print(report.to_text())            # what ``citeverify refs paper.pdf`` prints
    report.to_dict()                   # ``--json``
    Path("r.html").write_text(report.to_html())  # ``--report r.html``: one self-contained file

The reference strings come from the document: they are untrusted. The HTML escapes every one
(:mod:`citeverify_core.text.htmlpage`), and the text cuts them to a line.
"""

from __future__ import annotations

import collections
import datetime
import html
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citeverify_core.references.document.model import (
    DOCUMENT_FORMATS,
    CitationCoverage,
    ConsistencyFinding,
    ExtractedDocument,
    ExtractedReference,
    InTextCitation,
    Location,
)
from citeverify_core.text.htmlpage import bars, kpis, page, table

if TYPE_CHECKING:
    from citeverify_core.references.result import ReferenceResult
    from citeverify_core.references.verify import ReferenceVerifier

__all__ = [
    "STATUSES",
    "DocumentReport",
    "differing_fields",
    "document_from_dict",
    "one_line",
    "verify_document",
]

#: The statuses, best first: the order of the counts.
STATUSES = ("verified", "verified-with-error", "needs-human", "unverified")
#: The labels of a field that a person should look at.
_DIFFERING = frozenset({"CONTRADICTION", "MATCH_WITH_TYPO", "CONTAINS"})
_COLORS = {
    "verified": "#2f9e44",
    "verified-with-error": "#f08c00",
    "needs-human": "#7048e8",
    "unverified": "#e03131",
}
_FORMAT_NAMES = {
    "pdf": "PDF",
    "docx": "Word",
    "tex": "LaTeX",
    "bbl": "BibTeX .bbl",
    "md": "Markdown",
    "html": "HTML",
    "txt": "text",
    "bib": "BibTeX",
}
# The status column's colours; the rows are classed by status ("st-verified", ...).
_CSS = "".join(
    f".st-{status} td.status{{color:{color};font-weight:600}}" for status, color in _COLORS.items()
) + (
    "td.ref{max-width:420px;overflow-wrap:anywhere}"
    "td.status,td.where{white-space:nowrap}"
    "div.notice{color:#b00020;font-weight:600}"
    ".apa{color:#39424e;font-size:13px}.diff{color:#b35c00;font-size:12px}"
)


@dataclass(slots=True)
class DocumentReport:
    """A document and the verifier's result for each of its references (same order).

    Attributes:
        document: What was read: references with locations, citations, findings.
        results: ``results[i]`` is the result of ``document.references[i]``.
    """

    document: ExtractedDocument
    results: list[ReferenceResult]

    def __post_init__(self) -> None:
        if len(self.results) != len(self.document.references):
            msg = (
                f"{len(self.results)} results for {len(self.document.references)} references "
                f"of {self.document.name}"
            )
            raise ValueError(msg)

    # --- figures ------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """References by status, every status present (0 when none), best first."""
        found: collections.Counter[str] = collections.Counter(str(r.status) for r in self.results)
        counts = {status: found.pop(status, 0) for status in STATUSES}
        counts.update(found)  # a status of a later version: kept, not dropped
        return counts

    @property
    def all_verified(self) -> bool:
        """Every reference came back ``verified`` (the command's exit 0)."""
        return all(r.status == "verified" for r in self.results)

    def _citations_of(self, number: int) -> list[InTextCitation]:
        return [c for c in self.document.citations if number in c.entries]

    def _findings_of(self, number: int) -> list[ConsistencyFinding]:
        return [f for f in self.document.findings if f.entry == number]

    # --- JSON ---------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The document's ``to_dict`` with each reference's result merged in, and the counts.

        Each reference has its own keys (``number``, ``text``, ``label``, ``location``, ...),
        the result's (``status``, ``message``, ``reference``: the corrected APA 7 reference,
        ``field_results``, ``match_set_size``, ``contained_set_size``, ``verificationGraph``,
        ``error``), and ``citations`` / ``findings``: the in-text citations that name it and
        the consistency findings about it.
        """
        data = self.document.to_dict()
        data["counts"] = self.counts()
        merged = []
        for entry, reference, result in zip(
            data["references"], self.document.references, self.results, strict=True
        ):
            merged.append(
                {
                    **entry,
                    **result.model_dump(mode="json"),
                    "citations": [c.to_dict() for c in self._citations_of(reference.number)],
                    "findings": [f.to_dict() for f in self._findings_of(reference.number)],
                }
            )
        data["references"] = merged
        return data

    # --- text ---------------------------------------------------------------------------------

    def header_lines(self) -> list[str]:
        """What the document is and how its references fared."""
        doc = self.document
        what = [_FORMAT_NAMES.get(doc.format, doc.format)]
        if doc.pages is not None:
            what.append(f"{doc.pages} page{'s' * (doc.pages != 1)}")
        lines = [f"{one_line(doc.name, 200)} ({', '.join(what)})"]
        if doc.title:
            lines.append(f"title: {one_line(doc.title, 100)}")
        heading = _heading(doc.heading)
        where = f' under "{one_line(heading, 60)}"' if heading else ""
        counts = ", ".join(f"{n} {status}" for status, n in self.counts().items() if n)
        total = len(self.results)
        lines.append(f"{total} reference{'s' * (total != 1)}{where}: {counts or 'none'}")
        return lines

    def to_text(self) -> str:
        """What ``citeverify refs paper.pdf`` prints: header, references, findings, notes."""
        out = self.header_lines()
        out.append("")
        for reference, result in zip(self.document.references, self.results, strict=True):
            out.append(_reference_lines(reference, result))
        findings = self.document.findings
        cited = len(self.document.citations)
        out.append("")
        out.append(
            f"citations in the text: {cited}; "
            f"{len(findings)} finding{'s' * (len(findings) != 1)} on the citations and the list"
            + (":" if findings else "")
        )
        coverage = self.document.coverage
        if coverage is not None:
            out.append(f"checked: {_coverage_line(coverage)}")
        for finding in findings:
            where = f" ({finding.location})" if finding.location else ""
            out.append(f"  {finding.kind}{where}: {one_line(finding.message, 160)}")
        for note in self.document.notes:
            out.append(f"note: {one_line(note, 160)}")
        return "\n".join(out)

    # --- HTML ---------------------------------------------------------------------------------

    def to_html(self) -> str:
        """One self-contained HTML page (inline CSS and SVG, no script, nothing fetched)."""
        doc = self.document
        counts = self.counts()
        figures = [("references", f"{len(self.results):,}")]
        figures += [(status, f"{n:,}") for status, n in counts.items()]
        figures += [
            ("citations", f"{len(doc.citations):,}"),
            ("findings", f"{len(doc.findings):,}"),
        ]
        statuses = list(counts)
        rows: list[list[object]] = []
        classes: list[str] = []
        for reference, result in zip(doc.references, self.results, strict=True):
            cited = self._citations_of(reference.number)
            rows.append(
                [
                    reference.number,
                    reference.label or "",
                    str(reference.location),
                    result.status,
                    _reference_cell(reference, result),
                    _cited(cited) if doc.citations else "—",
                ]
            )
            classes.append(f"st-{result.status}")
        findings = [
            [f.kind, str(f.location) if f.location else "", f.target or "", f.message]
            for f in doc.findings
        ]
        facts = [
            ("file", doc.name),
            ("format", _FORMAT_NAMES.get(doc.format, doc.format)),
            ("title", doc.title or "—"),
            ("pages", str(doc.pages) if doc.pages is not None else "—"),
            ("reference list", _heading(doc.heading) or "—"),
            ("citations checked", "—" if doc.coverage is None else _coverage_line(doc.coverage)),
        ]
        sections = [
            f'<section class="wide">{kpis(figures)}</section>',
            "<section><h2>The document</h2>"
            + table(["", ""], [list(fact) for fact in facts], set())
            + "</section>",
            "<section><h2>References by status</h2>"
            + bars(
                statuses,
                [counts[s] for s in statuses],
                title="references by status",
                colors=[_COLORS.get(s, "#4263eb") for s in statuses],
            )
            + "</section>",
            '<section class="wide"><h2>References</h2>'
            + _references_table(rows, classes)
            + "</section>",
            '<section class="wide"><h2>Citations and the reference list</h2>'
            + table(["finding", "where", "target", "what"], findings, set())
            + "</section>",
        ]
        if doc.notes:
            sections.append(
                '<section class="wide"><h2>Notes on the reading</h2><ul>'
                + "".join(f"<li>{html.escape(note)}</li>" for note in doc.notes)
                + "</ul></section>"
            )
        generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        subtitle = f"{doc.title + ', ' if doc.title else ''}{doc.name}, {generated}"
        return page(f"citeverify references: {doc.name}", subtitle, sections, css=_CSS)


def verify_document(
    document: ExtractedDocument,
    verifier: ReferenceVerifier,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> DocumentReport:
    """Verify every reference of ``document``; ``progress(done, total)`` after each one.

    A reference that cannot be checked gets a result with ``error`` (as
    :meth:`ReferenceVerifier.verify_references` does); it never fails the document.
    """
    texts = [reference.text for reference in document.references]
    results = verifier.verify_references(texts, progress=progress) if texts else []
    return DocumentReport(document, results)


def document_from_dict(data: dict[str, Any]) -> ExtractedDocument:
    """The document back from :meth:`ExtractedDocument.to_dict` (a service's answer).

    Raises:
        ValueError: ``data`` is not such a document (a key missing or of the wrong type).
    """
    try:
        fmt = data["format"]
        return ExtractedDocument(
            name=str(data["name"]),
            format=fmt if fmt in DOCUMENT_FORMATS else "txt",
            title=data.get("title"),
            pages=data.get("pages"),
            heading=data.get("heading"),
            references=[
                ExtractedReference(
                    text=str(r["text"]),
                    number=int(r["number"]),
                    location=_location(r["location"]) or Location(line=0),
                    label=r.get("label"),
                    key=r.get("key"),
                    end=_location(r.get("end")),
                    unreliable=r.get("unreliable"),
                )
                for r in data["references"]
            ],
            citations=[
                InTextCitation(
                    text=str(c["text"]),
                    kind=c["kind"],
                    targets=tuple(map(str, c["targets"])),
                    entries=tuple(None if e is None else int(e) for e in c["entries"]),
                    location=_location(c["location"]) or Location(line=0),
                )
                for c in data.get("citations") or []
            ],
            findings=[
                ConsistencyFinding(
                    kind=f["kind"],
                    message=str(f["message"]),
                    target=f.get("target"),
                    entry=f.get("entry"),
                    location=_location(f.get("location")),
                )
                for f in data.get("findings") or []
            ],
            notes=[str(n) for n in data.get("notes") or []],
            coverage=(
                None
                if data.get("coverage") is None
                else CitationCoverage.from_dict(data["coverage"])
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        msg = f"not a document's data ({type(exc).__name__}: {exc})"
        raise ValueError(msg) from None


def _coverage_line(coverage: CitationCoverage) -> str:
    """How much was checked, in one line: "9 of 12 entries (3 not checked: ...); 40 citations"."""
    line = f"{coverage.checked} of {coverage.entries} entries"
    missed = coverage.entries - coverage.checked
    if missed:
        reasons = "; ".join(f"{n} {reason}" for reason, n in coverage.not_checked)
        line += f" ({missed} not checked: {reasons})"
    line += f"; {coverage.citations} citation{'s' * (coverage.citations != 1)} read"
    if coverage.unread:
        line += f", {coverage.unread} citation-like place{'s' * (coverage.unread != 1)} not read"
    return line


def _location(data: Any) -> Location | None:
    if data is None:
        return None
    page = data.get("page")
    return Location(line=int(data["line"]), page=None if page is None else int(page))


def _heading(heading: str | None) -> str:
    """The heading as a person reads it: without Markdown's "#" marks."""
    return (heading or "").strip().lstrip("#").strip()


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis says so).

    Control and format characters are dropped: a document's text must not drive the terminal
    it is printed on (an ANSI escape sequence in a reference string).
    """
    shown = " ".join(text.split())
    if not shown.isprintable():
        shown = "".join(ch for ch in shown if not unicodedata.category(ch).startswith("C"))
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def differing_fields(result: ReferenceResult) -> list[str]:
    """The fields whose label says they differ from the record found."""
    return [f for f, label in result.field_results.items() if label in _DIFFERING]


def _reference_lines(reference: ExtractedReference, result: ReferenceResult) -> str:
    """One reference's block of the text report (as ``citeverify refs`` prints a list's)."""
    label = f"[{one_line(reference.label, 20)}] " if reference.label else ""
    lines = [
        f"{reference.number:>3}. {label}{reference.location}  {result.status.upper()}",
        f"     {one_line(reference.text, 110)}",
    ]
    if result.error:
        lines.append(f"     {one_line(result.error, 160)}")
    elif result.status not in {"verified", "unverified"}:
        # The corrected APA 7 reference where the paper's needs a correction or a look; a
        # verified one is right as written (--json and --report have every corrected form).
        lines.append(f"     -> {one_line(result.reference, 200)}")
    wrong = differing_fields(result)
    if wrong:
        lines.append(f"     fields that differ: {', '.join(wrong)}")
    for notice in result.notices:
        lines.append(f"     !! {notice_text(notice)}")
    failed = ((result.verificationGraph or {}).get("metadata") or {}).get("sourcesFailed")
    if failed:
        lines.append(f"     could not check: {one_line('; '.join(map(str, failed)), 300)}")
    return "\n".join(lines)


def _reference_cell(reference: ExtractedReference, result: ReferenceResult) -> str:
    """The reference as written, the corrected APA 7 one, and what differs (escaped HTML)."""
    parts = [html.escape(one_line(reference.text, 2000))]
    if result.error:
        parts.append(f'<div class="diff">{html.escape(result.error)}</div>')
    elif result.status != "unverified":
        parts.append(f'<div class="apa">APA 7: {html.escape(result.reference)}</div>')
    wrong = differing_fields(result)
    if wrong:
        parts.append(f'<div class="diff">fields that differ: {html.escape(", ".join(wrong))}</div>')
    for notice in result.notices:
        parts.append(f'<div class="notice">{html.escape(notice_text(notice))}</div>')
    return "".join(parts)


def notice_text(notice: dict[str, str | None]) -> str:
    """One notice of a reference's work, as the reports print it ("RETRACTED (2021-03-15) ...")."""
    kind = str(notice.get("kind") or "notice")
    head = {"retraction": "RETRACTED", "expression-of-concern": "EXPRESSION OF CONCERN"}.get(
        kind, kind.upper()
    )
    date = f" ({notice['date']})" if notice.get("date") else ""
    doi = f", notice https://doi.org/{notice['doi']}" if notice.get("doi") else ""
    source = f", source: {notice['source']}" if notice.get("source") else ""
    return one_line(f"{head}{date}{doi}{source}", 300)


def _cited(citations: Sequence[InTextCitation]) -> str:
    """Where a reference is cited ("line 3; page 2, line 9"), or that it is not."""
    if not citations:
        return "not cited"
    shown = "; ".join(str(c.location) for c in citations[:5])
    return shown + (f" and {len(citations) - 5} more" if len(citations) > 5 else "")


def _references_table(rows: Sequence[Sequence[object]], classes: Sequence[str]) -> str:
    """The references table, each row classed by its status (the status cell's colour)."""
    return table(
        ["#", "label", "where", "status", "reference", "cited at"],
        rows,
        {0},
        row_classes=classes,
        markup={4},
        classes={2: "where", 3: "status", 4: "ref"},
    )
