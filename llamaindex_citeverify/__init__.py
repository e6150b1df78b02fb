"""LlamaIndex integration of citeverify (``pip install citeverify[llamaindex]``).

- :class:`CiteVerifyQueryEngine`: wraps a query engine; every answer is verified against its
  ``source_nodes``.
- :class:`CiteVerifyPostprocessor`: ``verify_response(response)`` for a Response you already
  have; also a (pass-through) ``BaseNodePostprocessor``.
- :class:`CiteVerifyEvaluator`: a ``BaseEvaluator`` (passing, groundedness score, feedback).
- :class:`CiteVerifyEvent`: the instrumentation event with the verdict.
"""

from llamaindex_citeverify._common import CiteVerifyEvent
from llamaindex_citeverify.evaluation import CiteVerifyEvaluator
from llamaindex_citeverify.postprocessor import CiteVerifyPostprocessor
from llamaindex_citeverify.query_engine import CiteVerifyQueryEngine

__all__ = [
    "CiteVerifyEvaluator",
    "CiteVerifyEvent",
    "CiteVerifyPostprocessor",
    "CiteVerifyQueryEngine",
]
