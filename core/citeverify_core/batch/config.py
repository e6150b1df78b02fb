"""What every engine shares: a record to an output row, the columns, the policy for workers.

An *entry* is what a worker makes of one input record: a row (the public columns plus a few
``_``-prefixed fields for the report, stripped before writing), an error (``{"_error": ...}``)
or a blank line (``{"_blank": true}``). Entries travel as JSON lines, in part files (the local
engine) or in a column of a Ray dataset, and :class:`citeverify_core.batch.output.Assembler` turns
them into OUTPUT rows in one place, so that both engines write the same bytes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citeverify_core.errors import CiteVerifyError, InputError

if TYPE_CHECKING:
    from citeverify_core.engine.results import VerificationResult
    from citeverify_core.engine.verifier import CitationVerifier, PolicyLike
    from citeverify_core.lookups.cache import LookupCache
    from citeverify_core.policy.loading import PolicyConfig

#: Citation statuses (``Citation.status``), one count column each; anything else is ``other``.
CITATION_STATUSES = (
    "verified",
    "not_found",
    "mismatch",
    "lookup_failed",
    "blocked",
    "matched",
    "supported",
    "unsupported",
    "in_context",
    "format_valid",
    "format_invalid",
    "unchecked",
    "other",
)
#: The output columns, in order (``details`` only with ``--details``).
COLUMNS = (
    "id",
    "verdict",
    "reason_code",
    "action",
    "groundedness",
    "claim_confidence",
    "claims",
    "unsupported_claims",
    "quotes",
    "altered_quotes",
    "citations",
    *(f"citations_{s}" for s in CITATION_STATUSES),
)
#: Texts kept per record for the report (the most frequent unsupported claims and quotes).
_REPORT_TEXTS = 20
_REPORT_TEXT_CHARS = 300


@dataclass(frozen=True)
class Fields:
    """Where a record keeps its answer, its context documents and its id."""

    answer: str = "answer"
    context: str = "context_documents"
    id: str = "id"


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker needs to build its verifier once (picklable, small)."""

    policy: dict[str, Any]
    fields: Fields
    details: bool = False
    lookup_cache: str | None = None


class RecordError(Exception):
    """A record that cannot be verified; the message is the reason in the errors file."""


def resolve_batch_policy(
    policy: PolicyLike, *, lookups: bool = False, lookup_cache: str | None = None
) -> tuple[PolicyConfig, dict[str, Any]]:
    """The policy, with lookups off unless asked (a batch must not call out by surprise).

    Returns the policy and its picklable form (only the fields set, so that fallbacks such as
    ``min_context_overlap`` behave as in the original).

    Raises:
        PolicyError: the policy is invalid.
    """
    from citeverify_core.policy.loading import load_policy  # noqa: PLC0415 - pydantic: only here
    from citeverify_core.policy.merge import merge_policy  # noqa: PLC0415 - pydantic: only here

    options: dict[str, Any] = {}
    if not lookups:
        options["extensions.lookups.enabled"] = False
    elif lookup_cache is not None and load_policy(policy).extensions.lookups.cache_path is None:
        options["extensions.lookups.cache_path"] = lookup_cache
    config = merge_policy(policy, options)
    return config, config.model_dump(mode="json", exclude_unset=True)


def build_verifier(config: WorkerConfig) -> CitationVerifier:
    """A verifier with a context cache and, with lookups on, the shared SQLite lookup cache."""
    from citeverify_core.engine.verifier import (  # noqa: PLC0415 - start-up time
        CitationVerifier,
        resolve_policy,
    )
    from citeverify_core.lookups.cache import LookupCache  # noqa: PLC0415 - start-up time

    policy = resolve_policy(config.policy)
    cache: LookupCache | None = None
    settings = policy.extensions.lookups
    if settings.enabled and settings.cache_path is not None:
        # One SQLite file for every worker (WAL): a DOI cited by many answers is looked up once
        # per worker at most, and once in all once a worker has stored it.
        cache = LookupCache(settings.cache_path)
    return CitationVerifier(policy, context_cache=True, lookup_cache=cache)


def parse_line(line: bytes | str) -> Any:
    """One JSONL line to a record; raises RecordError with the reason."""
    try:
        return json.loads(line)
    except UnicodeDecodeError:
        raise RecordError("the line is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"not valid JSON (column {exc.colno}): {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"not usable JSON ({type(exc).__name__})") from None


def _documents(value: Any, field: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        # CSV (and some exports) keep the list as JSON in one cell; any other text is one document.
        if value.lstrip().startswith("["):
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                return [value]
            if isinstance(parsed, list):
                return parsed
        return [value]
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, list | tuple):
        return list(value)
    tolist = getattr(value, "tolist", None)  # a numpy array (pandas batches)
    if callable(tolist):
        items = tolist()
        if isinstance(items, list):
            return items
    raise RecordError(f"field {field!r} must be a list of documents, got {type(value).__name__}")


def record_parts(record: Any, fields: Fields) -> tuple[str | None, str, list[Any]]:
    """The id (None when absent), the answer and the documents of a record."""
    if not isinstance(record, Mapping):
        raise RecordError(f"a record must be an object, got {type(record).__name__}")
    raw_id = record.get(fields.id)
    ident = None if raw_id is None else format_id(raw_id)
    if fields.answer not in record:
        raise RecordError(f"no field {fields.answer!r}")
    answer = record[fields.answer]
    if not isinstance(answer, str):
        raise RecordError(f"field {fields.answer!r} must be text, got {type(answer).__name__}")
    return ident, answer, _documents(record.get(fields.context), fields.context)


def format_id(value: Any) -> str:
    """Ids are written as text: ``7`` and ``"7"`` are the same record, whatever the format."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def result_row(ident: str | None, result: VerificationResult, *, details: bool) -> dict[str, Any]:
    """The public columns of one verified record (``id`` may still be None: filled later)."""
    d = result.details
    claims = d.claims or []
    quotes = d.quotes or []
    citations = d.citations or []
    by_status = dict.fromkeys(CITATION_STATUSES, 0)
    for citation in citations:
        key = citation.status if citation.status in by_status else "other"
        by_status[key] += 1
    row: dict[str, Any] = {
        "id": ident,
        "verdict": result.verdict,
        "reason_code": result.reason_code,
        "action": result.action,
        "groundedness": d.groundedness,
        "claim_confidence": d.claim_confidence,
        "claims": len(claims),
        "unsupported_claims": sum(1 for c in claims if not c.verified),
        "quotes": len(quotes),
        "altered_quotes": sum(1 for q in quotes if q.matched is False),
        "citations": len(citations),
    }
    for status, count in by_status.items():
        row[f"citations_{status}"] = count
    if details:
        row["details"] = json.dumps(
            result.to_dict()["details"], ensure_ascii=False, separators=(",", ":")
        )
    # For the report only (stripped from OUTPUT).
    row["_unsupported"] = [
        c.text[:_REPORT_TEXT_CHARS] for c in claims if not c.verified and c.text.strip()
    ][:_REPORT_TEXTS]
    row["_unmatched"] = [q.text[:_REPORT_TEXT_CHARS] for q in quotes if q.matched is False][
        :_REPORT_TEXTS
    ]
    return row


def verify_record(
    verifier: CitationVerifier, record: Any, fields: Fields, *, details: bool, number: int | None
) -> dict[str, Any]:
    """One record to its entry (a row or an error), never raising for the record's content."""
    ident: str | None = None
    if isinstance(record, Mapping) and record.get(fields.id) is not None:
        ident = format_id(record[fields.id])
    try:
        ident, answer, documents = record_parts(record, fields)
        started = time.perf_counter()
        try:
            result = verifier.verify(answer, documents)
        except CiteVerifyError as exc:
            raise RecordError(str(exc)) from None
        except RecursionError:
            raise RecordError("the record is nested too deeply") from None
        row = result_row(ident, result, details=details)
        row["_ms"] = round((time.perf_counter() - started) * 1000, 3)
    except RecordError as exc:
        return {"_error": {"id": ident, "reason": " ".join(str(exc).split())}, "_n": number}
    row["_n"] = number
    return row


def verify_line(
    verifier: CitationVerifier,
    line: bytes | str,
    fields: Fields,
    *,
    details: bool,
    number: int | None,
) -> dict[str, Any]:
    """One JSONL line to its entry (blank lines are entries too, so that engines count alike)."""
    if not line.strip():
        return {"_blank": True, "_n": number}
    try:
        record = parse_line(line)
    except RecordError as exc:
        return {"_error": {"id": None, "reason": str(exc)}, "_n": number}
    return verify_record(verifier, record, fields, details=details, number=number)


def dumps_entry(entry: Mapping[str, Any]) -> str:
    """The one JSON form of an entry and of an output line."""
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def check_fields(record: Any, fields: Fields, where: str) -> None:
    """Fail the run (not the record) when the first record shows the fields are wrong."""
    if not isinstance(record, Mapping):
        return
    for name, option in ((fields.answer, "--answer-field"), (fields.context, "--context-field")):
        if name not in record:
            have = ", ".join(sorted(map(str, record))[:20]) or "none"
            msg = f"{where} has no field {name!r} (give {option}; its fields: {have})"
            raise InputError(msg, path=option)
