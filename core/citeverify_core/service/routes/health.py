"""The service's health (``/healthz``) and Prometheus metrics (``/metrics``), without a key."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from citeverify_core.errors import ServiceError
from citeverify_core.service.routes.dependencies import service_state

__all__ = ["router"]

router = APIRouter()


@router.get("/healthz")
def healthz(request: Request) -> JSONResponse:
    """200 when the database answers, 503 when it does not."""
    try:
        service_state(request).store.counts()
    except ServiceError as exc:
        return JSONResponse({"status": "unavailable", "error": str(exc)}, status_code=503)
    return JSONResponse({"status": "ok"})


@router.get("/metrics", response_class=PlainTextResponse)
def metrics(request: Request) -> PlainTextResponse:
    """Prometheus text: jobs by state, verification latency."""
    service = service_state(request)
    return PlainTextResponse(
        service.metrics.render(service.store.counts()),
        media_type="text/plain; version=0.0.4; charset=utf-8",
    )
