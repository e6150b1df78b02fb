"""Page furniture a reader left: running headers and footers, page numbers (issue 26)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from citeverify_core.references.document.model import (
    DocumentLine,
)
from citeverify_core.references.document.segment_patterns import (
    PAGE_NUMBER,
)

__all__ = ["page_furniture", "running_text"]


T = TypeVar("T")


def page_furniture(lines: Sequence[DocumentLine]) -> set[int]:
    """Indices of lines that are a page's running header or footer, or its page number.

    Only lines among the first two or last two of a page count: a line whose text (digits
    aside) is at an edge of at least three pages (two when the document has three pages or
    fewer), and a page number alone at an edge.
    """
    edges: dict[int, list[int]] = {}
    for i, line in enumerate(lines):
        if line.location.page is not None:
            edges.setdefault(line.location.page, []).append(i)
    if len(edges) < 2:
        return set()
    edge_indices: list[int] = []
    for indices in edges.values():
        edge_indices.extend(indices[:2])
        edge_indices.extend(i for i in indices[-2:] if i not in indices[:2])
    furniture: set[int] = set()
    by_text: dict[str, set[int]] = {}
    for i in edge_indices:
        raw = lines[i].text.strip()
        if not raw or len(raw) > 150:
            continue
        if PAGE_NUMBER.match(raw):
            furniture.add(i)
            continue
        shape = re.sub(r"\d+", "#", raw.casefold())
        by_text.setdefault(shape, set()).add(i)
    needed = 2 if len(edges) <= 3 else 3
    for same in by_text.values():
        found = [(lines[i].location.page or 0, lines[i].text.strip(), i) for i in same]
        furniture.update(running_text(found, needed))
    return furniture


_DIGITS = re.compile(r"\d+")


def running_text(found: Sequence[tuple[int, str, T]], needed: int) -> list[T]:
    """Of ``(page, text, item)`` lines of one shape (digits aside), those that are running text.

    They are when they stand on at least ``needed`` pages and their numbers either agree or
    move with the page (a page number, "Page 3 of 9", "Vol. 3 (2020) 112"). Lines whose numbers
    differ otherwise are the text's own ("(1938)." ending a reference at the foot of several
    pages): only the lines among them that are the same word for word can be running text.
    """
    if len({page for page, _, _ in found}) < needed:
        return []
    numbers = [(page, [int(d) for d in _DIGITS.findall(text)[:8]]) for page, text, _ in found]
    if (
        len({text for _, text, _ in found}) == 1
        or not numbers[0][1]
        or any(
            len({nums[k] - page for page, nums in numbers}) == 1
            for k in range(min(len(nums) for _, nums in numbers))
        )
    ):
        return [item for _, _, item in found]
    by_text: dict[str, list[tuple[int, str, T]]] = {}
    for place in found:
        by_text.setdefault(place[1], []).append(place)
    return [
        item
        for same in by_text.values()
        if len({page for page, _, _ in same}) >= needed
        for _, _, item in same
    ]
