"""The reference service's wire contract, shared by the service and its client.

The limits of a request and the pydantic models of the REST API's bodies: what the routes
accept and answer (and ``/openapi.json`` documents), with the API's field names. The store checks
every value again, as it does for the library.

Imports neither FastAPI nor SQLAlchemy, so that :mod:`citeverify_core.client` can use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema
from pydantic.dataclasses import dataclass as pydantic_dataclass
from typing_extensions import TypedDict

from citeverify_core.references.parse import MAX_REFERENCE_CHARS
from citeverify_core.references.result import ReferenceResult

__all__ = [
    "DOCUMENT_TEXT_FORMATS",
    "MAX_DOCUMENT_REFERENCES",
    "MAX_HISTORY",
    "MAX_POLL_IDS",
    "MAX_REFERENCES",
    "MAX_TITLE_CHARS",
    "Balance",
    "CancelBody",
    "Cancellation",
    "CheckBody",
    "CheckResult",
    "DailyCounts",
    "Decision",
    "Decisions",
    "DocumentBody",
    "DocumentCounts",
    "DocumentJob",
    "DocumentLimits",
    "DocumentReference",
    "DocumentSubmission",
    "DocumentView",
    "ErrorBody",
    "ErrorDetail",
    "History",
    "HistoryDocument",
    "HistoryReference",
    "Job",
    "JobState",
    "Jobs",
    "Pagination",
    "Policies",
    "Progress",
    "ResultsBody",
    "SplitBody",
    "SplitReferences",
    "Submission",
    "SubmitBody",
]

#: References per submission and job ids per poll, as the reference-verification API limits them.
MAX_REFERENCES = 20
MAX_POLL_IDS = 50
#: Entries per history page.
MAX_HISTORY = 50
#: A document title is a label, not a document.
MAX_TITLE_CHARS = 500
#: References of one whole document (``POST /api/verify-document``): a document is one
#: submission however many references it has (a thesis has a few hundred), up to this many.
MAX_DOCUMENT_REFERENCES = 2000
#: The formats a JSON body's ``text`` may be (by its ``name``'s suffix); PDF and Word files
#: come as a multipart upload.
DOCUMENT_TEXT_FORMATS = ("md", "markdown", "html", "htm", "txt", "text", "tex", "bbl", "bib")

#: A job's state as the API names it.
JobState = Literal["waiting", "active", "completed", "failed", "not-found"]
_PENDING = frozenset({"waiting", "active"})
_OBJECT_OR_NULL: dict[str, Any] = {
    "anyOf": [{"additionalProperties": True, "type": "object"}, {"type": "null"}]
}


# --- request bodies (the API's names; the store checks them again, as the library does) ---------


class SubmitBody(BaseModel):
    """``POST /api/verify-reference``."""

    model_config = ConfigDict(extra="ignore")
    references: list[Annotated[str, Field(min_length=1, max_length=MAX_REFERENCE_CHARS)]] = Field(
        min_length=1, max_length=MAX_REFERENCES
    )
    title: Annotated[str, Field(max_length=MAX_TITLE_CHARS)] | None = None


class ResultsBody(BaseModel):
    """``POST /api/verify-reference/results``."""

    model_config = ConfigDict(extra="ignore")
    jobIds: list[Annotated[str, Field(max_length=40)]] = Field(max_length=MAX_POLL_IDS)


class CancelBody(BaseModel):
    """``POST /api/verify-reference/cancel``: a document id, job ids, or both."""

    model_config = ConfigDict(extra="ignore")
    documentId: Annotated[str, Field(max_length=100)] | None = None
    jobIds: list[Annotated[str, Field(max_length=40)]] | None = Field(
        default=None, max_length=MAX_POLL_IDS
    )


class DocumentBody(BaseModel):
    """``POST /api/verify-document`` as JSON: a text format's content (the upload is multipart)."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1)
    name: Annotated[str, Field(min_length=1, max_length=255)] = "document.txt"
    title: Annotated[str, Field(max_length=MAX_TITLE_CHARS)] | None = None


class CheckBody(BaseModel):
    """``POST /api/check``: an answer and its context documents, checked with a policy pack."""

    model_config = ConfigDict(extra="forbid")
    answer: str
    context_documents: list[str | dict[str, Any]] = Field(default_factory=list)
    policy: Annotated[str, Field(max_length=64)] | None = None


class SplitBody(BaseModel):
    """``POST /api/references/split``: a pasted list or a .bib file's text."""

    model_config = ConfigDict(extra="forbid")
    text: str
    format: Literal["lines", "bib"] = "lines"


# --- response bodies (documented in /openapi.json; the API's field names) -------------------------


class ErrorDetail(BaseModel):
    """What went wrong."""

    code: str
    message: str


class ErrorBody(BaseModel):
    """Every error answer: ``{"error": {"code": ..., "message": ...}}``."""

    error: ErrorDetail


def _answered(
    description: str, required: Sequence[str], **properties: dict[str, Any]
) -> Callable[[dict[str, Any]], None]:
    """What ``/openapi.json`` says of an answer that the client also reads.

    The client's models accept more than the service sends (a missing ``tokensAvailable``, a
    job built without its error and progress, any progress object), so their types and
    defaults would make the documented answer look looser than it is. ``properties`` change
    the documented fields (a key set to None is removed).
    """

    def document(schema: dict[str, Any]) -> None:
        schema["description"] = description
        schema["required"] = list(required)
        for name, changes in properties.items():
            field = schema["properties"][name]
            for key, value in changes.items():
                if value is None:
                    field.pop(key, None)
                else:
                    field[key] = value

    return document


@pydantic_dataclass(
    frozen=True,
    slots=True,
    config=ConfigDict(
        populate_by_name=True,
        json_schema_extra=_answered(
            "Job ids of queued references.",
            ("jobIds", "documentId", "message", "tokensAvailable"),
            tokensAvailable={"anyOf": None, "type": "integer"},
        ),
    ),
)
class Submission:
    """The service's answer to a submission (``POST /api/verify-reference``).

    On the wire its fields are ``jobIds``, ``documentId``, ``message`` and ``tokensAvailable``.

    Attributes:
        job_ids: One job id per reference, in order.
        document_id: The document grouping these references (for cancelling them together).
        message: The service's confirmation.
        tokens_available: The key's balance after this submission (``None`` if not told).
    """

    job_ids: Annotated[tuple[str, ...], Field(alias="jobIds")]
    document_id: Annotated[str, Field(alias="documentId")]
    message: str
    tokens_available: Annotated[int | None, Field(alias="tokensAvailable")] = None


def _as_sent(value: object) -> object:
    # Not SkipValidation: with pydantic 2.9 it documents the field with a $ref that resolves to
    # nothing.
    return value


class Progress(TypedDict):
    """Live progress of an active job."""

    step: str | None
    message: str | None


@pydantic_dataclass(
    frozen=True,
    slots=True,
    config=ConfigDict(
        json_schema_extra=_answered(
            "One job's state; ``result`` only when completed.",
            ("id", "state", "error", "progress"),
            progress={"title": None},
            result={"title": "Result"},
        ),
    ),
)
class Job:
    """One job as polled (``POST /api/verify-reference/results``).

    Attributes:
        id: The job id.
        state: ``waiting``, ``active``, ``completed``, ``failed`` or ``not-found``.
        error: Why the job failed (``"cancelled"`` for a cancelled one), else ``None``.
        progress: Live progress of an active job (``{"step": ..., "message": ...}``).
        result: The verification result of a completed job, else ``None`` (and absent from
            the answer).
    """

    id: str
    state: JobState
    error: str | None = None
    # As the service sent it: the client reads any object here without failing.
    progress: Annotated[Progress | None, PlainValidator(_as_sent)] = None
    # On the wire, the result object's JSON (documented as an object, as the service stores it).
    result: Annotated[ReferenceResult | None, WithJsonSchema(_OBJECT_OR_NULL)] = None

    @property
    def done(self) -> bool:
        """Whether the job will not change any more (not waiting, not active)."""
        return self.state not in _PENDING


class Jobs(BaseModel):
    """``{"jobs": [...]}``."""

    jobs: list[Job]


class Balance(BaseModel):
    """The key's tokens."""

    totalAvailable: int
    subscriptionTokens: int
    purchasedTokens: int
    pendingTokens: int
    plan: str | None
    context: Literal["user", "team"]
    name: str | None
    email: str | None


class HistoryReference(BaseModel):
    """One reference of a past document."""

    id: str
    rawText: str
    status: str
    parsedData: dict[str, Any] | None
    verifiedAt: str | None


class HistoryDocument(BaseModel):
    """One past document (``fileName`` and ``format``: a document submitted whole)."""

    id: str
    title: str
    status: Literal["PENDING", "PROCESSING", "COMPLETED", "FAILED"] | None
    referenceCount: int
    createdAt: str
    references: list[HistoryReference]
    fileName: str | None = None
    format: str | None = None


class Pagination(BaseModel):
    """Where this page is."""

    total: int
    limit: int
    offset: int
    hasMore: bool


class History(BaseModel):
    """Past documents, newest first."""

    documents: list[HistoryDocument]
    pagination: Pagination


class CheckResult(BaseModel):
    """A verification result (``VerificationResult.to_dict()``) and where it was logged."""

    decision_id: str | None
    policy: str
    result: dict[str, Any]


class Policies(BaseModel):
    """The policy packs a request may name."""

    policies: list[dict[str, Any]]


class Decision(BaseModel):
    """One logged decision: what was decided, not the answer.

    ``content`` (the answer and documents) and ``result`` (the full verification result) only
    with ``--log-content``, in one decision's answer.
    """

    id: str
    created_at: str
    source: Literal["chat", "responses", "page"]
    policy: str
    status: int
    verdict: Literal["allow", "block"] | None
    action: Literal["allow", "flag", "redact", "block"] | None
    reason_code: str | None
    groundedness: float | None
    claim_confidence: float | None
    claims: int
    unsupported_claims: int
    quotes: int
    altered_quotes: int
    citations: dict[str, int]
    latency_ms: float
    enforced: bool
    stream: bool
    has_content: bool
    content: dict[str, Any] | None = None
    result: dict[str, Any] | None = None


class Decisions(BaseModel):
    """A page of decisions, newest first."""

    decisions: list[Decision]
    pagination: Pagination


class DailyCounts(BaseModel):
    """Decisions per day (UTC) and action."""

    days: list[dict[str, Any]]


class SplitReferences(BaseModel):
    """The references of a list, and the lines that are not references."""

    references: list[str]
    skipped: list[dict[str, Any]]


class Cancellation(BaseModel):
    """What a cancel did."""

    success: bool
    cancelledJobs: int
    refundedTokens: int
    documentId: str | None
    documentStatus: Literal["PENDING", "PROCESSING", "COMPLETED", "FAILED"] | None


# --- whole documents (POST /api/verify-document, GET /api/documents/{documentId}) -----------------


class DocumentReference(BaseModel):
    """One reference found in a document, and the job verifying it.

    ``number``, ``text``, ``label``, ``key``, ``location`` and ``end`` are the extractor's
    (:class:`~citeverify_core.references.document.ExtractedReference`); ``location`` is
    ``{"page": ..., "line": ...}`` (``page`` null for formats without pages; the whole
    location null for a list submitted to ``POST /api/verify-reference``).
    """

    model_config = ConfigDict(extra="allow")
    number: int
    text: str
    label: str | None = None
    key: str | None = None
    location: dict[str, int | None] | None = None
    end: dict[str, int | None] | None = None
    jobId: str


class DocumentCounts(BaseModel):
    """How much was found and queued."""

    references: int
    queued: int
    notVerifiable: int
    citations: int
    findings: int


class DocumentSubmission(BaseModel):
    """The answer to ``POST /api/verify-document``: the document as extracted and its jobs.

    ``jobIds[i]`` verifies ``references[i]``; a reference the verifier cannot take (longer than
    1,200 characters) has a job that is already ``failed`` and costs nothing. ``document`` is
    :meth:`~citeverify_core.references.document.ExtractedDocument.to_dict`: the references with
    their locations and labels, the in-text ``citations`` and the consistency ``findings``.
    """

    documentId: str
    jobIds: list[str]
    title: str | None
    fileName: str
    format: str
    references: list[DocumentReference]
    document: dict[str, Any]
    counts: DocumentCounts
    message: str
    tokensAvailable: int | None = None


class DocumentJob(DocumentReference):
    """A document's reference with its job's current state (and result once completed)."""

    state: JobState
    error: str | None = None
    result: dict[str, Any] | None = None


class DocumentLimits(BaseModel):
    """``GET /api/verify-document/limits``: what an upload may be."""

    maxBytes: int
    maxReferences: int
    formats: list[str]
    textFormats: list[str]


class DocumentView(BaseModel):
    """``GET /api/documents/{documentId}``: a past document, its references and their jobs."""

    documentId: str
    title: str | None
    fileName: str | None
    format: str | None
    createdAt: str
    status: Literal["PENDING", "PROCESSING", "COMPLETED", "FAILED"] | None
    referenceCount: int
    references: list[DocumentJob]
    document: dict[str, Any]
