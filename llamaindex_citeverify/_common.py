"""What the LlamaIndex adapters share: nodes and responses as strings, instrumentation."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, Literal, get_args, get_origin

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.bridge.pydantic import BaseModel
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.schema import MetadataMode, NodeWithScore

from citeverify import InputError, VerificationResult

__all__ = [
    "CiteVerifyEvent",
    "abuffered",
    "dispatcher",
    "field_values",
    "node_texts",
    "response_text",
]

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
    """The text of each source node as the LLM saw it.

    LlamaIndex's response synthesizers put ``get_content(metadata_mode=MetadataMode.LLM)`` into
    the prompt: metadata shown to the model is part of what it read (a file name, a date), and
    keys in ``excluded_llm_metadata_keys`` are not (issue 11).
    """
    texts = []
    for i, node in enumerate(nodes or []):
        inner = node.node if isinstance(node, NodeWithScore) else node
        if not hasattr(inner, "get_content"):
            msg = f"source_nodes[{i}] is not a node, got {type(node).__name__}"
            raise InputError(msg, path=f"source_nodes[{i}]")
        texts.append(inner.get_content(metadata_mode=MetadataMode.LLM))
    return texts


#: Where each verified value of a structured answer sits: its path in ``model_dump()`` and its
#: ``[start, end)`` span in the text that is verified.
FieldSpan = tuple[tuple[str | int, ...], int, int]


def field_values(model: BaseModel | None) -> tuple[str, list[FieldSpan]]:
    """The text of a structured answer: its free-text string values, one a line, in field order.

    The JSON of ``model_dump_json()`` would verify the field names and the punctuation too (a
    ``"name":`` the sources never say); what the model claims is in the values. Numbers, booleans
    and ``None`` are not text claims, and neither are labels picked from a fixed set (an ``Enum``
    member, a ``Literal`` field such as ``sentiment: Literal["positive", "negative"]``): none of
    these is verified.
    """
    if model is None:
        return "", []
    leaves: list[tuple[tuple[str | int, ...], str]] = []

    def walk(value: Any, path: tuple[str | int, ...], labels: bool) -> None:
        if isinstance(value, Enum):
            return
        if isinstance(value, BaseModel):
            for name, info in type(value).model_fields.items():
                walk(getattr(value, name), (*path, name), _has_literal(info.annotation))
        elif isinstance(value, str):
            if value.strip() and not labels:
                leaves.append((path, value))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key), labels)
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                walk(item, (*path, index), labels)

    walk(model, (), False)
    spans: list[FieldSpan] = []
    start = 0
    for path, value in leaves:
        spans.append((path, start, start + len(value)))
        start += len(value) + 1  # the newline that ends a value also ends its last claim
    return "\n".join(value for _, value in leaves), spans


def _has_literal(annotation: Any) -> bool:
    if get_origin(annotation) is Literal:
        return True
    return any(_has_literal(arg) for arg in get_args(annotation))


def response_text(response: Any) -> str:
    """The answer text of a non-streaming response (Response, PydanticResponse, str)."""
    if isinstance(response, PydanticResponse):
        return field_values(response.response)[0]
    if isinstance(response, Response):
        return response.response or ""
    if isinstance(response, str):
        return response
    msg = f"expected a LlamaIndex Response, got {type(response).__name__}"
    raise InputError(msg, path="response")


async def abuffered(response: Any) -> Any:
    """A streaming response read to its end (also right when it was already consumed).

    Anything else comes back as given: :func:`response_text` says what it accepts.
    """
    if isinstance(response, AsyncStreamingResponse):
        return await response.get_response()
    if isinstance(response, StreamingResponse):
        return response.get_response()
    return response
