"""The adapters skip tracing nobody listens to, and trace as before when someone does (issue 14).

LangChain: ``_common.unobserved`` must agree with the callback manager langchain-core builds
(``get_callback_manager_for_config``) in every way a handler can appear. LlamaIndex: spans and
events are made exactly when a handler other than LlamaIndex's null ones is reachable, and the
spans keep their names.
"""

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.globals import set_debug
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.config import ensure_config, get_callback_manager_for_config
from llama_index.core.base.response.schema import Response
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.span_handlers import SimpleSpanHandler
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import NodeWithScore, TextNode

from langchain_citeverify import CiteVerifyGuard
from langchain_citeverify._common import unobserved
from llama_index.postprocessor.citeverify import CiteVerifyEvent, CiteVerifyQueryEngine
from llama_index.postprocessor.citeverify._common import listeners

OFFLINE = {"extensions": {"lookups": {"enabled": False}}}
TEXT = "The museum opens at nine."


def full_check(config):
    return not get_callback_manager_for_config(ensure_config(config)).handlers


class Handler(BaseCallbackHandler):
    def __init__(self):
        self.starts = []

    def on_chain_start(self, serialized, inputs, **kwargs):
        self.starts.append(kwargs.get("name"))


def test_unobserved_agrees_with_langchains_callback_manager():
    from langchain_core.callbacks import get_usage_metadata_callback
    from langchain_core.tracers.context import collect_runs

    cases: list[tuple[str, Any]] = [
        ("none", None),
        ("empty config", {}),
        ("empty list", {"callbacks": []}),
        ("a handler", {"callbacks": [Handler()]}),
        ("an empty manager", {"callbacks": CallbackManager([])}),
        ("a manager with a handler", {"callbacks": CallbackManager([Handler()])}),
        ("tags and metadata only", {"tags": ["x"], "metadata": {"k": 1}}),
    ]
    for name, config in cases:
        assert unobserved(config) == full_check(config), name
    assert unobserved(None)
    assert not unobserved({"callbacks": [Handler()]})
    with collect_runs():
        assert not unobserved(None) and not full_check(None)
    with get_usage_metadata_callback():
        assert not unobserved(None) and not full_check(None)
    set_debug(True)
    try:
        assert not unobserved(None) and not full_check(None)
    finally:
        set_debug(False)


def test_unobserved_sees_callbacks_a_parent_runnable_sets_in_the_context():
    seen = RunnableLambda(lambda x: (unobserved(None), full_check(None)))
    assert seen.invoke(1) == (True, True)
    assert seen.invoke(1, config={"callbacks": [Handler()]}) == (False, False)
    # A config's own callbacks, even none, replace the parent's.
    own = RunnableLambda(lambda x: (unobserved({"callbacks": []}), full_check({"callbacks": []})))
    assert own.invoke(1, config={"callbacks": [Handler()]}) == (True, True)


def test_tracing_switched_on_by_the_environment_is_heard(monkeypatch):
    # Only the check: building the callback manager here would start a LangSmith tracer, which
    # calls the network.
    from langsmith import utils

    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    utils.get_env_var.cache_clear()
    try:
        assert not unobserved(None)
    finally:
        monkeypatch.undo()
        utils.get_env_var.cache_clear()
    assert unobserved(None)


def test_guard_result_is_the_same_heard_or_not_and_a_handler_sees_its_run():
    guard = CiteVerifyGuard(policy=OFFLINE, unverified_action="flag")
    item = {"answer": TEXT, "context": [TEXT]}
    handler = Handler()
    quiet = guard.invoke(item)
    heard = guard.invoke(item, config={"callbacks": [handler]})
    assert handler.starts == ["CiteVerifyGuard"]
    assert quiet["verification"].to_dict() == heard["verification"].to_dict()
    assert quiet["answer"] == heard["answer"]
    assert (
        asyncio.run(guard.ainvoke(item))["verification"].to_dict()
        == heard["verification"].to_dict()
    )


class Ready(CustomQueryEngine):
    response: Any

    def custom_query(self, query_str: str) -> Any:
        return self.response


class Events(BaseEventHandler):
    events: list[Any]

    @classmethod
    def class_name(cls) -> str:
        return "Events"

    def handle(self, event: Any, **kwargs: Any) -> None:
        self.events.append(event)


@pytest.fixture
def root():
    root = get_dispatcher()
    spans, events = list(root.span_handlers), list(root.event_handlers)
    yield root
    root.span_handlers, root.event_handlers = spans, events


def test_llamaindex_nothing_listens_by_default():
    assert listeners() == (False, False)


def test_llamaindex_spans_and_events_when_handlers_listen(root):
    response = Response(TEXT, source_nodes=[NodeWithScore(node=TextNode(text=TEXT))])
    engine = CiteVerifyQueryEngine(Ready(response=response), policy=OFFLINE)
    quiet = engine.query("q")
    spans = SimpleSpanHandler()
    events = Events(events=[])
    root.add_span_handler(spans)
    root.add_event_handler(events)
    assert listeners() == (True, True)
    heard = engine.query("q")
    asyncio.run(engine.aquery("q"))
    names = {s.id_.rsplit("-", 5)[0] for s in spans.completed_spans}
    assert {
        "CiteVerifyQueryEngine.query",
        "CiteVerifyPostprocessor.verify_response",
        "CiteVerifyQueryEngine.aquery",
        "CiteVerifyPostprocessor.averify_response",
    } <= names
    assert sum(isinstance(e, CiteVerifyEvent) for e in events.events) == 2
    assert quiet.metadata["citeverify"].to_dict() == heard.metadata["citeverify"].to_dict()
