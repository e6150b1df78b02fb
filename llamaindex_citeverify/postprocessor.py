"""Verify a LlamaIndex Response against its own source nodes.

Two entry points, deliberately different:

- :meth:`CiteVerifyPostprocessor.verify_response` (and ``averify_response``) is the one that
  verifies answers: it takes a ``Response`` (or a streaming one, buffered), checks
  ``response.response`` against ``response.source_nodes``, stores the result in
  ``response.metadata["citeverify"]``, redacts under ``redact`` and raises
  :class:`citeverify.CitationUnverifiedError` on block.
- As a ``BaseNodePostprocessor`` it may sit in ``as_query_engine(node_postprocessors=[...])``, but
  there it runs before any answer exists: it records nothing and changes no node. Use
  :class:`~llamaindex_citeverify.CiteVerifyQueryEngine` to verify every answer of an engine.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from citeverify import CitationUnverifiedError, CitationVerifier, PolicyConfig, VerificationResult
from citeverify._policy import policy_options_validator
from llamaindex_citeverify._common import (
    CiteVerifyEvent,
    abuffered,
    buffered,
    dispatcher,
    node_texts,
)

__all__ = ["CiteVerifyPostprocessor"]

METADATA_KEY = "citeverify"


class CiteVerifyPostprocessor(BaseNodePostprocessor):
    """Checks responses against their source nodes (see the module docstring for the two roles).

    Args:
        policy: A :class:`citeverify.PolicyConfig`, the inner policy mapping, or a policy pack
            path; keyword options override it (``unverified_action="block"``,
            ``min_groundedness=0.7``, ``strict_quotes=True``).
        include_original: Under ``redact``, keep the removed text in the result
            (``original_answer``, the removed claims' texts). Off by default.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    include_original: bool = False

    _verifier: CitationVerifier = PrivateAttr()

    _collect_policy = policy_options_validator()

    def model_post_init(self, context: Any, /) -> None:
        """Build the verifier."""
        self._verifier = CitationVerifier(self.policy, include_original=self.include_original)

    @classmethod
    def class_name(cls) -> str:
        """LlamaIndex's name for the component."""
        return "CiteVerifyPostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        # Retrieval time: there is no answer yet. Nodes pass through untouched.
        return nodes

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return nodes

    @dispatcher.span
    def verify_response(self, response: Any) -> Response:
        """Verify an answer against its source nodes; annotate, redact, or raise on block."""
        response = buffered(response)
        result = self._verifier.verify(response.response or "", node_texts(response.source_nodes))
        return self._finish(response, result)

    @dispatcher.span
    async def averify_response(self, response: Any) -> Response:
        """Async :meth:`verify_response`; the answer's lookups run concurrently."""
        response = await abuffered(response)
        texts = node_texts(response.source_nodes)
        result = await self._verifier.averify(response.response or "", texts)
        return self._finish(response, result)

    def _finish(self, response: Response, result: VerificationResult) -> Response:
        dispatcher.event(CiteVerifyEvent.of(result))
        if result.verdict == "block":
            raise CitationUnverifiedError(result)
        metadata = dict(response.metadata or {})
        metadata[METADATA_KEY] = result
        return Response(result.answer, source_nodes=response.source_nodes, metadata=metadata)
