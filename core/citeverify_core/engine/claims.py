"""Claims: which words of each claim the context holds, its best and cited documents.

The hot path of a verification (benchmark if changing): each claim is scored against the small
per-document sets of the answer's words that :func:`~citeverify_core.engine.context.document_hits`
found, never against the context again.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import operator
import re
from collections import Counter
from collections.abc import Container, Iterable

from citeverify_core.engine.results import ClaimResult, assemble
from citeverify_core.text import ASCII_NON_WORD, Piece, words

__all__ = [
    "BestDocuments",
    "Marker",
    "best_document_reference",
    "claim_at",
    "drop_marker_only",
    "markers_by_claim",
    "score_claim",
    "with_spans",
    "without_markers",
    "words_of_claims",
    "words_of_claims_reference",
]

Marker = tuple[int, int, list[int]]


def markers_by_claim(pieces: list[Piece], markers: list[Marker]) -> list[list[Marker]]:
    """The markers that start inside each claim (both lists are in text order: one merge)."""
    out: list[list[Marker]] = []
    i = 0
    for p in pieces:
        while i < len(markers) and markers[i][0] < p.start:
            i += 1
        j = i
        while j < len(markers) and markers[j][0] < p.end:
            j += 1
        out.append(markers[i:j])
        i = j
    return out


def with_spans(markers: list[Marker], spans: list[tuple[int, int]]) -> list[Marker]:
    """``markers`` and the citation marker ``spans`` (which cite no numbered source), merged.

    Both are in text order; overlapping ones become one marker citing the sources of both, so
    that each claim's markers stay disjoint and in order (:func:`without_markers` needs it).
    """
    merged: list[Marker] = []
    for start, end, numbers in sorted([*markers, *((s, e, []) for s, e in spans)]):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(end, last[1]), [*last[2], *numbers])
        else:
            merged.append((start, end, numbers))
    return merged


def drop_marker_only(
    pieces: list[Piece],
    markers: list[list[Marker]],
    claim_words: list[list[str]],
    answer: str | None = None,
) -> tuple[list[Piece], list[list[Marker]], list[list[str]]]:
    """Claims that are only markers ("[1]" alone on a line, "(Source: a.md)") are not claims.

    Their markers cite for the claim before them; with no claim before, they are dropped. Given
    the ``answer``, a claim followed on its line by such markers ("It opens at nine. (Source:
    a.md)") takes them into its span, so that a redaction removes the claim with its citation.
    """
    if all(claim_words):
        return pieces, markers, claim_words
    kept: tuple[list[Piece], list[list[Marker]], list[list[str]]] = ([], [], [])
    for piece, marks, cw in zip(pieces, markers, claim_words, strict=True):
        if cw:
            kept[0].append(piece)
            kept[1].append(list(marks))
            kept[2].append(cw)
        elif kept[1]:
            kept[1][-1].extend(marks)
            last = kept[0][-1]
            if answer is not None and not _LINE_BREAK.search(answer, last.end, piece.start):
                kept[0][-1] = Piece(last.start, piece.end, answer[last.start : piece.end])
    return kept


_LINE_BREAK = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


#: Claims against at most this many documents are scored by comparing them with each document.
_SCAN_DOCUMENTS = 8
#: Memory for the per-word document lanes of :class:`BestDocuments` (one byte per document and
#: supported word); past it, the postings path with its work budget is used.
_LANE_BYTES = 32 << 20


def best_document_reference(
    claim_words: Iterable[str], hits: list[set[str]]
) -> tuple[int | None, int]:
    """The straightforward best document: most shared words, the first on ties.

    The reference for :class:`BestDocuments` (tests/engine/test_speed_equivalence.py): every claim
    against every document.
    """
    claim = set(claim_words)
    best, best_count = None, 0
    for i, h in enumerate(hits):
        count = len(claim & h)
        if count > best_count:
            best, best_count = i, count
    return best, best_count


class BestDocuments:
    """For a claim, the document sharing the most of its words (the first on ties).

    Three ways, the same answers as :func:`best_document_reference`:

    - few documents: each claim is compared with each document (set intersections);
    - otherwise, an inverted index whose entries are *lanes*: for each supported word, an integer
      holding one byte per document (1 where the document has the word). A claim's lanes added
      together give, in one big-integer sum at C speed, every document's count of the claim's
      words; the best is the first byte holding the highest count (``bytes.find``). Building the
      lanes is one C-level pass over the per-document hits (200 claims against 10,000
      documents, no per-claim pass over the documents);
    - when the lanes would need more than ``lane_bytes``, postings lists (word -> documents)
      counted per claim, with the work bounded per answer by ``budget`` postings; past it, a
      claim's best document is the first one holding its rarest supported word
      (docs/semantics.md).

    Claims with the same supported words share one answer.
    """

    def __init__(
        self,
        hits: list[set[str]],
        budget: int = 1_000_000,
        *,
        lane_bytes: int = _LANE_BYTES,
        scan_documents: int = _SCAN_DOCUMENTS,
    ) -> None:
        self._hits = hits
        self._n = n = len(hits)
        self._memo: dict[frozenset[str], tuple[int | None, int]] = {}
        self._budget = budget
        self._lanes: dict[str, int] | None = None
        self._postings: dict[str, list[int]] = {}
        self._sets: dict[str, set[int]] = {}
        self._scan_documents = scan_documents
        #: The words some document holds (the postings' keys; only used past a few documents).
        self._words: Container[str] = self._postings
        if n <= scan_documents:
            return
        postings: collections.defaultdict[str, list[int]] = collections.defaultdict(list)
        for i, h in enumerate(hits):
            for w in h:
                postings[w].append(i)
        self._postings = self._words = postings
        if len(self._postings) * n <= lane_bytes:
            self._lanes = {w: _lane(docs, n) for w, docs in self._postings.items()}

    def __call__(self, claim_words: Iterable[str]) -> tuple[int | None, int]:
        """The best document for ``claim_words`` and how many of them it holds."""
        if self._n <= self._scan_documents:  # a few set intersections at C speed
            claim = (
                claim_words if isinstance(claim_words, list | set | frozenset) else [*claim_words]
            )
            best, best_count = None, 0
            for i, h in enumerate(self._hits):
                count = len(h.intersection(claim))
                if count > best_count:
                    best, best_count = i, count
            return best, best_count
        return self._indexed(claim_words)

    def best(self, claim_words: list[str], most: int) -> tuple[int | None, int]:
        """``self(claim_words)``, knowing that ``most`` of the words are in some document.

        A scan of a few documents stops at the first one holding ``most`` words: no later one
        can hold more (the claim's words must be distinct).
        """
        if self._n > self._scan_documents:
            return self._indexed(claim_words)
        best, best_count = None, 0
        for i, h in enumerate(self._hits):
            count = len(h.intersection(claim_words))
            if count > best_count:
                best, best_count = i, count
                if count >= most:
                    break
        return best, best_count

    def _indexed(self, claim_words: Iterable[str]) -> tuple[int | None, int]:
        present = frozenset(w for w in claim_words if w in self._words)
        if not present:
            return None, 0
        if present not in self._memo:
            if self._lanes is not None:
                self._memo[present] = self._by_lanes(present, self._lanes)
            else:
                self._memo[present] = self._find(present)
        return self._memo[present]

    def _by_lanes(self, present: frozenset[str], lanes: dict[str, int]) -> tuple[int, int]:
        n = self._n
        words = list(present)
        if len(words) <= 255:  # a byte per document holds the count
            counts = sum(map(lanes.__getitem__, words)).to_bytes(n, "little")
            for c in range(len(words), 0, -1):
                i = counts.find(c)
                if i >= 0:
                    return i, c
            raise AssertionError("a present word is in some document")  # pragma: no cover
        total = [0] * n
        for k in range(0, len(words), 255):
            part = sum(map(lanes.__getitem__, words[k : k + 255])).to_bytes(n, "little")
            total = list(map(operator.add, total, part))
        top = max(total)
        return total.index(top), top

    def _find(self, present: frozenset[str]) -> tuple[int | None, int]:
        by_rarity = sorted(present, key=lambda w: len(self._postings[w]))
        rarest, others = self._postings[by_rarity[0]], by_rarity[1:]
        if not others:
            return rarest[0], 1
        # A document holding all the words is the best; the first such is usually found among
        # the first holders of the rarest word.
        sets = [self._set(w) for w in others]
        for doc in rarest[:64]:
            if all(doc in s for s in sets):
                return doc, len(present)
        cost = sum(len(self._postings[w]) for w in present)
        if cost > self._budget:
            return rarest[0], len(present & self._words_of(rarest[0], present))
        self._budget -= cost
        counts: Counter[int] = Counter()
        for w in present:
            counts.update(self._postings[w])
        top = max(counts.values())
        return min(doc for doc, c in counts.items() if c == top), top

    def _set(self, word: str) -> set[int]:
        if word not in self._sets:
            self._sets[word] = set(self._postings[word])
        return self._sets[word]

    def _words_of(self, doc: int, words: frozenset[str]) -> set[str]:
        return {w for w in words if doc in self._set(w)}


def _lane(documents: list[int], n: int) -> int:
    """An integer with one byte per document: 1 for ``documents``, 0 elsewhere."""
    lane = bytearray(n)
    collections.deque(map(lane.__setitem__, documents, itertools.repeat(1)), 0)  # C-level loop
    return int.from_bytes(lane, "little")


#: The fields a claim leaves out of its JSON: without the context, and with it.
_UNCHECKED_UNSET = frozenset(
    {"cited_groundedness", "misattributed", "problems", "tier", "semantic_score"}
)
_CHECKED_UNSET = frozenset({"problems", "tier", "semantic_score"})


def score_claim(
    piece: Piece,
    claim_words: list[str],
    hits: list[set[str]],
    supported: set[str],
    markers: list[Marker],
    best_documents: BestDocuments,
    document_count: int,
    min_groundedness: float,
    written: dict[str, str] | None = None,
) -> ClaimResult:
    """One claim's result: its share of words in the context, best and cited documents.

    ``hits`` are the documents' sets of the answer's words (empty: the context is not checked),
    ``supported`` their union; ``written`` maps compared words (stems) back to how they were
    written, for ``missing_words``.
    """
    # Hot path (benchmark if changing): set operations only, no rescans of the context.
    n = len(claim_words)
    cited = sorted({num - 1 for _, _, nums in markers for num in nums}) if markers else []
    if not hits:  # context not checked
        return assemble(
            ClaimResult,
            {
                "text": piece.text,
                "span": (piece.start, piece.end),
                "groundedness": None,
                "verified": None,
                "word_count": n,
                "missing_words": [],
                "best_document": None,
                "best_document_groundedness": None,
                "cited_documents": cited,
                "cited_groundedness": None,
                "misattributed": None,
                "problems": [],
                "tier": "words",
                "semantic_score": None,
                "_unset": _UNCHECKED_UNSET,
            },
        )
    missing = list(itertools.filterfalse(supported.__contains__, claim_words))
    shown = [written[w] for w in missing] if written is not None else missing  # stems: as written
    found = n - len(missing)
    best, best_count = best_documents.best(claim_words, found) if found else (None, 0)
    score = found / n
    cited_score: float | None = None
    misattributed: bool | None = None
    if cited:
        in_range = [i for i in cited if 0 <= i < document_count]
        cited_hits: set[str] = set().union(*(hits[i] for i in in_range))
        cited_score = sum(1 for w in claim_words if w in cited_hits) / n
        misattributed = len(in_range) < len(cited) or cited_score < min_groundedness
    return assemble(
        ClaimResult,
        {
            "text": piece.text,
            "span": (piece.start, piece.end),
            "groundedness": score,
            "verified": score >= min_groundedness,
            "word_count": n,
            "missing_words": shown,
            "best_document": best,
            "best_document_groundedness": best_count / n if best is not None else None,
            "cited_documents": cited,
            "cited_groundedness": cited_score,
            "misattributed": misattributed,
            "problems": [],
            "tier": "words",
            "semantic_score": None,
            "_unset": _CHECKED_UNSET,
        },
    )


def without_markers(piece: Piece, markers: list[Marker], source: str | None = None) -> str:
    """The claim's text without its inline markers (each replaced by a space).

    ``source``: a text of the answer's length and offsets to cut from instead of the answer.
    """
    text = piece.text if source is None else source[piece.start : piece.end]
    if not markers:
        return text
    parts, last = [], piece.start
    for s, e, _ in markers:
        if e <= piece.end:
            parts.append(text[last - piece.start : s - piece.start])
            last = e
    parts.append(text[last - piece.start :])
    return " ".join(parts)


def words_of_claims_reference(
    pieces: list[Piece], claim_markers: list[list[Marker]]
) -> list[list[str]]:
    """Each claim's unique words, the straightforward way: :func:`words` of each claim.

    The reference for :func:`words_of_claims` (tests/engine/test_speed_equivalence.py).
    """
    return [
        list(dict.fromkeys(words(without_markers(p, m))))
        for p, m in zip(pieces, claim_markers, strict=True)
    ]


def words_of_claims(
    answer: str, pieces: list[Piece], claim_markers: list[list[Marker]]
) -> list[list[str]]:
    """Each claim's unique words, in order: :func:`words_of_claims_reference`, faster.

    An ASCII answer is lowered and its non-word characters blanked once, as :func:`words` does
    for each claim (both keep every offset); each claim's words are then a split of its slice
    (per-claim calls were a fixed cost of small answers).
    """
    if not answer.isascii():
        return words_of_claims_reference(pieces, claim_markers)
    folded = answer.lower().translate(ASCII_NON_WORD)
    return [
        list(dict.fromkeys((without_markers(p, m, folded) if m else folded[p[0] : p[1]]).split()))
        for p, m in zip(pieces, claim_markers, strict=True)
    ]


def claim_at(claims: list[ClaimResult], pos: int) -> ClaimResult | None:
    """The claim whose span holds ``pos`` (claims are disjoint and in order: a bisection)."""
    i = bisect.bisect_right(claims, pos, key=lambda c: c.span[0]) - 1
    if i >= 0 and claims[i].span[0] <= pos < claims[i].span[1]:
        return claims[i]
    return None
