"""The evaluator: a ``BaseEvaluator`` that verifies a response against its contexts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.async_utils import asyncio_run
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from citeverify_core import CitationVerifier, InputError, VerificationResult
from citeverify_core.engine import (
    BlockedResponse,
    blocked_answer,
    check_blocked_response,
    shown_result,
)
from citeverify_core.policy import mask_credentials, merge_policy, restore_credentials
from llama_index.postprocessor.citeverify._common import (
    abuffered,
    node_texts,
    response_text,
)
from llama_index.postprocessor.citeverify._common import semantic_scorer as scorer_of

__all__ = ["CiteVerifyEvaluator"]


class CiteVerifyEvaluator(BaseEvaluator):
    """Scores a response by its groundedness in its contexts, without an LLM judge.

    ``passing`` is the verdict (verified or not), ``score`` the groundedness, and ``feedback``
    lists the unverified claims and the citations that failed. ``evaluate_response`` takes the
    contexts from ``response.source_nodes``, read as the LLM saw them (with the metadata shown to
    it), and the answer as the query engine wrapper does (a structured answer by its string
    values, a stream read to its end). Never raises on an unverified answer.

    ``contexts`` is a list of passages; a single string is one passage (not one per character).

    Under ``flag`` (the default) the evaluation shows everything: ``response`` is the answer
    evaluated and ``feedback`` quotes each unsupported claim. Under ``unverified_action="redact"``
    or ``"block"`` it holds what a guard with the same policy would let through, as the guards'
    results do: under ``redact`` ``response`` is the redacted answer, under ``block`` the
    ``blocked_response`` text (``None`` without one), and ``feedback`` names claims and citations
    by their spans in the answer, not by their text. ``passing`` and ``score`` are the same under
    every action. ``include_original=True`` sends the original along (the answer evaluated, the
    claims quoted).

    Args:
        policy: As for
            :class:`~llama_index.postprocessor.citeverify.CiteVerifyPostprocessor`; keyword
            options override it.
        embed_model: The semantic tier (off by default), as for the postprocessor: a LlamaIndex
            embedding model.
        semantic_scorer: Instead of ``embed_model``, a callable ``(claim, passages) -> score``.
        blocked_response: Under ``block``, the text the evaluation shows as ``response``: a
            string, or a callable given the result.
        include_original: Keep the answer and the claims' texts in the evaluation under
            ``redact`` and ``block``.

    Raises:
        citeverify_core.PolicyError: a policy option is wrong.
        citeverify_core.InputError: ``blocked_response`` is neither a string nor a callable, or
            the semantic options conflict.

    A pickled evaluator writes the policy's credentials masked and reads them from
    ``NCBI_API_KEY``, ``SEMANTIC_SCHOLAR_API_KEY`` and ``COURTLISTENER_TOKEN`` when loaded.
    """

    def __init__(
        self,
        policy: Any = None,
        *,
        embed_model: Any = None,
        semantic_scorer: Any = None,
        blocked_response: BlockedResponse | None = None,
        include_original: bool = False,
        **options: Any,
    ) -> None:
        check_blocked_response(blocked_response)
        # The caller's options are validated (a wrong one is a PolicyError, not ignored). A
        # policy pack is read once.
        self.policy = merge_policy(policy, options).to_settings()
        self.blocked_response = blocked_response
        self.include_original = include_original
        self._semantic = scorer_of(embed_model, semantic_scorer)
        self._verifier = CitationVerifier(
            self.policy, include_original=include_original, semantic=self._semantic
        )

    def __getstate__(self) -> dict[str, Any]:
        """The pickled state: the credentials masked; not the verifier (which holds them)."""
        state = {k: v for k, v in self.__dict__.items() if k != "_verifier"}
        state["policy"] = mask_credentials(self.policy)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The credentials from the environment, a new verifier."""
        self.__dict__.update(state)
        self.policy = restore_credentials(self.policy)
        self._verifier = CitationVerifier(
            self.policy, include_original=self.include_original, semantic=self._semantic
        )

    def _get_prompts(self) -> PromptDictType:
        return {}  # no LLM, no prompts

    def _update_prompts(self, prompts_dict: PromptDictType) -> None:
        return None

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        """Verify ``response`` against ``contexts``."""
        if response is None:
            msg = "CiteVerifyEvaluator needs the response text"
            raise InputError(msg, path="response")
        contexts = _contexts(contexts)
        result = await self._verifier.averify(response, contexts)
        replacement = None
        if result.verdict == "block" and self.blocked_response is not None:
            replacement = blocked_answer(result, self.blocked_response)
        shown = shown_result(
            result, replacement=replacement, include_original=self.include_original
        )
        withheld = not self.include_original and result.action in ("redact", "block")
        if not withheld:
            text: str | None = response
        elif result.action == "redact":
            text = shown.answer
        else:
            text = replacement
        return EvaluationResult(
            query=query,
            response=text,
            contexts=contexts,
            passing=result.verified,
            score=result.details.groundedness,
            feedback=_feedback(shown, by_span=withheld),
        )

    def evaluate_response(
        self, query: str | None = None, response: Any = None, **kwargs: Any
    ) -> EvaluationResult:
        """Verify a query engine's response against its own source nodes."""
        result: EvaluationResult = asyncio_run(
            self.aevaluate_response(query=query, response=response, **kwargs)
        )
        return result

    async def aevaluate_response(
        self, query: str | None = None, response: Any = None, **kwargs: Any
    ) -> EvaluationResult:
        """Verify a query engine's response against its own source nodes."""
        if response is None:
            msg = "CiteVerifyEvaluator needs the response"
            raise InputError(msg, path="response")
        response = await abuffered(response)
        return await self.aevaluate(
            query=query,
            response=response_text(response),
            contexts=node_texts(getattr(response, "source_nodes", None)),  # a str has none
            **kwargs,
        )


def _contexts(contexts: Sequence[str] | str | None) -> list[str]:
    # A str is a Sequence[str] too: iterating it would make one context per character.
    if isinstance(contexts, str):
        return [contexts]
    items = list(contexts or [])
    for i, item in enumerate(items):
        if not isinstance(item, str):
            msg = (
                f"contexts[{i}] is a {type(item).__name__}, not a str: pass the passages' "
                "texts, or use evaluate_response(response=...) for a response with source nodes"
            )
            raise InputError(msg, path=f"contexts[{i}]")
    return items


def _feedback(result: VerificationResult, *, by_span: bool) -> str:
    """What failed, for people: the claims and citations quoted, or (``by_span``) by their spans.

    ``result`` is the result as shown (its reasons hold no text of a withheld answer).
    """
    d = result.details

    def named(text: str, span: tuple[int, int]) -> str:
        return f" at {span[0]}-{span[1]}" if by_span else f": {text}"

    score = "n/a" if d.groundedness is None else f"{d.groundedness:.2f}"
    lines = [f"{result.reason_code}: groundedness {score}"]
    lines += [
        f"- unsupported claim{named(c.text, c.span)}" for c in d.claims or [] if c.verified is False
    ]
    lines += [
        f"- misattributed claim{named(c.text, c.span)}" for c in d.claims or [] if c.misattributed
    ]
    lines += [
        f"- {c.type} at {c.span[0]}-{c.span[1]}: {c.status}"
        if by_span
        else f"- {c.type} {c.text!r}: {c.reason}"
        for c in d.citations or []
        if c.verified is False
    ]
    lines += [f"- {r}" for r in result.reasons]
    return "\n".join(lines)
