"""What a LangChain guard blocked or removed reaches no one (issue 32's promise).

A sentinel claim that no document supports is planted in the model's answer. Under ``redact`` and
``block`` it must appear in nothing an adapter returns, stores (graph state, every checkpoint),
streams (every stream mode, ``astream_events``) or serialises, unless the application asked for
the original with ``include_original=True``. Under ``flag`` the answer is shown as it came, so
the sentinel is there: the same probes find it, which shows they can fail.

Real LangChain objects throughout: ``create_agent`` with langchain-core's fake chat model and a
retriever tool over an in-memory vector store, LangGraph's ``InMemorySaver``, LCEL chains.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import pickle
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.load import dumps
from langchain_core.messages import AIMessage
from pydantic import BaseModel

from citeverify_core import CitationVerifier, VerificationResult
from citeverify_core.engine import DEFAULT_BLOCKED_RESPONSE
from langchain_citeverify import (
    CitationBlockedError,
    CiteVerifyGuard,
    CiteVerifyOutputParser,
    CiteVerifyTool,
)
from langchain_citeverify._common import checked_message
from tests.adapters.test_langchain_options import DOCS, OFFLINE

SENTINEL = "Dragons guard the museum at night"
ANSWER = f"The museum opens at nine and closes at five. {SENTINEL} and eat visitors."
REDACTED = "The museum opens at nine and closes at five. [unverified claim removed]"
SHOWN = {"block": DEFAULT_BLOCKED_RESPONSE, "redact": REDACTED, "flag": ANSWER}


def leaks(*things: Any) -> bool:
    """Whether the sentinel is anywhere in ``things``: their repr, JSON and pickles."""
    for thing in things:
        text = repr(thing)
        with contextlib.suppress(TypeError, ValueError):  # not JSON (tuple keys): repr it is
            text += json.dumps(thing, default=_plain)
        if "Dragons" in text or "eat visitors" in text:
            return True
        try:
            if b"Dragons" in pickle.dumps(thing):
                return True
        except (pickle.PicklingError, TypeError, AttributeError):
            pass
    return False


def _plain(value: Any) -> Any:
    if isinstance(value, VerificationResult):
        return value.to_dict()
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return repr(value)


# --- the agent middleware --------------------------------------------------------------------

try:  # the middleware needs langchain 1.x; the lowest supported versions run langchain-core 0.3
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_citeverify import CiteVerifyMiddleware
    from tests.adapters.test_langchain_middleware import ToolCallingFake, replies, search_tool
    from tests.support.chat_models import StreamingToolFake
except (ImportError, pytest.skip.Exception):
    create_agent = None

needs_agents = pytest.mark.skipif(
    create_agent is None,
    reason="CiteVerifyMiddleware needs langchain>=1.0 (pip install 'langchain-citeverify[agents]')",
)


def agent(action: str, *, streaming: bool = False, **options: Any) -> tuple[Any, Any]:
    saver = InMemorySaver()
    middleware = CiteVerifyMiddleware(OFFLINE, unverified_action=action, **options)
    # Only when asked: a model whose `streaming` is set to False never streams at all.
    more = {"streaming": True} if streaming else {}
    model = StreamingToolFake(messages=replies(ANSWER), **more)
    return create_agent(model, [search_tool()], middleware=[middleware], checkpointer=saver), saver


QUESTION = {"messages": [("user", "When does the museum open?")]}
MODES = ["values", "updates", "messages", "custom", "debug"]


def stored(agent_: Any, saver: Any, config: dict[str, Any]) -> list[Any]:
    """Every checkpoint of the thread, and every write the saver keeps."""
    history = list(agent_.get_state_history(config))
    return [*history, *saver.storage.values(), *saver.writes.values()]


def messages_text(chunks: list[Any], final_id: str | None) -> str:
    """What ``stream_mode="messages"`` delivered for the message ``final_id``, joined."""
    return "".join(
        str(message.content)
        for message, _meta in chunks
        if getattr(message, "id", None) == final_id
    )


@needs_agents
@pytest.mark.parametrize("action", ["redact", "block", "flag"])
def test_the_agent_streams_stores_and_returns_only_what_the_user_is_shown(action: str) -> None:
    agent_, saver = agent(action)
    config = {"configurable": {"thread_id": f"sync-{action}"}}
    parts = list(agent_.stream(QUESTION, config, stream_mode=MODES))
    final = agent_.get_state(config).values
    answer = final["messages"][-1]
    assert answer.content == SHOWN[action]
    message_chunks = [data for mode, data in parts if mode == "messages"]
    # In messages mode the text delivered for the answer is what the user is shown.
    assert messages_text(message_chunks, answer.id) == SHOWN[action]
    everything = [parts, final, stored(agent_, saver, config)]
    assert leaks(*everything) is (action == "flag")
    assert final["citeverify"]["action"] == action


@needs_agents
@pytest.mark.parametrize("action", ["redact", "block", "flag"])
def test_the_async_agent_and_its_events_hold_only_what_the_user_is_shown(action: str) -> None:
    agent_, saver = agent(action)
    other, _ = agent(action)
    config = {"configurable": {"thread_id": f"async-{action}"}}

    async def run() -> tuple[list[Any], list[Any]]:
        events = [e async for e in agent_.astream_events(QUESTION, config, version="v2")]
        parts = [p async for p in other.astream(QUESTION, config, stream_mode=MODES)]
        return events, parts

    events, parts = asyncio.run(run())
    verdicts = [e for e in events if e["event"] == "on_custom_event"]
    assert [e["name"] for e in verdicts] == ["citeverify_verdict"]
    assert verdicts[0]["data"]["action"] == action
    tokens = [e for e in events if e["event"] == "on_chat_model_stream"]
    assert bool(tokens) is (action == "flag")  # held under redact and block
    final = agent_.get_state(config).values
    assert final["messages"][-1].content == SHOWN[action]
    assert leaks(events, parts, final, stored(agent_, saver, config)) is (action == "flag")


class Tokens(BaseCallbackHandler):
    """A handler that shows tokens as they come (to a terminal, a websocket)."""

    def __init__(self) -> None:
        self.tokens: list[str] = []

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens.append(token)


@needs_agents
@pytest.mark.parametrize("action", ["redact", "block", "flag"])
def test_a_model_that_streams_on_its_own_gives_token_handlers_nothing_held(action: str) -> None:
    tokens = Tokens()
    agent_, _ = agent(action, streaming=True)
    config = {"configurable": {"thread_id": "tokens"}, "callbacks": [tokens]}
    out = agent_.invoke(QUESTION, config)
    assert out["messages"][-1].content == SHOWN[action]
    assert ("Dragons" in "".join(tokens.tokens)) is (action == "flag")


@needs_agents
def test_include_original_sends_the_original_along_in_the_state_only() -> None:
    agent_, _saver = agent("block", include_original=True)
    config = {"configurable": {"thread_id": "original"}}
    parts = list(agent_.stream(QUESTION, config, stream_mode=["messages"]))
    final = agent_.get_state(config).values
    assert final["messages"][-1].content == DEFAULT_BLOCKED_RESPONSE
    assert final["citeverify"]["original_answer"] == ANSWER  # asked for: kept
    assert messages_text([d for _m, d in parts], final["messages"][-1].id) == (
        DEFAULT_BLOCKED_RESPONSE
    )


def test_provider_metadata_that_could_hold_the_text_is_dropped_from_a_redacted_message() -> None:
    message = AIMessage(
        content=[{"type": "text", "text": ANSWER}],
        additional_kwargs={"reasoning_content": SENTINEL},
        response_metadata={"model_name": "m", "logprobs": {"content": [{"token": "Dragons"}]}},
    )
    result = verify("redact", ANSWER)
    checked = checked_message(message, result)
    assert checked.content == REDACTED
    assert checked.response_metadata["model_name"] == "m"
    assert not leaks(checked)


# --- the LCEL guard, the output parser ---------------------------------------------------------


def verify(action: str, answer: str) -> VerificationResult:
    policy = {**OFFLINE, "output_action": {"unverified_action": action}}
    return CitationVerifier(policy).verify(answer, [d.page_content for d in DOCS])


@pytest.mark.parametrize("action", ["redact", "block"])
@pytest.mark.parametrize("as_message", [False, True], ids=["text", "message"])
def test_the_guard_returns_nothing_of_what_it_withheld(action: str, as_message: bool) -> None:
    guard = CiteVerifyGuard(
        policy=OFFLINE, unverified_action=action, blocked_response=DEFAULT_BLOCKED_RESPONSE
    )
    answer = AIMessage(content=ANSWER, id="m1") if as_message else ANSWER
    out = guard.invoke({"answer": answer, "context": DOCS})
    shown = out["answer"].content if as_message else out["answer"]
    assert shown == SHOWN[action]
    streamed = list(guard.stream({"answer": answer, "context": DOCS}))
    assert not leaks(out, streamed, dumps(out["answer"]) if as_message else "")
    assert out["verification"].details.unverified_claim_count == 1


def test_the_guards_error_on_block_carries_nothing_of_the_answer() -> None:
    guard = CiteVerifyGuard(policy=OFFLINE, unverified_action="block")
    with pytest.raises(CitationBlockedError) as caught:
        guard.invoke({"answer": ANSWER, "context": DOCS})
    error = caught.value
    assert not leaks(str(error), error.result, error.llm_output, error.args, error)
    assert error.result.verdict == "block"
    kept = CitationBlockedError(verify("block", ANSWER), include_original=True)
    assert pickle.loads(pickle.dumps(kept)).llm_output == ANSWER  # asked for: kept, pickled too


@pytest.mark.parametrize("include_original", [False, True])
def test_the_parser_under_block_keeps_the_original_only_when_asked(include_original: bool) -> None:
    parser = CiteVerifyOutputParser(
        policy=OFFLINE,
        unverified_action="block",
        documents=[d.page_content for d in DOCS],
        blocked_response="No.",
        include_original=include_original,
    )
    result = parser.invoke(ANSWER)
    assert result.answer == "No."
    assert leaks(result) is include_original


@pytest.mark.parametrize("action", ["redact", "block", "flag"])
def test_the_tool_names_what_fails_by_place_under_redact_and_block(action: str) -> None:
    tool = CiteVerifyTool(policy=OFFLINE, unverified_action=action, blocked_response="No.")
    sources = [d.page_content for d in DOCS]
    summary = json.loads(tool.invoke({"text": ANSWER, "sources": sources}))
    assert summary["verdict"] == "not supported"
    assert summary["answer_instead"] == "No."
    assert leaks(summary) is (action == "flag")
    if action != "flag":
        assert summary["unsupported_claims"] == [{"claim": 2, "span": [45, 96]}]


def lcel_chain(action: str) -> tuple[Any, Any]:
    """retrieval | generation, and the guard; the model streams (GenericFakeChatModel)."""
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    llm = GenericFakeChatModel(messages=iter([AIMessage(ANSWER)]))
    prompt = ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
    generation = {
        "context": lambda _: DOCS,
        "question": RunnablePassthrough(),
    } | RunnablePassthrough.assign(answer=prompt | llm | StrOutputParser())
    guard = CiteVerifyGuard(
        policy=OFFLINE, unverified_action=action, blocked_response=DEFAULT_BLOCKED_RESPONSE
    )
    return generation, guard


@pytest.mark.parametrize("action", ["redact", "block", "flag"])
def test_guard_around_a_chain_holds_the_models_tokens_from_every_event(action: str) -> None:
    generation, guard = lcel_chain(action)
    chain = guard.around(generation)

    async def events() -> list[Any]:
        return [e async for e in chain.astream_events({"question": "When?"}, version="v2")]

    seen = asyncio.run(events())
    outputs = [e["data"]["output"] for e in seen if e["event"] == "on_chain_end"]
    assert outputs[-1]["answer"] == SHOWN[action]
    assert bool([e for e in seen if e["event"] == "on_chat_model_stream"]) is (action == "flag")
    assert leaks(seen) is (action == "flag")
    verdicts = [e["name"] for e in seen if e["event"] == "on_custom_event"]
    assert verdicts == ["citeverify_verdict"]
    # Without around(), the model's own events carry its tokens: that is what around() is for.
    generation, guard = lcel_chain(action)
    unheld = asyncio.run(_events(generation | guard))
    assert leaks([e for e in unheld if e["event"] == "on_chat_model_stream"])


async def _events(chain: Any) -> list[Any]:
    return [e async for e in chain.astream_events({"question": "When?"}, version="v2")]


# --- credentials: never serialised in clear --------------------------------------------------

KEY = "ncbi-secret-7f3a"
WITH_KEY = {**OFFLINE, "extensions": {"lookups": {"enabled": False, "ncbi_api_key": KEY}}}


def adapters_with_a_key() -> list[Any]:
    made = [
        CiteVerifyGuard(policy=WITH_KEY),
        CiteVerifyOutputParser(policy=WITH_KEY),
        CiteVerifyTool(policy=WITH_KEY),
    ]
    if create_agent is not None:
        made.append(CiteVerifyMiddleware(WITH_KEY))
    return made


@pytest.mark.parametrize("adapter", adapters_with_a_key(), ids=lambda a: type(a).__name__)
def test_no_adapter_writes_a_credential_in_clear(
    adapter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert adapter.policy.extensions.lookups.ncbi_api_key == KEY  # it is there, and used
    written = [repr(adapter), str(adapter), dumps(adapter), repr(adapter.policy)]
    if hasattr(adapter, "model_dump_json"):  # the pydantic adapters' own dumps
        # (BaseTool's args_schema, a class, is no JSON: LangChain's own field, left out.)
        written += [adapter.model_dump_json(exclude={"args_schema"}), repr(adapter.model_dump())]
    assert not any(KEY in text for text in written)
    pickled = pickle.dumps(adapter)
    assert KEY.encode() not in pickled
    # The copy that is loaded reads the credential from the environment of its own process.
    monkeypatch.setenv("NCBI_API_KEY", "from-the-environment")
    assert pickle.loads(pickled).policy.extensions.lookups.ncbi_api_key == "from-the-environment"
    # A deep copy is no serialisation: the key stays.
    assert copy.deepcopy(adapter).policy.extensions.lookups.ncbi_api_key == KEY


class Museum(BaseModel):
    """A structured answer (``create_agent(response_format=Museum)``)."""

    answer: str
    open_on_sundays: bool = False


def structured_agent(action: str, strategy: str) -> tuple[Any, Any]:
    from langchain.agents.structured_output import ProviderStrategy, ToolStrategy

    call = {"name": "search_museum", "args": {"query": "hours"}, "id": "call-1"}
    if strategy == "provider":  # the model answers with the JSON text
        final = AIMessage(content=json.dumps({"answer": ANSWER}), id="ai-2")
        response_format: Any = ProviderStrategy(Museum)
    else:  # the model calls the structured-output tool with the values
        structured_call = {"name": "Museum", "args": {"answer": ANSWER}, "id": "call-2"}
        final = AIMessage(content="", tool_calls=[structured_call], id="ai-2")
        response_format = ToolStrategy(Museum)
    model = ToolCallingFake(messages=iter([AIMessage("", tool_calls=[call], id="ai-1"), final]))
    saver = InMemorySaver()
    middleware = CiteVerifyMiddleware(OFFLINE, unverified_action=action)
    agent_ = create_agent(
        model,
        [search_tool()],
        middleware=[middleware],
        response_format=response_format,
        checkpointer=saver,
    )
    return agent_, saver


@needs_agents
@pytest.mark.parametrize("strategy", ["provider", "tool"])
@pytest.mark.parametrize("action", ["redact", "block", "flag"])
def test_a_structured_answer_is_checked_and_dropped_when_it_fails(
    action: str, strategy: str
) -> None:
    agent_, saver = structured_agent(action, strategy)
    config = {"configurable": {"thread_id": f"structured-{action}-{strategy}"}}
    # Not "messages": the fake model cannot stream a tool call (the other tests cover that mode).
    modes = [mode for mode in MODES if mode != "messages"]
    parts = list(agent_.stream(QUESTION, config, stream_mode=modes))
    final = agent_.get_state(config).values
    assert final["citeverify"]["action"] == action
    if action == "flag":
        assert final["structured_response"].answer == ANSWER  # shown as it came, annotated
    else:
        assert final.get("structured_response") is None
        assert final["messages"][-1].content == SHOWN[action]
    assert leaks(parts, final, stored(agent_, saver, config)) is (action == "flag")


@pytest.mark.parametrize("action", ["redact", "block", "flag"])
def test_parser_around_a_chain_holds_the_models_tokens_from_every_event(action: str) -> None:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.prompts import ChatPromptTemplate

    llm = GenericFakeChatModel(messages=iter([AIMessage(ANSWER)]))
    parser = CiteVerifyOutputParser(
        policy=OFFLINE,
        unverified_action=action,
        documents=[d.page_content for d in DOCS],
        blocked_response=DEFAULT_BLOCKED_RESPONSE,
    )
    chain = parser.around(ChatPromptTemplate.from_template("{question}") | llm)
    seen = asyncio.run(_events(chain))
    result = [e for e in seen if e["event"] == "on_chain_end"][-1]["data"]["output"]
    assert result.answer == SHOWN[action]
    assert leaks(seen) is (action == "flag")
