"""What the LangChain adapters share: turning LangChain objects into strings, policies, errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import BaseMessage

from citeverify import CitationUnverifiedError, InputError, VerificationResult
from citeverify._context import coerce_documents

__all__ = ["CitationBlockedError", "answer_text", "document_texts", "message_text"]


class CitationBlockedError(CitationUnverifiedError, OutputParserException):
    """Raised when the policy blocks an answer.

    It is both :class:`citeverify.CitationUnverifiedError` (``.result`` holds the verification)
    and LangChain's ``OutputParserException``, so ``with_fallbacks(...)`` and retrying parsers
    handle it like any parsing failure.
    """

    def __init__(self, result: VerificationResult) -> None:
        CitationUnverifiedError.__init__(self, result)  # sets the message via OutputParserException
        self.llm_output = result.original_answer or result.answer
        self.observation = "; ".join(result.reasons) or None
        self.send_to_llm = False


def answer_text(answer: Any, *, where: str = "answer") -> str:
    """The text of an answer given as a string or a message (AIMessage, AIMessageChunk)."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, BaseMessage):
        return message_text(answer)
    msg = f"{where} must be a string or a message, got {type(answer).__name__}"
    raise InputError(msg, path=where)


def message_text(message: Any) -> str:
    """The text parts of a message's content, whichever langchain-core 0.3.x or 1.x made it.

    In 1.x ``message.text`` is a property (a ``str`` subclass that is also callable, with a
    deprecation warning when called); in later 0.3.x it is a plain method, whose ``str()`` would
    be ``"<bound method ...>"`` (issue 11); early 0.3.x messages have no ``text`` at all.
    """
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return str(text)
    if callable(text):  # langchain-core 0.3.x: a method
        return str(text())
    return _content_text(message.content)


def _content_text(content: Any) -> str:
    """What ``text`` returns, for messages without it: strings and ``{"type": "text"}`` blocks."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def document_texts(context: Any, *, where: str = "context") -> list[str]:
    """Context documents as strings: Documents, plus what the core accepts (strings, mappings)."""
    if isinstance(context, str | Document):
        context = [context]
    if not isinstance(context, list | tuple):
        msg = f"{where} must be a list of Documents or strings, got {type(context).__name__}"
        raise InputError(msg, path=where)
    items = [doc.page_content if isinstance(doc, Document) else doc for doc in context]
    return coerce_documents(items, where=where)
