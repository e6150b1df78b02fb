"""The LlamaIndex postprocessor, query engine and evaluator, through real LlamaIndex objects."""

import asyncio
import json
from typing import Any

import pytest
from llama_index.core import Document, MockEmbedding, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.base.response.schema import Response, StreamingResponse
from llama_index.core.evaluation import BatchEvalRunner
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.query_engine import CitationQueryEngine

from citeverify_core import CitationUnverifiedError, InputError, VerificationResult
from llama_index.evaluation.citeverify import CiteVerifyEvaluator
from llama_index.postprocessor.citeverify import (
    CiteVerifyEvent,
    CiteVerifyPostprocessor,
    CiteVerifyQueryEngine,
)

TEXTS = [
    "The museum opens at nine and closes at five on weekdays.",
    "Tickets cost ten euros for adults; children enter free.",
    "The museum was founded in 1890 by the city council.",
]
GROUNDED = "The museum opens at nine and closes at five. Tickets cost ten euros for adults."
UNGROUNDED = "The museum opens at nine. Dragons guard the museum at night and eat visitors."
REDACTED = "The museum opens at nine. [unverified claim removed]"
OFFLINE = {"extensions": {"lookups": {"enabled": False}}}


class FixedLLM(CustomLLM):
    """An LLM that always gives the same answer (streamed word by word when asked)."""

    answer: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=4096, num_output=256, model_name="fixed")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = ""
        for word in self.answer.split(" "):
            delta = word if not text else " " + word
            text += delta
            yield CompletionResponse(text=text, delta=delta)


def index():
    return VectorStoreIndex.from_documents(
        [Document(text=t) for t in TEXTS], embed_model=MockEmbedding(embed_dim=8)
    )


def engine(answer, *, streaming=False, **policy):
    inner = index().as_query_engine(
        llm=FixedLLM(answer=answer), similarity_top_k=3, streaming=streaming
    )
    return CiteVerifyQueryEngine(inner, policy=OFFLINE, **policy)


def result_of(response) -> VerificationResult:
    return response.metadata["citeverify"]


def test_the_source_nodes_are_the_context():
    response = engine(GROUNDED).query("When does it open?")
    assert isinstance(response, Response)
    assert len(response.source_nodes) == 3
    result = result_of(response)
    assert result.details.groundedness == 1.0
    assert {c.best_document for c in result.details.claims} <= {0, 1, 2}


def test_streaming_engine_is_verified_once_when_the_stream_ends():
    response = engine(UNGROUNDED, streaming=True, unverified_action="redact").query("Tell me.")
    assert isinstance(response, StreamingResponse)  # still a stream (issue 11)
    assert str(response) == REDACTED  # reads the stream; verified once at its end
    assert result_of(response).details.unverified_claim_count == 1


def test_block_raises_with_the_result():
    with pytest.raises(CitationUnverifiedError) as info:
        asyncio.run(engine(UNGROUNDED, unverified_action="block").aquery("Tell me."))
    assert info.value.result.details.unverified_claim_count == 1


def test_postprocessor_on_a_response_you_already_have():
    inner = index().as_query_engine(llm=FixedLLM(answer=UNGROUNDED), similarity_top_k=3)
    response = inner.query("Tell me.")
    checked = CiteVerifyPostprocessor(policy=OFFLINE, unverified_action="redact").verify_response(
        response
    )
    assert checked.response == REDACTED
    assert result_of(checked).details.unverified_claim_count == 1
    assert "Dragons" not in json.dumps(result_of(checked).details.to_dict())  # no leak
    keep = CiteVerifyPostprocessor(
        policy=OFFLINE, unverified_action="redact", include_original=True
    )
    assert result_of(keep.verify_response(response)).original_answer == UNGROUNDED


def test_postprocessor_in_node_postprocessors_refuses_to_run():
    post = CiteVerifyPostprocessor(policy=OFFLINE, unverified_action="block")
    eng = index().as_query_engine(
        llm=FixedLLM(answer=UNGROUNDED), similarity_top_k=3, node_postprocessors=[post]
    )
    # No answer exists at retrieval time: a guard there would check nothing, so it says so.
    with pytest.raises(InputError, match="CiteVerifyQueryEngine") as info:
        eng.query("Tell me.")
    assert info.value.path == "node_postprocessors"


def test_citation_query_engine_cited_node_is_checked():
    idx = index()

    def citation_engine(answer):
        return CitationQueryEngine.from_args(
            idx, llm=FixedLLM(answer=answer), similarity_top_k=3, citation_chunk_size=512
        )

    # Which numbered source holds the opening hours depends on retrieval order: ask the engine.
    nodes = citation_engine("").retrieve("When does it open?")
    hours = next(i for i, n in enumerate(nodes, 1) if "opens at nine" in n.node.get_content())
    founded = next(i for i, n in enumerate(nodes, 1) if "1890" in n.node.get_content())
    for source, misattributed in [(hours, False), (founded, True)]:
        answer = f"The museum opens at nine and closes at five on weekdays [{source}]."
        checked = CiteVerifyQueryEngine(citation_engine(answer), policy=OFFLINE).query(
            "When does it open?"
        )
        assert (
            "Source 1" in checked.source_nodes[0].node.get_content()
        )  # CitationQueryEngine's numbering
        (claim,) = result_of(checked).details.claims
        assert claim.cited_documents == [source - 1]
        assert claim.misattributed is misattributed
        assert claim.verified  # the context as a whole supports it either way


class Events(BaseEventHandler):
    events: list[Any]

    @classmethod
    def class_name(cls) -> str:
        return "Events"

    def handle(self, event, **kwargs):
        self.events.append(event)


def test_instrumentation_event_with_the_verdict():
    handler = Events(events=[])
    root = get_dispatcher()
    root.add_event_handler(handler)
    try:
        engine(UNGROUNDED, unverified_action="flag").query("Tell me.")
    finally:
        root.event_handlers.remove(handler)
    (event,) = [e for e in handler.events if isinstance(e, CiteVerifyEvent)]
    assert (event.verdict, event.reason_code) == ("allow", "citation.unverified")
    assert 0 < event.groundedness < 1


# BatchEvalRunner itself calls LlamaIndex's deprecated asyncio_module(): their warning, not ours.
@pytest.mark.filterwarnings("ignore:asyncio_module\\(\\) is deprecated:DeprecationWarning")
def test_evaluator_through_batch_eval_runner():
    evaluator = CiteVerifyEvaluator(policy=OFFLINE, unverified_action="block")
    runner = BatchEvalRunner({"citeverify": evaluator}, workers=2)
    responses = [engine(a).query("Tell me.") for a in (GROUNDED, UNGROUNDED)]
    results = asyncio.run(runner.aevaluate_responses(["q1", "q2"], responses=responses))[
        "citeverify"
    ]
    assert [r.passing for r in results] == [True, False]
    assert results[0].score == 1.0
    # Under block the evaluation names the claim by its span, as a guard's result would.
    assert "unsupported claim at 26-77" in results[1].feedback
    assert "Dragons" not in repr(results[1])


def test_evaluator_direct():
    result = CiteVerifyEvaluator(policy=OFFLINE).evaluate(response=UNGROUNDED, contexts=TEXTS)
    assert result.passing is False
    assert result.contexts == TEXTS
    # Under flag (the default) nothing is withheld: the feedback quotes the claim.
    assert "unsupported claim: Dragons guard the museum" in result.feedback


def test_configuration_from_a_policy_pack(seed_policy_path):
    post = CiteVerifyPostprocessor(policy=seed_policy_path)
    assert post.policy.output_action.unverified_action == "block"
    assert (
        CiteVerifyQueryEngine(
            index().as_query_engine(llm=FixedLLM()), policy=seed_policy_path, min_confidence=0.5
        ).postprocessor.policy.min_confidence
        == 0.5
    )


def test_evaluator_rejects_a_wrong_option_instead_of_ignoring_it():
    from citeverify_core import PolicyError

    with pytest.raises(PolicyError, match="unverified_action"):
        CiteVerifyEvaluator(unverified_action="nuke")
