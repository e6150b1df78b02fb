"""The LangChain guard's overhead over the core, and abatch throughput.

Target (issue 4): the guard costs at most 10% more than calling the core directly, for a 300-word
answer against 50 KB of Documents. Also reported: abatch throughput for 1,000 answers.

Run: ``uv run python bench/bench_langchain.py``.
"""

from __future__ import annotations

import asyncio
import time

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from citeverify import CitationVerifier
from langchain_citeverify import CiteVerifyGuard

from _corpus import answer, best_of, text, vocabulary

POLICY = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}


def main() -> None:
    context = text(50_000, vocabulary())
    docs = [Document(page_content=context[i : i + 5000]) for i in range(0, len(context), 5000)]
    texts = [d.page_content for d in docs]
    ans = answer(context)
    item = {"answer": ans, "context": docs}
    print("300-word answer, 50 KB of Documents (10 x 5 KB); same configuration on both sides")
    for cached in (True, False):
        core = CitationVerifier(POLICY, context_cache=cached)
        guard = CiteVerifyGuard(policy=POLICY, context_cache=cached)
        core.verify(ans, texts)
        guard.invoke(item)
        rounds = []
        for _ in range(5):  # interleaved, so that machine noise hits both sides alike
            rounds.append(
                (
                    best_of(lambda c=core: c.verify(ans, texts)),
                    best_of(lambda g=guard: g.invoke(item)),
                )
            )
        t_core = min(r[0] for r in rounds)
        t_guard = min(r[1] for r in rounds)
        label = "warm context cache" if cached else "no context cache  "
        print(
            f"  {label}: core {t_core * 1000:6.3f} ms, guard {t_guard * 1000:6.3f} ms, "
            f"overhead {(t_guard - t_core) * 1000:.3f} ms = {100 * (t_guard / t_core - 1):+.1f}% "
            "(target <= 10%)"
        )
    identity = RunnableLambda(lambda x: x)
    floor = best_of(lambda: identity.invoke(item))
    print(f"  LangChain's own floor: an identity RunnableLambda.invoke costs {floor * 1000:.3f} ms")

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
