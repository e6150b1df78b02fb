"""The review page's whole-document upload, in Debian's Chromium (Playwright).

A reviewer drops a paper on the References tab: the page uploads it to
``POST /api/verify-document``, lists the references with their labels and locations, polls their
jobs to the end, and shows the consistency findings; a document the service cannot read is a
clear message. The service is real (loopback, SQLite, the workers, a local index); the files are
made here (Markdown, and a PDF drawn with reportlab). Without /usr/bin/chromium these skip (and
fail under ``CI=true``), as the page's other tests do.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from citeverify_core.references.document import extract_document
from tests.service.test_verify_document import (
    PAPER,
    REFERENCES,
    encrypted_pdf,
    line_of,
    pdf_without_text,
    reportlab_pdf,
)
from tests.service.test_web import Page, browser
from tests.support.service import KUHN, Service, build_index

__all__ = ["browser"]  # the fixture, imported for pytest to find

DOCUMENT_LIMIT = 300_000


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("web-document")
    with Service(
        folder / "jobs.sqlite",
        build_index(folder),
        poll_interval=0.05,
        max_document_bytes=DOCUMENT_LIMIT,
    ) as running:
        yield running


@pytest.fixture
def web(browser: Any, service: Service, tmp_path: Path) -> Iterator[Page]:
    page = Page(browser, service, tmp_path)
    # The refusals these tests provoke (the browser logs each failed fetch).
    page.expected |= {402, 413, 422}
    try:
        yield page
        assert page.errors == [], page.errors  # no script error, no CSP violation
    finally:
        page.close()


def _upload(page: Any, name: str, data: bytes, mime: str = "text/markdown") -> None:
    page.click("#tab-references")
    page.set_input_files("#doc-input", files=[{"name": name, "mimeType": mime, "buffer": data}])
    expect(page.locator("#doc-name")).to_contain_text(name)
    page.click("#doc-submit")


def _wait_done(page: Any) -> None:
    expect(page.locator("#doc-status")).to_contain_text("Done", timeout=60_000)


def test_the_drop_zone_shows_the_accepted_files_and_the_limit(web: Page) -> None:
    page = web.open(web.service.key())
    page.click("#tab-references")
    accepts = page.locator("#doc-accepts")
    expect(accepts).to_contain_text("0.3 MB")  # the service's own setting, not a default
    for suffix in (".pdf", ".docx", ".tex", ".bib", ".md", ".html", ".txt"):
        assert suffix in accepts.inner_text()
        assert suffix in (page.get_attribute("#doc-input", "accept") or "")


def test_a_markdown_paper_is_verified_with_its_labels_locations_and_findings(web: Page) -> None:
    page = web.open(web.service.key(tokens=10))
    _upload(page, "paper.md", PAPER.encode())
    page.fill("#doc-title", "")  # the document's own title, or its name
    _wait_done(page)

    summary = page.locator("#doc-result .doc-summary")
    expect(summary).to_contain_text("paper.md (md)")
    expect(summary).to_contain_text("3 found, 3 queued")
    items = page.locator("#refs-results > li")
    assert items.count() == 3
    for i, ref in enumerate(REFERENCES):
        item = items.nth(i)
        assert item.locator(".ref-label").inner_text() == f"[{i + 1}]"
        assert item.locator(".ref-where").inner_text() == f"line {line_of(PAPER, ref)}"
        assert item.locator(".ref-raw").inner_text() == ref
    statuses = [items.nth(i).locator(".ref-status .badge").inner_text() for i in range(3)]
    assert statuses == ["verified", "verified-with-error", "unverified"]

    # The findings the extractor gives for this paper are the ones shown, each readable.
    findings = extract_document(PAPER.encode(), name="paper.md").findings
    expect(page.locator("#findings-heading")).to_have_text(
        f"Consistency findings ({len(findings)})"
    )
    shown = page.locator("#doc-result li.finding")
    assert shown.count() == len(findings)
    for i, finding in enumerate(findings):
        assert finding.message in shown.nth(i).inner_text()
    if not findings:
        expect(page.locator("#no-findings")).to_contain_text("agree")
    expect(page.locator("#key-label")).to_contain_text("6 tokens")  # the reading and 3 references
    web.shot("document-markdown", publish=False)


def test_a_planted_missing_entry_and_uncited_entry_are_listed(web: Page) -> None:
    # Cites [4], which has no entry; never cites [2].
    paper = (
        "# Planted\n\nParadigms [1], sponges [3], and a ghost [4].\n\n## References\n\n"
        + "\n".join(f"[{i}] {ref}" for i, ref in enumerate(REFERENCES, 1))
        + "\n"
    )
    findings = extract_document(paper.encode(), name="planted.md").findings
    page = web.open(web.service.key(tokens=10))
    _upload(page, "planted.md", paper.encode())
    _wait_done(page)
    shown = page.locator("#doc-result li.finding")
    assert shown.count() == len(findings)
    kinds = [shown.nth(i).get_attribute("data-kind") for i in range(shown.count())]
    assert kinds == [f.kind for f in findings]
    assert {f.kind for f in findings} == {"missing-entry", "uncited-entry"}  # as planted
    missing = page.locator("#doc-result li.finding[data-kind=missing-entry]")
    expect(missing).to_have_count(1)
    expect(missing.locator(".badge")).to_have_text("Citation with no entry")
    expect(missing).to_contain_text("[4]")
    expect(missing.locator(".finding-where")).to_have_text("(line 3)")
    uncited = page.locator("#doc-result li.finding[data-kind=uncited-entry]")
    expect(uncited).to_have_count(1)
    expect(uncited.locator(".badge")).to_have_text("Entry never cited")
    expect(uncited.locator(".finding-where")).to_have_text(f"(line {line_of(paper, '[2] ')})")
    expect(page.locator("#findings-heading")).to_have_text("Consistency findings (2)")
    web.shot("document", publish=True)


def test_a_pdf_shows_pages_and_lines(web: Page) -> None:
    lines = ["A printed paper", "Kuhn said so [1].", "References"]
    lines += [f"[{i}] {ref}" for i, ref in enumerate(REFERENCES, 1)]
    data = reportlab_pdf(lines)
    expected = [
        str(r.location) for r in extract_document(data, name="printed.pdf").references
    ]  # "page 1, line 4": where the extractor placed each
    page = web.open(web.service.key(tokens=10))
    _upload(page, "printed.pdf", data, "application/pdf")
    _wait_done(page)
    items = page.locator("#refs-results > li")
    assert items.count() == 3
    where = [items.nth(i).locator(".ref-where").inner_text() for i in range(3)]
    assert where == expected
    assert all(w.startswith("page 1, line ") for w in where)
    expect(page.locator("#doc-result")).to_contain_text("printed.pdf (pdf)")
    web.shot("document-pdf", publish=False)


@pytest.mark.parametrize(
    ("name", "data", "shown"),
    [
        pytest.param(
            "notes.md", b"# Notes\n\nNo list here.\n", "No reference list found", id="no-list"
        ),
        pytest.param("slides.pptx", b"PK\x05\x06", "not read here", id="unsupported"),
        pytest.param("broken.pdf", b"%PDF-1.7\n\x00garbage", "damaged", id="corrupt"),
        pytest.param("scan.pdf", None, "No text layer: run OCR first", id="no-text-layer"),
        pytest.param("locked.pdf", None, "encrypted", id="encrypted"),
    ],
)
def test_a_document_that_cannot_be_read_is_a_clear_message(
    web: Page, name: str, data: bytes | None, shown: str
) -> None:
    if data is None:  # real PDFs: a scan without text, one that needs a password
        data = pdf_without_text() if name == "scan.pdf" else encrypted_pdf()
    page = web.open(web.service.key(tokens=10))
    _upload(page, name, data, "application/octet-stream")
    error = page.locator("#doc-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text(shown)
    expect(error).to_contain_text(name)  # the service's own message follows
    assert page.locator("#refs-results > li").count() == 0
    expect(page.locator("#key-label")).to_contain_text("10 tokens")


def test_a_file_over_the_limit_is_refused_before_it_is_sent(web: Page) -> None:
    page = web.open(web.service.key(tokens=10))
    _upload(page, "big.txt", b"x" * (DOCUMENT_LIMIT + 1), "text/plain")
    expect(page.locator("#doc-error")).to_contain_text("too large")
    expect(page.locator("#doc-error")).to_contain_text("0.3 MB")


def test_too_few_tokens_is_explained(web: Page) -> None:
    page = web.open(web.service.key(tokens=1))
    _upload(page, "paper.md", PAPER.encode())
    expect(page.locator("#doc-error")).to_contain_text("Not enough tokens")


def test_markup_in_a_document_is_shown_as_text(web: Page) -> None:
    hostile = '<img src=x onerror="document.title=1">'
    # Plain text: kept as written (the Markdown reader drops HTML tags itself).
    paper = f"{hostile}\n\nSee [1].\n\nReferences\n\n[1] {KUHN} {hostile}\n"
    page = web.open(web.service.key(tokens=10))
    _upload(page, "hostile.txt", paper.encode(), "text/plain")
    _wait_done(page)
    expect(page.locator("#refs-results .ref-raw").first).to_contain_text(hostile)
    assert page.locator("#refs-results img, #doc-result img").count() == 0
    assert page.title() == "citeverify review"
