"""The guard Runnable: verifies a RAG answer against the retrieved Documents, inside LCEL.

::

    chain = (
        {"context": retriever, "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(answer=prompt | llm | StrOutputParser())
        | CiteVerifyGuard(unverified_action="block")
    )

On ``citation.unverified`` the guard raises :class:`CitationBlockedError` (block; or, with
``blocked_response=``, puts that text in place of the answer), or passes the input on with a
``verification`` entry (flag) and the answer redacted (redact).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessageChunk, AnyMessage, BaseMessage, BaseMessageChunk
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableSerializable,
)
from langchain_core.runnables.utils import AddableDict
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SkipValidation,
    create_model,
    field_serializer,
    model_validator,
)

from citeverify_core import (
    CitationVerifier,
    ContextCache,
    InputError,
    PolicyConfig,
    VerificationResult,
)
from citeverify_core.engine import blocked_answer, check_blocked_response, shown_result
from citeverify_core.policy import CREDENTIALS, collect_policy_options
from langchain_citeverify._common import (
    EVENT_NAME,
    AdapterModel,
    CitationBlockedError,
    answer_text,
    checked_message,
    document_texts,
    held_then,
    masked_policy,
    semantic_scorer,
    unobserved,
    verdict_event,
)

__all__ = ["CiteVerifyGuard"]

#: The policy's credentials (``extensions.lookups``), and the environment variable each is read
#: from when a serialized guard is loaded (``loads(..., secrets_map=...)`` or
#: ``secrets_from_env=True``). ``dumpd`` writes them as top-level secret references, never their
#: values: langchain-core only honours secret markers among a class's own constructor keywords
#: (a marker nested in a dict is escaped as user data).
POLICY_SECRETS = dict(CREDENTIALS)


class CiteVerifyGuard(AdapterModel, RunnableSerializable[dict[str, Any], dict[str, Any]]):
    """Verify ``input[answer_key]`` against ``input[context_key]`` and act on the verdict.

    Args:
        policy: A :class:`citeverify_core.PolicyConfig`, the inner policy mapping, or a policy pack
            path. Keyword options override it: any top-level policy field
            (``min_groundedness=0.7``) and ``unverified_action`` ("flag", "redact", "block").
        answer_key: Where the answer is (a string or an AIMessage).
        context_key: Where the retrieved Documents (or strings) are.
        output_key: Where the :class:`citeverify_core.VerificationResult` is put in the output.
        context_cache: Keep the tokenization of documents seen before (on by default: a chain
            often checks many answers against the same retrieved documents).
        include_original: Send the original along: under ``redact`` and ``block`` keep the
            removed or blocked text in ``verification`` (``original_answer``, the claims' texts)
            and in the error raised on block. Off by default, so that nothing passed down the
            chain, returned or raised carries what was removed or blocked.
        embeddings: The semantic tier (off by default): a LangChain ``Embeddings`` (the one the
            vector store uses will do). A claim that fails on words passes when its cosine
            similarity to its best passage reaches ``semantic={"min_score": ...}`` (0.8 by
            default); each claim's ``tier`` says which tier decided it.
        semantic_scorer: Instead of ``embeddings``, any callable ``(claim, passages) -> score``
            in [0, 1], sync or async (an NLI cross-encoder's entailment probability).
        blocked_response: Under block, put this text in place of the answer instead of raising:
            a string, or a callable given the :class:`citeverify_core.VerificationResult` that
            returns one (``citeverify_core.engine.DEFAULT_BLOCKED_RESPONSE`` is a ready one). The
            result is still under ``output_key``. None (the default) raises
            :class:`CitationBlockedError`.

    Streaming: under ``flag`` the input's chunks (the answer's tokens) pass on as they come and
    the verification follows as a last chunk (``{output_key: result}``). Under ``redact`` and
    ``block`` the guard holds the answer back, verifies once at the end and emits one output: what
    it passes on must be checked first. Batching respects ``max_concurrency``.

    Serialization: ``langchain_core.load.dumpd(guard)`` writes the policy as data (credentials as
    secret references); load it back with ``loads(text, valid_namespaces=["langchain_citeverify"],
    allowed_objects=[CiteVerifyGuard])``. ``embeddings`` and ``semantic_scorer`` are written as
    LangChain writes any component: one that cannot be serialized makes ``loads`` fail (the
    semantic tier is never dropped silently); build such a guard again with the model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    answer_key: str = "answer"
    context_key: str = "context"
    output_key: str = "verification"
    context_cache: bool = True
    include_original: bool = False
    embeddings: SkipValidation[Embeddings | None] = None
    semantic_scorer: SkipValidation[Callable[..., Any] | None] = None
    blocked_response: SkipValidation[str | Callable[[VerificationResult], str] | None] = None
    name: str | None = "CiteVerifyGuard"

    _verifier: CitationVerifier = PrivateAttr()

    @field_serializer("policy")
    def _dump_policy(self, policy: PolicyConfig, info: Any) -> dict[str, Any]:
        """``model_dump`` writes the credentials masked (see ``masked_policy``)."""
        return masked_policy(policy, info)

    @model_validator(mode="before")
    @classmethod
    def _collect_policy(cls, data: Any) -> Any:
        """Policy keywords into ``policy``; the credentials too (``ncbi_api_key=...``)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key in POLICY_SECRETS:
            if key in data:
                secret = data.pop(key)
                if secret is not None:  # None: an unresolved secret
                    data[f"extensions.lookups.{key}"] = secret
        return collect_policy_options(data, cls.model_fields)

    def model_post_init(self, context: Any, /) -> None:
        """Build the verifier; the context cache makes repeated retrievals cheap.

        Raises:
            InputError: ``blocked_response`` is neither a string nor a callable.
        """
        check_blocked_response(self.blocked_response)
        cache = ContextCache() if self.context_cache else False
        self._verifier = CitationVerifier(
            self.policy,
            context_cache=cache,
            include_original=self.include_original,
            semantic=semantic_scorer(self.embeddings, self.semantic_scorer),
        )

    @classmethod
    def is_lc_serializable(cls) -> bool:
        """The guard is plain configuration: it can be serialized."""
        return True

    @property
    def lc_attributes(self) -> dict[str, Any]:
        """The policy as JSON data (what was set), its credentials as separate keywords."""
        policy = self.policy.model_dump(mode="json", exclude_unset=True)
        lookups = policy.get("extensions", {}).get("lookups", {})
        attributes: dict[str, Any] = {"policy": policy}
        for key in POLICY_SECRETS:
            if (value := lookups.pop(key, None)) is not None:
                attributes[key] = value  # replaced by a secret reference (lc_secrets)
        return attributes

    @property
    def lc_secrets(self) -> dict[str, str]:
        """The policy's credentials: serialized as secret references, never as values."""
        return dict(POLICY_SECRETS)

    def around(self, runnable: Runnable[Any, dict[str, Any]]) -> Runnable[Any, dict[str, Any]]:
        """``runnable | self`` as one step whose streams show only the checked output.

        In ``retrieval | generation | guard`` the model streams its tokens before the guard sees
        the answer: ``astream_events`` carries them (``on_chat_model_stream``), and the
        unchecked answer (the output of the generation step, the guard's input), and a
        LangGraph node that runs the chain shows the tokens in ``stream_mode="messages"``.
        Under ``redact`` and ``block``, ``guard.around(chain)`` runs ``chain`` with every
        stream held (:func:`~langchain_citeverify._common.held_config`: tracers such as
        LangSmith still see it all) and then checks, so that the events of the step are its
        input, the ``citeverify_verdict`` event and the checked output. Under ``flag`` it is
        ``runnable | self``: the tokens stream as they come.
        """
        if self._streams():
            return runnable | self

        def check(whole: Any, config: RunnableConfig) -> dict[str, Any]:
            answer, text, docs = self._unpack(whole)
            result = self._verifier.verify(text, docs)
            if not unobserved(config):
                dispatch_custom_event(EVENT_NAME, verdict_event(result), config=config)
            return self._finish(whole, answer, result)

        async def acheck(whole: Any, config: RunnableConfig) -> dict[str, Any]:
            answer, text, docs = self._unpack(whole)
            result = await self._verifier.averify(text, docs)
            if not unobserved(config):
                await adispatch_custom_event(EVENT_NAME, verdict_event(result), config=config)
            return self._finish(whole, answer, result)

        name = f"{self.get_name()}.around({runnable.get_name()})"
        return held_then(runnable, check, acheck, name=name)

    def get_input_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """A model with the keys the guard reads (``answer_key``, ``context_key``).

        Other keys are allowed: the guard passes them on.
        """
        return _input_model(self.get_name("Input"), self.answer_key, self.context_key)

    # --- LangChain entry points ---------------------------------------------------------------

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Verify and act on the verdict.

        A run (``CiteVerifyGuard``, type ``chain``) is reported to the callback handlers and
        tracers when there are any; without them the guard calls the core directly.

        Raises:
            CitationBlockedError: the policy blocks the answer and no ``blocked_response`` is set.
            InputError: the input lacks the answer or the context, or holds something else.
        """
        if unobserved(config):
            answer, text, docs = self._unpack(input)
            return self._finish(input, answer, self._verifier.verify(text, docs))
        return self._call_with_config(self._run, input, config, run_type="chain")

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Async :meth:`invoke`: the answer's lookups run concurrently on the caller's loop."""
        if unobserved(config):
            answer, text, docs = self._unpack(input)
            return self._finish(input, answer, await self._verifier.averify(text, docs))
        return await self._acall_with_config(self._arun, input, config, run_type="chain")

    def _run(
        self, input: dict[str, Any], run_manager: Any, config: RunnableConfig
    ) -> dict[str, Any]:
        answer, text, docs = self._unpack(input)
        result = self._verifier.verify(text, docs)
        if run_manager.handlers:  # nobody listening for it: skip the event (it costs ~0.1 ms)
            dispatch_custom_event(EVENT_NAME, verdict_event(result), config=config)
        return self._finish(input, answer, result)

    async def _arun(
        self, input: dict[str, Any], run_manager: Any, config: RunnableConfig
    ) -> dict[str, Any]:
        answer, text, docs = self._unpack(input)
        result = await self._verifier.averify(text, docs)
        if run_manager.handlers:
            await adispatch_custom_event(EVENT_NAME, verdict_event(result), config=config)
        return self._finish(input, answer, result)

    def transform(
        self,
        input: Iterator[dict[str, Any]],
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Iterator[dict[str, Any]]:
        """Stream: under ``flag`` the chunks pass on as they come, then the verification.

        Under ``redact`` and ``block`` the whole input is gathered and verified first.
        """
        if not self._streams():
            yield from super().transform(input, config, **kwargs)
            return
        yield from self._transform_stream_with_config(
            input, self._flag_stream, config, run_type="chain"
        )

    async def atransform(
        self,
        input: AsyncIterator[dict[str, Any]],
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Async :meth:`transform`."""
        if not self._streams():
            async for chunk in super().atransform(input, config, **kwargs):
                yield chunk
            return
        async for chunk in self._atransform_stream_with_config(
            input, self._aflag_stream, config, run_type="chain"
        ):
            yield chunk

    def _streams(self) -> bool:
        # Only flag passes the answer on unchanged: what redact and block emit depends on the end.
        return self._verifier.policy.output_action.unverified_action == "flag"

    def _flag_stream(
        self, chunks: Iterator[dict[str, Any]], run_manager: Any, config: RunnableConfig
    ) -> Iterator[dict[str, Any]]:
        whole: Any = None
        for chunk in chunks:
            whole = chunk if whole is None else _add(whole, chunk)
            yield AddableDict(chunk) if isinstance(chunk, Mapping) else chunk
        if whole is None:
            return
        answer, text, docs = self._unpack(whole)
        result = self._verifier.verify(text, docs)
        if run_manager.handlers:
            dispatch_custom_event(EVENT_NAME, verdict_event(result), config=config)
        yield self._last_chunk(answer, result)

    async def _aflag_stream(
        self, chunks: AsyncIterator[dict[str, Any]], run_manager: Any, config: RunnableConfig
    ) -> AsyncIterator[dict[str, Any]]:
        whole: Any = None
        async for chunk in chunks:
            whole = chunk if whole is None else _add(whole, chunk)
            yield AddableDict(chunk) if isinstance(chunk, Mapping) else chunk
        if whole is None:
            return
        answer, text, docs = self._unpack(whole)
        result = await self._verifier.averify(text, docs)
        if run_manager.handlers:
            await adispatch_custom_event(EVENT_NAME, verdict_event(result), config=config)
        yield self._last_chunk(answer, result)

    def _last_chunk(self, answer: Any, result: VerificationResult) -> dict[str, Any]:
        """The verification; for a message answer also its metadata, as a chunk to add on."""
        last = AddableDict({self.output_key: result})
        if isinstance(answer, BaseMessageChunk):
            metadata = {"citeverify": result.to_dict()}  # flag: the answer is shown anyway
            last[self.answer_key] = AIMessageChunk(content="", response_metadata=metadata)
        return last

    # --- helpers --------------------------------------------------------------------------------

    def _unpack(self, input: Any) -> tuple[Any, str, list[str]]:
        if not isinstance(input, Mapping):
            msg = (
                f"CiteVerifyGuard takes a mapping with {self.answer_key!r} and "
                f"{self.context_key!r}, got {type(input).__name__}"
            )
            raise InputError(msg, path="input")
        for key in (self.answer_key, self.context_key):
            if key not in input:
                keys = ", ".join(map(repr, input)) or "none"
                msg = (
                    f"CiteVerifyGuard's input has no {key!r} key (keys: {keys}); "
                    "set answer_key / context_key"
                )
                raise InputError(msg, path=key)
        answer = input[self.answer_key]
        text = answer_text(answer, where=self.answer_key)
        return answer, text, document_texts(input[self.context_key], where=self.context_key)

    def _finish(
        self, input: Mapping[str, Any], answer: Any, result: VerificationResult
    ) -> dict[str, Any]:
        """The output: the answer as shown (verified, redacted or replaced) and the result.

        Under block the result passed on is :func:`~citeverify_core.engine.shown_result`'s
        (nothing of the blocked answer) unless ``include_original``; so is the error raised.
        """
        output = dict(input)
        replacement = None
        if result.verdict == "block":
            if self.blocked_response is None:
                raise CitationBlockedError(result, include_original=self.include_original)
            replacement = blocked_answer(result, self.blocked_response)
        output[self.output_key] = shown_result(
            result, replacement=replacement, include_original=self.include_original
        )
        if isinstance(answer, BaseMessage):
            output[self.answer_key] = checked_message(
                answer, result, replacement=replacement, include_original=self.include_original
            )
        else:
            output[self.answer_key] = result.answer if replacement is None else replacement
        return output


# The context is described, not validated: Document's own validation raises TypeError (not a
# ValidationError) on a mapping without page_content; the guard checks the value itself.
_ContextField = SkipValidation[list[Document | str | dict[str, Any]] | Document | str]


@lru_cache(maxsize=32)
def _input_model(name: str, answer_key: str, context_key: str) -> type[BaseModel]:
    # Aliases carry the configured keys, so any key works (pydantic refuses field names with a
    # leading underscore); the schema's properties are the aliases.
    fields: dict[str, Any] = {
        "answer": (
            str | AnyMessage,
            Field(
                alias=answer_key,
                title=answer_key,
                description="The answer to verify: a string or a message (AIMessage).",
            ),
        ),
        "context": (
            _ContextField,
            Field(
                alias=context_key,
                title=context_key,
                description=(
                    "The retrieved documents the answer was generated from: Documents, "
                    "strings or mappings with 'content'."
                ),
            ),
        ),
    }
    model: type[BaseModel] = create_model(
        name,
        __config__=ConfigDict(extra="allow", arbitrary_types_allowed=True),
        **fields,
    )
    return model


def _add(whole: Any, chunk: Any) -> Any:
    """Chunks gathered as LangChain gathers them (``+``), else the last one."""
    try:
        return whole + chunk
    except TypeError:
        return chunk
