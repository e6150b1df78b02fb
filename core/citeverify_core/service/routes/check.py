"""Checking an answer against its context documents with a policy pack (the review page's check)."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

import time
from typing import Any

from fastapi import APIRouter, Request

from citeverify_core.errors import ServiceError
from citeverify_core.service.decisions import decision_row
from citeverify_core.service.routes.dependencies import ERRORS, Key, service_state
from citeverify_core.service.schema import CheckBody, CheckResult, Policies

__all__ = ["router"]

router = APIRouter()


@router.post("/api/check", response_model=CheckResult, responses=ERRORS)
async def check(body: CheckBody, key: Key, request: Request) -> dict[str, Any]:
    """Check an answer against its context documents with a policy pack (logged)."""
    service = service_state(request)
    started = time.perf_counter()
    name, verifier = service.policies.get(body.policy)
    timeout = service.check_timeout
    try:
        # On the slots' threads, never the event loop; a caller with many slow checks
        # running is refused (429) instead of taking every thread.
        result = await service.slots.run(
            ("key", key["id"]),
            lambda: verifier.verify(body.answer, body.context_documents),
            timeout=timeout,
        )
    except TimeoutError:
        msg = f"the verification took longer than {timeout:g} seconds"
        raise ServiceError(msg, status=504, code="verification_timeout") from None
    row = decision_row(
        result,
        source="page",
        policy=name,
        status=200,
        latency_ms=(time.perf_counter() - started) * 1000,
    )
    documents = [d if isinstance(d, str) else str(d.get("content")) for d in body.context_documents]
    logged = await service.decisions.record_durably(
        row, tenant=key["id"], answer=body.answer, documents=documents, result=result
    )
    return {"decision_id": logged, "policy": name, "result": result.to_dict()}


@router.get("/api/policies", response_model=Policies, responses=ERRORS)
def list_policies(_key: Key, request: Request) -> dict[str, Any]:
    """The policy packs a request may name (``verdictan.policy``, ``policy``)."""
    policies = service_state(request).policies
    return {
        "policies": [
            {"name": name, "default": name == policies.default} for name in policies.names()
        ]
    }
