"""LlamaIndex integration of citeverify (distribution ``llama-index-postprocessor-citeverify``).

- :class:`CiteVerifyQueryEngine`: wraps a query engine; every answer is verified against its
  ``source_nodes`` and comes back as the response type the engine gave (``Response``,
  ``PydanticResponse``, a stream verified when it ends).
- :class:`CiteVerifyPostprocessor`: ``verify_response(response)`` for a response you already
  have. In ``node_postprocessors`` it cannot verify (no answer exists yet): it passes the nodes
  through and warns once (``CiteVerifyUsageWarning``).
- :class:`CiteVerifyEvaluator`: a ``BaseEvaluator`` (passing, groundedness score, feedback).
- :class:`CiteVerifyEvent`: the instrumentation event with the verdict.
"""

try:
    import llama_index.core  # noqa: F401  (only to say what is missing)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    msg = (
        "llamaindex_citeverify needs LlamaIndex: install the llama-index-core distribution "
        f"(pip install llama-index-core). The import failed with: {exc}"
    )
    raise ModuleNotFoundError(msg, name="llama_index.core") from exc

from llamaindex_citeverify._common import CiteVerifyEvent
from llamaindex_citeverify.evaluation import CiteVerifyEvaluator
from llamaindex_citeverify.postprocessor import CiteVerifyPostprocessor, CiteVerifyUsageWarning
from llamaindex_citeverify.query_engine import CiteVerifyQueryEngine

__all__ = [
    "CiteVerifyEvaluator",
    "CiteVerifyEvent",
    "CiteVerifyPostprocessor",
    "CiteVerifyQueryEngine",
    "CiteVerifyUsageWarning",
]
