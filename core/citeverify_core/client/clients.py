"""The sync and the async client of the reference service; see :mod:`citeverify_core.client`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import zlib
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, Self

import httpx

from citeverify_core.client.wire import (
    DEFAULT_TIMEOUT,
    Progress,
    _answer,
    _api_key,
    _base_url,
    _batches,
    _Call,
    _cancel_call,
    _document_call,
    _document_path,
    _document_submission,
    _document_view,
    _history_params,
    _ids,
    _jobs,
    _ordered,
    _reader,
    _submission,
    _submit_call,
    _timeout,
    _transport_error,
    _unreadable,
    _Waiting,
)
from citeverify_core.errors import (
    CiteVerifyError,
)
from citeverify_core.lookups.failures import LookupFailure
from citeverify_core.lookups.http import ACCEPT_ENCODING
from citeverify_core.references.result import ReferenceResult
from citeverify_core.service.schema import (
    MAX_POLL_IDS,
    DocumentSubmission,
    DocumentView,
    Job,
    Submission,
)


class _Base:
    def __init__(self, base_url: str, api_key: str | None, timeout: float) -> None:
        self.base_url = _base_url(base_url)
        self._key = _api_key(api_key)
        self.timeout = _timeout(timeout, "timeout")

    def __repr__(self) -> str:
        key = "set" if self._key else "none"
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key=<{key}>)"

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "Accept-Encoding": ACCEPT_ENCODING}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers


# --- the sync client ------------------------------------------------------------------------------


class ReferenceClient(_Base):
    """A synchronous client of the reference service.

    Args:
        base_url: The service's URL, e.g. ``http://127.0.0.1:8000`` (a path prefix is kept).
        api_key: The service's API key; default the ``CITEVERIFY_API_KEY`` environment variable.
            Without one, requests go out unauthenticated (and get 401).
        timeout: Seconds per HTTP request.
        client: An ``httpx.Client`` to use (proxies, TLS, transports). You close it; the
            requests carry their own URLs, headers and timeout.

    Raises:
        InputError: ``base_url`` is not an http(s) URL, the key is not printable ASCII, or the
            timeout is not a positive number.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        client: httpx.Client | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout)
        self._owned = client is None
        self._http = client if client is not None else httpx.Client()

    def close(self) -> None:
        """Close the HTTP connections (unless the ``httpx.Client`` was given)."""
        if self._owned:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _call(self, call: _Call) -> dict[str, Any]:
        url = self.base_url + call.path
        try:
            with self._http.stream(
                call.method,
                url,
                json=call.body,
                params=call.params,
                files=call.files,
                data=call.data,
                headers={**self._headers(), **(call.headers or {})},
                timeout=self.timeout,
                follow_redirects=False,
            ) as response:
                reader = _reader(response)
                truncated = any(reader.feed(chunk) for chunk in response.iter_raw())
        except (LookupFailure, zlib.error) as exc:
            raise _unreadable(exc, self.base_url) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
            raise _transport_error(exc, self.base_url, self._key) from None
        return _answer(response, reader.body(), self.base_url, self._key, truncated=truncated)

    def submit(
        self,
        references: Sequence[str],
        *,
        title: str | None = None,
        idempotency_key: str | None = None,
    ) -> Submission:
        """Queue 1-20 references for verification (one token each).

        The client does not retry. A caller that retries a submit whose answer was lost (a
        timeout, a dropped connection) passes the same ``idempotency_key`` each time: the
        service then queues and charges the references once and answers every attempt with the
        first answer (for 24 hours; the same key with other references is refused, 422).

        Args:
            references: The reference strings (at most 1,200 characters each).
            title: A label for the document in the history.
            idempotency_key: Sent as the ``Idempotency-Key`` header (e.g. ``uuid.uuid4().hex``,
                one per submission, reused on its retries).

        Returns:
            The job ids (one per reference, in order), the document id and the balance left.

        Raises:
            InputError: not a list of 1-20 strings (refused before sending), or the service
                refused it (400).
            ServiceError: see the module docstring.
        """
        call = _submit_call(references, title, idempotency_key)
        return _submission(self._call(call), self.base_url, len(references))

    def submit_document(
        self,
        source: str | os.PathLike[str] | bytes,
        *,
        name: str | None = None,
        title: str | None = None,
        idempotency_key: str | None = None,
    ) -> DocumentSubmission:
        """Upload a whole document; the service queues each reference of its list.

        One token per reference (as :meth:`submit`); poll the ``jobIds`` with :meth:`results`
        or :meth:`wait`, read the document again with :meth:`document`.

        Args:
            source: A path, or the file's bytes (then ``name`` is required: its suffix says
                the format: .pdf, .docx, .tex, .bbl, .bib, .md, .html, .txt).
            name: The file's name (default: the path's).
            title: A label for the history (default: the document's title, else its name).
            idempotency_key: As for :meth:`submit`: the same key with the same file and title
                replays the first answer.

        Returns:
            ``documentId``, ``jobIds`` (one per reference), ``references`` (text, label,
            location, ``jobId``), ``document`` (citations, consistency findings), ``counts``.

        Raises:
            DocumentError: the service cannot read the document (its ``code``:
                ``no-reference-list``, ``no-text-layer``, ``encrypted``, ``corrupt``,
                ``unsupported-format``, ``too-large``, ``timeout``).
            InputError: bytes without a name, an unreadable path, a file over 50 MB.
            InsufficientTokensError: fewer tokens than references (nothing queued).
            ServiceError: see the module docstring.
        """
        call = _document_call(source, name, title, idempotency_key)
        return _document_submission(self._call(call), self.base_url)

    def document(self, document_id: str) -> DocumentView:
        """A document of this key: its references with their jobs' states and results.

        Raises:
            ServiceError: 404 ``not_found`` for an unknown id (or another key's document).
        """
        return _document_view(self._call(_Call("GET", _document_path(document_id))), self.base_url)

    def results(self, job_ids: Iterable[str]) -> list[Job]:
        """The jobs' states and results, in the order of ``job_ids``.

        More than 50 ids are polled 50 at a time.

        Raises:
            ServiceError: see the module docstring.
        """
        ids = _ids(job_ids)
        jobs: list[Job] = []
        for batch in _batches(ids, MAX_POLL_IDS):
            data = self._call(_Call("POST", "/api/verify-reference/results", {"jobIds": batch}))
            jobs += _jobs(data, self.base_url, batch)
        return jobs

    def wait(
        self,
        job_ids: Iterable[str],
        *,
        timeout: float = 120.0,
        poll: float = 0.5,
        progress: Progress | None = None,
    ) -> list[Job]:
        """Poll until no job is waiting or active; the jobs, in the order of ``job_ids``.

        The pause between polls starts at ``poll`` seconds and grows by half each time, up to
        4 seconds.

        Args:
            job_ids: The jobs to wait for.
            timeout: Seconds to wait in all.
            poll: Seconds before the second poll.
            progress: Called with ``(done, total)`` whenever more jobs are done.

        Raises:
            WaitTimeoutError: jobs were still pending after ``timeout`` (they keep running).
            ServiceError: see the module docstring.
        """
        ids = _ids(job_ids)
        schedule = _Waiting(timeout, poll, progress)
        while True:
            jobs = self.results(ids)
            schedule.report(jobs)
            if all(job.done for job in jobs):
                return jobs
            time.sleep(schedule.pause(jobs))

    def verify(
        self,
        references: Sequence[str],
        *,
        title: str | None = None,
        timeout: float = 120.0,
        progress: Progress | None = None,
    ) -> list[ReferenceResult | None]:
        """Submit references (20 per submission), wait, and return their results in order.

        Args:
            references: Any number of reference strings.
            title: A label for the documents in the history.
            timeout: Seconds to wait for the results in all.
            progress: Called with ``(done, total)`` whenever more references are done.

        Returns:
            One result per reference; ``None`` for a job that failed (or was cancelled).

        Raises:
            InsufficientTokensError: the balance does not cover them; the submissions made
                before are cancelled (and refunded).
            WaitTimeoutError: results were still pending after ``timeout``.
            ServiceError: see the module docstring.
        """
        submissions: list[Submission] = []
        try:
            for batch in _ordered(references):
                submissions.append(self.submit(batch, title=title))
        except CiteVerifyError:
            for submission in submissions:
                with contextlib.suppress(CiteVerifyError):  # the first error is the one to report
                    self.cancel(document_id=submission.document_id)
            raise
        ids = [job_id for submission in submissions for job_id in submission.job_ids]
        jobs = self.wait(ids, timeout=timeout, progress=progress)
        return [job.result if job.state == "completed" else None for job in jobs]

    def balance(self) -> dict[str, Any]:
        """The key's balance (``totalAvailable``, ``pendingTokens``, ...)."""
        return self._call(_Call("GET", "/api/verify-reference/balance"))

    def history(self, limit: int = 20, offset: int = 0) -> dict[str, Any]:
        """Past documents of this key, newest first (``documents``, ``pagination``)."""
        params = _history_params(limit, offset)
        return self._call(_Call("GET", "/api/verify-reference/history", params=params))

    def cancel(
        self, *, document_id: str | None = None, job_ids: Iterable[str] | None = None
    ) -> dict[str, Any]:
        """Cancel waiting or running jobs (by document, by id, or both); tokens are refunded.

        Returns:
            The service's answer: ``cancelledJobs``, ``refundedTokens``, ``documentStatus``.

        Raises:
            InputError: neither a document id nor job ids.
            ServiceError: see the module docstring.
        """
        return self._call(_cancel_call(document_id, job_ids))


# --- the async client -----------------------------------------------------------------------------


class AsyncReferenceClient(_Base):
    """The asynchronous twin of :class:`ReferenceClient` (same arguments, awaitable methods).

    Args:
        base_url: The service's URL, e.g. ``http://127.0.0.1:8000``.
        api_key: The service's API key; default the ``CITEVERIFY_API_KEY`` environment variable.
        timeout: Seconds per HTTP request.
        client: An ``httpx.AsyncClient`` to use; you close it.

    Raises:
        InputError: ``base_url`` is not an http(s) URL, the key is not printable ASCII, or the
            timeout is not a positive number.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout)
        self._owned = client is None
        self._http = client if client is not None else httpx.AsyncClient()

    async def aclose(self) -> None:
        """Close the HTTP connections (unless the ``httpx.AsyncClient`` was given)."""
        if self._owned:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _call(self, call: _Call) -> dict[str, Any]:
        url = self.base_url + call.path
        try:
            async with self._http.stream(
                call.method,
                url,
                json=call.body,
                params=call.params,
                files=call.files,
                data=call.data,
                headers={**self._headers(), **(call.headers or {})},
                timeout=self.timeout,
                follow_redirects=False,
            ) as response:
                reader = _reader(response)
                truncated = False
                async for chunk in response.aiter_raw():
                    if reader.feed(chunk):
                        truncated = True
                        break
        except (LookupFailure, zlib.error) as exc:
            raise _unreadable(exc, self.base_url) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
            raise _transport_error(exc, self.base_url, self._key) from None
        return _answer(response, reader.body(), self.base_url, self._key, truncated=truncated)

    async def submit(
        self,
        references: Sequence[str],
        *,
        title: str | None = None,
        idempotency_key: str | None = None,
    ) -> Submission:
        """Queue 1-20 references; see :meth:`ReferenceClient.submit`."""
        call = _submit_call(references, title, idempotency_key)
        return _submission(await self._call(call), self.base_url, len(references))

    async def submit_document(
        self,
        source: str | os.PathLike[str] | bytes,
        *,
        name: str | None = None,
        title: str | None = None,
        idempotency_key: str | None = None,
    ) -> DocumentSubmission:
        """Upload a whole document; see :meth:`ReferenceClient.submit_document`."""
        # The file is read on a thread: a 50 MB read does not stall the event loop.
        call = await asyncio.to_thread(_document_call, source, name, title, idempotency_key)
        return _document_submission(await self._call(call), self.base_url)

    async def document(self, document_id: str) -> DocumentView:
        """A document of this key; see :meth:`ReferenceClient.document`."""
        answer = await self._call(_Call("GET", _document_path(document_id)))
        return _document_view(answer, self.base_url)

    async def results(self, job_ids: Iterable[str]) -> list[Job]:
        """The jobs' states and results; see :meth:`ReferenceClient.results`."""
        ids = _ids(job_ids)
        jobs: list[Job] = []
        for batch in _batches(ids, MAX_POLL_IDS):
            call = _Call("POST", "/api/verify-reference/results", {"jobIds": batch})
            jobs += _jobs(await self._call(call), self.base_url, batch)
        return jobs

    async def wait(
        self,
        job_ids: Iterable[str],
        *,
        timeout: float = 120.0,
        poll: float = 0.5,
        progress: Progress | None = None,
    ) -> list[Job]:
        """Poll until no job is pending; see :meth:`ReferenceClient.wait`."""
        ids = _ids(job_ids)
        schedule = _Waiting(timeout, poll, progress)
        while True:
            jobs = await self.results(ids)
            schedule.report(jobs)
            if all(job.done for job in jobs):
                return jobs
            await asyncio.sleep(schedule.pause(jobs))

    async def verify(
        self,
        references: Sequence[str],
        *,
        title: str | None = None,
        timeout: float = 120.0,
        progress: Progress | None = None,
    ) -> list[ReferenceResult | None]:
        """Submit, wait, and return results in order; see :meth:`ReferenceClient.verify`."""
        submissions: list[Submission] = []
        try:
            for batch in _ordered(references):
                submissions.append(await self.submit(batch, title=title))
        except CiteVerifyError:
            for submission in submissions:
                with contextlib.suppress(CiteVerifyError):
                    await self.cancel(document_id=submission.document_id)
            raise
        ids = [job_id for submission in submissions for job_id in submission.job_ids]
        jobs = await self.wait(ids, timeout=timeout, progress=progress)
        return [job.result if job.state == "completed" else None for job in jobs]

    async def balance(self) -> dict[str, Any]:
        """The key's balance; see :meth:`ReferenceClient.balance`."""
        return await self._call(_Call("GET", "/api/verify-reference/balance"))

    async def history(self, limit: int = 20, offset: int = 0) -> dict[str, Any]:
        """Past documents; see :meth:`ReferenceClient.history`."""
        params = _history_params(limit, offset)
        return await self._call(_Call("GET", "/api/verify-reference/history", params=params))

    async def cancel(
        self, *, document_id: str | None = None, job_ids: Iterable[str] | None = None
    ) -> dict[str, Any]:
        """Cancel jobs; see :meth:`ReferenceClient.cancel`."""
        return await self._call(_cancel_call(document_id, job_ids))
