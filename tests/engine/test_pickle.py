"""A verifier travels: pickle, copy.deepcopy, a spawned process pool and a Ray task.

What travels is the configuration (policy, options, the semantic scorer, the lookup cache's
file); locks, stemmers, HTTP clients and in-memory caches are rebuilt empty where the verifier
lands. Each copy must give the results of the original, to the byte of ``to_dict()``.
"""

from __future__ import annotations

import copy
import gc
import importlib.util
import json
import multiprocessing
import os
import pickle
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import httpx
import pytest

from citeverify_core import CitationVerifier, ContextCache, LookupCache
from citeverify_core.engine.semantic import SemanticTier
from citeverify_core.lookups.http import host_limiter
from citeverify_core.text.matching import _stems
from tests.robustness.test_lookups_hostile import DOI, WORK
from tests.support.loopback import Loopback, Reply

OFFLINE = {"extensions": {"lookups": {"enabled": False}}}
DOCS = [
    "The museum opens at nine in the morning. Entry costs nothing on Sundays.",
    "The gallery closed in 1990 and reopened in 2004 with 4,000 paintings.",
]
ANSWERS = [
    "The museum opens at nine [1].",
    "The museum opens at nine. Dragons guard the gate at night.",
    'The gallery reopened in 2004 with "4,000 paintings" [2].',
    "The galleries reopen with 4000 paintings. On Sundays admission is free.",
    "The museum was founded by Smith (Smith et al., 2020).",
]
POLICIES = {
    "default": OFFLINE,
    "recommended-stems": {
        **OFFLINE,
        "output_action": {"unverified_action": "block"},
        "extensions": {
            "lookups": {"enabled": False},
            "words": "stem",
            "stopwords": "ignore",
            "numbers": "value",
        },
    },
    "redact": {**OFFLINE, "output_action": {"unverified_action": "redact"}},
}
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the ray extra")


def results(verifier: CitationVerifier, answers: list[str], docs: list[str]) -> list[str]:
    """What a user compares: each result as JSON (module level: a spawned worker calls it)."""
    return [json.dumps(verifier.verify(a, docs).to_dict(), sort_keys=True) for a in answers]


def sunday_scorer(claim: str, passages: list[str]) -> float:
    """A semantic scorer defined at module level: it pickles by name."""
    return 0.95 if "Sundays" in claim and any("nothing" in p for p in passages) else 0.1


def verifier_state(verifier: CitationVerifier) -> dict[str, Any]:
    """What a verifier holds in memory (module level: a spawned worker calls it)."""
    cache = verifier.context_cache
    return {
        "context_cache": None if cache is None else (len(cache), cache.max_chars),
        "lookup_cache_path": str(verifier.lookups.cache.path),
        "pid": os.getpid(),
    }


def _copies(verifier: CitationVerifier) -> list[CitationVerifier]:
    return [pickle.loads(pickle.dumps(verifier)), copy.deepcopy(verifier)]


@pytest.mark.parametrize("name", list(POLICIES))
def test_a_copy_verifies_as_the_original(name: str) -> None:
    original = CitationVerifier(POLICIES[name], include_original=name == "redact")
    expected = results(original, ANSWERS, DOCS)
    for twin in _copies(original):
        assert twin.policy == original.policy
        assert twin.include_original == original.include_original
        assert results(twin, ANSWERS, DOCS) == expected
    assert results(original, ANSWERS, DOCS) == expected  # the original is untouched


def test_a_used_context_cache_arrives_empty_with_its_limits() -> None:
    original = CitationVerifier(OFFLINE, context_cache=ContextCache(max_chars=1_000_000))
    expected = results(original, ANSWERS, DOCS)
    assert original.context_cache is not None
    assert len(original.context_cache) == len(DOCS)
    for twin in _copies(original):
        cache = twin.context_cache
        assert isinstance(cache, ContextCache)
        assert cache is not original.context_cache
        assert (len(cache), cache.hits, cache.misses, cache.max_chars) == (0, 0, 0, 1_000_000)
        assert results(twin, ANSWERS, DOCS) == expected
        assert len(cache) == len(DOCS)  # and it works: the documents are cached again
        assert cache.hits > 0
    assert len(original.context_cache) == len(DOCS)


def test_verifiers_sharing_a_context_cache_still_share_one_after_pickling() -> None:
    shared = ContextCache()
    pair = [CitationVerifier(OFFLINE, context_cache=shared) for _ in range(2)]
    first, second = pickle.loads(pickle.dumps(pair))
    assert first.context_cache is second.context_cache
    assert first.context_cache is not shared


def test_a_semantic_scorer_travels_and_its_windows_are_rebuilt() -> None:
    policy = {**OFFLINE, "output_action": {"unverified_action": "block"}}
    original = CitationVerifier(policy, semantic=sunday_scorer)
    answer = "The museum opens at nine. On Sundays admission is free."
    expected = results(original, [answer], DOCS)
    assert '"tier": "semantic"' in expected[0]
    assert json.loads(expected[0])["verdict"] == "allow"  # the scorer passed the paraphrase
    for twin in _copies(original):
        tier = twin._semantic
        assert isinstance(tier, SemanticTier)
        assert tier.scorer is sunday_scorer  # a function travels by name
        assert tier.windows is not original._semantic.windows  # type: ignore[union-attr]
        assert results(twin, [answer], DOCS) == expected


class LockedScorer:
    """A scorer holding a lock: it cannot pickle itself, so its verifier cannot travel."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, claim: str, passages: list[str]) -> float:
        return 1.0


def test_a_scorer_that_does_not_pickle_stops_the_pickle_but_deepcopies() -> None:
    verifier = CitationVerifier(OFFLINE, semantic=LockedScorer())
    with pytest.raises(TypeError, match="lock"):
        pickle.dumps(verifier)
    with pytest.raises(TypeError, match="lock"):
        copy.deepcopy(verifier)  # deepcopy copies the scorer too; the lock refuses


def test_a_verifier_with_its_own_client_refuses_to_pickle_and_deepcopy_shares_it() -> None:
    async def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no lookup in this test")

    client = httpx.AsyncClient(transport=httpx.MockTransport(never))
    verifier = CitationVerifier(OFFLINE, client=client)
    with pytest.raises(TypeError, match=r"client=.*leave client unset"):
        pickle.dumps(verifier)
    twin = copy.deepcopy(verifier)
    assert twin.lookups.http.client is client
    assert twin.lookups.urls.http.client is client
    assert results(twin, ANSWERS, DOCS) == results(verifier, ANSWERS, DOCS)


def test_an_in_memory_lookup_cache_arrives_empty() -> None:
    cache = LookupCache(max_entries=7)
    cache.put("crossref", DOI, {"ok": True}, ttl=60)
    twin = pickle.loads(pickle.dumps(cache))
    assert twin.path is None
    assert twin.get("crossref", DOI) is None
    assert cache.get("crossref", DOI) == {"ok": True}
    twin.put("crossref", DOI, {"ok": False}, ttl=60)  # it works, with its own memory
    assert twin.get("crossref", DOI) == {"ok": False}


def test_process_wide_helpers_arrive_as_the_other_process_s_own() -> None:
    stems = _stems("english")
    assert pickle.loads(pickle.dumps(stems)) is stems  # one memo per language and process
    limiter = host_limiter("eutils.ncbi.nlm.nih.gov", 3.0)
    twin = pickle.loads(pickle.dumps(limiter))
    assert twin is not limiter
    assert twin.interval == limiter.interval


@pytest.fixture
def crossref() -> Iterator[Loopback]:
    with Loopback() as server:
        body = json.dumps({"message": WORK}).encode()
        server.routes[("GET", f"/works/{DOI}")] = Reply(
            200, body, {"Content-Type": "application/json"}
        )
        yield server


def _looked_up(server: Loopback, path: str) -> CitationVerifier:
    policy = {
        "require_sources": False,
        "extensions": {"lookups": {"crossref_base_url": server.url, "cache_path": path}},
    }
    return CitationVerifier(policy)


def test_a_lookup_cache_on_disk_travels_as_its_path(crossref: Loopback, tmp_path: Any) -> None:
    path = str(tmp_path / "lookups.sqlite")
    original = _looked_up(crossref, path)
    answer = f"See doi:{DOI}."
    original.verify(answer)
    assert crossref.calls(f"/works/{DOI}") == 1
    expected = results(original, [answer], [])  # the second answer comes from the cache
    assert json.loads(expected[0])["details"]["external_lookup"][0]["cached"] is True
    for twin in _copies(original):
        assert twin.lookups.cache is not original.lookups.cache
        assert twin.lookups.cache.path == path
        assert results(twin, [answer], []) == expected
    assert crossref.calls(f"/works/{DOI}") == 1  # read from the file, not asked again


def test_a_closed_lookup_cache_travels_without_its_file(tmp_path: Any) -> None:
    cache = LookupCache(tmp_path / "lookups.sqlite")
    cache.close()
    assert pickle.loads(pickle.dumps(cache)).path is None


def test_verifiers_cross_a_spawned_process_boundary(crossref: Loopback, tmp_path: Any) -> None:
    used = CitationVerifier(OFFLINE, context_cache=True)
    results(used, ANSWERS, DOCS)
    path = str(tmp_path / "lookups.sqlite")
    looked_up = _looked_up(crossref, path)
    doi_answer = f"See doi:{DOI}."
    looked_up.verify(doi_answer)
    verifiers = [
        *(CitationVerifier(p) for p in POLICIES.values()),
        used,
        CitationVerifier(OFFLINE, semantic=sunday_scorer),
    ]
    expected = [results(v, ANSWERS, DOCS) for v in verifiers]
    expected_doi = results(looked_up, [doi_answer], [])
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        answered = list(pool.map(results, verifiers, [ANSWERS] * 5, [DOCS] * 5))
        doi = pool.submit(results, looked_up, [doi_answer], []).result()
        state = pool.submit(verifier_state, used).result()
    assert answered == expected
    assert doi == expected_doi
    assert crossref.calls(f"/works/{DOI}") == 1  # the worker read the cache file
    assert state["pid"] != os.getpid()
    assert state["context_cache"] == (0, used.context_cache.max_chars)  # type: ignore[union-attr]


@needs_ray
# Ray 2.50 (the floor) leaves its daemons' /dev/null handles and Popen objects to the garbage
# collector: warnings from Ray's start, collected inside this test (below), not citeverify_core's.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_verifier_travels_to_a_ray_task(monkeypatch: pytest.MonkeyPatch) -> None:
    # As in tests/batch: Ray uses this interpreter as it is, and keeps quiet about GPUs.
    monkeypatch.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    monkeypatch.setenv("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    ray = pytest.importorskip("ray")
    verifier = CitationVerifier(POLICIES["recommended-stems"], context_cache=True)
    expected = results(verifier, ANSWERS, DOCS)

    def check(v: CitationVerifier, answers: list[str], docs: list[str]) -> list[str]:
        # Defined here, so that Ray pickles it by value (no import of this test module there).
        return [json.dumps(v.verify(a, docs).to_dict(), sort_keys=True) for a in answers]

    ray.init(
        num_cpus=1,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        task = ray.remote(check)
        assert ray.get(task.remote(verifier, ANSWERS, DOCS), timeout=300) == expected
    finally:
        ray.shutdown()
        gc.collect()  # Ray's leftovers warn here, not in whichever test runs next
