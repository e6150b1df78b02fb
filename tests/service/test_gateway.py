"""The gateway shape (the guard API): Chat Completions and Responses API exchanges."""

import pytest

from citeverify_core import InputError
from citeverify_core.engine.exchange import verify_exchange

BLOCK = {"output_action": {"unverified_action": "block"}}
ANSWER = "The museum opens at nine."


def request(docs=("The museum opens at nine.",), **extra):
    return {
        "model": "gpt-4o-mini",
        "stream": False,
        "messages": [{"role": "user", "content": "When does the museum open?"}],
        "verdictan": {"context_documents": [{"content": d} for d in docs]},
        **extra,
    }


def chat(content):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def responses(*texts):
    return {
        "id": "resp_1",
        "object": "response",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": t, "annotations": []} for t in texts],
            },
        ],
    }


@pytest.mark.parametrize(
    "response",
    [
        pytest.param(chat(ANSWER), id="chat-string"),
        pytest.param(
            chat(
                [
                    {"type": "text", "text": "The museum "},
                    {"type": "text", "text": "opens at nine."},
                ]
            ),
            id="chat-parts",
        ),
        pytest.param(responses("The museum ", "opens at nine."), id="responses"),
    ],
)
def test_grounded_answer_is_allowed_in_every_shape(response):
    decision = verify_exchange(request(), response, BLOCK)
    assert (decision.verdict, decision.reason_code) == ("allow", "citation.verified")
    status, body = decision.to_http()
    assert status == 200
    assert body["verdictan"]["decision"]["verdict"] == "ALLOW"
    assert body["id"] == response["id"]


@pytest.mark.parametrize("response", [chat(ANSWER), responses(ANSWER)], ids=["chat", "responses"])
def test_ungrounded_answer_is_blocked_with_400(response):
    decision = verify_exchange(request(docs=["Penguins live in the south."]), response, BLOCK)
    status, body = decision.to_http()
    assert status == 400
    assert body["error"]["code"] == "content_policy_violation"
    assert body["verdictan"]["decision"]["verdict"] == "BLOCK"
    assert body["verdictan"]["decision"]["reason_code"] == "citation.unverified"
    assert body["verdictan"]["decision"]["details"]["verified"] is False
    assert "choices" not in body and "output" not in body  # the answer does not leak


def test_flag_allows_with_unverified_reason():
    decision = verify_exchange(request(docs=["Penguins."]), chat(ANSWER))
    assert (decision.verdict, decision.reason_code) == ("allow", "citation.unverified")
    assert decision.to_http()[0] == 200


def test_stream_requests_are_not_enforced():
    decision = verify_exchange(request(docs=["Penguins."], stream=True), chat(ANSWER), BLOCK)
    assert decision.verdict == "allow"
    assert decision.enforced is False
    assert decision.reason_code is None
    assert "not enforced" in decision.notes[0]


@pytest.mark.parametrize(
    "response",
    [chat(ANSWER + " Dragons guard it."), responses(ANSWER, " Dragons guard it.")],
    ids=["chat", "responses"],
)
def test_redact_rewrites_the_answer_in_the_response(response):
    decision = verify_exchange(
        request(), response, {"output_action": {"unverified_action": "redact"}}
    )
    status, body = decision.to_http()
    assert status == 200
    if "choices" in body:
        text = body["choices"][0]["message"]["content"]
    else:
        # Under redact the reasoning item is left out: the message is the only output item.
        assert [item["type"] for item in body["output"]] == ["message"]
        text = "".join(p["text"] for p in body["output"][0]["content"])
    assert text == "The museum opens at nine. [unverified claim removed]"
    assert response != body  # the caller's response is not mutated
    assert "Dragons" in str(response)


def test_no_context_documents_use_the_no_context_rule():
    req = request()
    del req["verdictan"]
    decision = verify_exchange(req, chat(ANSWER), BLOCK)
    assert decision.verdict == "block"
    assert (
        verify_exchange(req, chat(ANSWER), {**BLOCK, "require_sources": False}).verdict == "allow"
    )


def test_tool_call_without_content_is_an_empty_answer():
    response = chat(None)
    assert verify_exchange(request(), response, BLOCK).verdict == "allow"


def test_every_choice_is_checked_and_one_failing_choice_blocks():
    response = chat(ANSWER)
    response["choices"].append(chat("Dragons guard the museum at night.")["choices"][0])
    decision = verify_exchange(request(), response, BLOCK)
    assert "2 choices checked" in decision.notes
    assert decision.verdict == "block"
    status, body = decision.to_http()
    assert status == 400
    assert "Dragons" not in str(body)


def test_each_failing_choice_is_redacted():
    response = chat("The museum opens at nine. Dragons guard it.")
    response["choices"].append(chat("Dragons guard the museum at night.")["choices"][0])
    policy = {"output_action": {"unverified_action": "redact"}, "require_sources": False}
    status, body = verify_exchange(request(), response, policy).to_http()
    assert status == 200
    assert all("Dragons" not in c["message"]["content"] for c in body["choices"])
    assert body["choices"][0]["message"]["content"].startswith("The museum opens at nine.")


@pytest.mark.parametrize(
    ("req", "resp", "path"),
    [
        pytest.param([], chat(ANSWER), "request", id="request-not-object"),
        pytest.param(request(), "text", "response", id="response-not-object"),
        pytest.param(request(), {"id": "x"}, "response", id="unknown-shape"),
        pytest.param(request(), {"choices": []}, "response.choices", id="no-choices"),
        pytest.param(
            request(),
            {"choices": [{"message": {"content": 5}}]},
            "response.choices[0].message.content",
            id="bad-content",
        ),
        pytest.param(request(), {"output": {}}, "response.output", id="output-not-list"),
        pytest.param(
            {"verdictan": []}, chat(ANSWER), "request.verdictan", id="verdictan-not-object"
        ),
        pytest.param(
            {"verdictan": {"context_documents": {}}},
            chat(ANSWER),
            "request.verdictan.context_documents",
            id="docs-not-list",
        ),
        pytest.param(
            {"verdictan": {"context_documents": [{"text": "x"}]}},
            chat(ANSWER),
            "request.verdictan.context_documents[0].content",
            id="doc-no-content",
        ),
    ],
)
def test_malformed_exchanges(req, resp, path):
    with pytest.raises(InputError) as info:
        verify_exchange(req, resp)
    assert info.value.path == path


# --- what a block or a redaction hands back ------------------------------------------------------

SECRET = "Dragons guard the entrance with 97% certainty"
LEAKY = f'The museum opens at nine. {SECRET}. "Dragons guard it."'
STRICT_BLOCK = {
    "output_action": {"unverified_action": "block"},
    "extensions": {"strict_quotes": True, "strict_statistics": True, "lookups": {"enabled": False}},
}


def leaked(body):
    text = str(body)
    return [w for w in ("Dragons", "dragons", "guard", "97") if w in text]


@pytest.mark.parametrize("policy", [BLOCK, STRICT_BLOCK], ids=["block", "block-strict"])
def test_a_block_body_carries_verdict_reason_and_counts_not_the_answer(policy):
    decision = verify_exchange(request(), chat(LEAKY), policy)
    status, body = decision.to_http()
    assert status == 400
    assert body["error"]["code"] == "content_policy_violation"
    assert leaked(body) == []
    assert decision.response == {}  # nothing that a server could forward by mistake
    details = body["verdictan"]["decision"]["details"]
    assert details["verified"] is False
    assert details["claim_count"] == 3
    assert details["unverified_claim_count"] >= 1
    assert "include_verification_report" in details["withheld"]


def test_a_block_body_has_the_report_when_the_policy_asks_for_it():
    policy = {**BLOCK, "response": {"include_verification_report": True}}
    status, body = verify_exchange(request(), chat(LEAKY), policy).to_http()
    assert status == 400
    texts = [c["text"] for c in body["verdictan"]["decision"]["details"]["unverified_claims"]]
    assert any(SECRET in t for t in texts)


def test_a_redacted_answer_and_its_decision_do_not_carry_the_removed_text():
    policy = {"output_action": {"unverified_action": "redact"}, "require_sources": False}
    status, body = verify_exchange(request(), chat(LEAKY), policy).to_http()
    assert status == 200
    assert body["choices"][0]["message"]["content"].startswith("The museum opens at nine.")
    assert leaked(body) == []
    claims = body["verdictan"]["decision"]["details"]["claims"]
    assert [c["span"] for c in claims] == [[0, 25], [26, 72], [73, 92]]


def test_extract_answers_reads_every_choice_and_the_responses_api_as_one():
    from citeverify_core.engine.exchange import extract_answers

    two = chat("First.")
    two["choices"].append(chat([{"type": "text", "text": "Second."}])["choices"][0])
    assert extract_answers(two) == ["First.", "Second."]
    assert extract_answers(responses("One ", "answer.")) == ["One answer."]
    too_many = chat("x")
    too_many["choices"] *= 17
    with pytest.raises(InputError, match="at most 16"):
        extract_answers(too_many)
