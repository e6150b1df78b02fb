"""A client of the reference service (``citeverify serve``, the reference-verification API).

:class:`ReferenceClient` (sync) and :class:`AsyncReferenceClient` (async) speak the service's
REST API over httpx: submit 1-20 references (or a whole document:
:meth:`~ReferenceClient.submit_document`), poll their jobs, wait for them, read the balance, the
history and a document (:meth:`~ReferenceClient.document`), cancel. A completed job's result is a
typed
:class:`~citeverify_core.references.ReferenceResult`.

>>> from citeverify_core.client import ReferenceClient
>>> with ReferenceClient("http://127.0.0.1:8000", api_key="cvk_...") as client:  # doctest: +SKIP
...     (result,) = client.verify(["Kuhn, T. S. (1962). The Structure of Scientific "
...                                "Revolutions. University of Chicago Press."])
...     result.status
'verified'

Errors: every failure is a :class:`~citeverify_core.CiteVerifyError`, never a raw httpx or JSON
exception and never a ``KeyError``:

* 413 or 422 with a document's code (``no-reference-list``, ``no-text-layer``, ``encrypted``,
  ``corrupt``, ``unsupported-format``, ``too-large``, ``timeout``) ->
  :class:`~citeverify_core.errors.DocumentError` with that ``code``.
* 400 -> :class:`~citeverify_core.InputError` with the service's message; the client also refuses
  what the service would refuse anyway before sending it (0 or more than 20 references in one
  :meth:`~ReferenceClient.submit`, a bare string instead of a list) with the same error.
* 401 -> :class:`~citeverify_core.AuthenticationError`, 402 ->
  :class:`~citeverify_core.InsufficientTokensError`, 403 ->
  :class:`~citeverify_core.PermissionDeniedError`,
  429 -> :class:`~citeverify_core.RateLimitError` (``retry_after`` from the Retry-After header).
* 502, 503, 504, connection failures, timeouts, and answers that are not the API (not JSON, a
  JSON list, missing fields, an oversized body, a redirect) ->
  :class:`~citeverify_core.ServiceUnavailableError` (``status`` 0 when no HTTP answer came).
* Any other 4xx/5xx -> :class:`~citeverify_core.ServiceError` with the service's ``status`` and
  ``code``.
* :meth:`~ReferenceClient.wait` past its timeout -> :class:`WaitTimeoutError`, which is both a
  :class:`~citeverify_core.ServiceError` and a builtin :class:`TimeoutError`; its ``jobs`` are the
  last states seen, so a caller may keep polling.

The client never retries on its own. The API key is sent in the ``Authorization`` header of each
request only; it is never logged, shown in a ``repr`` or put in an error message.
"""

from citeverify_core.client.clients import AsyncReferenceClient, ReferenceClient
from citeverify_core.client.wire import DEFAULT_TIMEOUT, WaitTimeoutError
from citeverify_core.service.schema import (
    MAX_POLL_IDS,
    MAX_REFERENCES,
    DocumentSubmission,
    DocumentView,
    Job,
    JobState,
    Submission,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_POLL_IDS",
    "MAX_REFERENCES",
    "AsyncReferenceClient",
    "DocumentSubmission",
    "DocumentView",
    "Job",
    "JobState",
    "ReferenceClient",
    "Submission",
    "WaitTimeoutError",
]
