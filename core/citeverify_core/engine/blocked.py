"""What a blocked answer is replaced with, when a caller asks for a replacement instead of a raise.

Inside an agent, a tool call or a chat loop an exception ends the run; the adapters take
``blocked_response=`` (a string, or a callable given the :class:`VerificationResult`) and put its
text where the answer was. This module is the one place that reads that option.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from citeverify_core.errors import InputError

if TYPE_CHECKING:
    from citeverify_core.engine.results import VerificationResult

__all__ = [
    "DEFAULT_BLOCKED_RESPONSE",
    "BlockedResponse",
    "blocked_answer",
    "check_blocked_response",
]

#: A replacement text, or a function of the result that returns one.
BlockedResponse: TypeAlias = "str | Callable[[VerificationResult], str]"

#: The replacement when ``blocked_response=True`` is given: says why, promises nothing.
DEFAULT_BLOCKED_RESPONSE = "I can't give that answer: the sources I was given do not support it."


def check_blocked_response(value: object, *, where: str = "blocked_response") -> None:
    """Refuse a ``blocked_response`` that is neither ``None``, a string nor a callable.

    Called when an adapter is made, so that a wrong option fails at once, not at the first block.

    Raises:
        InputError: ``value`` is of another type.
    """
    if value is None or isinstance(value, str) or callable(value):
        return
    msg = f"{where} must be a string or a callable of the result, got {type(value).__name__}"
    raise InputError(msg, path=where)


def blocked_answer(
    result: VerificationResult,
    blocked_response: BlockedResponse,
    *,
    where: str = "blocked_response",
) -> str:
    """The text that stands in for a blocked answer.

    Args:
        result: The verification that blocked the answer.
        blocked_response: The replacement text, or a callable given ``result`` that returns it.
        where: The option's name, for the error message.

    Raises:
        InputError: the callable returned something other than a string, or the option is of
            another type. (What the callable itself raises propagates unchanged.)
    """
    if isinstance(blocked_response, str):
        return blocked_response
    if callable(blocked_response):
        text = blocked_response(result)
        if not isinstance(text, str):
            msg = f"{where} returned {type(text).__name__}, expected the replacement text (str)"
            raise InputError(msg, path=where)
        return text
    check_blocked_response(blocked_response, where=where)  # raises: the type is wrong
    raise AssertionError  # pragma: no cover - check_blocked_response raised
