"""The settings the engine reads: frozen dataclasses holding the one set of policy defaults.

A policy pack's ``policy.citation-verifier`` block, as the verifier uses it. Nothing here
validates: :mod:`citeverify_core.policy.loading` validates input (YAML, mappings, keyword options)
with pydantic and produces these objects, and this module imports nothing beyond the standard
library, so that the default policy costs no pydantic import (``citeverify check`` on a small
answer starts in a few tens of milliseconds).

The option names and their meanings are documented on the validating models of
:mod:`citeverify_core.policy.loading` and in docs/policy.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from citeverify_core.text import WordMatcher

__all__ = [
    "DEFAULT_EXTRACT_PATTERNS",
    "DEFAULT_MIN_CONTEXT_OVERLAP",
    "CitationType",
    "Extensions",
    "LookupSettings",
    "OutputAction",
    "PolicySettings",
    "RagContext",
    "ResponseOptions",
    "SemanticSettings",
    "UnverifiedAction",
]

CitationType = Literal["case_law", "academic", "url", "quote", "statistic", "regulatory"]
UnverifiedAction = Literal["flag", "redact", "block"]

#: The runtime default of ``extract_patterns``: all six types, ``regulatory`` included (the
#: policy-pack format's lint rejects ``regulatory`` when written, but the runtime uses it).
DEFAULT_EXTRACT_PATTERNS: tuple[CitationType, ...] = (
    "case_law",
    "academic",
    "url",
    "quote",
    "statistic",
    "regulatory",
)

#: ``rag_context.min_context_overlap`` when neither it nor ``min_groundedness`` is set.
DEFAULT_MIN_CONTEXT_OVERLAP = 0.7


@dataclass(frozen=True, slots=True)
class RagContext:
    """``rag_context``: how the answer is compared with the context documents.

    ``min_context_overlap`` is None when unset: :attr:`PolicySettings.effective_min_context_overlap`
    then applies the fallback rule.
    """

    verify_against_context: bool = True
    min_context_overlap: float | None = None


@dataclass(frozen=True, slots=True)
class OutputAction:
    """``output_action``: what happens to an unverified answer (flag, redact or block)."""

    unverified_action: UnverifiedAction = "flag"
    #: Accepted for compatibility with the policy-pack format; ignored.
    hallucination_action: Any = None


@dataclass(frozen=True, slots=True)
class ResponseOptions:
    """``response``: the shape of the result details.

    ``report_on_block``: the policy set ``include_verification_report: true`` explicitly, so that
    the gateway shows the report on a block too (by default a block withholds it).
    """

    include_verification_report: bool = True
    report_on_block: bool = False


@dataclass(frozen=True, slots=True)
class LookupSettings:
    """``extensions.lookups``: external lookups of DOIs, PubMed IDs, URLs and cases."""

    enabled: bool = True
    timeout: float = 5.0
    deadline: float = 15.0
    max_lookups: int = 50
    retries: int = 2
    crossref_base_url: str = "https://api.crossref.org"
    openalex_base_url: str = "https://api.openalex.org"
    semanticscholar_base_url: str = "https://api.semanticscholar.org"
    semanticscholar_api_key: str | None = field(default=None, repr=False)  # secret
    ncbi_base_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    courtlistener_base_url: str = "https://www.courtlistener.com"
    mailto: str | None = None
    user_agent: str = "citeverify/0.1"
    ncbi_api_key: str | None = field(default=None, repr=False)  # secret
    ncbi_tool: str = "citeverify"
    url_max_redirects: int = 5
    url_max_bytes: int = 65536
    max_response_bytes: int = 8_000_000
    url_allow_hosts: tuple[str, ...] = ()
    cache_ttl: float = 86400.0
    negative_cache_ttl: float = 3600.0
    cache_path: str | None = None
    case_law_resolver: bool = False
    courtlistener_token: str | None = field(default=None, repr=False)  # secret


@dataclass(frozen=True, slots=True)
class SemanticSettings:
    """``extensions.semantic``: the semantic tier, used when the verifier is given a scorer."""

    min_score: float = 0.8
    scope: Literal["failing", "all"] = "failing"
    max_claims: int = 32
    max_passages: int = 3
    max_passage_chars: int = 2000
    timeout: float = 30.0


@dataclass(frozen=True, slots=True)
class Extensions:
    """``extensions``: the options of citeverify beyond the policy-pack format."""

    redaction_marker: str = "[unverified claim removed]"
    strict_quotes: bool = False
    strict_statistics: bool = False
    strict_attribution: bool = False
    strict_retractions: bool = False
    words: Literal["exact", "stem"] = "exact"
    stopwords: Literal["count", "ignore"] = "count"
    numbers: Literal["words", "value"] = "words"
    citation_words: Literal["ignore", "count"] = "ignore"
    language: str = "english"
    lookups: LookupSettings = field(default_factory=LookupSettings)
    semantic: SemanticSettings = field(default_factory=SemanticSettings)

    def matcher(self) -> WordMatcher:
        """How claims' words are compared with the context under these options."""
        # Deferred: the word matcher's module (regular expressions, stop word lists) is needed by
        # the verifier only, not by every reader of a policy.
        from citeverify_core.text import WordMatcher  # noqa: PLC0415 - start-up time

        return WordMatcher.of(self)


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """The citation-verifier policy as the engine reads it (the defaults are the runtime's).

    Made by :func:`citeverify_core.policy.load_policy` (or ``PolicyConfig(...).settings``) from
    validated input; ``PolicySettings()`` is the default policy. Its
    ``rag_context.min_context_overlap`` is the value given, or ``min_groundedness`` when only
    that was given (the fallback rule is applied when the settings are made).
    """

    require_sources: bool = True
    require_source_match: bool = True
    min_confidence: float = 0.8
    min_groundedness: float = 0.8
    extract_patterns: tuple[CitationType, ...] = DEFAULT_EXTRACT_PATTERNS
    rag_context: RagContext = field(default_factory=RagContext)
    output_action: OutputAction = field(default_factory=OutputAction)
    response: ResponseOptions = field(default_factory=ResponseOptions)
    #: Accepted for compatibility with the policy-pack format; ignored.
    external_resolver: Any = None
    extensions: Extensions = field(default_factory=Extensions)

    @property
    def effective_min_context_overlap(self) -> float:
        """``rag_context.min_context_overlap``, or its default when unset."""
        overlap = self.rag_context.min_context_overlap
        return DEFAULT_MIN_CONTEXT_OVERLAP if overlap is None else overlap

    @property
    def ignored_options(self) -> list[str]:
        """Options that were given but that the runtime ignores."""
        ignored = []
        if self.external_resolver is not None:
            ignored.append("external_resolver")
        if self.output_action.hallucination_action is not None:
            ignored.append("output_action.hallucination_action")
        return ignored

    def notes(self) -> list[str]:
        """Human-readable notes about this policy (ignored options)."""
        return [f"{name} is accepted but ignored at runtime" for name in self.ignored_options]
