"""Fake tool-calling chat models for agent tests and benches (langchain-core's real fake model).

``GenericFakeChatModel`` replays the messages it is given, but has no ``bind_tools`` (which
``create_agent`` calls) and its stream drops tool calls and cannot stream a message without
text. These fill the gaps; they are still langchain-core's model, callbacks and all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk

__all__ = ["StreamingToolFake"]


class StreamingToolFake(GenericFakeChatModel):
    """Replays its messages, tool calls included, and streams them word by word.

    The tool calls come in the last chunk. With ``streaming=True`` it streams even when no
    handler asks for it, as a provider's chat model does (``ChatOpenAI(streaming=True)``); leave
    ``streaming`` unset otherwise (a model whose ``streaming`` is set to False never streams).
    """

    streaming: bool = False

    def bind_tools(self, tools: Any, **kwargs: Any) -> StreamingToolFake:
        """The agent binds its tools; the replies are fixed."""
        return self

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        reply = next(self.messages)
        text = reply.content if isinstance(reply.content, str) else ""
        pieces = [AIMessageChunk(content=word, id=reply.id) for word in re.findall(r"\S+\s*", text)]
        calls = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(getattr(reply, "tool_calls", []) or [])
        ]
        pieces.append(AIMessageChunk(content="", id=reply.id, tool_call_chunks=calls))
        for piece in pieces:
            chunk = ChatGenerationChunk(message=piece)
            if run_manager:
                run_manager.on_llm_new_token(str(piece.content), chunk=chunk)
            yield chunk
