"""The LangChain adapters' replacement answers, format instructions, errors and flag streaming."""

import asyncio
import json
import pickle
import subprocess
import sys

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from citeverify_core import InputError
from citeverify_core.engine import DEFAULT_BLOCKED_RESPONSE
from langchain_citeverify import (
    CitationBlockedError,
    CiteVerifyGuard,
    CiteVerifyOutputParser,
    CiteVerifyTool,
)

DOCS = [
    Document(page_content="The museum opens at nine and closes at five on weekdays."),
    Document(page_content="Tickets cost ten euros for adults; children enter free."),
]
GROUNDED = "The museum opens at nine and closes at five. Tickets cost ten euros for adults."
INVENTED = "The museum opens at nine. Dragons guard the museum at night and eat visitors."
OFFLINE = {"extensions": {"lookups": {"enabled": False}}}


def guard(action, **kwargs):
    return CiteVerifyGuard(policy=OFFLINE, unverified_action=action, **kwargs)


# --- blocked_response -----------------------------------------------------------------------------


def test_guard_replaces_a_blocked_answer_and_keeps_the_result():
    out = guard("block", blocked_response=DEFAULT_BLOCKED_RESPONSE).invoke(
        {"answer": INVENTED, "context": DOCS, "question": "q"}
    )
    assert out["answer"] == DEFAULT_BLOCKED_RESPONSE
    assert out["verification"].verdict == "block"
    assert out["question"] == "q"


def test_guard_replaces_a_message_answer_with_a_message():
    answer = AIMessage(content=INVENTED, id="m1")
    out = guard("block", blocked_response=lambda r: f"no ({r.reason_code})").invoke(
        {"answer": answer, "context": DOCS}
    )
    assert isinstance(out["answer"], AIMessage)
    assert out["answer"].content == "no (citation.unverified)"
    assert out["answer"].response_metadata["citeverify"]["verdict"] == "block"


def test_guard_still_raises_by_default():
    with pytest.raises(CitationBlockedError):
        guard("block").invoke({"answer": INVENTED, "context": DOCS})


def test_guard_with_a_replacement_lets_a_grounded_answer_through():
    out = guard("block", blocked_response="no").invoke({"answer": GROUNDED, "context": DOCS})
    assert out["answer"] == GROUNDED


def test_parser_returns_the_result_with_the_replacement_as_its_answer():
    parser = CiteVerifyOutputParser(
        policy=OFFLINE, unverified_action="block", documents=DOCS, blocked_response="no"
    )
    result = parser.invoke(INVENTED)
    assert (result.answer, result.original_answer) == ("no", "")  # the original is withheld
    assert (result.verdict, result.action) == ("block", "block")
    assert asyncio.run(parser.ainvoke(INVENTED)).answer == "no"


def test_tool_says_what_to_answer_instead():
    tool = CiteVerifyTool(policy=OFFLINE, blocked_response="I cannot confirm that.")
    unsupported = json.loads(tool.invoke({"text": INVENTED, "sources": [DOCS[0].page_content]}))
    supported = json.loads(
        tool.invoke({"text": GROUNDED, "sources": [d.page_content for d in DOCS]})
    )
    assert unsupported["answer_instead"] == "I cannot confirm that."
    assert "answer_instead" not in supported


MAKERS = {
    "guard": guard,
    "tool": lambda a, **k: CiteVerifyTool(**k),
    "parser": lambda a, **k: CiteVerifyOutputParser(unverified_action=a, **k),
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_a_blocked_response_of_another_type_is_our_input_error_at_once(make):
    with pytest.raises(InputError, match="blocked_response must be a string or a callable") as e:
        make("block", blocked_response=42)
    assert type(e.value) is InputError  # itself, not pydantic's ValidationError around it


@pytest.mark.parametrize("make", [MAKERS["guard"], MAKERS["parser"]], ids=["guard", "parser"])
def test_two_semantic_scorers_are_our_input_error(make):
    both = {"embeddings": DeterministicFakeEmbedding(size=8), "semantic_scorer": lambda c, p: 1.0}
    with pytest.raises(InputError, match="give embeddings or semantic_scorer, not both"):
        make("block", **both)


def test_a_callable_that_returns_no_text_is_a_clear_error():
    with pytest.raises(InputError, match="blocked_response returned int"):
        guard("block", blocked_response=lambda r: 1).invoke({"answer": INVENTED, "context": DOCS})


# --- format instructions and the error's message --------------------------------------------------


def test_format_instructions_tell_the_model_to_answer_from_the_sources_and_cite_them():
    parser = CiteVerifyOutputParser(policy=OFFLINE, documents=DOCS)
    instructions = parser.get_format_instructions()
    assert "only from the sources" in instructions
    assert "cite the source" in instructions
    prompt = ChatPromptTemplate.from_messages(
        [("system", "{format_instructions}\n\n{context}"), ("human", "{question}")]
    ).partial(format_instructions=instructions)
    text = prompt.invoke({"context": "c", "question": "q"}).to_string()
    assert instructions in text


def test_the_blocked_error_message_is_ours_alone():
    parser = CiteVerifyOutputParser(policy=OFFLINE, unverified_action="block", documents=DOCS)
    with pytest.raises(CitationBlockedError) as caught:
        parser.invoke(INVENTED)
    message = str(caught.value)
    assert message.startswith("answer blocked (citation.unverified): groundedness")
    assert "troubleshooting" not in message
    assert "OUTPUT_PARSING_FAILURE" not in message
    again = pickle.loads(pickle.dumps(caught.value))
    assert str(again) == message
    assert again.result == caught.value.result


# --- streaming under flag ---------------------------------------------------------------------------


def streaming_chain(action):
    llm = GenericFakeChatModel(messages=iter([AIMessage(content=INVENTED)]))
    answer = RunnableLambda(lambda x: x["question"]) | llm | StrOutputParser()
    return RunnablePassthrough.assign(answer=answer) | guard(action)


def test_flag_streams_the_tokens_as_they_come_then_the_verification():
    chunks = list(streaming_chain("flag").stream({"question": "q", "context": DOCS}))
    answer_chunks = [c["answer"] for c in chunks if "answer" in c]
    assert len(answer_chunks) > 5  # token by token, not one chunk at the end
    assert "".join(answer_chunks) == INVENTED
    assert list(chunks[-1]) == ["verification"]
    assert (chunks[-1]["verification"].action, chunks[-1]["verification"].verified) == (
        "flag",
        False,
    )


def test_flag_astreams_the_tokens_as_they_come():
    async def collect():
        return [
            c async for c in streaming_chain("flag").astream({"question": "q", "context": DOCS})
        ]

    chunks = asyncio.run(collect())
    assert "".join(c["answer"] for c in chunks if "answer" in c) == INVENTED
    assert chunks[-1]["verification"].action == "flag"


@pytest.mark.parametrize("action", ["redact", "block"])
def test_redact_and_block_still_hold_the_answer_back(action):
    async def collect(chain):
        return [c async for c in chain.astream({"question": "q", "context": DOCS})]

    chain = streaming_chain(action)
    if action == "block":
        with pytest.raises(CitationBlockedError):
            asyncio.run(collect(chain))
        return
    (chunk,) = asyncio.run(collect(chain))
    assert chunk["answer"] == "The museum opens at nine. [unverified claim removed]"


def test_flag_streaming_a_message_answer_adds_the_verification_to_its_metadata():
    llm = GenericFakeChatModel(messages=iter([AIMessage(content=GROUNDED)]))
    chain = RunnablePassthrough.assign(answer=RunnableLambda(lambda x: x["question"]) | llm)
    chunks = list((chain | guard("flag")).stream({"question": "q", "context": DOCS}))
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    assert whole["answer"].content == GROUNDED
    assert whole["answer"].response_metadata["citeverify"]["action"] == "allow"
    assert whole["verification"].verified


# --- the middleware's import ------------------------------------------------------------------------


def run_without_langchain(code):
    # sys.modules[name] = None makes `import name` fail as if it were not installed.
    setup = "import sys; sys.modules['langchain'] = None; sys.modules['langgraph'] = None\n"
    return subprocess.run(
        [sys.executable, "-c", setup + code],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_imports_without_langchain_and_the_middleware_names_the_extra():
    ok = run_without_langchain(
        "import langchain_citeverify; print(langchain_citeverify.CiteVerifyGuard)"
    )
    assert ok.returncode == 0, ok.stderr
    failed = run_without_langchain("from langchain_citeverify import CiteVerifyMiddleware")
    assert failed.returncode == 1
    assert "ModuleNotFoundError" in failed.stderr
    assert 'pip install "langchain-citeverify[agents]"' in failed.stderr
