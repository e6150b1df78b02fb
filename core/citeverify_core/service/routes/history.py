"""The caller's past documents and their references, newest first."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from citeverify_core.service.routes.dependencies import ERRORS, Key, service_state
from citeverify_core.service.schema import MAX_HISTORY, History
from citeverify_core.service.store import MAX_ID

__all__ = ["router"]

router = APIRouter()


@router.get("/api/verify-reference/history", response_model=History, responses=ERRORS)
def history(
    key: Key,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=MAX_HISTORY)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> dict[str, Any]:
    """Past documents of this key, newest first."""
    return service_state(request).store.history(limit=limit, offset=offset, tenant=key["id"])
