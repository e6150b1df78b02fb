"""The caller's account: the API key's token balance."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

from typing import Any

from fastapi import APIRouter, Request

from citeverify_core.service.routes.dependencies import ERRORS, Key, service_state
from citeverify_core.service.schema import Balance

__all__ = ["router"]

router = APIRouter()


@router.get("/api/verify-reference/balance", response_model=Balance, responses=ERRORS)
def balance(key: Key, request: Request) -> dict[str, Any]:
    """The key's tokens: available and reserved by pending jobs."""
    return service_state(request).store.balance(key["id"])
