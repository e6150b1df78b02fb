"""Find a document's reference list and split it into references.

First version (to be replaced): the lines after the last heading that names a reference list,
one reference per paragraph or per labelled line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from citeverify_core.references.document.model import (
    DocumentLine,
    DocumentText,
    ExtractedReference,
)

__all__ = ["FoundReferences", "find_references"]

_HEADING = re.compile(
    r"^\s*(?:#+\s*)?(?:\d+\.?\s+)?(references|bibliography|works cited|literature cited|"
    r"literatur|références|bibliographie|referencias|bibliografía|riferimenti)\s*:?\s*$",
    re.I,
)
_LABEL = re.compile(r"^\s*(?:\[(?P<b>[^\]\s]{1,12})\]|(?P<n>\d{1,4})\.)\s+")


@dataclass(slots=True)
class FoundReferences:
    """The reference list of a document and the rest of it.

    Attributes:
        references: The entries, in order.
        body: The lines outside the list (where in-text citations are looked for).
        heading: The heading the list was found under, or how it was found.
        notes: What a person should know ("the list ends before 'Appendix A', page 14").
    """

    references: list[ExtractedReference]
    body: list[DocumentLine]
    heading: str | None = None
    notes: list[str] = field(default_factory=list)


def find_references(text: DocumentText) -> FoundReferences:
    """The reference list of ``text``: its entries with labels and locations, and the body."""
    if text.entries is not None:
        return FoundReferences(text.entries, text.lines, heading="entries of the format")
    start = None
    for i, line in enumerate(text.lines):
        if _HEADING.match(line.text):
            start = i
    if start is None:
        return FoundReferences([], text.lines)
    heading = _HEADING.match(text.lines[start].text)
    groups: list[list[DocumentLine]] = []
    for line in text.lines[start + 1 :]:
        if not line.text.strip():
            if groups and groups[-1]:
                groups.append([])
            continue
        if _LABEL.match(line.text) or line.starts_paragraph or not groups:
            groups.append([line])
        else:
            groups[-1].append(line)
    references: list[ExtractedReference] = []
    for group in (g for g in groups if g):
        joined = " ".join(line.text.strip() for line in group)
        label = None
        if m := _LABEL.match(joined):
            label = m.group("b") or m.group("n")
            joined = joined[m.end() :]
        references.append(
            ExtractedReference(
                text=" ".join(joined.split()),
                number=len(references) + 1,
                location=group[0].location,
                label=label or group[0].label,
                end=group[-1].location if len(group) > 1 else None,
            )
        )
    return FoundReferences(
        references, text.lines[:start], heading=heading.group(1) if heading else None
    )
