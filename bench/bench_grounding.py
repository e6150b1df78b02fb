"""Grounding speed and memory: verify() against one re.findall word pass over the context.

Targets (issue 2): for a 300-word answer against N bytes of context, verify() costs at most 1.5x
one ``re.findall`` word pass over the same context, for N from 10 KB to 10 MB; it grows linearly
(10x context, at most 11x time); memory follows the unique words, not N. A warm context cache
makes repeated verifications against one retrieval cheap.

Run: ``uv run python bench/bench_grounding.py`` (add ``--quick`` to stop at 1 MB).
"""

from __future__ import annotations

import gc
import itertools
import re
import sys
import tracemalloc
from collections.abc import Callable

from citeverify_core import CitationVerifier, ContextCache

from _corpus import answer, best_of, text, vocabulary

WORD = re.compile(r"[^\W_]+")
POLICY = {"require_sources": False}


def peak_bytes(fn: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = [10_000, 100_000, 1_000_000] + ([] if quick else [10_000_000])
    vocab = vocabulary()
    big = text(sizes[-1], vocab)
    cold = CitationVerifier(POLICY, context_cache=False)

    print("verify() of a 300-word answer vs one re.findall word pass over the context")
    print(
        f"{'context':>9} {'findall':>10} {'verify':>10} {'ratio':>6} {'cache fill':>11}"
        f" {'ratio':>6} {'warm cache':>11} {'saving':>7}"
    )
    rows = []
    for n in sizes:
        ctx = big[:n]
        docs = [ctx[i : i + 4096] for i in range(0, len(ctx), 4096)] if n <= 100_000 else [ctx]
        ans = answer(ctx)
        repeat = 30 if n <= 100_000 else (7 if n <= 1_000_000 else 3)
        base = best_of(lambda ctx=ctx: WORD.findall(ctx), repeat, collect=True)
        t_cold = best_of(lambda ans=ans, docs=docs: cold.verify(ans, docs), repeat, collect=True)
        t_fill = best_of(
            lambda ans=ans, docs=docs: CitationVerifier(POLICY, context_cache=True).verify(
                ans, docs
            ),
            repeat,
        )
        warm = CitationVerifier(POLICY, context_cache=ContextCache())
        warm.verify(ans, docs)
        t_warm = best_of(
            lambda ans=ans, docs=docs, w=warm: w.verify(ans, docs), repeat, collect=True
        )
        rows.append((n, base, t_cold))
        print(
            f"{n / 1000:>7.0f}KB {base * 1e3:>8.2f}ms {t_cold * 1e3:>8.2f}ms {t_cold / base:>5.2f}x"
            f" {t_fill * 1e3:>9.2f}ms {t_fill / base:>5.2f}x"
            f" {t_warm * 1e3:>9.3f}ms {t_cold / t_warm:>6.0f}x"
        )
    ans_10k = answer(big[:10_000])
    answer_only = best_of(lambda: cold.verify(ans_10k, []), 30, collect=True)
    print(f"\nfixed cost of the 300-word answer alone (no context): {answer_only * 1e3:.2f}ms")
    print("\nlinearity: time ratio for 10x the context (target <= 11x)")
    for (n1, _, t1), (n2, _, t2) in itertools.pairwise(rows):
        print(f"  {n1 / 1000:>6.0f}KB -> {n2 / 1000:>6.0f}KB: {t2 / t1:5.1f}x")

    print("\nnon-ASCII context (accented words: the regex path instead of the ASCII fast path)")
    accented = big[:1_000_000].replace("e", "é").replace("o", "ô")
    ans = answer(accented)
    base = best_of(lambda: WORD.findall(accented), 5, collect=True)
    t_cold = best_of(lambda: cold.verify(ans, [accented]), 5, collect=True)
    print(f"   1000KB {base * 1e3:>8.2f}ms {t_cold * 1e3:>8.2f}ms {t_cold / base:>5.2f}x")

    print("\npeak memory of one verify() (tracemalloc), one document of N bytes")
    print(f"{'context':>9} {'findall list':>13} {'verify':>10} {'unique words':>13}")
    for n in sizes[1:]:
        ctx = big[:n]
        ans = answer(ctx)
        m_base = peak_bytes(lambda ctx=ctx: WORD.findall(ctx))
        m_verify = peak_bytes(lambda ctx=ctx, ans=ans: cold.verify(ans, [ctx]))
        uniq = len(set(WORD.findall(ctx.casefold())))
        print(
            f"{n / 1000:>7.0f}KB {m_base / 2**20:>11.1f}MB {m_verify / 2**20:>8.1f}MB {uniq:>13,}"
        )


if __name__ == "__main__":
    main()
