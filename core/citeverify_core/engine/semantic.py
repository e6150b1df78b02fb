"""The semantic tier: a second score, by meaning, for claims that fail on words.

Off by default. ``CitationVerifier(policy, semantic=scorer)`` turns it on with a scorer the user
already has; the core imports no framework and recognizes these shapes (duck typing):

- a LangChain ``Embeddings`` (``embed_documents``, ``aembed_documents``);
- a LlamaIndex embedding model (``get_text_embedding_batch``, ``aget_text_embedding_batch``);
- a sentence-transformers ``SentenceTransformer`` (``encode``);
- any callable ``(claim, passages) -> score``, sync or async, with a score in [0, 1] (an NLI
  cross-encoder's entailment probability fits here).

For an embedding model the score of a claim is the cosine similarity of the claim with its most
similar passage (clipped at 0); every claim and passage of one answer is embedded in one batched
call. A callable is called once per claim.

Steps: :func:`select_passages` (pure) picks, for each claim that failed on words, the
best-matching windows of the context, bounded in number and size; :meth:`SemanticTier.score`
(the only I/O, awaited, under the policy's timeout) asks the scorer; the verifier applies the
scores. Whatever the scorer does (raises, hangs, returns NaN, a string, a score out of range, the
wrong number of vectors), no claim passes because of it: the claims concerned keep their word
verdict and ``result.notes`` says what went wrong. A claim is never judged on a cut version of
itself: one longer than ``max_passage_chars`` is not sent.
"""

from __future__ import annotations

import collections
import heapq
import inspect
import math
import numbers
import operator
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from citeverify_core.errors import InputError
from citeverify_core.text import WordMatcher, split_claims, words

__all__ = [
    "MAX_SCAN_CHARS",
    "Passages",
    "SemanticOutcome",
    "SemanticScorer",
    "SemanticTier",
    "WindowCache",
    "select_passages",
]

#: Characters of context split into sentences per answer at most, to find the passages of long
#: documents (a document past the budget offers only its first window). Untrusted documents must
#: not make the tier cost more than a tokenization pass or two.
MAX_SCAN_CHARS = 2_000_000
#: Sentences read per document at most.
_MAX_SENTENCES = 20_000
#: Candidate documents per claim: the ones sharing most of its words.
_MAX_DOCUMENTS = 3
#: Past this many documents, the candidates are the claim's best and cited documents only
#: (ranking every document for every failing claim would cost claims x documents).
_RANK_DOCUMENTS = 256


@runtime_checkable
class SemanticScorer(Protocol):
    """A scorer of one claim against its passages: a score in [0, 1], higher is better support.

    Async scorers (``async def``) are awaited.
    """

    def __call__(self, claim: str, passages: list[str], /) -> float | Awaitable[float]:
        """Score ``claim`` against ``passages`` (the best-matching context windows)."""


@dataclass(frozen=True, slots=True)
class Passages:
    """One claim to score: its index among the answer's claims, its text, its passages."""

    claim: int
    text: str
    passages: list[str]


@dataclass(frozen=True, slots=True)
class SemanticOutcome:
    """Scores per claim index (only valid ones) and what went wrong, for ``result.notes``."""

    scores: dict[int, float]
    notes: list[str]


# --- passages (pure) -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _DocumentWindows:
    """One document's windows, in document order, and which windows hold each compared word."""

    texts: list[str]
    postings: dict[str, list[int]]
    chars: int


class WindowCache:
    """The windows of documents seen before (bounded), so that a document is split once.

    Keyed by the document's text and how words are compared; thread-safe. Repeated answers
    against the same retrieval (a chain, the context cache's use) pay the split once.

    A cache does not travel: pickled or deep-copied, it keeps its limits and arrives empty.
    """

    def __init__(self, *, max_chars: int = 4_000_000, max_documents: int = 256) -> None:
        self._max_chars = max_chars
        self._max_documents = max_documents
        self._chars = 0
        self._items: collections.OrderedDict[tuple[str, WordMatcher, int], _DocumentWindows] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, int]:
        return {"max_chars": self._max_chars, "max_documents": self._max_documents}

    def __setstate__(self, state: dict[str, int]) -> None:
        WindowCache.__init__(self, **state)

    def get(self, key: tuple[str, WordMatcher, int]) -> _DocumentWindows | None:
        """The windows kept for ``key``, or None."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, WordMatcher, int], value: _DocumentWindows) -> None:
        """Keep ``value`` (the least recently used go when a bound is passed)."""
        if value.chars > self._max_chars:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self._chars += value.chars
            while self._chars > self._max_chars or len(self._items) > self._max_documents:
                _, old = self._items.popitem(last=False)
                self._chars -= old.chars


class _Windows:
    """The windows of the context documents, split on demand, at most once per answer."""

    def __init__(
        self,
        texts: Sequence[str],
        matcher: WordMatcher,
        max_chars: int,
        cache: WindowCache | None,
    ) -> None:
        self._texts = texts
        self._matcher = matcher
        self._max_chars = max_chars
        self._cache = cache
        self._budget = MAX_SCAN_CHARS
        self._done: dict[int, _DocumentWindows] = {}

    def of(self, doc: int) -> _DocumentWindows:
        """The windows of one document."""
        if doc not in self._done:
            text = self._texts[doc]
            key = (text, self._matcher, self._max_chars)
            found = self._cache.get(key) if self._cache is not None else None
            if found is None:
                found, whole = self._split(text)
                if self._cache is not None and whole:
                    self._cache.put(key, found)
            self._done[doc] = found
        return self._done[doc]

    def _split(self, text: str) -> tuple[_DocumentWindows, bool]:
        """The windows of ``text``, and whether all of it was read (within the scan budget)."""
        size = self._max_chars
        whole = True
        if len(text) <= size:
            # A RAG chunk: the whole document, and its sentences (an embedding of a whole chunk
            # is diluted by what the claim does not talk about).
            sentences = [p.text for p in split_claims(text, limit=_MAX_SENTENCES)]
            pieces = [text, *sentences] if len(sentences) > 1 else [text]
        else:
            scan = text[: max(self._budget, size)]
            whole = len(scan) == len(text)
            self._budget = max(0, self._budget - len(scan))
            pieces = [
                p.text[k : k + size]  # a sentence longer than a passage: in passage-long parts
                for p in split_claims(scan, limit=_MAX_SENTENCES)[:_MAX_SENTENCES]
                for k in range(0, len(p.text), size)
            ]
        kept = [p for p in pieces if p.strip()]
        postings: collections.defaultdict[str, list[int]] = collections.defaultdict(list)
        for i, piece in enumerate(kept):
            for key in self._keys(piece):
                postings[key].append(i)
        windows = _DocumentWindows(kept, dict(postings), sum(map(len, kept)))
        return windows, whole and len(kept) < _MAX_SENTENCES

    def _keys(self, text: str) -> set[str]:
        m = self._matcher
        if m.exact:
            return set(words(text))
        return set(m.keys(list(m.token_set(text))))


def select_passages(
    claims: Sequence[tuple[int, str, list[str], int | None, list[int]]],
    texts: Sequence[str],
    hits: Sequence[set[str]],
    matcher: WordMatcher,
    *,
    max_passages: int,
    max_chars: int,
    cache: WindowCache | None = None,
) -> list[Passages]:
    """The passages of each claim: the context windows that share the most of its words.

    Args:
        claims: (claim index, claim text, compared words, best document, cited documents).
        texts: The context documents.
        hits: For each document, the answer's compared words it holds.
        matcher: How words are compared (the policy's matching options).
        max_passages: Passages per claim at most.
        max_chars: Longest passage: a document up to it is a window, and so is each of its
            sentences; a longer one offers only its sentences (cut to ``max_chars``).
        cache: Where the windows of documents seen before are kept.

    Candidate documents are the few sharing most of the claim's words (all documents are ranked
    up to a few hundred; past that, the best and cited documents); their windows are ranked by
    shared words, ties by document rank then position. Windows are counted through postings
    (word -> windows), so a claim costs the windows holding its words, not every window.
    """
    windows = _Windows(texts, matcher, max_chars, cache)
    out = []
    n = len(texts)
    for index, text, claim_words, best, cited in claims:
        wanted = set(claim_words)
        if n <= _RANK_DOCUMENTS:
            counts = [(len(wanted & h), -i) for i, h in enumerate(hits)]
            top = heapq.nlargest(_MAX_DOCUMENTS, counts)
            docs = [-i for _, i in top]
        else:
            docs = list(dict.fromkeys(d for d in [best, *cited] if d is not None and 0 <= d < n))
            docs = docs[:_MAX_DOCUMENTS] or [0]
        ranked: list[tuple[int, int, int]] = []  # (-shared words, document rank, position)
        for rank, doc in enumerate(docs):
            w = windows.of(doc)
            shared: collections.Counter[int] = collections.Counter()
            for word in wanted:
                if (holders := w.postings.get(word)) is not None:
                    shared.update(holders)
            ranked += heapq.nsmallest(max_passages, ((-c, rank, pos) for pos, c in shared.items()))
        chosen = heapq.nsmallest(max_passages, ranked)
        if len(chosen) < max_passages:  # too few windows share a word: the first ones follow
            taken = {(rank, pos) for _, rank, pos in chosen}
            for rank, doc in enumerate(docs):
                for pos in range(len(windows.of(doc).texts)):
                    if len(chosen) == max_passages:
                        break
                    if (rank, pos) not in taken:
                        chosen.append((0, rank, pos))
        out.append(
            Passages(index, text, [windows.of(docs[rank]).texts[pos] for _, rank, pos in chosen])
        )
    return out


# --- the scorer (I/O) ----------------------------------------------------------------------------

_Embed = Callable[[list[str]], Any]


class SemanticTier:
    """The user's scorer, recognized once, and the one place its failures become notes.

    Pickled or deep-copied (with its verifier), the tier carries the scorer and nothing else:
    the scorer travels if it pickles itself (a function defined at a module's top level, a
    LangChain or LlamaIndex embedding model made of plain settings; a model holding a client,
    a lock or a GPU handle may not), and the window cache is rebuilt empty.

    Raises:
        InputError: ``scorer`` is none of the recognized shapes (at construction).
    """

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        #: The windows of documents seen before (a chain checks many answers against one
        #: retrieval): each is split into sentences once.
        self.windows = WindowCache()
        self._embed: _Embed | None = None
        self._aembed: Callable[[list[str]], Awaitable[Any]] | None = None
        self._call: Callable[..., Any] | None = None
        if callable(getattr(scorer, "embed_documents", None)):  # LangChain Embeddings
            self.kind = "LangChain embeddings"
            self._embed = scorer.embed_documents
            self._aembed = getattr(scorer, "aembed_documents", None)
        elif callable(getattr(scorer, "get_text_embedding_batch", None)):  # LlamaIndex
            self.kind = "LlamaIndex embedding model"
            self._embed = scorer.get_text_embedding_batch
            self._aembed = getattr(scorer, "aget_text_embedding_batch", None)
        elif callable(getattr(scorer, "encode", None)) and not isinstance(scorer, str | bytes):
            self.kind = "encoder"  # sentence-transformers: encode(list) -> array
            self._embed = scorer.encode
        elif callable(scorer):
            self.kind = "scorer"
            self._call = scorer
        else:
            msg = (
                "semantic must be a callable (claim, passages) -> score in [0, 1], a LangChain "
                "Embeddings, a LlamaIndex embedding model or a sentence-transformers model; got "
                f"{type(scorer).__name__}"
            )
            raise InputError(msg, path="semantic")

    def __getstate__(self) -> dict[str, Any]:
        # The scorer only: the methods found on it are looked up again, the windows rebuilt.
        return {"scorer": self.scorer}

    def __setstate__(self, state: dict[str, Any]) -> None:
        SemanticTier.__init__(self, state["scorer"])

    async def score(self, items: list[Passages], *, timeout: float) -> SemanticOutcome:
        """Score every item, within ``timeout`` seconds in all.

        Never raises for what the scorer does: a failure leaves the items concerned without a
        score and adds a note.
        """
        import asyncio  # noqa: PLC0415 (`import citeverify_core` and its names stay off asyncio)

        if not items:
            return SemanticOutcome({}, [])
        stop: list[bool] = []  # set on timeout: a sync scorer in its thread stops between claims
        try:
            if self._call is not None:
                work = self._score_calls(items, stop)
            else:
                work = self._score_embeddings(items)
            scores, notes = await asyncio.wait_for(work, timeout)
        except TimeoutError:
            stop.append(True)
            return SemanticOutcome({}, [self._note(f"no answer within {timeout:g} s", len(items))])
        except Exception as exc:  # user code: its failure is data (one place)
            return SemanticOutcome({}, [self._note(_describe(exc), len(items))])
        return SemanticOutcome(scores, notes)

    def _note(self, what: str, count: int) -> str:
        return f"semantic tier ({self.kind}): {what}; {count} claim(s) kept their word verdict"

    async def _score_calls(
        self, items: list[Passages], stop: list[bool]
    ) -> tuple[dict[int, float], list[str]]:
        import asyncio  # noqa: PLC0415 (`import citeverify_core` and its names stay off asyncio)

        call = self._call
        assert call is not None
        scores: dict[int, float] = {}
        bad: list[str] = []
        if _is_async(call):
            results = await asyncio.gather(
                *(call(it.text, list(it.passages)) for it in items), return_exceptions=True
            )
        else:

            def run() -> list[Any]:
                out: list[Any] = []
                for it in items:
                    if stop:
                        break
                    try:
                        out.append(call(it.text, list(it.passages)))
                    except Exception as exc:  # user code, mapped below
                        out.append(exc)
                        break  # a broken scorer is not asked again for every claim
                return out

            results = await asyncio.to_thread(run)
        for it, value in zip(items, results, strict=False):
            if isinstance(value, BaseException):
                if not isinstance(value, Exception):
                    raise value  # KeyboardInterrupt and the like are not the scorer's answer
                bad.append(_describe(value))
                continue
            answer = await value if inspect.isawaitable(value) else value
            number = _unit_score(answer)
            if number is None:
                bad.append(f"unusable score {_brief(answer)} (a number in [0, 1] is needed)")
            else:
                scores[it.claim] = number
        notes = []
        missing = len(items) - len(scores)
        if missing:
            what = bad[0] if bad else "no score"
            notes.append(self._note(what, missing))
        return scores, notes

    async def _score_embeddings(self, items: list[Passages]) -> tuple[dict[int, float], list[str]]:
        import asyncio  # noqa: PLC0415 (`import citeverify_core` and its names stay off asyncio)

        texts = list(dict.fromkeys(t for it in items for t in (it.text, *it.passages)))
        if self._aembed is not None:
            raw = await self._aembed(texts)
        else:
            assert self._embed is not None
            raw = await asyncio.to_thread(self._embed, texts)
        vectors = _vectors(raw, len(texts))
        if isinstance(vectors, str):
            return {}, [self._note(vectors, len(items))]
        by_text = dict(zip(texts, vectors, strict=True))
        scores: dict[int, float] = {}
        for it in items:
            claim = by_text[it.text]
            best = max((_cosine(claim, by_text[p]) for p in it.passages), default=None)
            if best is not None and math.isfinite(best):
                scores[it.claim] = min(1.0, max(0.0, best))
        notes = []
        if len(scores) < len(items):
            notes.append(self._note("a zero or non-finite vector", len(items) - len(scores)))
        return scores, notes


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    )


def _unit_score(value: Any) -> float | None:
    """``value`` as a float in [0, 1], or None (bools, strings, NaN, out of range are refused).

    Numbers of numpy and 0-d arrays or tensors (``.item()``) are accepted.
    """
    if not isinstance(value, numbers.Real) and callable(getattr(value, "item", None)):
        try:
            value = value.item()
        except (TypeError, ValueError, RuntimeError):
            return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError):  # an int of 400 digits, a Fraction too large
        return None
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        return None
    return number


def _vectors(raw: Any, count: int) -> list[list[float]] | str:
    """The embedding model's answer as ``count`` vectors of one dimension, or what is wrong."""
    if hasattr(raw, "tolist"):  # numpy arrays, tensors
        raw = raw.tolist()
    if not isinstance(raw, list | tuple) or len(raw) != count:
        got = len(raw) if isinstance(raw, list | tuple) else type(raw).__name__
        return f"{count} vectors were asked for, got {got}"
    out: list[list[float]] = []
    size: int | None = None
    for item in raw:
        v = item.tolist() if hasattr(item, "tolist") else item
        if not isinstance(v, list | tuple) or not v:
            return f"a vector is not a list of numbers ({_brief(v)})"
        if not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v):
            return "a vector holds something other than numbers"
        if size is None:
            size = len(v)
        elif len(v) != size:
            return f"vectors of different sizes ({size} and {len(v)})"
        out.append([float(x) for x in v])
    return out


def _cosine(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(map(operator.mul, a, a)))
    nb = math.sqrt(sum(map(operator.mul, b, b)))
    if not na or not nb:
        return math.nan
    return float(sum(map(operator.mul, a, b))) / (na * nb)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _brief(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a user object whose repr fails
        return f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."
