"""The LlamaIndex hook's overhead over the core.

Target (issue 5): at most 10% over calling the core directly, for an answer checked against 10
source nodes of 1 KB each.

Run: ``uv run python bench/bench_llamaindex.py``.
"""

from __future__ import annotations

from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

from citeverify import CitationVerifier
from llamaindex_citeverify import CiteVerifyPostprocessor

from _corpus import answer, best_of, text, vocabulary

POLICY = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}


def main() -> None:
    context = text(10_000, vocabulary())
    texts = [context[i : i + 1000] for i in range(0, 10_000, 1000)]
    nodes = [NodeWithScore(node=TextNode(text=t), score=1.0) for t in texts]
    core = CitationVerifier(POLICY)
    hook = CiteVerifyPostprocessor(policy=POLICY)
    print("answer against 10 source nodes of 1 KB each; same configuration on both sides")
    for words in (300, 100):
        ans = answer(context, n_words=words)
        response = Response(ans, source_nodes=nodes)
        core.verify(ans, texts)
        hook.verify_response(response)
        rounds = []
        for _ in range(5):  # interleaved, so that machine noise hits both sides alike
            rounds.append(
                (
                    best_of(lambda a=ans: core.verify(a, texts), 300),
                    best_of(lambda r=response: hook.verify_response(r), 300),
                )
            )
        t_core = min(r[0] for r in rounds)
        t_hook = min(r[1] for r in rounds)
        print(
            f"  {words}-word answer: core {t_core * 1000:6.3f} ms, hook {t_hook * 1000:6.3f} ms, "
            f"overhead {(t_hook - t_core) * 1000:.3f} ms = {100 * (t_hook / t_core - 1):+.1f}% "
            "(target <= 10%)"
        )


if __name__ == "__main__":
    main()
