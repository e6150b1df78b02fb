"""What the LlamaIndex adapters share: nodes and responses as strings, instrumentation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.schema import MetadataMode, NodeWithScore

from citeverify import InputError, VerificationResult

__all__ = ["CiteVerifyEvent", "abuffered", "buffered", "dispatcher", "node_texts"]

#: citeverify's instrumentation dispatcher: its spans and events reach every LlamaIndex handler.
dispatcher = get_dispatcher("citeverify")


class CiteVerifyEvent(BaseEvent):
    """Emitted once per verified answer, with the verdict."""

    verdict: str
    reason_code: str
    action: str
    groundedness: float | None
    claim_confidence: float | None
    unverified_claim_count: int

    @classmethod
    def class_name(cls) -> str:
        """The event's name for handlers."""
        return "CiteVerifyEvent"

    @classmethod
    def of(cls, result: VerificationResult) -> CiteVerifyEvent:
        """The event for a verification result."""
        d = result.details
        return cls(
            verdict=result.verdict,
            reason_code=result.reason_code,
            action=result.action,
            groundedness=d.groundedness,
            claim_confidence=d.claim_confidence,
            unverified_claim_count=d.unverified_claim_count or 0,
        )


def node_texts(nodes: Sequence[Any] | None) -> list[str]:
    """The text of each source node, without its metadata (what the answer was built from)."""
    texts = []
    for i, node in enumerate(nodes or []):
        inner = node.node if isinstance(node, NodeWithScore) else node
        if not hasattr(inner, "get_content"):
            msg = f"source_nodes[{i}] is not a node, got {type(node).__name__}"
            raise InputError(msg, path=f"source_nodes[{i}]")
        texts.append(inner.get_content(metadata_mode=MetadataMode.NONE))
    return texts


def buffered(response: Any) -> Response:
    """A plain Response: a streaming response is read to its end first."""
    if isinstance(response, Response):
        return response
    if isinstance(response, StreamingResponse):
        text = "".join(response.response_gen) if response.response_gen is not None else ""
        return Response(text, source_nodes=response.source_nodes, metadata=response.metadata)
    if isinstance(response, PydanticResponse):
        text = response.response.model_dump_json() if response.response is not None else ""
        return Response(text, source_nodes=response.source_nodes, metadata=response.metadata)
    if isinstance(response, str):
        return Response(response)
    msg = f"expected a LlamaIndex Response, got {type(response).__name__}"
    raise InputError(msg, path="response")


async def abuffered(response: Any) -> Response:
    """:func:`buffered`, also for an AsyncStreamingResponse."""
    if isinstance(response, AsyncStreamingResponse):
        parts = [part async for part in response.async_response_gen()]
        return Response(
            "".join(parts), source_nodes=response.source_nodes, metadata=response.metadata
        )
    return buffered(response)
