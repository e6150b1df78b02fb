"""Bad input gets a clear error; huge and odd input still works."""

import pytest

from citeverify_core import CitationVerifier, CiteVerifyError, ContextCache, InputError, PolicyError
from citeverify_core.engine.verifier import MAX_ANSWER_CHARS


@pytest.fixture
def verifier():
    return CitationVerifier({"require_sources": False})


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        pytest.param(None, "got NoneType", id="none"),
        pytest.param(b"bytes", "got bytes (decode it first)", id="bytes"),
        pytest.param(42, "got int", id="int"),
        pytest.param(["a"], "got list", id="list"),
    ],
)
def test_answer_must_be_a_string(verifier, answer, fragment):
    with pytest.raises(InputError, match=fragment.replace("(", r"\(").replace(")", r"\)")) as info:
        verifier.verify(answer, ["doc"])
    assert info.value.path == "answer"


@pytest.mark.parametrize(
    ("docs", "path"),
    [
        pytest.param("just a string", "context_documents", id="bare-string"),
        pytest.param({"content": "x"}, "context_documents", id="bare-mapping"),
        pytest.param([{"text": "x"}], "context_documents[0].content", id="no-content"),
        pytest.param(["ok", {"content": None}], "context_documents[1].content", id="null-content"),
        pytest.param(["ok", 3], "context_documents[1]", id="number"),
        pytest.param(5, "context_documents", id="not-iterable"),
    ],
)
def test_documents_need_text(verifier, docs, path):
    with pytest.raises(InputError) as info:
        verifier.verify("answer", docs)
    assert info.value.path == path
    assert isinstance(info.value, CiteVerifyError)


def test_documents_may_be_any_iterable_and_mix_shapes(verifier):
    docs = (d for d in ["The museum", {"content": "opens at nine", "title": "ignored"}])
    assert verifier.verify("The museum opens at nine.", docs).details.groundedness == 1.0


def test_documents_may_be_dumped_langchain_documents(verifier):
    docs = [{"page_content": "The museum opens at nine.", "metadata": {}, "type": "Document"}]
    assert verifier.verify("The museum opens at nine.", docs).details.groundedness == 1.0
    with pytest.raises(InputError, match=r"context_documents\[0\]\.page_content must be a string"):
        verifier.verify("x", [{"page_content": 3}])


def test_empty_documents_are_allowed(verifier):
    r = verifier.verify("The museum opens.", ["", "   "])
    assert r.details.groundedness == 0.0


def test_answer_above_the_limit_is_refused(verifier):
    with pytest.raises(InputError, match="limit"):
        verifier.verify("a" * (MAX_ANSWER_CHARS + 1), [])


def test_huge_context_and_long_answer_work(verifier):
    doc = "word " * 2_000_000  # 10 MB
    answer = "word. " * 10_000
    r = verifier.verify(answer, [doc])
    assert r.details.groundedness == 1.0
    assert len(r.details.claims) == 10_000


def test_odd_characters(verifier):
    answer = "Null\x00byte and \ud800 lone surrogate? Emoji 🎉 party!"
    r = verifier.verify(answer, ["null byte and lone surrogate emoji party"])
    assert r.details.groundedness == pytest.approx(7 / 7)


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: CitationVerifier(context_cache="yes"), id="context-cache-str"),
        pytest.param(lambda: ContextCache(max_documents=0), id="cache-zero"),
        pytest.param(lambda: ContextCache(max_chars="5"), id="cache-str"),
    ],
)
def test_wrong_options_are_input_errors(build):
    with pytest.raises(InputError):
        build()


def test_an_answer_with_too_many_claims_is_refused_before_any_scoring():
    from citeverify_core.engine.verifier import MAX_CLAIMS

    answer = "a\n" * (MAX_CLAIMS + 1)
    with pytest.raises(InputError, match="claims") as info:
        CitationVerifier().verify(answer, ["a"])
    assert info.value.path == "answer"
    assert CitationVerifier().verify("a\n" * MAX_CLAIMS, ["a"]).verified  # the limit itself is fine


def test_a_long_redaction_marker_is_a_policy_error():
    with pytest.raises(PolicyError, match="redaction_marker"):
        CitationVerifier({"extensions": {"redaction_marker": "X" * 201}})


def test_more_context_documents_than_the_limit_is_an_input_error():
    from citeverify_core.engine.context import MAX_DOCUMENTS

    endless = ("doc" for _ in iter(int, 1))  # a generator that never ends is not read to its end
    with pytest.raises(InputError, match="more than"):
        CitationVerifier().verify("The museum opens.", endless)
    assert CitationVerifier().verify("doc", ["doc"] * MAX_DOCUMENTS).verified
