"""LlamaIndex integration of citeverify (distribution ``llama-index-postprocessor-citeverify``).

- :class:`CiteVerifyQueryEngine`: wraps a query engine; every answer is verified against its
  ``source_nodes`` and comes back as the response type the engine gave (``Response``,
  ``PydanticResponse``, a stream verified when it ends).
- :class:`CiteVerifyChatEngine`: wraps a chat engine (``index.as_chat_engine(chat_mode="context"``
  or ``"condense_plus_context"``); ``chat``/``achat``/``stream_chat``/``astream_chat`` answers are
  verified, and the chat history keeps what the user was shown, not a blocked or redacted text.
- :func:`verify_response` / :func:`averify_response`, and the same methods of
  :class:`CiteVerifyPostprocessor`: verify a response you already have (a query response or a chat
  response). In ``node_postprocessors`` the postprocessor refuses to run: no answer exists there.
- :class:`CiteVerifyEvent`: the instrumentation event with the verdict.

The evaluator is in LlamaIndex's evaluation namespace: ``llama_index.evaluation.citeverify``.
Test ``result.verified`` (or ``result.action``), not ``result.verdict``: under flag and redact an
unverified answer keeps ``verdict == "allow"``.
"""

try:
    import llama_index.core  # noqa: F401  (only to say what is missing)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    msg = (
        "llama_index.postprocessor.citeverify needs LlamaIndex: install the llama-index-core "
        f"distribution (pip install llama-index-core). The import failed with: {exc}"
    )
    raise ModuleNotFoundError(msg, name="llama_index.core") from exc

from llama_index.postprocessor.citeverify._common import CiteVerifyEvent
from llama_index.postprocessor.citeverify.chat_engine import CiteVerifyChatEngine
from llama_index.postprocessor.citeverify.postprocessor import (
    CiteVerifyPostprocessor,
    averify_response,
    verify_response,
)
from llama_index.postprocessor.citeverify.query_engine import CiteVerifyQueryEngine

__all__ = [
    "CiteVerifyChatEngine",
    "CiteVerifyEvent",
    "CiteVerifyPostprocessor",
    "CiteVerifyQueryEngine",
    "averify_response",
    "verify_response",
]
