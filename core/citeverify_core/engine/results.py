"""Result value objects: frozen, slotted dataclasses, JSON-ready with the policy-pack format's keys.

Also their readable forms: :func:`render_text` (``str(result)``, the CLI's report) and
:func:`render_html` (Jupyter), here because the objects render themselves; ``html`` and
``textwrap`` are imported where they are used (every ``citeverify check`` imports this module).

They import nothing beyond the standard library: building and reading results costs no pydantic.
:meth:`VerificationResult.to_dict` gives the JSON; :meth:`VerificationResult.from_dict` rebuilds a
result from it (a serialised result, a service's answer). Each field's description is in its
``metadata["description"]`` (``dataclasses.fields(ClaimResult)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from citeverify_core.lookups.record import LookupRecord
from citeverify_core.policy.settings import CitationType

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "Citation",
    "ClaimResult",
    "LookupRecord",
    "QuoteResult",
    "VerificationDetails",
    "VerificationReport",
    "VerificationResult",
    "assemble",
    "render_html",
    "render_text",
    "updated",
]

Span = tuple[int, int]
_R = TypeVar("_R", "ClaimResult", "QuoteResult", "Citation")


def _doc(description: str) -> dict[str, str]:
    """A field's ``metadata``: its description."""
    return {"description": description}


def _json(value: Any) -> Any:
    """``value`` as JSON data: results as their mappings, tuples as lists."""
    to_dict: Callable[[], Any] | None = getattr(value, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return value


def _span(value: Any) -> Span:
    return (value[0], value[1])


#: The fields of a claim that only some verifications fill, and so only they show in the JSON.
_CLAIM_OPTIONAL = frozenset(
    {"cited_groundedness", "misattributed", "problems", "tier", "semantic_score"}
)


@dataclass(frozen=True, kw_only=True)  # not slotted: see assemble()
class ClaimResult:
    """One claim of the answer and how well the context supports it.

    ``_unset`` names the fields left out of :meth:`to_dict` (those a verification did not fill:
    the citation scores when the context was not checked, ``problems`` without a strict option,
    ``tier`` and ``semantic_score`` without the semantic tier); :func:`updated` shows the fields
    it changes.
    """

    text: str = field(metadata=_doc("The claim as written in the answer."))
    span: Span = field(metadata=_doc("[start, end) character offsets of the claim in the answer."))
    groundedness: float | None = field(
        metadata=_doc(
            "Share of the claim's unique words found in the context; null when the "
            "context was not checked."
        )
    )
    verified: bool | None = field(
        metadata=_doc(
            "groundedness >= min_groundedness, or with the semantic tier semantic_score "
            ">= extensions.semantic.min_score; false when a strict option fails the claim; null "
            "when "
            "the context was not checked."
        )
    )
    word_count: int = field(metadata=_doc("Unique words in the claim."))
    missing_words: list[str] = field(
        metadata=_doc("Normalized words of the claim that no context document contains.")
    )
    best_document: int | None = field(
        metadata=_doc(
            "0-based index of the context document that supports the claim best (most words; "
            "first on ties); null when none shares a word."
        )
    )
    best_document_groundedness: float | None = field(
        metadata=_doc("The claim's groundedness against the best document alone.")
    )
    cited_documents: list[int] = field(
        default_factory=list,
        metadata=_doc(
            "0-based indices of the documents that the claim's inline markers ([1], "
            "[Source 2], 【3】) cite; markers count sources from 1."
        ),
    )
    cited_groundedness: float | None = field(
        default=None, metadata=_doc("The claim's groundedness against its cited documents alone.")
    )
    misattributed: bool | None = field(
        default=None,
        metadata=_doc(
            "True when the cited documents do not support the claim (below "
            "min_groundedness, or a marker beyond the documents given); null without markers. "
            "Reported only, unless extensions.strict_attribution fails such a claim."
        ),
    )
    problems: list[str] = field(
        default_factory=list,
        metadata=_doc(
            "Why a strict option (strict_quotes, strict_statistics, strict_attribution) fails "
            "this claim."
        ),
    )
    tier: Literal["words", "semantic"] = field(
        default="words",
        metadata=_doc(
            "Which tier decided the claim: words (word overlap), or semantic "
            "(the semantic scorer's score decided: the claim failed on words, or "
            "extensions.semantic.scope is all). Only in the JSON when a semantic scorer is "
            "configured."
        ),
    )
    semantic_score: float | None = field(
        default=None,
        metadata=_doc(
            "The semantic scorer's score in [0, 1] when the semantic tier scored the "
            "claim; null otherwise (no scorer, the claim passed on words and scope is failing, or "
            "the scorer failed)."
        ),
    )
    _unset: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping of the fields that the verification filled."""
        unset = self._unset
        out: dict[str, Any] = {
            "text": self.text,
            "span": list(self.span),
            "groundedness": self.groundedness,
            "verified": self.verified,
            "word_count": self.word_count,
            "missing_words": list(self.missing_words),
            "best_document": self.best_document,
            "best_document_groundedness": self.best_document_groundedness,
            "cited_documents": list(self.cited_documents),
        }
        if "cited_groundedness" not in unset:
            out["cited_groundedness"] = self.cited_groundedness
        if "misattributed" not in unset:
            out["misattributed"] = self.misattributed
        if "problems" not in unset:
            out["problems"] = list(self.problems)
        if "tier" not in unset:
            out["tier"] = self.tier
        if "semantic_score" not in unset:
            out["semantic_score"] = self.semantic_score
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimResult:
        """A claim from :meth:`to_dict`'s mapping (the optional fields it lacks stay unset)."""
        values = {**data, "span": _span(data["span"])}
        return cls(**values, _unset=_CLAIM_OPTIONAL - data.keys())


@dataclass(frozen=True, kw_only=True)  # not slotted: see assemble()
class QuoteResult:
    """A quotation in the answer and where, if anywhere, the context contains it."""

    text: str = field(metadata=_doc("The quoted text, without its quotation marks."))
    span: Span = field(
        metadata=_doc("[start, end) of the quotation, marks included, in the answer.")
    )
    normalized: str = field(metadata=_doc("The text as compared: NFKC, casefolded, unified."))
    matched: bool | None = field(
        metadata=_doc("Whether a context document contains the quote; null when not checked.")
    )
    document: int | None = field(
        metadata=_doc("0-based index of the first document that contains it.")
    )
    document_span: Span | None = field(
        metadata=_doc("[start, end) of the match in the original text of that document.")
    )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "text": self.text,
            "span": list(self.span),
            "normalized": self.normalized,
            "matched": self.matched,
            "document": self.document,
            "document_span": None if self.document_span is None else list(self.document_span),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QuoteResult:
        """A quote from :meth:`to_dict`'s mapping."""
        doc_span = data.get("document_span")
        return cls(
            **{
                **data,
                "span": _span(data["span"]),
                "document_span": None if doc_span is None else _span(doc_span),
            }
        )


@dataclass(frozen=True, kw_only=True)  # not slotted: see assemble()
class Citation:
    """A citation found in the answer (a quote, DOI, PubMed ID, URL, case, regulation, number)."""

    type: CitationType = field(metadata=_doc("The extract_patterns type that found it."))
    text: str = field(metadata=_doc("The citation as written in the answer."))
    span: Span = field(metadata=_doc("[start, end) of the citation in the answer."))
    kind: str = field(
        default="",
        metadata=_doc(
            "Finer kind: doi, pmid, pmcid, arxiv, url, case, short_case, id, supra, usc, "
            "cfr, federal_register, public_law, eu_act, percent, currency, amount, p_value, "
            "sample_size, ratio, quote."
        ),
    )
    normalized: str = field(metadata=_doc("Canonical form (lower-case DOI, quote text, ...)."))
    verified: bool | None = field(
        metadata=_doc(
            "True or false when checked (context or lookup); null when nothing checked it."
        )
    )
    status: str = field(
        default="unchecked",
        metadata=_doc(
            "verified, not_found, mismatch, lookup_failed, blocked, matched, "
            "supported, unsupported, in_context, format_valid, format_invalid, unchecked."
        ),
    )
    reason: str = field(metadata=_doc("Why it is or is not verified, for people."))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (the keys in the order of the policy-pack format's results)."""
        return {
            "type": self.type,
            "text": self.text,
            "span": list(self.span),
            "kind": self.kind,
            "normalized": self.normalized,
            "verified": self.verified,
            "status": self.status,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Citation:
        """A citation from :meth:`to_dict`'s mapping."""
        return cls(**{**data, "span": _span(data["span"])})


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationReport:
    """Summary added to the details of a verified answer (``verification_report``)."""

    summary: str = field(metadata=_doc("One sentence for people."))
    claim_count: int = field(metadata=_doc("Claims in the answer."))
    passing_claim_count: int = field(metadata=_doc("Claims that pass."))
    quote_count: int = field(metadata=_doc("Quotes in the answer."))
    matched_quote_count: int = field(metadata=_doc("Quotes found in the context."))
    citation_count: int = field(metadata=_doc("Citations in the answer."))
    context_document_count: int = field(metadata=_doc("Context documents given."))
    source_evidence: list[str] = field(metadata=_doc("What counted as source evidence."))
    thresholds: dict[str, float] = field(metadata=_doc("The thresholds that were applied."))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "summary": self.summary,
            "claim_count": self.claim_count,
            "passing_claim_count": self.passing_claim_count,
            "quote_count": self.quote_count,
            "matched_quote_count": self.matched_quote_count,
            "citation_count": self.citation_count,
            "context_document_count": self.context_document_count,
            "source_evidence": list(self.source_evidence),
            "thresholds": dict(self.thresholds),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerificationReport:
        """A report from :meth:`to_dict`'s mapping."""
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationDetails:
    """The result's ``details``, in the policy-pack format's shape (see :meth:`to_dict`)."""

    verified: bool = field(metadata=_doc("Whether the answer is verified."))
    groundedness: float | None = field(
        default=None,
        metadata=_doc(
            "Share of the answer's unique words found in the union of the context "
            "documents; null when the context was not checked."
        ),
    )
    claim_confidence: float | None = field(
        default=None, metadata=_doc("Passing claims / claims (1.0 with no claims).")
    )
    claims: list[ClaimResult] | None = field(
        default=None, metadata=_doc("Every claim of the answer.")
    )
    quotes: list[QuoteResult] | None = field(
        default=None, metadata=_doc("Every quote of the answer.")
    )
    citations: list[Citation] | None = field(
        default=None, metadata=_doc("Every citation of the answer.")
    )
    external_lookup: list[LookupRecord] | None = field(
        default=None, metadata=_doc("The lookups made.")
    )
    verification_report: VerificationReport | None = field(
        default=None, metadata=_doc("The summary of a verified answer.")
    )
    unverified_claims: list[ClaimResult] | None = field(
        default=None, metadata=_doc("The claims that fail, when the answer is unverified.")
    )
    unverified_claim_count: int | None = field(default=None, metadata=_doc("How many claims fail."))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping with exactly the keys that the policy-pack format's details have.

        ``verified`` and ``groundedness`` always; the lists, ``claim_confidence`` and the report
        (or the unverified claims) when the policy asks for the report
        (``response.include_verification_report``), which fills them.
        """
        out: dict[str, Any] = {"verified": self.verified, "groundedness": self.groundedness}
        if self.claims is None:
            return out
        out["claim_confidence"] = self.claim_confidence
        for name in (
            "claims",
            "quotes",
            "citations",
            "external_lookup",
            "verification_report",
            "unverified_claims",
            "unverified_claim_count",
        ):
            value = getattr(self, name)
            if value is not None:
                out[name] = _json(value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerificationDetails:
        """Details from :meth:`to_dict`'s mapping."""
        parts: dict[str, Callable[[dict[str, Any]], Any]] = {
            "claims": ClaimResult.from_dict,
            "quotes": QuoteResult.from_dict,
            "citations": Citation.from_dict,
            "external_lookup": LookupRecord.from_dict,
            "unverified_claims": ClaimResult.from_dict,
        }
        values = dict(data)
        for name, build in parts.items():
            if values.get(name) is not None:
                values[name] = [build(item) for item in values[name]]
        if values.get("verification_report") is not None:
            values["verification_report"] = VerificationReport.from_dict(
                values["verification_report"]
            )
        return cls(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationResult:
    """What :meth:`citeverify_core.CitationVerifier.verify` decided, and why."""

    verdict: Literal["allow", "block"] = field(metadata=_doc("allow or block."))
    reason_code: Literal["citation.verified", "citation.unverified"] = field(
        metadata=_doc("citation.verified or citation.unverified.")
    )
    action: Literal["allow", "flag", "redact", "block"] = field(
        metadata=_doc("What was done: allow (verified), or the policy's unverified_action.")
    )
    answer: str = field(metadata=_doc("The answer: unchanged, or redacted under redact."))
    original_answer: str = field(
        default="", metadata=_doc("The answer as given; every span in details indexes this text.")
    )
    details: VerificationDetails = field(metadata=_doc("The details (see VerificationDetails)."))
    reasons: list[str] = field(
        default_factory=list, metadata=_doc("Why the answer is unverified, one rule per line.")
    )
    notes: list[str] = field(
        default_factory=list, metadata=_doc("Remarks: ignored policy options and the like.")
    )

    @property
    def verified(self) -> bool:
        """Whether the answer is verified."""
        return self.details.verified

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping; ``details`` has exactly the policy-pack format's keys."""
        return {
            "verdict": self.verdict,
            "reason_code": self.reason_code,
            "action": self.action,
            "answer": self.answer,
            "original_answer": self.original_answer,
            "details": self.details.to_dict(),
            "reasons": list(self.reasons),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerificationResult:
        """A result from :meth:`to_dict`'s mapping (a serialised result, a service's answer).

        Raises:
            TypeError: a key is unknown or a required one is missing.
            KeyError: a nested mapping lacks a required key.
        """
        return cls(**{**data, "details": VerificationDetails.from_dict(data["details"])})

    def __str__(self) -> str:
        return render_text(self)

    def _repr_html_(self) -> str:
        """Jupyter: the answer with supported and unsupported claims highlighted."""
        return render_html(self)


def assemble(cls: type[_R], values: dict[str, Any]) -> _R:
    """``cls(**values)`` for the per-claim results, given every field in field order.

    A verification makes one claim result per sentence and one citation per citation found; a
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, 5-8 times the
    cost of filling the instance's ``__dict__`` at once, which was the largest share of a small
    answer's verification. That is why these three classes keep a ``__dict__`` (no slots); the
    result is the object ``cls(**values)`` gives (tests/engine/test_speed_equivalence.py rebuilds
    every result through ``__init__`` and compares).
    """
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def _shorten(text: str, width: int) -> str:
    """``textwrap.shorten(text, width, placeholder=" ...")``, without its cost when text fits.

    The same result (whitespace collapsed; cut at a word with " ..." when too long): shorten
    builds a TextWrapper for every call, which was a fifth of rendering a 9,000-claim answer.
    """
    collapsed = " ".join(text.split())
    if len(collapsed) <= width:
        return collapsed
    import textwrap  # noqa: PLC0415 - start-up time: only long texts need it

    return textwrap.shorten(collapsed, width=width, placeholder=" ...")


def updated(obj: Any, **changes: Any) -> Any:
    """A copy of the result ``obj`` with ``changes``; changed fields show in its JSON.

    ``dataclasses.replace`` that also takes the changed names out of a claim's unset fields.
    """
    if isinstance(obj, ClaimResult):
        return replace(obj, **changes, _unset=obj._unset - changes.keys())
    return replace(obj, **changes)


# --- rendering: a result as a report for terminals and logs, and as HTML for notebooks ------


def _pct(value: float | None) -> str:
    return "  n/a" if value is None else f"{value * 100:4.0f}%"


def render_text(result: VerificationResult, *, width: int = 100) -> str:
    """Render a result as a readable report: verdict, scores, claims, quotes, reasons.

    Documents are numbered from 1 here (``#1`` is the first), as the answer's inline markers
    (``[1]``) and the reasons number them; the JSON's indices (``best_document``,
    ``cited_documents``, a quote's ``document``) count from 0.
    """
    d = result.details
    lines = [
        f"Verdict: {result.verdict.upper()}  ({result.reason_code}, action: {result.action})",
        f"Groundedness: {_pct(d.groundedness).strip()}"
        + (
            f"   Claim confidence: {_pct(d.claim_confidence).strip()}"
            if d.claim_confidence is not None
            else ""
        ),
    ]
    if d.claims:
        lines.append("")
        lines.append("Claims:")
        for i, c in enumerate(d.claims, 1):
            mark = {True: "ok ", False: "NO ", None: " - "}[c.verified]
            head = f"  {i:>2}. [{mark}] {_pct(c.groundedness)}  "
            body = _shorten(c.text, max(20, width - len(head)))
            lines.append(head + body)
            pad = " " * len(head)
            if c.missing_words:
                missing = ", ".join(c.missing_words[:12]) + (
                    " ..." if len(c.missing_words) > 12 else ""
                )
                lines.append(f"{pad}not in context: {missing}")
            if c.best_document is not None and c.verified is False:
                best = _pct(c.best_document_groundedness).strip()
                lines.append(f"{pad}closest document: #{c.best_document + 1} ({best})")
            if c.cited_documents:
                cited = ", ".join(f"#{i + 1}" for i in c.cited_documents)
                state = "MISATTRIBUTED" if c.misattributed else "supports it"
                share = _pct(c.cited_groundedness).strip()
                lines.append(f"{pad}cites {cited}: {state} ({share} of its words)")
            if c.semantic_score is not None:
                decided = "decided by" if c.tier == "semantic" else "scored by"
                lines.append(f"{pad}{decided} the semantic tier: {c.semantic_score:.2f}")
            lines.extend(f"{pad}{p}" for p in c.problems)
    if d.quotes:
        lines.append("")
        lines.append("Quotes:")
        for q in d.quotes:
            if q.matched:
                where = "found" if q.document is None else f"found in document #{q.document + 1}"
                if q.document_span is not None:
                    where += f" at {q.document_span[0]}-{q.document_span[1]}"
            elif q.matched is False:
                where = "NOT FOUND in the context"
            else:
                where = "not checked"
            text = _shorten(q.text, 60)
            lines.append(f'  "{text}": {where}')
    other = [c for c in d.citations or [] if c.type != "quote"]
    if other:
        lines.append("")
        lines.append("Citations:")
        for cit in other:
            mark = {True: "ok ", False: "NO ", None: " - "}[cit.verified]
            text = _shorten(cit.text, 50)
            lines.append(f"  [{mark}] {cit.type:<10} {text}: {cit.status} ({cit.reason})")
    if result.reasons:
        lines.append("")
        lines.append("Why unverified:")
        lines.extend(f"  - {r}" for r in result.reasons)
    if result.action == "redact":
        lines.append("")
        lines.append("Redacted answer:")
        import textwrap  # noqa: PLC0415 - start-up time: only a redaction is wrapped

        lines.extend(
            textwrap.wrap(
                result.answer, width=width - 2, initial_indent="  ", subsequent_indent="  "
            )
        )
    if result.notes:
        lines.append("")
        lines.extend(f"Note: {n}" for n in result.notes)
    return "\n".join(lines)


_STYLE = (
    "<style>.cv{font-family:system-ui,sans-serif;line-height:1.5;max-width:60em}"
    ".cv .ok{background:#dff5e1}.cv .no{background:#fde2e1}.cv .na{background:#eee}"
    ".cv .mis{background:#fff3cd;border-bottom:2px dotted #ef6c00}"
    ".cv .mis::after{content:' \\26A0 wrong source';color:#ef6c00;font-size:80%}"
    ".cv .q-ok{border-bottom:2px solid #2e7d32}.cv .q-no{border-bottom:2px dashed #c62828}"
    ".cv .badge{display:inline-block;padding:0 .5em;border-radius:.3em;color:#fff;font-weight:600}"
    ".cv .allow{background:#2e7d32}.cv .block{background:#c62828}.cv .flag{background:#ef6c00}"
    ".cv table{border-collapse:collapse;font-size:90%}.cv td,.cv th{padding:.15em .6em;"
    "border-bottom:1px solid #ddd;text-align:left}</style>"
)


def render_html(result: VerificationResult) -> str:
    """Render a result as HTML for notebooks.

    The answer with supported and unsupported claims highlighted, quotes underlined (solid:
    found, dashed: not found), and a table of citations. Everything from the answer is escaped.
    """
    import html  # noqa: PLC0415 - start-up time: only notebooks render HTML

    d = result.details
    badge = result.verdict if result.verified or result.verdict == "block" else "flag"
    head = (
        f'<div class="cv">{_STYLE}<p><span class="badge {badge}">{result.verdict.upper()}</span> '
        f"<code>{html.escape(result.reason_code)}</code> &middot; action <b>{result.action}</b>"
        f" &middot; groundedness <b>{_pct(d.groundedness).strip()}</b>"
        + (
            f" &middot; claim confidence <b>{_pct(d.claim_confidence).strip()}</b>"
            if d.claim_confidence is not None
            else ""
        )
        + "</p>"
    )
    withheld = not result.original_answer and result.action in ("redact", "block")
    if withheld:
        # The removed text was withheld (include_original=False, or a blocked answer as an
        # adapter hands it back): the spans index a text we do not have, so the answer shown
        # (redacted, or the replacement) is shown as it is.
        body = html.escape(result.answer)
    else:
        marks: list[tuple[int, int, str, str]] = []
        for c in d.claims or []:
            cls = {True: "ok", False: "no", None: "na"}[c.verified]
            title = f"groundedness {_pct(c.groundedness).strip()}"
            if c.missing_words:
                title += "; not in context: " + ", ".join(c.missing_words[:10])
            if c.semantic_score is not None:
                title += f"; semantic score {c.semantic_score:.2f} ({c.tier} tier decided)"
            if c.misattributed:
                # Visible, not only in the hover text: a claim its cited source does not support,
                # even when other documents do.
                title += "; the cited source does not support it"
                cls = "mis" if c.verified else cls
            marks.append((c.span[0], c.span[1], cls, title))
        body = _highlight(result.original_answer or result.answer, marks, d.quotes or [])
    parts = [head, f"<p>{body}</p>"]
    if d.citations:
        rows = "".join(
            f"<tr><td>{html.escape(c.type)}</td><td>{html.escape(c.text)}</td>"
            f"<td>{html.escape(c.status)}</td><td>{html.escape(c.reason)}</td></tr>"
            for c in d.citations
        )
        parts.append(
            "<table><tr><th>type</th><th>citation</th><th>status</th><th>why</th></tr>"
            f"{rows}</table>"
        )
    if result.reasons:
        items = "".join(f"<li>{html.escape(r)}</li>" for r in result.reasons)
        parts.append(f"<p>Why unverified:</p><ul>{items}</ul>")
    if result.action == "redact" and not withheld:
        parts.append(f"<p>Redacted answer: <i>{html.escape(result.answer)}</i></p>")
    parts.append("</div>")
    return "".join(parts)


def _highlight(text: str, marks: list[tuple[int, int, str, str]], quotes: list[Any]) -> str:
    import html  # noqa: PLC0415 - start-up time: only notebooks render HTML

    out: list[str] = []
    pos = 0
    quote_spans = [(q.span[0], q.span[1], "q-ok" if q.matched else "q-no") for q in quotes]
    for start, end, cls, title in sorted(marks):
        out.append(html.escape(text[pos:start]))
        inner = _underline(text, start, end, quote_spans)
        out.append(f'<span class="{cls}" title="{html.escape(title)}">{inner}</span>')
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _underline(text: str, start: int, end: int, quotes: list[tuple[int, int, str]]) -> str:
    import html  # noqa: PLC0415 - start-up time: only notebooks render HTML

    out: list[str] = []
    pos = start
    for qs, qe, cls in quotes:
        if qs >= start and qe <= end and qs >= pos:
            out.append(html.escape(text[pos:qs]))
            out.append(f'<span class="{cls}">{html.escape(text[qs:qe])}</span>')
            pos = qe
    out.append(html.escape(text[pos:end]))
    return "".join(out)
