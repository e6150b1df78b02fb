"""The LangChain guard, parser and tool, through real LangChain objects (no mocks of LangChain)."""

import asyncio
import json

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from citeverify_core import CitationUnverifiedError, InputError, PolicyConfig, VerificationResult
from langchain_citeverify import (
    CitationBlockedError,
    CiteVerifyGuard,
    CiteVerifyOutputParser,
    CiteVerifyTool,
)

DOCS = [
    Document(page_content="The museum opens at nine and closes at five on weekdays."),
    Document(page_content="Tickets cost ten euros for adults; children enter free."),
    Document(page_content="The museum was founded in 1890 by the city council."),
]
GROUNDED = "The museum opens at nine and closes at five. Tickets cost ten euros for adults."
UNGROUNDED = "The museum opens at nine. Dragons guard the museum at night and eat visitors."
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Answer from the context only.\n\n{context}"), ("human", "{question}")]
)
OFFLINE = {"extensions": {"lookups": {"enabled": False}}}


def retriever():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(DOCS)
    return store.as_retriever(search_kwargs={"k": 3})


def rag_chain(answers, guard, *, parse=True):
    llm = FakeListChatModel(responses=answers)
    generate = PROMPT | llm | StrOutputParser() if parse else PROMPT | llm
    return (
        {"context": retriever(), "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(answer=generate)
        | guard
    )


def guard(action):
    return CiteVerifyGuard(policy=OFFLINE, unverified_action=action)


def test_grounded_answer_is_allowed_with_the_retrieved_documents_as_context():
    out = rag_chain([GROUNDED], guard("block")).invoke("When does the museum open?")
    result = out["verification"]
    assert isinstance(result, VerificationResult)
    assert (result.verdict, result.reason_code) == ("allow", "citation.verified")
    assert out["answer"] == GROUNDED
    assert [d.page_content for d in out["context"]] != []


def test_block_raises_an_exception_that_is_both_kinds():
    with pytest.raises(CitationBlockedError) as info:
        rag_chain([UNGROUNDED], guard("block")).invoke("Tell me about the museum.")
    error = info.value
    assert isinstance(error, CitationUnverifiedError)
    assert isinstance(error, OutputParserException)
    assert error.result.reason_code == "citation.unverified"
    assert error.llm_output == ""  # what was blocked is not carried by the error
    keep = CiteVerifyGuard(policy=OFFLINE, unverified_action="block", include_original=True)
    with pytest.raises(CitationBlockedError) as info:
        rag_chain([UNGROUNDED], keep).invoke("The museum?")
    assert info.value.llm_output == UNGROUNDED  # unless the application asks for it


def test_fallback_returns_a_safe_answer():
    safe = RunnableLambda(lambda _: {"answer": "I can't answer that from the sources."})
    chain = rag_chain([UNGROUNDED], guard("block")).with_fallbacks(
        [safe], exceptions_to_handle=(CitationUnverifiedError,)
    )
    assert chain.invoke("Tell me about the museum.") == {
        "answer": "I can't answer that from the sources."
    }


def test_flag_annotates_and_passes_the_answer_on():
    out = rag_chain([UNGROUNDED], guard("flag")).invoke("Tell me about the museum.")
    assert out["answer"] == UNGROUNDED
    assert out["verification"].reason_code == "citation.unverified"
    assert out["verification"].details.unverified_claim_count == 1


def test_redact_removes_the_unverified_claim():
    out = rag_chain([UNGROUNDED], guard("redact")).invoke("Tell me about the museum.")
    assert out["answer"] == "The museum opens at nine. [unverified claim removed]"
    # ... and the verification passed down the chain does not carry it either (issue 9).
    assert out["verification"].original_answer == ""
    assert "Dragons" not in json.dumps(out["verification"].to_dict())


def test_redact_keeps_the_removed_text_in_the_verification_only_when_asked():
    keep = CiteVerifyGuard(policy=OFFLINE, unverified_action="redact", include_original=True)
    out = rag_chain([UNGROUNDED], keep).invoke("Tell me about the museum.")
    assert out["answer"] == "The museum opens at nine. [unverified claim removed]"
    assert out["verification"].original_answer == UNGROUNDED


def test_message_answers_carry_the_verification_in_response_metadata():
    out = rag_chain([UNGROUNDED], guard("redact"), parse=False).invoke("Tell me about the museum.")
    message = out["answer"]
    assert isinstance(message, AIMessage)
    assert message.content == "The museum opens at nine. [unverified claim removed]"
    assert message.response_metadata["citeverify"]["reason_code"] == "citation.unverified"


# --- sync and async parity: the same cases through both paths -------------------------------------

CASES = [
    pytest.param(GROUNDED, "block", "allow", GROUNDED, id="allow"),
    pytest.param(UNGROUNDED, "flag", "allow", UNGROUNDED, id="flag"),
    pytest.param(
        UNGROUNDED,
        "redact",
        "allow",
        "The museum opens at nine. [unverified claim removed]",
        id="redact",
    ),
    pytest.param(UNGROUNDED, "block", "block", None, id="block"),
]


def _run(chain, mode):
    if mode == "sync":
        return chain.invoke("Tell me about the museum.")
    return asyncio.run(chain.ainvoke("Tell me about the museum."))


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(("answer", "action", "verdict", "expected"), CASES)
def test_parity(mode, answer, action, verdict, expected):
    chain = rag_chain([answer], guard(action))
    if verdict == "block":
        with pytest.raises(CitationBlockedError):
            _run(chain, mode)
        return
    out = _run(chain, mode)
    assert out["answer"] == expected
    assert out["verification"].verdict == verdict


def test_sync_and_async_give_equal_results():
    g = guard("flag")
    item = {"answer": UNGROUNDED, "context": DOCS}
    assert g.invoke(item)["verification"] == asyncio.run(g.ainvoke(item))["verification"]


def test_batch_and_abatch_with_max_concurrency():
    g = guard("flag")
    items = [{"answer": GROUNDED if i % 2 else UNGROUNDED, "context": DOCS} for i in range(10)]
    expected = ["citation.verified" if i % 2 else "citation.unverified" for i in range(10)]
    out = g.batch(items, config={"max_concurrency": 3})
    assert [o["verification"].reason_code for o in out] == expected
    aout = asyncio.run(g.abatch(items, config={"max_concurrency": 3}))
    assert [o["verification"].reason_code for o in aout] == expected


def test_batch_with_exceptions_returns_the_block_in_place():
    g = guard("block")
    out = g.batch(
        [{"answer": GROUNDED, "context": DOCS}, {"answer": UNGROUNDED, "context": DOCS}],
        return_exceptions=True,
    )
    assert out[0]["verification"].verified
    assert isinstance(out[1], CitationBlockedError)


def test_streaming_buffers_and_verifies_once_at_the_end():
    llm = GenericFakeChatModel(messages=iter([AIMessage(content=UNGROUNDED)]))
    chain = (
        {"context": retriever(), "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(answer=PROMPT | llm | StrOutputParser())
        | guard("redact")
    )
    chunks = list(chain.stream("Tell me about the museum."))
    assert len(chunks) == 1  # one verified output, not token by token
    assert chunks[0]["answer"] == "The museum opens at nine. [unverified claim removed]"


def test_astream():
    llm = GenericFakeChatModel(messages=iter([AIMessage(content=GROUNDED)]))
    chain = (
        {"context": retriever(), "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(answer=PROMPT | llm | StrOutputParser())
        | guard("block")
    )

    async def collect():
        return [c async for c in chain.astream("When?")]

    (chunk,) = asyncio.run(collect())
    assert chunk["verification"].verified


class Recorder(BaseCallbackHandler):
    def __init__(self):
        self.events = []
        self.ends = []

    def on_custom_event(self, name, data, **kwargs):
        self.events.append((name, data))

    def on_chain_end(self, outputs, **kwargs):
        self.ends.append(outputs)


def test_callback_handlers_see_the_verdict():
    recorder = Recorder()
    rag_chain([UNGROUNDED], guard("flag")).invoke(
        "Tell me about the museum.", config={"callbacks": [recorder]}
    )
    ((name, data),) = recorder.events
    assert name == "citeverify_verdict"
    assert data["verdict"] == "allow"
    assert data["reason_code"] == "citation.unverified"
    assert 0 < data["groundedness"] < 1
    assert any(isinstance(o, dict) and "verification" in o for o in recorder.ends)


# langchain-core 0.3.x's run collector calls pydantic's deprecated `copy()`; under
# filterwarnings=error the callback manager swallows that and the run is never collected.
@pytest.mark.filterwarnings("ignore:The `copy` method is deprecated")
def test_run_name_is_the_guards():
    from langchain_core.tracers.context import collect_runs

    with collect_runs() as cb:
        guard("flag").invoke({"answer": GROUNDED, "context": DOCS})
    assert cb.traced_runs[0].name == "CiteVerifyGuard"


def test_configuration_from_a_policy_pack(seed_policy_path):
    g = CiteVerifyGuard(policy=seed_policy_path)
    assert g.policy.output_action.unverified_action == "block"
    assert g.policy.extract_patterns == ("quote",)
    assert (
        CiteVerifyGuard(
            policy=seed_policy_path, unverified_action="flag"
        ).policy.output_action.unverified_action
        == "flag"
    )


def test_custom_keys_and_string_context():
    g = CiteVerifyGuard(
        policy=OFFLINE, answer_key="output", context_key="sources", output_key="check"
    )
    out = g.invoke({"output": GROUNDED, "sources": [d.page_content for d in DOCS]})
    assert out["check"].verified


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        pytest.param({"context": DOCS}, "no 'answer' key", id="no-answer"),
        pytest.param({"answer": GROUNDED}, "no 'context' key", id="no-context"),
        pytest.param(
            {"answer": 3, "context": DOCS}, "answer must be a string or a message", id="bad-answer"
        ),
        pytest.param(
            {"answer": GROUNDED, "context": 3}, "context must be a list", id="bad-context"
        ),
        pytest.param("just text", "takes a mapping", id="not-a-mapping"),
    ],
)
def test_bad_input(item, fragment):
    with pytest.raises(InputError, match=fragment):
        guard("flag").invoke(item)


# --- output parser ------------------------------------------------------------------------------


def test_output_parser_with_bound_documents():
    parser = CiteVerifyOutputParser(documents=DOCS, policy=OFFLINE)
    chain = PROMPT | FakeListChatModel(responses=[GROUNDED]) | parser
    result = chain.invoke({"context": "...", "question": "When?"})
    assert isinstance(result, VerificationResult)
    assert result.verified


def test_output_parser_with_documents_at_call_time_and_block():
    parser = CiteVerifyOutputParser(policy=OFFLINE, unverified_action="block")
    config = {"configurable": {"context_documents": DOCS}}
    assert parser.invoke(AIMessage(content=GROUNDED), config=config).verified
    with pytest.raises(OutputParserException):
        parser.invoke(UNGROUNDED, config=config)
    assert asyncio.run(parser.ainvoke(GROUNDED, config=config)).verified


def test_output_parser_parse_and_aparse():
    parser = CiteVerifyOutputParser(documents=[d.page_content for d in DOCS], policy=OFFLINE)
    assert parser.parse(GROUNDED) == asyncio.run(parser.aparse(GROUNDED))


# --- tool ---------------------------------------------------------------------------------------


def test_tool_reports_unsupported_claims_as_json():
    tool = CiteVerifyTool(policy=OFFLINE)
    out = json.loads(tool.invoke({"text": UNGROUNDED, "sources": [d.page_content for d in DOCS]}))
    assert out["verdict"] == "not supported"
    assert out["unsupported_claims"][0]["claim"].startswith("Dragons")
    aout = json.loads(
        asyncio.run(tool.ainvoke({"text": GROUNDED, "sources": [d.page_content for d in DOCS]}))
    )
    assert aout["verdict"] == "supported"


def test_tool_never_blocks_even_with_a_blocking_policy():
    tool = CiteVerifyTool(policy=OFFLINE, unverified_action="block")
    out = json.loads(tool.invoke({"text": UNGROUNDED, "sources": ["Penguins."]}))
    assert out["verdict"] == "not supported"


def test_reference_tool(tmp_path):
    from citeverify_core.references import LocalIndex, ReferenceVerifier
    from langchain_citeverify import CiteVerifyReferenceTool
    from tests.conftest import DATA

    index = LocalIndex(tmp_path / "works.sqlite")
    index.build(DATA / "works-crossref.jsonl")
    tool = CiteVerifyReferenceTool(verifier=ReferenceVerifier(index))
    refs = [
        "LeCun, Y., Bengio, Y., & Hinton, G. (2013). Deep learning. Nature, 521(7553), 436–444.",
        "Doe, J. (2020). Quantum sponges of the deep sea. Journal of Nothing, 1, 1-2.",
    ]
    out = json.loads(tool.invoke({"references": refs}))
    assert [o["status"] for o in out] == ["verified-with-error", "unverified"]
    assert out[0]["fields_that_differ"] == ["year"]
    assert out[0]["corrected"].startswith("LeCun, Y., Bengio, Y., & Hinton, G. (2015)")
    aout = json.loads(asyncio.run(tool.ainvoke({"references": refs[:1]})))
    assert aout[0]["status"] == "verified-with-error"


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({}, id="none"),
        pytest.param({"min_groundedness": 0.7}, id="min_groundedness"),
        pytest.param({"policy": OFFLINE}, id="policy-mapping"),
        pytest.param({"policy": PolicyConfig(min_confidence=0.5)}, id="policy-object"),
        pytest.param({"policy": OFFLINE, "unverified_action": "block"}, id="action"),
        pytest.param({"strict_quotes": True}, id="extension-option"),
    ],
)
def test_tool_options_keep_the_tools_defaults(options):
    # Issue 11: min_groundedness=0.7 alone used to switch require_sources back on.
    tool = CiteVerifyTool(**options)
    assert tool.policy.require_sources is False
    for key, value in options.items():
        if key == "min_groundedness":
            assert tool.policy.min_groundedness == value
        if key == "strict_quotes":
            assert tool.policy.extensions.strict_quotes is value


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"require_sources": True}, id="keyword"),
        pytest.param({"policy": {"require_sources": True}}, id="policy"),
    ],
)
def test_tool_defaults_give_way_to_what_the_caller_sets(options):
    assert CiteVerifyTool(**options).policy.require_sources is True


NO_SOURCES = [pytest.param([], id="empty-list"), pytest.param(["", "  \n"], id="blank")]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("sources", NO_SOURCES)
@pytest.mark.parametrize("text", [GROUNDED, "", "Dragons."], ids=["grounded", "empty", "other"])
@pytest.mark.parametrize(
    "options",
    [{}, {"min_groundedness": 0.7}, {"require_sources": False}, {"require_sources": True}],
    ids=["defaults", "min_groundedness", "no-require", "require"],
)
def test_tool_never_reports_supported_against_zero_sources(mode, sources, text, options):
    tool = CiteVerifyTool(policy=OFFLINE, **options)
    args = {"text": text, "sources": sources}
    raw = tool.invoke(args) if mode == "sync" else asyncio.run(tool.ainvoke(args))
    out = json.loads(raw)
    assert out["verdict"] == "not supported"
    assert out["reason_code"] == "citation.unverified"
    assert "no source passages" in out["reasons"][0]


# --- input schema -------------------------------------------------------------------------------


def test_guard_input_schema_declares_the_keys_it_reads():
    schema = guard("flag").get_input_schema().model_json_schema()
    assert schema["title"] == "CiteVerifyGuardInput"
    assert set(schema["properties"]) == {"answer", "context"}
    assert sorted(schema["required"]) == ["answer", "context"]
    assert schema["additionalProperties"] is True  # other keys pass through the guard
    assert "Document" in json.dumps(schema["properties"]["context"])
    assert "AIMessage" in json.dumps(schema["properties"]["answer"])


def test_guard_input_schema_follows_the_configured_keys():
    g = CiteVerifyGuard(policy=OFFLINE, answer_key="_output", context_key="sources")
    schema = g.input_schema.model_json_schema()
    assert set(schema["properties"]) == {"_output", "sources"}
    assert sorted(schema["required"]) == ["_output", "sources"]
    assert g.get_input_jsonschema()["required"] == schema["required"]


def test_guard_input_schema_through_a_chain_and_a_binding():
    g = CiteVerifyGuard(policy=OFFLINE, answer_key="output", context_key="sources")
    chain = g | RunnableLambda(lambda out: out["verification"].verdict)
    for runnable in (chain, g.with_retry(), g.with_config(tags=["x"])):
        schema = runnable.input_schema.model_json_schema()
        assert sorted(schema["required"]) == ["output", "sources"], runnable
    assert chain.invoke({"output": GROUNDED, "sources": DOCS}) == "allow"


def test_guard_input_schema_validates_what_the_guard_accepts():
    from pydantic import ValidationError

    model = guard("flag").get_input_schema()
    for item in (
        {"answer": GROUNDED, "context": DOCS, "question": "When?"},
        {"answer": AIMessage(content=GROUNDED), "context": [d.page_content for d in DOCS]},
        {"answer": GROUNDED, "context": [{"content": "The museum opens at nine."}]},
    ):
        model.model_validate(item)
        assert guard("flag").invoke(item)["verification"].verdict == "allow"
    with pytest.raises(ValidationError):
        model.model_validate({"context": DOCS})


def test_guard_input_schema_validated_from_json_feeds_the_guard():
    # What a server (LangServe) does: validate JSON against input_schema, pass the values on.
    model = guard("flag").get_input_schema()
    payload = {
        "answer": {"type": "ai", "content": GROUNDED},
        "context": [{"page_content": d.page_content, "type": "Document"} for d in DOCS],
    }
    item = model.model_validate_json(json.dumps(payload))
    out = guard("flag").invoke({k: getattr(item, k) for k in ("answer", "context")})
    assert out["verification"].verdict == "allow"
    assert out["verification"].verified
