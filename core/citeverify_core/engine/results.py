"""Result value objects: frozen pydantic models, JSON-serialisable with the seed's key names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticUndefined

from citeverify_core.engine.plain import Plan, result_dict

__all__ = [
    "Citation",
    "ClaimResult",
    "LookupRecord",
    "QuoteResult",
    "VerificationDetails",
    "VerificationReport",
    "VerificationResult",
]

Span = tuple[int, int]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def _field_plan(cls) -> Plan:
        """Every field with its default (in order), and the fields made by a default factory."""
        template: dict[str, Any] = {}
        factories: list[tuple[str, Callable[[], Any]]] = []
        for name, field in cls.model_fields.items():
            template[name] = None if field.default is PydanticUndefined else field.default
            if field.default_factory is not None:
                factories.append((name, field.default_factory))  # type: ignore[arg-type]
        return template, tuple(factories)


class ClaimResult(_Frozen):
    """One claim of the answer and how well the context supports it."""

    text: str = Field(description="The claim as written in the answer.")
    span: Span = Field(description="[start, end) character offsets of the claim in the answer.")
    groundedness: float | None = Field(
        description="Share of the claim's unique words found in the context; null when the "
        "context was not checked."
    )
    verified: bool | None = Field(
        description="groundedness >= min_groundedness, or with the semantic tier semantic_score "
        ">= extensions.semantic.min_score; false when a strict option fails the claim; null when "
        "the context was not checked."
    )
    word_count: int = Field(description="Unique words in the claim.")
    missing_words: list[str] = Field(
        description="Normalized words of the claim that no context document contains."
    )
    best_document: int | None = Field(
        description="Index of the context document that supports the claim best (most words; "
        "first on ties); null when none shares a word."
    )
    best_document_groundedness: float | None = Field(
        description="The claim's groundedness against the best document alone."
    )
    cited_documents: list[int] = Field(
        default_factory=list,
        description="0-based indices of the documents that the claim's inline markers ([1], "
        "[Source 2], 【3】) cite; markers count sources from 1.",
    )
    cited_groundedness: float | None = Field(
        default=None, description="The claim's groundedness against its cited documents alone."
    )
    misattributed: bool | None = Field(
        default=None,
        description="True when the cited documents do not support the claim (below "
        "min_groundedness, or a marker beyond the documents given); null without markers.",
    )
    problems: list[str] = Field(
        default_factory=list,
        description="Why a strict option (strict_quotes, strict_statistics) fails this claim.",
    )
    tier: Literal["words", "semantic"] = Field(
        default="words",
        description="Which tier decided the claim: words (word overlap, the seed), or semantic "
        "(the semantic scorer's score decided: the claim failed on words, or "
        "extensions.semantic.scope is all). Only in the JSON when a semantic scorer is "
        "configured.",
    )
    semantic_score: float | None = Field(
        default=None,
        description="The semantic scorer's score in [0, 1] when the semantic tier scored the "
        "claim; null otherwise (no scorer, the claim passed on words and scope is failing, or "
        "the scorer failed).",
    )


class QuoteResult(_Frozen):
    """A quotation in the answer and where, if anywhere, the context contains it."""

    text: str = Field(description="The quoted text, without its quotation marks.")
    span: Span = Field(description="[start, end) of the quotation, marks included, in the answer.")
    normalized: str = Field(description="The text as compared: NFKC, casefolded, unified.")
    matched: bool | None = Field(
        description="Whether a context document contains the quote; null when not checked."
    )
    document: int | None = Field(description="Index of the first document that contains it.")
    document_span: Span | None = Field(
        description="[start, end) of the match in the original text of that document."
    )


class Citation(_Frozen):
    """A citation found in the answer (a quote, DOI, PubMed ID, URL, case, regulation, number)."""

    type: Literal["case_law", "academic", "url", "quote", "statistic", "regulatory"] = Field(
        description="The extract_patterns type that found it."
    )
    text: str = Field(description="The citation as written in the answer.")
    span: Span = Field(description="[start, end) of the citation in the answer.")
    kind: str = Field(
        default="",
        description="Finer kind: doi, pmid, pmcid, arxiv, url, case, short_case, id, supra, usc, "
        "cfr, federal_register, public_law, eu_act, percent, currency, amount, p_value, "
        "sample_size, ratio, quote.",
    )
    normalized: str = Field(description="Canonical form (lower-case DOI, quote text, ...).")
    verified: bool | None = Field(
        description="True or false when checked (context or lookup); null when nothing checked it."
    )
    status: str = Field(
        default="unchecked",
        description="verified, not_found, mismatch, lookup_failed, blocked, matched, "
        "supported, unsupported, in_context, format_valid, format_invalid, unchecked.",
    )
    reason: str = Field(description="Why it is or is not verified, for people.")


class LookupRecord(_Frozen):
    """One external lookup (Crossref, PubMed, URL) made for a citation."""

    service: str = Field(description="crossref, pubmed, url, ...")
    target: str = Field(description="What was looked up: a DOI, a PubMed ID, a URL.")
    ok: bool = Field(description="Whether the lookup confirmed the citation.")
    status_code: int | None = Field(default=None, description="HTTP status, when one came back.")
    elapsed_ms: float = Field(default=0.0, description="Wall time of the lookup.")
    cached: bool = Field(default=False, description="Served from the cache.")
    error: str | None = Field(default=None, description="Why it failed, for people.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="What the service said.")


class VerificationReport(_Frozen):
    """Summary added to the details of a verified answer (seed: ``verification_report``)."""

    summary: str = Field(description="One sentence for people.")
    claim_count: int
    passing_claim_count: int
    quote_count: int
    matched_quote_count: int
    citation_count: int
    context_document_count: int
    source_evidence: list[str] = Field(description="What counted as source evidence.")
    thresholds: dict[str, float] = Field(description="The thresholds that were applied.")


class VerificationDetails(_Frozen):
    """The seed's ``details``. Keys absent from the seed's shape are left unset (see to_dict)."""

    verified: bool
    groundedness: float | None = Field(
        default=None,
        description="Share of the answer's unique words found in the union of the context "
        "documents; null when the context was not checked.",
    )
    claim_confidence: float | None = Field(
        default=None, description="Passing claims / claims (1.0 with no claims)."
    )
    claims: list[ClaimResult] | None = None
    quotes: list[QuoteResult] | None = None
    citations: list[Citation] | None = None
    external_lookup: list[LookupRecord] | None = None
    verification_report: VerificationReport | None = None
    unverified_claims: list[ClaimResult] | None = None
    unverified_claim_count: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping with exactly the keys that the seed's details have."""
        return self.model_dump(mode="json", exclude_unset=True)


class VerificationResult(_Frozen):
    """What :meth:`citeverify_core.CitationVerifier.verify` decided, and why."""

    verdict: Literal["allow", "block"] = Field(description="allow or block (seed verdicts).")
    reason_code: Literal["citation.verified", "citation.unverified"]
    action: Literal["allow", "flag", "redact", "block"] = Field(
        description="What was done: allow (verified), or the policy's unverified_action."
    )
    answer: str = Field(description="The answer: unchanged, or redacted under redact.")
    original_answer: str = Field(
        default="", description="The answer as given; every span in details indexes this text."
    )
    details: VerificationDetails
    reasons: list[str] = Field(
        default_factory=list, description="Why the answer is unverified, one rule per line."
    )
    notes: list[str] = Field(
        default_factory=list, description="Remarks: ignored policy options and the like."
    )

    @property
    def verified(self) -> bool:
        """Whether the answer is verified."""
        return self.details.verified

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping; ``details`` has exactly the seed's keys."""
        return result_dict(self, self.details.to_dict())

    def __str__(self) -> str:
        # Imported here: _render imports this module for its types.
        from citeverify_core.engine.render import render_text  # noqa: PLC0415

        return render_text(self)

    def _repr_html_(self) -> str:
        """Jupyter: the answer with supported and unsupported claims highlighted."""
        from citeverify_core.engine.render import render_html  # noqa: PLC0415

        return render_html(self)
