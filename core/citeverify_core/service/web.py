"""The review page of ``citeverify serve``: ``GET /`` and its static files.

The page (``web/index.html``, ``web/app.js``, ``web/app.css``, shipped inside the package) is
public and holds no data: the script asks for an API key and reads everything from the
authenticated API, so a page can only show its own key's data. No build step, no CDN, nothing
fetched from another origin.

Every answer carries a strict Content-Security-Policy (scripts and styles from this origin only,
no inline script, no framing, no plugins), ``X-Content-Type-Options: nosniff`` and
``Referrer-Policy: no-referrer``. The script renders server values with ``textContent`` and
``createElement`` only (answers, documents and references are untrusted), so even a policy
bypass would not turn data into markup.

Caching: the HTML is ``no-cache`` and names the static files with their content hash
(``static/app.js?v=1a2b3c4d5e6f``); a request with the current hash may be cached for a year
(``immutable``), any other is ``no-cache``. Every file has an ``ETag`` and answers
``If-None-Match`` with 304.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

__all__ = ["CONTENT_SECURITY_POLICY", "STATIC_FILES", "web_router"]

#: The static files ``GET /static/{name}`` serves (an allow-list), with their content types.
STATIC_FILES = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
_PAGE = "index.html"

#: Same origin only: no inline script or style, no plugins, no framing, no <base>, forms and
#: fetches to this origin.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
_SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_IMMUTABLE = "public, max-age=31536000, immutable"
_REVALIDATE = "no-cache"


@dataclass(frozen=True)
class _File:
    body: bytes
    media_type: str
    version: str  # the first 12 hex digits of its SHA-256

    @property
    def etag(self) -> str:
        return f'"{self.version}"'


def _read(name: str) -> bytes:
    # importlib.resources: the files are found in a wheel, a zip or a source tree alike.
    return (resources.files("citeverify_core.service") / "web" / name).read_bytes()


def _load(name: str, media_type: str, body: bytes | None = None) -> _File:
    data = _read(name) if body is None else body
    return _File(data, media_type, hashlib.sha256(data).hexdigest()[:12])


def web_router() -> APIRouter:
    """The routes ``GET /`` (the page) and ``GET /static/{name}`` (its script, style and icon).

    Add it to the service with ``app.include_router(web_router())``. The routes are not in
    ``/openapi.json`` (they are not API).
    """
    static = {name: _load(name, kind) for name, kind in STATIC_FILES.items()}
    html = _read(_PAGE).decode("utf-8")
    for name, file in static.items():  # cache-busting: the page names each file's version
        html = html.replace(f'"static/{name}"', f'"static/{name}?v={file.version}"')
    page = _load(_PAGE, "text/html; charset=utf-8", html.encode("utf-8"))
    router = APIRouter(include_in_schema=False)

    def answer(request: Request, file: _File, cache_control: str) -> Response:
        headers = {**_SECURITY_HEADERS, "Cache-Control": cache_control, "ETag": file.etag}
        if _matches(request.headers.get("if-none-match", ""), file.etag):
            return Response(status_code=304, headers=headers)
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(file.body))
            return Response(media_type=file.media_type, headers=headers)
        return Response(file.body, media_type=file.media_type, headers=headers)

    @router.api_route("/", methods=["GET", "HEAD"])
    def index(request: Request) -> Response:
        """The review page."""
        return answer(request, page, _REVALIDATE)

    @router.api_route("/static/{name}", methods=["GET", "HEAD"])
    def static_file(request: Request, name: str) -> Response:
        """``app.js``, ``app.css`` or ``favicon.svg``; any other name is a 404."""
        file = static.get(name)
        if file is None:
            raise StarletteHTTPException(404, "Not Found")
        current = request.query_params.get("v") == file.version
        return answer(request, file, _IMMUTABLE if current else _REVALIDATE)

    return router


def _matches(header: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weak tags compare too: RFC 9110)."""
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return etag in tags or "*" in tags
