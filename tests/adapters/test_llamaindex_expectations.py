"""What LlamaIndex users expect of the adapters (issue 11): the response type they got back,
structured answers verified by their values, streams that stay streams, prompts and retrieval
passed through, node text as the LLM saw it, no silent no-op, and a clear missing-framework error.
"""

import asyncio
import json
import subprocess
import sys
from enum import StrEnum
from typing import Literal

import pytest
from llama_index.core import Document, MockEmbedding, VectorStoreIndex
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.prompts import PromptTemplate
from llama_index.core.schema import QueryBundle
from pydantic import BaseModel, Field

from citeverify_core import CitationUnverifiedError, InputError
from llama_index.evaluation.citeverify import CiteVerifyEvaluator
from llama_index.postprocessor.citeverify import (
    CiteVerifyPostprocessor,
    CiteVerifyQueryEngine,
)
from tests.adapters.test_llamaindex import (
    GROUNDED,
    OFFLINE,
    REDACTED,
    TEXTS,
    UNGROUNDED,
    FixedLLM,
    index,
)

MARKER = "[unverified claim removed]"


def wrapped(answer, *, policy=OFFLINE, idx=None, **kwargs):
    action = kwargs.pop("unverified_action", "flag")
    inner = (idx or index()).as_query_engine(
        llm=FixedLLM(answer=answer), similarity_top_k=3, **kwargs
    )
    return CiteVerifyQueryEngine(inner, policy=policy, unverified_action=action)


# --- CiteVerifyEvaluator.evaluate(contexts="one passage") -------------------------------------


def test_evaluator_takes_a_single_string_as_one_context():
    evaluator = CiteVerifyEvaluator(policy=OFFLINE)
    one = "The museum opens at nine and closes at five on weekdays."
    result = evaluator.evaluate(response="The museum opens at nine.", contexts=one)
    assert result.contexts == [one]  # one passage, not 57 one-character contexts
    assert result.passing is True
    assert result.score == 1.0


def test_evaluator_rejects_a_context_that_is_not_text():
    response = wrapped(GROUNDED).query("q")
    with pytest.raises(InputError, match=r"contexts\[0\].*evaluate_response"):
        CiteVerifyEvaluator(policy=OFFLINE).evaluate(
            response=GROUNDED, contexts=response.source_nodes
        )


def test_evaluate_response_reads_a_structured_answer_by_its_values():
    inner = index().as_query_engine(
        llm=FixedLLM(answer=json.dumps(GROUNDED_MUSEUM)), similarity_top_k=3, output_cls=Museum
    )
    result = CiteVerifyEvaluator(policy=OFFLINE).evaluate_response(response=inner.query("q"))
    assert result.response == "\n".join(GROUNDED_MUSEUM.values())
    assert (result.passing, result.score) == (True, 1.0)


# --- Structured output: PydanticResponse -------------------------------------------------------


class Museum(BaseModel):
    """Field names no source says: verifying the JSON would count them as claims."""

    opening_hours_summary_field: str
    adult_ticket_price_field: str
    highlights: list[str] = []
    rating: int = 0


GROUNDED_MUSEUM = {
    "opening_hours_summary_field": "The museum opens at nine and closes at five.",
    "adult_ticket_price_field": "Tickets cost ten euros for adults.",
}


def structured(values, **kwargs):
    return wrapped(json.dumps(values), output_cls=Museum, **kwargs)


def test_structured_answer_stays_a_pydantic_response_and_its_values_are_verified():
    response = structured(GROUNDED_MUSEUM).query("When does it open, what does it cost?")
    assert isinstance(response, PydanticResponse)
    assert isinstance(response.response, Museum)
    assert response.response.adult_ticket_price_field == GROUNDED_MUSEUM["adult_ticket_price_field"]
    result = response.metadata["citeverify"]
    assert result.reason_code == "citation.verified"
    assert result.details.groundedness == 1.0
    claims = [c.text for c in result.details.claims]
    assert claims == [
        "The museum opens at nine and closes at five.",
        GROUNDED_MUSEUM["adult_ticket_price_field"],
    ]
    assert not any("field" in c for c in claims)  # the field names are not verified


def test_structured_answer_with_an_unsupported_value_is_flagged_blocked_or_redacted():
    values = {
        **GROUNDED_MUSEUM,
        "highlights": ["Dragons guard the museum at night and eat visitors."],
    }
    flagged = structured(values).query("q")
    assert flagged.metadata["citeverify"].reason_code == "citation.unverified"
    assert flagged.response.highlights == values["highlights"]  # flag annotates only

    with pytest.raises(CitationUnverifiedError):
        structured(values, unverified_action="block").query("q")

    redacted = structured(values, unverified_action="redact").query("q")
    assert isinstance(redacted, PydanticResponse)
    assert isinstance(redacted.response, Museum)
    # Only the value that held the failing claim is replaced; the others are intact.
    assert redacted.response.highlights == [MARKER]
    assert (
        redacted.response.opening_hours_summary_field
        == GROUNDED_MUSEUM["opening_hours_summary_field"]
    )
    assert redacted.response.adult_ticket_price_field == GROUNDED_MUSEUM["adult_ticket_price_field"]


def test_structured_answer_redaction_inside_one_value():
    values = {
        **GROUNDED_MUSEUM,
        "adult_ticket_price_field": "Tickets cost ten euros for adults. Dragons guard the museum at night and eat visitors.",
    }
    redacted = structured(values, unverified_action="redact").query("q")
    assert (
        redacted.response.adult_ticket_price_field == f"Tickets cost ten euros for adults. {MARKER}"
    )


def test_structured_answer_async():
    response = asyncio.run(structured(GROUNDED_MUSEUM).aquery("q"))
    assert isinstance(response, PydanticResponse)
    assert response.metadata["citeverify"].details.groundedness == 1.0


# --- Streaming ---------------------------------------------------------------------------------


def test_flagged_stream_passes_tokens_live_and_attaches_the_verdict_at_the_end():
    response = wrapped(UNGROUNDED, streaming=True).query("q")
    assert isinstance(response, StreamingResponse)
    first = next(response.response_gen)
    assert first == "The"  # a token as it arrives, before the answer is complete
    assert "citeverify" not in response.metadata  # not verified yet
    rest = list(response.response_gen)
    assert first + "".join(rest) == UNGROUNDED
    result = response.metadata["citeverify"]
    assert (result.verdict, result.reason_code) == ("allow", "citation.unverified")


def test_print_response_stream_prints_and_then_the_verdict_is_there(capsys):
    response = wrapped(GROUNDED, streaming=True).query("q")
    response.print_response_stream()
    assert capsys.readouterr().out == GROUNDED
    assert response.metadata["citeverify"].reason_code == "citation.verified"
    assert response.get_response().metadata["citeverify"].reason_code == "citation.verified"


def test_redacted_stream_is_held_back_and_yields_the_redacted_answer():
    response = wrapped(UNGROUNDED, streaming=True, unverified_action="redact").query("q")
    assert list(response.response_gen) == [REDACTED]  # nothing unverified was ever yielded
    assert response.metadata["citeverify"].action == "redact"


def test_blocked_stream_raises_at_its_end_having_yielded_nothing():
    response = wrapped(UNGROUNDED, streaming=True, unverified_action="block").query("q")
    seen = []
    with pytest.raises(CitationUnverifiedError) as info:
        seen.extend(response.response_gen)
    assert seen == []
    assert info.value.result.details.unverified_claim_count == 1


def test_held_back_stream_keeps_its_tokens_when_the_answer_passes():
    response = wrapped(GROUNDED, streaming=True, unverified_action="block").query("q")
    tokens = list(response.response_gen)
    assert len(tokens) > 1 and "".join(tokens) == GROUNDED


def test_async_stream_stays_async_and_is_verified_at_its_end():
    async def run(action):
        response = await wrapped(UNGROUNDED, streaming=True, unverified_action=action).aquery("q")
        assert isinstance(response, AsyncStreamingResponse)
        tokens = [t async for t in response.async_response_gen()]
        return tokens, response.metadata["citeverify"]

    tokens, result = asyncio.run(run("flag"))
    assert len(tokens) > 1 and "".join(tokens) == UNGROUNDED
    assert result.reason_code == "citation.unverified"
    tokens, result = asyncio.run(run("redact"))
    assert tokens == [REDACTED]
    with pytest.raises(CitationUnverifiedError):
        asyncio.run(run("block"))


def test_sync_verify_of_an_async_stream_says_what_to_use():
    async def stream():
        inner = index().as_query_engine(llm=FixedLLM(answer=GROUNDED), streaming=True)
        return await inner.aquery("q")

    with pytest.raises(InputError, match="averify_response"):
        CiteVerifyPostprocessor(policy=OFFLINE).verify_response(asyncio.run(stream()))


# --- Prompts, retrieval and the QueryBundle pass through ---------------------------------------


def test_prompts_are_the_wrapped_engines():
    eng = wrapped(GROUNDED)
    key = "query_engine:response_synthesizer:text_qa_template"
    assert key in eng.get_prompts()
    eng.update_prompts({key: PromptTemplate("ONLY THIS {context_str} {query_str}")})
    inner_prompts = eng.query_engine.get_prompts()
    assert inner_prompts["response_synthesizer:text_qa_template"].get_template() == (
        "ONLY THIS {context_str} {query_str}"
    )


def test_retrieve_is_the_wrapped_engines():
    eng = wrapped(GROUNDED)
    nodes = eng.retrieve(QueryBundle("When does it open?"))
    assert sorted(n.node.get_content() for n in nodes) == sorted(TEXTS)
    anodes = asyncio.run(eng.aretrieve(QueryBundle("When does it open?")))
    assert sorted(n.node.get_content() for n in anodes) == sorted(TEXTS)


def test_a_query_bundle_reaches_the_wrapped_engine_whole():
    seen = []

    class Spy(FixedLLM):
        def complete(self, prompt, formatted=False, **kwargs):
            seen.append(prompt)
            return super().complete(prompt, formatted=formatted, **kwargs)

    inner = index().as_query_engine(llm=Spy(answer=GROUNDED), similarity_top_k=3)
    eng = CiteVerifyQueryEngine(inner, policy=OFFLINE)
    bundle = QueryBundle("When does it open?", custom_embedding_strs=["opening hours"])
    response = eng.query(bundle)
    assert response.metadata["citeverify"].reason_code == "citation.verified"
    assert "When does it open?" in seen[0]


def test_synthesize_answers_are_verified_too():
    eng = wrapped(UNGROUNDED, unverified_action="redact")
    nodes = eng.retrieve(QueryBundle("q"))
    response = eng.synthesize(QueryBundle("q"), nodes)
    assert isinstance(response, Response) and response.response == REDACTED


# --- Node text as the LLM saw it ---------------------------------------------------------------


def test_metadata_shown_to_the_llm_counts_and_excluded_metadata_does_not():
    answer = "The museum stands in Ghent."
    shown = Document(
        text="The museum was founded in 1890.", metadata={"city": "The museum stands in Ghent"}
    )
    hidden = Document(
        text="The museum was founded in 1890.",
        metadata={"city": "The museum stands in Ghent"},
        excluded_llm_metadata_keys=["city"],
    )
    for doc, reason_code in [(shown, "citation.verified"), (hidden, "citation.unverified")]:
        idx = VectorStoreIndex.from_documents([doc], embed_model=MockEmbedding(embed_dim=8))
        response = wrapped(answer, idx=idx).query("Where is it?")
        assert response.metadata["citeverify"].reason_code == reason_code, doc.metadata


# --- The postprocessor in node_postprocessors ------------------------------------------------


@pytest.mark.parametrize("mode", ["query", "aquery", "chat", "achat"])
def test_postprocessor_in_node_postprocessors_refuses_for_queries_and_chats(mode):
    post = CiteVerifyPostprocessor(policy=OFFLINE, unverified_action="block")
    idx, llm = index(), FixedLLM(answer=UNGROUNDED)
    if mode.endswith("query"):
        eng = idx.as_query_engine(llm=llm, node_postprocessors=[post])
    else:
        memory = ChatMemoryBuffer.from_defaults(token_limit=3000)  # no aiosqlite to leak
        eng = idx.as_chat_engine(
            chat_mode="context", llm=llm, memory=memory, node_postprocessors=[post]
        )
    call = getattr(eng, mode)
    # Raised at the first question, before any answer: nothing unchecked reaches the user.
    with pytest.raises(InputError, match=r"CiteVerifyChatEngine.*verify_response"):
        asyncio.run(call("q")) if mode.startswith("a") else call("q")


# --- Missing framework -------------------------------------------------------------------------


@pytest.mark.parametrize("blocked", [["llama_index.core"]])
def test_import_without_llama_index_core_names_what_to_install(blocked):
    code = (
        "import sys\n"
        f"for name in {blocked!r}: sys.modules[name] = None\n"
        "try:\n"
        "    import llama_index.postprocessor.citeverify\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc.name, str(exc))\n"
        "else:\n"
        "    print('imported')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.startswith("ModuleNotFoundError llama_index.core ")
    assert "pip install llama-index-core" in out


class Verdict(StrEnum):  # a str too: must still count as a label
    OPEN = "open"
    CLOSED = "closed"


class Labelled(BaseModel):
    summary: str
    sentiment: Literal["positive", "negative"]
    status: Verdict
    tags: list[Literal["hours", "prices"]] = []


def test_labels_from_a_fixed_set_are_not_verified_as_claims():
    values = {
        "summary": "The museum opens at nine and closes at five.",
        "sentiment": "positive",
        "status": "open",
        "tags": ["hours"],
    }
    response = wrapped(json.dumps(values), output_cls=Labelled).query("q")
    result = response.metadata["citeverify"]
    assert [c.text for c in result.details.claims] == [values["summary"]]
    assert result.reason_code == "citation.verified"


def test_labels_survive_redaction():
    values = {
        "summary": "The museum opens at nine. Dragons guard the museum at night and eat visitors.",
        "sentiment": "negative",
        "status": "closed",
    }
    redacted = wrapped(json.dumps(values), output_cls=Labelled, unverified_action="redact").query(
        "q"
    )
    assert redacted.response.summary == f"The museum opens at nine. {MARKER}"
    assert (redacted.response.sentiment, redacted.response.status) == ("negative", Verdict.CLOSED)


class Short(BaseModel):
    hours: str
    motto: str = Field(max_length=12)


def test_a_redaction_the_model_cannot_hold_blocks_instead():
    values = {"hours": "The museum opens at nine.", "motto": "Dragons win."}
    with pytest.raises(CitationUnverifiedError) as info:
        wrapped(json.dumps(values), output_cls=Short, unverified_action="redact").query("q")
    assert info.value.result.verdict == "block"
    assert any("do not fit Short" in r for r in info.value.result.reasons)
