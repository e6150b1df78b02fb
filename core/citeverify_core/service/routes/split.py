"""Splitting a pasted reference list or a .bib file into references to submit."""

# No `from __future__ import annotations`: FastAPI reads the endpoints' annotations at runtime.

from typing import Any

from fastapi import APIRouter

from citeverify_core.references.parse import split_reference_list
from citeverify_core.service.routes.dependencies import ERRORS, Key
from citeverify_core.service.schema import SplitBody, SplitReferences

__all__ = ["router"]

router = APIRouter()


@router.post("/api/references/split", response_model=SplitReferences, responses=ERRORS)
def split_references(body: SplitBody, _key: Key) -> dict[str, Any]:
    """The references of a pasted list or a .bib file, and the lines that are not."""
    # BibTeX entries keep their bibliographic fields only: an abstract would take an entry
    # over the 1,200 characters that POST /api/verify-reference accepts.
    references, skipped = split_reference_list(
        body.text, bibtex=body.format == "bib", bibliographic_only=True
    )
    return {
        "references": [text for _, text in references],
        "skipped": [
            {"line": line, "reason": reason, "text": text} for line, reason, text in skipped
        ],
    }
