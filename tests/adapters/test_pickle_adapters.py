"""The adapters travel: pickle, copy.deepcopy and a spawned process pool give working copies.

Each adapter is used before it is copied (its context cache filled), and each copy must answer
as the original: the same text, the same ``to_dict()`` of the result, the same block.
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import llama_index.core.utils
import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode

from citeverify_core import CitationUnverifiedError
from citeverify_core.references import LocalIndex, ReferenceVerifier
from langchain_citeverify import (
    CiteVerifyGuard,
    CiteVerifyOutputParser,
    CiteVerifyReferenceTool,
    CiteVerifyTool,
)
from llama_index.evaluation.citeverify import CiteVerifyEvaluator
from llama_index.postprocessor.citeverify import CiteVerifyPostprocessor
from tests.adapters.test_llamaindex import GROUNDED, OFFLINE, TEXTS, UNGROUNDED, engine
from tests.conftest import DATA

ANSWERS = [GROUNDED, UNGROUNDED, "The museum was founded in 1890 (Smith et al., 2020)."]
REFERENCES = [
    "LeCun, Y., Bengio, Y., & Hinton, G. (2013). Deep learning. Nature, 521(7553), 436–444.",
    "Doe, J. (2020). Quantum sponges of the deep sea. Journal of Nothing, 1, 1-2.",
]


def _result(value: Any) -> Any:
    return json.dumps(value.to_dict(), sort_keys=True)


def _guarded(call: Any) -> Any:
    """What a call gives, or the result a block carries (a block is an answer too)."""
    try:
        return call()
    except CitationUnverifiedError as exc:
        return ("blocked", type(exc).__name__, _result(exc.result))


def outcome(adapter: Any) -> list[Any]:
    """What each adapter answers for ANSWERS (module level: a spawned worker calls it)."""
    docs = [LCDocument(page_content=t) for t in TEXTS]
    nodes = [NodeWithScore(node=TextNode(text=t), score=1.0) for t in TEXTS]
    if isinstance(adapter, CiteVerifyGuard):

        def run(answer: str) -> Any:
            out = adapter.invoke({"answer": answer, "context": docs})
            return out["answer"], _result(out["verification"])

    elif isinstance(adapter, CiteVerifyTool):

        def run(answer: str) -> Any:
            return adapter.invoke({"text": answer, "sources": TEXTS})

    elif isinstance(adapter, CiteVerifyReferenceTool):
        return [adapter.invoke({"references": REFERENCES})]
    elif isinstance(adapter, CiteVerifyOutputParser):

        def run(answer: str) -> Any:
            return _result(adapter.parse(answer))

    elif isinstance(adapter, CiteVerifyPostprocessor):

        def run(answer: str) -> Any:
            response = adapter.verify_response(Response(response=answer, source_nodes=nodes))
            return response.response, _result(response.metadata["citeverify"])

    elif isinstance(adapter, CiteVerifyEvaluator):

        def run(answer: str) -> Any:
            r = adapter.evaluate(response=answer, contexts=TEXTS)
            return r.passing, r.score, r.feedback

    else:  # the query engine: its LLM always gives the same answer
        response = _guarded(lambda: adapter.query("When does the museum open?"))
        if isinstance(response, tuple):
            return [response]
        return [sorted(n.node.get_content() for n in response.source_nodes), response.response]
    return [_guarded(lambda a=a: run(a)) for a in ANSWERS]


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("index") / "works.sqlite"
    LocalIndex(path).build(DATA / "works-crossref.jsonl")
    return path


def adapters(index_path: Path) -> dict[str, Any]:
    return {
        "guard-redact": CiteVerifyGuard(
            policy=OFFLINE,
            unverified_action="redact",
            embeddings=DeterministicFakeEmbedding(size=8),
        ),
        "guard-block": CiteVerifyGuard(policy=OFFLINE, unverified_action="block"),
        "tool": CiteVerifyTool(policy=OFFLINE),
        "reference-tool": CiteVerifyReferenceTool(
            verifier=ReferenceVerifier(LocalIndex(index_path))
        ),
        "output-parser": CiteVerifyOutputParser(
            policy=OFFLINE, documents=TEXTS, unverified_action="block"
        ),
        "postprocessor": CiteVerifyPostprocessor(policy=OFFLINE, unverified_action="redact"),
        "evaluator": CiteVerifyEvaluator(policy=OFFLINE),
        "query-engine": engine(UNGROUNDED, unverified_action="redact"),
        "query-engine-block": engine(UNGROUNDED, unverified_action="block"),
    }


NAMES = [
    "guard-redact",
    "guard-block",
    "tool",
    "reference-tool",
    "output-parser",
    "postprocessor",
    "evaluator",
    "query-engine",
    "query-engine-block",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_copy_answers_as_the_original(name: str, index_path: Path) -> None:
    original = adapters(index_path)[name]
    expected = outcome(original)  # used first: its caches are filled
    for twin in (pickle.loads(pickle.dumps(original)), copy.deepcopy(original)):
        assert type(twin) is type(original)
        assert outcome(twin) == expected
    assert outcome(original) == expected


def test_a_used_guard_arrives_with_an_empty_context_cache(index_path: Path) -> None:
    guard = adapters(index_path)["guard-block"]
    outcome(guard)
    assert len(guard._verifier.context_cache) == len(TEXTS)
    twin = pickle.loads(pickle.dumps(guard))
    assert twin.context_cache is True
    assert len(twin._verifier.context_cache) == 0
    assert twin._verifier.context_cache is not guard._verifier.context_cache


def test_adapters_cross_a_spawned_process_boundary(
    index_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pickled LlamaIndex query engine carries tiktoken's encoding, which loads its BPE file
    # on arrival: from LlamaIndex's own copy (what get_tokenizer points tiktoken at while it
    # builds one), not from the network. The spawned workers inherit the variable.
    static = Path(llama_index.core.utils.__file__).parent / "_static" / "tiktoken_cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(static))
    made = adapters(index_path)
    expected = [outcome(a) for a in made.values()]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:  # one import of both
        answered = list(pool.map(outcome, made.values()))
    assert answered == expected
    assert any(item[0] == "blocked" for item in expected[1])  # the block crossed too
