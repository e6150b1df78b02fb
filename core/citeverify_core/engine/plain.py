"""The default policy and the result objects without pydantic: the CLI's fast path (issue 14).

``citeverify check`` on a tiny input must start in about 150 ms. Importing pydantic costs about
75 ms and building the first model another 50 ms on these machines, more than everything else the
command does, so :func:`verify_default` verifies with pydantic-free twins:

- :class:`PlainPolicy`, the default ``PolicyConfig`` (with ``check``'s ``--action`` and
  ``--no-lookups``) as plain attributes;
- :data:`PLAIN_KINDS`, classes with the attributes of ``ClaimResult``, ``QuoteResult``,
  ``Citation``, ``VerificationReport``, ``VerificationDetails`` and ``VerificationResult``, which
  the verifier builds through :func:`trusted` exactly as it builds the models.

The twins are for reading (the text report, the verdict, ``to_dict()`` for ``--json``); they do
not validate, and have no other pydantic method. An answer that needs more (a lookup) is
verified again with the models. tests/engine/test_plain.py keeps
every default and field of the twins equal to the models' and the reports identical.

This module imports nothing heavy, and neither does the verifier until it needs the models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, TypeVar, cast

if TYPE_CHECKING:
    from citeverify_core.engine.results import (
        Citation,
        ClaimResult,
        QuoteResult,
        VerificationDetails,
        VerificationReport,
        VerificationResult,
    )
    from citeverify_core.policy.config import PolicyConfig
    from citeverify_core.text import WordMatcher

__all__ = [
    "DEFAULT_EXTRACT_PATTERNS",
    "DEFAULT_MIN_CONTEXT_OVERLAP",
    "PLAIN_KINDS",
    "CitationType",
    "Kinds",
    "PlainPolicy",
    "model_kinds",
    "trusted",
    "verify_default",
]

CitationType = Literal["case_law", "academic", "url", "quote", "statistic", "regulatory"]

#: The seed's runtime default: all six types, ``regulatory`` included (seed: "Fields").
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


# --- building result objects --------------------------------------------------------------------

#: Per class: every field with its default (in field order), and the fields whose default is made
#: by a factory (a fresh list for each object).
Plan = tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]
_PLANS: dict[type, Plan] = {}
_set_attribute = object.__setattr__
_T = TypeVar("_T")


def trusted(cls: type[_T], values: dict[str, Any]) -> _T:
    """``cls(**values)`` without validation, for values that already have the fields' types.

    ``cls`` is a result model or its plain twin (both have the model's four slots and a
    ``_field_plan()``). For the result objects the verifier builds from its own values (issue 14:
    validating some 27 objects per answer was 5% of a small verification). The object is the one
    validation gives: the same fields in the same order, the defaults of the fields not given (a
    fresh list for a list), and the same set fields, which ``to_dict`` reads (``exclude_unset``).
    Every field without a default must be in ``values``, and nothing else;
    tests/engine/test_speed_equivalence.py checks the results against validation.
    """
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = cast("Any", cls)._field_plan()
    state = {**plan[0], **values}
    for name, factory in plan[1]:
        if name not in values:
            state[name] = factory()
    obj = cls.__new__(cls)
    _set_attribute(obj, "__dict__", state)
    _set_attribute(obj, "__pydantic_fields_set__", set(values))
    _set_attribute(obj, "__pydantic_extra__", None)
    _set_attribute(obj, "__pydantic_private__", None)
    return obj


class _Record:
    """A result object's values as plain attributes (the twin of a ``_result`` model)."""

    # The slots of a pydantic model: :func:`trusted` fills both kinds alike.
    __slots__ = (
        "__dict__",
        "__pydantic_extra__",
        "__pydantic_fields_set__",
        "__pydantic_private__",
    )
    #: The model's fields in order, with their defaults (``_REQUIRED``: none) or default factories.
    _FIELDS: ClassVar[dict[str, Any]] = {}
    __pydantic_fields_set__: set[str]

    @classmethod
    def _field_plan(cls) -> Plan:
        template = {n: None if d is _REQUIRED or d is list else d for n, d in cls._FIELDS.items()}
        factories = tuple((n, d) for n, d in cls._FIELDS.items() if d is list)
        return template, factories

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A copy with ``update`` applied, its keys marked as set (as pydantic's model_copy)."""
        update = update or {}
        obj = type(self).__new__(type(self))
        _set_attribute(obj, "__dict__", {**self.__dict__, **update})
        _set_attribute(obj, "__pydantic_fields_set__", self.__pydantic_fields_set__ | set(update))
        _set_attribute(obj, "__pydantic_extra__", None)
        _set_attribute(obj, "__pydantic_private__", None)
        return obj

    @property
    def model_fields_set(self) -> set[str]:
        return self.__pydantic_fields_set__

    def __setattr__(self, name: str, value: Any) -> None:
        msg = f"{type(self).__name__} is frozen, as its model is: use model_copy(update=...)"
        raise AttributeError(msg)

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({values})"


_REQUIRED: Any = object()


class PlainClaimResult(_Record):
    __slots__ = ()
    _FIELDS: ClassVar[dict[str, Any]] = {
        "text": _REQUIRED,
        "span": _REQUIRED,
        "groundedness": _REQUIRED,
        "verified": _REQUIRED,
        "word_count": _REQUIRED,
        "missing_words": _REQUIRED,
        "best_document": _REQUIRED,
        "best_document_groundedness": _REQUIRED,
        "cited_documents": list,
        "cited_groundedness": None,
        "misattributed": None,
        "problems": list,
        "tier": "words",
        "semantic_score": None,
    }


class PlainQuoteResult(_Record):
    __slots__ = ()
    _FIELDS: ClassVar[dict[str, Any]] = dict.fromkeys(
        ("text", "span", "normalized", "matched", "document", "document_span"), _REQUIRED
    )


class PlainCitation(_Record):
    __slots__ = ()
    _FIELDS: ClassVar[dict[str, Any]] = {
        "type": _REQUIRED,
        "text": _REQUIRED,
        "span": _REQUIRED,
        "kind": "",
        "normalized": _REQUIRED,
        "verified": _REQUIRED,
        "status": "unchecked",
        "reason": _REQUIRED,
    }


class PlainVerificationReport(_Record):
    __slots__ = ()
    _FIELDS: ClassVar[dict[str, Any]] = dict.fromkeys(
        (
            "summary",
            "claim_count",
            "passing_claim_count",
            "quote_count",
            "matched_quote_count",
            "citation_count",
            "context_document_count",
            "source_evidence",
            "thresholds",
        ),
        _REQUIRED,
    )


class PlainVerificationDetails(_Record):
    __slots__ = ()
    verified: bool
    _FIELDS: ClassVar[dict[str, Any]] = {
        "verified": _REQUIRED,
        **dict.fromkeys(
            (
                "groundedness",
                "claim_confidence",
                "claims",
                "quotes",
                "citations",
                "external_lookup",
                "verification_report",
                "unverified_claims",
                "unverified_claim_count",
            )
        ),
    }


class PlainVerificationResult(_Record):
    __slots__ = ()
    verdict: str
    reason_code: str
    action: str
    answer: str
    original_answer: str
    details: PlainVerificationDetails
    reasons: list[str]
    notes: list[str]
    _FIELDS: ClassVar[dict[str, Any]] = {
        "verdict": _REQUIRED,
        "reason_code": _REQUIRED,
        "action": _REQUIRED,
        "answer": _REQUIRED,
        "original_answer": "",
        "details": _REQUIRED,
        "reasons": list,
        "notes": list,
    }

    @property
    def verified(self) -> bool:
        """Whether the answer is verified."""
        return bool(self.details.verified)

    def to_dict(self) -> dict[str, Any]:
        """``VerificationResult.to_dict()``: the same mapping (``details`` with its set keys)."""
        return result_dict(self, _dump(self.details))

    def __str__(self) -> str:
        from citeverify_core.engine.render import render_text  # noqa: PLC0415

        return render_text(cast("VerificationResult", self))


def result_dict(result: Any, details: dict[str, Any]) -> dict[str, Any]:
    """The JSON-ready mapping of a result (the model or its twin) around its ``details``."""
    return {
        "verdict": result.verdict,
        "reason_code": result.reason_code,
        "action": result.action,
        "answer": result.answer,
        "original_answer": result.original_answer,
        "details": details,
        "reasons": list(result.reasons),
        "notes": list(result.notes),
    }


def _dump(value: Any) -> Any:
    """``model_dump(mode="json", exclude_unset=True)`` of a twin: set fields, tuples as lists."""
    if isinstance(value, _Record):
        fields = value.__pydantic_fields_set__
        return {k: _dump(v) for k, v in value.__dict__.items() if k in fields}
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


class Kinds(NamedTuple):
    """The classes a verifier builds its results from: the models, or their plain twins."""

    claim: type[ClaimResult]
    quote: type[QuoteResult]
    citation: type[Citation]
    report: type[VerificationReport]
    details: type[VerificationDetails]
    result: type[VerificationResult]


# Typed as the models on purpose: the twins have every attribute the verifier and the text report
# read, and only verify_default() uses them (its results are read, never validated or dumped).
PLAIN_KINDS = Kinds(
    *cast(
        "tuple[Any, ...]",
        (
            PlainClaimResult,
            PlainQuoteResult,
            PlainCitation,
            PlainVerificationReport,
            PlainVerificationDetails,
            PlainVerificationResult,
        ),
    )
)

_MODEL_KINDS: list[Kinds] = []


def model_kinds() -> Kinds:
    """The result models (imports pydantic on the first call)."""
    if not _MODEL_KINDS:
        import citeverify_core.engine.results as r  # noqa: PLC0415

        _MODEL_KINDS.append(
            Kinds(
                r.ClaimResult,
                r.QuoteResult,
                r.Citation,
                r.VerificationReport,
                r.VerificationDetails,
                r.VerificationResult,
            )
        )
    return _MODEL_KINDS[0]


# --- the default policy -------------------------------------------------------------------------


class _Settings:
    """Plain attributes with defaults (class attributes) and overrides (instance attributes)."""

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():
            if not hasattr(type(self), name):
                msg = f"{type(self).__name__} has no option {name!r}"
                raise AttributeError(msg)
            setattr(self, name, value)


class PlainRagContext(_Settings):
    verify_against_context = True
    min_context_overlap: float | None = None


class PlainOutputAction(_Settings):
    unverified_action: Literal["flag", "redact", "block"] = "flag"
    hallucination_action: Any = None


class PlainResponseOptions(_Settings):
    include_verification_report = True


class PlainLookupSettings(_Settings):
    enabled = True
    timeout = 5.0
    deadline = 15.0
    max_lookups = 50
    retries = 2
    crossref_base_url = "https://api.crossref.org"
    openalex_base_url = "https://api.openalex.org"
    semanticscholar_base_url = "https://api.semanticscholar.org"
    semanticscholar_api_key: str | None = None
    ncbi_base_url = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    courtlistener_base_url = "https://www.courtlistener.com"
    mailto: str | None = None
    user_agent = "citeverify/0.1"
    ncbi_api_key: str | None = None
    ncbi_tool = "citeverify"
    url_max_redirects = 5
    url_max_bytes = 65536
    max_response_bytes = 8_000_000
    url_allow_hosts: tuple[str, ...] = ()
    cache_ttl = 86400.0
    negative_cache_ttl = 3600.0
    cache_path: str | None = None
    case_law_resolver = False
    courtlistener_token: str | None = None


class PlainSemanticSettings(_Settings):
    min_score = 0.8
    scope: Literal["failing", "all"] = "failing"
    max_claims = 32
    max_passages = 3
    max_passage_chars = 2000
    timeout = 30.0


class PlainExtensions(_Settings):
    redaction_marker = "[unverified claim removed]"
    strict_quotes = False
    strict_statistics = False
    words: Literal["exact", "stem"] = "exact"
    stopwords: Literal["count", "ignore"] = "count"
    numbers: Literal["words", "value"] = "words"
    language = "english"

    def __init__(self, **values: Any) -> None:
        self.lookups = PlainLookupSettings()
        self.semantic = PlainSemanticSettings()
        super().__init__(**values)

    def matcher(self) -> WordMatcher:
        """How claims' words are compared with the context (as ``Extensions.matcher``)."""
        from citeverify_core.text import WordMatcher  # noqa: PLC0415

        return WordMatcher.of(self)


class PlainPolicy(_Settings):
    """``PolicyConfig()`` as plain attributes, with ``check``'s two overrides.

    Only the defaults: every option that a policy file can set needs ``PolicyConfig``'s
    validation. ``effective_min_context_overlap`` and ``notes()`` are those of a policy where
    neither ``min_groundedness`` nor an ignored option was given.
    """

    require_sources = True
    require_source_match = True
    min_confidence = 0.8
    min_groundedness = 0.8
    extract_patterns = DEFAULT_EXTRACT_PATTERNS
    external_resolver: Any = None

    def __init__(
        self,
        unverified_action: Literal["flag", "redact", "block"] = "flag",
        *,
        lookups: bool = True,
    ) -> None:
        self.rag_context = PlainRagContext()
        self.output_action = PlainOutputAction(unverified_action=unverified_action)
        self.response = PlainResponseOptions()
        self.extensions = PlainExtensions()
        self.extensions.lookups.enabled = lookups

    @property
    def effective_min_context_overlap(self) -> float:
        """The default context overlap (neither threshold is set by default)."""
        return DEFAULT_MIN_CONTEXT_OVERLAP

    def notes(self) -> list[str]:
        """No ignored options: the default policy sets none."""
        return []


def verify_default(
    answer: str,
    documents: list[Any],
    *,
    action: str | None = None,
    lookups: bool = True,
    plain: bool = True,
) -> VerificationResult:
    """Verify ``answer`` under the default policy, as ``citeverify check`` without ``--policy``.

    ``action`` overrides ``output_action.unverified_action``; ``lookups=False`` turns external
    lookups off. With ``plain``, the result may be a pydantic-free twin of
    :class:`VerificationResult` with the same attributes, ``verified``, ``to_dict()`` and
    ``str()``; ``plain=False`` always returns the model.

    Raises:
        InputError, PolicyError: as :meth:`CitationVerifier.verify` and ``PolicyConfig`` do.
    """
    from citeverify_core.engine.verifier import CitationVerifier  # noqa: PLC0415

    if plain and action in (None, "flag", "redact", "block"):
        chosen = cast("Literal['flag', 'redact', 'block']", action or "flag")
        verifier = CitationVerifier(cast("PolicyConfig", PlainPolicy(chosen, lookups=lookups)))
        analysis = verifier._analyze(answer, documents)
        if not any(analysis.targets):  # nothing to look up: the twins decide
            return verifier._decide(analysis, [])
    # A lookup, or an action to validate: the models (and PolicyConfig's error messages).
    from citeverify_core.policy.config import PolicyConfig, with_check_options  # noqa: PLC0415

    config = with_check_options(PolicyConfig(), action=action, lookups=lookups)
    return CitationVerifier(config).verify(answer, documents)
