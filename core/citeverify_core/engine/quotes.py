"""Quotes: each quotation of the answer searched for in the context documents."""

from __future__ import annotations

from citeverify_core.engine.context import ContextDocument, ContextSearch
from citeverify_core.engine.results import Citation, QuoteResult, assemble
from citeverify_core.text import QuoteSpan, match_normalize, trim_outer_punctuation

__all__ = ["MAX_QUOTES", "match_quotes", "quote_citation"]

#: At most this many quotes of one answer are listed and searched in the context; the result's
#: notes say when there were more, and ``strict_quotes`` then fails the answer. Each quote costs a
#: search of every document: unbounded, 100,000 short quotes against 1 MB took minutes.
MAX_QUOTES = 500


def match_quotes(quotes: list[QuoteSpan], docs: list[ContextDocument] | None) -> list[QuoteResult]:
    """Each quote against the documents (``matched`` None: no documents to check against).

    Searched through the same :class:`ContextSearch` as case law and statutes; the same quote is
    located once.
    """
    search = ContextSearch(docs or [], limit=MAX_QUOTES)  # the quotes are capped already
    located: dict[str, tuple[int, tuple[int, int] | None] | None] = {}
    results = []
    for q in quotes:
        needle = trim_outer_punctuation(match_normalize(q.text))
        matched: bool | None = None
        document: int | None = None
        document_span: tuple[int, int] | None = None
        if docs is not None:
            if needle not in located:
                i = search.first(needle)[1] if needle else None
                located[needle] = None if i is None else (i, docs[i].find(needle))
            hit = located[needle]
            matched = hit is not None
            if hit is not None:
                document, document_span = hit
        results.append(
            assemble(
                QuoteResult,
                {
                    "text": q.text,
                    "span": (q.start, q.end),
                    "normalized": needle,
                    "matched": matched,
                    "document": document,
                    "document_span": document_span,
                },
            )
        )
    return results


def quote_citation(q: QuoteResult) -> Citation:
    """The citation that a quote's match (or its absence) stands for."""
    if q.matched is None:
        status, reason = "unchecked", "not checked: no context documents to compare with"
    elif q.matched:
        # Numbered from 1, as the answer's markers and the report number documents.
        where = "" if q.document is None else f" {q.document + 1}"
        status, reason = "matched", f"found in context document{where}"
    else:
        status, reason = "not_found", "not found in any context document"
    return assemble(
        Citation,
        {
            "type": "quote",
            "text": q.text,
            "span": q.span,
            "kind": "quote",
            "normalized": q.normalized,
            "verified": q.matched,
            "status": status,
            "reason": reason,
        },
    )
