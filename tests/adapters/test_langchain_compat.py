"""LangChain versions and installs the adapter meets (issue 11).

- langchain-core 0.3.x, where ``BaseMessage.text`` is a method, not the 1.x property;
- a Python without langchain-core, where the import must say what to install.
"""

import asyncio
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk

from langchain_citeverify import CiteVerifyGuard, CiteVerifyOutputParser
from langchain_citeverify._common import answer_text, message_text

DOCS = [
    Document(page_content="The museum opens at nine and closes at five on weekdays."),
    Document(page_content="Tickets cost ten euros for adults; children enter free."),
]
GROUNDED = "The museum opens at nine and closes at five. Tickets cost ten euros for adults."
OFFLINE = {"extensions": {"lookups": {"enabled": False}}}


class Core03AIMessage(AIMessage):
    """An AIMessage as langchain-core 0.3.x shapes it: ``text`` is a plain method."""

    def text(self) -> str:  # type: ignore[override]
        content = self.content
        if isinstance(content, str):
            return content
        return "".join(
            block if isinstance(block, str) else block.get("text", "")
            for block in content
            if isinstance(block, str) or block.get("type") == "text"
        )


def test_the_stand_in_really_has_the_method_form():
    # Guards the test below: str() of the bound method is what the old adapter checked.
    message = Core03AIMessage(content=GROUNDED)
    assert callable(message.text)
    assert not isinstance(message.text, str)
    assert str(message.text).startswith("<bound method")


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(Core03AIMessage(content=GROUNDED), id="0.3-method"),
        pytest.param(
            Core03AIMessage(content=[{"type": "text", "text": GROUNDED}]), id="0.3-blocks"
        ),
        pytest.param(AIMessage(content=GROUNDED), id="1.x-property"),
        pytest.param(
            AIMessage(content=[{"type": "text", "text": GROUNDED}, {"type": "image", "url": "x"}]),
            id="1.x-blocks",
        ),
        pytest.param(AIMessageChunk(content=GROUNDED), id="1.x-chunk"),
    ],
)
def test_message_text_is_the_text_whichever_form_text_takes(message):
    assert message_text(message) == GROUNDED
    assert answer_text(message) == GROUNDED


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(GROUNDED, id="string"),
        pytest.param(
            [GROUNDED[:45], {"type": "text", "text": GROUNDED[45:]}, {"type": "image", "url": "x"}],
            id="blocks",
        ),
    ],
)
def test_message_text_without_a_text_attribute(content):
    # langchain-core 0.3.0's messages have only `content`.
    early = SimpleNamespace(content=content)
    assert message_text(early) == GROUNDED


def test_a_grounded_0_3_message_is_verified_by_the_guard_and_the_parser():
    message = Core03AIMessage(content=GROUNDED)
    guard = CiteVerifyGuard(policy=OFFLINE, unverified_action="block")
    out = guard.invoke({"answer": message, "context": DOCS})
    assert out["verification"].verified
    assert out["verification"].answer == GROUNDED
    assert out["answer"].response_metadata["citeverify"]["reason_code"] == "citation.verified"
    assert asyncio.run(guard.ainvoke({"answer": message, "context": DOCS}))["verification"].verified

    parser = CiteVerifyOutputParser(policy=OFFLINE, documents=DOCS, unverified_action="block")
    assert parser.invoke(message).verified


# --- without langchain-core ---------------------------------------------------------------------

NO_LANGCHAIN = textwrap.dedent(
    """
    import sys
    sys.modules["langchain_core"] = None  # what an environment without langchain-core looks like

    import citeverify_core  # the core needs no framework

    try:
        import langchain_citeverify
    except ImportError as exc:  # ModuleNotFoundError is one
        print(type(exc).__name__)
        print(exc.name)
        print(exc)
    else:
        print("imported")
    """
)


def test_importing_without_langchain_core_says_what_to_install():
    proc = subprocess.run(
        [sys.executable, "-c", NO_LANGCHAIN],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    kind, name, message = proc.stdout.strip().split("\n", 2)
    # Still a ModuleNotFoundError, so `except ImportError` and `except ModuleNotFoundError` both
    # keep working; before issue 11 its message was only "import of langchain_core halted".
    assert kind == "ModuleNotFoundError"
    assert name == "langchain_core"
    assert "pip install langchain-core" in message
    assert "langchain_citeverify needs LangChain" in message
