r"""Text primitives: word normalization, claim splitting, quote finding, offset mapping.

Everything here is a pure function of strings. Words follow the design's grounding semantics:
runs of Unicode letters and digits (``[^\\W_]+``) after NFKC normalization and casefolding.
A leaf layer: it imports nothing of ours but :mod:`citeverify_core.errors`.

- :mod:`~citeverify_core.text.tokens`: words, and the chunks long documents are read in;
- :mod:`~citeverify_core.text.claims`: an answer cut into claims;
- :mod:`~citeverify_core.text.quotes`: quotations, and the normalization they are matched in;
- :mod:`~citeverify_core.text.numbers`: numbers compared by value;
- :mod:`~citeverify_core.text.matching`: the word matcher of the ``extensions`` options.
"""

from __future__ import annotations

from citeverify_core.text.claims import ABBREVIATIONS, MARKER_RE, Piece, split_claims
from citeverify_core.text.matching import STEM_LANGUAGES, STOPWORDS, WordMatcher
from citeverify_core.text.numbers import (
    NUMBER_WORDS,
    is_number_key,
    number_value,
    spelled_value,
    value_word_set,
    value_words,
)
from citeverify_core.text.quotes import (
    ASCII_SPACES,
    QuoteSpan,
    ascii_match_normalize,
    find_quotes,
    match_normalize,
    normalize_with_offsets,
    trim_outer_punctuation,
)
from citeverify_core.text.tokens import (
    ASCII_NON_WORD,
    CHUNK_CHARS,
    WORD_RE,
    iter_text_chunks,
    normalize,
    unique_words,
    words,
)

__all__ = [
    "ABBREVIATIONS",
    "ASCII_NON_WORD",
    "ASCII_SPACES",
    "CHUNK_CHARS",
    "MARKER_RE",
    "NUMBER_WORDS",
    "STEM_LANGUAGES",
    "STOPWORDS",
    "WORD_RE",
    "Piece",
    "QuoteSpan",
    "WordMatcher",
    "ascii_match_normalize",
    "find_quotes",
    "is_number_key",
    "iter_text_chunks",
    "match_normalize",
    "normalize",
    "normalize_with_offsets",
    "number_value",
    "spelled_value",
    "split_claims",
    "trim_outer_punctuation",
    "unique_words",
    "value_word_set",
    "value_words",
    "words",
]
