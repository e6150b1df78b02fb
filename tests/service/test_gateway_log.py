"""The gateway's policy packs by name, its decision log, and the service's keys at the gateway.

Real HTTP on loopback throughout: the service under uvicorn, an upstream ``Loopback`` server.
"""

import json
import logging
import os
import time

import httpx
import pytest
from typer.testing import CliRunner

from citeverify_core.cli.app import app as cli
from citeverify_core.service.gateway import UPSTREAM_KEY_ENV, GatewayConfig, HTTPUpstream
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.store import DECISIONS
from tests.support.loopback import Loopback, Reply
from tests.support.service import Service, bearer, build_index

MUSEUM = "The museum opens at nine."
UNRELATED = "Bats sleep by day and hunt insects at night."
CHAT = "/v1/chat/completions"


def _pack(name: str, overlap: float, action: str = "block") -> str:
    return f"""
pack: {{name: {name}, version: 1.0.0, enabled: true}}
policies: {{chain: [citation-verifier]}}
policy:
  citation-verifier:
    require_sources: true
    min_confidence: 0.0
    min_groundedness: 0.0
    rag_context: {{verify_against_context: true, min_context_overlap: {overlap}}}
    output_action: {{unverified_action: {action}}}
"""


def _request(answer_context: str, policy: str | None = None) -> dict:
    extension: dict = {"context_documents": [{"content": answer_context}]}
    if policy is not None:
        extension["policy"] = policy
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "When does the museum open?"}],
        "verdictan": extension,
    }


def _completion(text: str) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_index(tmp_path_factory.mktemp("index"))


@pytest.fixture
def packs_dir(tmp_path):
    folder = tmp_path / "packs"
    folder.mkdir()
    # The same answer against a half-matching context: strict blocks it, lenient allows it.
    (folder / "strict.yaml").write_text(_pack("strict", 0.95))
    (folder / "lenient.yaml").write_text(_pack("lenient", 0.1))
    return folder


@pytest.fixture
def upstream():
    with Loopback() as server:
        server.routes[("POST", "/v1/chat/completions")] = Reply(200, _completion(MUSEUM))
        yield server


def _service(tmp_path, index, upstream, packs, **options):
    config = GatewayConfig(HTTPUpstream(upstream.url + "/v1", timeout=5), packs)
    return Service(tmp_path / "jobs.sqlite", index, workers=False, gateway=config, **options)


HALF = "The museum opens at ten on Sundays."  # 4 of the 5 words of MUSEUM


def test_a_request_picks_its_policy_pack_by_name(tmp_path, index, upstream, packs_dir):
    packs = PolicyPacks(folder=packs_dir)
    with (
        _service(tmp_path, index, upstream, packs) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        strict = client.post(CHAT, json=_request(HALF, "strict"))
        lenient = client.post(CHAT, json=_request(HALF, "lenient"))
        unknown = client.post(CHAT, json=_request(HALF, "../../etc/passwd"))
        missing = client.post(CHAT, json=_request(HALF, "nosuch"))
        listed = client.get("/api/policies", headers=bearer(service.key()))
    assert strict.status_code == 400
    assert strict.json()["error"]["code"] == "content_policy_violation"
    assert lenient.status_code == 200
    assert lenient.json()["choices"][0]["message"]["content"] == MUSEUM
    for answer in (unknown, missing):
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "unknown_policy"
    assert "nosuch" in missing.json()["error"]["message"]
    # Which packs exist is not told to a caller without a key (GET /api/policies, with one).
    assert "lenient" not in missing.json()["error"]["message"]
    assert listed.json() == {
        "policies": [
            {"name": "default", "default": True},
            {"name": "lenient", "default": False},
            {"name": "strict", "default": False},
        ]
    }


def test_packs_reload_on_change_and_a_broken_pack_keeps_the_old_one(
    tmp_path, index, upstream, packs_dir, caplog
):
    packs = PolicyPacks(folder=packs_dir, check_interval=0)
    lenient = packs_dir / "lenient.yaml"
    with (
        _service(tmp_path, index, upstream, packs) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        assert client.post(CHAT, json=_request(HALF, "lenient")).status_code == 200
        lenient.write_text(_pack("lenient", 0.99))  # made strict: blocks from now on
        _touch_later(lenient)
        assert client.post(CHAT, json=_request(HALF, "lenient")).status_code == 400

        with caplog.at_level(logging.WARNING, logger="citeverify_core.service"):
            lenient.write_text("policy: [unclosed")
            _touch_later(lenient)
            kept = client.post(CHAT, json=_request(HALF, "lenient"))
        assert kept.status_code == 400  # the previous (strict) version still decides
        assert any("kept as it was" in r.getMessage() for r in caplog.records)

        (packs_dir / "added.yml").write_text(_pack("added", 0.1))
        assert client.post(CHAT, json=_request(HALF, "added")).status_code == 200
        (packs_dir / "strict.yaml").unlink()
        gone = client.post(CHAT, json=_request(HALF, "strict"))
    assert gone.status_code == 400 and gone.json()["error"]["code"] == "unknown_policy"


def _touch_later(path):
    """A new modification time even on file systems with coarse timestamps."""
    stamp = time.time_ns() + 2_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_a_broken_pack_at_start_is_a_clear_error(tmp_path):
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / "bad.yaml").write_text("policy: {citation-verifier: {min_confidence: lots}}")
    with pytest.raises(Exception, match="min_confidence"):
        PolicyPacks(folder=folder)
    result = CliRunner().invoke(
        cli, ["serve", "--policy-dir", str(tmp_path / "nowhere"), "--upstream", "fixture:x"]
    )
    assert result.exit_code == 2
    assert "not a folder" in result.output


def test_decisions_are_logged_per_key_without_content(tmp_path, index, upstream, packs_dir):
    packs = PolicyPacks(folder=packs_dir)
    with (
        _service(tmp_path, index, upstream, packs) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        mine, theirs = service.key(name="mine"), service.key(name="theirs")
        client.post(CHAT, json=_request(HALF, "strict"), headers=bearer(mine))
        client.post(CHAT, json=_request(HALF, "lenient"), headers=bearer(mine))
        client.post(CHAT, json=_request(HALF, "lenient"), headers={"X-Citeverify-Key": theirs})
        client.post(CHAT, json=_request(HALF, "lenient"))  # no key of ours: nobody's
        logged = client.get("/api/decisions", headers=bearer(mine)).json()
        blocks = client.get("/api/decisions?verdict=block", headers=bearer(mine)).json()
        by_policy = client.get("/api/decisions?policy=lenient", headers=bearer(mine)).json()
        other = client.get("/api/decisions", headers=bearer(theirs)).json()
        first = logged["decisions"][-1]
        one = client.get(f"/api/decisions/{first['id']}", headers=bearer(mine))
        not_theirs = client.get(f"/api/decisions/{first['id']}", headers=bearer(theirs))
        daily = client.get("/api/decisions/daily", headers=bearer(mine)).json()
        anonymous = client.get("/api/decisions")
        rows = service.store.engine.connect().execute(DECISIONS.select()).all()
    assert logged["pagination"]["total"] == 2
    newest, oldest = logged["decisions"]
    assert (oldest["policy"], oldest["verdict"], oldest["action"]) == ("strict", "block", "block")
    assert (newest["policy"], newest["verdict"], newest["action"]) == ("lenient", "allow", "allow")
    assert oldest["status"] == 400 and newest["status"] == 200
    assert oldest["reason_code"] == "citation.unverified"
    assert 0 < oldest["groundedness"] < 0.95 and oldest["claims"] == 1
    assert oldest["enforced"] and not oldest["stream"] and oldest["latency_ms"] > 0
    assert [d["id"] for d in blocks["decisions"]] == [oldest["id"]]
    assert [d["id"] for d in by_policy["decisions"]] == [newest["id"]]
    assert other["pagination"]["total"] == 1  # theirs, by X-Citeverify-Key
    assert one.status_code == 200 and one.json()["content"] is None
    assert not one.json()["has_content"]
    assert not_theirs.status_code == 404
    (today,) = daily["days"]
    assert (today["block"], today["allow"], today["total"]) == (1, 1, 2)
    assert anonymous.status_code == 401
    assert len(rows) == 4  # the request without a key is logged too, under no key
    assert all(row.content is None for row in rows)
    assert MUSEUM not in json.dumps([list(r) for r in rows])


def test_with_log_content_the_answer_and_documents_are_kept(tmp_path, index, upstream, packs_dir):
    packs = PolicyPacks(folder=packs_dir)
    with (
        _service(tmp_path, index, upstream, packs, log_content=True) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        key = service.key()
        client.post(CHAT, json=_request(HALF, "strict"), headers=bearer(key))
        (decision,) = client.get("/api/decisions", headers=bearer(key)).json()["decisions"]
        one = client.get(f"/api/decisions/{decision['id']}", headers=bearer(key)).json()
    assert decision["has_content"]
    assert one["content"] == {"answer": MUSEUM, "context_documents": [HALF]}
    # The full result too, as it was decided (the page shows it without checking again).
    assert (one["result"]["verdict"], one["result"]["action"]) == ("block", "block")
    assert one["result"]["details"]["claims"][0]["text"] == MUSEUM


def test_old_decisions_are_deleted_after_the_retention(tmp_path, index, upstream, packs_dir):
    packs = PolicyPacks(folder=packs_dir)
    with (
        _service(tmp_path, index, upstream, packs, log_retention_days=1) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        key = service.key()
        for _ in range(3):
            client.post(CHAT, json=_request(HALF, "lenient"), headers=bearer(key))
        assert client.get("/api/decisions", headers=bearer(key)).json()["pagination"]["total"] == 3
        with service.store.engine.begin() as db:  # two of them are two days old
            oldest = db.execute(DECISIONS.select().order_by(DECISIONS.c.id).limit(2)).all()
            for row in oldest:
                db.execute(
                    DECISIONS.update()
                    .where(DECISIONS.c.id == row.id)
                    .values(created_ts=row.created_ts - 2 * 86400)
                )
        log = service.app.state.decisions
        assert log.prune() == 2
        left = client.get("/api/decisions", headers=bearer(key)).json()
    assert left["pagination"]["total"] == 1


def test_a_passed_through_stream_is_logged_as_not_enforced(tmp_path, index, packs_dir):
    stream = b'data: {"choices":[{"index":0,"delta":{"content":"The museum"}}]}\n\ndata: [DONE]\n\n'
    with Loopback() as server:
        server.routes[("POST", "/v1/chat/completions")] = Reply(
            200, stream, headers={"Content-Type": "text/event-stream"}
        )
        with (
            _service(tmp_path, index, server, PolicyPacks(folder=packs_dir)) as service,
            httpx.Client(base_url=service.url, timeout=30) as client,
        ):
            key = service.key()
            answer = client.post(
                CHAT, json={**_request(HALF, "strict"), "stream": True}, headers=bearer(key)
            )
            (decision,) = client.get("/api/decisions", headers=bearer(key)).json()["decisions"]
    assert answer.headers["X-Citeverify-Enforced"] == "false"
    assert decision["enforced"] is False and decision["stream"] is True
    assert decision["verdict"] is None


def test_our_key_at_the_gateway_is_not_sent_upstream(tmp_path, index, upstream, monkeypatch):
    monkeypatch.setenv(UPSTREAM_KEY_ENV, "sk-upstream")
    with (
        _service(tmp_path, index, upstream, PolicyPacks()) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        key = service.key()
        revoked = service.key(name="old")
        service.store.revoke_key(revoked[:12])
        ours = client.post(CHAT, json=_request(MUSEUM), headers=bearer(key))
        theirs = client.post(CHAT, json=_request(MUSEUM), headers=bearer("sk-client"))
        none = client.post(CHAT, json=_request(MUSEUM))
        wrong = client.post(CHAT, json=_request(MUSEUM), headers=bearer("cvk_" + "x" * 43))
        gone = client.post(CHAT, json=_request(MUSEUM), headers=bearer(revoked))
    assert [a.status_code for a in (ours, theirs, none)] == [200, 200, 200]
    sent = [seen.headers.get("Authorization") for seen in upstream.seen]
    # Ours: the upstream key. Theirs: passed through. None: never the upstream key.
    assert sent == ["Bearer sk-upstream", "Bearer sk-client", None]
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
    assert gone.status_code == 403 and gone.json()["error"]["code"] == "revoked_api_key"
    assert len(upstream.seen) == 3  # a bad key of ours never reaches the model


def test_check_endpoint_marks_claims_and_is_logged(tmp_path, index, upstream):
    with (
        _service(tmp_path, index, upstream, PolicyPacks()) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        key = service.key()
        body = {
            "answer": f"{MUSEUM} It was built on Mars in 1850.",
            "context_documents": [MUSEUM, {"content": UNRELATED}],
        }
        checked = client.post("/api/check", json=body, headers=bearer(key))
        unknown = client.post("/api/check", json={**body, "policy": "nosuch"}, headers=bearer(key))
        wrong = client.post("/api/check", json={"answer": 3}, headers=bearer(key))
        logged = client.get("/api/decisions", headers=bearer(key)).json()["decisions"]
        anonymous = client.post("/api/check", json=body)
    assert checked.status_code == 200
    out = checked.json()
    claims = out["result"]["details"]["claims"]
    assert [c["verified"] for c in claims] == [True, False]
    assert out["policy"] == "default"
    assert [d["id"] for d in logged] == [out["decision_id"]]
    assert logged[0]["source"] == "page" and logged[0]["unsupported_claims"] == 1
    assert unknown.status_code == 400 and "nosuch" in unknown.json()["error"]["message"]
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "invalid_request"
    assert anonymous.status_code == 401


def test_split_endpoint_reads_lists_and_bibtex(tmp_path, index, upstream):
    bib = (
        "@string{nat = {Nature}}\n@comment{not an entry}\n"
        "@article{lecun2015, author = {LeCun, Yann and Bengio, Yoshua}, title = {Deep learning},"
        " journal = nat, year = {2015}, note = {mail me at a@b.org},"
        " abstract = {%s}}\n" % ("long " * 400)
    )
    with (
        _service(tmp_path, index, upstream, PolicyPacks()) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        key = service.key()
        lines = client.post(
            "/api/references/split",
            json={"text": "References\nKuhn, T. (1962). The structure.\n\n- 2 -\n"},
            headers=bearer(key),
        ).json()
        entries = client.post(
            "/api/references/split", json={"text": bib, "format": "bib"}, headers=bearer(key)
        ).json()
    assert lines["references"] == ["Kuhn, T. (1962). The structure."]
    assert [(s["line"], s["reason"]) for s in lines["skipped"]] == [
        (1, "a heading"),
        (4, "a page number"),
    ]
    (entry,) = entries["references"]
    assert entry.startswith("@article{lecun2015") and "Nature" in entry
    # Without the abstract and the note, so that it fits POST /api/verify-reference's limit.
    assert "long long" not in entry and "a@b.org" not in entry and len(entry) < 1200


def test_metrics_count_decisions_by_policy_and_action(tmp_path, index, upstream, packs_dir):
    with (
        _service(tmp_path, index, upstream, PolicyPacks(folder=packs_dir)) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        client.post(CHAT, json=_request(HALF, "strict"))
        client.post(CHAT, json=_request(HALF, "lenient"))
        client.post(CHAT, json=_request(HALF, "lenient"))
        metrics = client.get("/metrics").text
    assert 'citeverify_decisions_total{action="block",policy="strict",source="chat"} 1.0' in metrics
    assert (
        'citeverify_decisions_total{action="allow",policy="lenient",source="chat"} 2.0' in metrics
    )
    assert 'citeverify_decision_seconds_count{source="chat"} 3.0' in metrics
