"""CiteVerifyMiddleware in real LangChain 1.x agents (create_agent, a fake tool-calling model).

The model is langchain-core's GenericFakeChatModel, which replays the messages it is given (tool
calls included); the tools are real tools over an InMemoryVectorStore. Nothing is mocked.
Skipped where langchain 1.x is absent (the lowest supported versions run langchain-core 0.3).
"""

import asyncio
import contextlib
import copy
import inspect
import logging
import pickle

import pytest

pytest.importorskip(
    "langchain.agents.middleware",
    reason="CiteVerifyMiddleware needs langchain>=1.0 (pip install 'langchain-citeverify[agents]')",
)

from langchain.agents import create_agent
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import create_retriever_tool, tool
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from citeverify_core import InputError, VerificationResult
from citeverify_core.engine import DEFAULT_BLOCKED_RESPONSE
from langchain_citeverify import CiteVerifyMiddleware
from langchain_citeverify.middleware import tool_context

try:  # langgraph-checkpoint with a msgpack allowlist reports what it lets through or blocks
    from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
except ImportError:  # older: no allowlist, nothing is warned about or blocked
    register_serde_event_listener = None

from tests.adapters.test_langchain_options import DOCS, GROUNDED, INVENTED, OFFLINE

QUESTION = {"messages": [HumanMessage("When does the museum open, and what does it cost?")]}


class ToolCallingFake(GenericFakeChatModel):
    """GenericFakeChatModel with bind_tools (create_agent binds the tools; the replies are fixed)."""

    def bind_tools(self, tools, **kwargs):
        return self


def search_tool():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(DOCS)
    return create_retriever_tool(
        store.as_retriever(search_kwargs={"k": 2}),
        "search_museum",
        "Search the museum's pages.",
        response_format="content_and_artifact",
    )


def replies(answer, *, plan=""):
    """The model's turns: a tool call, the answer, and one more that must never be reached."""
    call = {"name": "search_museum", "args": {"query": "museum hours"}, "id": "call-1"}
    return iter(
        [
            AIMessage(content=plan, tool_calls=[call], id="ai-1"),
            AIMessage(content=answer, id="ai-2"),
            AIMessage(content="NEVER REACHED", id="ai-3"),
        ]
    )


def agent_with(messages, middleware, **kwargs):
    model = ToolCallingFake(messages=messages)
    return create_agent(model, [search_tool()], middleware=[middleware], **kwargs)


def middleware(action, **kwargs):
    return CiteVerifyMiddleware(OFFLINE, unverified_action=action, **kwargs)


def test_a_grounded_answer_passes_with_the_result_in_the_state_and_the_message():
    out = agent_with(replies(GROUNDED), middleware("block")).invoke(QUESTION)
    final = out["messages"][-1]
    assert final.content == GROUNDED
    assert out["citeverify"]["action"] == "allow"
    assert VerificationResult.from_dict(out["citeverify"]).verified
    assert final.response_metadata["citeverify"] == out["citeverify"]


def test_an_invented_claim_is_blocked_replaced_and_the_loop_ends():
    messages = replies(INVENTED)
    out = agent_with(messages, middleware("block")).invoke(QUESTION)
    answers = [m for m in out["messages"] if isinstance(m, AIMessage)]
    assert [m.content for m in answers] == ["", DEFAULT_BLOCKED_RESPONSE]  # replaced, not added
    assert answers[-1].id == "ai-2"
    assert out["citeverify"]["verdict"] == "block"
    assert out["citeverify"]["original_answer"] == ""  # what was blocked is not kept
    assert out["citeverify"]["details"]["unverified_claim_count"] == 1  # why it was, is
    assert next(messages).content == "NEVER REACHED"  # the model was not called again


def test_include_original_keeps_what_was_blocked_for_the_applications_audit():
    out = agent_with(replies(INVENTED), middleware("block", include_original=True)).invoke(QUESTION)
    assert out["messages"][-1].content == DEFAULT_BLOCKED_RESPONSE
    assert out["citeverify"]["original_answer"] == INVENTED


def test_blocked_response_may_be_a_function_of_the_result():
    def explain(result):
        return f"Not supported by the museum's pages ({result.reason_code})."

    out = agent_with(replies(INVENTED), middleware("block", blocked_response=explain)).invoke(
        QUESTION
    )
    assert out["messages"][-1].content == (
        "Not supported by the museum's pages (citation.unverified)."
    )


def test_check_intermediate_stops_a_blocked_plan_before_its_tools_run():
    messages = replies(GROUNDED, plan="Dragons guard the museum at night, I will look it up.")
    out = agent_with(messages, middleware("block", check_intermediate=True)).invoke(QUESTION)
    assert not any(isinstance(m, ToolMessage) for m in out["messages"])  # the tool never ran
    assert out["messages"][-1].content == DEFAULT_BLOCKED_RESPONSE
    assert out["messages"][-1].tool_calls == []
    assert next(messages).id == "ai-2"  # the model was not called again


def test_intermediate_messages_are_not_checked_by_default():
    messages = replies(GROUNDED, plan="Dragons guard the museum at night, I will look it up.")
    out = agent_with(messages, middleware("block")).invoke(QUESTION)
    assert out["messages"][-1].content == GROUNDED
    assert out["citeverify"]["action"] == "allow"


def test_redact_rewrites_the_answer():
    out = agent_with(replies(INVENTED), middleware("redact")).invoke(QUESTION)
    assert out["messages"][-1].content == "The museum opens at nine. [unverified claim removed]"
    assert out["citeverify"]["action"] == "redact"
    assert out["citeverify"]["verdict"] == "allow"  # the seed's rule: test verified / action


def test_flag_keeps_the_answer_and_annotates_it():
    out = agent_with(replies(INVENTED), middleware("flag")).invoke(QUESTION)
    final = out["messages"][-1]
    assert final.content == INVENTED
    assert final.response_metadata["citeverify"]["action"] == "flag"
    result = VerificationResult.from_dict(out["citeverify"])
    assert (result.verdict, result.action, result.verified) == ("allow", "flag", False)


def test_the_context_is_what_the_tools_returned():
    # The same answer, checked against other tool output, fails: the context is the agent's.
    @tool
    def search_museum(query: str) -> str:
        """Search the museum's pages."""
        return "The library opens at ten."

    model = ToolCallingFake(messages=replies(GROUNDED))
    agent = create_agent(model, [search_museum], middleware=[middleware("block")])
    out = agent.invoke(QUESTION)
    assert out["messages"][-1].content == DEFAULT_BLOCKED_RESPONSE


def test_context_key_names_a_state_key_with_the_documents():
    mw = middleware("block", context_key="documents")
    for answer, expected in [(GROUNDED, GROUNDED), (INVENTED, DEFAULT_BLOCKED_RESPONSE)]:
        model = ToolCallingFake(messages=iter([AIMessage(content=answer)]))
        agent = create_agent(model, [], middleware=[mw])
        out = agent.invoke({**QUESTION, "documents": DOCS})
        assert out["messages"][-1].content == expected


def test_context_key_missing_from_the_state_is_a_clear_error():
    model = ToolCallingFake(messages=iter([AIMessage(content=GROUNDED)]))
    agent = create_agent(model, [], middleware=[middleware("block", context_key="documents")])
    with pytest.raises(InputError, match="agent state has no 'documents'"):
        agent.invoke(QUESTION)


def test_async_agent():
    async def run(answer):
        return await agent_with(replies(answer), middleware("block")).ainvoke(QUESTION)

    grounded, invented = asyncio.run(run(GROUNDED)), asyncio.run(run(INVENTED))
    assert grounded["messages"][-1].content == GROUNDED
    assert invented["messages"][-1].content == DEFAULT_BLOCKED_RESPONSE
    assert invented["citeverify"]["verdict"] == "block"


def strict_serializer():
    if "allowed_msgpack_modules" not in inspect.signature(JsonPlusSerializer).parameters:
        pytest.skip("this langgraph-checkpoint has no msgpack allowlist (no strict mode)")
    return JsonPlusSerializer(allowed_msgpack_modules=None)  # safe types only


@contextlib.contextmanager
def serde_reports(caplog):
    """What the serializer reported: its allowlist events and its warnings."""
    reports = []
    unregister = (
        register_serde_event_listener(reports.append) if register_serde_event_listener else None
    )
    try:
        with caplog.at_level(logging.WARNING, logger="langgraph"):
            yield reports
    finally:
        if unregister:
            unregister()
    reports.extend(r.getMessage() for r in caplog.records if "unregistered" in r.getMessage())


@pytest.mark.parametrize(
    "serde", [JsonPlusSerializer, strict_serializer], ids=["default", "strict"]
)
def test_the_result_round_trips_through_a_checkpointer_without_warnings(serde, caplog):
    with serde_reports(caplog) as reports:
        agent = agent_with(
            replies(INVENTED), middleware("block"), checkpointer=InMemorySaver(serde=serde())
        )
        config = {"configurable": {"thread_id": "t1"}}
        out = agent.invoke(QUESTION, config)
        stored = agent.get_state(config).values
    assert reports == []  # no unregistered type: no warning, nothing blocked in strict mode
    assert stored["citeverify"] == out["citeverify"]
    assert VerificationResult.from_dict(stored["citeverify"]) == VerificationResult.from_dict(
        out["citeverify"]
    )
    assert stored["messages"][-1].content == DEFAULT_BLOCKED_RESPONSE


def test_the_result_object_itself_would_be_reported_which_is_why_the_state_holds_data():
    if register_serde_event_listener is None:
        pytest.skip("this langgraph-checkpoint reports nothing about unregistered types")
    out = agent_with(replies(GROUNDED), middleware("block")).invoke(QUESTION)
    events = []
    unregister = register_serde_event_listener(events.append)
    try:
        serde = JsonPlusSerializer()
        serde.loads_typed(serde.dumps_typed(VerificationResult.from_dict(out["citeverify"])))
    finally:
        unregister()
    assert {e["kind"] for e in events} == {"msgpack_unregistered_allowed"}


def test_tool_context_reads_documents_from_artifacts_and_skips_failed_tools():
    messages = [
        ToolMessage(content="joined text", artifact=DOCS, tool_call_id="1"),
        ToolMessage(content="plain result", tool_call_id="2"),
        ToolMessage(content="Error: boom", tool_call_id="3", status="error"),
        AIMessage(content="not a tool"),
    ]
    assert tool_context(messages) == [d.page_content for d in DOCS] + ["plain result"]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"blocked_response": 3}, "blocked_response must be a string or a callable"),
        ({"context_key": ""}, "context_key must be a non-empty string"),
        ({"include_original": "false"}, "include_original must be True or False, got str"),
        ({"check_intermediate": "no"}, "check_intermediate must be True or False"),
    ],
)
def test_bad_options_are_refused_at_once(options, error):
    with pytest.raises(InputError, match=error):
        CiteVerifyMiddleware(OFFLINE, **options)


def test_the_model_nodes_own_update_carries_the_checked_answer():
    updates = list(agent_with(replies(INVENTED), middleware("block")).stream(QUESTION))
    answers = [m.content for u in updates if "model" in u for m in u["model"]["messages"]]
    assert answers[-1] == DEFAULT_BLOCKED_RESPONSE
    assert INVENTED not in answers


@pytest.mark.parametrize("copy_of", [lambda m: pickle.loads(pickle.dumps(m)), copy.deepcopy])
def test_the_middleware_pickles_and_deep_copies(copy_of):
    original = middleware("block", context_key="documents", blocked_response="no")
    copied = copy_of(original)
    assert copied.verifier is not original.verifier
    assert copied.state_schema is original.state_schema
    model = ToolCallingFake(messages=iter([AIMessage(content=INVENTED)]))
    out = create_agent(model, [], middleware=[copied]).invoke({**QUESTION, "documents": DOCS})
    assert out["messages"][-1].content == "no"


def test_an_answer_without_any_tool_result_is_decided_by_require_sources():
    def answer_without_tools(**options):
        model = ToolCallingFake(messages=iter([AIMessage(content="Hello! How can I help?")]))
        agent = create_agent(model, [search_tool()], middleware=[middleware("block", **options)])
        return agent.invoke(QUESTION)["messages"][-1].content

    assert answer_without_tools() == DEFAULT_BLOCKED_RESPONSE
    assert answer_without_tools(require_sources=False) == "Hello! How can I help?"
