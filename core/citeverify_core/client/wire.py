"""The client's side of the wire: the requests it builds, the answers it reads, its errors.

Shared by the sync and the async client (:mod:`citeverify_core.client.clients`).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, get_args

import httpx
import pydantic

from citeverify_core.errors import (
    DOCUMENT_ERROR_CODES,
    AuthenticationError,
    DocumentError,
    InputError,
    InsufficientTokensError,
    PermissionDeniedError,
    RateLimitError,
    ServiceError,
    ServiceUnavailableError,
)
from citeverify_core.lookups.failures import LookupFailure
from citeverify_core.lookups.http import BoundedBody, retry_after
from citeverify_core.references.document import MAX_DOCUMENT_BYTES
from citeverify_core.references.result import ReferenceResult
from citeverify_core.service.schema import (
    MAX_REFERENCES,
    DocumentSubmission,
    DocumentView,
    Job,
    JobState,
    Submission,
)
from citeverify_core.service.schema import Progress as JobProgress

#: Seconds per HTTP request (connect, read, write, pool).
DEFAULT_TIMEOUT = 30.0
#: Longest pause between two polls of :meth:`ReferenceClient.wait`.
MAX_POLL_INTERVAL = 4.0
#: A larger answer is not the service's (50 results with their graphs are a few MB).
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
API_KEY_ENV = "CITEVERIFY_API_KEY"

_STATES: frozenset[str] = frozenset(get_args(JobState))
_UNAVAILABLE_STATUSES = frozenset({502, 503, 504})
#: The service's 402 message: "3 reference(s) need 3 token(s); the key has 2".
_TOKENS = re.compile(r"need (\d{1,18}) token\S*; the key has (\d{1,18})")
_MAX_SHOWN = 200  # characters of a service's message or body quoted in an error
#: A 429 without a readable Retry-After is taken to mean a minute; a longer wait, a day at most.
_ASSUMED_WAIT = 60.0
_LONGEST_WAIT = 24 * 3600.0

Progress = Callable[[int, int], None]


class WaitTimeoutError(ServiceError, TimeoutError):
    """:meth:`ReferenceClient.wait` gave up: some jobs were still waiting or running.

    Both a :class:`~citeverify_core.ServiceError` and a builtin :class:`TimeoutError`. The jobs keep
    running on the service (and are paid for once they complete); poll them again with
    :meth:`ReferenceClient.results`, or cancel them.

    Attributes:
        jobs: The jobs as last seen, in the order of the ids waited for.
    """

    status = 0
    code = "wait_timeout"

    def __init__(self, message: str, *, jobs: Sequence[Job] = ()) -> None:
        super().__init__(message)
        self.jobs: list[Job] = list(jobs)


# --- what both clients share: requests, answers, errors -----------------------------------------


@dataclass(frozen=True, slots=True)
class _Call:
    method: str
    path: str
    body: dict[str, Any] | None = None
    params: dict[str, int] | None = None
    headers: dict[str, str] | None = None
    #: A multipart upload: ``{"file": (name, bytes)}`` and its text fields.
    files: dict[str, tuple[str, bytes]] | None = None
    data: dict[str, str] | None = None


def _api_key(api_key: str | None) -> str | None:
    key = os.environ.get(API_KEY_ENV) if api_key is None else api_key
    key = (key or "").strip()
    if not key:
        return None
    if not key.isascii() or not key.isprintable():
        # Never echo the key: it may be a real one pasted with a stray character.
        raise InputError("the API key must be printable ASCII", path="api_key")
    return key


def _base_url(base_url: str) -> str:
    if not isinstance(base_url, str) or not base_url.strip():
        raise InputError("base_url must be the service's URL, e.g. http://127.0.0.1:8000")
    url = base_url.strip().rstrip("/")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        parsed = None
    if parsed is None or parsed.scheme not in {"http", "https"} or not parsed.host:
        msg = f"base_url must be an http:// or https:// URL, got {url[:_MAX_SHOWN]!r}"
        raise InputError(msg, path="base_url")
    return url


def _timeout(value: float, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(f"{name} must be a positive number of seconds", path=name)
    return float(value)


def _submit_call(
    references: Sequence[str], title: str | None, idempotency_key: str | None = None
) -> _Call:
    if isinstance(references, str | bytes) or not isinstance(references, Sequence):
        msg = "references must be a list of reference strings, not a single string"
        raise InputError(msg, path="references")
    if not 1 <= len(references) <= MAX_REFERENCES:
        msg = (
            f"submit 1 to {MAX_REFERENCES} references at a time, got {len(references)} "
            "(verify() splits longer lists)"
        )
        raise InputError(msg, path="references")
    for i, reference in enumerate(references):
        if not isinstance(reference, str):
            msg = f"references[{i}] must be a string, got {type(reference).__name__}"
            raise InputError(msg, path=f"references[{i}]")
        _encodable(reference, f"references[{i}]")
    body: dict[str, Any] = {"references": list(references)}
    if title is not None:
        if not isinstance(title, str):
            raise InputError("title must be a string", path="title")
        _encodable(title, "title")
        body["title"] = title
    headers = _idempotency_headers(idempotency_key)
    return _Call("POST", "/api/verify-reference", body, headers=headers)


def _idempotency_headers(idempotency_key: str | None) -> dict[str, str] | None:
    if idempotency_key is None:
        return None
    if not (
        isinstance(idempotency_key, str)
        and 0 < len(idempotency_key) <= 255
        and idempotency_key.isascii()
        and idempotency_key.isprintable()
    ):
        msg = "idempotency_key must be 1 to 255 printable ASCII characters"
        raise InputError(msg, path="idempotency_key")
    return {"Idempotency-Key": idempotency_key}


def _document_call(
    source: str | os.PathLike[str] | bytes,
    name: str | None,
    title: str | None,
    idempotency_key: str | None,
) -> _Call:
    """``POST /api/verify-document`` with the file as a multipart upload.

    Raises:
        InputError: bytes without a ``name``, a file that cannot be read or is larger than
            ``MAX_DOCUMENT_BYTES`` (checked before it is read), a title that is not a string.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        if not name:
            msg = "give the document's file name (name='paper.pdf'): its suffix says its format"
            raise InputError(msg, path="name")
        data = bytes(source)
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            size = path.stat().st_size
            if size > MAX_DOCUMENT_BYTES:
                msg = f"{path}: {size:,} bytes; a document may have {MAX_DOCUMENT_BYTES:,}"
                raise InputError(msg, path="source")
            data = path.read_bytes()
        except OSError as exc:
            msg = f"{path}: cannot read the file ({exc.strerror or exc})"
            raise InputError(msg, path="source") from None
        name = name or path.name
    else:
        msg = f"a document is a path or bytes, not {type(source).__name__}"
        raise InputError(msg, path="source")
    if len(data) > MAX_DOCUMENT_BYTES:
        msg = f"{name}: {len(data):,} bytes; a document may have {MAX_DOCUMENT_BYTES:,}"
        raise InputError(msg, path="source")
    fields = None
    if title is not None:
        if not isinstance(title, str):
            raise InputError("title must be a string", path="title")
        _encodable(title, "title")
        fields = {"title": title}
    return _Call(
        "POST",
        "/api/verify-document",
        headers=_idempotency_headers(idempotency_key),
        files={"file": (name, data)},
        data=fields,
    )


def _document_submission(data: dict[str, Any], url: str) -> DocumentSubmission:
    try:
        submission = DocumentSubmission.model_validate(data)
    except pydantic.ValidationError as exc:
        raise _bad_shape(url, f"not a document submission ({exc.error_count()} errors)") from None
    if len(submission.jobIds) != len(submission.references):
        raise _bad_shape(url, "not one job id per reference")
    return submission


def _document_view(data: dict[str, Any], url: str) -> DocumentView:
    try:
        return DocumentView.model_validate(data)
    except pydantic.ValidationError as exc:
        raise _bad_shape(url, f"not a document ({exc.error_count()} errors)") from None


def _document_path(document_id: str) -> str:
    if not isinstance(document_id, str) or not document_id.isalnum() or len(document_id) > 100:
        msg = "document_id must be a document id (letters and digits, as the service gave it)"
        raise InputError(msg, path="document_id")
    return f"/api/documents/{document_id}"


def _encodable(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{path} is not valid Unicode (a lone surrogate)", path=path) from None


def _ids(job_ids: Iterable[str]) -> list[str]:
    if isinstance(job_ids, str | bytes):
        raise InputError("job_ids must be a list of job ids, not a single string", path="job_ids")
    ids = [str(job_id) for job_id in job_ids]
    for i, job_id in enumerate(ids):
        _encodable(job_id, f"job_ids[{i}]")
    return ids


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _unavailable(message: str, key: str | None) -> ServiceUnavailableError:
    if key:
        message = message.replace(key, "***")
    return ServiceUnavailableError(message)


def _reader(response: httpx.Response) -> BoundedBody:
    """The body's reader: decompressed by the core, a step at a time, up to the API's limit."""
    return BoundedBody(response.headers.get("content-encoding", ""), MAX_RESPONSE_BYTES)


def _unreadable(exc: Exception, url: str) -> ServiceUnavailableError:
    """An encoding not asked for, or corrupt compression: not the API's answer."""
    why = str(exc) if isinstance(exc, LookupFailure) else f"corrupt compression: {exc}"
    msg = f"the reference service at {url} sent a body that cannot be read ({why})"
    return ServiceUnavailableError(msg[:1000])


def _transport_error(exc: Exception, url: str, key: str | None) -> ServiceUnavailableError:
    if isinstance(exc, httpx.TimeoutException):
        what = f"timed out ({type(exc).__name__})"
    elif isinstance(exc, httpx.ConnectError):
        what = f"cannot be reached ({exc or type(exc).__name__})"
    else:
        what = f"failed ({type(exc).__name__}: {exc})"
    return _unavailable(f"the reference service at {url} {what}"[:1000], key)


def _wait(value: str | None) -> float:
    """Seconds to wait by a 429's Retry-After (the core's rule); a minute when absent or odd."""
    seconds = retry_after(value)
    return _ASSUMED_WAIT if seconds is None else min(seconds, _LONGEST_WAIT)


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return _NOT_JSON


_NOT_JSON = object()


def _snippet(body: bytes) -> str:
    text = " ".join(body[:_MAX_SHOWN].decode("utf-8", "replace").split())
    return text or "an empty body"


def _answer(
    response: httpx.Response, body: bytes, url: str, key: str | None, *, truncated: bool
) -> dict[str, Any]:
    """The JSON object of a 2xx answer, or the error its status stands for."""
    status = response.status_code
    where = f"the reference service at {url}"
    if truncated:
        raise _unavailable(f"{where} answered more than {MAX_RESPONSE_BYTES:,} bytes", key)
    data = _decode(body)
    if 200 <= status < 300:
        if data is _NOT_JSON:
            kind = response.headers.get("content-type", "no content type")
            msg = f"{where} answered something that is not JSON ({kind}): {_snippet(body)}"
            raise _unavailable(msg, key)
        if not isinstance(data, dict):
            msg = f"{where} answered a JSON {type(data).__name__}, not the API's JSON object"
            raise _unavailable(msg, key)
        return data
    error = data.get("error") if isinstance(data, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    code = code if isinstance(code, str) and code else None
    if not (isinstance(message, str) and message.strip()):
        message = f"{where} answered HTTP {status}" + (
            "" if data is not _NOT_JSON else f": {_snippet(body)}"
        )
    message = message[:1000]
    if key:
        message = message.replace(key, "***")
    if status in {413, 422} and code in DOCUMENT_ERROR_CODES:
        raise DocumentError(message, code=code)  # a document that cannot be read
    if status == 400:
        raise InputError(message)
    if status == 401:
        raise AuthenticationError(message)
    if status == 402:
        counts = _TOKENS.search(message)
        needed, available = (int(counts[1]), int(counts[2])) if counts else (0, 0)
        raise InsufficientTokensError(message, needed=needed, available=available)
    if status == 403:
        raise PermissionDeniedError(message)
    if status == 429:
        raise RateLimitError(message, retry_after=_wait(response.headers.get("retry-after")))
    if status in _UNAVAILABLE_STATUSES:
        raise ServiceUnavailableError(message, status=status, code=code or "service_unavailable")
    if 400 <= status < 600:
        raise ServiceError(message, status=status, code=code or f"http_{status}")
    # 1xx (other than the ones httpx handles) and 3xx: httpx follows no redirect.
    where_to = response.headers.get("location")
    hint = f" to {where_to[:_MAX_SHOWN]}; use that URL as base_url" if where_to else ""
    raise _unavailable(f"{where} answered HTTP {status}{hint}", key)


def _bad_shape(url: str, what: str) -> ServiceUnavailableError:
    return ServiceUnavailableError(
        f"the reference service at {url} answered something that is not the API: {what}"
    )


def _submission(data: dict[str, Any], url: str, count: int) -> Submission:
    ids = data.get("jobIds")
    document = data.get("documentId")
    message = data.get("message", "")
    tokens = data.get("tokensAvailable")
    if not isinstance(ids, list) or not all(isinstance(i, str | int) for i in ids):
        raise _bad_shape(url, "no list of jobIds")
    if len(ids) != count:
        raise _bad_shape(url, f"{len(ids)} job ids for {count} references")
    if not isinstance(document, str):
        raise _bad_shape(url, "no documentId")
    if not isinstance(message, str):
        raise _bad_shape(url, "a message that is not a string")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int)):
        raise _bad_shape(url, "tokensAvailable is not an integer")
    return Submission(tuple(str(i) for i in ids), document, message, tokens)


def _job(item: object, url: str) -> Job:
    if not isinstance(item, dict):
        raise _bad_shape(url, "a job that is not an object")
    job_id, state = item.get("id"), item.get("state")
    error, progress, result = item.get("error"), item.get("progress"), item.get("result")
    if not isinstance(job_id, str | int) or isinstance(job_id, bool):
        raise _bad_shape(url, "a job without an id")
    if state not in _STATES:
        raise _bad_shape(url, f"job {job_id}: an unknown state {str(state)[:40]!r}")
    if error is not None and not isinstance(error, str):
        raise _bad_shape(url, f"job {job_id}: an error that is not a string")
    if progress is not None and not isinstance(progress, dict):
        raise _bad_shape(url, f"job {job_id}: progress that is not an object")
    parsed = None
    if state == "completed" and result is not None:
        try:
            parsed = ReferenceResult.model_validate(result)
        except pydantic.ValidationError as exc:
            errors = exc.errors()
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else "?"
            raise _bad_shape(
                url, f"job {job_id}: a result that is not a ReferenceResult ({where})"
            ) from None
    return Job(
        str(job_id), cast(JobState, state), error, cast("JobProgress | None", progress), parsed
    )


def _jobs(data: dict[str, Any], url: str, asked: Sequence[str]) -> list[Job]:
    items = data.get("jobs")
    if not isinstance(items, list):
        raise _bad_shape(url, "no list of jobs")
    jobs = [_job(item, url) for item in items]
    by_id = {job.id: job for job in jobs}
    missing = [job_id for job_id in asked if job_id not in by_id]
    if missing:
        raise _bad_shape(url, f"no state for job {missing[0][:40]!r}")
    return [by_id[job_id] for job_id in asked]


def _history_params(limit: int, offset: int) -> dict[str, int]:
    for name, value in (("limit", limit), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{name} must be an integer", path=name)
    return {"limit": limit, "offset": offset}


def _cancel_call(document_id: str | None, job_ids: Iterable[str] | None) -> _Call:
    body: dict[str, Any] = {}
    if document_id is not None:
        body["documentId"] = document_id
    if job_ids is not None:
        body["jobIds"] = _ids(job_ids)
    if not body.get("documentId") and not body.get("jobIds"):
        raise InputError("give a document_id, job_ids, or both", path="document_id")
    return _Call("POST", "/api/verify-reference/cancel", body)


class _Waiting:
    """The polling schedule and progress reports of one :meth:`wait`."""

    def __init__(self, timeout: float, poll: float, progress: Progress | None) -> None:
        self.deadline = time.monotonic() + _timeout(timeout, "timeout")
        self.interval = _timeout(poll, "poll")
        self.progress = progress
        self.reported = -1

    def report(self, jobs: Sequence[Job]) -> None:
        done = sum(1 for job in jobs if job.done)
        if self.progress is not None and done != self.reported:
            self.reported = done
            self.progress(done, len(jobs))

    def pause(self, jobs: Sequence[Job]) -> float:
        """Seconds to sleep before the next poll; raises when the deadline has passed."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            pending = sum(1 for job in jobs if not job.done)
            msg = f"{pending} of {len(jobs)} job(s) still waiting or running after the timeout"
            raise WaitTimeoutError(msg, jobs=jobs)
        pause = min(self.interval, left)
        self.interval = min(self.interval * 1.5, max(MAX_POLL_INTERVAL, self.interval))
        return pause


def _ordered(references: Sequence[str]) -> list[list[str]]:
    if isinstance(references, str | bytes) or not isinstance(references, Sequence):
        msg = "references must be a list of reference strings, not a single string"
        raise InputError(msg, path="references")
    if not references:
        raise InputError("give at least one reference", path="references")
    return _batches(list(references), MAX_REFERENCES)
