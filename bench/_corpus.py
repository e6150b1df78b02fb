"""Shared by the benchmarks: deterministic English-like text (no downloads, same text every
run) and a timing helper."""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable

_SYLLABLES = [
    "an", "ar", "be", "ca", "de", "di", "el", "en", "er", "fo", "ga", "hi", "in", "is", "ka",
    "la", "le", "ma", "me", "mo", "na", "ne", "or", "pa", "pe", "ra", "re", "ro", "sa", "se",
    "st", "ta", "te", "ti", "to", "un", "ve", "wa", "ze", "qu",
]  # fmt: skip


def vocabulary(size: int = 30_000, seed: int = 7) -> list[str]:
    """``size`` distinct made-up words of 2 to 4 syllables."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def text(n_chars: int, vocab: list[str], seed: int = 1) -> str:
    """About ``n_chars`` of sentences with a Zipf-like word distribution, numbers and quotes."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(vocab))]
    out: list[str] = []
    size = 0
    while size < n_chars:
        sentence = rng.choices(vocab, weights=weights, k=rng.randint(8, 25))
        sentence[0] = sentence[0].capitalize()
        if rng.random() < 0.2:
            sentence.insert(
                rng.randrange(len(sentence)), f"{rng.randint(1, 999)}.{rng.randint(0, 9)}%"
            )
        chunk = " ".join(sentence) + rng.choice([". ", ". ", ". ", "? ", "!\n"])
        out.append(chunk)
        size += len(chunk)
    return "".join(out)[:n_chars]


def answer(context: str, n_words: int = 300, grounded: float = 0.85, seed: int = 3) -> str:
    """An answer of ``n_words`` words, ``grounded`` of them taken from ``context``."""
    rng = random.Random(seed)
    context_words = context.split()
    words = [
        rng.choice(context_words).strip(".?!")
        if rng.random() < grounded
        else f"novel{rng.randint(0, 10**6)}"
        for _ in range(n_words)
    ]
    sentences = [" ".join(words[i : i + 15]).capitalize() + "." for i in range(0, n_words, 15)]
    return " ".join(sentences)


def best_of(fn: Callable[[], object], repeat: int = 200, *, collect: bool = False) -> float:
    """The fastest of ``repeat`` runs of ``fn``, in seconds (the least disturbed by noise)."""
    best = float("inf")
    for _ in range(repeat):
        if collect:
            gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
