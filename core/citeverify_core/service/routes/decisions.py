"""The caller's logged decisions: a page of them, counts per day, one with its content."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi import Path as Path_

from citeverify_core.service.responses import error_response
from citeverify_core.service.routes.dependencies import ERRORS, Key, service_state
from citeverify_core.service.schema import DailyCounts, Decision, Decisions, ErrorBody
from citeverify_core.service.store import MAX_ID

__all__ = ["router"]

router = APIRouter()


@router.get("/api/decisions", response_model=Decisions, responses=ERRORS)
def list_decisions(
    key: Key,
    request: Request,
    verdict: Literal["allow", "block"] | None = None,
    action: Literal["allow", "flag", "redact", "block"] | None = None,
    policy: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> dict[str, Any]:
    """This key's decisions, newest first."""
    return service_state(request).decisions.query(
        key["id"], verdict=verdict, action=action, policy=policy, limit=limit, offset=offset
    )


@router.get("/api/decisions/daily", response_model=DailyCounts, responses=ERRORS)
def daily_decisions(
    key: Key,
    request: Request,
    days: Annotated[int, Query(ge=1, le=366)] = 30,
    policy: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """This key's decisions per day (UTC) and action."""
    return service_state(request).decisions.daily(key["id"], days=days, policy=policy)


@router.get(
    "/api/decisions/{decision_id}",
    response_model=Decision,
    responses={**ERRORS, 404: {"model": ErrorBody, "description": "No such decision"}},
)
def one_decision(
    decision_id: Annotated[str, Path_(max_length=40)], key: Key, request: Request
) -> Any:
    """One of this key's decisions, with the answer and documents if they were logged."""
    found = service_state(request).decisions.get(decision_id, key["id"])
    if found is None:
        return error_response(404, "not_found", "no decision of this key has that id")
    return found
