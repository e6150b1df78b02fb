"""Agent middleware for LangChain 1.x: check an agent's answers against what its tools returned.

::

    from langchain.agents import create_agent
    from langchain_citeverify import CiteVerifyMiddleware

    agent = create_agent(
        model,
        tools=[search_docs],
        middleware=[CiteVerifyMiddleware(unverified_action="block")],
    )

Around each model call (``wrap_model_call``) the middleware verifies the model's final answer
(an AIMessage without tool calls; with ``check_intermediate=True`` every AIMessage with text)
against the context the agent saw: the contents of its ToolMessages (the Documents in a tool's
``artifact`` when it has them), or the Documents in a state key (``context_key=``). Under
``block`` the answer is replaced by ``blocked_response`` and the agent stops; under ``redact``
the unsupported claims are removed; under ``flag`` the message is annotated. An answer given
before any tool returned anything is checked against no documents: the policy's
``require_sources`` decides it (on by default, so it is unverified). The result is kept in the
message's ``response_metadata["citeverify"]`` and in the state under ``citeverify``
(``VerificationResult.to_dict()``: plain data, which every checkpointer stores).

What a guard blocked reaches no one: the check happens before the model's message becomes
state, and under ``redact`` and ``block`` the model's tokens are held (no
``stream_mode="messages"`` chunk, no ``on_chat_model_stream`` event), so every stream mode, the
model node's update and every checkpoint hold the checked message only. The stored result is the
core's :func:`citeverify_core.engine.shown_result`: nothing of a blocked answer or of removed
claims (``include_original=True`` sends the original along). Tracers (LangSmith) still see the
model call with what the model said: the application's own observability. Under ``flag`` the
tokens stream as they come.

Needs ``langchain>=1.0``: ``pip install "langchain-citeverify[agents]"``.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from citeverify_core import CitationVerifier, ContextCache, InputError, VerificationResult
from citeverify_core.engine import (
    DEFAULT_BLOCKED_RESPONSE,
    BlockedResponse,
    blocked_answer,
    check_blocked_response,
    field_values,
)
from citeverify_core.policy import mask_credentials, merge_policy, restore_credentials
from langchain_citeverify._common import (
    EVENT_NAME,
    checked_message,
    document_texts,
    held_streams,
    message_text,
    unobserved,
    verdict_event,
)
from langchain_citeverify._common import semantic_scorer as scorer_for

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState
except ImportError as exc:  # langchain absent, or 0.x (no agent middleware)
    msg = (
        "CiteVerifyMiddleware needs LangChain 1.x agents: install the extra with "
        'pip install "langchain-citeverify[agents]" (langchain>=1.0). '
        f"The import failed with: {exc}"
    )
    raise ModuleNotFoundError(msg, name="langchain.agents.middleware") from exc

from typing import NotRequired

from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

__all__ = ["STATE_KEY", "CiteVerifyMiddleware", "CiteVerifyState"]

#: The state key that holds the last check's result (``VerificationResult.to_dict()``).
STATE_KEY = "citeverify"


class CiteVerifyState(AgentState[Any]):
    """The agent state with the last verification (``VerificationResult.from_dict`` rebuilds it).

    A mapping rather than the result object: LangGraph's checkpoint serializer stores plain data
    as it is, and warns on (and in strict mode refuses) types it does not know.
    """

    citeverify: NotRequired[dict[str, Any]]


# Unparameterized: AgentMiddleware takes two type parameters in langchain 1.0 and three later
# (all with defaults); subscripting it with either count fails on the other versions.
class CiteVerifyMiddleware(AgentMiddleware):
    """Verify an agent's answers against the documents its tools returned.

    Args:
        policy: A :class:`citeverify_core.PolicyConfig`, the inner policy mapping, or a policy
            pack path. Keyword options override it: any top-level policy field
            (``min_groundedness=0.7``) and ``unverified_action`` ("flag", "redact", "block").
        context_key: A state key holding the context (Documents or strings) to check against,
            instead of the ToolMessages. The key is added to the agent's state schema, so it can
            be given in the agent's input (``agent.invoke({"messages": ..., key: docs})``).
        blocked_response: What replaces a blocked answer: a string, or a callable given the
            :class:`citeverify_core.VerificationResult` that returns one.
        check_intermediate: Also check the text of AIMessages that call tools (off by default:
            that text is usually a plan, not an answer). A blocked one stops the agent before
            its tools run.
        include_original: Send the original along: under ``redact`` and ``block`` keep the
            removed or blocked text in the stored result (``original_answer``, the claims'
            texts), for the application's own audit log. Off by default: the state, the
            checkpoints and the message's metadata hold nothing of it.
        context_cache: Keep the tokenization of documents seen before (on by default: an agent
            checks each answer against the same tool results again).
        embeddings: The semantic tier (off by default): a LangChain ``Embeddings``.
        semantic_scorer: Instead of ``embeddings``, a callable ``(claim, passages) -> score``.
        **options: Policy options laid over ``policy`` (see above).

    Raises:
        PolicyError: the policy or an option is invalid.
        InputError: ``blocked_response`` is neither a string nor a callable, a flag is not a
            bool, or both ``embeddings`` and ``semantic_scorer`` are given. While the agent
            runs: the state has no ``context_key``, or it holds something other than documents.
    """

    def __init__(
        self,
        policy: Any = None,
        *,
        context_key: str | None = None,
        blocked_response: BlockedResponse = DEFAULT_BLOCKED_RESPONSE,
        check_intermediate: bool = False,
        include_original: bool = False,
        context_cache: bool = True,
        embeddings: Any = None,
        semantic_scorer: Callable[..., Any] | None = None,
        **options: Any,
    ) -> None:
        check_blocked_response(blocked_response)
        for name, value in (
            ("check_intermediate", check_intermediate),
            ("include_original", include_original),
            ("context_cache", context_cache),
        ):
            if not isinstance(value, bool):  # "false" from an environment variable is truthy
                msg = f"{name} must be True or False, got {type(value).__name__} {value!r}"
                raise InputError(msg, path=name)
        if context_key is not None and (not isinstance(context_key, str) or not context_key):
            msg = f"context_key must be a non-empty string, got {context_key!r}"
            raise InputError(msg, path="context_key")
        self.policy = merge_policy(policy, options)
        self.context_key = context_key
        self.blocked_response = blocked_response
        self.check_intermediate = check_intermediate
        self.include_original = include_original
        self.context_cache = context_cache
        self.embeddings = embeddings
        self.semantic_scorer = semantic_scorer
        self.tools = []
        self._build()

    def _build(self) -> None:
        """The verifier and the state schema, from the configuration (also after unpickling)."""
        self.verifier = CitationVerifier(
            self.policy,
            context_cache=ContextCache() if self.context_cache else False,
            include_original=self.include_original,
            semantic=scorer_for(self.embeddings, self.semantic_scorer),
        )
        self.state_schema = _state_schema(self.context_key)

    def __getstate__(self) -> dict[str, Any]:
        """The configuration only: the verifier (locks, caches) and the schema are rebuilt.

        So a middleware pickles (process pools, Ray). A pickle carries no credential (they are
        masked): the copy that is loaded reads each from its environment variable
        (:data:`citeverify_core.policy.CREDENTIALS`).
        """
        state = dict(self.__dict__)
        del state["verifier"], state["state_schema"]
        state["policy"] = mask_credentials(state["policy"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the configuration and rebuild the verifier and the state schema."""
        self.__dict__.update(state)
        self.policy = restore_credentials(self.policy)
        self._build()

    def __deepcopy__(self, memo: dict[int, Any]) -> CiteVerifyMiddleware:
        """A copy in this process (a copied agent config): the credentials stay."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("verifier", "state_schema")}
        copied = type(self).__new__(type(self))
        copied.__dict__.update(copy.deepcopy(state, memo))
        copied._build()
        return copied

    # --- the check: around the model call, before its message becomes state or a stream -------

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Call the model, then verify its answer before it leaves the model node.

        Under ``redact`` and ``block`` the call runs with its tokens held
        (:func:`~langchain_citeverify._common.held_streams`): nothing reaches
        ``stream_mode="messages"`` or ``astream_events`` before the check; the checked message
        is what the model node returns, so every stream mode, the node's update and the
        checkpoint written after it hold the verified, redacted or replaced answer. Under
        ``flag`` the tokens stream as they come.

        Raises:
            InputError: the context in ``context_key`` is missing or not documents.
        """
        if self._holds:
            with held_streams():
                response = handler(request)
        else:
            response = handler(request)
        found = self._answer_of(response)
        if found is None:
            return response
        index, message, text = found
        result = self.verifier.verify(text, self._context(request.state))
        _dispatch(result)
        return self._checked(response, index, message, result)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Async :meth:`wrap_model_call`: lookups run concurrently on the caller's loop.

        Raises:
            InputError: the context in ``context_key`` is missing or not documents.
        """
        if self._holds:
            with held_streams():
                response = await handler(request)
        else:
            response = await handler(request)
        found = self._answer_of(response)
        if found is None:
            return response
        index, message, text = found
        result = await self.verifier.averify(text, self._context(request.state))
        await _adispatch(result)
        return self._checked(response, index, message, result)

    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Keep the last check's result in the state under ``citeverify``.

        The check itself ran around the model call; its result (as shown:
        :func:`citeverify_core.engine.shown_result`) is in the answer's ``response_metadata``.
        """
        messages = state.get("messages") or []
        # The answer is the last message, or the one before a structured response's ToolMessage.
        for message in messages[-1:-3:-1]:
            if isinstance(message, AIMessage):
                data = message.response_metadata.get(STATE_KEY)
                return {STATE_KEY: data} if isinstance(data, dict) else None
            if not isinstance(message, ToolMessage):
                return None
        return None

    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`after_model`."""
        return self.after_model(state, runtime)

    # --- helpers --------------------------------------------------------------------------------

    @property
    def _holds(self) -> bool:
        """Whether the model's tokens are held until the check (redact and block)."""
        return self.verifier.policy.output_action.unverified_action != "flag"

    def _answer_of(self, response: Any) -> tuple[int, AIMessage, str] | None:
        """The answer to check in a model response: its last AIMessage, when it claims anything.

        A structured response (``create_agent(response_format=...)``) is the answer: its string
        values are checked, one a line (not its JSON, whose field names no source says), whether
        the model gave it as JSON text or as a tool call's arguments. Otherwise a tool-calling
        message is checked only with ``check_intermediate``, and only when it has text (a bare
        tool call claims nothing).
        """
        messages = _response_messages(response)
        index = next(
            (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)),
            None,
        )
        if index is None:
            return None
        message = messages[index]
        structured = getattr(response, "structured_response", None)
        if structured is not None:
            return index, message, field_values(structured)[0]
        if message.tool_calls and not self.check_intermediate:
            return None
        text = message_text(message)
        if message.tool_calls and not text.strip():
            return None
        return index, message, text

    def _checked(
        self, response: Any, index: int, message: AIMessage, result: VerificationResult
    ) -> Any:
        """``response`` with the answer blocked, redacted or annotated (see ``checked_message``).

        A structured response that fails under redact or block is dropped
        (``structured_response`` None): it cannot be shown in part, and its text would be in
        the state. The model's messages of that call (the JSON text, or the structured-output
        tool call and its ToolMessage) become one message: the redacted values, or the
        replacement.
        """
        replacement = (
            blocked_answer(result, self.blocked_response) if result.action == "block" else None
        )
        if isinstance(response, AIMessage):
            return checked_message(
                response, result, replacement=replacement, include_original=self.include_original
            )
        messages = list(_response_messages(response))
        structured = getattr(response, "structured_response", None)
        if structured is not None and result.action in ("redact", "block"):
            shown = replacement if replacement is not None else result.answer
            checked = checked_message(
                message, result, replacement=shown, include_original=self.include_original
            )
            return dataclasses.replace(response, result=[checked], structured_response=None)
        messages[index] = checked_message(
            message, result, replacement=replacement, include_original=self.include_original
        )
        return dataclasses.replace(response, result=messages)

    def _context(self, state: Any) -> list[str]:
        if self.context_key is not None:
            if state.get(self.context_key) is None:
                msg = (
                    f"CiteVerifyMiddleware: the agent state has no {self.context_key!r} "
                    "(give it in the agent's input, or set it from a tool or a node)"
                )
                raise InputError(msg, path=self.context_key)
            return document_texts(state[self.context_key], where=self.context_key)
        return tool_context(state.get("messages") or [])


def _response_messages(response: Any) -> list[Any]:
    """The messages of what a model call handler returned (a ModelResponse, or an AIMessage)."""
    if isinstance(response, AIMessage):
        return [response]
    return list(getattr(response, "result", None) or [])


def _dispatch(result: VerificationResult) -> None:
    """The ``citeverify_verdict`` event, for callback handlers (as the guard sends it)."""
    if not unobserved(None):
        dispatch_custom_event(EVENT_NAME, verdict_event(result))


async def _adispatch(result: VerificationResult) -> None:
    if not unobserved(None):
        await adispatch_custom_event(EVENT_NAME, verdict_event(result))


def tool_context(messages: Sequence[Any]) -> list[str]:
    """The passages the agent's tools returned: each ToolMessage's Documents, else its text.

    A retriever tool (``response_format="content_and_artifact"``) keeps its Documents in the
    message's ``artifact``; then each Document is a passage. Otherwise the message's text is one.
    """
    passages: list[str] = []
    for message in messages:
        if not isinstance(message, ToolMessage) or message.status == "error":
            continue
        artifact = message.artifact
        if isinstance(artifact, Document):
            artifact = [artifact]
        if (
            isinstance(artifact, list | tuple)
            and artifact
            and all(isinstance(item, Document) for item in artifact)
        ):
            passages.extend(doc.page_content for doc in artifact)
            continue
        text = message_text(message)
        if text.strip():
            passages.append(text)
    return passages


@lru_cache(maxsize=32)
def _state_schema(context_key: str | None) -> type[Any]:
    """:class:`CiteVerifyState`, with ``context_key`` declared so the agent keeps that input."""
    if context_key is None or context_key in CiteVerifyState.__annotations__:
        return CiteVerifyState
    namespace = {"__annotations__": {context_key: NotRequired[Any]}, "__module__": __name__}
    # TypedDict's metaclass, called as the class statement would call it (the key is dynamic).
    metaclass: Any = type(CiteVerifyState)
    schema: type[Any] = metaclass(f"CiteVerifyState_{context_key}", (CiteVerifyState,), namespace)
    return schema
