"""Verify a LlamaIndex response (a query response or a chat response) against its source nodes.

:meth:`CiteVerifyPostprocessor.verify_response` (and ``averify_response``, and the functions
:func:`verify_response` / :func:`averify_response`) check the answer against
``response.source_nodes``, store the result in ``response.metadata["citeverify"]``, redact under
``redact``, and on block raise :class:`citeverify_core.CitationUnverifiedError` or, with
``blocked_response=`` (a string or a callable of the result), put that text where the answer was.
They return the kind of response they got:

- ``Response``: a new ``Response`` with the checked answer.
- ``PydanticResponse`` (``as_query_engine(output_cls=...)``): the string values of the model are
  verified, one a line (not its JSON, whose field names no source says); under ``redact`` the
  failing claims are replaced inside the values they came from, and if the model does not accept
  the redacted values the answer is blocked. A blocked structured answer replaced by
  ``blocked_response`` comes back as a plain ``Response`` holding the replacement text (no model
  can hold it).
- ``AgentChatResponse`` (a chat engine's ``chat``/``achat``): a new ``AgentChatResponse`` with the
  checked answer, the same ``sources`` and ``source_nodes``, and the result in its ``metadata``.
- ``StreamingResponse`` / ``AsyncStreamingResponse`` / ``StreamingAgentChatResponse``: a stream of
  the same kind whose tokens are verified once they end; the result is in ``metadata["citeverify"]``
  from then on. Under ``flag`` the tokens pass through as they arrive. Under ``redact`` and
  ``block`` nothing is shown before the answer is checked: the stream is held back, then yields
  the checked answer (the original tokens when it passes, the redacted answer or the replacement
  in one piece), or raises :class:`citeverify_core.CitationUnverifiedError` at its end on block
  without ``blocked_response``, having yielded nothing.

What a guard blocked reaches no one: under ``block`` the result in ``metadata["citeverify"]``, the
:class:`citeverify_core.CitationUnverifiedError` raised (its ``result``) and the
:class:`~llama_index.postprocessor.citeverify.CiteVerifyEvent` hold nothing of the blocked answer
(:func:`citeverify_core.engine.shown_result`: its claims, quotes and citations keep their spans,
scores and statuses, their text is withheld; ``answer`` is the replacement, or empty), and under
``redact`` nothing of the removed claims. ``include_original=True`` sends the original along.
The credentials of the policy (``extensions.lookups.ncbi_api_key``, ``semanticscholar_api_key``,
``courtlistener_token``) are never written in clear: ``to_dict``/``to_json``, pickles and the
repr mask them, and loading reads them from ``NCBI_API_KEY``, ``SEMANTIC_SCHOLAR_API_KEY`` and
``COURTLISTENER_TOKEN``.

In ``as_query_engine(node_postprocessors=[...])`` or ``as_chat_engine(node_postprocessors=[...])``
the postprocessor runs at retrieval time, before any answer exists, so it could check nothing: it
raises an :class:`citeverify_core.InputError` naming the wrappers to use instead
(:class:`~llama_index.postprocessor.citeverify.CiteVerifyQueryEngine`,
:class:`~llama_index.postprocessor.citeverify.CiteVerifyChatEngine`).
"""

from __future__ import annotations

import dataclasses
import logging
import pickle
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Self

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr, ValidationError
from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

# From pydantic itself: llama-index-core 0.12's bridge does not re-export the serializer names.
from pydantic import (
    SerializerFunctionWrapHandler,
    SkipValidation,
    field_serializer,
    model_validator,
)

from citeverify_core import (
    CitationUnverifiedError,
    CitationVerifier,
    InputError,
    PolicyConfig,
    VerificationResult,
)
from citeverify_core.engine import (
    BlockedResponse,
    blocked_answer,
    check_blocked_response,
    shown_result,
)
from citeverify_core.policy import collect_policy_options, mask_credentials, restore_credentials
from llama_index.postprocessor.citeverify._common import (
    CiteVerifyEvent,
    dispatcher,
    field_values,
    listeners,
    node_texts,
    response_text,
    semantic_scorer,
    span_named,
)

__all__ = ["CheckedChatStream", "CiteVerifyPostprocessor", "averify_response", "verify_response"]

METADATA_KEY = "citeverify"

logger = logging.getLogger(__name__)

#: Called when a chat answer has been checked: ``(original text, text shown)``; the text shown is
#: ``None`` when the answer is blocked and raised (the turn is withdrawn).
TurnEnd = Callable[[str, str | None], None]
ATurnEnd = Callable[[str, str | None], Awaitable[None]]

_NOT_IN_NODE_POSTPROCESSORS = (
    "CiteVerifyPostprocessor cannot run in node_postprocessors: they run at retrieval time, "
    "before the answer exists, so nothing would be checked. Wrap the engine instead: "
    "CiteVerifyQueryEngine(index.as_query_engine(...)) or "
    "CiteVerifyChatEngine(index.as_chat_engine(...)), or call verify_response(response) on the "
    "engine's response."
)


@dataclass
class CheckedChatStream(StreamingAgentChatResponse):
    """A ``StreamingAgentChatResponse`` whose tokens are verified; the result is in ``metadata``.

    ``metadata["citeverify"]`` holds the :class:`citeverify_core.VerificationResult` once the
    stream has been read to its end (``response_gen``, ``async_response_gen()``,
    ``print_response_stream()``).
    """

    metadata: dict[str, Any] = field(default_factory=dict)


class CiteVerifyPostprocessor(BaseNodePostprocessor):
    """Checks responses against their source nodes (see the module docstring).

    Args:
        policy: A :class:`citeverify_core.PolicyConfig`, the inner policy mapping, or a policy pack
            path; keyword options override it (``unverified_action="block"``,
            ``min_groundedness=0.7``, ``strict_quotes=True``).
        blocked_response: What a blocked answer becomes instead of a raise: a string, or a
            callable given the :class:`citeverify_core.VerificationResult` that returns one
            (``citeverify_core.engine.DEFAULT_BLOCKED_RESPONSE`` is a ready text). ``None`` (the
            default) raises :class:`citeverify_core.CitationUnverifiedError`.
        include_original: Send the original along: keep, in the result an application is
            handed (``metadata["citeverify"]``, the error raised on block), the text a block or a
            redaction took away (``original_answer``, the claims' texts). Off by default: what a
            guard blocked reaches no one. The answer shown, and the chat engine's memory, are the
            same either way.
        embed_model: The semantic tier (off by default): a LlamaIndex embedding model (the
            index's ``Settings.embed_model`` will do). A claim that fails on words passes when
            its cosine similarity to its best passage reaches ``semantic={"min_score": ...}``
            (0.8 by default); each claim's ``tier`` says which tier decided it.
        semantic_scorer: Instead of ``embed_model``, any callable ``(claim, passages) -> score``
            in [0, 1], sync or async (an NLI cross-encoder's entailment probability).

    Serialisation (``to_dict``/``to_json``, ``pickle``, the repr) writes the policy's credentials
    masked (``"**********"``); ``from_dict``/``from_json`` and ``pickle.loads`` read each masked one
    from its environment variable (``NCBI_API_KEY``, ``SEMANTIC_SCHOLAR_API_KEY``,
    ``COURTLISTENER_TOKEN``), or leave it unset when the variable is. ``blocked_response`` and
    ``semantic_scorer`` (callables) are not serialised: give them again when loading.

    Raises:
        citeverify_core.PolicyError: a policy option is wrong.
        citeverify_core.InputError: ``blocked_response`` is neither a string nor a callable, or
            the semantic options conflict.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    blocked_response: SkipValidation[str | Callable[..., str] | None] = Field(
        default=None, exclude=True
    )
    include_original: bool = False
    embed_model: SkipValidation[BaseEmbedding | None] = None
    semantic_scorer: SkipValidation[Callable[..., Any] | None] = Field(default=None, exclude=True)

    _verifier: CitationVerifier = PrivateAttr()

    def __init__(self, **data: Any) -> None:
        # Checked before pydantic runs: inside validation an InputError would become a
        # ValidationError, and a wrong option must fail with its own clear error.
        check_blocked_response(data.get("blocked_response"))
        super().__init__(**data)

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        context: Any | None = None,
        **kwargs: Any,
    ) -> Self:
        """Validate a mapping of options; a wrong ``blocked_response`` is an ``InputError``."""
        if isinstance(obj, dict):
            check_blocked_response(obj.get("blocked_response"))
        return super().model_validate(obj, strict=strict, context=context, **kwargs)

    @model_validator(mode="before")
    @classmethod
    def _collect_policy(cls, data: Any) -> Any:
        """Policy keywords (``unverified_action="block"``, ``min_groundedness=0.7``): policy.

        A policy loaded from a serialised postprocessor gets its masked credentials from the
        environment.
        """
        if not isinstance(data, dict):
            return data
        if "policy" in data:
            data = {**data, "policy": restore_credentials(data["policy"])}
        return collect_policy_options(data, cls.model_fields)

    @field_serializer("policy", mode="wrap")
    def _dump_policy(self, policy: PolicyConfig, handler: SerializerFunctionWrapHandler) -> Any:
        # to_dict, to_json, model_dump: the credentials masked, never in clear.
        return handler(mask_credentials(policy))

    def __repr_args__(self) -> Any:
        """The fields a repr (and ``str``, and a log line) shows: the credentials masked."""
        for name, value in super().__repr_args__():
            yield name, mask_credentials(value) if name == "policy" else value

    def __getstate__(self) -> dict[Any, Any]:
        """The pickled state: the fields, credentials masked; not the verifier (which holds them).

        As LlamaIndex's ``BaseComponent`` does, a field that cannot be pickled (a lambda as
        ``blocked_response``) is left out with a logged warning; unlike it, the postprocessor
        being pickled keeps all its fields.
        """
        fields = {**self.__dict__, "policy": mask_credentials(self.policy)}
        for key in list(fields):
            try:
                pickle.dumps(fields[key])
            except Exception:  # anything that cannot be pickled is left out
                logger.warning("Removing unpickleable attribute %s", key)
                del fields[key]
        return {
            "__dict__": fields,
            "__pydantic_extra__": self.__pydantic_extra__,
            "__pydantic_fields_set__": self.__pydantic_fields_set__,
            "__pydantic_private__": {},
        }

    def __setstate__(self, state: dict[Any, Any]) -> None:
        """Made again from its fields: the credentials from the environment, a new verifier."""
        type(self).__init__(self, **state["__dict__"])

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
        # Retrieval time: there is no answer yet, for a query engine as for a chat engine. A guard
        # that silently checks nothing is worse than none, so it refuses at the first query.
        raise InputError(_NOT_IN_NODE_POSTPROCESSORS, path="node_postprocessors")

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return self._postprocess_nodes(nodes, query_bundle)

    def verify_response(self, response: Any) -> Any:
        """Verify an answer against its source nodes; annotate, redact, replace or raise on block.

        Returns the same kind of response it is given (see the module docstring); a plain
        string is verified against no sources and comes back as a ``Response``. The call is an
        instrumentation span (``CiteVerifyPostprocessor.verify_response``) when a span handler
        listens, and dispatches a :class:`CiteVerifyEvent` when an event handler does.

        Raises:
            citeverify_core.CitationUnverifiedError: the answer is blocked and no
                ``blocked_response`` is set (a stream raises when it ends).
            citeverify_core.InputError: ``response`` is not a LlamaIndex response, or is an async
                stream (use :meth:`averify_response`).
        """
        if listeners()[0]:
            return self._spanned_verify_response(response)
        return self._verify_response(response)

    @span_named("verify_response")
    def _spanned_verify_response(self, response: Any) -> Any:
        return self._verify_response(response)

    def _verify_response(self, response: Any, on_end: TurnEnd | None = None) -> Any:
        if isinstance(response, StreamingResponse):
            return self._stream(response)
        if isinstance(response, StreamingAgentChatResponse):
            if response.chat_stream is None and response.achat_stream is not None:
                msg = "a stream from astream_chat is verified with averify_response"
                raise InputError(msg, path="response")
            return self._chat_stream(response, on_end)
        if isinstance(response, AsyncStreamingResponse):
            msg = "an AsyncStreamingResponse (from aquery) is verified with averify_response"
            raise InputError(msg, path="response")
        text = response_text(response)
        result = self._verifier.verify(text, node_texts(getattr(response, "source_nodes", None)))
        return self._finish(response, result)

    async def averify_response(self, response: Any) -> Any:
        """Async :meth:`verify_response`; the answer's lookups run concurrently.

        Raises:
            citeverify_core.CitationUnverifiedError: as :meth:`verify_response`.
            citeverify_core.InputError: ``response`` is not a LlamaIndex response.
        """
        if listeners()[0]:
            return await self._spanned_averify_response(response)
        return await self._averify_response(response)

    @span_named("averify_response")
    async def _spanned_averify_response(self, response: Any) -> Any:
        return await self._averify_response(response)

    async def _averify_response(self, response: Any, on_end: ATurnEnd | None = None) -> Any:
        if isinstance(response, AsyncStreamingResponse):
            return self._astream(response)
        if isinstance(response, StreamingResponse):
            return self._stream(response)
        if isinstance(response, StreamingAgentChatResponse):
            if response.achat_stream is None:
                return self._chat_stream(response, None)
            return self._achat_stream(response, on_end)
        text = response_text(response)
        texts = node_texts(getattr(response, "source_nodes", None))
        result = await self._verifier.averify(text, texts)
        return self._finish(response, result)

    def _conclude(
        self, result: VerificationResult, metadata: dict[str, Any], *, note: str | None = None
    ) -> tuple[str | None, VerificationResult]:
        """Record the result as it may be shown; the text in the answer's place, and that result.

        The text is ``None`` when the answer is blocked and raised (with the result as shown).
        The result stored, dispatched and raised is :func:`shown_result`'s: under block nothing
        of the answer, under redact nothing of what was removed, unless ``include_original``.
        ``note`` is a reason of the adapter's own, which holds no text of the answer.
        """
        replacement = None
        if result.verdict == "block" and self.blocked_response is not None:
            replacement = blocked_answer(result, self.blocked_response)  # sees the whole result
        shown = shown_result(
            result, replacement=replacement, include_original=self.include_original
        )
        if note is not None:
            shown = dataclasses.replace(shown, reasons=[*shown.reasons, note])
        if listeners()[1]:  # the event is built only for someone to hear it
            dispatcher.event(CiteVerifyEvent.of(shown))
        metadata[METADATA_KEY] = shown
        if result.verdict != "block":
            return result.answer, shown
        return replacement, shown

    def _finish(self, response: Any, result: VerificationResult) -> Any:
        metadata = dict(getattr(response, "metadata", None) or {})
        nodes = list(getattr(response, "source_nodes", None) or [])
        model = response.response if isinstance(response, PydanticResponse) else None
        note = None
        if model is not None and result.verdict != "block" and result.action == "redact":
            model = _redact_model(model, result, self.policy)
            if model is None:
                # A constrained field (a Literal, a pattern) cannot hold the marker: rather than
                # hand back unverified values, the answer is blocked. The reason names the
                # model, not the values (pydantic's message would quote them).
                result = dataclasses.replace(
                    result, verdict="block", action="block", answer=response_text(response)
                )
                note = f"the redacted values do not fit {type(response.response).__name__}"
        text, shown = self._conclude(result, metadata, note=note)
        if text is None:
            raise CitationUnverifiedError(shown)
        if isinstance(response, AgentChatResponse):
            return AgentChatResponse(
                response=text,
                sources=list(response.sources),
                source_nodes=nodes,
                is_dummy_stream=response.is_dummy_stream,
                metadata=metadata,
            )
        if isinstance(response, PydanticResponse) and result.verdict != "block":
            return PydanticResponse(model, source_nodes=nodes, metadata=metadata)
        return Response(text, source_nodes=nodes, metadata=metadata)

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

    def _chat_stream(
        self, response: StreamingAgentChatResponse, on_end: TurnEnd | None
    ) -> CheckedChatStream:
        texts = node_texts(response.source_nodes)
        hold = self._holds_back()
        checked = CheckedChatStream(sources=response.sources, source_nodes=response.source_nodes)
        # The engine's own response writes the engine's memory; this one only streams.
        checked.is_writing_to_memory = False

        def gen() -> Generator[ChatResponse, None, None]:
            parts: list[str] = []
            for token in response.response_gen:
                parts.append(token)
                if not hold:
                    yield _delta(parts, token)
            text = "".join(parts)
            shown, result = self._conclude(self._verifier.verify(text, texts), checked.metadata)
            if on_end is not None:
                on_end(text, shown)
            yield from _chat_end(parts, text, shown, result, hold=hold)

        checked.chat_stream = gen()
        return checked

    def _achat_stream(
        self, response: StreamingAgentChatResponse, on_end: ATurnEnd | None
    ) -> CheckedChatStream:
        texts = node_texts(response.source_nodes)
        hold = self._holds_back()
        checked = CheckedChatStream(sources=response.sources, source_nodes=response.source_nodes)
        checked.is_writing_to_memory = False

        async def agen() -> AsyncGenerator[ChatResponse, None]:
            parts: list[str] = []
            async for token in response.async_response_gen():
                parts.append(token)
                if not hold:
                    yield _delta(parts, token)
            text = "".join(parts)
            checked_result = await self._verifier.averify(text, texts)
            shown, result = self._conclude(checked_result, checked.metadata)
            if on_end is not None:
                await on_end(text, shown)
            for chunk in _chat_end(parts, text, shown, result, hold=hold):
                yield chunk

        checked.achat_stream = agen()
        return checked

    def _stream_end(
        self,
        parts: list[str],
        text: str,
        result: VerificationResult,
        metadata: dict[str, Any],
        *,
        hold: bool,
    ) -> list[str]:
        """Both query stream paths' end: record the result; what a held-back stream yields now.

        Its own tokens if the answer is unchanged, else the checked answer (or the replacement)
        in one piece; nothing more when the tokens were passed through as they came (flag).
        """
        shown, as_shown = self._conclude(result, metadata)
        if shown is None:
            raise CitationUnverifiedError(as_shown)
        if not hold:
            return []
        if shown == text:
            return parts
        return [shown] if shown else []


def _assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def _delta(parts: list[str], token: str) -> ChatResponse:
    return ChatResponse(message=_assistant("".join(parts)), delta=token)


def _chat_end(
    parts: list[str], text: str, shown: str | None, result: VerificationResult, *, hold: bool
) -> list[ChatResponse]:
    """What a chat stream yields once checked (as :meth:`CiteVerifyPostprocessor._stream_end`).

    ``result`` is the result as shown, what a block raises with.
    """
    if shown is None:
        raise CitationUnverifiedError(result)
    if not hold:
        return []
    if shown == text:
        chunks, so_far = [], ""
        for token in parts:
            so_far += token
            chunks.append(ChatResponse(message=_assistant(so_far), delta=token))
        return chunks
    return [ChatResponse(message=_assistant(shown), delta=shown)] if shown else []


def verify_response(
    response: Any,
    policy: Any = None,
    *,
    blocked_response: BlockedResponse | None = None,
    **options: Any,
) -> Any:
    """Verify one LlamaIndex response (query or chat) against its own source nodes.

    A shortcut for ``CiteVerifyPostprocessor(policy, blocked_response=..., **options)
    .verify_response(response)``; it builds the verifier on each call, so keep a
    :class:`CiteVerifyPostprocessor` to check many responses.

    Args:
        response: A ``Response``, ``PydanticResponse``, ``StreamingResponse``,
            ``AgentChatResponse`` or ``StreamingAgentChatResponse``.
        policy: As for :class:`CiteVerifyPostprocessor`; keyword options override it.
        blocked_response: A string or a callable of the result that replaces a blocked answer;
            ``None`` raises.
        **options: Policy options (``unverified_action="redact"``) and the postprocessor's.

    Returns:
        The same kind of response, checked, with the result in ``metadata["citeverify"]``.

    Raises:
        citeverify_core.CitationUnverifiedError: blocked, and no ``blocked_response``.
        citeverify_core.InputError: not a LlamaIndex response, or an option is wrong.
        citeverify_core.PolicyError: a policy option is wrong.
    """
    post = CiteVerifyPostprocessor(policy=policy, blocked_response=blocked_response, **options)
    return post.verify_response(response)


async def averify_response(
    response: Any,
    policy: Any = None,
    *,
    blocked_response: BlockedResponse | None = None,
    **options: Any,
) -> Any:
    """Async :func:`verify_response` (also takes ``AsyncStreamingResponse`` and async chat streams).

    Raises:
        citeverify_core.CitationUnverifiedError: blocked, and no ``blocked_response``.
        citeverify_core.InputError: not a LlamaIndex response, or an option is wrong.
        citeverify_core.PolicyError: a policy option is wrong.
    """
    post = CiteVerifyPostprocessor(policy=policy, blocked_response=blocked_response, **options)
    return await post.averify_response(response)


def _redact_model(model: Any, result: VerificationResult, policy: PolicyConfig) -> Any:
    """The model with each failing claim replaced inside the string value it came from.

    ``None`` when the model does not accept the redacted values (a ``Literal``, a pattern).
    """
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
    except ValidationError:
        return None


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
