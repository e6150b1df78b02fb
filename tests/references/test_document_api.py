"""The public Python surface of whole documents: formats, limits, and a verified report."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeverify_core.errors import DocumentError
from citeverify_core.references import LocalIndex, ReferenceVerifier
from citeverify_core.references.document import (
    DOCUMENT_FORMATS,
    MAX_DOCUMENT_BYTES,
    document_format,
    extract_document,
)
from citeverify_core.references.document.report import DocumentReport, verify_document
from tests.conftest import DATA

KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
FAKE = "Doe, J. (2020). Quantum sponges of the deep sea. Journal of Nothing, 1, 1-2."


def test_the_format_comes_from_the_suffix_then_the_bytes() -> None:
    assert document_format("Paper.PDF") == "pdf"
    assert document_format("notes.markdown") == "md"
    assert document_format("page.htm") == "html"
    assert document_format("upload", b"%PDF-1.7\n...") == "pdf"
    assert document_format("upload", b"PK\x03\x04rest") == "docx"
    assert set(DOCUMENT_FORMATS) >= {"pdf", "docx", "tex", "bbl", "md", "html", "txt", "bib"}


def test_an_unknown_format_is_refused_with_the_formats_read() -> None:
    with pytest.raises(DocumentError) as caught:
        document_format("slides.pptx", b"PKnot-a-zip")
    assert caught.value.code == "unsupported-format"
    assert ".pdf" in str(caught.value) and ".pptx" in str(caught.value)


def test_a_document_over_the_limit_is_refused_before_it_is_read() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_document(b" " * (MAX_DOCUMENT_BYTES + 1), name="huge.txt")
    assert caught.value.code == "too-large"
    assert "huge.txt" in str(caught.value)


def test_a_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="path or bytes"):
        extract_document(12345)  # type: ignore[arg-type]


def test_verify_document_gives_a_report_with_counts_locations_and_findings(
    tmp_path: Path,
) -> None:
    index = LocalIndex(tmp_path / "index.sqlite")
    index.build(DATA / "works-crossref.jsonl")
    paper = (
        "# Paradigms\n\nScience moves in revolutions [1]. Sponges think [2]. See also [3].\n\n"
        f"## References\n\n1. {KUHN}\n2. {FAKE}\n"
    )
    document = extract_document(paper.encode(), name="paper.md")
    report = verify_document(document, ReferenceVerifier(index, sources=["local"]))
    index.close()

    assert isinstance(report, DocumentReport)
    assert [r.status for r in report.results] == ["verified", "unverified"]
    assert report.counts()["verified"] == 1 and report.counts()["unverified"] == 1
    data = report.to_dict()
    assert data["name"] == "paper.md"
    assert [r["location"]["line"] for r in data["references"]] == [7, 8]
    assert [f["kind"] for f in data["findings"]] == ["missing-entry"]
    assert "[3]" in data["findings"][0]["message"]
    text = report.to_text()
    assert "line 7" in text and "missing" in text.lower()
    html = report.to_html()
    assert "<script" not in html.lower() and "Quantum sponges" in html
