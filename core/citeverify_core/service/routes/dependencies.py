"""What the REST routes share: the app's parts, the caller's API key, the documented errors."""

# No `from __future__ import annotations`: FastAPI reads the dependencies' annotations at runtime.

from dataclasses import dataclass
from typing import Annotated, Any, cast

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from citeverify_core.errors import AuthenticationError, RateLimitError
from citeverify_core.service.decisions import DecisionLog
from citeverify_core.service.jobs import JobStore
from citeverify_core.service.limits import VerificationSlots
from citeverify_core.service.metrics import Metrics
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.schema import ErrorBody

__all__ = ["ERRORS", "Key", "ServiceState", "bearer_scheme", "service_state", "tenant"]

#: The error answers every authenticated route documents (their body: :class:`ErrorBody`).
ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in {
        400: "Invalid request body or parameters",
        401: "Missing or invalid API key",
        402: "Insufficient tokens",
        403: "Revoked API key",
        408: "The request body did not arrive in time",
        413: "Request body too large",
        429: "Rate limit exceeded (see Retry-After)",
        503: "The job store is unavailable, or the service is shutting down",
    }.items()
}


@dataclass(frozen=True, slots=True)
class ServiceState:
    """The parts of one app that its routes use (``app.state.service``).

    Attributes:
        store: Jobs, keys and tokens; its verifier verifies references.
        decisions: The decision log.
        policies: The policy packs of ``POST /api/check``.
        slots: The bounds on verifications running at once.
        metrics: The Prometheus metrics.
        unauthenticated_per_minute: Requests without a valid key per client address.
        check_timeout: Seconds ``POST /api/check`` waits for a verification.
    """

    store: JobStore
    decisions: DecisionLog
    policies: PolicyPacks
    slots: VerificationSlots
    metrics: Metrics
    unauthenticated_per_minute: int
    check_timeout: float


def service_state(request: Request) -> ServiceState:
    """The parts of the app that answers ``request``."""
    return cast(ServiceState, request.app.state.service)


# Declares the bearer scheme in /openapi.json; the header itself is read below (its
# auto_error would answer 403 without our JSON envelope and rate limit).
bearer_scheme = HTTPBearer(auto_error=False, description="An API key: citeverify keys create")


def tenant(
    request: Request,
    _declared: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> dict[str, Any]:
    """The API key's record; unauthenticated requests count against the address's limit.

    Raises:
        AuthenticationError: no valid key (401).
        PermissionDeniedError: a revoked key (403).
        RateLimitError: too many requests without a valid key from this address (429).
    """
    service = service_state(request)
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    try:
        return service.store.authenticate(key.strip() if scheme.lower() == "bearer" else "")
    except AuthenticationError:
        # Counted in the database: every process of the service shares one count.
        client = request.client.host if request.client else "unknown"
        limit = service.unauthenticated_per_minute
        if wait := service.store.hit_rate_limit(client, limit):
            msg = f"more than {limit} requests a minute without a valid API key"
            raise RateLimitError(msg, retry_after=wait) from None
        raise


#: The caller's API key record, for a route's parameters.
Key = Annotated[dict[str, Any], Depends(tenant)]
