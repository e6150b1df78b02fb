"""What a guard blocked reaches no one (issue 32), through real LlamaIndex objects.

A sentinel sentence that the check removes (redact) or blocks (block, replaced or raised) must
appear in nothing the LlamaIndex adapters return, stream, store or serialise: the response (its
text, ``str``/``repr``, ``metadata`` as JSON, its pickle), the tokens streamed, the chat memory,
citeverify's instrumentation (``CiteVerifyEvent``, the results and errors of its spans), the
evaluator's ``EvaluationResult``, and the error raised on block (``str``, ``exc.result``). With
``include_original=True`` the original is sent along (so the test can fail), and under flag the
answer is shown as it is. Also here: the policy's credentials are never written in clear, and a
``blocked_response`` of the wrong type is an ``InputError`` on every class that takes it.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest
from llama_index.core.base.response.schema import AsyncStreamingResponse
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.memory import ChatMemoryBuffer
from pydantic import BaseModel, PrivateAttr

from citeverify_core import CitationUnverifiedError, InputError, VerificationResult
from llama_index.evaluation.citeverify import CiteVerifyEvaluator
from llama_index.postprocessor.citeverify import (
    CiteVerifyChatEngine,
    CiteVerifyEvent,
    CiteVerifyPostprocessor,
    CiteVerifyQueryEngine,
    averify_response,
    verify_response,
)
from tests.adapters.test_llamaindex import OFFLINE, FixedLLM, index

SENTINEL = "Purple dragons guard the vault at midnight."
ANSWER = f"The museum opens at nine. {SENTINEL}"
#: The sentinel's words as any field might hold them (a claim's text, its missing words).
WORDS = ("purple", "dragon", "vault", "midnight")
REPLACEMENT = "I can't answer that from the museum's documents."
MARKER = "[unverified claim removed]"


class Motto(BaseModel):
    opening: str
    motto: str


STRUCTURED = json.dumps({"opening": "The museum opens at nine.", "motto": SENTINEL})

ACTIONS = {
    "redact": {"unverified_action": "redact"},
    "block-replaced": {"unverified_action": "block", "blocked_response": REPLACEMENT},
    "block-raised": {"unverified_action": "block"},
}
SURFACES = [
    "verify_response",
    "averify_response",
    "query",
    "aquery",
    "query-structured",
    "query-stream",
    "aquery-stream",
    "chat",
    "achat",
    "stream_chat",
    "astream_chat",
    "evaluator",
]


# --- Listening to citeverify's instrumentation -------------------------------------------------


class Events(BaseEventHandler):
    events: list[Any]

    @classmethod
    def class_name(cls) -> str:
        return "WithheldEvents"

    def handle(self, event: Any, **kwargs: Any) -> None:
        self.events.append(event)


class Spans(BaseSpanHandler[SimpleSpan]):
    """What citeverify's spans end with: their results and their errors."""

    _ends: list[Any] = PrivateAttr(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "WithheldSpans"

    def new_span(self, id_: str, *args: Any, **kwargs: Any) -> SimpleSpan:
        return SimpleSpan(id_=id_)

    def prepare_to_exit_span(
        self, id_: str, *args: Any, result: Any = None, **kwargs: Any
    ) -> SimpleSpan | None:
        if id_.startswith("CiteVerify"):
            self._ends.append(result)
        return self.open_spans.get(id_)

    def prepare_to_drop_span(
        self, id_: str, *args: Any, err: Any = None, **kwargs: Any
    ) -> SimpleSpan | None:
        if id_.startswith("CiteVerify"):
            self._ends.append(err)
        return self.open_spans.get(id_)


def _dumped(value: Any) -> str:
    """``value`` as an application would forward it: JSON (results by to_dict), repr, pickle."""
    text = json.dumps(
        value, default=lambda o: o.to_dict() if isinstance(o, VerificationResult) else repr(o)
    )
    text += repr(value)
    if not isinstance(value, AsyncStreamingResponse):
        # llama-index-core 0.12's AsyncStreamingResponse.__str__ runs its own event loop, which
        # fails inside one (and leaves a coroutine never awaited); its text is in the tokens.
        text += str(value)
    try:
        text += pickle.dumps(value).decode("latin-1")
    except Exception:
        text += ""
    return text


@dataclass
class Seen:
    """What one call let out, by where it went."""

    shown: str | None = None  # the answer the user gets (None: the call raised)
    places: dict[str, str] = field(default_factory=dict)  # returned, stored, serialised
    result_json: str = ""  # the VerificationResult handed back (metadata, or the error's)
    events: list[Any] = field(default_factory=list)

    def add(self, where: str, value: Any) -> None:
        self.places[where] = self.places.get(where, "") + _dumped(value)

    def holding_the_sentinel(self) -> list[str]:
        return [where for where, text in self.places.items() if _holds(text)]


def _holds(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in WORDS)


def _add_response(seen: Seen, response: Any) -> None:
    seen.add("response", response)
    seen.add("metadata", dict(getattr(response, "metadata", None) or {}))
    result = (getattr(response, "metadata", None) or {}).get("citeverify")
    if result is not None:
        seen.result_json = json.dumps(result.to_dict())


def _add_error(seen: Seen, exc: CitationUnverifiedError) -> None:
    seen.shown = None
    seen.add("error", [str(exc), repr(exc), exc.args])
    seen.add("error.result", exc.result)
    seen.result_json = json.dumps(exc.result.to_dict())
    chained = exc.__cause__ or exc.__context__
    if chained is not None:
        seen.add("error.chain", [str(chained), getattr(chained, "result", None)])


# --- One call of each surface ------------------------------------------------------------------


def _query_engine(streaming: bool = False, **options: Any) -> CiteVerifyQueryEngine:
    inner = index().as_query_engine(
        llm=FixedLLM(answer=ANSWER), similarity_top_k=3, streaming=streaming
    )
    return CiteVerifyQueryEngine(inner, policy=OFFLINE, **options)


def _chat_engine(**options: Any) -> tuple[CiteVerifyChatEngine, ChatMemoryBuffer]:
    memory = ChatMemoryBuffer.from_defaults(token_limit=3000)
    inner = index().as_chat_engine(
        chat_mode="context", llm=FixedLLM(answer=ANSWER), similarity_top_k=3, memory=memory
    )
    return CiteVerifyChatEngine(inner, policy=OFFLINE, **options), memory


async def _call(surface: str, seen: Seen, **options: Any) -> None:
    """Run ``surface`` once under ``options``; record in ``seen`` what it let out."""
    if surface == "evaluator":
        response = _query_engine().query_engine.query("When does it open?")
        evaluation = await CiteVerifyEvaluator(policy=OFFLINE, **options).aevaluate_response(
            query="When does it open?", response=response
        )
        seen.shown = evaluation.response
        seen.add("evaluation", evaluation.model_dump())
        seen.add("evaluation.repr", evaluation)
        return
    if surface in ("verify_response", "averify_response"):
        response = _query_engine().query_engine.query("When does it open?")
        try:
            if surface == "verify_response":
                checked = verify_response(response, OFFLINE, **options)
            else:
                checked = await averify_response(response, OFFLINE, **options)
        except CitationUnverifiedError as exc:
            _add_error(seen, exc)
            return
        seen.shown = str(checked)
        _add_response(seen, checked)
        return
    if surface.startswith(("query", "aquery")):
        streaming = surface.endswith("-stream")
        if surface == "query-structured":
            inner = index().as_query_engine(
                llm=FixedLLM(answer=STRUCTURED), similarity_top_k=3, output_cls=Motto
            )
            engine = CiteVerifyQueryEngine(inner, policy=OFFLINE, **options)
        else:
            engine = _query_engine(streaming=streaming, **options)
        tokens: list[str] = []
        response: Any = None
        try:
            if surface.startswith("aquery"):
                response = await engine.aquery("When does it open?")
                if streaming:
                    tokens.extend([t async for t in response.async_response_gen()])
            else:
                response = engine.query("When does it open?")
                if streaming:
                    tokens.extend(response.response_gen)
        except CitationUnverifiedError as exc:
            _add_error(seen, exc)
            seen.add("tokens", tokens)
            if response is not None:
                _add_response(seen, response)
            return
        seen.shown = "".join(tokens) if streaming else str(response)
        seen.add("tokens", tokens)
        _add_response(seen, response)
        return
    engine, memory = _chat_engine(**options)
    tokens = []
    response = None
    try:
        if surface == "chat":
            response = engine.chat("When does it open?")
        elif surface == "achat":
            response = await engine.achat("When does it open?")
        elif surface == "stream_chat":
            response = engine.stream_chat("When does it open?")
            tokens.extend(response.response_gen)
        else:
            response = await engine.astream_chat("When does it open?")
            tokens.extend([t async for t in response.async_response_gen()])
    except CitationUnverifiedError as exc:
        _add_error(seen, exc)
    else:
        seen.shown = "".join(tokens) if "stream" in surface else response.response
    seen.add("tokens", tokens)
    if response is not None:
        _add_response(seen, response)
    seen.add("chat_history", [m.model_dump() for m in engine.chat_history])
    seen.add("memory", [m.model_dump() for m in memory.get_all()])


def observe(surface: str, **options: Any) -> Seen:
    """What ``surface`` let out, citeverify's events and spans included."""
    seen = Seen()
    events, spans = Events(events=[]), Spans()
    root = get_dispatcher()
    root.add_event_handler(events)
    root.add_span_handler(spans)
    try:
        asyncio.run(_call(surface, seen, **options))
    finally:
        root.event_handlers.remove(events)
        root.span_handlers.remove(spans)
    # LlamaIndex's own events (the model call, the wrapped engine's synthesis and stream) are the
    # application's trace of what the model said; citeverify's are what the user may be shown.
    ours = [e for e in events.events if not type(e).__module__.startswith("llama_index.core.")]
    seen.events = ours
    seen.add("events", [e.model_dump() for e in ours])
    seen.add("spans", spans._ends)
    return seen


# --- The promise -------------------------------------------------------------------------------


@pytest.mark.parametrize("action", list(ACTIONS))
@pytest.mark.parametrize("surface", SURFACES)
def test_what_was_removed_or_blocked_reaches_no_one(surface: str, action: str) -> None:
    seen = observe(surface, **ACTIONS[action])
    assert seen.holding_the_sentinel() == []
    if surface == "evaluator":
        expected = {"redact": None, "block-replaced": REPLACEMENT, "block-raised": None}[action]
        if action == "redact":
            assert seen.shown == f"The museum opens at nine. {MARKER}"
        else:
            assert seen.shown == expected
        return
    if action == "block-raised":
        assert seen.shown is None  # raised (a stream: when read, having yielded nothing)
        assert "error.result" in seen.places
    elif action == "block-replaced":
        assert seen.shown == REPLACEMENT
    elif surface != "query-structured":
        assert seen.shown == f"The museum opens at nine. {MARKER}"
    else:
        assert MARKER in seen.shown
    # What explains the decision stays.
    result = json.loads(seen.result_json)
    assert result["action"] == ("redact" if action == "redact" else "block")
    assert result["reason_code"] == "citation.unverified"
    assert result["details"]["unverified_claim_count"] == 1
    (event,) = [e for e in seen.events if isinstance(e, CiteVerifyEvent)]
    assert event.unverified_claim_count == 1


@pytest.mark.parametrize("action", list(ACTIONS))
@pytest.mark.parametrize("surface", SURFACES)
def test_include_original_sends_the_original_along(surface: str, action: str) -> None:
    seen = observe(surface, include_original=True, **ACTIONS[action])
    if surface == "evaluator":
        assert SENTINEL in seen.places["evaluation"]  # the answer evaluated, the claim quoted
        return
    assert SENTINEL in seen.result_json  # asked for: kept in the result handed back
    # What the user is shown, and what the chat memory keeps, do not change.
    assert seen.shown is None or not _holds(seen.shown)
    for where in ("tokens", "chat_history", "memory", "events"):
        assert not _holds(seen.places.get(where, "")), where


@pytest.mark.parametrize("surface", SURFACES)
def test_flag_shows_the_answer_as_it_is(surface: str) -> None:
    seen = observe(surface, unverified_action="flag")
    if surface == "query-structured":
        assert SENTINEL in seen.places["response"]
    else:
        assert seen.shown == ANSWER
    if surface != "evaluator":
        assert SENTINEL in seen.result_json  # shown anyway: nothing to withhold
        assert json.loads(seen.result_json)["action"] == "flag"


def test_a_redaction_the_structured_model_cannot_hold_blocks_and_quotes_no_value() -> None:
    class Strict(BaseModel):
        opening: str
        motto: str

        def model_post_init(self, context: Any, /) -> None:
            if MARKER in self.motto:
                raise ValueError(self.motto)

    inner = index().as_query_engine(
        llm=FixedLLM(answer=STRUCTURED), similarity_top_k=3, output_cls=Strict
    )
    engine = CiteVerifyQueryEngine(inner, policy=OFFLINE, unverified_action="redact")
    with pytest.raises(CitationUnverifiedError) as info:
        engine.query("q")
    assert info.value.result.action == "block"
    assert "the redacted values do not fit Strict" in info.value.result.reasons
    assert not _holds(json.dumps(info.value.result.to_dict()) + str(info.value))
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_an_unread_chat_stream_is_checked_and_leaves_no_blocked_answer_in_memory() -> None:
    # LlamaIndex 0.14 writes the answer into memory from a thread, read or not.
    engine, memory = _chat_engine(unverified_action="block", blocked_response=REPLACEMENT)
    response = engine.stream_chat("When does it open?")
    assert [m.content for m in memory.get_all()] == ["When does it open?", REPLACEMENT]
    assert response.metadata["citeverify"].action == "block"
    raising, memory = _chat_engine(unverified_action="block")
    raising.stream_chat("When does it open?")
    assert memory.get_all() == []


# --- Credentials are never written in clear ----------------------------------------------------

SECRETS = {
    "ncbi_api_key": "NCBI_API_KEY",
    "semanticscholar_api_key": "SEMANTIC_SCHOLAR_API_KEY",
    "courtlistener_token": "COURTLISTENER_TOKEN",
}
SECRET = "s3cr3t-value-42"


def _secret_policy(key: str) -> dict[str, Any]:
    return {"extensions": {"lookups": {"enabled": False, key: SECRET}}}


@pytest.mark.parametrize("key", list(SECRETS))
def test_the_postprocessor_never_writes_a_credential_in_clear(
    key: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    post = CiteVerifyPostprocessor(policy=_secret_policy(key), unverified_action="block")
    assert getattr(post._verifier.policy.extensions.lookups, key) == SECRET  # it is used
    written = [
        post.to_json(),
        json.dumps(post.to_dict()),
        post.model_dump_json(),
        str(post.model_dump()),
        repr(post),
        str(post),
        pickle.dumps(post).decode("latin-1"),
        caplog.text,
    ]
    for text in written:
        assert SECRET not in text
    assert "**********" in post.to_json()

    # Loaded again, each masked credential comes from its environment variable, or is unset.
    monkeypatch.setenv(SECRETS[key], "from-the-environment")
    for loaded in (
        CiteVerifyPostprocessor.from_json(post.to_json()),
        pickle.loads(pickle.dumps(post)),
    ):
        assert getattr(loaded.policy.extensions.lookups, key) == "from-the-environment"
        assert getattr(loaded._verifier.policy.extensions.lookups, key) == "from-the-environment"
        assert loaded.policy.output_action.unverified_action == "block"
    monkeypatch.delenv(SECRETS[key])
    loaded = CiteVerifyPostprocessor.from_json(post.to_json())
    assert getattr(loaded.policy.extensions.lookups, key) is None


@pytest.mark.parametrize("key", list(SECRETS))
def test_the_engines_and_the_evaluator_never_write_a_credential_in_clear(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = CiteVerifyQueryEngine(
        index().as_query_engine(llm=FixedLLM(answer=ANSWER)), policy=_secret_policy(key)
    )
    assert SECRET not in repr(query) + str(query)
    assert SECRET not in pickle.dumps(query.postprocessor).decode("latin-1")
    chat = CiteVerifyChatEngine(
        _chat_engine()[0].chat_engine,
        policy=_secret_policy(key),
    )
    assert SECRET not in repr(chat) + repr(chat.postprocessor)
    evaluator = CiteVerifyEvaluator(policy=_secret_policy(key))
    assert SECRET not in repr(evaluator) + pickle.dumps(evaluator).decode("latin-1")
    monkeypatch.setenv(SECRETS[key], "from-the-environment")
    loaded = pickle.loads(pickle.dumps(evaluator))
    assert getattr(loaded.policy.extensions.lookups, key) == "from-the-environment"
    result = loaded.evaluate(response=ANSWER, contexts=["The museum opens at nine."])
    assert result.passing is False


# --- blocked_response of the wrong type --------------------------------------------------------

MAKERS = {
    "CiteVerifyPostprocessor": lambda v: CiteVerifyPostprocessor(blocked_response=v),
    "CiteVerifyPostprocessor.model_validate": lambda v: CiteVerifyPostprocessor.model_validate(
        {"blocked_response": v}
    ),
    "CiteVerifyPostprocessor.from_dict": lambda v: CiteVerifyPostprocessor.from_dict(
        {"blocked_response": v}
    ),
    "CiteVerifyQueryEngine": lambda v: CiteVerifyQueryEngine(
        index().as_query_engine(llm=FixedLLM()), blocked_response=v
    ),
    "CiteVerifyChatEngine": lambda v: CiteVerifyChatEngine(
        _chat_engine()[0].chat_engine, blocked_response=v
    ),
    "verify_response": lambda v: verify_response("text", blocked_response=v),
    "averify_response": lambda v: asyncio.run(averify_response("text", blocked_response=v)),
    "CiteVerifyEvaluator": lambda v: CiteVerifyEvaluator(blocked_response=v),
}


@pytest.mark.parametrize("maker", list(MAKERS))
def test_a_blocked_response_of_the_wrong_type_is_an_input_error(maker: str) -> None:
    with pytest.raises(InputError, match="blocked_response must be a string or a callable") as info:
        MAKERS[maker](123)
    assert type(info.value) is InputError
    assert info.value.path == "blocked_response"
