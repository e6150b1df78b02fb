"""URLs cited in an answer: HEAD, then a bounded GET when HEAD is refused, redirects followed.

The answer is hostile: the client has the core's address guard (only http(s), only public
addresses, checked after DNS resolution and again after every redirect, the connection pinned
to the address checked), sends no cookies or credentials, and reads a bounded number of bytes.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from citeverify_core.lookups.failures import LookupFailure
from citeverify_core.lookups.guard import AddressGuard
from citeverify_core.lookups.http import Outbound, http_error
from citeverify_core.lookups.outcome import Outcome, Target

if TYPE_CHECKING:
    import httpx

__all__ = ["Urls"]

_REDIRECTS = {301, 302, 303, 307, 308}
_TITLE = re.compile(rb"<title[^>]*>([^<]{1,300})", re.IGNORECASE)


class Urls:
    """Checks that a URL answers, through an :class:`Outbound` with an address guard.

    Args:
        http: The core client to share (its settings, client and cache); a guard built from
            ``url_allow_hosts`` is added to it.
    """

    def __init__(self, http: Outbound) -> None:
        self.guard = AddressGuard(http.settings.url_allow_hosts)
        self.http = http.with_guard(self.guard)

    async def lookup(self, url: str) -> Outcome:
        """Whether ``url`` answers (below 400), after at most ``url_max_redirects`` redirects.

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS` (a blocked address, a bad
                URL or redirect, too many redirects: :class:`LookupFailure`).
        """
        s = self.http.settings
        start = time.perf_counter()
        current = self.guard.parse(url)
        metadata: dict[str, Any] = {}
        for _hop in range(s.url_max_redirects + 1):
            response, metadata = await self._fetch(current)
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                current = self.guard.parse(location, base=current, what="redirect to")
                continue
            elapsed = (time.perf_counter() - start) * 1000
            metadata["final_url"] = str(current.copy_with(username=None, password=None))
            status = response.status_code
            ok = status < 400
            error = None if ok else http_error(response)
            definitive = ok or status in {404, 410}
            return Outcome.of(Target("url", url), ok, status, elapsed, error, metadata, definitive)
        msg = f"more than {s.url_max_redirects} redirects"
        raise LookupFailure(msg)

    async def _fetch(self, target: httpx.URL) -> tuple[httpx.Response, dict[str, Any]]:
        """HEAD, then a GET read up to ``url_max_bytes`` (for a title) when HEAD is refused."""
        headers = {"User-Agent": self.http.settings.user_agent, "Accept": "*/*"}
        url = target
        response, _ = await self.http.request(
            "HEAD", url, headers=headers, retry=False, read="none"
        )
        metadata: dict[str, Any] = {}
        if response.status_code in {403, 405, 501}:
            response, body = await self.http.request(
                "GET",
                url,
                headers=headers,
                retry=False,
                read="any",
                limit=self.http.settings.url_max_bytes,
            )
            title = _TITLE.search(body)
            if title:
                metadata["title"] = title.group(1).decode("utf-8", "replace").strip()
        if "content-type" in response.headers:
            metadata["content_type"] = response.headers["content-type"][:200]
        return response, metadata
