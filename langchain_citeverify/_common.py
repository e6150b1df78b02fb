"""What the LangChain adapters share: turning LangChain objects into strings, policies, errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import (
    ensure_config,
    get_callback_manager_for_config,
    var_child_runnable_config,
)
from langchain_core.tracers.base import BaseTracer
from pydantic import ValidationError

from citeverify_core import CitationUnverifiedError, InputError, PolicyConfig, VerificationResult
from citeverify_core.engine import MAX_DOCUMENTS, coerce_documents, shown_result
from citeverify_core.policy import mask_credentials, restore_credentials

__all__ = [
    "EVENT_NAME",
    "AdapterModel",
    "CitationBlockedError",
    "answer_text",
    "checked_message",
    "document_texts",
    "held_config",
    "held_streams",
    "held_then",
    "masked_policy",
    "message_text",
    "semantic_scorer",
    "unobserved",
    "verdict_event",
]

#: Name of the custom event the guard and the middleware dispatch, for callback handlers
#: (``on_custom_event``; ``astream_events`` shows it as an ``on_custom_event`` event).
EVENT_NAME = "citeverify_verdict"

#: The keys of a model message's ``response_metadata`` that a redacted or blocked message keeps:
#: who answered and what it cost. Others can carry the text that was removed (``logprobs`` holds
#: every token, a provider may add more), so they go, as the gateway drops them from its wire.
SAFE_METADATA = frozenset(
    {
        "model_name",
        "model",
        "model_provider",
        "finish_reason",
        "stop_reason",
        "done_reason",
        "token_usage",
        "usage",
        "id",
        "system_fingerprint",
        "service_tier",
        "created_at",
    }
)


class CitationBlockedError(CitationUnverifiedError, OutputParserException):
    """Raised when the policy blocks an answer.

    It is both :class:`citeverify_core.CitationUnverifiedError` (``.result`` holds the verification)
    and LangChain's ``OutputParserException``, so ``with_fallbacks(...)`` and retrying parsers
    handle it like any parsing failure.

    Unless the adapter was made with ``include_original=True``, ``.result`` is the result as
    shown (:func:`citeverify_core.engine.shown_result`: nothing of the blocked answer), and so
    are the message and ``llm_output`` (empty): an application that returns the error to its
    client (a LangServe or FastAPI error handler) does not ship what was blocked.
    """

    def __init__(self, result: VerificationResult, *, include_original: bool = False) -> None:
        self.include_original = include_original
        result = shown_result(result, include_original=include_original)
        message = str(CitationUnverifiedError(result))
        CitationUnverifiedError.__init__(self, result, message)
        # OutputParserException appends LangChain's OUTPUT_PARSING_FAILURE troubleshooting link
        # to a string message; a blocked answer is no parsing failure, so the message stays ours.
        self.args = (message,)
        self.llm_output = result.original_answer or result.answer
        self.observation = "; ".join(result.reasons) or None
        self.send_to_llm = False

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle their args (the message); this one is built from its result.
        return (_blocked_error, (type(self), self.result, self.include_original))


class AdapterModel:
    """What the pydantic adapters (guard, parser, tool) share beyond their fields.

    **Our errors as they are.** An :class:`~citeverify_core.InputError` raised while the adapter
    is made (``blocked_response=123``, both ``embeddings`` and ``semantic_scorer``) is a
    ``ValueError``, which pydantic would wrap into its ``ValidationError``; the adapter raises
    the InputError itself, as its docstring says.

    **A pickle carries no credential.** The policy's credentials
    (:data:`citeverify_core.policy.CREDENTIALS`) are masked in the pickle, and the verifier is
    left out (rebuilt on load, as ``model_post_init`` builds it); the copy that is loaded reads
    each masked credential from its environment variable (``NCBI_API_KEY``,
    ``SEMANTIC_SCHOLAR_API_KEY``, ``COURTLISTENER_TOKEN``) in the process that loads it. A
    ``copy.deepcopy`` is no serialisation: it keeps them.
    """

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            ours = [e.get("ctx", {}).get("error") for e in exc.errors()]
            first = ours[0] if ours else None
            if isinstance(first, InputError) and all(isinstance(e, InputError) for e in ours):
                raise first from None
            raise

    def __getstate__(self) -> dict[Any, Any]:
        state: dict[str, Any] = super().__getstate__()  # type: ignore[assignment]
        fields = dict(state["__dict__"])
        fields["policy"] = mask_credentials(fields["policy"])
        return {**state, "__dict__": fields, "__pydantic_private__": {}}

    def __setstate__(self, state: dict[Any, Any]) -> None:
        fields = dict(state["__dict__"])
        fields["policy"] = restore_credentials(fields["policy"])
        super().__setstate__({**state, "__dict__": fields})  # type: ignore[misc]
        self.model_post_init(None)  # type: ignore[attr-defined]


def masked_policy(policy: PolicyConfig, info: Any) -> dict[str, Any]:
    """The policy as an adapter's ``model_dump``/``model_dump_json`` writes it: credentials masked.

    Used as the pydantic adapters' ``policy`` field serializer.
    """
    data: dict[str, Any] = mask_credentials(policy).model_dump(
        mode="json" if info.mode_is_json() else "python"
    )
    return data


def _blocked_error(
    cls: type[CitationBlockedError], result: VerificationResult, include_original: bool
) -> CitationBlockedError:
    """Rebuild a pickled :class:`CitationBlockedError` (its result is already as shown)."""
    return cls(result, include_original=include_original)


def checked_message(
    message: BaseMessage,
    result: VerificationResult,
    *,
    replacement: str | None = None,
    include_original: bool = False,
) -> BaseMessage:
    """The model's message as the user may see it, with the result in ``response_metadata``.

    Allowed and flagged: the message as it came, annotated. Redacted: the redacted text, and
    nothing else the model wrote beside it that could hold what was removed
    (``additional_kwargs``, content blocks, provider metadata other than :data:`SAFE_METADATA`).
    Blocked (``replacement`` given): a plain AI message with the replacement, the same id (so
    ``add_messages`` replaces the answer instead of adding one) and no tool calls (a blocked
    answer must not go on to call tools). The result stored is :func:`shown_result`'s.
    """
    shown = shown_result(result, replacement=replacement, include_original=include_original)
    data = shown.to_dict()
    if replacement is None and result.action != "redact":
        metadata = {**message.response_metadata, "citeverify": data}
        return message.model_copy(update={"response_metadata": metadata})
    metadata = {k: v for k, v in message.response_metadata.items() if k in SAFE_METADATA}
    metadata["citeverify"] = data
    if replacement is not None:
        return AIMessage(
            content=replacement,
            id=message.id,
            name=message.name,
            response_metadata=metadata,
            usage_metadata=getattr(message, "usage_metadata", None),
        )
    update: dict[str, Any] = {
        "content": result.answer,
        "response_metadata": metadata,
        "additional_kwargs": {},
    }
    if hasattr(message, "invalid_tool_calls"):
        update["invalid_tool_calls"] = []
    return message.model_copy(update=update)


def verdict_event(result: VerificationResult) -> dict[str, Any]:
    """The ``citeverify_verdict`` event's data: the decision in numbers, no text of the answer."""
    d = result.details
    return {
        "verdict": result.verdict,
        "reason_code": result.reason_code,
        "action": result.action,
        "groundedness": d.groundedness,
        "claim_confidence": d.claim_confidence,
        "unverified_claim_count": d.unverified_claim_count or 0,
    }


def _streams_tokens(handler: Any) -> bool:
    """Whether ``handler`` streams a model's tokens out (``stream_mode="messages"``, events).

    langchain-core's ``_StreamingCallbackHandler`` protocol, as it checks it (a runtime
    checkable Protocol: the two tap methods), without importing its private module.
    """
    return hasattr(handler, "tap_output_iter") and hasattr(handler, "tap_output_aiter")


class _WithoutTokens(BaseCallbackHandler):
    """A handler as it is, less ``on_llm_new_token``: for a call whose tokens are held.

    A handler that shows tokens as they come (``StreamingStdOutCallbackHandler``, a handler
    that forwards them to a websocket) would otherwise get them from a model that streams on its
    own (``streaming=True``) even when no stream handler asks it to. Every other callback, and
    the flags the callback manager reads, are the wrapped handler's.
    """

    def __init__(self, inner: BaseCallbackHandler) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def on_llm_new_token(self, *args: Any, **kwargs: Any) -> None:
        """Dropped: the tokens are the unchecked answer."""

    @property
    def raise_error(self) -> bool:  # type: ignore[override]
        return bool(self.inner.raise_error)

    @property
    def run_inline(self) -> bool:  # type: ignore[override]
        return bool(self.inner.run_inline)

    @property
    def ignore_llm(self) -> bool:
        return bool(self.inner.ignore_llm)

    @property
    def ignore_chat_model(self) -> bool:
        return bool(self.inner.ignore_chat_model)

    @property
    def ignore_chain(self) -> bool:
        return bool(self.inner.ignore_chain)

    @property
    def ignore_custom_event(self) -> bool:
        return bool(self.inner.ignore_custom_event)


def _held_handler(handler: Any) -> Any | None:
    """``handler`` for a held call: left out, wrapped without tokens, or as it is.

    Left out: handlers that stream tokens out (see :func:`_streams_tokens`). Wrapped: any
    other handler that takes tokens, except tracers (a LangSmith run keeps what the model said:
    the application's own observability).
    """
    if _streams_tokens(handler):
        return None
    takes_tokens = type(handler).on_llm_new_token is not BaseCallbackHandler.on_llm_new_token
    if takes_tokens and not isinstance(handler, BaseTracer):
        return _WithoutTokens(handler)
    return handler


def _held_handlers(handlers: list[Any]) -> list[Any]:
    return [held for h in handlers if (held := _held_handler(h)) is not None]


def _held_callbacks(callbacks: Any) -> Any:
    if isinstance(callbacks, BaseCallbackManager):
        held = callbacks.copy()
        held.handlers = _held_handlers(held.handlers)
        held.inheritable_handlers = _held_handlers(held.inheritable_handlers)
        return held
    if isinstance(callbacks, list):
        return _held_handlers(callbacks)
    return callbacks


def held_config(config: RunnableConfig) -> RunnableConfig:
    """``config`` for runs whose tokens must reach no stream and no event before a check.

    The handlers that stream tokens out (LangGraph's ``stream_mode="messages"``,
    ``astream_events``, ``astream_log``) are left out, and the runs carry LangGraph's ``nostream``
    tag; every other handler (tracers such as LangSmith, usage callbacks) still sees them, with
    what the model said: that trace is the application's own observability. A model that no
    handler streams from calls its non-streaming API (``_should_stream`` is false).
    """
    return {
        **config,
        "callbacks": _held_callbacks(config.get("callbacks")),
        "tags": [*config.get("tags", []), "nostream"],
    }


@contextmanager
def held_streams() -> Iterator[None]:
    """Runs started inside (without a config of their own) stream nothing: see :func:`held_config`.

    For a model call whose answer must be checked before anyone sees it: the agent's model node
    calls the model without a config, so the model takes the one in the context.
    """
    parent = var_child_runnable_config.get()
    if parent is None:
        yield
        return
    token = var_child_runnable_config.set(held_config(parent))
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def held_then(
    runnable: Runnable[Any, Any],
    check: Callable[[Any, RunnableConfig], Any],
    acheck: Callable[[Any, RunnableConfig], Awaitable[Any]],
    *,
    name: str,
) -> Runnable[Any, Any]:
    """One step: ``runnable`` run with its streams held (:func:`held_config`), then ``check``.

    What ``around(chain)`` of the guard and the parser returns. The step's own events are its
    input, what ``check`` dispatches and its output: the model's tokens and the unchecked
    answer (``runnable``'s output, which a following step would take as its input) reach no
    stream. ``check(output, config)`` gets the step's config (its events are heard).
    """

    def held(input: Any, config: RunnableConfig) -> Any:
        return check(runnable.invoke(input, held_config(config)), config)

    async def aheld(input: Any, config: RunnableConfig) -> Any:
        return await acheck(await runnable.ainvoke(input, held_config(config)), config)

    return RunnableLambda(held, afunc=aheld, name=name)


def semantic_scorer(embeddings: Any, scorer: Any) -> Any:
    """The semantic tier's scorer from an adapter's ``embeddings`` or ``semantic_scorer``.

    The core takes a LangChain ``Embeddings`` as it is (``embed_documents``, and the real async
    ``aembed_documents``); a callable ``(claim, passages) -> score`` (an NLI cross-encoder) too.

    Raises:
        InputError: both are given, or ``embeddings`` is not a LangChain ``Embeddings``.
    """
    if embeddings is not None and scorer is not None:
        msg = "give embeddings or semantic_scorer, not both (one scorer decides a claim)"
        raise InputError(msg, path="embeddings")
    if embeddings is not None and not isinstance(embeddings, Embeddings):
        msg = f"embeddings must be a LangChain Embeddings, got {type(embeddings).__name__}"
        raise InputError(msg, path="embeddings")
    return embeddings if embeddings is not None else scorer


def answer_text(answer: Any, *, where: str = "answer") -> str:
    """The text of an answer given as a string or a message (AIMessage, AIMessageChunk)."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, BaseMessage):
        return message_text(answer)
    msg = f"{where} must be a string or a message, got {type(answer).__name__}"
    raise InputError(msg, path=where)


def message_text(message: Any) -> str:
    """The text parts of a message's content, whichever langchain-core 0.3.x or 1.x made it.

    In 1.x ``message.text`` is a property (a ``str`` subclass that is also callable, with a
    deprecation warning when called); in later 0.3.x it is a plain method, whose ``str()`` would
    be ``"<bound method ...>"``; early 0.3.x messages have no ``text`` at all.
    """
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return str(text)
    if callable(text):  # langchain-core 0.3.x: a method
        return str(text())
    return _content_text(message.content)


def _content_text(content: Any) -> str:
    """What ``text`` returns, for messages without it: strings and ``{"type": "text"}`` blocks."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def document_texts(context: Any, *, where: str = "context") -> list[str]:
    """Context documents as strings: Documents, plus what the core accepts (strings, mappings)."""
    if isinstance(context, str | Document):
        context = [context]
    if not isinstance(context, list | tuple):
        msg = f"{where} must be a list of Documents or strings, got {type(context).__name__}"
        raise InputError(msg, path=where)
    items = [doc.page_content if isinstance(doc, Document) else doc for doc in context]
    if len(items) > MAX_DOCUMENTS:
        return coerce_documents(items, where=where)  # which says so
    for item in items:
        if not isinstance(item, str):
            return coerce_documents(items, where=where)
    return items  # nothing to convert (the core counts and checks them again anyway)


def unobserved(config: RunnableConfig | None) -> bool:
    """Whether no callback handler would see a run made with ``config``.

    ``_call_with_config`` costs ~0.1 ms a call (two ``inspect.signature`` calls, the run's start
    and end, a context copy): as much as 25% of verifying a 100-word answer. A run nobody hears is
    not made. The handlers are the ones LangChain itself would call: the config's callbacks
    (also those a parent Runnable passes down, or sets in the context), the tracers switched on
    by the environment (``LANGSMITH_TRACING``) or by a context manager (``tracing_v2_enabled``,
    ``collect_runs``), the registered configure hooks (``get_usage_metadata_callback``), debug.
    """
    if _ambient is None:
        return not get_callback_manager_for_config(ensure_config(config)).handlers
    # The callbacks ensure_config(config) would give, without building the whole config: the
    # config's own, else those of the Runnable running this one (a context variable).
    callbacks = config.get("callbacks") if config else None
    if callbacks is None and (parent := var_child_runnable_config.get()):
        callbacks = parent.get("callbacks")
    if callbacks and (isinstance(callbacks, list) or callbacks.handlers):
        return False
    return not _ambient()


def _ambient_listeners() -> bool:
    """Whether langchain-core's ``_configure`` would add handlers of its own to a run.

    The same checks in the same terms, in ~5 us instead of the ~10 us of building the callback
    manager (up to 30 us between two verifications, with cold caches). Mirrors
    ``langchain_core.callbacks.manager._configure``: compare it with the new one when raising
    langchain-core's ceiling.
    """
    if _get_debug() or _tracing_v2_is_enabled():
        return True
    if env_var_is_set("LANGCHAIN_TRACING") or env_var_is_set("LANGCHAIN_HANDLER"):
        return True  # langchain-core refuses this tracer: the full path raises its error
    for var, _inheritable, handler_class, env_var in _configure_hooks:
        if var.get() is not None:
            return True
        if env_var is not None and handler_class is not None and env_var_is_set(env_var):
            return True
    return False


try:  # langchain-core's private names for the same checks; without them, the full check
    from langchain_core.callbacks.manager import _get_debug
    from langchain_core.tracers.context import _configure_hooks, _tracing_v2_is_enabled
    from langchain_core.utils.env import env_var_is_set

    _ambient: Callable[[], bool] | None = _ambient_listeners
except ImportError:  # pragma: no cover - depends on the installed langchain-core
    _ambient = None
