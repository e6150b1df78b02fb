"""``POST /api/verify-document`` and ``GET /api/documents/{id}`` over real HTTP on loopback.

A real service (uvicorn on 127.0.0.1, the reference workers, a local index) on SQLite and on
PostgreSQL; documents made here: a Markdown paper, a PDF drawn with reportlab, hostile files.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from citeverify_core.client import ReferenceClient
from citeverify_core.errors import (
    DocumentError,
    InputError,
    InsufficientTokensError,
    RateLimitError,
)
from citeverify_core.references import ReferenceVerifier
from citeverify_core.references.document import extract_document
from citeverify_core.service import store as _store
from citeverify_core.service.jobs import JobStore
from citeverify_core.service.limits import ExtractionSlots
from citeverify_core.service.routes.documents import MULTIPART_OVERHEAD
from citeverify_core.service.schema import DocumentSubmission
from citeverify_core.service.store import SCHEMA_VERSION
from tests.support.pg import postgres_url
from tests.support.service import (
    FAKE,
    KUHN,
    LECUN_WRONG_YEAR,
    Service,
    bearer,
    build_index,
    free_port,
    serve_refusal,
    wait_done,
    wait_up,
)

__all__ = ["postgres_url"]

REFERENCES = [KUHN, LECUN_WRONG_YEAR, FAKE]
PAPER = "\n".join(
    [
        "# On paradigms",
        "",
        "Normal science works inside a paradigm [1]. Convolutional networks read digits [2].",
        "Sponges are said to compute [3].",
        "",
        "## References",
        "",
        *(f"[{i}] {ref}" for i, ref in enumerate(REFERENCES, 1)),
        "",
    ]
)


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` that holds ``needle``."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def balance(client: httpx.Client, key: str) -> dict[str, Any]:
    answer: dict[str, Any] = client.get("/api/verify-reference/balance", headers=bearer(key)).json()
    return answer


def upload(
    client: httpx.Client, key: str, data: bytes, name: str, title: str | None = None
) -> httpx.Response:
    form = {"title": title} if title is not None else None
    return client.post(
        "/api/verify-document",
        files={"file": (name, data, "application/octet-stream")},
        data=form,
        headers=bearer(key),
    )


def reportlab_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with ``lines`` drawn top to bottom (reportlab, Helvetica 10 pt)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setTitle("Paradigms in print")
    y = A4[1] - 72
    for line in lines:
        pdf.setFont("Helvetica", 10)
        pdf.drawString(72, y, line)
        y -= 14
    pdf.save()
    return out.getvalue()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_index(tmp_path_factory.mktemp("index"))


def _database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "jobs.sqlite")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def service(request: pytest.FixtureRequest, tmp_path: Path, index: Any) -> Iterator[Service]:
    db = _database(request, tmp_path)
    with Service(db, index, poll_interval=0.05, max_document_bytes=200_000) as running:
        yield running


@pytest.fixture(params=["sqlite", "postgresql"])
def held_service(request: pytest.FixtureRequest, tmp_path: Path, index: Any) -> Iterator[Service]:
    """The service without its workers: a job waits until the test runs it (``store.process``)."""
    db = _database(request, tmp_path)
    with Service(db, index, workers=False, max_document_bytes=200_000) as running:
        yield running


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=60) as http:
        yield http


@pytest.fixture
def held_client(held_service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=held_service.url, timeout=60) as http:
        yield http


# --- the upload ----------------------------------------------------------------------------------


def test_a_markdown_upload_queues_one_job_per_reference_and_charges_one_token_each(
    held_service: Service, held_client: httpx.Client
) -> None:
    # No worker runs until the test says so: the balance read right after the upload is the
    # one of three queued jobs, whatever the machine's load (a worker that ended a job first
    # made it 2).
    service, client = held_service, held_client
    key = service.key(tokens=10)
    response = upload(client, key, PAPER.encode(), "paper.md", title="Paradigms")
    assert response.status_code == 200, response.text
    body = response.json()
    assert DocumentSubmission.model_validate(body)  # the documented shape
    assert len(body["jobIds"]) == len(REFERENCES)
    assert body["tokensAvailable"] == 6  # one for the reading, one a reference
    assert balance(client, key)["pendingTokens"] == 3  # the reading's is spent already
    assert (body["title"], body["fileName"], body["format"]) == ("Paradigms", "paper.md", "md")
    assert [r["text"] for r in body["references"]] == REFERENCES
    assert [r["label"] for r in body["references"]] == ["1", "2", "3"]
    assert [r["location"] for r in body["references"]] == [
        {"page": None, "line": line_of(PAPER, ref)} for ref in REFERENCES
    ]
    assert [r["jobId"] for r in body["references"]] == body["jobIds"]
    assert body["counts"]["references"] == body["counts"]["queued"] == 3
    assert body["counts"]["findings"] == len(body["document"]["findings"])
    queued = client.post(
        "/api/verify-reference/results", json={"jobIds": body["jobIds"]}, headers=bearer(key)
    ).json()["jobs"]
    assert [j["state"] for j in queued] == ["waiting"] * 3

    # The jobs are verify-reference's: run by a worker, polled and settled there.
    assert service.store.process() == 3
    jobs = wait_done(client, key, body["jobIds"])
    assert [j["result"]["status"] for j in jobs] == [
        "verified",
        "verified-with-error",
        "unverified",
    ]
    after = balance(client, key)
    assert (after["totalAvailable"], after["pendingTokens"]) == (6, 0)

    history = client.get("/api/verify-reference/history", headers=bearer(key)).json()
    (doc,) = history["documents"]
    assert (doc["id"], doc["title"], doc["referenceCount"]) == (body["documentId"], "Paradigms", 3)
    assert (doc["fileName"], doc["format"], doc["status"]) == ("paper.md", "md", "COMPLETED")

    stored = client.get(f"/api/documents/{body['documentId']}", headers=bearer(key)).json()
    assert stored["status"] == "COMPLETED"
    assert [r["jobId"] for r in stored["references"]] == body["jobIds"]
    assert [r["location"] for r in stored["references"]] == [
        r["location"] for r in body["references"]
    ]
    assert [r["result"]["status"] for r in stored["references"]] == [
        "verified",
        "verified-with-error",
        "unverified",
    ]
    assert stored["document"] == body["document"]


def test_a_json_text_body_is_a_document_too_and_its_title_defaults_to_the_file(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=5)
    response = client.post(
        "/api/verify-document", json={"text": PAPER, "name": "notes.md"}, headers=bearer(key)
    )
    assert response.status_code == 200, response.text
    body = response.json()
    # The Markdown reader takes its first "# " heading as the title (or the file's name).
    assert body["title"] in {"On paradigms", "notes.md"}
    assert body["tokensAvailable"] == 1
    history = client.get("/api/verify-reference/history", headers=bearer(key)).json()
    assert history["documents"][0]["title"] == body["title"]
    # Cancelled as a document of verify-reference is: what had not run yet is refunded.
    cancelled = client.post(
        "/api/verify-reference/cancel",
        json={"documentId": body["documentId"]},
        headers=bearer(key),
    ).json()
    assert cancelled["documentId"] == body["documentId"]
    assert cancelled["refundedTokens"] == cancelled["cancelledJobs"]
    assert balance(client, key)["totalAvailable"] == 1 + cancelled["refundedTokens"]
    states = [j["state"] for j in wait_done(client, key, body["jobIds"])]
    assert states.count("failed") == cancelled["cancelledJobs"]


def test_a_pdf_upload_has_pages_and_lines(service: Service, client: httpx.Client) -> None:
    lines = [
        "Paradigms in print",
        "Normal science works inside a paradigm [1].",
        "References",
        *(f"[{i}] {ref}" for i, ref in enumerate(REFERENCES, 1)),
    ]
    key = service.key(tokens=5)
    response = upload(client, key, reportlab_pdf(lines), "print.pdf")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["format"] == "pdf"
    assert body["document"]["pages"] == 1
    assert [r["label"] for r in body["references"]] == ["1", "2", "3"]
    assert [r["text"] for r in body["references"]] == REFERENCES
    assert all(r["location"]["page"] == 1 for r in body["references"])
    assert [r["location"]["line"] for r in body["references"]] == sorted(
        {r["location"]["line"] for r in body["references"]}
    )
    assert body["tokensAvailable"] == 1  # the reading and three references


def test_without_enough_tokens_it_is_402_and_nothing_is_queued(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=2)
    response = upload(client, key, PAPER.encode(), "paper.md")
    assert response.status_code == 402
    assert response.json()["error"]["code"] == "insufficient_tokens"
    assert "need 3 token(s); the key has 1" in response.json()["error"]["message"]
    assert balance(client, key)["totalAvailable"] == 1  # the reading was done: it is paid
    assert (
        client.get("/api/verify-reference/history", headers=bearer(key)).json()["documents"] == []
    )


def test_the_idempotency_key_replays_the_first_answer_without_charging_again(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=10)
    headers = {**bearer(key), "Idempotency-Key": "upload-1"}
    files = {"file": ("paper.md", PAPER.encode())}
    first = client.post("/api/verify-document", files=files, headers=headers)
    again = client.post("/api/verify-document", files=files, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.json()["documentId"] == first.json()["documentId"]
    assert balance(client, key)["totalAvailable"] == 6  # the first: its reading, 3 references
    other = client.post(
        "/api/verify-document",
        files={"file": ("paper.md", PAPER.encode() + b"\n")},
        headers=headers,
    )
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"


# --- limits and bad documents ---------------------------------------------------------------------


def test_a_body_over_the_limit_is_413_before_it_is_read(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=5)
    huge = b"x" * (200_000 + MULTIPART_OVERHEAD + 1)
    response = upload(client, key, huge, "huge.txt")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"

    # Streamed without a Content-Length: cut off as the bytes pass the limit.
    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b'{"text": "' + b"y" * 10_000

    streamed = client.post(
        "/api/verify-document",
        content=chunks(),
        headers={**bearer(key), "Content-Type": "application/json"},
    )
    assert streamed.status_code == 413

    # Under the body limit but over the document limit: the document's own 413.
    over = upload(client, key, b"y" * 200_001, "big.txt")
    assert over.status_code == 413
    assert over.json()["error"]["code"] == "too-large"
    assert balance(client, key)["totalAvailable"] == 5


def encrypted_pdf() -> bytes:
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, encrypt=pdfencrypt.StandardEncryption("secret", canPrint=0))
    pdf.drawString(72, 720, "References")
    pdf.drawString(72, 700, "[1] " + KUHN)
    pdf.save()
    return out.getvalue()


def pdf_without_text() -> bytes:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out)
    for y in range(100, 700, 40):  # a "scan": shapes, no text
        pdf.rect(72, y, 400, 20, fill=1)
    pdf.showPage()
    pdf.save()
    return out.getvalue()


BAD = {
    "no-reference-list": (b"# Notes\n\nNo bibliography here at all.\n", "notes.md"),
    "unsupported-format": (b"\x00\x01 binary", "slides.pptx"),
    "corrupt": (b"%PDF-1.7\n" + b"\x00garbage" * 50, "broken.pdf"),
    "encrypted": (None, "locked.pdf"),
    "no-text-layer": (None, "scan.pdf"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_document_that_cannot_be_read_is_422_with_the_extractor_s_code_and_costs_its_reading(
    service: Service, client: httpx.Client, case: str
) -> None:
    data, name = BAD[case]
    if data is None:
        data = encrypted_pdf() if case == "encrypted" else pdf_without_text()
    # What the library says of this file is what the service answers.
    with pytest.raises(DocumentError) as raised:
        extract_document(data, name=name)
    assert raised.value.code == case
    key = service.key(tokens=5)
    response = upload(client, key, data, name)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == raised.value.code
    assert error["message"] == str(raised.value)
    assert balance(client, key)["totalAvailable"] == 4  # the reading's token: it was read
    assert (
        client.get("/api/verify-reference/history", headers=bearer(key)).json()["documents"] == []
    )


@pytest.mark.parametrize(
    ("body", "kind", "code"),
    [
        pytest.param(
            b"text=hello", "application/x-www-form-urlencoded", "invalid_request", id="form"
        ),
        pytest.param(b'{"name": "a.md"}', "application/json", "invalid_request", id="no-text"),
        pytest.param(b"[1, 2]", "application/json", "invalid_request", id="array"),
        pytest.param(
            b"--x\r\nbroken", "multipart/form-data; boundary=x", "invalid_request", id="cut"
        ),
        pytest.param(
            b"--x--\r\n", "multipart/form-data; boundary=x", "invalid_request", id="no-file"
        ),
        pytest.param(b"--x--", "multipart/form-data", "invalid_request", id="no-boundary"),
        pytest.param(
            json.dumps({"text": "%PDF-1.4", "name": "a.pdf"}).encode(),
            "application/json",
            "unsupported-format",
            id="json-pdf",
        ),
    ],
)
def test_bad_bodies_are_refused_with_the_error_envelope(
    service: Service, client: httpx.Client, body: bytes, kind: str, code: str
) -> None:
    key = service.key(tokens=5)
    response = client.post(
        "/api/verify-document", content=body, headers={**bearer(key), "Content-Type": kind}
    )
    assert response.status_code == (400 if code == "invalid_request" else 422), response.text
    assert response.json()["error"]["code"] == code
    assert balance(client, key)["totalAvailable"] == 5


def test_without_a_valid_key_it_is_401(service: Service, client: httpx.Client) -> None:
    files = {"file": ("paper.md", PAPER.encode())}
    assert client.post("/api/verify-document", files=files).status_code == 401
    wrong = client.post("/api/verify-document", files=files, headers=bearer("cvk_wrong"))
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"


def test_a_reference_too_long_to_verify_fails_at_once_and_costs_no_verification(
    service: Service, client: httpx.Client
) -> None:
    long_ref = "Smith, J. (2020). " + "A very long title " * 80 + ". Journal, 1, 1-2."
    paper = f"Text [1] [2].\n\nReferences\n\n[1] {KUHN}\n[2] {long_ref}\n"
    key = service.key(tokens=5)
    body = client.post(
        "/api/verify-document", json={"text": paper, "name": "p.txt"}, headers=bearer(key)
    ).json()
    assert body["counts"] == {**body["counts"], "references": 2, "queued": 1, "notVerifiable": 1}
    assert body["tokensAvailable"] == 3  # the reading and the one reference verified
    jobs = wait_done(client, key, body["jobIds"])
    assert jobs[0]["state"] == "completed"
    assert jobs[1]["state"] == "failed" and "1,200" in jobs[1]["error"]


# --- the stored document ---------------------------------------------------------------------------


def test_a_document_is_its_key_s_only(service: Service, client: httpx.Client) -> None:
    owner, other = service.key(tokens=5, name="owner"), service.key(tokens=5, name="other")
    doc = upload(client, owner, PAPER.encode(), "paper.md").json()["documentId"]
    assert client.get(f"/api/documents/{doc}", headers=bearer(owner)).status_code == 200
    stranger = client.get(f"/api/documents/{doc}", headers=bearer(other))
    assert stranger.status_code == 404
    assert stranger.json()["error"]["code"] == "not_found"
    assert client.get("/api/documents/nope", headers=bearer(owner)).status_code == 404
    assert client.get(f"/api/documents/{doc}").status_code == 401
    # Ids are 32 hex digits: anything past 40 characters is refused before the store is asked.
    assert client.get(f"/api/documents/{'x' * 41}", headers=bearer(owner)).status_code == 400
    assert client.get(f"/api/documents/{'x' * 40}", headers=bearer(owner)).status_code == 404


def test_a_list_submitted_as_references_reads_as_a_document_without_locations(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=5)
    sub = client.post(
        "/api/verify-reference", json={"references": [KUHN], "title": "list"}, headers=bearer(key)
    ).json()
    view = client.get(f"/api/documents/{sub['documentId']}", headers=bearer(key)).json()
    assert (view["title"], view["fileName"], view["document"]) == ("list", None, {})
    assert [(r["text"], r["location"], r["jobId"]) for r in view["references"]] == [
        (KUHN, None, sub["jobIds"][0])
    ]


def test_the_client_submits_a_document_and_reads_it_back(service: Service, tmp_path: Path) -> None:
    key = service.key(tokens=10)
    paper = tmp_path / "paper.md"
    paper.write_text(PAPER)
    with ReferenceClient(service.url, api_key=key) as client:
        submitted = client.submit_document(paper, title="From a path")
        assert submitted.title == "From a path"
        assert submitted.tokensAvailable == 6  # the reading and three references
        assert [r.label for r in submitted.references] == ["1", "2", "3"]
        results = client.wait(submitted.jobIds, timeout=60)
        assert [j.result.status for j in results if j.result] == [
            "verified",
            "verified-with-error",
            "unverified",
        ]
        view = client.document(submitted.documentId)
        assert view.status == "COMPLETED"
        assert [r.jobId for r in view.references] == submitted.jobIds
        again = client.submit_document(PAPER.encode(), name="bytes.md")
        assert again.fileName == "bytes.md"
        with pytest.raises(DocumentError) as raised:  # its reading paid: 1 token left
            client.submit_document(b"# Notes\n\nnothing\n", name="n.md")
        assert raised.value.code == "no-reference-list"
        with pytest.raises(InsufficientTokensError):
            client.submit_document(PAPER.encode(), name="bytes.md")
        with pytest.raises(InputError):
            client.submit_document(b"x")  # bytes without a name


def test_a_schema_5_store_gains_the_document_columns_and_keeps_its_documents(
    tmp_path: Path, index: Any
) -> None:
    path = tmp_path / "old.sqlite"
    old = JobStore(path, ReferenceVerifier(index))
    old.submit([KUHN], title="before")
    with old.transaction() as db:  # back to schema 5: no document columns
        for column in ("name", "format", "extracted"):
            db.exec_driver_sql(f"ALTER TABLE documents DROP COLUMN {column}")
        db.exec_driver_sql("UPDATE citeverify_schema SET version = 5")
    old.close()
    with Service(path, index) as service, httpx.Client(base_url=service.url) as client:
        columns = {c["name"] for c in sa.inspect(service.store.engine).get_columns("documents")}
        assert {"name", "format", "extracted"} <= columns
        with service.store.transaction() as db:
            version = db.execute(sa.text("SELECT max(version) FROM citeverify_schema")).scalar()
        assert version == SCHEMA_VERSION == 7
        key = service.key(tokens=5)
        assert upload(client, key, PAPER.encode(), "paper.md").status_code == 200
        titles = [d["title"] for d in service.store.history(limit=5)["documents"]]
        assert sorted(titles) == ["On paradigms", "before"] or sorted(titles) == [
            "before",
            "paper.md",
        ]


def test_more_references_than_a_document_may_have_is_422_and_costs_its_reading(
    service: Service, client: httpx.Client
) -> None:
    entries = "\n".join(f"[{i}] Author, A. ({1900 + i % 100}). Title {i}." for i in range(1, 2002))
    paper = f"Text [1].\n\nReferences\n\n{entries}\n"
    key = service.key(tokens=5000)
    response = client.post(
        "/api/verify-document", json={"text": paper, "name": "long.txt"}, headers=bearer(key)
    )
    assert response.status_code == 422, response.text[:300]
    assert response.json()["error"]["code"] == "too-many-references"
    assert "2,000" in response.json()["error"]["message"]
    assert balance(client, key)["totalAvailable"] == 4999


def test_a_reading_over_the_time_limit_is_422_timeout_and_costs_its_reading(
    tmp_path: Path, index: Any
) -> None:
    lines = [f"Line {i} of a long report, [1] cited." for i in range(2000)]
    lines += ["References", f"[1] {KUHN}"]
    data = reportlab_pdf_pages(lines)
    with (
        Service(tmp_path / "jobs.sqlite", index, extraction_timeout=0.001) as service,
        httpx.Client(base_url=service.url, timeout=60) as client,
    ):
        key = service.key(tokens=5)
        response = upload(client, key, data, "slow.pdf")
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "timeout"
        assert "0.001 s" in error["message"]
        assert balance(client, key)["totalAvailable"] == 4
        # Stopped, not reading on in the background: the slot is free as the answer comes.
        slots = service.app.state.documents.slots
        deadline = time.monotonic() + 30
        while slots.running and time.monotonic() < deadline:
            time.sleep(0.01)
        assert slots.running == 0


def reportlab_pdf_pages(lines: list[str]) -> bytes:
    """A PDF of ``lines``, 50 a page (reportlab)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    for start in range(0, len(lines), 50):
        y = A4[1] - 72
        for line in lines[start : start + 50]:
            pdf.setFont("Helvetica", 10)
            pdf.drawString(72, y, line)
            y -= 14
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def test_the_file_name_is_its_own_name_without_folders(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=20)
    for sent, kept in [
        ("../../secret/paper.md", "paper.md"),
        ("C:\\Users\\me\\paper.md", "paper.md"),
    ]:
        body = upload(client, key, PAPER.encode(), sent).json()
        assert body["fileName"] == kept
    boundary = "b0undary"
    raw = (
        (
            f"--{boundary}\r\n"
            "Content-Disposition: form-data; name=\"file\"; filename*=UTF-8''p%C3%A4per.md\r\n"
            "Content-Type: text/markdown\r\n\r\n"
        ).encode()
        + PAPER.encode()
        + f"\r\n--{boundary}--\r\n".encode()
    )
    encoded = client.post(
        "/api/verify-document",
        content=raw,
        headers={**bearer(key), "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert encoded.status_code == 200, encoded.text
    assert encoded.json()["fileName"] == "päper.md"


def test_the_file_part_after_too_many_parts_is_not_looked_for(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=5)
    fields = {f"extra{i}": "x" for i in range(20)}
    response = client.post(
        "/api/verify-document",
        data=fields,
        files={"file": ("paper.md", PAPER.encode())},
        headers=bearer(key),
    )
    assert response.status_code == 400
    assert "no 'file' part" in response.json()["error"]["message"]
    assert balance(client, key)["totalAvailable"] == 5


def test_the_async_client_submits_a_document(service: Service) -> None:
    from citeverify_core.client import AsyncReferenceClient

    key = service.key(tokens=4)  # the reading and three references

    async def run() -> tuple[Any, Any]:
        async with AsyncReferenceClient(service.url, api_key=key) as client:
            submitted = await client.submit_document(PAPER.encode(), name="a.md", title="async")
            return submitted, await client.document(submitted.documentId)

    submitted, view = asyncio.run(run())
    assert submitted.title == view.title == "async"
    assert [r.jobId for r in view.references] == submitted.jobIds
    assert [r.location for r in view.references] == [
        {"page": None, "line": line_of(PAPER, ref)} for ref in REFERENCES
    ]


def test_documents_read_at_once_are_bounded_and_the_rest_refused_with_429(
    tmp_path: Path, index: Any
) -> None:
    lines = [f"Line {i} of a long report, [1] cited." for i in range(1500)]
    slow = reportlab_pdf_pages([*lines, "References", f"[1] {KUHN}"])
    slots = ExtractionSlots(per_instance=1, per_key=1)
    with (
        Service(tmp_path / "jobs.sqlite", index, extraction_slots=slots) as service,
        httpx.Client(base_url=service.url, timeout=120) as client,
        ThreadPoolExecutor(1) as pool,
    ):
        first_key, second_key = service.key(tokens=5), service.key(tokens=5)
        first = pool.submit(upload, client, first_key, slow, "slow.pdf")
        deadline = time.monotonic() + 30
        while slots.running == 0 and time.monotonic() < deadline:  # the first is being read
            time.sleep(0.01)
        assert slots.running == 1
        refused = upload(client, second_key, PAPER.encode(), "paper.md")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limited"
        assert "reading 1 documents at once" in refused.json()["error"]["message"]
        assert refused.headers["retry-after"] == "1"
        assert first.result().status_code == 200
        assert balance(client, second_key)["totalAvailable"] == 5
        # Once the first is read, the next is taken.
        assert upload(client, second_key, PAPER.encode(), "paper.md").status_code == 200


def test_a_document_s_own_overlong_title_is_cut_not_refused(
    service: Service, client: httpx.Client
) -> None:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out)
    pdf.setTitle("A title that runs on " * 40 + "\x00")  # 840 characters in the metadata
    pdf.drawString(72, 720, "As shown [1].")
    pdf.drawString(72, 700, "References")
    pdf.drawString(72, 680, f"[1] {KUHN}")
    pdf.save()
    key = service.key(tokens=5)
    response = upload(client, key, out.getvalue(), "long-title.pdf")
    assert response.status_code == 200, response.text
    title = response.json()["title"]
    assert 0 < len(title) <= 500 and "\x00" not in title
    history = client.get("/api/verify-reference/history", headers=bearer(key)).json()
    assert history["documents"][0]["title"] == title


# --- uploads admitted before their body (issue 33) -----------------------------------------------


def test_a_key_without_tokens_is_402_before_its_body_and_the_store_does_not_grow(
    service: Service, client: httpx.Client
) -> None:
    key = service.key(tokens=0)
    for name in ("paper.md", "paper.txt", "paper.html", "paper.pdf", "paper.docx", "paper.tex"):
        response = upload(client, key, PAPER.encode(), name)
        assert response.status_code == 402, response.text
        assert "reading a document: need 1 token(s); the key has 0" in response.text
        assert response.headers.get("connection") == "close"  # the body is not read on
    assert balance(client, key)["totalAvailable"] == 0
    history = client.get("/api/verify-reference/history", headers=bearer(key)).json()
    assert history["documents"] == []


def test_uploads_of_one_key_at_once_are_bounded_across_processes(
    service: Service, index: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two stores on one database stand for two processes of `serve --workers 2`.
    other = JobStore(service.store.path, ReferenceVerifier(index))
    try:
        key = service.key(tokens=5)
        tenant = service.store.authenticate(key)["id"]

        def tokens() -> tuple[int, int]:
            held = service.store.balance(tenant)
            return held["totalAvailable"], held["pendingTokens"]

        first = service.store.take_upload(tenant, per_key=1, lease=60, cost=1)
        with pytest.raises(RateLimitError, match="1 document upload"):
            other.take_upload(tenant, per_key=1, lease=60, cost=1)
        assert tokens() == (4, 1)  # the refused one reserved nothing
        other.finish_upload(first, spent=False)  # ended by the other process: refunded
        second = other.take_upload(tenant, per_key=1, lease=60, cost=1)
        service.store.finish_upload(second, spent=True)
        service.store.finish_upload(second, spent=True)  # twice: the second does nothing
        assert tokens() == (4, 0)
        # An upload whose process died mid-way is refunded when its lease has run out.
        service.store.take_upload(tenant, per_key=1, lease=60, cost=1)
        assert tokens() == (3, 1)
        now = _store.clock()
        monkeypatch.setattr(_store, "clock", lambda: now + 61)
        third = other.take_upload(tenant, per_key=1, lease=60, cost=1)
        assert tokens() == (3, 1)  # the dead one's token back, this one's taken
        other.finish_upload(third, spent=True)
        assert tokens() == (3, 0)
    finally:
        other.close()


def test_a_body_that_drips_is_408_within_the_body_timeout(tmp_path: Path, index: Any) -> None:
    with Service(tmp_path / "jobs.sqlite", index, body_timeout=1.0) as service:
        key = service.key(tokens=5)
        host, port = service.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=60) as sock:
            sock.sendall(
                b"POST /api/verify-document HTTP/1.1\r\nHost: x\r\n"
                + f"Authorization: Bearer {key}\r\n".encode()
                + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                + b'{"text": "a'
            )
            answer = sock.recv(65536)  # waits for the service's answer: the rest never comes
        head = answer.decode("latin-1").lower()
        assert head.startswith("http/1.1 408"), head[:200]
        assert "connection: close" in head
        assert "body_timeout" in head
        with httpx.Client(base_url=service.url) as client:
            assert balance(client, key)["totalAvailable"] == 5  # nothing was read: refunded


def test_documents_past_their_retention_are_purged_with_their_jobs(
    held_service: Service, held_client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, client = held_service, held_client
    key = service.key(tokens=20)
    done = upload(client, key, PAPER.encode(), "done.md").json()
    assert service.store.process() == 3  # its jobs ended
    waiting = upload(client, key, PAPER.encode(), "waiting.md").json()  # its jobs wait
    listed = service.store.submit([KUHN], title="a list, not an upload")
    assert service.store.prune_documents(30) == 0  # nothing is 30 days old yet
    now = _store.clock()
    monkeypatch.setattr(_store, "clock", lambda: now + 31 * 86400)
    assert service.store.prune_documents(30) == 1  # the ended upload; not the one still waiting
    gone = client.get(f"/api/documents/{done['documentId']}", headers=bearer(key))
    assert gone.status_code == 404
    kept = client.get(f"/api/documents/{waiting['documentId']}", headers=bearer(key))
    assert kept.status_code == 200
    assert service.store.document(listed["documentId"]) is not None  # lists are not uploads
    polled = client.post(
        "/api/verify-reference/results", json={"jobIds": done["jobIds"]}, headers=bearer(key)
    ).json()["jobs"]
    assert all(job["state"] == "not-found" for job in polled)


def test_serve_refuses_a_body_timeout_or_retention_out_of_range(tmp_path: Path) -> None:
    for flag, value in (("--body-timeout", "0"), ("--document-retention-days", "-1")):
        result = serve_refusal(tmp_path, flag, value)
        assert result.exit_code == 2, result.output
        assert flag in result.output


def test_uploads_in_flight_at_sigterm_are_told_503_not_a_500(tmp_path: Path, index: Any) -> None:
    from citeverify_core.service.tenants import TenantStore

    db = tmp_path / "jobs.sqlite"
    keys = TenantStore(db)
    uploaders = [keys.create_key(f"uploader {i}", tokens=50)[0] for i in range(3)]
    keys.close()
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "citeverify_core", "serve", "--port", str(port), "--db", str(db),
         "--index", index.path, "--shutdown-timeout", "1", "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    sockets: list[socket.socket] = []
    try:
        wait_up(f"http://127.0.0.1:{port}", process, timeout=60)
        for key in uploaders:  # one upload a key (the bound), whose body is still coming
            sock = socket.create_connection(("127.0.0.1", port), timeout=60)
            sock.sendall(
                b"POST /api/verify-document HTTP/1.1\r\nHost: x\r\n"
                + f"Authorization: Bearer {key}\r\n".encode()
                + b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                + b'{"text": "a'
            )
            sockets.append(sock)
        time.sleep(0.5)  # let them reach the app (an answer to any of them would show below)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        answers = [sock.recv(65536).decode("latin-1") for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    assert any(answers)
    for answer in answers:  # each told the service is going away (or its connection closed)
        if answer:
            assert answer.startswith("HTTP/1.1 503"), answer[:200]
            assert '"shutting_down"' in answer
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
