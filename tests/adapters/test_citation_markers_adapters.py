"""The two adapters agree on an answer that cites its source by name.

LlamaIndex verifies node text as the model saw it (``file_name: hours.md`` above the text),
LangChain the Documents' ``page_content`` only; a source note's words used to count against the
answer in one and be found in the context in the other.
"""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

from citeverify_core import VerificationResult
from langchain_citeverify import CiteVerifyGuard
from llama_index.postprocessor.citeverify import CiteVerifyPostprocessor

TEXT = "The museum opens at nine and closes at five on weekdays."
ANSWER = "The museum opens at nine. (Source: hours.md)"
OFFLINE = {"extensions": {"lookups": {"enabled": False}}}
COUNT = {"extensions": {"lookups": {"enabled": False}, "citation_words": "count"}}


def langchain_result(answer: str, policy: dict) -> VerificationResult:
    guard = CiteVerifyGuard(policy=policy, unverified_action="flag")
    doc = Document(page_content=TEXT, metadata={"source": "hours.md"})
    out = guard.invoke({"answer": answer, "context": [doc]})
    result = out["verification"]
    assert isinstance(result, VerificationResult)
    return result


def llamaindex_result(answer: str, policy: dict) -> VerificationResult:
    node = NodeWithScore(node=TextNode(text=TEXT, metadata={"file_name": "hours.md"}), score=1.0)
    post = CiteVerifyPostprocessor(policy=policy, unverified_action="flag")
    checked = post.verify_response(Response(response=answer, source_nodes=[node]))
    result = checked.metadata["citeverify"]
    assert isinstance(result, VerificationResult)
    return result


@pytest.mark.parametrize(
    "answer", [ANSWER, "The museum opens at nine [hours.md].", "The museum opens at nine."]
)
def test_langchain_and_llamaindex_give_the_same_verdict(answer):
    lc, li = langchain_result(answer, OFFLINE), llamaindex_result(answer, OFFLINE)
    assert lc.details.verified is li.details.verified is True
    assert lc.details.groundedness == li.details.groundedness == 1.0
    assert [c.span for c in lc.details.claims] == [c.span for c in li.details.claims]


def test_an_invented_claim_is_unverified_in_both():
    answer = "Dragons guard the museum at night. (Source: hours.md)"
    assert not langchain_result(answer, OFFLINE).details.verified
    assert not llamaindex_result(answer, OFFLINE).details.verified


def test_under_count_the_metadata_changes_the_arithmetic():
    # The gateway's arithmetic: the note's words are answer words; "hours" and "md" are in
    # LlamaIndex's node text ("file_name: hours.md") and not in LangChain's page_content.
    lc, li = langchain_result(ANSWER, COUNT), llamaindex_result(ANSWER, COUNT)
    assert lc.details.groundedness == pytest.approx(5 / 8)
    assert li.details.groundedness == pytest.approx(7 / 8)
    assert lc.details.verified is li.details.verified is False
