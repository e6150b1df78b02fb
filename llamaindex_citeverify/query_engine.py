"""A query engine that verifies every answer of the engine it wraps."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import Response
from llama_index.core.query_engine import CustomQueryEngine

from llamaindex_citeverify.postprocessor import CiteVerifyPostprocessor

__all__ = ["CiteVerifyQueryEngine"]


class CiteVerifyQueryEngine(CustomQueryEngine):
    """Wraps any query engine; each answer is checked against its own ``source_nodes``.

    ``query``/``aquery`` return a ``Response`` whose ``metadata["citeverify"]`` holds the
    :class:`citeverify.VerificationResult` (redacted under ``redact``); a block raises
    :class:`citeverify.CitationUnverifiedError`. Streaming engines are buffered and verified once.

    Args:
        query_engine: The engine to wrap (``index.as_query_engine(...)``,
            ``CitationQueryEngine``...).
        policy: As for :class:`CiteVerifyPostprocessor`; keyword options override it.
    """

    query_engine: BaseQueryEngine
    postprocessor: CiteVerifyPostprocessor

    def __init__(self, query_engine: BaseQueryEngine, policy: Any = None, **options: Any) -> None:
        super().__init__(
            query_engine=query_engine,
            postprocessor=CiteVerifyPostprocessor(policy=policy, **options),
        )

    def custom_query(self, query_str: str) -> Response:
        """Query the wrapped engine, then verify the answer."""
        return self.postprocessor.verify_response(self.query_engine.query(query_str))

    async def acustom_query(self, query_str: str) -> Response:
        """Async :meth:`custom_query`: real async in both the engine and the lookups."""
        response = await self.query_engine.aquery(query_str)
        return await self.postprocessor.averify_response(response)
