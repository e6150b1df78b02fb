"""A query engine that verifies every answer of the engine it wraps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import RESPONSE_TYPE
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.prompts.mixin import PromptDictType, PromptMixinType
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType

from llama_index.postprocessor.citeverify._common import SPAN_MARK, listeners, span_named
from llama_index.postprocessor.citeverify.postprocessor import CiteVerifyPostprocessor

__all__ = ["CiteVerifyQueryEngine"]

#: The dispatcher LlamaIndex's ``DispatcherSpanMixin`` would span ``query``/``aquery`` with.
_dispatcher = get_dispatcher(__name__)


class CiteVerifyQueryEngine(CustomQueryEngine):
    """Wraps any query engine; each answer is checked against its own ``source_nodes``.

    ``query``/``aquery`` return the kind of response the wrapped engine gave, with
    ``metadata["citeverify"]`` holding the :class:`citeverify_core.VerificationResult` (the answer
    redacted under ``redact``); a block raises :class:`citeverify_core.CitationUnverifiedError`,
    or with ``blocked_response=`` (a string or a callable of the result) the answer is replaced by
    that text, which is what a ``QueryEngineTool`` over this engine hands to an agent.
    Under ``block`` the result and the error hold nothing of the blocked answer, under ``redact``
    nothing of the removed claims, unless ``include_original=True`` (which sends the original
    along). A ``PydanticResponse`` (``output_cls=...``) is verified by its string values; a
    streaming response stays streaming and is verified when its stream ends (see
    :mod:`llama_index.postprocessor.citeverify.postprocessor` for what is yielded under each
    action).

    Like LlamaIndex's own wrappers (``TransformQueryEngine``), it passes ``get_prompts`` /
    ``update_prompts`` (keys prefixed ``query_engine:``), ``retrieve``/``aretrieve`` and the
    ``QueryBundle`` itself through to the wrapped engine; ``synthesize``/``asynthesize`` answers
    are verified too.

    Args:
        query_engine: The engine to wrap (``index.as_query_engine(...)``,
            ``CitationQueryEngine``...).
        policy: As for :class:`CiteVerifyPostprocessor`; keyword options override it.
        **options: Policy options (``unverified_action="block"``) and the postprocessor's
            (``blocked_response``, ``embed_model``, ``include_original``).

    Raises:
        citeverify_core.PolicyError: a policy option is wrong.
        citeverify_core.InputError: another option is wrong.
    """

    query_engine: BaseQueryEngine
    postprocessor: CiteVerifyPostprocessor

    def __init__(self, query_engine: BaseQueryEngine, policy: Any = None, **options: Any) -> None:
        super().__init__(
            query_engine=query_engine,
            postprocessor=CiteVerifyPostprocessor(policy=policy, **options),
        )

    def _get_prompt_modules(self) -> PromptMixinType:
        """The wrapped engine's prompts are this engine's prompts."""
        return {"query_engine": self.query_engine}

    def update_prompts(self, prompts_dict: PromptDictType) -> None:
        """Update the wrapped engine's prompts, by the keys :meth:`get_prompts` gives.

        LlamaIndex's ``PromptMixin.update_prompts`` splits a key at its only ``:``, so the
        two-level keys of a wrapped engine (``query_engine:response_synthesizer:...``) would
        fail there: the ``query_engine:`` prefix is taken off here and the rest handed down.
        """
        ours = {}
        inner = {}
        for key, prompt in prompts_dict.items():
            module, sep, sub_key = key.partition(":")
            if sep and module == "query_engine":
                inner[sub_key] = prompt
            else:
                ours[key] = prompt
        if inner:
            self.query_engine.update_prompts(inner)
        if ours:
            super().update_prompts(ours)

    # ``query``/``aquery`` are instrumentation spans (``CiteVerifyQueryEngine.query``) and legacy
    # callback traces only when a handler listens: unheard, they cost as much as a fifth of
    # verifying a short answer. The mark keeps LlamaIndex's mixin from spanning them always.
    def query(self, str_or_query_bundle: QueryType) -> RESPONSE_TYPE:
        """Query the wrapped engine with the same query (a ``QueryBundle`` is kept whole)."""
        if listeners(_dispatcher)[0]:
            return self._spanned_query(str_or_query_bundle)
        return self._query_verified(str_or_query_bundle)

    setattr(query, SPAN_MARK, True)

    @span_named("query", _dispatcher)
    def _spanned_query(self, str_or_query_bundle: QueryType) -> RESPONSE_TYPE:
        return self._query_verified(str_or_query_bundle)

    def _query_verified(self, str_or_query_bundle: QueryType) -> RESPONSE_TYPE:
        if not self.callback_manager.handlers:
            response = self.query_engine.query(str_or_query_bundle)
            checked: RESPONSE_TYPE = self.postprocessor.verify_response(response)
            return checked
        with self.callback_manager.as_trace("query"):
            response = self.query_engine.query(str_or_query_bundle)
            checked = self.postprocessor.verify_response(response)
            return checked

    async def aquery(self, str_or_query_bundle: QueryType) -> RESPONSE_TYPE:
        """Async :meth:`query`: real async in both the engine and the lookups."""
        if listeners(_dispatcher)[0]:
            return await self._spanned_aquery(str_or_query_bundle)
        return await self._aquery_verified(str_or_query_bundle)

    setattr(aquery, SPAN_MARK, True)

    @span_named("aquery", _dispatcher)
    async def _spanned_aquery(self, str_or_query_bundle: QueryType) -> RESPONSE_TYPE:
        return await self._aquery_verified(str_or_query_bundle)

    async def _aquery_verified(self, str_or_query_bundle: QueryType) -> RESPONSE_TYPE:
        if not self.callback_manager.handlers:
            response = await self.query_engine.aquery(str_or_query_bundle)
            checked: RESPONSE_TYPE = await self.postprocessor.averify_response(response)
            return checked
        with self.callback_manager.as_trace("query"):
            response = await self.query_engine.aquery(str_or_query_bundle)
            checked = await self.postprocessor.averify_response(response)
            return checked

    def custom_query(self, query_str: str) -> RESPONSE_TYPE:
        """Query the wrapped engine, then verify the answer."""
        return self.query(query_str)

    async def acustom_query(self, query_str: str) -> RESPONSE_TYPE:
        """Async :meth:`custom_query`."""
        return await self.aquery(query_str)

    def retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """The wrapped engine's retrieval (nothing to verify: there is no answer yet)."""
        return self.query_engine.retrieve(query_bundle)

    async def aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """Async :meth:`retrieve`, where the wrapped engine has it."""
        inner = getattr(self.query_engine, "aretrieve", None)
        if inner is None:
            return self.retrieve(query_bundle)
        nodes: list[NodeWithScore] = await inner(query_bundle)
        return nodes

    def synthesize(
        self,
        query_bundle: QueryBundle,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
    ) -> RESPONSE_TYPE:
        """The wrapped engine's answer from these nodes, verified against its source nodes."""
        response = self.query_engine.synthesize(
            query_bundle, nodes, additional_source_nodes=additional_source_nodes
        )
        checked: RESPONSE_TYPE = self.postprocessor.verify_response(response)
        return checked

    async def asynthesize(
        self,
        query_bundle: QueryBundle,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
    ) -> RESPONSE_TYPE:
        """Async :meth:`synthesize`."""
        response = await self.query_engine.asynthesize(
            query_bundle, nodes, additional_source_nodes=additional_source_nodes
        )
        checked: RESPONSE_TYPE = await self.postprocessor.averify_response(response)
        return checked
