"""Grounding speed: every target as a ratio measured within one run.

The floor is one ``re.findall(r"[^\\W_]+", text.casefold())`` pass over the context. Targets:

- a 300-word and a 100-word answer against 10 KB of context (3 documents): <= 1.5x the floor;
- a quoted answer against one 1 MB document: <= 1.5x the same answer without the quote marks;
- 200 claims against 10,000 documents of 1 KB: <= 1.5x the floor over those documents, and the
  time linear in claims + documents;
- the context cache is never slower than no cache: many answers against the same 10,000
  documents, and answers against 10 documents drawn at random from a corpus of 10,000.

Each ratio is measured ``--rounds`` times (the best of a few runs of each side, side by side);
the median is printed with the spread. Default policy but ``require_sources: false`` (all six
citation types extracted; nothing to look up), as in bench_grounding.py.

Run: ``uv run python bench/bench_speed.py`` (``--rounds 3`` for a quicker run).
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import statistics
import time
from collections.abc import Callable

from citeverify_core import CitationVerifier, ContextCache
from citeverify_core.engine.extract import extract

from _corpus import answer, best_of, text, vocabulary

WORD = re.compile(r"[^\W_]+")
POLICY = {"require_sources": False}


def floor(texts: list[str]) -> None:
    for t in texts:
        WORD.findall(t.casefold())


def ratio(
    subject: Callable[[], object], base: Callable[[], object], repeat: int
) -> tuple[float, float, float]:
    """``(subject time, base time, ratio)``: the best of ``repeat`` runs of each, interleaved."""
    gc.collect()
    t_base = best_of(base, repeat)
    t_subject = best_of(subject, repeat)
    t_base = min(t_base, best_of(base, repeat))
    return t_subject, t_base, t_subject / t_base


def report(
    name: str,
    rounds: list[tuple[float, float, float]],
    bound: float,
    sides: tuple[str, str] = ("verify", "floor"),
) -> float:
    subject = statistics.median(r[0] for r in rounds)
    base = statistics.median(r[1] for r in rounds)
    ratios = [r[2] for r in rounds]
    med = statistics.median(ratios)
    best = min(r[0] for r in rounds) / min(r[1] for r in rounds)
    verdict = "met" if med <= bound else "NOT MET"
    print(
        f"{name:<46} {sides[0]} {subject * 1e3:8.2f} ms  {sides[1]} {base * 1e3:8.2f} ms"
        f"  ratio {med:5.2f}x (min {min(ratios):.2f}, max {max(ratios):.2f};"
        f" best times {best:.2f}x)  bound {bound:.2f}x: {verdict}"
    )
    return med


def quoted(doc: str, plain: str, n: int, seed: int = 5) -> tuple[str, str]:
    """``plain`` with ``n`` quotations of the document appended, and the same without quotes."""
    rng = random.Random(seed)
    tokens = doc.split()
    quotes = []
    for _ in range(n):
        start = rng.randrange(len(tokens) - 12)
        quotes.append(" ".join(tokens[start : start + 10]).strip(".?!"))
    with_marks = plain + " " + " ".join(f'The source says "{q}".' for q in quotes)
    without = plain + " " + " ".join(f"The source says {q}." for q in quotes)
    return with_marks, without


def varied_quotes(doc: str, plain: str, n: int, seed: int) -> tuple[str, str]:
    """As :func:`quoted`, with quotes of 3 to 40 words, about a third of them not in ``doc``."""
    rng = random.Random(seed)
    tokens = doc.split()
    quotes = []
    for _ in range(n):
        size = rng.randint(3, 40)
        start = rng.randrange(len(tokens) - size - 1)
        quote = " ".join(tokens[start : start + size]).strip(".?!")
        if rng.random() < 0.35:
            quote += " unquotable"
        quotes.append(quote)
    with_marks = plain + " " + " ".join(f'The source says "{q}".' for q in quotes)
    without = plain + " " + " ".join(f"The source says {q}." for q in quotes)
    return with_marks, without


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--only", choices=["small", "quotes", "many", "cache"], action="append", default=None
    )
    args = parser.parse_args()
    only = set(args.only or ["small", "quotes", "many", "cache"])
    rounds = args.rounds
    vocab = vocabulary()
    big = text(10_240_000, vocab)
    verifier = CitationVerifier(POLICY)

    print(f"speed targets: median of {rounds} rounds (min, max), ratios within a round\n")

    corpus = [big[i : i + 1024] for i in range(0, 10_240_000, 1024)][:10_000]
    if "small" in only:
        small(verifier, big, rounds)
    if "quotes" in only:
        quotes(verifier, big, rounds)
    if "many" in only:
        many(verifier, big, corpus, rounds)
    if "cache" in only:
        caching(big, corpus, rounds)


def small(verifier: CitationVerifier, big: str, rounds: int) -> None:
    """1. Small answers against 10 KB."""
    ctx = big[:10_000]
    docs = [ctx[i : i + 4096] for i in range(0, len(ctx), 4096)]
    for n_words in (300, 100):
        ans = answer(ctx, n_words)
        rows = [
            ratio(
                lambda ans=ans: verifier.verify(ans, docs),
                lambda: floor(docs),
                200,
            )
            for _ in range(rounds)
        ]
        report(f"{n_words}-word answer vs 10 KB (3 documents)", rows, 1.5)
        # Not a target: the share of the answer's citation extraction (all six types), which
        # is the same whatever the context (1.0x of the floor for 300 words before the
        # class-byte scans, 0.35x after).
        patterns = verifier.policy.extract_patterns
        part = [
            ratio(
                lambda ans=ans, patterns=patterns: extract(ans, patterns, current_year=2026),
                lambda: floor(docs),
                200,
            )
            for _ in range(rounds)
        ]
        share = statistics.median(r[2] for r in part)
        print(f"  of which citation extraction alone: {share:.2f}x the floor")


def quotes(verifier: CitationVerifier, big: str, rounds: int) -> None:
    """2. Quotes against one 1 MB document."""
    doc = big[:1_000_000]
    with_quotes, without_quotes = quoted(doc, answer(doc, 300), 5)
    check = verifier.verify(with_quotes, [doc])
    assert sum(bool(q.matched) for q in check.details.quotes) == 5, "the quotes must match"
    rows = [
        ratio(
            lambda: verifier.verify(with_quotes, [doc]),
            lambda: verifier.verify(without_quotes, [doc]),
            5,
        )
        for _ in range(rounds)
    ]
    report("5 quotes vs one 1 MB document", rows, 1.5, ("quoted", "unquoted"))
    # Other quotes than those: 10 per answer, 3 to 40 words long, anywhere in the document, a
    # third of them not in it (a changed last word), so each is searched through the whole text.
    for seed in range(1, 6):
        with_quotes, without_quotes = varied_quotes(doc, answer(doc, 300, seed=seed), 10, seed)
        rows = [
            ratio(
                lambda w=with_quotes: verifier.verify(w, [doc]),
                lambda wo=without_quotes: verifier.verify(wo, [doc]),
                5,
            )
            for _ in range(max(3, rounds // 2))
        ]
        report(f"10 varied quotes vs 1 MB (set {seed})", rows, 1.5, ("quoted", "unquoted"))


def many(verifier: CitationVerifier, big: str, corpus: list[str], rounds: int) -> None:
    """3. Claims x documents."""
    ans200 = answer(big[:1_000_000], 3000)  # 200 claims of 15 words
    rows = [
        ratio(lambda: verifier.verify(ans200, corpus), lambda: floor(corpus), 2)
        for _ in range(rounds)
    ]
    report("200 claims vs 10,000 documents of 1 KB", rows, 1.5)
    print("  linearity (median of rounds, ms): claims x documents")
    answers = {c: answer(big[:1_000_000], 15 * c, seed=11) for c in (20, 200, 2000)}
    grid: dict[tuple[int, int], list[float]] = {}
    for _ in range(max(3, rounds // 2)):
        for c in (20, 200, 2000):
            for d in (1_000, 10_000):
                ans, sub = answers[c], corpus[:d]
                grid.setdefault((c, d), []).append(
                    timed(lambda ans=ans, sub=sub: verifier.verify(ans, sub))
                )
    for d in (1_000, 10_000):
        cells = "  ".join(
            f"{c:>5} claims {statistics.median(grid[c, d]) * 1e3:8.1f}" for c in (20, 200, 2000)
        )
        print(f"  {d:>6} documents: {cells}")


def caching(big: str, corpus: list[str], rounds: int) -> None:
    """4. The context cache never slower than none."""
    answers20 = [answer(big[:1_000_000], 300, seed=s) for s in range(20)]
    plain = CitationVerifier(POLICY)

    def repeated(v: CitationVerifier, sub: list[str]) -> Callable[[], None]:
        def run() -> None:
            for a in answers20:
                v.verify(a, sub)

        return run

    rows = []
    for _ in range(rounds):
        cached = CitationVerifier(POLICY, context_cache=True)  # a fresh cache: filling included
        rows.append((timed(repeated(cached, corpus)), timed(repeated(plain, corpus)), 0.0))
        rows[-1] = (rows[-1][0], rows[-1][1], rows[-1][0] / rows[-1][1])
    report("cache: 20 answers vs the same 10,000 documents", rows, 1.0, ("cache", "none"))

    rng = random.Random(9)
    draws = [(answers20[i % 20], rng.sample(corpus, 10)) for i in range(1_000)]

    def retrieval(v: CitationVerifier) -> Callable[[], None]:
        def run() -> None:
            for a, sub in draws:
                v.verify(a, sub)

        return run

    rows = []
    cache = ContextCache()
    shared = CitationVerifier(POLICY, context_cache=cache)
    for _ in range(rounds):
        cache.clear()
        t_cache = timed(retrieval(shared))
        t_none = timed(retrieval(plain))
        rows.append((t_cache, t_none, t_cache / t_none))
    hit_rate = cache.hits / max(1, cache.hits + cache.misses)
    report("cache: 1,000 answers, 10 of 10,000 documents", rows, 1.0, ("cache", "none"))
    print(f"  hit rate of the random retrievals: {hit_rate:.1%}")


if __name__ == "__main__":
    main()
