"""A chat engine that verifies each answer of the chat engine it wraps, and keeps memory honest.

The wrapped engine (``index.as_chat_engine(chat_mode="context")``, ``"condense_plus_context"``,
any ``BaseChatEngine`` whose responses carry ``source_nodes``) writes each turn into its memory
itself: the user's message, then its answer as the LLM gave it (for a stream, once the stream has
been read to its end). Redacting or replacing the answer afterwards would leave the original
text there, and the next turn's prompt would show the LLM (and the user, in ``chat_history``) the
claim that was removed. So once an answer is checked, the wrapper rewrites that last assistant
message: the redacted answer or the ``blocked_response`` replacement takes its place, and a
block that raises withdraws the turn (the question and the answer), since the user got no answer.
The memory never keeps a blocked answer or a removed claim, ``include_original=True`` or not
(that option only sends the original along in the result).

Under ``redact`` and ``block`` a stream (``stream_chat``, ``astream_chat``) is read to its end and
checked before it is returned: it would yield nothing before the check anyway, and LlamaIndex
0.14's engines write the answer into memory from a thread whether the stream is read or not, so a
stream nobody reads must be checked too. Its tokens (the checked answer) are then yielded as it is
read, and a block without ``blocked_response`` raises when it is read, having yielded nothing.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from typing import Any

from llama_index.core.async_utils import asyncio_run
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.chat_engine.types import (
    AgentChatResponse,
    BaseChatEngine,
    StreamingAgentChatResponse,
)
from llama_index.core.memory import BaseMemory

from citeverify_core import CitationUnverifiedError, InputError
from citeverify_core.engine import BlockedResponse
from llama_index.postprocessor.citeverify._common import SPAN_MARK
from llama_index.postprocessor.citeverify.postprocessor import CiteVerifyPostprocessor

__all__ = ["CiteVerifyChatEngine"]


class CiteVerifyChatEngine(BaseChatEngine):
    """Wraps a chat engine; each answer is checked against the nodes retrieved for it.

    ``chat``/``achat`` return an ``AgentChatResponse`` and ``stream_chat``/``astream_chat`` a
    ``StreamingAgentChatResponse``, each with ``metadata["citeverify"]`` holding the
    :class:`citeverify_core.VerificationResult` (for a stream, once it has been read to its end).
    Under ``flag`` the answer is unchanged and a stream's tokens pass as they come; under
    ``redact`` the unverified claims are replaced by a marker; under ``block`` the answer raises
    :class:`citeverify_core.CitationUnverifiedError` or, with ``blocked_response=``, is replaced.
    Under ``redact`` and ``block`` a stream is checked before it is returned (it yields the checked
    answer). The engine's memory then holds what was shown (see the module docstring), and the
    result, the error raised and the events hold nothing of a blocked answer or of a removed claim
    unless ``include_original=True`` (which sends the original along in the result).

    ``reset`` and ``chat_history`` are the wrapped engine's; ``chat_repl`` and
    ``streaming_chat_repl`` work as for any chat engine. An engine that retrieves nothing
    (``chat_mode="simple"``) gives no sources, so every claim of its answers is unverified.

    Args:
        chat_engine: The engine to wrap (``index.as_chat_engine(chat_mode="context", ...)``).
        policy: As for :class:`CiteVerifyPostprocessor`; keyword options override it
            (``unverified_action="block"``, ``min_groundedness=0.7``).
        blocked_response: What a blocked answer becomes instead of a raise: a string or a
            callable given the result. ``None`` (the default) raises.
        memory: The memory the wrapped engine writes, when it is not the engine's ``memory`` or
            ``_memory`` attribute (LlamaIndex's chat engines keep it there).
        **options: Policy options and the postprocessor's (``embed_model``, ``include_original``).

    Raises:
        citeverify_core.InputError: ``chat_engine`` is not a LlamaIndex chat engine, its memory
            cannot be found, or an option is wrong.
        citeverify_core.PolicyError: a policy option is wrong.
    """

    def __init__(
        self,
        chat_engine: BaseChatEngine,
        policy: Any = None,
        *,
        blocked_response: BlockedResponse | None = None,
        memory: BaseMemory | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(chat_engine, BaseChatEngine):
            msg = f"chat_engine must be a LlamaIndex chat engine, got {type(chat_engine).__name__}"
            raise InputError(msg, path="chat_engine")
        self.chat_engine = chat_engine
        self.memory = memory if memory is not None else _memory_of(chat_engine)
        self.postprocessor = CiteVerifyPostprocessor(
            policy=policy, blocked_response=blocked_response, **options
        )

    # The wrapped engine's methods are spans already, and the verification is one when heard:
    # the mark keeps LlamaIndex's mixin from adding a third, unheard span around each call.
    def chat(
        self, message: str, chat_history: list[ChatMessage] | None = None, **kwargs: Any
    ) -> AgentChatResponse:
        """The wrapped engine's answer, verified (redacted or replaced as the policy says).

        Raises:
            citeverify_core.CitationUnverifiedError: blocked, without ``blocked_response``.
        """
        response = self.chat_engine.chat(message, chat_history, **kwargs)
        try:
            checked: AgentChatResponse = self.postprocessor.verify_response(response)
        except CitationUnverifiedError:
            self._rewrite(str(response), None)
            raise
        if checked.response != response.response:
            self._rewrite(response.response, checked.response)
        return checked

    setattr(chat, SPAN_MARK, True)

    async def achat(
        self, message: str, chat_history: list[ChatMessage] | None = None, **kwargs: Any
    ) -> AgentChatResponse:
        """Async :meth:`chat`.

        Raises:
            citeverify_core.CitationUnverifiedError: blocked, without ``blocked_response``.
        """
        response = await self.chat_engine.achat(message, chat_history, **kwargs)
        try:
            checked: AgentChatResponse = await self.postprocessor.averify_response(response)
        except CitationUnverifiedError:
            await self._arewrite(str(response), None)
            raise
        if checked.response != response.response:
            await self._arewrite(response.response, checked.response)
        return checked

    setattr(achat, SPAN_MARK, True)

    def stream_chat(
        self, message: str, chat_history: list[ChatMessage] | None = None, **kwargs: Any
    ) -> StreamingAgentChatResponse:
        """The wrapped engine's stream, verified when it ends (held back under redact/block).

        The returned stream raises :class:`citeverify_core.CitationUnverifiedError` at its end
        when the answer is blocked and no ``blocked_response`` is set.
        """
        response = self.chat_engine.stream_chat(message, chat_history, **kwargs)
        checked: StreamingAgentChatResponse = self.postprocessor._verify_response(
            response, self._rewrite
        )
        if self.postprocessor._holds_back() and checked.chat_stream is not None:
            # Checked now: the inner engine writes its memory whether the stream is read or not.
            chunks: list[ChatResponse] = []
            try:
                chunks.extend(checked.chat_stream)
            except CitationUnverifiedError as exc:
                checked.chat_stream = _replay(chunks, exc)
            else:
                checked.chat_stream = _replay(chunks, None)
        return checked

    setattr(stream_chat, SPAN_MARK, True)

    async def astream_chat(
        self, message: str, chat_history: list[ChatMessage] | None = None, **kwargs: Any
    ) -> StreamingAgentChatResponse:
        """Async :meth:`stream_chat` (read it with ``async_response_gen()``)."""
        response = await self.chat_engine.astream_chat(message, chat_history, **kwargs)
        checked: StreamingAgentChatResponse = await self.postprocessor._averify_response(
            response, self._arewrite
        )
        if self.postprocessor._holds_back():
            # As stream_chat: checked now, the memory rewritten whether it is read or not.
            chunks: list[ChatResponse] = []
            error = None
            try:
                if checked.achat_stream is not None:
                    chunks.extend([chunk async for chunk in checked.achat_stream])
                elif checked.chat_stream is not None:
                    chunks.extend(checked.chat_stream)
            except CitationUnverifiedError as exc:
                error = exc
            if checked.achat_stream is not None:
                checked.achat_stream = _areplay(chunks, error)
            else:
                checked.chat_stream = _replay(chunks, error)
        return checked

    setattr(astream_chat, SPAN_MARK, True)

    def reset(self) -> None:
        """Reset the wrapped engine's conversation."""
        self.chat_engine.reset()

    setattr(reset, SPAN_MARK, True)

    @property
    def chat_history(self) -> list[ChatMessage]:
        """The wrapped engine's chat history (with checked answers in place of the originals)."""
        return self.chat_engine.chat_history

    def _rewrite(self, original: str, shown: str | None) -> None:
        if shown is not None and shown.strip() == original.strip():
            return
        if _is_store_memory(self.memory):
            asyncio_run(_rewrite_active(self.memory, original, shown))
            return
        messages = _edited(list(self.memory.get_all()), original, shown)
        if messages is not None:
            self.memory.set(messages)

    async def _arewrite(self, original: str, shown: str | None) -> None:
        if shown is not None and shown.strip() == original.strip():
            return
        if _is_store_memory(self.memory):
            await _rewrite_active(self.memory, original, shown)
            return
        aget_all = getattr(self.memory, "aget_all", None)  # llama-index-core 0.12.x lacks it
        history = await aget_all() if aget_all is not None else self.memory.get_all()
        messages = _edited(list(history), original, shown)
        if messages is None:
            return
        aset = getattr(self.memory, "aset", None)
        if aset is not None:
            await aset(messages)
        else:
            self.memory.set(messages)


def _replay(
    chunks: list[ChatResponse], error: CitationUnverifiedError | None
) -> Generator[ChatResponse, None, None]:
    """A checked stream's chunks, then its block (raised when read, as an unchecked one would)."""
    yield from chunks
    if error is not None:
        raise error


async def _areplay(
    chunks: list[ChatResponse], error: CitationUnverifiedError | None
) -> AsyncGenerator[ChatResponse, None]:
    for chunk in chunks:
        yield chunk
    if error is not None:
        raise error


def _memory_of(engine: BaseChatEngine) -> BaseMemory:
    for name in ("memory", "_memory"):
        memory = getattr(engine, name, None)
        if isinstance(memory, BaseMemory):
            return memory
    msg = (
        f"cannot find the memory of {type(engine).__name__} (no memory or _memory attribute "
        "holding a BaseMemory): pass the memory it writes as memory=..."
    )
    raise InputError(msg, path="memory")


def _edited(
    messages: list[ChatMessage], original: str, shown: str | None
) -> list[ChatMessage] | None:
    """``messages`` with the last answer replaced by ``shown`` (or its turn withdrawn, on None).

    ``None`` when the last assistant message is not ``original`` (the engine did not store it
    as given): nothing is changed then.
    """
    last = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == MessageRole.ASSISTANT),
        None,
    )
    if last is None or str(messages[last].content or "").strip() != original.strip():
        return None
    if shown is None:
        first = last - 1 if last and messages[last - 1].role == MessageRole.USER else last
        return messages[:first] + messages[last + 1 :]
    answer = ChatMessage(
        role=MessageRole.ASSISTANT,
        content=shown,
        additional_kwargs=dict(messages[last].additional_kwargs),
    )
    return [*messages[:last], answer, *messages[last + 1 :]]


def _is_store_memory(memory: BaseMemory) -> bool:
    """Whether ``memory`` is LlamaIndex's ``Memory`` (llama-index-core 0.12.3x and later).

    Its ``set`` replaces the archived messages too (those flushed into memory blocks), making
    them active again: only the active messages are rewritten there.
    """
    return hasattr(memory, "sql_store") and hasattr(memory, "session_id")


async def _rewrite_active(memory: Any, original: str, shown: str | None) -> None:
    # Deferred: the module exists only in the llama-index-core versions that have ``Memory``.
    from llama_index.core.storage.chat_store.base_db import MessageStatus  # noqa: PLC0415

    active = await memory.sql_store.get_messages(memory.session_id, status=MessageStatus.ACTIVE)
    messages = _edited(list(active), original, shown)
    if messages is None:
        return
    await memory.sql_store.delete_messages(memory.session_id, status=MessageStatus.ACTIVE)
    if messages:  # an empty batch is an INSERT without values
        await memory.sql_store.add_messages(
            memory.session_id, messages, status=MessageStatus.ACTIVE
        )
