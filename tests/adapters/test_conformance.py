"""One conformance suite for both adapters: the same cases through LangChain and LlamaIndex,
sync and async, must give the same verdicts, answers and results as the core."""

import asyncio

import pytest
from langchain_core.documents import Document as LCDocument

from citeverify_core import CitationUnverifiedError, CitationVerifier
from langchain_citeverify import CiteVerifyGuard
from llama_index.postprocessor.citeverify import CiteVerifyQueryEngine
from tests.adapters.test_llamaindex import GROUNDED, TEXTS, UNGROUNDED, FixedLLM, index

OFFLINE = {"extensions": {"lookups": {"enabled": False}}}

CASES = [
    pytest.param(GROUNDED, "block", id="allow"),
    pytest.param(UNGROUNDED, "flag", id="flag"),
    pytest.param(UNGROUNDED, "redact", id="redact"),
    pytest.param(UNGROUNDED, "block", id="block"),
]


def via_langchain(answer, action, mode):
    guard = CiteVerifyGuard(policy=OFFLINE, unverified_action=action)
    item = {"answer": answer, "context": [LCDocument(page_content=t) for t in TEXTS]}
    out = guard.invoke(item) if mode == "sync" else asyncio.run(guard.ainvoke(item))
    return out["answer"], out["verification"]


def via_llamaindex(answer, action, mode):
    inner = index().as_query_engine(llm=FixedLLM(answer=answer), similarity_top_k=3)
    engine = CiteVerifyQueryEngine(inner, policy=OFFLINE, unverified_action=action)
    response = engine.query("q") if mode == "sync" else asyncio.run(engine.aquery("q"))
    return response.response, response.metadata["citeverify"]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    "adapter", [via_langchain, via_llamaindex], ids=["langchain", "llamaindex"]
)
@pytest.mark.parametrize(("answer", "action"), CASES)
def test_adapters_agree_with_the_core(adapter, mode, answer, action):
    policy = {**OFFLINE, "output_action": {"unverified_action": action}}
    # LlamaIndex retrieves the nodes in its own order: the core sees the same set of texts.
    expected = CitationVerifier(policy).verify(answer, TEXTS)
    if expected.verdict == "block":
        with pytest.raises(CitationUnverifiedError) as info:
            adapter(answer, action, mode)
        assert info.value.result.reason_code == expected.reason_code
        return
    text, result = adapter(answer, action, mode)
    assert text == expected.answer
    assert (result.verdict, result.reason_code, result.action) == (
        expected.verdict,
        expected.reason_code,
        expected.action,
    )
    assert result.details.groundedness == expected.details.groundedness
    assert [c.text for c in result.details.claims] == [c.text for c in expected.details.claims]
