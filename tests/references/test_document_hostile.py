"""Hostile documents (issue 26): each gets a DocumentError with its code, never a crash or a hang.

PDFs are parsed in a child process bounded in memory and time (sandbox.py); these tests run the
real child on real files: an encrypted PDF, a scan without text, corrupt and truncated files, a
FlateDecode bomb that inflates to 4 GB, lying and real huge page counts, a timeout, and Word
files that are zip bombs, broken zips, old .doc files or encrypted packages.
"""

from __future__ import annotations

import io
import os
import resource
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from citeverify_core.errors import DOCUMENT_ERROR_CODES, DocumentError
from citeverify_core.references.document import (
    extract_document,
    extract_document_bounded,
    read_document,
)
from citeverify_core.references.document.docx import read_docx
from citeverify_core.references.document.pdf import read_pdf
from citeverify_core.references.document.sandbox import Cancel, run_isolated
from tests.references.test_document_pdf import (
    Column,
    canvas_pdf,
    flate_bomb,
    raw_pdf,
    sentence,
    text_ops,
)

pytest.importorskip("pdfminer", reason="the documents extra is not installed")
pytest.importorskip("docx", reason="the documents extra is not installed")


def refused(data: bytes, name: str, **options: float) -> DocumentError:
    """The error reading ``data`` raises (the test fails when it reads)."""
    with pytest.raises(DocumentError) as info:
        read_document(data, name=name) if not options else read_pdf(data, name=name, **options)  # type: ignore[arg-type]
    error = info.value
    assert error.code in DOCUMENT_ERROR_CODES
    assert "\n" not in str(error)
    assert str(error).startswith(name)
    return error


def small_pdf(pages: int = 2) -> bytes:
    return canvas_pdf(
        [Column(72, 700).runs([sentence(p * 30 + i) for i in range(30)]) for p in range(pages)]
    )


def children() -> set[int]:
    """Live child processes of this one (Linux /proc), zombies aside."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


# --- PDF -------------------------------------------------------------------------------------


def test_a_pdf_that_needs_a_password_is_refused_as_encrypted() -> None:
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, encrypt=StandardEncryption("secret", ownerPassword="owner"))
    c.drawString(72, 700, "Hidden text")
    c.showPage()
    c.save()
    error = refused(out.getvalue(), "locked.pdf")
    assert error.code == "encrypted"
    assert "password" in str(error)


def test_a_pdf_encrypted_with_an_empty_user_password_is_read() -> None:
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, encrypt=StandardEncryption("", ownerPassword="owner", canPrint=0))
    c.drawString(72, 700, "Readable text")
    c.showPage()
    c.save()
    assert [ln.text for ln in read_pdf(out.getvalue(), name="open.pdf").lines] == ["Readable text"]


def test_a_scan_without_a_text_layer_asks_for_ocr() -> None:
    scan = raw_pdf([b"q 500 0 0 700 50 50 cm /Im1 Do Q"] * 3, image=True)
    error = refused(scan, "scan.pdf")
    assert error.code == "no-text-layer"
    assert "no text layer: run OCR first" in str(error)


def test_pages_with_only_drawings_have_no_text_layer() -> None:
    error = refused(raw_pdf([b"0 0 m 100 100 l S"]), "lines.pdf")
    assert error.code == "no-text-layer"


def test_a_scanned_page_among_text_pages_is_noted() -> None:
    pdf = raw_pdf(
        [text_ops([(72, 700, b"Text on the first page")]), b"q 500 0 0 700 50 50 cm /Im1 Do Q"],
        image=True,
    )
    doc = read_pdf(pdf, name="mixed.pdf")
    assert [ln.text for ln in doc.lines] == ["Text on the first page"]
    assert any("page 2" in note and "OCR" in note for note in doc.notes)


@pytest.mark.parametrize(
    ("data", "name"),
    [
        pytest.param(b"", "empty.pdf", id="empty"),
        pytest.param(b"Hello, this is a text file.\n", "text.pdf", id="not-a-pdf"),
        pytest.param(b"%PDF-1.7\n" + bytes(range(256)) * 40, "garbage.pdf", id="garbage"),
        pytest.param(
            b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n", "nopages.pdf", id="no-pages"
        ),
    ],
)
def test_corrupt_pdfs_are_refused_as_corrupt(data: bytes, name: str) -> None:
    assert refused(data, name).code == "corrupt"


@pytest.mark.parametrize("fraction", [0.3, 0.6, 0.9])
def test_a_truncated_pdf_is_refused_as_corrupt(fraction: float) -> None:
    pdf = small_pdf(3)
    assert refused(pdf[: int(len(pdf) * fraction)], "cut.pdf").code == "corrupt"


def test_a_flate_bomb_is_stopped_in_bounded_time_and_memory() -> None:
    bomb = raw_pdf([b""], streams=[flate_bomb(4 << 30)])  # 4 MB that inflate to 4 GB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    error = refused(bomb, "bomb.pdf")
    elapsed = time.monotonic() - started
    assert error.code in ("too-large", "timeout")
    assert elapsed < 30  # about 1 s on a quiet machine: the child hits its 1 GB limit
    # This process never held the inflated data (ru_maxrss is in KB on Linux).
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100


def test_a_huge_declared_page_count_is_refused_before_reading() -> None:
    error = refused(raw_pdf([text_ops([(72, 700, b"one page")])], declared_count=10**9), "huge.pdf")
    assert error.code == "too-large"


def test_more_real_pages_than_allowed_are_refused() -> None:
    pdf = raw_pdf([b""] * 2001, declared_count=1, compress=False)
    error = refused(pdf, "many.pdf")
    assert error.code == "too-large"
    assert "2000 pages" in str(error)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_timeout_kills_the_child_and_leaves_no_process() -> None:
    pdf = small_pdf(6)
    read_pdf(pdf, name="warm.pdf")  # a spare is waiting now
    before = children()
    error = refused(pdf, "slow.pdf", timeout=0.001)
    assert error.code == "timeout"
    time.sleep(0.2)
    # At most the spare for the next document, started after the kill.
    assert len(children() - before) <= 1


def test_reading_from_threads_as_the_service_does() -> None:
    pdfs = [small_pdf(n) for n in (1, 2, 3)]
    with ThreadPoolExecutor(3) as pool:
        docs = list(pool.map(lambda d: read_pdf(d, name="t.pdf"), pdfs))
    assert [d.pages for d in docs] == [1, 2, 3]
    assert [len(d.lines) for d in docs] == [30, 60, 90]


def test_extract_document_passes_the_pdf_error_through() -> None:
    with pytest.raises(DocumentError) as info:
        extract_document(raw_pdf([b"0 0 m 1 1 l S"]), name="blank.pdf")
    assert info.value.code == "no-text-layer"


# --- Word ------------------------------------------------------------------------------------


def docx_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def real_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph("A paragraph.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_docx_zip_bomb_is_refused_before_inflating() -> None:
    members = {
        m.filename: zipfile.ZipFile(io.BytesIO(real_docx())).read(m)
        for m in zipfile.ZipFile(io.BytesIO(real_docx())).infolist()
    }
    members["word/media/bomb.bin"] = b"\0" * (80 * 1024 * 1024)  # 80 MB that zip to 80 KB
    bomb = docx_bytes(members)
    assert len(bomb) < 1024 * 1024
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    error = refused(bomb, "bomb.docx")
    assert error.code == "too-large"
    assert "zip bomb" in str(error)
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 50


def test_a_docx_whose_zip_lies_about_sizes_is_refused() -> None:
    data = bytearray(real_docx())
    # Make the central directory claim 3 GB for every member (uncompressed size field).
    at = data.find(b"PK\x01\x02")
    while at != -1:
        data[at + 24 : at + 28] = (3 << 30).to_bytes(4, "little")
        at = data.find(b"PK\x01\x02", at + 4)
    assert refused(bytes(data), "liar.docx").code == "too-large"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        pytest.param(b"", "corrupt", id="empty"),
        pytest.param(b"PK\x03\x04 broken zip", "corrupt", id="broken-zip"),
        pytest.param(b"not a zip at all", "corrupt", id="text"),
        pytest.param(docx_bytes({"a.txt": b"x"}), "corrupt", id="zip-not-docx"),
        pytest.param(
            docx_bytes({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document"}),
            "corrupt",
            id="broken-xml",
        ),
        pytest.param(
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504, "unsupported-format", id="doc"
        ),
        pytest.param(
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptedPackage".encode("utf-16-le"),
            "encrypted",
            id="encrypted",
        ),
    ],
)
def test_broken_word_files_get_their_code(data: bytes, code: str) -> None:
    with pytest.raises(DocumentError) as info:
        read_docx(data, name="w.docx")
    assert info.value.code == code
    assert "\n" not in str(info.value)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_spare_killed_while_waiting_is_replaced_not_reported() -> None:
    import signal

    before = children()
    read_pdf(small_pdf(1), name="first.pdf")
    spares = children() - before
    for pid in spares:  # the waiting spare this test's reading started
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    assert [ln.text for ln in read_pdf(small_pdf(1), name="second.pdf").lines][:1] == [sentence(0)]


def test_without_a_child_process_the_pdf_is_read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    from citeverify_core.references.document import sandbox

    monkeypatch.setattr(sandbox, "_spares", {})
    assert len(read_pdf(small_pdf(1), name="here.pdf").lines) == 30


# --- every format bounded: extract_document_bounded (issue 33) ---------------------------------

PAPER_MD = (
    b"# A paper\n\nAs Kuhn showed [1], paradigms shift; Popper [2] disagreed.\n\n"
    b"## References\n\n"
    b"1. Kuhn, T. S. (1962). The Structure of Scientific Revolutions. Univ. of Chicago Press.\n"
    b"2. Popper, K. (1959). The Logic of Scientific Discovery. Hutchinson.\n"
)


@pytest.mark.parametrize(
    ("data", "name"),
    [(PAPER_MD, "paper.md"), (PAPER_MD.replace(b"# ", b""), "paper.txt"), (None, "paper.pdf")],
)
def test_the_bounded_reading_gives_what_the_reading_here_gives(data: bytes | None, name: str):
    if data is None:  # a PDF: read inside the document's child, without a grandchild
        data = canvas_pdf(
            [
                Column(72, 700).runs(
                    [
                        "As Kuhn showed [1], paradigms shift.",
                        "References",
                        PAPER_MD.decode().splitlines()[-2],
                    ]
                )
            ]
        )
    here = extract_document(data, name=name)
    bounded = extract_document_bounded(data, name=name, timeout=60)
    assert bounded == here
    assert bounded.references


def test_a_huge_text_is_refused_by_its_line_count_away_from_this_process() -> None:
    data = b"a\n" * (10 * 1024 * 1024)  # 20 MB, ten million lines, no reference list
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DocumentError) as info:
        extract_document_bounded(data, name="lines.txt", timeout=120)
    assert info.value.code == "too-large"
    assert "10,485,760 lines is over the 500,000 lines" in str(info.value)
    # This process held the bytes (and one copy to send them), never the lines read from them.
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100


def test_a_reading_given_up_is_killed_at_once() -> None:
    cancel = Cancel()
    with ThreadPoolExecutor(1) as pool:
        reading = pool.submit(
            run_isolated,
            "tests.support.sandbox_targets:never_ends",
            b"x",
            timeout=3600,
            cancel=cancel,
        )
        while cancel._child is None:  # the child has the work
            time.sleep(0.01)
        child = cancel._child
        cancel()
        with pytest.raises(DocumentError) as info:
            reading.result()  # returns once the child is dead: it would never end by itself
    assert info.value.code == "timeout"
    assert "given up" in str(info.value)
    assert child.poll() is not None  # dead, not reading on in the background


def test_a_cancel_before_the_child_starts_kills_it_as_it_starts() -> None:
    cancel = Cancel()
    cancel()
    with pytest.raises(DocumentError) as info:
        extract_document_bounded(PAPER_MD, name="paper.md", timeout=60, cancel=cancel)
    assert info.value.code == "timeout"


def test_the_bounded_reading_never_reads_here(monkeypatch: pytest.MonkeyPatch) -> None:
    # No child can be started: a service says so (503) rather than read unbounded in itself.
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    from citeverify_core.references.document import sandbox

    monkeypatch.setattr(sandbox, "_spares", {})
    with pytest.raises(DocumentError) as info:
        extract_document_bounded(PAPER_MD, name="paper.md", timeout=60)
    assert info.value.code == "unavailable"
