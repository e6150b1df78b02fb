"""Verify a LlamaIndex Response against its own source nodes.

Two entry points, deliberately different:

- :meth:`CiteVerifyPostprocessor.verify_response` (and ``averify_response``) is the one that
  verifies answers: it checks the answer against ``response.source_nodes``, stores the result in
  ``response.metadata["citeverify"]``, redacts under ``redact`` and raises
  :class:`citeverify_core.CitationUnverifiedError` on block. It returns the kind of response it got:

  - ``Response``: a new ``Response`` with the checked answer.
  - ``PydanticResponse`` (``as_query_engine(output_cls=...)``): the string values of the model
    are verified, one a line (not its JSON, whose field names no source says); under ``redact``
    the failing claims are replaced inside the values they came from, and if the model does not
    accept the redacted values the answer is blocked.
  - ``StreamingResponse`` / ``AsyncStreamingResponse``: a streaming response whose
    ``response_gen`` is verified once it ends; the result is in ``metadata["citeverify"]`` from
    then on. Under ``flag`` the tokens pass through as they arrive. Under ``redact`` and
    ``block`` nothing is shown before the answer is checked: the stream is held back, then yields
    the checked answer (the original tokens when it passes, the redacted answer in one piece),
    or raises :class:`citeverify_core.CitationUnverifiedError` at its end on block, having yielded
    nothing.

- As a ``BaseNodePostprocessor`` in ``as_query_engine(node_postprocessors=[...])`` it runs at
  retrieval time, before any answer exists, so it cannot check anything there: it passes the
  nodes through and warns once (:class:`CiteVerifyUsageWarning`) with the fix, which is to wrap
  the engine in :class:`~llamaindex_citeverify.CiteVerifyQueryEngine`.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr, ValidationError
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import SkipValidation, model_validator

from citeverify_core import (
    CitationUnverifiedError,
    CitationVerifier,
    InputError,
    PolicyConfig,
    VerificationResult,
)
from citeverify_core.policy import collect_policy_options
from llamaindex_citeverify._common import (
    CiteVerifyEvent,
    dispatcher,
    field_values,
    listeners,
    node_texts,
    response_text,
    semantic_scorer,
    span_named,
)

__all__ = ["CiteVerifyPostprocessor", "CiteVerifyUsageWarning"]

METADATA_KEY = "citeverify"


class CiteVerifyUsageWarning(UserWarning):
    """citeverify is placed where it cannot check anything (filter it by this category)."""


_NODE_POSTPROCESSOR_WARNING = (
    "CiteVerifyPostprocessor in node_postprocessors runs at retrieval time, before the answer "
    "exists, so it verifies nothing there. Wrap the engine instead: "
    "CiteVerifyQueryEngine(index.as_query_engine(...)), or call "
    "CiteVerifyPostprocessor(...).verify_response(response) on the engine's response."
)


class CiteVerifyPostprocessor(BaseNodePostprocessor):
    """Checks responses against their source nodes (see the module docstring for the two roles).

    Args:
        policy: A :class:`citeverify_core.PolicyConfig`, the inner policy mapping, or a policy pack
            path; keyword options override it (``unverified_action="block"``,
            ``min_groundedness=0.7``, ``strict_quotes=True``).
        include_original: Under ``redact``, keep the removed text in the result
            (``original_answer``, the removed claims' texts). Off by default.
        embed_model: The semantic tier (off by default): a LlamaIndex embedding model (the
            index's ``Settings.embed_model`` will do). A claim that fails on words passes when
            its cosine similarity to its best passage reaches ``semantic={"min_score": ...}``
            (0.8 by default); each claim's ``tier`` says which tier decided it.
        semantic_scorer: Instead of ``embed_model``, any callable ``(claim, passages) -> score``
            in [0, 1], sync or async (an NLI cross-encoder's entailment probability).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    include_original: bool = False
    embed_model: SkipValidation[BaseEmbedding | None] = None
    semantic_scorer: SkipValidation[Callable[..., Any] | None] = Field(default=None, exclude=True)

    _verifier: CitationVerifier = PrivateAttr()
    _warned: bool = PrivateAttr(default=False)

    @model_validator(mode="before")
    @classmethod
    def _collect_policy(cls, data: Any) -> Any:
        """Policy keywords (``unverified_action="block"``, ``min_groundedness=0.7``): policy."""
        if not isinstance(data, dict):
            return data
        return collect_policy_options(data, cls.model_fields)

    def model_post_init(self, context: Any, /) -> None:
        """Build the verifier."""
        self._verifier = CitationVerifier(
            self.policy,
            include_original=self.include_original,
            semantic=semantic_scorer(self.embed_model, self.semantic_scorer),
        )

    @classmethod
    def class_name(cls) -> str:
        """LlamaIndex's name for the component."""
        return "CiteVerifyPostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        # Retrieval time: there is no answer yet. Nodes pass through untouched, and the user is
        # told once, since a guard that silently checks nothing is worse than none.
        if not self._warned:
            self._warned = True
            warnings.warn(_NODE_POSTPROCESSOR_WARNING, CiteVerifyUsageWarning, stacklevel=3)
        return nodes

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return self._postprocess_nodes(nodes, query_bundle)

    def verify_response(self, response: Any) -> RESPONSE_TYPE:
        """Verify an answer against its source nodes; annotate, redact, or raise on block.

        Returns the same kind of response it is given (see the module docstring); a plain
        string is verified against no sources and comes back as a ``Response``. The call is an
        instrumentation span (``CiteVerifyPostprocessor.verify_response``) when a span handler
        listens, and dispatches a :class:`CiteVerifyEvent` when an event handler does.
        """
        if listeners()[0]:
            return self._spanned_verify_response(response)
        return self._verify_response(response)

    @span_named("verify_response")
    def _spanned_verify_response(self, response: Any) -> RESPONSE_TYPE:
        return self._verify_response(response)

    def _verify_response(self, response: Any) -> RESPONSE_TYPE:
        if isinstance(response, StreamingResponse):
            return self._stream(response)
        if isinstance(response, AsyncStreamingResponse):
            msg = "an AsyncStreamingResponse (from aquery) is verified with averify_response"
            raise InputError(msg, path="response")
        texts = node_texts(getattr(response, "source_nodes", None))
        result = self._verifier.verify(response_text(response), texts)
        return self._finish(response, result)

    async def averify_response(self, response: Any) -> RESPONSE_TYPE:
        """Async :meth:`verify_response`; the answer's lookups run concurrently."""
        if listeners()[0]:
            return await self._spanned_averify_response(response)
        return await self._averify_response(response)

    @span_named("averify_response")
    async def _spanned_averify_response(self, response: Any) -> RESPONSE_TYPE:
        return await self._averify_response(response)

    async def _averify_response(self, response: Any) -> RESPONSE_TYPE:
        if isinstance(response, AsyncStreamingResponse):
            return self._astream(response)
        if isinstance(response, StreamingResponse):
            return self._stream(response)
        texts = node_texts(getattr(response, "source_nodes", None))
        result = await self._verifier.averify(response_text(response), texts)
        return self._finish(response, result)

    def _record(self, result: VerificationResult) -> None:
        if listeners()[1]:  # the event is built only for someone to hear it
            dispatcher.event(CiteVerifyEvent.of(result))
        if result.verdict == "block":
            raise CitationUnverifiedError(result)

    def _finish(self, response: Any, result: VerificationResult) -> Response | PydanticResponse:
        self._record(result)
        metadata = dict(getattr(response, "metadata", None) or {})
        metadata[METADATA_KEY] = result
        nodes = list(getattr(response, "source_nodes", None) or [])
        if isinstance(response, PydanticResponse):
            model = response.response
            if model is not None and result.action == "redact":
                model = _redact_model(model, result, self.policy)
            return PydanticResponse(model, source_nodes=nodes, metadata=metadata)
        return Response(result.answer, source_nodes=nodes, metadata=metadata)

    def _holds_back(self) -> bool:
        # Under redact and block an unverified claim must never reach the reader, and nothing
        # can be known about the answer before it is complete: the stream is held back.
        return self.policy.output_action.unverified_action != "flag"

    def _stream(self, response: StreamingResponse) -> StreamingResponse:
        texts = node_texts(response.source_nodes)
        metadata = dict(response.metadata or {})
        hold = self._holds_back()
        if response.response_txt is not None:  # already read to its end
            tokens: Any = iter([response.response_txt])
        else:
            tokens = iter(response.response_gen or ())

        def gen() -> Generator[str, None, None]:
            parts: list[str] = []
            for token in tokens:
                parts.append(token)
                if not hold:
                    yield token
            text = "".join(parts)
            result = self._verifier.verify(text, texts)
            yield from self._stream_end(parts, text, result, metadata, hold=hold)

        return StreamingResponse(gen(), source_nodes=response.source_nodes, metadata=metadata)

    def _astream(self, response: AsyncStreamingResponse) -> AsyncStreamingResponse:
        texts = node_texts(response.source_nodes)
        metadata = dict(response.metadata or {})
        hold = self._holds_back()

        async def agen() -> AsyncGenerator[str, None]:
            parts: list[str] = []
            async for token in response.async_response_gen():
                parts.append(token)
                if not hold:
                    yield token
            text = "".join(parts)
            result = await self._verifier.averify(text, texts)
            for part in self._stream_end(parts, text, result, metadata, hold=hold):
                yield part

        return AsyncStreamingResponse(agen(), source_nodes=response.source_nodes, metadata=metadata)

    def _stream_end(
        self,
        parts: list[str],
        text: str,
        result: VerificationResult,
        metadata: dict[str, Any],
        *,
        hold: bool,
    ) -> list[str]:
        """Both stream paths' end: record the result; what a held-back stream yields now.

        Its own tokens if the answer is unchanged, else the checked answer in one piece; nothing
        more when the tokens were passed through as they came (flag).
        """
        self._record(result)
        metadata[METADATA_KEY] = result
        if not hold:
            return []
        if result.answer == text:
            return parts
        return [result.answer] if result.answer else []


def _redact_model(model: Any, result: VerificationResult, policy: PolicyConfig) -> Any:
    """The model with each failing claim replaced inside the string value it came from."""
    text, spans = field_values(model)
    failing = [c.span for c in result.details.claims or [] if c.verified is False]
    marker = policy.extensions.redaction_marker
    data = _thaw(model.model_dump())
    for path, start, end in spans:
        inside = [(max(s, start), min(e, end)) for s, e in failing if s < end and e > start]
        if failing and not inside:
            continue
        # No failing claim to point at (only the overall overlap failed): as the core does with a
        # plain answer, nothing is known to be supported and every value is replaced.
        value = _replace(text, start, end, inside, marker) if failing else marker
        _set(data, path, value)
    try:
        return type(model).model_validate(data)
    except ValidationError as exc:
        # A constrained field (a Literal, a pattern) cannot hold the marker: rather than hand
        # back unverified values, the answer is blocked.
        why = f"the redacted values do not fit {type(model).__name__}: {exc}"
        blocked = dataclasses.replace(
            result, verdict="block", action="block", reasons=[*result.reasons, why]
        )
        raise CitationUnverifiedError(blocked) from exc


def _replace(text: str, start: int, end: int, spans: list[tuple[int, int]], marker: str) -> str:
    out, last = [], start
    for s, e in sorted(spans):
        out += [text[last:s], marker]
        last = e
    out.append(text[last:end])
    return "".join(out)


def _thaw(value: Any) -> Any:
    # Tuples become lists so that a value inside one can be replaced; validation turns them back.
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    return value


def _set(data: Any, path: tuple[str | int, ...], value: str) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value
