"""What the LangChain adapters share: turning LangChain objects into strings, policies, errors."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import BaseMessage

from citeverify import CitationUnverifiedError, InputError, PolicyConfig, VerificationResult
from citeverify._policy import Extensions

__all__ = ["CitationBlockedError", "answer_text", "build_policy", "document_texts"]

# Guard options that are not PolicyConfig fields but common enough to deserve a keyword.
_SHORTCUTS = {"unverified_action": ("output_action", "unverified_action")}


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


def build_policy(policy: Any, options: Mapping[str, Any]) -> PolicyConfig:
    """A PolicyConfig from a PolicyConfig, mapping, policy pack path or None, plus keyword options.

    ``options`` are top-level policy fields (``min_groundedness=0.7``), ``unverified_action``,
    or extension options (``strict_quotes=True``).
    """
    if isinstance(policy, str | Path):
        base = PolicyConfig.from_yaml(policy).model_dump(exclude_unset=True)
    elif isinstance(policy, PolicyConfig):
        base = policy.model_dump(exclude_unset=True)
    elif isinstance(policy, Mapping):
        base = dict(PolicyConfig.model_validate(dict(policy)).model_dump(exclude_unset=True))
    elif policy is None:
        base = {}
    else:
        got = type(policy).__name__
        msg = f"policy must be a PolicyConfig, a mapping or a policy pack path, got {got}"
        raise InputError(msg, path="policy")
    for key, value in options.items():
        if key in _SHORTCUTS:
            section, field = _SHORTCUTS[key]
            base.setdefault(section, {})[field] = value
        elif key not in PolicyConfig.model_fields and key in Extensions.model_fields:
            base.setdefault("extensions", {})[key] = value  # strict_quotes=True and the like
        else:
            base[key] = value  # unknown keys fail in validation, with their name
    return PolicyConfig.model_validate(base)


def answer_text(answer: Any, *, where: str = "answer") -> str:
    """The text of an answer given as a string or a message (AIMessage, AIMessageChunk)."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, BaseMessage):
        return str(answer.text)  # the text parts of the content, whatever its shape
    msg = f"{where} must be a string or a message, got {type(answer).__name__}"
    raise InputError(msg, path=where)


def document_texts(context: Any, *, where: str = "context") -> list[str]:
    """Context documents as strings: Documents, strings, or mappings with content/page_content."""
    if isinstance(context, str | Document):
        context = [context]
    if not isinstance(context, list | tuple):
        msg = f"{where} must be a list of Documents or strings, got {type(context).__name__}"
        raise InputError(msg, path=where)
    texts = []
    for i, doc in enumerate(context):
        if isinstance(doc, Document):
            texts.append(doc.page_content)
        elif isinstance(doc, str):
            texts.append(doc)
        elif isinstance(doc, Mapping) and isinstance(
            doc.get("page_content", doc.get("content")), str
        ):
            texts.append(doc.get("page_content", doc.get("content")))
        else:
            msg = f"{where}[{i}] must be a Document, a string or a mapping with content"
            raise InputError(msg, path=f"{where}[{i}]")
    return texts
