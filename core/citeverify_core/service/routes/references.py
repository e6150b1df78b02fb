"""Reference verification jobs: submit references, poll their jobs, cancel them."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import JSONResponse

from citeverify_core.service.idempotency import IDEMPOTENCY_SECONDS, MAX_IDEMPOTENCY_KEY
from citeverify_core.service.routes.dependencies import ERRORS, Key, service_state
from citeverify_core.service.schema import (
    CancelBody,
    Cancellation,
    Jobs,
    ResultsBody,
    Submission,
    SubmitBody,
)

__all__ = ["IDEMPOTENCY_HEADER", "router"]

#: The header naming a retry of the same submission (``POST /api/verify-reference``).
IDEMPOTENCY_HEADER = "Idempotency-Key"

router = APIRouter()


@router.post("/api/verify-reference", response_model=Submission, responses=ERRORS)
def submit(
    body: SubmitBody,
    key: Key,
    request: Request,
    response: Response,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias=IDEMPOTENCY_HEADER,
            max_length=MAX_IDEMPOTENCY_KEY,
            description="Repeat a submission without paying again: the same key with the "
            f"same body within {IDEMPOTENCY_SECONDS / 3600:g} hours returns the first answer "
            "(Idempotent-Replayed: true).",
        ),
    ] = None,
) -> dict[str, Any]:
    """Queue 1-20 references (one token each); returns their job ids."""
    answer = service_state(request).store.submit(
        body.references, title=body.title, tenant=key["id"], idempotency_key=idempotency_key
    )
    if answer.pop("replayed", False):
        response.headers["Idempotent-Replayed"] = "true"
    return answer


@router.post("/api/verify-reference/results", response_model=Jobs, responses=ERRORS)
def results(body: ResultsBody, key: Key, request: Request) -> JSONResponse:
    """States, live progress and results of up to 50 jobs."""
    # The store's answer as it is (`Jobs` documents it): `result` only when completed, and the
    # results' JSON is not parsed into models and written again.
    return JSONResponse(service_state(request).store.results(body.jobIds, tenant=key["id"]))


@router.post("/api/verify-reference/cancel", response_model=Cancellation, responses=ERRORS)
def cancel(body: CancelBody, key: Key, request: Request) -> dict[str, Any]:
    """Cancel waiting or running jobs; their tokens are refunded."""
    return service_state(request).store.cancel(
        document_id=body.documentId, job_ids=body.jobIds, tenant=key["id"]
    )
