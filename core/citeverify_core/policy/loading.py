"""The one way in: a policy from a mapping, YAML text, a policy pack file or a bundled pack's name.

Input is validated here, with pydantic, once: :class:`PolicyConfig` and its sections are the
validating models (unknown keys are errors naming their key path); :meth:`PolicyConfig.to_settings`
gives the frozen ``PolicySettings`` the engine reads, whose defaults the models read (one set).
A policy pack (``pack``, ``policies.chain``, ``policy.citation-verifier``) loads unchanged; the
options the format lacks live under ``extensions`` (design: "Policy files").
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from citeverify_core.errors import PolicyError
from citeverify_core.policy import settings as s
from citeverify_core.policy.credentials import CREDENTIALS
from citeverify_core.policy.settings import (
    DEFAULT_MIN_CONTEXT_OVERLAP,
    CitationType,
    PolicySettings,
    UnverifiedAction,
)
from citeverify_core.text import STEM_LANGUAGES, STOPWORDS, WordMatcher

__all__ = [
    "BUNDLED_POLICIES",
    "MAX_POLICY_BYTES",
    "MAX_POLICY_DEPTH",
    "MAX_POLICY_NODES",
    "PACK_PREFIX",
    "Extensions",
    "LookupSettings",
    "OutputAction",
    "PolicyConfig",
    "RagContext",
    "ResponseOptions",
    "SemanticSettings",
    "bundled_policy_path",
    "load_policy",
    "load_policy_pack",
    "option_keyword",
    "option_path",
    "pack_policy",
    "parse_policy_pack",
    "parse_policy_yaml",
    "read_policy_pack",
    "safe_yaml",
]

#: Where the citation-verifier block lives in a policy pack.
PACK_PREFIX = "policy.citation-verifier"

# The defaults of every model's fields: the settings' own (one set of defaults).
_POLICY = PolicySettings()
_RAG, _OUT, _RESPONSE = _POLICY.rag_context, _POLICY.output_action, _POLICY.response
_EXT = _POLICY.extensions
_LOOKUPS, _SEMANTIC = _EXT.lookups, _EXT.semantic


class _Strict(BaseModel):
    # Unknown keys are errors (design: "Unknown keys are an error that names the key path").
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    #: The settings class this model validates input for (same field names).
    _settings_cls: ClassVar[type[Any]]

    def to_settings(self) -> Any:
        """The frozen settings dataclass with this model's values (nested models converted)."""
        values = {}
        for name in self._settings_cls.__dataclass_fields__:
            value = getattr(self, name)
            values[name] = value.to_settings() if isinstance(value, _Strict) else value
        return self._settings_cls(**values)


class RagContext(_Strict):
    """``rag_context``: how the answer is compared with the context documents."""

    _settings_cls: ClassVar[type[Any]] = s.RagContext

    verify_against_context: bool = Field(
        default=_RAG.verify_against_context,
        description="Compare the answer with the context documents of the request.",
    )
    min_context_overlap: float | None = Field(
        default=_RAG.min_context_overlap,
        ge=0.0,
        le=1.0,
        description=(
            "Minimum word overlap of the whole answer with the context. When unset it takes "
            "min_groundedness if the policy sets that, and 0.7 otherwise."
        ),
    )


class OutputAction(_Strict):
    """``output_action``: what happens to an unverified answer."""

    _settings_cls: ClassVar[type[Any]] = s.OutputAction

    unverified_action: UnverifiedAction = Field(
        default=_OUT.unverified_action,
        description=(
            "flag: allow with citation.unverified; redact: allow, with unverified claims "
            "replaced by a marker (the reference gateway leaves the answer unchanged); "
            "block: block."
        ),
    )
    hallucination_action: Any = Field(
        default=_OUT.hallucination_action,
        description="Accepted for compatibility with the policy-pack format; ignored.",
    )


class ResponseOptions(_Strict):
    """``response``: the shape of the result details."""

    _settings_cls: ClassVar[type[Any]] = s.ResponseOptions

    include_verification_report: bool = Field(
        default=_RESPONSE.include_verification_report,
        description="With false, the details contain only verified and groundedness.",
    )

    def to_settings(self) -> s.ResponseOptions:
        """The settings; ``report_on_block`` when the report was asked for explicitly."""
        asked = "include_verification_report" in self.model_fields_set
        return s.ResponseOptions(
            include_verification_report=self.include_verification_report,
            report_on_block=asked and self.include_verification_report,
        )


class LookupSettings(_Strict):
    """``extensions.lookups``: external lookups of DOIs, PubMed IDs, URLs and cases."""

    _settings_cls: ClassVar[type[Any]] = s.LookupSettings

    enabled: bool = Field(
        default=_LOOKUPS.enabled,
        description="Look citations up (academic and url in extract_patterns also need to be on).",
    )
    timeout: float = Field(
        default=_LOOKUPS.timeout, gt=0, le=120, description="Seconds per call, retries included."
    )
    deadline: float = Field(
        default=_LOOKUPS.deadline,
        gt=0,
        le=600,
        description="Seconds for all the lookups of one answer.",
    )
    max_lookups: int = Field(
        default=_LOOKUPS.max_lookups, ge=0, le=1000, description="Lookups per answer at most."
    )
    retries: int = Field(
        default=_LOOKUPS.retries, ge=0, le=10, description="Retries on 429 and 503."
    )
    crossref_base_url: str = Field(default=_LOOKUPS.crossref_base_url)
    openalex_base_url: str = Field(default=_LOOKUPS.openalex_base_url)
    semanticscholar_base_url: str = Field(default=_LOOKUPS.semanticscholar_base_url)
    semanticscholar_api_key: str | None = Field(
        default=_LOOKUPS.semanticscholar_api_key, description="Optional S2 API key.", repr=False
    )
    ncbi_base_url: str = Field(default=_LOOKUPS.ncbi_base_url)
    courtlistener_base_url: str = Field(default=_LOOKUPS.courtlistener_base_url)
    mailto: str | None = Field(
        default=_LOOKUPS.mailto,
        description="Contact address for Crossref's polite pool and NCBI's email.",
    )
    user_agent: str = Field(default=_LOOKUPS.user_agent, min_length=1)
    ncbi_api_key: str | None = Field(
        default=_LOOKUPS.ncbi_api_key, description="Raises NCBI's limit to 10/s.", repr=False
    )
    ncbi_tool: str = Field(default=_LOOKUPS.ncbi_tool, min_length=1)
    url_max_redirects: int = Field(default=_LOOKUPS.url_max_redirects, ge=0, le=20)
    url_max_bytes: int = Field(
        default=_LOOKUPS.url_max_bytes,
        ge=0,
        le=10_000_000,
        description="Bytes of a page read at most (decompressed) when a URL check GETs it for its "
        "title; the rest is not downloaded.",
    )
    max_response_bytes: int = Field(
        default=_LOOKUPS.max_response_bytes,
        ge=1024,
        le=200_000_000,
        description="Bytes read at most (decompressed) of an API's answer (Crossref, E-utilities, "
        "OpenAlex, Semantic Scholar, CourtListener); a larger answer is a failed lookup.",
    )
    url_allow_hosts: tuple[str, ...] = Field(
        default=_LOOKUPS.url_allow_hosts,
        strict=False,
        description="Hosts, IP addresses or networks (CIDR) that URL checks may reach even though "
        "they are loopback or private (tests, intranets).",
    )
    cache_ttl: float = Field(
        default=_LOOKUPS.cache_ttl, ge=0, description="Seconds a positive result is kept."
    )
    negative_cache_ttl: float = Field(
        default=_LOOKUPS.negative_cache_ttl, ge=0, description="Seconds a not-found result is kept."
    )
    cache_path: str | None = Field(
        default=_LOOKUPS.cache_path, description="SQLite file that keeps results across processes."
    )
    case_law_resolver: bool = Field(
        default=_LOOKUPS.case_law_resolver,
        description="Resolve case citations with CourtListener's citation lookup API (opt-in).",
    )
    courtlistener_token: str | None = Field(
        default=_LOOKUPS.courtlistener_token,
        description="CourtListener API token; else COURTLISTENER_TOKEN is read.",
        repr=False,
    )


class SemanticSettings(_Strict):
    """``extensions.semantic``: the semantic tier, used when a scorer is given.

    The tier is off unless ``CitationVerifier(..., semantic=scorer)`` receives a scorer: a policy
    file cannot name code. These options bound what the scorer is given and how its score is read.
    """

    _settings_cls: ClassVar[type[Any]] = s.SemanticSettings

    min_score: float = Field(
        default=_SEMANTIC.min_score,
        ge=0.0,
        le=1.0,
        description="A claim that fails on words passes when the scorer gives it this or more "
        "(for embeddings: the cosine similarity to its best passage; for an NLI scorer: the "
        "entailment probability). Model-dependent: choose it on labelled data of your own.",
    )
    scope: Literal["failing", "all"] = Field(
        default=_SEMANTIC.scope,
        description="failing: only claims that fail on words are scored, and the tier can only "
        "pass them; all: every claim is scored and the score decides it either way, so that an "
        "NLI scorer can fail a claim that keeps the source's words but flips its meaning "
        "(a negation, an antonym). max_claims still bounds the calls.",
    )
    max_claims: int = Field(
        default=_SEMANTIC.max_claims,
        ge=1,
        le=1000,
        description="Claims of one answer sent to the scorer at most (in answer order); the "
        "others keep their word verdict and the notes say so.",
    )
    max_passages: int = Field(
        default=_SEMANTIC.max_passages,
        ge=1,
        le=20,
        description="Passages (the best-matching document, or its best-matching sentences when "
        "it is longer than max_passage_chars) given with each claim.",
    )
    max_passage_chars: int = Field(
        default=_SEMANTIC.max_passage_chars,
        ge=100,
        le=20_000,
        description="Longest passage, in characters (longer sentences are cut); a claim longer "
        "than this is not sent (a part of a claim cannot vouch for all of it).",
    )
    timeout: float = Field(
        default=_SEMANTIC.timeout,
        gt=0,
        le=600,
        description="Seconds for all the scorer calls of one answer; past it, the claims keep "
        "their word verdict.",
    )


class Extensions(_Strict):
    """Options of citeverify beyond the policy-pack format (``extensions``)."""

    _settings_cls: ClassVar[type[Any]] = s.Extensions

    redaction_marker: str = Field(
        default=_EXT.redaction_marker,
        min_length=1,
        max_length=200,  # each removed claim becomes this: a long one would amplify the answer
        description="Text that replaces each unverified claim under unverified_action: redact.",
    )
    strict_quotes: bool = Field(
        default=_EXT.strict_quotes, description="A quote not found in the context fails the answer."
    )
    strict_statistics: bool = Field(
        default=_EXT.strict_statistics,
        description="A number not found in the context fails the answer.",
    )
    strict_attribution: bool = Field(
        default=_EXT.strict_attribution,
        description="A misattributed claim fails the answer: its inline markers ([2], "
        "[Source 2]) cite documents that do not support it (or that were not given) while the "
        "context does. Off: such a claim is reported (misattributed) and does not fail.",
    )
    strict_retractions: bool = Field(
        default=_EXT.strict_retractions,
        description="A citation looked up and found retracted (a retraction notice at "
        "Crossref, or in the local index) fails the answer. Off: it is reported in the notes "
        "and the lookup's metadata, and does not fail.",
    )
    words: Literal["exact", "stem"] = Field(
        default=_EXT.words,
        description="exact: compare words as written (the default); stem: compare their Snowball "
        "stems in `language`, so that 'opens', 'opened' and 'open' match (PyStemmer).",
    )
    stopwords: Literal["count", "ignore"] = Field(
        default=_EXT.stopwords,
        description="count: every word counts (the default); ignore: the function words of "
        "`language` (articles, auxiliaries, prepositions, conjunctions, third-person pronouns; "
        "never negations) count neither for nor against a claim.",
    )
    numbers: Literal["words", "value"] = Field(
        default=_EXT.numbers,
        description="words: the digits of a number are words (the default: '4,000' is '4' and "
        "'000'); value: a written number is one word compared by value ('4,000' = '4000' = "
        "'four thousand', '4.5' is not '4'), and with strict_statistics a claim whose number "
        "is not in the context fails.",
    )
    citation_words: Literal["ignore", "count"] = Field(
        default=_EXT.citation_words,
        description="ignore: citation markers in the answer are not answer words (the default): "
        "author-year references '(Smith et al., 2020)', source notes '(Source: hours.md)', "
        "bracketed document names '[hours.md]', and the DOIs, PubMed IDs and URLs extracted as "
        "citations (which keep their own checks); count: their words count like any other, "
        "the gateway control's arithmetic. Inline source markers ([1], [Source 2]) never count.",
    )
    language: str = Field(
        default=_EXT.language,
        description="Language of the stemmer and the stop words (Snowball names: english, "
        "german, french, spanish, ...; stop words for english, german, french and spanish).",
    )
    lookups: LookupSettings = Field(default_factory=LookupSettings)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)

    @field_validator("language")
    @classmethod
    def _known_language(cls, value: str) -> str:
        if value not in STEM_LANGUAGES:
            msg = f"unknown language {value!r} (one of: {', '.join(STEM_LANGUAGES)})"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _check_language(self) -> Self:
        if self.stopwords == "ignore" and self.language not in STOPWORDS:
            msg = (
                f"stopwords: ignore has no stop word list for {self.language!r} "
                f"(one of: {', '.join(STOPWORDS)})"
            )
            raise ValueError(msg)
        return self

    def matcher(self) -> WordMatcher:
        """How claims' words are compared with the context under these options."""
        return WordMatcher.of(self)


class PolicyConfig(_Strict):
    """The ``policy.citation-verifier`` block of a policy pack: the format's names and defaults.

    Build one from keyword arguments, from the inner mapping with
    ``PolicyConfig.model_validate({...})``, or from a whole policy pack with
    ``PolicyConfig.from_yaml(path)``. Invalid input raises :class:`~citeverify_core.PolicyError`
    whose message names the key path.
    """

    require_sources: bool = Field(
        default=_POLICY.require_sources, description="The answer must contain source evidence."
    )
    require_source_match: bool = Field(
        default=_POLICY.require_source_match,
        description=(
            "With require_sources, a citation alone is not enough: a quote must match the "
            "context, the overlap must reach min_context_overlap, or an external lookup must "
            "succeed."
        ),
    )
    min_confidence: float = Field(
        default=_POLICY.min_confidence,
        ge=0.0,
        le=1.0,
        description="Minimum share of claims that pass.",
    )
    min_groundedness: float = Field(
        default=_POLICY.min_groundedness,
        ge=0.0,
        le=1.0,
        description="Minimum word overlap of one claim; fallback for min_context_overlap.",
    )
    extract_patterns: tuple[CitationType, ...] = Field(
        default=_POLICY.extract_patterns,
        strict=False,  # YAML gives a list
        description="Citation types to find.",
    )
    rag_context: RagContext = Field(default_factory=RagContext)
    output_action: OutputAction = Field(default_factory=OutputAction)
    response: ResponseOptions = Field(default_factory=ResponseOptions)
    external_resolver: Any = Field(
        default=_POLICY.external_resolver,
        description="Accepted for compatibility with the policy-pack format; ignored.",
    )
    extensions: Extensions = Field(default_factory=Extensions)

    _settings_cls: ClassVar[type[Any]] = PolicySettings

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _policy_error(exc, "") from None

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        context: Any | None = None,
        **kwargs: Any,
    ) -> Self:
        """Validate the inner ``policy.citation-verifier`` mapping.

        Raises:
            PolicyError: naming the key path of each problem.
        """
        return cls._from_mapping(obj, prefix="", strict=strict, context=context, **kwargs)

    @classmethod
    def _from_mapping(cls, obj: Any, *, prefix: str, **kwargs: Any) -> Self:
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, dict):
            where = prefix or "policy"
            msg = f"{where}: expected a mapping of options, got {type(obj).__name__}"
            raise PolicyError(msg, path=prefix)
        bad_key = _non_string_key(obj, prefix)
        if bad_key is not None:
            raise PolicyError(f"{bad_key}: keys must be strings", path=bad_key)
        try:
            # Goes through __init__, which turns a ValidationError into a PolicyError.
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:  # raised before __init__ (e.g. converting the input)
            raise _policy_error(exc, prefix) from None
        except PolicyError as exc:
            if not prefix:
                raise
            if isinstance(exc.__context__, ValidationError):  # __init__'s, suppressed: again,
                raise _policy_error(exc.__context__, prefix) from None  # as a file's problems
            problems = [(f"{prefix}.{p}" if p else prefix, m) for p, m in exc.problems]
            raise _make_policy_error(problems) from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> PolicyConfig:
        """Read a whole policy pack (``pack``, ``policies``, ``policy``) from a YAML file.

        Raises:
            PolicyError: the file is missing, is not YAML, or holds an invalid policy.
        """
        policy, _notes = load_policy_pack(path)
        return policy

    def to_settings(self) -> PolicySettings:
        """The frozen settings the engine reads, with the fallback rule of the overlap applied."""
        settings: PolicySettings = super().to_settings()
        overlap = self.effective_min_context_overlap
        if overlap != settings.effective_min_context_overlap:
            rag = s.RagContext(self.rag_context.verify_against_context, overlap)
            settings = replace(settings, rag_context=rag)
        return settings

    @property
    def effective_min_context_overlap(self) -> float:
        """``rag_context.min_context_overlap``, else ``min_groundedness`` when given, else 0.7."""
        if self.rag_context.min_context_overlap is not None:
            return self.rag_context.min_context_overlap
        if "min_groundedness" in self.model_fields_set:
            return self.min_groundedness
        return DEFAULT_MIN_CONTEXT_OVERLAP

    @property
    def ignored_options(self) -> list[str]:
        """Options that were given but that the runtime ignores."""
        return self.to_settings().ignored_options

    def notes(self) -> list[str]:
        """Human-readable notes about this policy (ignored options)."""
        return self.to_settings().notes()


def _non_string_key(obj: Any, prefix: str, depth: int = 0) -> str | None:
    """The path of the first key that is not a string, in nested mappings (bounded depth)."""
    if not isinstance(obj, dict) or depth > MAX_POLICY_DEPTH:
        return None
    for key, value in obj.items():
        if not isinstance(key, str):
            return f"{prefix}.{_brief(key)}" if prefix else _brief(key)
        found = _non_string_key(value, f"{prefix}.{key}" if prefix else key, depth + 1)
        if found is not None:
            return found
    return None


def _brief(value: Any, path: str = "") -> str:
    """``repr(value)`` cut to 60 characters; a credential's value (at ``path``) never.

    An error message is printed and logged: the value of an option at a credential's path, or
    of the ``lookups`` section that holds them, is written ``'...'``. Never raises: an int of
    5,000 digits cannot be printed.
    """
    name = path.rpartition(".")[2]
    if name in CREDENTIALS or name == "lookups":
        return "'...'"
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__} too large to print>"
    return text if len(text) <= 60 else text[:57] + "..."


def _policy_error(exc: ValidationError, prefix: str) -> PolicyError:
    problems: list[tuple[str, str]] = []
    for err in exc.errors(include_url=False):
        loc = [prefix] if prefix else []
        for part in err["loc"]:
            if isinstance(part, int) and loc:
                loc[-1] = f"{loc[-1]}[{part}]"
            else:
                loc.append(str(part))
        path = ".".join(loc)
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            parts = [str(part) for part in err["loc"]]
            message = _unknown_key(parts, err.get("input"), in_file=bool(prefix))
        elif "input" in err and not isinstance(err["input"], dict | list):
            message = f"{message} (got {_brief(err['input'], path)})"
        problems.append((path, message))
    return _make_policy_error(problems)


@functools.cache
def _option_paths() -> tuple[str, ...]:
    """The dotted path of every option of the inner policy mapping, sections included."""
    paths: list[str] = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            paths.append(prefix + name)
            if isinstance(field.annotation, type) and issubclass(field.annotation, _Strict):
                walk(field.annotation, f"{prefix}{name}.")

    walk(PolicyConfig, "")
    return tuple(paths)


#: Keyword options that are not top-level fields but common enough to deserve one, by their path.
_SHORTCUTS = {
    "unverified_action": "output_action.unverified_action",
    # The credentials: CitationVerifier(ncbi_api_key=...) and every adapter's keyword.
    "ncbi_api_key": "extensions.lookups.ncbi_api_key",
    "semanticscholar_api_key": "extensions.lookups.semanticscholar_api_key",
    "courtlistener_token": "extensions.lookups.courtlistener_token",
}


def option_path(key: str) -> str:
    """The dotted path of the option that the keyword option ``key`` sets (``merge_policy``).

    ``unverified_action`` is ``output_action.unverified_action``, an extension option
    (``strict_quotes``) is under ``extensions``; a top-level field or a dotted path is itself.
    """
    path = _SHORTCUTS.get(key, key)
    top_level = "." in path or path in PolicyConfig.model_fields
    if not top_level and path in Extensions.model_fields:  # strict_quotes=True and such
        path = f"extensions.{path}"
    return path


def option_keyword(path: str) -> str | None:
    """The keyword option that sets the option at the dotted ``path``, if one does.

    The inverse of :func:`option_path` for plain names: ``"output_action.unverified_action"``
    gives ``"unverified_action"``, ``"extensions.lookups.enabled"`` gives None (a dotted path
    is still accepted as ``**{"extensions.lookups.enabled": False}``).
    """
    name = path.rpartition(".")[2]
    return name if option_path(name) == path else None


def _unknown_key(parts: list[str], value: Any, *, in_file: bool) -> str:
    """The message for the unknown key at ``parts`` (from the policy's root): the fix, if any.

    The key's name elsewhere in the policy (``unverified_action`` is
    ``output_action.unverified_action``), else the nearest valid key of its own section
    (``min_groundednes``), else the nearest option elsewhere; with how to write it: in a
    policy file, the section to put it under; in a mapping, the nested mapping and the keyword
    option of ``CitationVerifier`` and the adapters when one sets it.
    """
    key, section = parts[-1], ".".join(parts[:-1])
    paths = _option_paths()
    split = [p.rpartition(".") for p in paths]
    targets = [p for p, (_, _, name) in zip(paths, split, strict=True) if name == key]
    if not targets:
        siblings = [name for parent, _, name in split if parent == section]
        close = difflib.get_close_matches(key, siblings, n=1)
        if close:
            return f"unknown key (did you mean {close[0]!r}?)"
        close = difflib.get_close_matches(key, sorted({name for _, _, name in split}), n=1)
        targets = [p for p, (_, _, name) in zip(paths, split, strict=True) if close == [name]]
    if not targets:
        return "unknown key"
    if len(targets) > 1:
        return f"unknown key (did you mean {' or '.join(map(repr, targets))}?)"
    target = targets[0]
    parent, _, name = target.rpartition(".")
    if in_file:
        where = f"under {parent}" if parent else "directly under citation-verifier"
        return f"unknown key (did you mean {target!r}? Put {name} {where})"
    shown = _brief(value, target)
    nested = shown
    for part in reversed(target.split(".")):
        nested = f"{{{part!r}: {nested}}}"
    keyword = option_keyword(target)
    how = f"Pass {nested}"
    if keyword is not None:
        how += f", or the keyword option {keyword}={shown}"
        how += " of CitationVerifier or an adapter"
    return f"unknown key (did you mean {target!r}? {how})"


def _make_policy_error(problems: list[tuple[str, str]]) -> PolicyError:
    text = "; ".join(f"{p}: {m}" for p, m in problems)
    return PolicyError(f"invalid policy: {text}", path=problems[0][0], problems=problems)


_PACK_KEYS = {"pack", "policies", "policy"}

#: Limits on a policy file, which may come from anywhere (a 1 KB "billion laughs" file
#: of nested aliases expanded past 4 GiB when validated; YAML nested 600 deep overflowed the
#: stack). A real pack is a few hundred bytes, a dozen nodes deep at most.
MAX_POLICY_BYTES = 1_000_000
MAX_POLICY_DEPTH = 32
MAX_POLICY_NODES = 10_000


def safe_yaml(text: str) -> Any:
    """``yaml.safe_load`` after a streaming check of the document's shape.

    The events are read once (no recursion, nothing expanded): the nesting depth and the number
    of nodes that the document stands for, with every alias counted at the size of what it
    repeats, must stay within the limits above.

    Raises:
        PolicyError: the document is nested too deeply or expands to too many nodes.
        yaml.YAMLError: the text is not YAML.
    """
    import yaml  # noqa: PLC0415 - 10-40 ms at import; only policy files need it

    sizes: dict[str, int] = {}  # anchor -> nodes of the anchored node, aliases expanded
    stack: list[list[Any]] = []  # open collections: [nodes so far, anchor]
    total = 0

    def attach(nodes: int) -> None:  # a finished node joins its parent (or the document)
        nonlocal total
        if stack:
            stack[-1][0] += nodes
            nodes = stack[-1][0]
        else:
            total += nodes
            nodes = total
        if nodes > MAX_POLICY_NODES:
            msg = f"the document expands to more than {MAX_POLICY_NODES:,} nodes (aliases?)"
            raise PolicyError(msg)

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            attach(sizes.get(event.anchor or "", 1))
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor:
                sizes[event.anchor] = 1
            attach(1)
        elif isinstance(event, yaml.CollectionStartEvent):
            stack.append([1, event.anchor])
            if len(stack) > MAX_POLICY_DEPTH:
                msg = f"the document is nested more than {MAX_POLICY_DEPTH} levels deep"
                raise PolicyError(msg)
        elif isinstance(event, yaml.CollectionEndEvent):
            nodes, anchor = stack.pop()
            if anchor:
                sizes[anchor] = nodes
            attach(nodes)
    return yaml.safe_load(text)


#: Policy packs shipped in ``citeverify/policies/``, loadable by name wherever a policy file path
#: is taken (``CitationVerifier("recommended")``, ``--policy recommended``) when no file of that
#: name exists. ``recommended``: the lexical options and thresholds that measure best on BEGIN's
#: dev subsets (the figures are in the file).
BUNDLED_POLICIES = ("recommended",)


def bundled_policy_path(name: str) -> Path:
    """The path of a policy pack shipped with citeverify (see :data:`BUNDLED_POLICIES`).

    Raises:
        PolicyError: no bundled pack has this name.
    """
    if name not in BUNDLED_POLICIES:
        close = difflib.get_close_matches(name, BUNDLED_POLICIES, n=1)
        guess = f"did you mean {close[0]!r}? " if close else ""
        msg = f"no bundled policy named {name!r} ({guess}one of: {', '.join(BUNDLED_POLICIES)})"
        raise PolicyError(msg)
    return Path(__file__).resolve().parent / "packs" / f"{name}.yaml"


def _bundled_hint(name: str) -> str:
    """For a policy file that does not exist: the nearest bundled pack's name and the list.

    Only when ``name`` could be a pack's name (no directory, no ``.yaml``): "" for a path.
    """
    if os.sep in name or "/" in name or Path(name).suffix in (".yaml", ".yml"):
        return ""
    close = difflib.get_close_matches(name, BUNDLED_POLICIES, n=1)
    guess = f"did you mean {close[0]!r}? " if close else ""
    return f" (nor is it a bundled pack: {guess}bundled packs: {', '.join(BUNDLED_POLICIES)})"


def read_policy_pack(path: str | Path) -> Any:
    """The YAML document of a policy pack file (or of a bundled pack, by name), not yet validated.

    Within the limits above (:data:`MAX_POLICY_BYTES`, UTF-8, a shape :func:`safe_yaml` takes).

    Raises:
        PolicyError: the file is missing, too large, not UTF-8 or not YAML, naming the file.
    """
    if not isinstance(path, str | os.PathLike):
        msg = f"a policy file path must be a string or a Path, got {type(path).__name__}"
        raise PolicyError(msg)
    name = os.fspath(path)
    if isinstance(name, str) and name in BUNDLED_POLICIES and not os.path.exists(name):
        path = bundled_policy_path(name)  # the name of a pack shipped with citeverify
    try:
        path = Path(path)
        with path.open("rb") as f:
            raw = f.read(MAX_POLICY_BYTES + 1)
        if len(raw) > MAX_POLICY_BYTES:
            msg = f"policy file {path} is larger than {MAX_POLICY_BYTES:,} bytes"
            raise PolicyError(msg)
        text = raw.decode("utf-8")
    except OSError as exc:
        msg = f"cannot read policy file {path}: {exc.strerror or exc}"
        if isinstance(exc, FileNotFoundError) and isinstance(name, str):
            msg += _bundled_hint(name)
        raise PolicyError(msg) from None
    except UnicodeDecodeError:
        msg = f"policy file {path} is not UTF-8 text"
        raise PolicyError(msg) from None
    except ValueError as exc:  # a NUL byte or a lone surrogate in the path
        msg = f"cannot use {_brief(str(path))} as a policy file path: {exc}"
        raise PolicyError(msg) from None
    return _yaml_document(text, f"policy file {path}")


def _yaml_document(text: str, what: str) -> Any:
    """:func:`safe_yaml` of ``text`` with its errors as PolicyErrors that begin with ``what``."""
    import yaml  # noqa: PLC0415 - 10-40 ms at import; only policy files need it

    try:
        return safe_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        msg = f"{what} is not valid YAML{where}: {getattr(exc, 'problem', exc)}"
        raise PolicyError(msg) from None
    except PolicyError as exc:
        raise PolicyError(f"{what}: {exc}") from None
    except ValueError as exc:  # YAML that PyYAML cannot turn into values: a 5,000-digit integer
        raise PolicyError(f"{what} holds an unusable value: {exc}") from None


def load_policy_pack(path: str | Path) -> tuple[PolicyConfig, list[str]]:
    """Load a policy pack and return the citation-verifier policy with notes for the user.

    Notes say which options are ignored and which other controls were skipped. ``path`` may also
    be the name of a bundled pack (:data:`BUNDLED_POLICIES`) when no file of that name exists.

    Raises:
        PolicyError: naming the file and the key path of each problem.
    """
    doc = read_policy_pack(path)
    try:
        return parse_policy_pack(doc)
    except PolicyError as exc:
        where = _pack_file(path)
        raise PolicyError(f"{where}: {exc}", path=exc.path, problems=exc.problems) from None


def _pack_file(path: str | Path) -> Path:
    """The file that :func:`read_policy_pack` read for ``path`` (a bundled pack's, by name)."""
    bundled = isinstance(path, str) and path in BUNDLED_POLICIES and not os.path.exists(path)
    return bundled_policy_path(str(path)) if bundled else Path(path)


def parse_policy_yaml(text: str) -> tuple[PolicyConfig, list[str]]:
    """A policy pack given as YAML text (within the same limits as a file), with its notes.

    Raises:
        PolicyError: the text is not YAML or holds an invalid policy pack.
    """
    if len(text) > MAX_POLICY_BYTES:
        raise PolicyError(f"a policy is at most {MAX_POLICY_BYTES:,} bytes")
    return parse_policy_pack(_yaml_document(text, "the policy"))


def pack_policy(doc: Any) -> tuple[Any, list[str]]:
    """The inner ``policy.citation-verifier`` mapping of a policy pack, not yet validated.

    Returns it with the pack's notes (controls skipped, a pack that is disabled).

    Raises:
        PolicyError: the pack's structure is wrong (unknown top-level keys, no citation-verifier
            policy).
    """
    if not isinstance(doc, dict):
        msg = (
            "a policy pack must be a mapping with pack, policies and policy; "
            f"got {type(doc).__name__}"
        )
        raise PolicyError(msg)
    unknown = sorted(str(k) for k in doc if k not in _PACK_KEYS)
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(key, sorted(_PACK_KEYS), n=1)
        if close:
            fix = f"did you mean {close[0]!r}? "
        elif key in PolicyConfig.model_fields:
            fix = "citation-verifier options go under policy: citation-verifier: "
        else:
            fix = ""
        msg = f"{key}: unknown key ({fix}a policy pack has pack, policies and policy)"
        raise PolicyError(msg, path=key)
    notes: list[str] = []
    pack = doc.get("pack")
    if pack is not None and not isinstance(pack, dict):
        raise PolicyError("pack: expected a mapping (name, version, enabled)", path="pack")
    if isinstance(pack, dict) and pack.get("enabled") is False:
        notes.append("pack.enabled is false: a gateway would not run this pack")
    policies = doc.get("policies")
    chain: Any = None
    if policies is not None:
        if not isinstance(policies, dict):
            raise PolicyError("policies: expected a mapping with chain", path="policies")
        chain = policies.get("chain")
        if chain is not None and not (
            isinstance(chain, list) and all(isinstance(c, str) for c in chain)
        ):
            raise PolicyError(
                "policies.chain: expected a list of control names", path="policies.chain"
            )
    policy = doc.get("policy")
    if not isinstance(policy, dict) or "citation-verifier" not in policy:
        msg = f"{PACK_PREFIX}: missing (the pack has no citation-verifier policy)"
        raise PolicyError(msg, path=PACK_PREFIX)
    if chain is not None and "citation-verifier" not in chain:
        notes.append("citation-verifier is not in policies.chain: a gateway would not run it")
    for other in policy:
        if other != "citation-verifier":
            notes.append(f"policy.{other}: not a citation-verifier option, skipped")
    inner = policy["citation-verifier"]
    return ({} if inner is None else inner), notes


def parse_policy_pack(doc: Any) -> tuple[PolicyConfig, list[str]]:
    """Validate an already-loaded policy pack mapping; see :func:`load_policy_pack`.

    Raises:
        PolicyError: naming the key path of each problem.
    """
    inner, notes = pack_policy(doc)
    config = PolicyConfig._from_mapping(inner, prefix=PACK_PREFIX)
    notes.extend(config.notes())
    return config, notes


def load_policy(source: Any = None) -> PolicyConfig:
    """The one way in: a :class:`PolicyConfig` from any form a policy is given in.

    ``source`` is a PolicyConfig (returned as it is), a
    :class:`~citeverify_core.policy.PolicySettings` (its values), the inner
    ``policy.citation-verifier`` mapping, the path of a policy pack, the name of a bundled pack,
    or None (the defaults). To add keyword options, see :func:`citeverify_core.policy.merge_policy`.

    Raises:
        PolicyError: ``source`` is of another type or holds an invalid policy.
    """
    if source is None:
        return PolicyConfig()
    if isinstance(source, PolicyConfig):
        return source
    if isinstance(source, str | Path):
        return load_policy_pack(source)[0]
    if isinstance(source, PolicySettings):
        return PolicyConfig.model_validate(settings_mapping(source))
    if isinstance(source, Mapping):
        return PolicyConfig.model_validate(dict(source))
    msg = (
        "policy must be a PolicyConfig, a mapping of citation-verifier options, or the path of "
        f"a policy pack; got {type(source).__name__}"
    )
    raise PolicyError(msg)


def settings_mapping(settings: Any) -> dict[str, Any]:
    """The nested mapping of a settings dataclass, as :class:`PolicyConfig` validates it.

    Derived settings (``response.report_on_block``) are left out; an explicit report stays one.
    """
    out: dict[str, Any] = {}
    for name in settings.__dataclass_fields__:
        value = getattr(settings, name)
        if hasattr(value, "__dataclass_fields__"):
            value = settings_mapping(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    if isinstance(settings, s.ResponseOptions):
        del out["report_on_block"]
        if not settings.report_on_block and settings.include_verification_report:
            del out["include_verification_report"]  # not given: a block withholds the report
    return out
