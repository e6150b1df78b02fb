"""The reference service's FastAPI app: its parts wired together; the routes are in ``routes/``.

The app holds one job store (jobs, keys and tokens, and the decision log in the same database),
the verification workers, the policy packs of ``POST /api/check``, the bounds on verifications
running at once, the metrics, the body limit and the error envelope. The REST routes
(:mod:`citeverify_core.service.routes`) read these from ``app.state.service``; the guard's
endpoints (:mod:`citeverify_core.service.gateway`) and the review page
(:mod:`citeverify_core.service.web`) are added as routers too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence

from fastapi import FastAPI

import citeverify_core
from citeverify_core.errors import InputError, ServiceError
from citeverify_core.references.document import MAX_DOCUMENT_BYTES
from citeverify_core.service.decisions import DEFAULT_RETENTION_DAYS, DecisionLog, DurableDecisions
from citeverify_core.service.gateway import GATEWAY_MAX_BODY, GatewayConfig, gateway_router
from citeverify_core.service.jobs import JobStore
from citeverify_core.service.limits import EXTRACTION_TIMEOUT, ExtractionSlots, VerificationSlots
from citeverify_core.service.metrics import Metrics
from citeverify_core.service.middleware import BODY_TIMEOUT
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.responses import handle_errors
from citeverify_core.service.routes import (
    account,
    check,
    decisions,
    documents,
    health,
    history,
    references,
    split,
)
from citeverify_core.service.routes.dependencies import ServiceState
from citeverify_core.service.routes.documents import (
    MULTIPART_OVERHEAD,
    DocumentBodyLimit,
    DocumentSettings,
)
from citeverify_core.service.web import web_router
from citeverify_core.service.workers import Workers

_log = logging.getLogger("citeverify.service")

#: Days an uploaded document and its results are kept (``serve --document-retention-days``).
DOCUMENT_RETENTION_DAYS = 30.0
#: Seconds between two purges of the documents past their retention.
PURGE_INTERVAL = 3600.0

__all__ = ["CHECK_TIMEOUT", "MAX_BODY_BYTES", "UNAUTHENTICATED_PER_MINUTE", "create_app"]

#: A request body larger than this is refused (413) before it is read: 20 references of 1,200
#: characters are at most ~100 KB even as \\u escapes.
MAX_BODY_BYTES = 256 * 1024
#: Requests without a valid API key per client address and minute, as the reference-verification
#: API limits them.
UNAUTHENTICATED_PER_MINUTE = 10
#: Seconds ``POST /api/check`` waits for its verification (slow lookups) before answering 504.
CHECK_TIMEOUT = 30.0


def create_app(
    store: JobStore,
    *,
    workers: bool = True,
    max_body_bytes: int = MAX_BODY_BYTES,
    unauthenticated_per_minute: int = UNAUTHENTICATED_PER_MINUTE,
    poll_interval: float = 0.25,
    gateway: GatewayConfig | None = None,
    policies: PolicyPacks | None = None,
    log_content: bool = False,
    log_retention_days: float = DEFAULT_RETENTION_DAYS,
    slots: VerificationSlots | None = None,
    check_timeout: float = CHECK_TIMEOUT,
    max_document_bytes: int = MAX_DOCUMENT_BYTES,
    extraction_timeout: float = EXTRACTION_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    document_retention_days: float = DOCUMENT_RETENTION_DAYS,
    extraction_slots: ExtractionSlots | None = None,
    on_shutdown: Sequence[Callable[[], None]] = (),
) -> FastAPI:
    """The service around ``store``.

    Args:
        store: Where jobs and keys live; its verifier verifies.
        workers: Run the verification workers in this process (a thread with its own event
            loop, so verification never delays a request). Off for an API-only instance.
        max_body_bytes: Larger request bodies get 413.
        unauthenticated_per_minute: Requests without a valid key per client address (429 after).
        poll_interval: Seconds between looks for new jobs when the workers are idle.
        gateway: Adds the citation-verifier guard endpoints (``/v1/chat/completions``,
            ``/v1/responses``) in front of an upstream model.
        policies: The policy packs of ``POST /api/check`` (default: the gateway's, else the
            default policy).
        log_content: Log the answers and documents with the decisions (off: only what was
            decided).
        log_retention_days: Decisions older than this are deleted.
        slots: The bounds on verifications running at once (per process and per caller) that
            ``POST /api/check`` runs under (default: a new :class:`VerificationSlots`); the app
            exposes it as ``app.state.slots`` for other routes of the process to share.
        check_timeout: Seconds ``POST /api/check`` waits for a verification (504 after).
        max_document_bytes: The largest document ``POST /api/verify-document`` accepts (at most
            ``MAX_DOCUMENT_BYTES``, 50 MB); its body may have 64 KiB more (multipart headers).
        extraction_timeout: Seconds a document's reading may take (422 ``timeout`` after).
        body_timeout: Seconds a request's body may take to arrive (408 ``body_timeout`` after).
        document_retention_days: Uploaded documents (and their jobs) older than this are
            deleted, at start and every hour.
        extraction_slots: The bounds on documents read at once (default: 2 per process, 1 per
            key; 429 beyond).
        on_shutdown: Called when the app stops, after the workers and the log (closes what the
            caller opened for it, such as the store).
    """
    if policies is None:
        policies = gateway.policies if gateway is not None else PolicyPacks()
    log = DecisionLog(store, log_content=log_content, retention_days=log_retention_days)
    metrics = Metrics()
    store.observe = metrics.observe_job
    log.observe = metrics.observe_decision
    # One bound for every verification of the process: the guard's and POST /api/check's.
    if slots is None:
        slots = gateway.slots if gateway is not None else VerificationSlots()
    elif gateway is not None:
        gateway.slots = slots
    bounds = slots
    if isinstance(document_retention_days, bool) or not (
        isinstance(document_retention_days, int | float) and 0 < document_retention_days < 100_000
    ):
        msg = "the document retention is a positive number of days"
        raise InputError(msg, path="document_retention_days")
    document_settings = DocumentSettings.checked(
        max_document_bytes, extraction_timeout, extraction_slots, body_timeout
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        worker = Workers(store, poll_interval) if workers else None
        if worker is not None:
            worker.start()
        log.start()
        purge = asyncio.create_task(_purge_documents(store, document_retention_days))
        try:
            yield
        finally:
            purge.cancel()
            if worker is not None:
                await asyncio.to_thread(worker.stop)
            await asyncio.to_thread(log.stop)
            if gateway is not None:
                await gateway.aclose()
            bounds.close()
            document_settings.slots.close()
            for close in on_shutdown:
                await asyncio.to_thread(close)

    app = FastAPI(
        title="citeverify reference verification",
        version=citeverify_core.__version__,
        description="The reference-verification API, self-hosted (citeverify serve).",
        lifespan=lifespan,
        # No documentation pages on the service's origin: FastAPI's load scripts from a CDN
        # (floating versions, no integrity) without the review page's CSP, and a script there
        # could read the key the page remembers. The schema stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    app.state.service = ServiceState(
        store=store,
        decisions=log,
        policies=policies,
        slots=slots,
        metrics=metrics,
        unauthenticated_per_minute=unauthenticated_per_minute,
        check_timeout=check_timeout,
    )
    app.state.decisions = log  # the decision log (tests, embedding applications)
    app.state.policies = policies
    app.state.slots = slots  # one bound for every verification of this process
    app.state.documents = document_settings  # POST /api/verify-document's limits
    # No trailing-slash redirects: Starlette builds their Location from the Host header, so a
    # request could make the service redirect to any host. A wrong path is a 404.
    app.router.redirect_slashes = False
    handle_errors(app)
    for routes in (references, documents, account, history, check, decisions, split, health):
        app.include_router(routes.router)
    if gateway is not None:
        # A key guessed on the guard counts against the same window as on the REST API.
        def limiter(address: str) -> float:
            return store.hit_rate_limit(address, unauthenticated_per_minute)

        app.include_router(gateway_router(gateway, store=store, log=log, limiter=limiter))
    # The review page at / (docs/web.md): public HTML/JS/CSS; its data comes from the API above.
    app.include_router(web_router())
    # The guard endpoints carry context documents, the upload a whole document: larger limits
    # there, each enforced before the body is read.
    app.add_middleware(
        DocumentBodyLimit,
        limit=max_body_bytes,
        gateway_limit=GATEWAY_MAX_BODY,
        document_limit=document_settings.max_bytes + MULTIPART_OVERHEAD,
        body_timeout=document_settings.body_timeout,
    )
    # A response starts only once the decisions it logged are committed (kill -9 loses none).
    app.add_middleware(DurableDecisions)
    return app


async def _purge_documents(store: JobStore, retention_days: float) -> None:
    """Delete the documents past their retention, at start and every hour, until cancelled."""
    while True:
        try:
            await asyncio.to_thread(store.prune_documents, retention_days)
        except ServiceError as exc:  # the store failed: the next purge tries again
            _log.warning("old documents not deleted: %s", exc)
        await asyncio.sleep(PURGE_INTERVAL)
