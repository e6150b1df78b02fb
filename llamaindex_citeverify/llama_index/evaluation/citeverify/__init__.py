"""citeverify's LlamaIndex evaluator, in LlamaIndex's evaluation namespace.

:class:`CiteVerifyEvaluator` is a ``BaseEvaluator`` for ``BatchEvalRunner`` and friends: ``passing``
is whether the answer is verified, ``score`` its groundedness, ``feedback`` the unsupported claims;
no LLM judge. Shipped by the distribution ``llama-index-postprocessor-citeverify``, whose guards
are in ``llama_index.postprocessor.citeverify``.
"""

from llama_index.evaluation.citeverify.base import CiteVerifyEvaluator

__all__ = ["CiteVerifyEvaluator"]
