"""The LangChain guard's overhead over the core, and abatch throughput.

Targets (issues 4 and 14): the guard costs at most 10% more than calling the core directly, for a
300-word and for a 100-word answer against 50 KB of Documents, both sides with the context cache
(the guard keeps one by default). Each ratio is measured within one run: core and guard
interleaved, in rounds, each round the best of ``REPEAT`` calls per side; the median round is
reported. Also reported: the same without the context cache, LangChain's own floor, and abatch
throughput for 1,000 answers.

Run: ``uv run python bench/bench_langchain.py`` (``--quick`` skips the throughput part).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from citeverify_core import CitationVerifier
from langchain_citeverify import CiteVerifyGuard

from _corpus import answer, best_of, text, vocabulary

POLICY = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}
ROUNDS = 15
REPEAT = 60
TARGET = 1.10


def interleaved(core: Callable[[], object], adapter: Callable[[], object]) -> tuple[float, ...]:
    """Median core time, median adapter time, median of the per-round ratios (adapter / core)."""
    core(), adapter()
    t_core, t_adapter, ratios = [], [], []
    for i in range(ROUNDS):  # interleaved, and alternating who goes first
        if i % 2:
            b = best_of(adapter, REPEAT)
            a = best_of(core, REPEAT)
        else:
            a = best_of(core, REPEAT)
            b = best_of(adapter, REPEAT)
        t_core.append(a)
        t_adapter.append(b)
        ratios.append(b / a)
    return statistics.median(t_core), statistics.median(t_adapter), statistics.median(ratios)


def report(label: str, t_core: float, t_guard: float, ratio: float) -> None:
    verdict = "met" if ratio <= TARGET else "NOT MET"
    print(
        f"  {label}: core {t_core * 1000:6.3f} ms, guard {t_guard * 1000:6.3f} ms, "
        f"overhead {(t_guard - t_core) * 1000:+.3f} ms, ratio {ratio:.3f} = "
        f"{100 * (ratio - 1):+.1f}% (target <= {100 * (TARGET - 1):.0f}%: {verdict})"
    )


def main() -> None:
    context = text(50_000, vocabulary())
    docs = [Document(page_content=context[i : i + 5000]) for i in range(0, len(context), 5000)]
    texts = [d.page_content for d in docs]
    print(
        "answer against 50 KB of Documents (10 x 5 KB); same configuration on both sides; "
        f"median of {ROUNDS} interleaved rounds, each the best of {REPEAT} calls a side"
    )
    for cached in (True, False):
        for words in (100, 300):
            ans = answer(context, n_words=words)
            item = {"answer": ans, "context": docs}
            core = CitationVerifier(POLICY, context_cache=cached)
            guard = CiteVerifyGuard(policy=POLICY, context_cache=cached)
            figures = interleaved(
                lambda c=core, a=ans: c.verify(a, texts),
                lambda g=guard, i=item: g.invoke(i),
            )
            cache = "context cache" if cached else "no cache     "
            report(f"{words}-word answer, {cache}", *figures)
    identity = RunnableLambda(lambda x: x)
    item = {"answer": answer(context), "context": docs}
    floor = best_of(lambda: identity.invoke(item))
    print(f"  LangChain's own floor: an identity RunnableLambda.invoke costs {floor * 1000:.3f} ms")
    if "--quick" in sys.argv:
        return

    guard = CiteVerifyGuard(policy=POLICY)
    items = [{"answer": answer(context, seed=i), "context": docs} for i in range(1000)]
    start = time.perf_counter()
    out = asyncio.run(guard.abatch(items, config={"max_concurrency": 16}))
    elapsed = time.perf_counter() - start
    print(
        f"abatch of 1,000 answers (max_concurrency 16): {elapsed:.2f} s, "
        f"{len(out) / elapsed:.0f} answers/s"
    )
    start = time.perf_counter()
    guard.batch(items[:200], config={"max_concurrency": 4})
    elapsed = time.perf_counter() - start
    print(
        f"batch of 200 answers (threads, max_concurrency 4): {elapsed:.2f} s, "
        f"{200 / elapsed:.0f} answers/s"
    )


if __name__ == "__main__":
    main()
