"""CourtListener: case citations checked by its citation-lookup API (a token is needed)."""

from __future__ import annotations

import os
import time
from typing import Any

from citeverify_core.lookups.http import (
    LookupFailure,
    Outbound,
    decode_json,
    http_error,
    text_or_none,
)
from citeverify_core.lookups.outcome import Outcome, Target

__all__ = ["TOKEN_ENV", "CourtListener", "outcomes_from_lookup"]

#: Where the token comes from when the policy gives none.
TOKEN_ENV = "COURTLISTENER_TOKEN"
_KNOWN = {300: "ambiguous", 404: "not found"}


class CourtListener:
    """The CourtListener REST API (v4), through the core's :class:`Outbound`."""

    def __init__(self, http: Outbound) -> None:
        self.http = http

    async def lookup(self, citations: list[str]) -> list[Outcome]:
        """Each citation found, ambiguous or not found, in one call (never retried: it is a POST).

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        s = self.http.settings
        token = s.courtlistener_token or os.environ.get(TOKEN_ENV)
        targets = [Target("courtlistener", c) for c in citations]
        if not token:
            why = f"no CourtListener token (extensions.lookups.courtlistener_token or {TOKEN_ENV})"
            return [Outcome.failed(t, why, 0.0) for t in targets]
        start = time.perf_counter()
        response, body = await self.http.request(
            "POST",
            f"{s.courtlistener_base_url.rstrip('/')}/api/rest/v4/citation-lookup/",
            data={"text": "; ".join(citations)},
            headers={"Authorization": f"Token {token}", "User-Agent": s.user_agent},
            retry=False,
        )
        elapsed = (time.perf_counter() - start) * 1000
        if response.status_code != 200:
            err = http_error(response)
            return [Outcome.of(t, False, response.status_code, elapsed, err) for t in targets]
        return outcomes_from_lookup(decode_json(body), targets, elapsed)


def outcomes_from_lookup(data: Any, targets: list[Target], elapsed: float) -> list[Outcome]:
    """The outcome of each target in a citation-lookup answer (every field type-checked).

    Raises:
        LookupFailure: the answer is not a list.
    """
    if not isinstance(data, list):
        msg = "unexpected CourtListener response (not a list)"
        raise LookupFailure(msg)
    by_citation: dict[str, dict[str, Any]] = {}
    for item in data:
        if not isinstance(item, dict):
            continue
        names = item.get("normalized_citations")
        for name in [item.get("citation"), *(names if isinstance(names, list) else [])]:
            if isinstance(name, str):
                by_citation.setdefault(name, item)
    outcomes = []
    for t in targets:
        item = by_citation.get(t.key)
        if item is None:
            outcomes.append(Outcome.of(t, False, 200, elapsed, "not in CourtListener's answer"))
            continue
        # Every field is the service's word: a status of another type is no status.
        status = item.get("status")
        status = status if type(status) is int else None
        clusters = item.get("clusters")
        first = clusters[0] if isinstance(clusters, list) and clusters else None
        name = text_or_none(first.get("case_name")) if isinstance(first, dict) else None
        meta = {"case_name": name} if name else {}
        if status == 200:
            outcomes.append(Outcome.of(t, True, 200, elapsed, None, meta, True))
        else:
            err = (
                text_or_none(item.get("error_message"))
                or _KNOWN.get(status or 0)
                or (f"status {status}" if status is not None else "no status in the answer")
            )
            outcomes.append(Outcome.of(t, False, status, elapsed, err, meta, status == 404))
    return outcomes
