"""CiteVerifyChatEngine over LlamaIndex's own chat engines, blocked_response=, and chat responses
in verify_response: real VectorStoreIndex, MockEmbedding, and an LLM that gives a fixed answer.
"""

import asyncio
import gc
import json
from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen
from llama_index.core.base.response.schema import PydanticResponse, Response, StreamingResponse
from llama_index.core.bridge.pydantic import Field
from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import QueryEngineTool
from pydantic import BaseModel

from citeverify_core import CitationUnverifiedError, InputError
from citeverify_core.engine import DEFAULT_BLOCKED_RESPONSE
from llama_index.postprocessor.citeverify import (
    CiteVerifyChatEngine,
    CiteVerifyPostprocessor,
    CiteVerifyQueryEngine,
    averify_response,
    verify_response,
)
from tests.adapters.test_llamaindex import GROUNDED, OFFLINE, REDACTED, UNGROUNDED, FixedLLM, index

MODES = ["context", "condense_plus_context"]
REPLACEMENT = "I can't answer that from the museum's documents."


class RecordingLLM(FixedLLM):
    """FixedLLM that keeps every prompt it was given: what the next turn shows the model."""

    prompts: list[str] = Field(default_factory=list)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        self.prompts.append(prompt)
        text = ""
        for word in self.answer.split(" "):
            delta = word if not text else " " + word
            text += delta
            yield CompletionResponse(text=text, delta=delta)


def chat_engine(answer, mode="context", *, llm=None, memory=None, **options):
    """A wrapped chat engine; its memory a ChatMemoryBuffer unless ``memory="default"``.

    llama-index-core 0.14's default memory (``Memory``, on aiosqlite) never closes its connection,
    a ResourceWarning at garbage collection in whichever test runs then; the tests of that memory
    collect it themselves (``test_llama_index_default_memory_is_rewritten``).
    """
    llm = llm or FixedLLM(answer=answer)
    if memory is None:
        memory = ChatMemoryBuffer.from_defaults(token_limit=3000)
    kwargs = {} if memory == "default" else {"memory": memory}
    inner = index().as_chat_engine(chat_mode=mode, llm=llm, similarity_top_k=3, **kwargs)
    return CiteVerifyChatEngine(inner, policy=OFFLINE, **options)


def history(engine):
    return [(m.role.value, m.content) for m in engine.chat_history]


def result_of(response):
    return response.metadata["citeverify"]


# --- chat / achat ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_grounded_answer_is_allowed_and_kept_in_memory(mode):
    engine = chat_engine(GROUNDED, mode, unverified_action="block")
    response = engine.chat("When does it open?")
    assert isinstance(response, AgentChatResponse)
    assert response.response == GROUNDED
    assert len(response.source_nodes) == 3
    assert (result_of(response).verified, result_of(response).action) == (True, "allow")
    assert history(engine) == [("user", "When does it open?"), ("assistant", GROUNDED)]


@pytest.mark.parametrize("mode", MODES)
def test_an_invented_claim_raises_and_the_turn_leaves_the_memory(mode):
    engine = chat_engine(UNGROUNDED, mode, unverified_action="block")
    with pytest.raises(CitationUnverifiedError) as info:
        engine.chat("Tell me.")
    assert info.value.result.details.unverified_claim_count == 1
    assert history(engine) == []  # the user got no answer: the turn did not happen


@pytest.mark.parametrize("mode", MODES)
def test_blocked_response_replaces_the_answer_in_the_reply_and_in_memory(mode):
    engine = chat_engine(UNGROUNDED, mode, unverified_action="block", blocked_response=REPLACEMENT)
    response = engine.chat("Tell me.")
    assert response.response == REPLACEMENT
    result = result_of(response)
    assert (result.verified, result.action, result.verdict) == (False, "block", "block")
    assert history(engine) == [("user", "Tell me."), ("assistant", REPLACEMENT)]


def test_blocked_response_callable_is_given_the_result():
    engine = chat_engine(
        UNGROUNDED,
        unverified_action="block",
        blocked_response=lambda r: f"Blocked ({r.details.unverified_claim_count} unsupported).",
    )
    assert engine.chat("Tell me.").response == "Blocked (1 unsupported)."


@pytest.mark.parametrize("mode", MODES)
def test_redact_rewrites_the_answer_and_the_memory(mode):
    engine = chat_engine(UNGROUNDED, mode, unverified_action="redact")
    response = engine.chat("Tell me.")
    assert response.response == REDACTED
    assert (result_of(response).verified, result_of(response).action) == (False, "redact")
    assert history(engine)[-1] == ("assistant", REDACTED)


def test_flag_annotates_and_changes_nothing():
    engine = chat_engine(UNGROUNDED, unverified_action="flag")
    response = engine.chat("Tell me.")
    assert response.response == UNGROUNDED
    result = result_of(response)
    # Under flag the verdict stays "allow": `verified` and `action` say what happened.
    assert (result.verified, result.action, result.verdict) == (False, "flag", "allow")
    assert history(engine)[-1] == ("assistant", UNGROUNDED)


@pytest.mark.parametrize("mode", MODES)
def test_the_next_turn_does_not_show_the_model_the_removed_claim(mode):
    llm = RecordingLLM(answer=UNGROUNDED)
    engine = chat_engine(None, mode, llm=llm, unverified_action="redact")
    engine.chat("Tell me.")
    llm.answer = GROUNDED
    engine.chat("And the tickets?")
    assert "Dragons" not in llm.prompts[-1]
    assert "[unverified claim removed]" in llm.prompts[-1]


def test_chat_memory_buffer_given_by_the_user_is_rewritten_too():
    memory = ChatMemoryBuffer.from_defaults(token_limit=3000)
    engine = chat_engine(
        UNGROUNDED, memory=memory, unverified_action="block", blocked_response=REPLACEMENT
    )
    engine.chat("Tell me.")
    assert [m.content for m in memory.get_all()] == ["Tell me.", REPLACEMENT]


# LlamaIndex's own leak (see chat_engine above), collected inside the test that made it.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", ["chat", "stream_chat", "achat", "astream_chat"])
def test_llama_index_default_memory_is_rewritten(mode, call):
    engine = chat_engine(UNGROUNDED, mode, memory="default", unverified_action="redact")

    async def run(engine):
        response = await getattr(engine, call)("Tell me.")
        if call == "astream_chat":
            return "".join([t async for t in response.async_response_gen()])
        return response.response

    response = None
    if call.startswith("a"):
        text = asyncio.run(run(engine))
    else:
        response = getattr(engine, call)("Tell me.")
        text = "".join(response.response_gen) if call == "stream_chat" else response.response
    assert text == REDACTED
    assert history(engine) == [("user", "Tell me."), ("assistant", REDACTED)]
    del engine, response
    gc.collect()


@pytest.mark.parametrize("mode", MODES)
def test_achat(mode):
    engine = chat_engine(UNGROUNDED, mode, unverified_action="redact")
    response = asyncio.run(engine.achat("Tell me."))
    assert response.response == REDACTED
    assert history(engine)[-1] == ("assistant", REDACTED)
    blocking = chat_engine(UNGROUNDED, mode, unverified_action="block")
    with pytest.raises(CitationUnverifiedError):
        asyncio.run(blocking.achat("Tell me."))
    assert history(blocking) == []


def test_reset_and_chat_history_are_the_wrapped_engines():
    engine = chat_engine(GROUNDED)
    engine.chat("When does it open?")
    assert engine.chat_history == engine.chat_engine.chat_history
    engine.reset()
    assert engine.chat_history == []


# --- stream_chat / astream_chat ----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_stream_under_flag_yields_tokens_as_they_come(mode):
    engine = chat_engine(UNGROUNDED, mode, unverified_action="flag")
    response = engine.stream_chat("Tell me.")
    assert isinstance(response, StreamingAgentChatResponse)
    tokens = iter(response.response_gen)
    first = next(tokens)
    assert first == "The"
    assert "citeverify" not in response.metadata  # not checked before the stream ends
    rest = list(tokens)
    assert len(rest) > 5
    assert first + "".join(rest) == UNGROUNDED
    assert (result_of(response).verified, result_of(response).action) == (False, "flag")
    assert response.response == UNGROUNDED


@pytest.mark.parametrize("mode", MODES)
def test_stream_under_block_is_held_back_and_replaced(mode):
    engine = chat_engine(UNGROUNDED, mode, unverified_action="block", blocked_response=REPLACEMENT)
    response = engine.stream_chat("Tell me.")
    assert list(response.response_gen) == [REPLACEMENT]  # nothing of the answer got out
    assert result_of(response).action == "block"
    assert history(engine) == [("user", "Tell me."), ("assistant", REPLACEMENT)]


def test_stream_under_block_without_replacement_raises_at_the_end_having_yielded_nothing():
    engine = chat_engine(UNGROUNDED, unverified_action="block")
    response = engine.stream_chat("Tell me.")
    seen = []
    with pytest.raises(CitationUnverifiedError):
        seen.extend(response.response_gen)
    assert seen == []
    assert history(engine) == []


def test_a_grounded_stream_under_block_yields_its_own_tokens():
    engine = chat_engine(GROUNDED, unverified_action="block")
    tokens = list(engine.stream_chat("When does it open?").response_gen)
    assert len(tokens) > 5
    assert "".join(tokens) == GROUNDED


def test_stream_under_redact_rewrites_the_memory():
    engine = chat_engine(UNGROUNDED, unverified_action="redact")
    response = engine.stream_chat("Tell me.")
    assert "".join(response.response_gen) == REDACTED
    assert history(engine)[-1] == ("assistant", REDACTED)


@pytest.mark.parametrize("mode", MODES)
def test_astream_chat(mode):
    async def run(action, **options):
        engine = chat_engine(UNGROUNDED, mode, unverified_action=action, **options)
        response = await engine.astream_chat("Tell me.")
        tokens = [t async for t in response.async_response_gen()]
        return engine, response, tokens

    engine, response, tokens = asyncio.run(run("flag"))
    assert len(tokens) > 5
    assert "".join(tokens) == UNGROUNDED
    assert result_of(response).action == "flag"
    engine, response, tokens = asyncio.run(run("block", blocked_response=REPLACEMENT))
    assert tokens == [REPLACEMENT]
    assert history(engine)[-1] == ("assistant", REPLACEMENT)
    with pytest.raises(CitationUnverifiedError):
        asyncio.run(run("block"))


# --- verify_response on chat responses, blocked_response elsewhere ------------------------------


def test_verify_response_takes_chat_responses():
    inner = chat_engine(UNGROUNDED).chat_engine
    response = inner.chat("Tell me.")
    checked = verify_response(response, OFFLINE, unverified_action="redact")
    assert isinstance(checked, AgentChatResponse)
    assert checked.response == REDACTED
    assert checked.source_nodes == response.source_nodes
    replaced = verify_response(
        response, OFFLINE, unverified_action="block", blocked_response=DEFAULT_BLOCKED_RESPONSE
    )
    assert replaced.response == DEFAULT_BLOCKED_RESPONSE
    with pytest.raises(CitationUnverifiedError):
        verify_response(response, OFFLINE, unverified_action="block")


def test_verify_response_takes_chat_streams_sync_and_async():
    inner = chat_engine(UNGROUNDED).chat_engine
    checked = verify_response(inner.stream_chat("Tell me."), OFFLINE, unverified_action="redact")
    assert "".join(checked.response_gen) == REDACTED

    async def run():
        stream = await inner.astream_chat("Tell me.")
        with pytest.raises(InputError, match="averify_response"):
            verify_response(stream, OFFLINE)
        checked = await averify_response(stream, OFFLINE, unverified_action="redact")
        return [t async for t in checked.async_response_gen()]

    assert "".join(asyncio.run(run())) == REDACTED


def test_query_engine_tool_returns_the_replacement_instead_of_raising():
    inner = index().as_query_engine(llm=FixedLLM(answer=UNGROUNDED), similarity_top_k=3)
    engine = CiteVerifyQueryEngine(
        inner, policy=OFFLINE, unverified_action="block", blocked_response=REPLACEMENT
    )
    tool = QueryEngineTool.from_defaults(engine, name="museum", description="Museum documents.")
    output = tool.call("Tell me.")
    assert output.content == REPLACEMENT
    assert output.raw_output.metadata["citeverify"].action == "block"
    grounded = CiteVerifyQueryEngine(
        index().as_query_engine(llm=FixedLLM(answer=GROUNDED), similarity_top_k=3),
        policy=OFFLINE,
        unverified_action="block",
        blocked_response=REPLACEMENT,
    )
    tool = QueryEngineTool.from_defaults(grounded, name="museum", description="Museum documents.")
    assert tool.call("When does it open?").content == GROUNDED


def test_query_stream_under_block_yields_the_replacement():
    inner = index().as_query_engine(llm=FixedLLM(answer=UNGROUNDED), streaming=True)
    engine = CiteVerifyQueryEngine(
        inner, policy=OFFLINE, unverified_action="block", blocked_response=REPLACEMENT
    )
    response = engine.query("Tell me.")
    assert isinstance(response, StreamingResponse)
    assert list(response.response_gen) == [REPLACEMENT]
    assert response.metadata["citeverify"].action == "block"


class Museum(BaseModel):
    opening: str


def test_a_blocked_structured_answer_comes_back_as_the_replacement_text():
    answer = json.dumps({"opening": "Dragons guard the museum at night."})
    inner = index().as_query_engine(llm=FixedLLM(answer=answer), output_cls=Museum)
    assert isinstance(inner.query("q"), PydanticResponse)
    checked = CiteVerifyQueryEngine(
        inner, policy=OFFLINE, unverified_action="block", blocked_response=REPLACEMENT
    ).query("q")
    assert isinstance(checked, Response)  # no model can hold the replacement
    assert str(checked) == REPLACEMENT


@pytest.mark.parametrize("value", [3, ["no"], True])
def test_a_wrong_blocked_response_is_refused_when_the_wrapper_is_made(value):
    with pytest.raises(InputError, match="blocked_response"):
        CiteVerifyPostprocessor(blocked_response=value)
    with pytest.raises(InputError, match="blocked_response"):
        chat_engine(GROUNDED, blocked_response=value)


def test_the_wrapper_wants_a_chat_engine():
    with pytest.raises(InputError, match="chat engine"):
        CiteVerifyChatEngine(index().as_query_engine(llm=FixedLLM()))
