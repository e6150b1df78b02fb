"""An evaluator for LlamaIndex evaluation pipelines (``BatchEvalRunner`` and friends)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from citeverify import CitationVerifier, InputError, VerificationResult
from citeverify._policy import policy_with_options

__all__ = ["CiteVerifyEvaluator"]


class CiteVerifyEvaluator(BaseEvaluator):
    """Scores a response by its groundedness in its contexts, without an LLM judge.

    ``passing`` is the verdict (verified or not), ``score`` the groundedness, and ``feedback``
    lists the unverified claims and the citations that failed. ``evaluate_response`` takes the
    contexts from ``response.source_nodes``. Never raises on an unverified answer.

    Args:
        policy: As for :class:`~llamaindex_citeverify.CiteVerifyPostprocessor`; keyword options
            override it.
    """

    def __init__(self, policy: Any = None, **options: Any) -> None:
        policy_with_options(policy, options)  # a wrong option is a PolicyError, not ignored
        options = {**options, "unverified_action": "flag"}  # an evaluator reports
        self.policy = policy_with_options(policy, options)
        self._verifier = CitationVerifier(self.policy)

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
        contexts = list(contexts or [])
        result = await self._verifier.averify(response, contexts)
        return EvaluationResult(
            query=query,
            response=response,
            contexts=contexts,
            passing=result.verified,
            score=result.details.groundedness,
            feedback=_feedback(result),
        )


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
