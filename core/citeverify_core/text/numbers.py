"""Numbers compared by value (``numbers: value``): written forms and numbers written in words."""

from __future__ import annotations

import functools
import itertools
import re

from citeverify_core.text.tokens import WORD_RE, normalize, words

__all__ = [
    "NUMBER_WORDS",
    "is_number_key",
    "number_value",
    "spelled_value",
    "value_word_set",
    "value_words",
]

# Numbers as one word each under ``numbers: value``: digit groups with inner separators.
_NUMBER_OR_WORD = re.compile(r"\d+(?:[.,]\d+)+(?![^\W_])|[^\W_]+")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_DECIMAL = re.compile(r"\d+\.\d+")
_NUMBER_KEY = re.compile(r"\d+(?:\.\d+)?")


def number_value(token: str) -> str | None:
    """The canonical form of a written number, or None when its separators are ambiguous.

    ``4,000`` -> ``4000``, ``4.50`` -> ``4.5``, ``12.0`` -> ``12``; ``4,5`` and ``1.2.3`` -> None.
    """
    if _THOUSANDS.fullmatch(token):
        token = token.replace(",", "")
    if "," in token:
        return None
    if "." in token:
        if not _DECIMAL.fullmatch(token):
            return None
        token = token.rstrip("0").rstrip(".")
    return token


_DIGIT_SEPARATOR = re.compile(r"\d[.,]\d")

# Numbers written in words (English), read under ``numbers: value`` ("4,000" = "4000" =
# "four thousand").
_UNITS = {
    w: i
    for i, w in enumerate(
        (
            "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
            "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
            "seventeen", "eighteen", "nineteen",
        )
    )
}  # fmt: skip
_TENS = {
    w: 10 * i
    for i, w in enumerate(
        ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), 2
    )
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
#: The words of a number written in words.
NUMBER_WORDS = frozenset(_UNITS) | frozenset(_TENS) | frozenset(_SCALES) | {"hundred"}


def spelled_value(tokens: list[str]) -> str | None:
    """The value of a number written in words (``["four", "thousand"]`` -> ``"4000"``).

    None when the words are not one number ("one two", "thousand million"), and for a single
    word below ten ("one", "two": more often words than figures: "one of them").
    """
    total = current = 0
    last = ""
    scale = 0
    count = 0
    for t in tokens:
        if t == "and":
            continue
        count += 1
        if t in _UNITS:
            v = _UNITS[t]
            if last in ("unit", "teen") or (last == "tens" and not 0 < v < 10):
                return None
            current += v
            last = "unit" if v < 10 else "teen"
        elif t in _TENS:
            if last in ("unit", "teen", "tens"):
                return None
            current += _TENS[t]
            last = "tens"
        elif t == "hundred":
            if last in ("tens", "hundred") or current >= 100:
                return None
            current = (current or 1) * 100
            last = "hundred"
        elif t in _SCALES:
            if last == "scale" or (scale and _SCALES[t] >= scale):
                return None
            scale = _SCALES[t]
            total += (current or 1) * scale
            current = 0
            last = "scale"
        else:
            return None
    value = total + current
    if count == 1 and value < 10:
        return None
    return str(value)


def _spelled_runs(tokens: list[str]) -> list[tuple[int, int, str | None]]:
    """The runs of number words in ``tokens``: (start, end, value or None), in order.

    A run is consecutive number words, or two joined by "and" ("one hundred and five"); words are
    tokens, so punctuation between them does not end a run. Only the positions of number words
    are visited (found at C speed): documents pay one pass over their tokens.
    """
    hits = list(itertools.compress(range(len(tokens)), map(NUMBER_WORDS.__contains__, tokens)))
    runs = []
    k = 0
    while k < len(hits):
        start = end = hits[k]
        k += 1
        while k < len(hits) and (
            hits[k] == end + 1 or (hits[k] == end + 2 and tokens[end + 1] == "and")
        ):
            end = hits[k]
            k += 1
        runs.append((start, end + 1, _spelled_value(tuple(tokens[start : end + 1]))))
    return runs


@functools.lru_cache(maxsize=4096)
def _spelled_value(tokens: tuple[str, ...]) -> str | None:
    # Documents repeat their numbers ("one", "two thousand"): each is read once.
    return spelled_value(list(tokens))


def _spelled_numbers(tokens: list[str], *, keep_words: bool) -> list[str]:
    """``tokens`` with each run of number words read as its value (kept too with keep_words)."""
    out: list[str] = []
    last = 0
    for start, end, value in _spelled_runs(tokens):
        if value is None:
            continue
        out += tokens[last:end] if keep_words else tokens[last:start]
        out.append(value)
        last = end
    out += tokens[last:]
    return out


def value_words(text: str, *, keep_words: bool = False) -> list[str]:
    """Like :func:`words`, but each written number is one word, by value (``numbers: value``).

    ``4,000`` and ``4000`` give ``4000``; ``4.5`` gives ``4.5``, not ``4`` and ``5``. A number
    with ambiguous separators (``4,5``) gives its parts, as :func:`words` does. Numbers written in
    words are read too ("four thousand" gives ``4000``, "twelve" ``12``; see
    :func:`spelled_value`); with ``keep_words`` (documents) their words stay beside the value.
    """
    if text.isascii() and not _DIGIT_SEPARATOR.search(text):
        out = words(text)  # no separated number: the same words
        if NUMBER_WORDS.isdisjoint(out):
            return out
        return _spelled_numbers(out, keep_words=keep_words)
    out = []
    for token in _NUMBER_OR_WORD.findall(normalize(text)):
        if token[0].isdigit() and ("," in token or "." in token):
            value = number_value(token)
            if value is None:
                out.extend(WORD_RE.findall(token))
            else:
                out.append(value)
        else:
            out.append(token)
    if NUMBER_WORDS.isdisjoint(out):
        return out
    return _spelled_numbers(out, keep_words=keep_words)


# A number with separators in ASCII text (whether it is a word of its own is checked after: a
# lookbehind here made the scan 4x slower).
_SEPARATED_NUMBER = re.compile(r"[0-9]+(?:[.,][0-9]+)+")


def value_word_set(text: str) -> set[str]:
    """``set(value_words(text, keep_words=True))``, faster on ASCII text (documents).

    Tests check the equality. The separated numbers are found first and blanked out; the rest
    takes the fast path of :func:`words`; numbers written in words add their values.
    """
    if not text.isascii():
        return set(value_words(text, keep_words=True))
    found: set[str] = set()
    parts: list[str] = []
    last = 0
    for m in _SEPARATED_NUMBER.finditer(text):
        start, end = m.span()
        if (start and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
            continue  # inside a word ("v1.2", "3.5x"): words as usual
        value = number_value(m.group())
        if value is None:
            continue  # ambiguous ("4,5"): its parts, as usual
        found.add(value)
        parts.append(text[last:start])
        last = end
    if parts:
        parts.append(text[last:])
        text = " ".join(parts)
    tokens = words(text)
    found.update(tokens)
    if not NUMBER_WORDS.isdisjoint(found):
        found.update(value for _, _, value in _spelled_runs(tokens) if value is not None)
    return found


def is_number_key(word: str) -> bool:
    """Whether a compared word is a number (``1932``, ``4.5``)."""
    return word[:1].isdigit() and _NUMBER_KEY.fullmatch(word) is not None
