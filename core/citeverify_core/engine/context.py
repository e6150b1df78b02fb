"""Context documents: coercion, tokenization once per document, and an optional cache.

Hot path: for a large context, tokenizing the documents is nearly all the work of a verification.
Each document is tokenized once per call (once per process with the cache), in bounded chunks,
and only its unique words are kept. Benchmark if changing (bench/bench_grounding.py).
"""

from __future__ import annotations

import bisect
import itertools
import re
import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from citeverify_core.errors import InputError
from citeverify_core.text import (
    ASCII_SPACES,
    CHUNK_CHARS,
    WordMatcher,
    ascii_match_normalize,
    iter_text_chunks,
    match_normalize,
    normalize_with_offsets,
    words,
)

__all__ = ["ContextCache", "ContextDocument", "ContextSearch", "coerce_documents"]

#: Size of the windows in which a matched quote is mapped back to document offsets: only the
#: windows a match spans are walked character by character, so they are small (64 KB windows
#: made 1,000 quotes against a 1 MB document take tens of seconds).
_MAP_CHUNK = 512
#: How far past ``_MAP_CHUNK`` a cut is looked for before falling back to the next whitespace.
_MAP_SLACK = 256
# Where normalizing each side alone gives the normalization of the whole: between a non-space
# and a space (whitespace runs stay whole), or between two printable ASCII characters (NFKC
# neither composes nor decomposes them, casefolding is per character).
_SPACE_RUN = re.compile(" {2,}")
_MAP_CUT = re.compile(r"(?<=\S)(?=\s)|(?<=[!-~])(?=[!-~])")


#: Most context documents one verification takes. Each costs a few microseconds even when empty
#: (a million empty documents take seconds); a retrieval returns tens, a corpus check
#: thousands.
MAX_DOCUMENTS = 100_000


def coerce_documents(
    documents: Iterable[Any] | None, *, where: str = "context_documents"
) -> list[str]:
    """Turn context documents into strings.

    A document is a string, or a mapping with ``content`` (the shape the verification API
    documents) or ``page_content`` (LangChain's, as dumped).

    Args:
        documents: The documents.
        where: How errors name the list (adapters pass their own key).

    Raises:
        InputError: naming the document index when one has no text.
    """
    if documents is None:
        return []
    if isinstance(documents, str | bytes | Mapping):
        msg = (
            f"{where} must be a list of documents (strings or mappings with 'content'), "
            f"got a single {type(documents).__name__}; wrap it in a list"
        )
        raise InputError(msg, path=where)
    try:
        items = list(itertools.islice(documents, MAX_DOCUMENTS + 1))
    except TypeError:
        msg = f"{where} must be a list, got {type(documents).__name__}"
        raise InputError(msg, path=where) from None
    if len(items) > MAX_DOCUMENTS:
        msg = f"{where} has more than {MAX_DOCUMENTS:,} documents; that is the limit"
        raise InputError(msg, path=where)
    texts = []
    for i, doc in enumerate(items):
        path = f"{where}[{i}]"
        if isinstance(doc, str):
            texts.append(doc)
        elif isinstance(doc, Mapping):
            key = "content" if "content" in doc else "page_content"
            if key not in doc:
                keys = ", ".join(sorted(map(str, doc))) or "none"
                msg = f"{path} has no 'content' key (keys: {keys})"
                raise InputError(msg, path=f"{path}.content")
            content = doc[key]
            if not isinstance(content, str):
                msg = f"{path}.{key} must be a string, got {type(content).__name__}"
                raise InputError(msg, path=f"{path}.{key}")
            texts.append(content)
        else:
            msg = f"{path} must be a string or a mapping with 'content', got {type(doc).__name__}"
            raise InputError(msg, path=path)
    return texts


class ContextDocument:
    """One context document, tokenized at most once.

    Two ways to use it, one pass over the text each:

    - ``hits(answer_words)`` without ``index=True``: one streaming pass that keeps only the
      answer's words (the cheapest, about one ``re.findall`` pass; no set of the document's words
      is ever built);
    - with ``index=True`` (what :class:`ContextCache` does): the set of all the document's unique
      words is built once, and every later answer is intersected with it in microseconds.

    The normalized text used for quote matching is built only when a quote asks for it.
    """

    __slots__ = ("_found", "_keys", "_map_ends", "_match_text", "_space_runs", "text", "words")

    def __init__(self, text: str, *, index: bool = False) -> None:
        self.text = text
        self.words: frozenset[str] | None = None
        if index:
            found: set[str] = set()
            for _, chunk in iter_text_chunks(text):
                found.update(words(chunk))
            # Interned: every cached document then holds the same string for a word, the
            # answer's words are interned too (document_hits), and intersecting them compares
            # pointers instead of reading each word of each document from memory.
            self.words = frozenset(map(sys.intern, found))
        self._match_text: str | None = None
        self._found: tuple[str, int] | None = None  # the last needle searched, and where
        self._map_ends: tuple[list[int], list[int]] | None = None
        self._space_runs: tuple[list[int], list[int]] | None = None
        self._keys: dict[WordMatcher, frozenset[str]] | None = None

    def hits(self, answer_words: set[str]) -> set[str]:
        """The answer words that this document contains."""
        if self.words is not None:
            return answer_words & self.words
        found: set[str] = set()
        for _, chunk in iter_text_chunks(self.text):
            found |= answer_words.intersection(words(chunk))
        return found

    def key_hits(self, answer_keys: set[str], matcher: WordMatcher) -> set[str]:
        """The answer's compared words (stems, numbers by value) that this document holds.

        An indexed document (in the context cache) keeps its compared words per matcher, so each
        of its words is stemmed once; otherwise one streaming pass, as :meth:`hits`.
        """
        if self.words is not None:
            if self._keys is None or matcher not in self._keys:
                if matcher.numbers:  # numbers change the tokens: one more pass over the text
                    keys = frozenset(matcher.document_keys(self.text))
                else:
                    keys = frozenset(matcher.keys(list(self.words)))
                self._keys = {**(self._keys or {}), matcher: keys}
            return answer_keys & self._keys[matcher]
        found: set[str] = set()
        for _, chunk in iter_text_chunks(self.text):
            found |= answer_keys.intersection(matcher.keys(list(matcher.token_set(chunk))))
        return found

    @property
    def match_text(self) -> str:
        """The document as :func:`match_normalize` sees it (built on first use)."""
        if self._match_text is None:
            if self.text.isascii():
                self._match_text, collapsed = ascii_match_normalize(self.text)
                if not collapsed:  # no whitespace run: offsets need no mapping
                    self._space_runs = [], []
            else:
                self._match_text = match_normalize(self.text)
        return self._match_text

    def position(self, needle: str) -> int:
        """Where the normalized needle starts in :attr:`match_text`, -1 when it is not there.

        The last answer is kept: a quote is searched, then located (:meth:`find`), and the
        second search of a large document would cost as much as the first.
        """
        if self._found is not None and self._found[0] == needle:
            return self._found[1]
        pos = self.match_text.find(needle)
        self._found = needle, pos
        return pos

    def find(self, needle: str) -> tuple[int, int] | None:
        """Find a normalized needle; return its ``[start, end)`` in the original text.

        Returns None when the normalized document does not contain it.
        """
        pos = self.position(needle)
        if pos < 0:
            return None
        return self._original_span(pos, pos + len(needle), needle)

    def _original_span(self, ns: int, ne: int, needle: str) -> tuple[int, int] | None:
        if self.text.isascii():
            return self._ascii_span(ns, ne)
        return self._window_span(ns, ne, needle)

    def _ascii_span(self, ns: int, ne: int) -> tuple[int, int]:
        """Map normalized offsets back in ASCII text.

        There normalization changes lengths only by collapsing whitespace runs: the runs of two
        or more are listed once (a C-speed scan) and an offset is shifted by the characters they
        dropped before it (the window walk cost 50 ms on 1 MB). Equal to
        :meth:`_window_span` (tests/engine/test_speed_equivalence.py).
        """
        if self._space_runs is None:
            starts: list[int] = []  # where each run's single space is in the normalized text
            shifts: list[int] = []  # characters dropped up to and including each run
            shift = 0
            spaced = self.text.translate(ASCII_SPACES)
            run = spaced.find("  ")  # str.find: far faster than a regex scan for the runs
            while run >= 0:
                end = _SPACE_RUN.match(spaced, run).end()  # type: ignore[union-attr]
                starts.append(run - shift)
                shift += end - run - 1
                shifts.append(shift)
                run = spaced.find("  ", end)
            self._space_runs = starts, shifts
        starts, shifts = self._space_runs

        def original(pos: int) -> int:
            k = bisect.bisect_left(starts, pos) - 1  # the last run whose space is before pos
            return pos + (shifts[k] if k >= 0 else 0)

        return original(ns), original(ne - 1) + 1

    def _window_span(self, ns: int, ne: int, needle: str) -> tuple[int, int] | None:
        # Map normalized offsets back through the windows that hold them; only those are
        # walked character by character (design: one offset mapper, tested with hypothesis).
        if self._map_ends is None:
            norm_ends: list[int] = []
            orig_ends: list[int] = []
            norm_len = 0
            for offset, chunk in _map_chunks(self.text):
                norm_len += len(match_normalize(chunk))
                norm_ends.append(norm_len)
                orig_ends.append(offset + len(chunk))
            self._map_ends = norm_ends, orig_ends
        norm_ends, orig_ends = self._map_ends
        first = bisect.bisect_right(norm_ends, ns)
        last = min(bisect.bisect_left(norm_ends, ne), len(norm_ends) - 1)
        norm_start = norm_ends[first - 1] if first else 0
        orig_start = orig_ends[first - 1] if first else 0
        orig_end = orig_ends[last]
        window, starts = normalize_with_offsets(self.text[orig_start:orig_end])
        rel = ns - norm_start
        if not window.startswith(needle, rel):
            # Rare: per-sequence normalization differs from whole-text NFKC here.
            rel = window.find(needle)
            if rel < 0:
                return None
        start = orig_start + starts[rel]
        last_char = starts[rel + len(needle) - 1]
        end = orig_start + last_char + 1
        # The last character may carry combining marks: they belong to the match.
        while end < len(self.text) and unicodedata.combining(self.text[end]):
            end += 1
        return start, end


def _map_chunks(text: str) -> Iterator[tuple[int, str]]:
    """Cut ``text`` into windows of about ``_MAP_CHUNK`` characters that normalize separately.

    A cut is made where :data:`_MAP_CUT` allows it, or, in text with neither spaces nor ASCII
    (Chinese, Japanese), before a character that does not combine with the one before it (its
    NFKC pair is the pair of its NFKC parts).
    """
    start, n = 0, len(text)
    while n - start > _MAP_CHUNK:
        lo = start + _MAP_CHUNK
        cut = -1
        if m := _MAP_CUT.search(text, lo, lo + _MAP_SLACK):
            cut = m.start()
        else:
            for p in range(lo, min(n, lo + _MAP_SLACK)):
                a, b = text[p - 1], text[p]
                if (
                    not a.isspace()
                    and not b.isspace()
                    and not unicodedata.combining(b)
                    and unicodedata.normalize("NFKC", a + b)
                    == unicodedata.normalize("NFKC", a) + unicodedata.normalize("NFKC", b)
                ):
                    cut = p
                    break
            else:
                m = _MAP_CUT.search(text, lo)
                cut = m.start() if m else -1
        if cut <= start:
            break
        yield start, text[start:cut]
        start = cut
    yield start, text[start:]


class ContextCache:
    """A bounded cache of tokenized context documents, keyed by their text.

    A chain that verifies many answers against one retrieval pays the tokenization once.
    Thread-safe.

    Sized by memory: ``max_bytes`` bounds an estimate of what the cached documents
    hold (their text and their set of words, about 100 bytes a word), ``max_chars`` the total
    size of the cached texts, and ``max_documents``, when given, their number. Caching only pays
    when documents come back, so it steps aside when it cannot help:

    - when it is full and fewer than half of the recent lookups were hits, a new document is
      not cached (nothing is evicted for it): a corpus a little larger than the cache, read in
      turn, keeps most of it cached instead of evicting every document just before its reuse
      (a plain LRU then never hits);
    - when fewer than :data:`SKIP_BELOW` of the recent lookups were hits, a new document is
      tokenized the uncached way (one streaming pass that keeps only the answer's words, cheaper
      than building the set of all its words) and not cached, so that retrievals that rarely
      repeat cost about what they cost without a cache. What is cached still serves hits, and
      when they come back to a quarter of the lookups, new documents are cached again.

    The hit rate is measured over windows of :data:`WINDOW` lookups (optimistic until the
    first window is complete).

    A cache does not travel: pickled or deep-copied (with the verifier that holds it, to a
    process pool or a Ray task), it keeps its limits and arrives empty, with a lock of its own.
    """

    #: Lookups per measuring window of the hit rate.
    WINDOW = 1024
    #: Below this share of hits in the last window, new documents are not cached.
    SKIP_BELOW = 0.25

    def __init__(
        self,
        *,
        max_documents: int | None = None,
        max_chars: int = 64_000_000,
        max_bytes: int = 256 << 20,
    ) -> None:
        limits = (max_documents if max_documents is not None else 1, max_chars, max_bytes)
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in limits):
            msg = "ContextCache needs max_documents >= 1, max_chars >= 1 and max_bytes >= 1"
            raise InputError(msg, path="ContextCache")
        self.max_documents = max_documents
        self.max_chars = max_chars
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, ContextDocument] = OrderedDict()
        self._chars = 0
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        # Hit rate of the previous window (optimistic before the first), and the current one.
        self._rate = 1.0
        self._window_hits = 0
        self._window_lookups = 0

    def __getstate__(self) -> dict[str, Any]:
        # The limits only: the documents are rebuilt on the other side when they come back.
        return {
            "max_documents": self.max_documents,
            "max_chars": self.max_chars,
            "max_bytes": self.max_bytes,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        ContextCache.__init__(self, **state)

    def get(self, text: str) -> ContextDocument:
        """Return the tokenized document for ``text``, tokenizing it on a miss."""
        with self._lock:
            doc = self._items.get(text)
            self._count(doc is not None)
            if doc is not None:
                self._items.move_to_end(text)
                self.hits += 1
                return doc
            self.misses += 1
            if self._rate < self.SKIP_BELOW:
                return ContextDocument(text)  # streamed, as without a cache
        doc = ContextDocument(text, index=True)
        size = _cached_bytes(doc)
        if len(text) > self.max_chars or size > self.max_bytes:
            return doc
        with self._lock:
            if text in self._items:
                return doc
            if self._full(1, len(text), size) and self._rate < 0.5:
                return doc  # keep what is cached: evicting for a new document does not pay
            self._items[text] = doc
            self._chars += len(text)
            self._bytes += size
            while len(self._items) > 1 and self._full(0, 0, 0):
                old, old_doc = self._items.popitem(last=False)
                self._chars -= len(old)
                self._bytes -= _cached_bytes(old_doc)
        return doc

    def _full(self, documents: int, chars: int, size: int) -> bool:
        """Whether adding this much goes past a bound."""
        return (
            (self.max_documents is not None and len(self._items) + documents > self.max_documents)
            or self._chars + chars > self.max_chars
            or self._bytes + size > self.max_bytes
        )

    def _count(self, hit: bool) -> None:
        self._window_lookups += 1
        self._window_hits += hit
        if self._window_lookups >= self.WINDOW:
            self._rate = self._window_hits / self._window_lookups
            self._window_hits = self._window_lookups = 0

    def clear(self) -> None:
        """Drop every cached document."""
        with self._lock:
            self._items.clear()
            self._chars = 0
            self._bytes = 0
            self._rate = 1.0
            self._window_hits = self._window_lookups = 0

    def __len__(self) -> int:
        return len(self._items)


def _cached_bytes(doc: ContextDocument) -> int:
    """About what a cached document holds: its text and its set of words."""
    return len(doc.text) + 100 * len(doc.words or ())


class ContextSearch:
    """Finds normalized texts (quotes, case citations, statutes) in the documents.

    Each distinct needle is searched once, and at most ``limit`` distinct needles per answer:
    every search reads the whole context, so without a bound 100,000 distinct statute citations
    against 1 MB would take minutes.
    """

    def __init__(self, docs: Sequence[ContextDocument], *, limit: int = 500) -> None:
        self._docs = docs
        self._memo: dict[str, int | None] = {}
        self._limit = limit

    def first(self, *needles: str) -> tuple[bool, int | None]:
        """``(searched, index of the first document holding one of the needles)``.

        ``searched`` is False when the budget was spent before these needles.
        """
        key = "\x00".join(needles)
        if key not in self._memo:
            if len(self._memo) >= self._limit:
                return False, None
            self._memo[key] = next(
                (i for i, d in enumerate(self._docs) if any(d.position(n) >= 0 for n in needles)),
                None,
            )
        return True, self._memo[key]


# ASCII documents are tokenized as bytes: one ``bytes.translate`` (lower-case letters and digits
# kept, upper case lowered, everything else a space) and ``split``; the same words as
# :func:`~citeverify_core.text.words`' ASCII path, a little cheaper, and the answer's words are
# encoded once per verification instead of once per document.
_ASCII_WORD_BYTES = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)


def document_hits(
    docs: Sequence[ContextDocument], answer_words: set[str], matcher: WordMatcher | None = None
) -> list[set[str]]:
    """For each document, the answer words it contains (``[d.hits(answer_words) for d in docs]``).

    With a ``matcher`` that is not exact, ``answer_words`` are compared words (stems, numbers by
    value) and so are the results.

    Hot path: with many small documents (10,000 of 1 KB) the per-document overhead is most of
    the work.
    """
    if matcher is not None and not matcher.exact:
        return [d.key_hits(answer_words, matcher) for d in docs]
    if len(docs) <= 16:  # encoding the answer's words costs more than it saves
        return [
            answer_words.intersection(words(d.text))  # d.hits: a document of one chunk
            if d.words is None and len(d.text) <= CHUNK_CHARS
            else d.hits(answer_words)
            for d in docs
        ]
    if any(d.words is not None for d in docs):
        # Cached documents hold interned words; the answer's, interned too, are then the same
        # objects, and so are the words of every hit set: the intersections here and the
        # verifier's index of which document holds which word (a dict keyed by these words, over
        # thousands of documents) compare pointers instead of reading each word from memory.
        # Not worth it for a few documents (a retrieval): interning costs more than it saves.
        answer_words = set(map(sys.intern, answer_words))
    encoded = {w.encode("ascii"): w for w in answer_words if w.isascii()}
    wanted = frozenset(encoded)
    decode = encoded.__getitem__
    table = _ASCII_WORD_BYTES
    out: list[set[str]] = []
    append = out.append
    for d in docs:
        text = d.text
        if d.words is not None:
            append(answer_words & d.words)  # d.hits, without the call
        elif text.isascii() and len(text) <= CHUNK_CHARS:
            append(set(map(decode, wanted.intersection(text.encode().translate(table).split()))))
        else:
            append(d.hits(answer_words))
    return out


def tokenize_documents(texts: Sequence[str], cache: ContextCache | None) -> list[ContextDocument]:
    """Tokenize each document once, through the cache when there is one."""
    if cache is None:
        return [ContextDocument(t) for t in texts]
    return [cache.get(t) for t in texts]
