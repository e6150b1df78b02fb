"""The FastAPI app: the seed's endpoints, API keys, rate limit, metrics, workers."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime,
# and `Key` below is local to create_app.

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, Query, Request, Response
from fastapi import Path as Path_
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from citeverify_core.errors import (
    AuthenticationError,
    CiteVerifyError,
    RateLimitError,
    ServiceError,
)
from citeverify_core.references.parse import MAX_REFERENCE_CHARS, split_reference_list
from citeverify_core.service.decisions import (
    DEFAULT_RETENTION_DAYS,
    DecisionLog,
    DurableDecisions,
    decision_row,
)
from citeverify_core.service.gateway import GATEWAY_MAX_BODY, GatewayConfig, gateway_router
from citeverify_core.service.limits import VerificationSlots
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.store import MAX_POLL_IDS, MAX_REFERENCES, JobStore
from citeverify_core.service.web import web_router

__all__ = ["CHECK_TIMEOUT", "MAX_BODY_BYTES", "UNAUTHENTICATED_PER_MINUTE", "create_app"]

_log = logging.getLogger("citeverify_core.service")

#: A request body larger than this is refused (413) before it is read: 20 references of 1,200
#: characters are at most ~100 KB even as \\u escapes.
MAX_BODY_BYTES = 256 * 1024
#: The seed's limit for requests without a valid API key, per client address.
UNAUTHENTICATED_PER_MINUTE = 10
#: Seconds ``POST /api/check`` waits for its verification (slow lookups) before answering 504.
CHECK_TIMEOUT = 30.0
#: The header naming a retry of the same submission (``POST /api/verify-reference``).
IDEMPOTENCY_HEADER = "Idempotency-Key"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# --- request bodies (the seed's names; the store checks them again, as the library does) --------


class SubmitBody(BaseModel):
    """``POST /api/verify-reference``."""

    model_config = ConfigDict(extra="ignore")
    references: list[Annotated[str, Field(min_length=1, max_length=MAX_REFERENCE_CHARS)]] = Field(
        min_length=1, max_length=MAX_REFERENCES
    )
    title: Annotated[str, Field(max_length=500)] | None = None


class ResultsBody(BaseModel):
    """``POST /api/verify-reference/results``."""

    model_config = ConfigDict(extra="ignore")
    jobIds: list[Annotated[str, Field(max_length=40)]] = Field(max_length=MAX_POLL_IDS)


class CancelBody(BaseModel):
    """``POST /api/verify-reference/cancel``: a document id, job ids, or both."""

    model_config = ConfigDict(extra="ignore")
    documentId: Annotated[str, Field(max_length=100)] | None = None
    jobIds: list[Annotated[str, Field(max_length=40)]] | None = Field(
        default=None, max_length=MAX_POLL_IDS
    )


class CheckBody(BaseModel):
    """``POST /api/check``: an answer and its context documents, checked with a policy pack."""

    model_config = ConfigDict(extra="forbid")
    answer: str
    context_documents: list[str | dict[str, Any]] = Field(default_factory=list)
    policy: Annotated[str, Field(max_length=64)] | None = None


class SplitBody(BaseModel):
    """``POST /api/references/split``: a pasted list or a .bib file's text."""

    model_config = ConfigDict(extra="forbid")
    text: str
    format: Literal["lines", "bib"] = "lines"


# --- response bodies (documented in /openapi.json; the seed's field names) ------------------------


class ErrorDetail(BaseModel):
    """What went wrong."""

    code: str
    message: str


class ErrorBody(BaseModel):
    """Every error answer: ``{"error": {"code": ..., "message": ...}}``."""

    error: ErrorDetail


class Submission(BaseModel):
    """Job ids of queued references."""

    jobIds: list[str]
    documentId: str
    message: str
    tokensAvailable: int


class Progress(BaseModel):
    """Live progress of an active job."""

    step: str | None
    message: str | None


class Job(BaseModel):
    """One job's state; ``result`` only when completed."""

    id: str
    state: Literal["waiting", "active", "completed", "failed", "not-found"]
    error: str | None
    progress: Progress | None
    result: dict[str, Any] | None = None


class Jobs(BaseModel):
    """``{"jobs": [...]}``."""

    jobs: list[Job]


class Balance(BaseModel):
    """The key's tokens."""

    totalAvailable: int
    subscriptionTokens: int
    purchasedTokens: int
    pendingTokens: int
    plan: str | None
    context: Literal["user", "team"]
    name: str | None
    email: str | None


class HistoryReference(BaseModel):
    """One reference of a past document."""

    id: str
    rawText: str
    status: str
    parsedData: dict[str, Any] | None
    verifiedAt: str | None


class HistoryDocument(BaseModel):
    """One past document."""

    id: str
    title: str
    status: Literal["PENDING", "PROCESSING", "COMPLETED", "FAILED"] | None
    referenceCount: int
    createdAt: str
    references: list[HistoryReference]


class Pagination(BaseModel):
    """Where this page is."""

    total: int
    limit: int
    offset: int
    hasMore: bool


class History(BaseModel):
    """Past documents, newest first."""

    documents: list[HistoryDocument]
    pagination: Pagination


class CheckResult(BaseModel):
    """A verification result (``VerificationResult.to_dict()``) and where it was logged."""

    decision_id: str | None
    policy: str
    result: dict[str, Any]


class Policies(BaseModel):
    """The policy packs a request may name."""

    policies: list[dict[str, Any]]


class Decision(BaseModel):
    """One logged decision: what was decided, not the answer.

    ``content`` (the answer and documents) and ``result`` (the full verification result) only
    with ``--log-content``, in one decision's answer.
    """

    id: str
    created_at: str
    source: Literal["chat", "responses", "page"]
    policy: str
    status: int
    verdict: Literal["allow", "block"] | None
    action: Literal["allow", "flag", "redact", "block"] | None
    reason_code: str | None
    groundedness: float | None
    claim_confidence: float | None
    claims: int
    unsupported_claims: int
    quotes: int
    altered_quotes: int
    citations: dict[str, int]
    latency_ms: float
    enforced: bool
    stream: bool
    has_content: bool
    content: dict[str, Any] | None = None
    result: dict[str, Any] | None = None


class Decisions(BaseModel):
    """A page of decisions, newest first."""

    decisions: list[Decision]
    pagination: Pagination


class DailyCounts(BaseModel):
    """Decisions per day (UTC) and action."""

    days: list[dict[str, Any]]


class SplitReferences(BaseModel):
    """The references of a list, and the lines that are not references."""

    references: list[str]
    skipped: list[dict[str, Any]]


class Cancellation(BaseModel):
    """What a cancel did."""

    success: bool
    cancelledJobs: int
    refundedTokens: int
    documentId: str | None
    documentStatus: Literal["PENDING", "PROCESSING", "COMPLETED", "FAILED"] | None


_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in {
        400: "Invalid request body or parameters",
        401: "Missing or invalid API key",
        402: "Insufficient tokens",
        403: "Revoked API key",
        413: "Request body too large",
        429: "Rate limit exceeded (see Retry-After)",
        503: "The job store is unavailable",
    }.items()
}


# --- errors -----------------------------------------------------------------------------------


def _error(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers or None
    )


def _validation_message(exc: RequestValidationError) -> str:
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    what = str(first.get("msg", "invalid request"))
    return f"{where}: {what}" if where else what


# --- the body limit (pure ASGI: before anything reads the body) ----------------------------------


class _BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413, by Content-Length or while they stream."""

    def __init__(self, app: ASGIApp, limit: int, gateway_limit: int) -> None:
        self.app = app
        self.default_limit = limit
        self.gateway_limit = gateway_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        gateway = path.startswith("/v1/") or path == "/api/check"
        limit = self.gateway_limit if gateway else self.default_limit
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > limit):
                await _send_json(send, 413, "body_too_large", self._message(limit))
                return
        received = 0
        started = answered = False

        async def limited() -> Message:
            # Over the limit: answer 413 at once, and tell the app the client left (it stops
            # reading; whatever it answers then is dropped). Raising here would not do: the
            # framework turns an error while reading the body into its own 400.
            nonlocal received, answered
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    if not started and not answered:
                        answered = True
                        await _send_json(send, 413, "body_too_large", self._message(limit))
                    return {"type": "http.disconnect"}
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            if answered:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, limited, tracking)

    @staticmethod
    def _message(limit: int) -> str:
        return f"the request body is larger than {limit:,} bytes"


async def _send_json(send: Send, status: int, code: str, message: str) -> None:
    response = _error(status, code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(k.encode(), v.encode()) for k, v in response.headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": response.body})


# --- the app ------------------------------------------------------------------------------------


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
            seed's defaults).
        log_content: Log the answers and documents with the decisions (off: only what was
            decided).
        log_retention_days: Decisions older than this are deleted.
        slots: The bounds on verifications running at once (per process and per caller) that
            ``POST /api/check`` runs under (default: a new :class:`VerificationSlots`); the app
            exposes it as ``app.state.slots`` for other routes of the process to share.
        check_timeout: Seconds ``POST /api/check`` waits for a verification (504 after).
        on_shutdown: Called when the app stops, after the workers and the log (closes what the
            caller opened for it, such as the store).
    """
    if policies is None:
        policies = gateway.policies if gateway is not None else PolicyPacks()
    decisions = DecisionLog(store, log_content=log_content, retention_days=log_retention_days)
    registry = CollectorRegistry()
    jobs_gauge = Gauge("citeverify_jobs", "Reference jobs by state", ["state"], registry=registry)
    latency = Histogram(
        "citeverify_verification_seconds",
        "Time to verify one reference, by outcome",
        ["state"],
        registry=registry,
        buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
    )
    store.observe = lambda state, seconds: latency.labels(state).observe(seconds)
    decided = Counter(
        "citeverify_decisions",
        "Answers checked by the guard and the page, by source, policy pack and action "
        "(action 'unchecked': a stream passed through)",
        ["source", "policy", "action"],
        registry=registry,
    )
    decision_latency = Histogram(
        "citeverify_decision_seconds",
        "Time from request to decision (the upstream call included), by source",
        ["source"],
        registry=registry,
        buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
    )

    # The labelled children, kept: .labels() validates and looks them up under a lock each time,
    # a measurable share of what a guard request costs the event loop. Bounded: sources and
    # actions are a few, policy names are the packs'.
    children: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def observe_decision(row: Mapping[str, Any]) -> None:
        labels = (str(row["source"]), str(row["policy"]), str(row["action"] or "unchecked"))
        child = children.get(labels)
        if child is None:
            if len(children) > 10_000:
                children.clear()
            child = children[labels] = (
                decided.labels(*labels),
                decision_latency.labels(labels[0]),
            )
        child[0].inc()
        child[1].observe(float(row["latency_ms"]) / 1000)

    # One bound for every verification of the process: the guard's and POST /api/check's.
    if slots is None:
        slots = gateway.slots if gateway is not None else VerificationSlots()
    elif gateway is not None:
        gateway.slots = slots

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        worker = _Worker(store, poll_interval) if workers else None
        if worker is not None:
            worker.start()
        decisions.start()
        try:
            yield
        finally:
            if worker is not None:
                await asyncio.to_thread(worker.stop)
            await asyncio.to_thread(decisions.stop)
            if gateway is not None:
                await gateway.aclose()
            slots.close()
            for close in on_shutdown:
                await asyncio.to_thread(close)

    app = FastAPI(
        title="citeverify reference verification",
        version=_version(),
        description="Seed 004's reference-verification API, self-hosted (citeverify serve).",
        lifespan=lifespan,
        # No documentation pages on the service's origin: FastAPI's load scripts from a CDN
        # (floating versions, no integrity) without the review page's CSP, and a script there
        # could read the key the page remembers. The schema stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    decisions.observe = observe_decision
    app.state.decisions = decisions  # the decision log (tests, embedding applications)
    app.state.policies = policies
    app.state.slots = slots  # one bound for every verification of this process
    # No trailing-slash redirects: Starlette builds their Location from the Host header, so a
    # request could make the service redirect to any host. A wrong path is a 404.
    app.router.redirect_slashes = False

    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        headers = {}
        if isinstance(exc, RateLimitError):
            headers["Retry-After"] = str(int(exc.retry_after + 0.999))
        if exc.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        status = exc.status if exc.status >= 400 else 503
        return _error(status, exc.code, str(exc), **headers)

    @app.exception_handler(CiteVerifyError)  # InputError and the rest: the request's fault
    async def _library_error(_request: Request, exc: CiteVerifyError) -> JSONResponse:
        return _error(400, "invalid_request", str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, "invalid_request", _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # 400 here is the framework's own ("There was an error parsing the body": JSON nested
        # too deeply, a number too long): the same code as every other bad body.
        codes = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}
        return _error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))

    @app.exception_handler(Exception)
    async def _bug(_request: Request, exc: Exception) -> JSONResponse:
        # Never a traceback in a response: the log has it.
        _log.error("internal error", exc_info=exc)
        return _error(500, "internal_error", "internal error; the service log has the details")

    # Declares the bearer scheme in /openapi.json; the header itself is read below (its
    # auto_error would answer 403 without our JSON envelope and rate limit).
    bearer_scheme = HTTPBearer(auto_error=False, description="An API key: citeverify keys create")

    def tenant(
        request: Request,
        _declared: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
    ) -> dict[str, Any]:
        """The API key's record; unauthenticated requests count against the address's limit."""
        header = request.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        try:
            return store.authenticate(key.strip() if scheme.lower() == "bearer" else "")
        except AuthenticationError:
            # Counted in the database: every process of the service shares one count.
            client = request.client.host if request.client else "unknown"
            if wait := store.hit_rate_limit(client, unauthenticated_per_minute):
                limit = unauthenticated_per_minute
                msg = f"more than {limit} requests a minute without a valid API key"
                raise RateLimitError(msg, retry_after=wait) from None
            raise

    Key = Annotated[dict[str, Any], Depends(tenant)]

    @app.post("/api/verify-reference", response_model=Submission, responses=_ERRORS)
    def submit(
        body: SubmitBody,
        key: Key,
        response: Response,
        idempotency_key: Annotated[
            str | None,
            Header(
                alias=IDEMPOTENCY_HEADER,
                max_length=255,
                description="Repeat a submission without paying again: the same key with the "
                "same body within 24 hours returns the first answer (Idempotent-Replayed: true).",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Queue 1-20 references (one token each); returns their job ids."""
        answer = store.submit(
            body.references, title=body.title, tenant=key["id"], idempotency_key=idempotency_key
        )
        if answer.pop("replayed", False):
            response.headers["Idempotent-Replayed"] = "true"
        return answer

    @app.post(
        "/api/verify-reference/results",
        response_model=Jobs,
        response_model_exclude_unset=True,  # `result` only when completed, as the seed says
        responses=_ERRORS,
    )
    def results(body: ResultsBody, key: Key) -> dict[str, Any]:
        """States, live progress and results of up to 50 jobs."""
        return store.results(body.jobIds, tenant=key["id"])

    @app.get("/api/verify-reference/balance", response_model=Balance, responses=_ERRORS)
    def balance(key: Key) -> dict[str, Any]:
        """The key's tokens: available and reserved by pending jobs."""
        return store.balance(key["id"])

    @app.get("/api/verify-reference/history", response_model=History, responses=_ERRORS)
    def history(
        key: Key,
        limit: Annotated[int, Query(ge=1, le=50)] = 20,
        offset: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
    ) -> dict[str, Any]:
        """Past documents of this key, newest first."""
        return store.history(limit=limit, offset=offset, tenant=key["id"])

    @app.post("/api/verify-reference/cancel", response_model=Cancellation, responses=_ERRORS)
    def cancel(body: CancelBody, key: Key) -> dict[str, Any]:
        """Cancel waiting or running jobs; their tokens are refunded."""
        return store.cancel(document_id=body.documentId, job_ids=body.jobIds, tenant=key["id"])

    @app.post("/api/check", response_model=CheckResult, responses=_ERRORS)
    async def check(body: CheckBody, key: Key) -> dict[str, Any]:
        """Check an answer against its context documents with a policy pack (logged)."""
        started = time.perf_counter()
        name, verifier = policies.get(body.policy)
        try:
            # On the slots' threads, never the event loop; a caller with many slow checks
            # running is refused (429) instead of taking every thread.
            result = await slots.run(
                ("key", key["id"]),
                lambda: verifier.verify(body.answer, body.context_documents),
                timeout=check_timeout,
            )
        except TimeoutError:
            msg = f"the verification took longer than {check_timeout:g} seconds"
            raise ServiceError(msg, status=504, code="verification_timeout") from None
        row = decision_row(
            result,
            source="page",
            policy=name,
            status=200,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        documents = [
            d if isinstance(d, str) else str(d.get("content")) for d in body.context_documents
        ]
        logged = await decisions.record_durably(
            row, tenant=key["id"], answer=body.answer, documents=documents, result=result
        )
        return {"decision_id": logged, "policy": name, "result": result.to_dict()}

    @app.get("/api/policies", response_model=Policies, responses=_ERRORS)
    def list_policies(_key: Key) -> dict[str, Any]:
        """The policy packs a request may name (``verdictan.policy``, ``policy``)."""
        return {
            "policies": [
                {"name": name, "default": name == policies.default} for name in policies.names()
            ]
        }

    @app.get("/api/decisions", response_model=Decisions, responses=_ERRORS)
    def list_decisions(
        key: Key,
        verdict: Literal["allow", "block"] | None = None,
        action: Literal["allow", "flag", "redact", "block"] | None = None,
        policy: Annotated[str | None, Query(max_length=64)] = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        offset: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
    ) -> dict[str, Any]:
        """This key's decisions, newest first."""
        return decisions.query(
            key["id"], verdict=verdict, action=action, policy=policy, limit=limit, offset=offset
        )

    @app.get("/api/decisions/daily", response_model=DailyCounts, responses=_ERRORS)
    def daily_decisions(
        key: Key,
        days: Annotated[int, Query(ge=1, le=366)] = 30,
        policy: Annotated[str | None, Query(max_length=64)] = None,
    ) -> dict[str, Any]:
        """This key's decisions per day (UTC) and action."""
        return decisions.daily(key["id"], days=days, policy=policy)

    @app.get(
        "/api/decisions/{decision_id}",
        response_model=Decision,
        responses={**_ERRORS, 404: {"model": ErrorBody, "description": "No such decision"}},
    )
    def one_decision(decision_id: Annotated[str, Path_(max_length=40)], key: Key) -> Any:
        """One of this key's decisions, with the answer and documents if they were logged."""
        found = decisions.get(decision_id, key["id"])
        if found is None:
            return _error(404, "not_found", "no decision of this key has that id")
        return found

    @app.post("/api/references/split", response_model=SplitReferences, responses=_ERRORS)
    def split_references(body: SplitBody, _key: Key) -> dict[str, Any]:
        """The references of a pasted list or a .bib file, and the lines that are not."""
        # BibTeX entries keep their bibliographic fields only: an abstract would take an entry
        # over the 1,200 characters that POST /api/verify-reference accepts.
        references, skipped = split_reference_list(
            body.text, bibtex=body.format == "bib", bibliographic_only=True
        )
        return {
            "references": [text for _, text in references],
            "skipped": [
                {"line": line, "reason": reason, "text": text} for line, reason, text in skipped
            ],
        }

    @app.get("/healthz")
    def healthz() -> JSONResponse:
        """200 when the database answers, 503 when it does not."""
        try:
            store.counts()
        except ServiceError as exc:
            return JSONResponse({"status": "unavailable", "error": str(exc)}, status_code=503)
        return JSONResponse({"status": "ok"})

    @app.get("/metrics", response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        """Prometheus text: jobs by state, verification latency."""
        counts = store.counts()
        for state in ("waiting", "active", "completed", "failed"):
            jobs_gauge.labels(state).set(counts.get(state, 0))
        return PlainTextResponse(
            generate_latest(registry), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    if gateway is not None:
        # A key guessed on the guard counts against the same window as on the REST API.
        def limiter(address: str) -> float:
            return store.hit_rate_limit(address, unauthenticated_per_minute)

        app.include_router(gateway_router(gateway, store=store, log=decisions, limiter=limiter))
    # The review page at / (docs/web.md): public HTML/JS/CSS; its data comes from the API above.
    app.include_router(web_router())
    # The guard endpoints carry context documents: a larger limit there.
    app.add_middleware(_BodyLimit, limit=max_body_bytes, gateway_limit=GATEWAY_MAX_BODY)
    # A response starts only once the decisions it logged are committed (kill -9 loses none).
    app.add_middleware(DurableDecisions)
    return app


class _Worker:
    """The verification workers: a thread with its own event loop running ``store.work``."""

    def __init__(self, store: JobStore, poll: float) -> None:
        self.store = store
        self.poll = poll
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="citeverify-workers", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        async def run() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self._ready.set()
            await self.store.work(self._stop, poll=self.poll)

        try:
            asyncio.run(run())
        except Exception:
            _log.exception("the verification workers stopped")
            self._ready.set()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)


def _version() -> str:
    from citeverify_core import __version__  # noqa: PLC0415

    return __version__
