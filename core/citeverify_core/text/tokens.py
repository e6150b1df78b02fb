"""Words: runs of Unicode letters and digits after NFKC normalization and casefolding.

The form in which claims and context documents are compared, with a fast path for ASCII text
and the bounded chunks in which long documents are read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = [
    "ASCII_NON_WORD",
    "CHUNK_CHARS",
    "WORD_RE",
    "iter_text_chunks",
    "normalize",
    "unique_words",
    "words",
]

#: A word: a run of Unicode letters and digits. Benchmark if changing (bench/bench_grounding.py).
WORD_RE = re.compile(r"[^\W_]+")


def normalize(text: str) -> str:
    """NFKC-normalize and casefold ``text`` (the form in which words are compared)."""
    return unicodedata.normalize("NFKC", text).casefold()


# ASCII fast path: on ASCII text NFKC is the identity, casefold is lower(), and ``[^\W_]`` is
# ``[A-Za-z0-9]``; so mapping every other ASCII character to a space and splitting gives exactly
# the regex's words, about 2.5x faster (tests/engine/test_properties.py checks the equivalence).
ASCII_NON_WORD = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})


def words(text: str) -> list[str]:
    """The normalized words of ``text``, in order, with repetitions.

    Hot path: benchmark if changing (bench/bench_grounding.py).
    """
    if text.isascii():
        return text.lower().translate(ASCII_NON_WORD).split()
    return WORD_RE.findall(normalize(text))


def unique_words(text: str) -> list[str]:
    """The normalized words of ``text``, each once, in order of first appearance."""
    return list(dict.fromkeys(words(text)))


#: Size of the pieces in which long documents are tokenized, so that the transient list of
#: words stays bounded whatever the document size (memory follows the unique words).
CHUNK_CHARS = 1 << 18

_CHUNK_BOUNDARY = re.compile(r"\S\s")


def iter_text_chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[tuple[int, str]]:
    """Split ``text`` into ``(offset, chunk)`` pieces of about ``size`` characters.

    A piece ends just before a whitespace character that follows a non-whitespace one, so no
    word, no run of whitespace and no combining sequence is cut: normalizing or tokenizing the
    pieces one by one gives the same result as doing it on the whole text.
    """
    start = 0
    n = len(text)
    while n - start > size:
        m = _CHUNK_BOUNDARY.search(text, start + size)
        if m is None:
            break
        end = m.start() + 1
        yield start, text[start:end]
        start = end
    yield start, text[start:]
