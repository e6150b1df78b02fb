"""The service's error answers: one JSON envelope for every error, whoever raised it.

Every error is ``{"error": {"code": ..., "message": ...}}`` with its HTTP status: the library's
errors (:class:`~citeverify_core.errors.ServiceError` with its status and code, any other
:class:`~citeverify_core.errors.CiteVerifyError` as 400), the framework's (validation, 404, 405)
and a bug (500, never a traceback).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from citeverify_core.errors import CiteVerifyError, RateLimitError, ServiceError

__all__ = ["error_response", "handle_errors", "sendable"]

_log = logging.getLogger("citeverify_core.service")


def sendable(text: str) -> str:
    r"""``text`` with what UTF-8 cannot encode (a lone surrogate) escaped as ``\udc00``.

    An error message may name a request's field or value; the answer is UTF-8 JSON.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def error_response(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    """The JSON envelope of an error, with ``headers`` added to the answer."""
    return JSONResponse(
        {"error": {"code": code, "message": sendable(message)}},
        status_code=status,
        headers=headers or None,
    )


def _validation_message(exc: RequestValidationError) -> str:
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    what = str(first.get("msg", "invalid request"))
    return f"{where}: {what}" if where else what


def handle_errors(app: FastAPI) -> None:
    """Answer every error ``app`` meets with the envelope."""

    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        headers = {}
        if isinstance(exc, RateLimitError):
            headers["Retry-After"] = str(int(exc.retry_after + 0.999))
        if exc.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        status = exc.status if exc.status >= 400 else 503
        return error_response(status, exc.code, str(exc), **headers)

    @app.exception_handler(CiteVerifyError)  # InputError and the rest: the request's fault
    async def _library_error(_request: Request, exc: CiteVerifyError) -> JSONResponse:
        return error_response(400, "invalid_request", str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, "invalid_request", _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # 400 here is the framework's own ("There was an error parsing the body": JSON nested
        # too deeply, a number too long): the same code as every other bad body.
        codes = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}
        return error_response(
            exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail)
        )

    @app.exception_handler(Exception)
    async def _bug(_request: Request, exc: Exception) -> JSONResponse:
        # Never a traceback in a response: the log has it.
        _log.error("internal error", exc_info=exc)
        return error_response(
            500, "internal_error", "internal error; the service log has the details"
        )
