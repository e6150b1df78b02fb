"""CiteVerifyGuard through LangChain's serialization: ``dumpd``/``dumps`` then ``loads`` (issue 11).

The guard says it is serializable (``is_lc_serializable``), so a chain holding it can be saved and
loaded. The policy is written as data; credentials only as secret references.
"""

import inspect
import json

import pytest
from langchain_core.documents import Document
from langchain_core.load import dumpd, dumps, load, loads
from langchain_core.runnables import RunnablePassthrough, RunnableSequence

from citeverify_core import PolicyConfig
from langchain_citeverify import CitationBlockedError, CiteVerifyGuard

pytestmark = pytest.mark.filterwarnings(
    "ignore::langchain_core._api.LangChainBetaWarning"  # load/loads are marked beta
)

DOCS = [
    Document(page_content="The museum opens at nine and closes at five on weekdays."),
    Document(page_content="Tickets cost ten euros for adults; children enter free."),
]
GROUNDED = "The museum opens at nine and closes at five. Tickets cost ten euros for adults."
UNGROUNDED = "The museum opens at nine. Dragons guard the museum at night and eat visitors."
OFFLINE = {"extensions": {"lookups": {"enabled": False}}}


def revive(text, *, allowed=(CiteVerifyGuard,), **kwargs):
    """``loads`` as a user must call it for a class outside LangChain's own namespaces."""
    if "allowed_objects" in inspect.signature(loads).parameters:  # langchain-core >= 1.x
        kwargs["allowed_objects"] = list(allowed)
    return loads(text, valid_namespaces=["langchain_citeverify"], **kwargs)


def outcome(guard, answer):
    """What a guard does with an answer: its output's verification, or the block's result."""
    try:
        return guard.invoke({"output": answer, "sources": DOCS})["check"]
    except CitationBlockedError as error:
        return ("blocked", error.result)


@pytest.mark.parametrize("action", ["block", "redact", "flag"])
def test_round_trip_gives_an_equal_policy_and_the_same_behaviour(action):
    guard = CiteVerifyGuard(
        policy=OFFLINE,
        unverified_action=action,
        min_groundedness=0.6,
        strict_quotes=True,
        answer_key="output",
        context_key="sources",
        output_key="check",
        include_original=True,
        context_cache=False,
    )
    text = dumps(guard)
    assert "not_implemented" not in text  # the policy is data, not an opaque repr
    loaded = revive(text)

    assert isinstance(loaded, CiteVerifyGuard)
    assert loaded.policy == guard.policy
    assert loaded.policy.output_action.unverified_action == action
    assert loaded.policy.min_groundedness == 0.6
    assert loaded.policy.extensions.strict_quotes is True
    assert loaded.policy.extensions.lookups.enabled is False
    fields = ("answer_key", "context_key", "output_key", "include_original", "context_cache")
    assert [getattr(loaded, f) for f in fields] == [getattr(guard, f) for f in fields]
    for answer in (GROUNDED, UNGROUNDED):
        assert outcome(loaded, answer) == outcome(guard, answer)


def test_dumpd_is_json_and_load_accepts_it():
    guard = CiteVerifyGuard(policy=OFFLINE, unverified_action="block")
    data = dumpd(guard)
    assert json.loads(json.dumps(data)) == data
    assert data["id"] == ["langchain_citeverify", "runnables", "CiteVerifyGuard"]
    assert data["kwargs"]["policy"] == {
        "output_action": {"unverified_action": "block"},
        "extensions": {"lookups": {"enabled": False}},
    }
    kwargs = {}
    if "allowed_objects" in inspect.signature(load).parameters:
        kwargs["allowed_objects"] = [CiteVerifyGuard]
    loaded = load(data, valid_namespaces=["langchain_citeverify"], **kwargs)
    assert loaded.policy == guard.policy
    with pytest.raises(CitationBlockedError):
        loaded.invoke({"answer": UNGROUNDED, "context": DOCS})


def test_a_policy_pack_is_written_as_its_data(seed_policy_path):
    guard = CiteVerifyGuard(policy=seed_policy_path)
    text = dumps(guard)
    assert str(seed_policy_path) not in text  # the loaded guard needs no file
    loaded = revive(text)
    assert loaded.policy == guard.policy == PolicyConfig.from_yaml(seed_policy_path)


def test_the_default_guard_round_trips():
    guard = CiteVerifyGuard()
    loaded = revive(dumps(guard))
    assert loaded.policy == PolicyConfig()
    assert loaded.name == "CiteVerifyGuard"


def test_a_chain_holding_the_guard_round_trips():
    chain = RunnablePassthrough() | CiteVerifyGuard(policy=OFFLINE, unverified_action="redact")
    loaded = revive(dumps(chain), allowed=(RunnableSequence, RunnablePassthrough, CiteVerifyGuard))
    assert isinstance(loaded.last, CiteVerifyGuard)
    assert loaded.last.policy == chain.last.policy
    out = loaded.invoke({"answer": UNGROUNDED, "context": DOCS})
    assert out["answer"] == "The museum opens at nine. [unverified claim removed]"


CREDENTIALS = {
    "ncbi_api_key": ("NCBI_API_KEY", "ncbi-secret-123"),
    "semanticscholar_api_key": ("SEMANTIC_SCHOLAR_API_KEY", "s2-secret-456"),
    "courtlistener_token": ("COURTLISTENER_TOKEN", "cl-secret-789"),
}


def credentialed_guard():
    lookups = {field: value for field, (_, value) in CREDENTIALS.items()}
    return CiteVerifyGuard(policy={"extensions": {"lookups": {"enabled": False, **lookups}}})


def test_credentials_are_written_as_secret_references_not_values():
    text = dumps(credentialed_guard())
    for field, (env, value) in CREDENTIALS.items():
        assert value not in text, field
        assert json.loads(text)["kwargs"][field] == {"lc": 1, "type": "secret", "id": [env]}


def test_credentials_come_back_from_the_secrets_map():
    guard = credentialed_guard()
    secrets = dict(CREDENTIALS.values())
    loaded = revive(dumps(guard), secrets_map=secrets)
    assert loaded.policy == guard.policy
    for field, (_, value) in CREDENTIALS.items():
        assert getattr(loaded.policy.extensions.lookups, field) == value


def test_without_the_secrets_the_loaded_guard_has_no_credentials():
    missing = None
    try:
        loaded = revive(dumps(credentialed_guard()))
    except KeyError as error:  # early langchain-core 0.3.x insists on every secret
        missing = str(error)
    if missing is not None:
        assert "NCBI_API_KEY" in missing
        return
    for field in CREDENTIALS:
        assert getattr(loaded.policy.extensions.lookups, field) is None
    assert loaded.policy.extensions.lookups.enabled is False


def test_credentials_as_keyword_options():
    guard = CiteVerifyGuard(policy=OFFLINE, ncbi_api_key="k")
    assert guard.policy.extensions.lookups.ncbi_api_key == "k"
    assert guard.policy.extensions.lookups.enabled is False
