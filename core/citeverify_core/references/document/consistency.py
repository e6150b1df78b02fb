"""Citations in the text against the reference list.

First version (to be replaced): finds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from citeverify_core.references.document.model import (
    ConsistencyFinding,
    DocumentLine,
    ExtractedReference,
    InTextCitation,
)

__all__ = ["check_consistency"]


def check_consistency(
    body: Sequence[DocumentLine], references: Sequence[ExtractedReference]
) -> tuple[list[InTextCitation], list[ConsistencyFinding]]:
    """The in-text citations of ``body``, matched to ``references``, and the disagreements."""
    del body, references
    return [], []
