"""The evaluator: a ``BaseEvaluator`` that verifies a response against its contexts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.async_utils import asyncio_run
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from citeverify_core import CitationVerifier, InputError, VerificationResult
from citeverify_core.policy import merge_policy, with_check_options
from llama_index.postprocessor.citeverify._common import abuffered, node_texts, response_text
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

    Args:
        policy: As for
            :class:`~llama_index.postprocessor.citeverify.CiteVerifyPostprocessor`; keyword
            options override it.
        embed_model: The semantic tier (off by default), as for the postprocessor: a LlamaIndex
            embedding model.
        semantic_scorer: Instead of ``embed_model``, a callable ``(claim, passages) -> score``.
    """

    def __init__(
        self,
        policy: Any = None,
        *,
        embed_model: Any = None,
        semantic_scorer: Any = None,
        **options: Any,
    ) -> None:
        # The caller's options are validated (a wrong one is a PolicyError, not ignored), then
        # flag is put over them: an evaluator reports. A policy pack is read once.
        checked = merge_policy(policy, options).to_settings()
        self.policy = with_check_options(checked, action="flag")
        self._verifier = CitationVerifier(
            self.policy, semantic=scorer_of(embed_model, semantic_scorer)
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
        return EvaluationResult(
            query=query,
            response=response,
            contexts=contexts,
            passing=result.verified,
            score=result.details.groundedness,
            feedback=_feedback(result),
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


def _feedback(result: VerificationResult) -> str:
    d = result.details
    score = "n/a" if d.groundedness is None else f"{d.groundedness:.2f}"
    lines = [f"{result.reason_code}: groundedness {score}"]
    lines += [f"- unsupported claim: {c.text}" for c in d.claims or [] if c.verified is False]
    lines += [f"- misattributed claim: {c.text}" for c in d.claims or [] if c.misattributed]
    lines += [
        f"- {c.type} {c.text!r}: {c.reason}" for c in d.citations or [] if c.verified is False
    ]
    lines += [f"- {r}" for r in result.reasons]
    return "\n".join(lines)
