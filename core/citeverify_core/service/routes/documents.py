"""Whole documents: upload a paper, verify every reference of its list, read it back.

``POST /api/verify-document`` takes a file (multipart, field ``file``, optional ``title``) or
a text format's content as JSON (``{"text": ..., "name": "paper.md", "title": ...}``). The
service reads it (:func:`~citeverify_core.references.document.extract_document`, off the event
loop, on a small pool of its own and within a time limit), then queues one verification job per
reference, exactly as ``POST /api/verify-reference`` does (one token each; poll and cancel them
there), and keeps the document: its name, format, references' locations and labels, in-text
citations and consistency findings. ``GET /api/documents/{document_id}`` shows it again with each
reference's job.

The body is bounded before it is read: :class:`DocumentBodyLimit` refuses a body over the
document limit (plus :data:`MULTIPART_OVERHEAD`) with 413 by its Content-Length, or as soon as
the bytes streamed pass it. A document that cannot be read answers 422 with the
:class:`~citeverify_core.errors.DocumentError`'s code (``no-reference-list``,
``no-text-layer``, ``encrypted``, ``corrupt``, ``unsupported-format``, ``timeout``); one too
large answers 413 ``too-large``. Neither costs a token.
"""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

import asyncio
import email.message
import hashlib
from dataclasses import dataclass
from functools import partial
from pathlib import PurePosixPath, PureWindowsPath
from typing import Annotated, Any, cast

from fastapi import APIRouter, Header, Path, Request, Response
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from citeverify_core.errors import DocumentError, InputError
from citeverify_core.references.document import MAX_DOCUMENT_BYTES, extract_document_bounded
from citeverify_core.references.document.sandbox import Cancel
from citeverify_core.service.idempotency import IDEMPOTENCY_SECONDS, MAX_IDEMPOTENCY_KEY
from citeverify_core.service.limits import (
    EXTRACTION_TIMEOUT,
    EXTRACTIONS_PER_KEY,
    ExtractionSlots,
)
from citeverify_core.service.middleware import BODY_TIMEOUT, BodyLimit
from citeverify_core.service.responses import error_response
from citeverify_core.service.routes.dependencies import ERRORS, Key, service_state
from citeverify_core.service.schema import (
    DOCUMENT_TEXT_FORMATS,
    MAX_DOCUMENT_REFERENCES,
    MAX_TITLE_CHARS,
    DocumentBody,
    DocumentLimits,
    DocumentSubmission,
    DocumentView,
)

__all__ = [
    "DOCUMENT_PATH",
    "MULTIPART_OVERHEAD",
    "UPLOAD_SUFFIXES",
    "DocumentBodyLimit",
    "DocumentSettings",
    "router",
]

#: The upload's path (its body limit is the document limit, not the API's 256 KB).
DOCUMENT_PATH = "/api/verify-document"
#: Bytes a request body may have beyond the document itself: the multipart headers, the
#: boundaries and the title (and a JSON body's quoting of a text near the limit).
MULTIPART_OVERHEAD = 64 * 1024
#: The file suffixes an upload may have (its format comes from the suffix).
UPLOAD_SUFFIXES = (
    ".pdf",
    ".docx",
    ".tex",
    ".bbl",
    ".bib",
    ".md",
    ".markdown",
    ".html",
    ".htm",
    ".txt",
    ".text",
)
#: Uploads of one key at once across every process of the service (429 beyond, before the body
#: is read): as many as one process reads at once for a key.
UPLOADS_PER_KEY = EXTRACTIONS_PER_KEY
#: Tokens a document's reading costs (reserved before its body is read; refunded when it was
#: not read: a 400, 413, 408, 429 or a client gone; spent when it was, whatever it found).
DOCUMENT_READ_COST = 1
#: Seconds the route waits beyond the reading's own timeout (the child is killed at the
#: timeout; this is the backstop should the thread not return).
READ_GRACE = 5.0
#: Parts of a multipart body read (``file`` and ``title``; a few more are tolerated).
_MAX_PARTS = 8
#: Bytes of one part's headers.
_MAX_PART_HEADERS = 8 * 1024

router = APIRouter()


@dataclass(frozen=True, slots=True)
class DocumentSettings:
    """The document routes' settings (``app.state.documents``).

    Attributes:
        max_bytes: The largest document accepted (at most ``MAX_DOCUMENT_BYTES``).
        timeout: Seconds a document's reading may take (422 ``timeout`` after).
        slots: The bounds on documents read at once in this process (429 beyond).
        uploads_per_key: Uploads of one key at once, across every process (429 beyond, before
            the body is read).
        body_timeout: Seconds a request's body may take to arrive (408 after).
    """

    max_bytes: int
    timeout: float
    slots: ExtractionSlots
    uploads_per_key: int = UPLOADS_PER_KEY
    body_timeout: float = BODY_TIMEOUT

    @property
    def lease(self) -> float:
        """Seconds an upload in flight stays counted if its process dies before answering."""
        return self.body_timeout + self.timeout + READ_GRACE + 60.0

    @classmethod
    def checked(
        cls,
        max_bytes: int = MAX_DOCUMENT_BYTES,
        timeout: float = EXTRACTION_TIMEOUT,
        slots: ExtractionSlots | None = None,
        body_timeout: float = BODY_TIMEOUT,
    ) -> "DocumentSettings":
        """The settings, checked.

        Raises:
            InputError: a limit outside 1 byte to ``MAX_DOCUMENT_BYTES``, or a timeout that is
                not a positive number of seconds.
        """
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
            raise InputError("max_document_bytes must be an integer", path="max_document_bytes")
        if not 0 < max_bytes <= MAX_DOCUMENT_BYTES:
            msg = f"max_document_bytes must be 1 to {MAX_DOCUMENT_BYTES:,}"
            raise InputError(msg, path="max_document_bytes")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            msg = "the extraction timeout must be a positive number of seconds"
            raise InputError(msg, path="extraction_timeout")
        if (
            isinstance(body_timeout, bool)
            or not isinstance(body_timeout, int | float)
            or not 0 < body_timeout <= 3600
        ):
            msg = "the body timeout must be more than 0 and at most 3600 seconds"
            raise InputError(msg, path="body_timeout")
        slots = slots or ExtractionSlots()
        return cls(
            max_bytes,
            float(timeout),
            slots,
            uploads_per_key=slots.per_key,
            body_timeout=float(body_timeout),
        )


def document_settings(request: Request) -> DocumentSettings:
    """The settings of the app that answers ``request``."""
    return cast(DocumentSettings, request.app.state.documents)


class DocumentBodyLimit:
    """The service's body limit, with the document limit on :data:`DOCUMENT_PATH`.

    A pure ASGI middleware around two :class:`~citeverify_core.service.middleware.BodyLimit`:
    the upload's body is counted against ``document_limit``, every other path as before.
    """

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        gateway_limit: int,
        document_limit: int,
        body_timeout: float | None = BODY_TIMEOUT,
    ) -> None:
        self._default = BodyLimit(app, limit, gateway_limit, body_timeout)
        self._document = BodyLimit(app, document_limit, document_limit, body_timeout)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on under its path's limit."""
        if scope["type"] == "http" and scope.get("path") == DOCUMENT_PATH:
            await self._document(scope, receive, send)
        else:
            await self._default(scope, receive, send)


_UPLOAD_SCHEMA: dict[str, Any] = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {
                        "type": "string",
                        "format": "binary",
                        "description": "The document: .pdf, .docx, .tex, .bbl, .bib, .md, "
                        ".html or .txt (the file name's suffix says which).",
                    },
                    "title": {"type": "string", "maxLength": MAX_TITLE_CHARS},
                },
            }
        },
        "application/json": {"schema": DocumentBody.model_json_schema()},
    },
}
_DOCUMENT_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    402: {
        **ERRORS[402],
        "description": "Insufficient tokens: the reading costs one (refused before the body is "
        "read) and each reference one",
    },
    413: {**ERRORS[413], "description": "Request body or document too large"},
    429: {
        **ERRORS[429],
        "description": "Rate limit exceeded, or another upload of this key is in flight "
        "(see Retry-After)",
    },
    422: {
        "model": ERRORS[400]["model"],
        "description": "The document cannot be read; error.code is one of no-reference-list, "
        "no-text-layer, encrypted, corrupt, unsupported-format, timeout",
    },
}


@router.post(
    DOCUMENT_PATH,
    response_model=DocumentSubmission,
    responses=_DOCUMENT_ERRORS,
    openapi_extra={"requestBody": _UPLOAD_SCHEMA},
)
async def verify_document(
    key: Key,
    request: Request,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            max_length=MAX_IDEMPOTENCY_KEY,
            description="Repeat an upload without paying again: the same key with the same file "
            f"and title within {IDEMPOTENCY_SECONDS / 3600:g} hours returns the first answer.",
        ),
    ] = None,
) -> Any:
    """Read a document (one token), queue each reference of its list (one token each)."""
    settings = document_settings(request)
    store = service_state(request).store
    # Admitted before a byte of the body is read: at most uploads_per_key of this key at once
    # across every process (429), and the reading's token reserved (402 for a key without).
    upload = await asyncio.to_thread(
        partial(
            store.take_upload,
            key["id"],
            per_key=settings.uploads_per_key,
            lease=settings.lease,
            cost=DOCUMENT_READ_COST,
        )
    )
    outcome: dict[str, bool] = {"read": False}
    try:
        return await _upload(key, request, settings, idempotency_key, outcome)
    finally:
        # Spent when the document was read (whatever it held), refunded otherwise. Shielded:
        # a shutdown that cancels this request must not leave the token pending (the lease's
        # expiry would refund it too, later).
        finish = partial(store.finish_upload, upload, spent=outcome["read"])
        await asyncio.shield(asyncio.to_thread(finish))


async def _upload(
    key: Any,
    request: Request,
    settings: DocumentSettings,
    idempotency_key: str | None,
    outcome: dict[str, bool],
) -> Any:
    """The upload once admitted: its body read, the document read, its references queued."""
    try:
        body = await _read_body(request, settings.max_bytes + MULTIPART_OVERHEAD)
    except ClientDisconnect:
        # The body limit answered 413 or 408 already (or the client left): this is dropped.
        return Response(status_code=499)
    # Off the event loop: cutting 50 MB out of a multipart body and hashing it take ~100 ms,
    # which /healthz and every other request would wait for.
    try:
        data, name, title, fingerprint = await asyncio.to_thread(
            _parsed, body, request.headers.get("content-type", "")
        )
    except DocumentError as exc:
        return _refused(exc)
    del body
    if len(data) > settings.max_bytes:
        return _refused(_too_large(name, len(data), settings.max_bytes))
    # Every format is read in a child process bounded in time and memory; when this request
    # stops waiting (its timeout, the client gone, a shutdown) the child is killed at once.
    cancel = Cancel()
    read = partial(
        extract_document_bounded,
        data,
        name=name,
        timeout=settings.timeout,
        cancel=cancel,
        max_references=MAX_DOCUMENT_REFERENCES,
    )
    del data
    try:
        document = await settings.slots.run(
            key["id"], read, timeout=settings.timeout + READ_GRACE, abandon=cancel
        )
    except DocumentError as exc:
        # The traceback's frames (this one, the reading thread's) hold the document's bytes:
        # dropped now, not when the cycle collector next runs (a refused 20 MB upload kept
        # +40 MB in the worker until then).
        exc.__traceback__ = None
        if exc.code == "unavailable":
            return error_response(503, "reader_unavailable", str(exc))
        outcome["read"] = True  # read, and found wanting: the reading is paid for
        return _refused(exc)
    except TimeoutError:
        outcome["read"] = True
        msg = f"{name}: reading the document took longer than {settings.timeout:g} s"
        return _refused(DocumentError(msg, code="timeout"))
    finally:
        del read  # the bytes
        cancel.forget()
    outcome["read"] = True
    if len(document.references) > MAX_DOCUMENT_REFERENCES:
        msg = (
            f"{name}: {len(document.references):,} references found; a document may have at "
            f"most {MAX_DOCUMENT_REFERENCES:,}"
        )
        return error_response(422, "too-many-references", msg)
    answer = await asyncio.to_thread(
        partial(
            service_state(request).store.submit_document,
            document,
            title=title or _own_title(document.title, document.name),
            tenant=key["id"],
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
        )
    )
    replayed = {"Idempotent-Replayed": "true"} if answer.pop("replayed", False) else None
    if replayed:
        outcome["read"] = False  # a replay is not charged again, its reading included
    # As the store answered it (DocumentSubmission documents it): the extractor's dictionaries
    # are not parsed into models and written again.
    return JSONResponse(answer, headers=replayed)


@router.get("/api/verify-document/limits", response_model=DocumentLimits, responses=ERRORS)
def limits(key: Key, request: Request) -> dict[str, Any]:
    """What an upload may be: its largest size, the formats read, the most references."""
    del key  # asked for the same as every route: the page asks once it has a key
    return {
        "maxBytes": document_settings(request).max_bytes,
        "maxReferences": MAX_DOCUMENT_REFERENCES,
        "formats": list(UPLOAD_SUFFIXES),
        "textFormats": [f".{f}" for f in DOCUMENT_TEXT_FORMATS],
    }


@router.get(
    "/api/documents/{document_id}",
    response_model=DocumentView,
    responses={**ERRORS, 404: {"model": ERRORS[400]["model"], "description": "No such document"}},
)
def document(
    # Ids are uuid4 hex (32 characters); 40 as for decisions. Not 100: schemathesis 4.0 cannot
    # make an invalid (over-long) path value that long, and its negative run fails unsatisfiable.
    document_id: Annotated[str, Path(max_length=40)],
    key: Key,
    request: Request,
) -> JSONResponse:
    """A document of this key: what was extracted, each reference with its job's state."""
    found = service_state(request).store.document(document_id, tenant=key["id"])
    if found is None:  # another key's document is not found either
        raise StarletteHTTPException(404, "no such document")
    return JSONResponse(found)


# --- the body ------------------------------------------------------------------------------------


async def _read_body(request: Request, limit: int) -> bytearray:
    """The body, never more than ``limit`` bytes (the middleware refuses more first).

    A bytearray, not copied into bytes: the document is cut out of it once, so a 50 MB upload
    is held about twice at most (the body, then the file's bytes) until the body is dropped.
    """
    chunks = bytearray()
    async for chunk in request.stream():
        chunks += chunk
        if len(chunks) > limit:  # only without the middleware (an app built otherwise)
            raise InputError(f"the request body is larger than {limit:,} bytes", path="body")
    return chunks


def _parsed(body: bytearray, content_type: str) -> tuple[bytes, str, str | None, str]:
    """:func:`_parse`, and the document's SHA-256 (its fingerprint for ``Idempotency-Key``)."""
    data, name, title = _parse(body, content_type)
    return data, name, title, hashlib.sha256(data).hexdigest()


def _parse(body: bytearray, content_type: str) -> tuple[bytes, str, str | None]:
    """The document's bytes, its file name and the title, from a multipart or a JSON body.

    Raises:
        InputError: neither multipart/form-data nor JSON, or a body that is not what it says.
        DocumentError: a JSON text named as a format that is not text (``unsupported-format``).
    """
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "multipart/form-data":
        return _multipart(body, content_type)
    if kind == "application/json":
        try:
            parsed = DocumentBody.model_validate_json(body)
        except ValidationError as exc:
            errors = exc.errors()
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            what = str(errors[0]["msg"]) if errors else "invalid request"
            raise InputError(f"{where}: {what}" if where else what, path=where or "body") from None
        name = _base_name(parsed.name)
        suffix = PurePosixPath(name).suffix.lower().lstrip(".")
        if suffix not in DOCUMENT_TEXT_FORMATS:
            msg = (
                f"{name}: a JSON body carries a text format ("
                + ", ".join(f".{f}" for f in DOCUMENT_TEXT_FORMATS)
                + "); send a PDF or Word file as a multipart upload (field 'file')"
            )
            raise DocumentError(msg, code="unsupported-format")
        return parsed.text.encode("utf-8", "surrogatepass"), name, parsed.title
    msg = (
        "send the document as multipart/form-data (field 'file', optional 'title') or as "
        'application/json ({"text": ..., "name": "paper.md"})'
    )
    raise InputError(msg, path="Content-Type")


def _multipart(body: bytearray, content_type: str) -> tuple[bytes, str, str | None]:
    """The ``file`` and ``title`` parts of a multipart/form-data body (RFC 7578).

    A small parser of our own (the service does not depend on python-multipart): the body is
    already bounded, so it is cut in place, each part found by its boundary.
    """
    header = email.message.Message()
    header["content-type"] = content_type
    boundary = header.get_param("boundary")
    if not isinstance(boundary, str) or not 0 < len(boundary) <= 200:
        raise InputError("multipart/form-data without a boundary", path="Content-Type")
    delimiter = b"--" + boundary.encode("latin-1")
    view = memoryview(body)
    start = body.find(delimiter)
    if start < 0:
        raise InputError("the multipart body has no part", path="body")
    pos = start + len(delimiter)
    file: tuple[bytes, str] | None = None
    title: str | None = None
    for _ in range(_MAX_PARTS):
        if body[pos : pos + 2] == b"--":  # the closing delimiter
            break
        if body[pos : pos + 2] != b"\r\n":
            raise InputError("a malformed multipart body", path="body")
        head_end = body.find(b"\r\n\r\n", pos + 2, pos + 2 + _MAX_PART_HEADERS)
        if head_end < 0:
            raise InputError("a multipart part without the end of its headers", path="body")
        headers = _part_headers(bytes(view[pos + 2 : head_end]))
        content_start = head_end + 4
        end = body.find(b"\r\n" + delimiter, content_start)
        if end < 0:
            raise InputError("a multipart body without its closing boundary", path="body")
        disposition = email.message.Message()
        disposition["content-disposition"] = headers.get("content-disposition", "")
        field = disposition.get_param("name", header="content-disposition")
        if field == "file" and file is None:
            filename = disposition.get_filename() or "document"
            file = (bytes(view[content_start:end]), _base_name(filename))
        elif field == "title" and title is None:
            try:
                title = bytes(view[content_start:end]).decode("utf-8").strip() or None
            except UnicodeDecodeError:
                raise InputError("title must be UTF-8 text", path="title") from None
        pos = end + 2 + len(delimiter)
    if file is None:
        raise InputError("the multipart body has no 'file' part", path="file")
    if title is not None and len(title) > MAX_TITLE_CHARS:
        msg = f"title must be a string of at most {MAX_TITLE_CHARS} characters"
        raise InputError(msg, path="title")
    return file[0], file[1], title


def _part_headers(raw: bytes) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in raw.decode("utf-8", "replace").split("\r\n"):
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return headers


def _own_title(title: str | None, name: str) -> str:
    """The document's own title (or its name) as a history title: one line, storable, short.

    A PDF's metadata may hold anything: it is cleaned and cut, never refused.
    """
    text = " ".join((title or "").replace("\x00", " ").split()) or name
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogate
    return text if len(text) <= MAX_TITLE_CHARS else text[: MAX_TITLE_CHARS - 1] + "…"


def _base_name(name: str) -> str:
    """The file's own name: no folders (either kind of slash), no NUL, at most 255 characters."""
    base = PureWindowsPath(PurePosixPath(name.replace("\x00", "")).name).name.strip()
    return base[-255:] or "document"


# --- errors --------------------------------------------------------------------------------------


def _too_large(name: str, size: int, limit: int) -> DocumentError:
    msg = f"{name}: {size:,} bytes is over the {limit:,} bytes a document may have"
    return DocumentError(msg, code="too-large")


def _refused(exc: DocumentError) -> JSONResponse:
    """A document that cannot be read: 413 when too large, else 422; its code and message."""
    status = 413 if exc.code == "too-large" else 422
    return error_response(status, exc.code, str(exc))
