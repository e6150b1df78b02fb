"""A tool for agents: check a text against source passages."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.tools import BaseTool
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SkipValidation,
    field_serializer,
    field_validator,
    model_validator,
)

from citeverify_core import CitationVerifier, PolicyConfig, VerificationResult
from citeverify_core.engine import blocked_answer, check_blocked_response, public_reason
from citeverify_core.policy import collect_policy_options, with_check_options
from langchain_citeverify._common import AdapterModel, masked_policy

if TYPE_CHECKING:
    # Reference verification is the core's references extra: imported when the tool is made.
    from citeverify_core.references import ReferenceResult, ReferenceVerifier

__all__ = [
    "CheckAgainstSourcesInput",
    "CheckReferencesInput",
    "CiteVerifyReferenceTool",
    "CiteVerifyTool",
]


class CheckAgainstSourcesInput(BaseModel):
    """Arguments of :class:`CiteVerifyTool`."""

    text: str = Field(description="The text to check, e.g. a draft answer.")
    sources: list[str] = Field(description="The source passages the text should be based on.")


#: The tool's policy defaults, kept unless the caller sets them: the tool checks a text against the
#: passages it is given, so an answer need not carry source evidence of its own.
TOOL_POLICY_DEFAULTS: dict[str, Any] = {"require_sources": False}

#: The reason given when the agent passes no source passages.
NO_SOURCES = "no source passages were given: nothing supports the text (pass the passages)"


class CiteVerifyTool(AdapterModel, BaseTool):
    """Checks whether a text is supported by source passages (word overlap, quotes, numbers).

    Returns a JSON summary the agent can read: verdict, groundedness, the unsupported claims and
    the citations that failed. It never raises on an unverified text: the verdict is the answer.
    With ``blocked_response=`` (a string, or a callable given the
    :class:`citeverify_core.VerificationResult`), a text that is not supported gets an
    ``answer_instead`` entry: the text to give in its place.

    Under a ``redact`` or ``block`` policy (``unverified_action=``) the summary withholds what
    fails, as the other adapters do: an unsupported claim is given by its number and its
    ``[start, end)`` span in the text, a failed citation by its type, span and status, and the
    reasons hold no text of it. The tool's output is a ToolMessage, which the agent's state,
    checkpoints and ``stream_mode="messages"`` carry to the user. (The text itself is the tool
    call's argument, written by the model: to keep an unsupported answer from the user, guard
    the answer with :class:`~langchain_citeverify.CiteVerifyMiddleware`.)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "citeverify_check"
    description: str = (
        "Check whether a text is supported by given source passages. Input: the text and the "
        "list of source passages. Output: JSON with verdict, groundedness (0-1), the claims that "
        "the sources do not support, and quotes or numbers that differ from the sources."
    )
    args_schema: type[BaseModel] = CheckAgainstSourcesInput
    policy: PolicyConfig = Field(default_factory=lambda: PolicyConfig(**TOOL_POLICY_DEFAULTS))
    blocked_response: SkipValidation[str | Callable[[VerificationResult], str] | None] = None

    _verifier: CitationVerifier = PrivateAttr()

    @field_serializer("policy")
    def _dump_policy(self, policy: PolicyConfig, info: Any) -> dict[str, Any]:
        """``model_dump`` writes the credentials masked (see ``masked_policy``)."""
        return masked_policy(policy, info)

    @model_validator(mode="before")
    @classmethod
    def _collect_policy(cls, data: Any) -> Any:
        # The tool's defaults stay under whatever the caller sets (policy or keyword options):
        # min_groundedness=0.7 alone must not switch require_sources back on.
        if not isinstance(data, dict):
            return data
        return collect_policy_options(data, cls.model_fields, defaults=TOOL_POLICY_DEFAULTS)

    def model_post_init(self, context: Any, /) -> None:
        """Build the verifier (flag, never block: a tool reports).

        Raises:
            InputError: ``blocked_response`` is neither a string nor a callable.
        """
        check_blocked_response(self.blocked_response)
        self._verifier = CitationVerifier(
            with_check_options(self.policy.to_settings(), action="flag")
        )

    def _run(
        self,
        text: str,
        sources: list[str],
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        return self._summary(self._verifier.verify(text, sources), sources)

    async def _arun(
        self,
        text: str,
        sources: list[str],
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> str:
        return self._summary(await self._verifier.averify(text, sources), sources)

    def _summary(self, result: VerificationResult, sources: list[str]) -> str:
        withhold = self.policy.output_action.unverified_action != "flag"
        summary = _summary(result, sources=sources, withhold=withhold)
        if self.blocked_response is not None and summary["verdict"] != "supported":
            summary["answer_instead"] = blocked_answer(result, self.blocked_response)
        return json.dumps(summary, ensure_ascii=False)


def _summary(
    result: VerificationResult, *, sources: list[str], withhold: bool = False
) -> dict[str, Any]:
    d = result.details
    # Zero (or only blank) passages: with require_sources off the core allows the text, but
    # nothing supports it, and "supported" would tell the agent otherwise.
    no_sources = not any(s.strip() for s in sources)
    summary: dict[str, Any] = {
        "verdict": "supported" if result.verified and not no_sources else "not supported",
        "reason_code": "citation.unverified" if no_sources else result.reason_code,
        "groundedness": None if d.groundedness is None else round(d.groundedness, 3),
        "claim_confidence": None if d.claim_confidence is None else round(d.claim_confidence, 3),
        "unsupported_claims": [
            {"claim": c.text, "missing_words": c.missing_words[:10]}
            for c in d.claims or []
            if c.verified is False
        ],
        "problems": [
            {"type": c.type, "text": c.text, "status": c.status, "why": c.reason}
            for c in d.citations or []
            if c.verified is False
        ],
        "reasons": [NO_SOURCES, *result.reasons] if no_sources else result.reasons,
    }
    if withhold:  # what fails is named by place, not by text (see CiteVerifyTool)
        summary["unsupported_claims"] = [
            {"claim": i, "span": list(c.span)}
            for i, c in enumerate(d.claims or [], 1)
            if c.verified is False
        ]
        summary["problems"] = [
            {"type": c.type, "span": list(c.span), "status": c.status}
            for c in d.citations or []
            if c.verified is False
        ]
        summary["reasons"] = [public_reason(r) for r in summary["reasons"]]
    return summary


class CheckReferencesInput(BaseModel):
    """Arguments of :class:`CiteVerifyReferenceTool`."""

    references: list[str] = Field(
        description="Reference strings to check, e.g. a bibliography (1 to 20).",
        min_length=1,
        max_length=20,
    )


class CiteVerifyReferenceTool(BaseTool):
    """Checks reference strings: does each work exist, and which fields are wrong?

    Backed by :class:`citeverify_core.references.ReferenceVerifier` (the local index, and the public
    APIs when the verifier is configured with them). Returns a JSON list the agent can read: the
    status, the corrected APA 7 reference and the fields that differ, per reference.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "citeverify_references"
    description: str = (
        "Check academic references. Input: a list of reference strings. Output: JSON with, for "
        "each, a status (verified, verified-with-error, needs-human, unverified), the corrected "
        "APA 7 reference when the work exists, and the fields that are wrong."
    )
    args_schema: type[BaseModel] = CheckReferencesInput
    verifier: Any  # a ReferenceVerifier, checked below

    @field_validator("verifier")
    @classmethod
    def _reference_verifier(cls, value: Any) -> ReferenceVerifier:
        # Raises MissingExtraError (naming the extra) when the references extra is missing.
        from citeverify_core.references import ReferenceVerifier  # noqa: PLC0415

        if not isinstance(value, ReferenceVerifier):
            msg = f"verifier must be a ReferenceVerifier, not {type(value).__name__}"
            raise ValueError(msg)  # noqa: TRY004 - pydantic reports a ValueError as invalid input
        return value

    def _run(
        self, references: list[str], run_manager: CallbackManagerForToolRun | None = None
    ) -> str:
        return _reference_summary(references, self.verifier.verify_references(references))

    async def _arun(
        self, references: list[str], run_manager: AsyncCallbackManagerForToolRun | None = None
    ) -> str:
        results = await self.verifier.averify_references(references)
        return _reference_summary(references, results)


def _reference_summary(references: list[str], results: list[ReferenceResult]) -> str:
    wrong = {"CONTRADICTION", "MATCH_WITH_TYPO", "CONTAINS"}
    return json.dumps(
        [
            {
                "reference": ref,
                "status": r.status,
                "corrected": r.reference if r.status != "unverified" else None,
                "fields_that_differ": [f for f, label in r.field_results.items() if label in wrong],
                "error": r.error,
            }
            for ref, r in zip(references, results, strict=True)
        ],
        ensure_ascii=False,
    )
