"""The agent middleware's cost per agent turn, over the same agent without it.

Target (issue 32): ``CiteVerifyMiddleware`` adds at most 1.5 ms to an agent turn, now that it
checks around the model call (``wrap_model_call``) and, under ``redact`` and ``block``, holds the
model's tokens (a copy of the callback manager without the streaming handlers, per model call).

One turn is ``agent.invoke(question)`` of a ``create_agent`` agent: the model calls a retriever
tool over an in-memory vector store (two 1 KB Documents), then answers (about 60 words). The
model is langchain-core's fake chat model, replaying the two replies forever, so the turn's
time is LangGraph's and LangChain's own work plus ours. The agents are compiled once; the cases
run interleaved, round after round, each round the best of ``REPEAT`` turns per case; the
figures are the medians over the rounds, and the added cost is the median of the per-round
differences (these machines are noisy: compare within one run).

Cases: no middleware; the middleware under flag, redact and block with a grounded answer (the
answer passes); under block with an answer it blocks (the replacement path); and under redact
with ``stream_mode="messages"`` against the same agent without the middleware streamed the same
way (the path where tokens are held, and LangGraph's messages handler is attached).

Run: ``.venv/bin/python bench/bench_middleware.py`` (``--rounds N``, default 15).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage
from langchain_core.tools import create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_citeverify import CiteVerifyMiddleware

# The repository's tests/ (a `tests` package of another distribution may come first otherwise).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.chat_models import StreamingToolFake

OFFLINE = {"extensions": {"lookups": {"enabled": False}}}
HOURS = (
    "The museum opens at nine and closes at five on weekdays. On Saturdays it opens at ten "
    "and closes at six, and on Sundays it is closed except during the summer festival. "
)
TICKETS = (
    "Tickets cost ten euros for adults; children under twelve enter free, students pay six "
    "euros, and the annual pass costs forty euros for unlimited visits. "
)
DOCS = [Document(page_content=HOURS * 5), Document(page_content=TICKETS * 6)]
GROUNDED = (
    "The museum opens at nine and closes at five on weekdays. On Saturdays it opens at ten and "
    "closes at six. Tickets cost ten euros for adults; children under twelve enter free, "
    "students pay six euros, and the annual pass costs forty euros for unlimited visits."
)
INVENTED = GROUNDED + " Dragons guard the museum at night and eat the visitors who stay late."
QUESTION = {"messages": [("user", "When does the museum open, and what does it cost?")]}
REPEAT = 20


def agent(answer: str, middleware: CiteVerifyMiddleware | None) -> Any:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(DOCS)
    search = create_retriever_tool(
        store.as_retriever(search_kwargs={"k": 2}),
        "search_museum",
        "Search the museum's pages.",
        response_format="content_and_artifact",
    )
    call = {"name": "search_museum", "args": {"query": "hours and prices"}, "id": "call-1"}
    turn = [AIMessage(content="", tool_calls=[call]), AIMessage(content=answer)]
    model = StreamingToolFake(messages=itertools.cycle(turn))
    return create_agent(model, [search], middleware=[middleware] if middleware else [])


def best_of(fn: Callable[[], object], n: int) -> float:
    best = float("inf")
    for _ in range(n):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    def mw(action: str) -> CiteVerifyMiddleware:
        return CiteVerifyMiddleware(OFFLINE, unverified_action=action)

    def turn(agent_: Any) -> Callable[[], object]:
        return lambda: agent_.invoke(QUESTION)

    cases: dict[str, Callable[[], object]] = {
        "no middleware": turn(agent(GROUNDED, None)),
        "flag, answer passes": turn(agent(GROUNDED, mw("flag"))),
        "redact, answer passes": turn(agent(GROUNDED, mw("redact"))),
        "block, answer passes": turn(agent(GROUNDED, mw("block"))),
        "block, answer blocked": turn(agent(INVENTED, mw("block"))),
    }
    streamed_plain = agent(GROUNDED, None)
    streamed_redact = agent(GROUNDED, mw("redact"))
    cases["no middleware, messages mode"] = lambda: list(
        streamed_plain.stream(QUESTION, stream_mode="messages")
    )
    cases["redact, messages mode (tokens held)"] = lambda: list(
        streamed_redact.stream(QUESTION, stream_mode="messages")
    )
    for fn in cases.values():  # warm: imports, caches, the first compile of each path
        fn()

    times: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for i in range(args.rounds):
        order = names if i % 2 == 0 else names[::-1]  # alternate who goes first
        for name in order:
            times[name].append(best_of(cases[name], REPEAT))

    def row(name: str, base: str) -> str:
        t = statistics.median(times[name]) * 1000
        delta = statistics.median(
            (a - b) * 1000 for a, b in zip(times[name], times[base], strict=True)
        )
        ratio = statistics.median(a / b for a, b in zip(times[name], times[base], strict=True))
        verdict = "" if name == base else (" (met)" if delta <= 1.5 else " (NOT met)")
        return f"| {name} | {t:.2f} ms | {delta:+.2f} ms{verdict} | {ratio:.2f}x |"

    print(f"agent turn, median of {args.rounds} rounds (best of {REPEAT} turns each)\n")
    print("| case | per turn | added (target <= +1.5 ms) | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name in names:
        base = "no middleware, messages mode" if "messages mode" in name else "no middleware"
        print(row(name, base))


if __name__ == "__main__":
    main()
