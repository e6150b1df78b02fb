"""What the LlamaIndex adapters share: nodes and responses as strings, instrumentation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.event_handlers import NullEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.span_handlers import NullSpanHandler
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from citeverify_core import InputError, VerificationResult
from citeverify_core.engine import field_values

__all__ = [
    "CiteVerifyEvent",
    "abuffered",
    "dispatcher",
    "field_values",
    "listeners",
    "node_texts",
    "response_text",
    "semantic_scorer",
    "span_named",
]

#: citeverify's instrumentation dispatcher: its spans and events reach every LlamaIndex handler.
dispatcher = get_dispatcher("citeverify")


def semantic_scorer(embed_model: Any, scorer: Any) -> Any:
    """The semantic tier's scorer from an adapter's ``embed_model`` or ``semantic_scorer``.

    The core takes a LlamaIndex embedding model as it is (``get_text_embedding_batch`` and the
    real async ``aget_text_embedding_batch``, one batched call per answer); a callable
    ``(claim, passages) -> score`` (an NLI cross-encoder) too.

    Raises:
        InputError: both are given, or ``embed_model`` is not a LlamaIndex ``BaseEmbedding``.
    """
    if embed_model is not None and scorer is not None:
        msg = "give embed_model or semantic_scorer, not both (one scorer decides a claim)"
        raise InputError(msg, path="embed_model")
    if embed_model is not None and not isinstance(embed_model, BaseEmbedding):
        msg = f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}"
        raise InputError(msg, path="embed_model")
    return embed_model if embed_model is not None else scorer


def listeners(d: Any = dispatcher) -> tuple[bool, bool]:
    """Whether a span handler, and whether an event handler, would hear ``d``'s spans and events.

    The handlers are the ones ``d`` itself walks: its own, then its parents' while it
    propagates. LlamaIndex's own null handlers (on the root dispatcher by default) hear nothing.
    A span costs ~0.03 ms (the call's arguments are bound with ``inspect.signature``, a uuid4,
    a context copy) and an event ~0.01 ms, up to a third of verifying a 100-word answer; what
    nobody hears is skipped.
    """
    spans = events = False
    while d is not None:
        spans = spans or any(not isinstance(h, NullSpanHandler) for h in d.span_handlers)
        events = events or any(not isinstance(h, NullEventHandler) for h in d.event_handlers)
        if not d.propagate or d.manager is None:
            break
        d = d.manager.dispatchers.get(d.parent_name)
    return spans, events


_F = TypeVar("_F", bound=Callable[..., Any])

#: The mark ``dispatcher.span`` leaves on a function: LlamaIndex's ``DispatcherSpanMixin`` does
#: not wrap a method that has it (it would otherwise span every ``query`` override, heard or not).
SPAN_MARK = "__dispatcher_span_decorated__"


def span_named(name: str, d: Any = dispatcher) -> Callable[[_F], _F]:
    """``d.span``, the span named ``name`` (handlers see ``<Class>.<name>-<uuid>``).

    The adapters call a span-wrapped twin of a public method only when :func:`listeners` says a
    span handler hears it; the twin carries the public method's name so that traces show it.
    """

    def decorate(fn: _F) -> _F:
        fn.__name__ = name
        fn.__qualname__ = f"{fn.__qualname__.rpartition('.')[0]}.{name}".lstrip(".")
        spanned: _F = d.span(fn)
        return spanned

    return decorate


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
    """The text of each source node as the LLM saw it.

    LlamaIndex's response synthesizers put ``get_content(metadata_mode=MetadataMode.LLM)`` into
    the prompt: metadata shown to the model is part of what it read (a file name, a date), and
    keys in ``excluded_llm_metadata_keys`` are not.
    """
    texts = []
    for i, node in enumerate(nodes or []):
        inner = node.node if isinstance(node, NodeWithScore) else node
        if type(inner) is TextNode and not inner.metadata:
            texts.append(inner.text)  # what get_content gives without metadata, ~1 us sooner
            continue
        if not hasattr(inner, "get_content"):
            msg = f"source_nodes[{i}] is not a node, got {type(node).__name__}"
            raise InputError(msg, path=f"source_nodes[{i}]")
        texts.append(inner.get_content(metadata_mode=MetadataMode.LLM))
    return texts


def response_text(response: Any) -> str:
    """The answer text of a non-streaming response (Response, PydanticResponse, chat, str).

    Raises:
        InputError: ``response`` is none of these.
    """
    if isinstance(response, PydanticResponse):
        return field_values(response.response)[0]
    if isinstance(response, Response):
        return response.response or ""
    if isinstance(response, AgentChatResponse):
        return response.response
    if isinstance(response, str):
        return response
    msg = f"expected a LlamaIndex Response or chat response, got {type(response).__name__}"
    raise InputError(msg, path="response")


async def abuffered(response: Any) -> Any:
    """A streaming response read to its end (also right when it was already consumed).

    Anything else comes back as given: :func:`response_text` says what it accepts.
    """
    if isinstance(response, AsyncStreamingResponse):
        return await response.get_response()
    if isinstance(response, StreamingResponse):
        return response.get_response()
    if isinstance(response, StreamingAgentChatResponse):
        parts = []
        if response.achat_stream is not None:
            parts = [token async for token in response.async_response_gen()]
        else:
            parts = list(response.response_gen)
        return AgentChatResponse(
            response="".join(parts), sources=response.sources, source_nodes=response.source_nodes
        )
    return response
