"""The guard Runnable: verifies a RAG answer against the retrieved Documents, inside LCEL.

::

    chain = (
        {"context": retriever, "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(answer=prompt | llm | StrOutputParser())
        | CiteVerifyGuard(unverified_action="block")
    )

On ``citation.unverified`` the guard raises :class:`CitationBlockedError` (block), or passes the
input on with a ``verification`` entry (flag) and the answer redacted (redact).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import ConfigDict, Field, PrivateAttr

from citeverify import CitationVerifier, ContextCache, InputError, PolicyConfig, VerificationResult
from citeverify._policy import policy_options_validator
from langchain_citeverify._common import (
    CitationBlockedError,
    answer_text,
    document_texts,
)

__all__ = ["CiteVerifyGuard"]

#: Name of the custom event the guard dispatches, for callback handlers (``on_custom_event``).
EVENT_NAME = "citeverify_verdict"


class CiteVerifyGuard(RunnableSerializable[dict[str, Any], dict[str, Any]]):
    """Verify ``input[answer_key]`` against ``input[context_key]`` and act on the verdict.

    Args:
        policy: A :class:`citeverify.PolicyConfig`, the inner policy mapping, or a policy pack
            path. Keyword options override it: any top-level policy field
            (``min_groundedness=0.7``) and ``unverified_action`` ("flag", "redact", "block").
        answer_key: Where the answer is (a string or an AIMessage).
        context_key: Where the retrieved Documents (or strings) are.
        output_key: Where the :class:`citeverify.VerificationResult` is put in the output.
        context_cache: Keep the tokenization of documents seen before (on by default: a chain
            often checks many answers against the same retrieved documents).
        include_original: Under ``redact``, keep the removed text in ``verification``
            (``original_answer``, the removed claims' texts). Off by default, so that the output
            passed down the chain does not carry what was removed.

    Streaming: the guard buffers the whole answer, verifies once at the end and emits one output
    (the seed's gateway does not check streams at all). Batching respects ``max_concurrency``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    answer_key: str = "answer"
    context_key: str = "context"
    output_key: str = "verification"
    context_cache: bool = True
    include_original: bool = False
    name: str | None = "CiteVerifyGuard"

    _verifier: CitationVerifier = PrivateAttr()

    _collect_policy = policy_options_validator()

    def model_post_init(self, context: Any, /) -> None:
        """Build the verifier; the context cache makes repeated retrievals cheap."""
        cache = ContextCache() if self.context_cache else False
        self._verifier = CitationVerifier(
            self.policy, context_cache=cache, include_original=self.include_original
        )

    @classmethod
    def is_lc_serializable(cls) -> bool:
        """The guard is plain configuration: it can be serialized."""
        return True

    # --- LangChain entry points ---------------------------------------------------------------

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Verify and act; raises :class:`CitationBlockedError` on block."""
        return self._call_with_config(self._run, input, config, run_type="chain")

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Async :meth:`invoke`: the answer's lookups run concurrently on the caller's loop."""
        return await self._acall_with_config(self._arun, input, config, run_type="chain")

    def _run(
        self, input: dict[str, Any], run_manager: Any, config: RunnableConfig
    ) -> dict[str, Any]:
        answer, text, docs = self._unpack(input)
        result = self._verifier.verify(text, docs)
        if run_manager.handlers:  # nobody listening: skip the event (it costs ~0.1 ms)
            dispatch_custom_event(EVENT_NAME, _event(result), config=config)
        return self._finish(input, answer, result)

    async def _arun(
        self, input: dict[str, Any], run_manager: Any, config: RunnableConfig
    ) -> dict[str, Any]:
        answer, text, docs = self._unpack(input)
        result = await self._verifier.averify(text, docs)
        if run_manager.handlers:
            await adispatch_custom_event(EVENT_NAME, _event(result), config=config)
        return self._finish(input, answer, result)

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
        if result.verdict == "block":
            raise CitationBlockedError(result)
        output = dict(input)
        output[self.output_key] = result
        output[self.answer_key] = _annotated(answer, result)
        return output


def _annotated(answer: Any, result: VerificationResult) -> Any:
    """The answer to pass on: redacted under redact; a message also carries the verification."""
    if isinstance(answer, BaseMessage):
        update: dict[str, Any] = {
            "response_metadata": {**answer.response_metadata, "citeverify": result.to_dict()}
        }
        if result.action == "redact":
            update["content"] = result.answer
        return answer.model_copy(update=update)
    return result.answer


def _event(result: VerificationResult) -> dict[str, Any]:
    d = result.details
    return {
        "verdict": result.verdict,
        "reason_code": result.reason_code,
        "action": result.action,
        "groundedness": d.groundedness,
        "claim_confidence": d.claim_confidence,
        "unverified_claim_count": d.unverified_claim_count or 0,
    }
