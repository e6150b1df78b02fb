"""Lookups and sources against hostile answers and hostile services.

Every case runs over real HTTP on 127.0.0.1 (``tests/loopback.py``): huge and endless bodies,
compression bombs, JSON nested 200,000 deep, numbers JSON cannot hold, bytes that are not UTF-8,
broken HTTP, URLs and redirects httpx cannot parse, addresses that smuggle loopback, identifiers
that climb out of their path. The rule under test: a lookup or a source turns every one of them
into data (a failed record, a note), never an exception, within bounded time and memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import ipaddress
import json
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from citeverify_core import CitationVerifier, InputError
from citeverify_core.lookups.cache import LookupCache
from citeverify_core.lookups.failures import LookupFailure
from citeverify_core.lookups.guard import forbidden
from citeverify_core.lookups.http import decode_json, quote_path
from citeverify_core.lookups.resolve import Lookups, Target
from citeverify_core.policy.settings import LookupSettings
from citeverify_core.references.model import ParsedReference
from citeverify_core.references.sources import make_sources
from tests.support.loopback import Loopback, Reply

DOI = "10.1371/journal.pone.0033693"
WORK = {
    "DOI": DOI,
    "type": "journal-article",
    "title": ["Methylphenidate Exposure Induces Dopamine Neuron Loss"],
    "author": [{"given": "Shankar", "family": "Sadasivan"}],
    "container-title": ["PLoS ONE"],
    "issued": {"date-parts": [[2012, 3, 21]]},
}
ROOT = Path(__file__).resolve().parents[2]
MB = 1 << 20


@pytest.fixture
def server():
    with Loopback() as s:
        yield s


def settings(server, **extra):
    return {
        "crossref_base_url": server.url,
        "openalex_base_url": server.url + "/oa",
        "ncbi_base_url": server.url + "/eutils",
        "semanticscholar_base_url": server.url + "/s2",
        "courtlistener_base_url": server.url,
        "url_allow_hosts": ["127.0.0.1"],
        # Generous: on a loaded 2-core CI machine a loopback answer has taken over 2 s (a
        # lookup_failed where "verified" was due). Tests of timeouts set their own.
        "timeout": 10.0,
        **extra,
    }


def policy(server, **extra):
    return {"require_sources": False, "extensions": {"lookups": settings(server, **extra)}}


def lookup(server, target: Target, **extra):
    """One lookup through Lookups.run, on a fresh client (no verifier around it)."""
    lookups = Lookups(LookupSettings(**settings(server, **extra)))
    (record,) = asyncio.run(lookups.run([target]))
    return record


def json_body(text: str | bytes) -> Reply:
    data = text.encode() if isinstance(text, str) else text
    return Reply(200, data, {"Content-Type": "application/json"})


def zeros(total: int, block: int = MB, sent: list[int] | None = None) -> Iterator[bytes]:
    chunk = b"0" * block
    for _ in range(total // block):
        if sent is not None:
            sent.append(block)
        yield chunk


def bomb(total: int, wbits: int = 31, sent: list[int] | None = None) -> Iterator[bytes]:
    """``total`` spaces compressed while they are sent (1 GiB: about 1 MB on the wire)."""
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = b" " * MB
    for _ in range(total // MB):
        if sent is not None:
            sent.append(MB)
        if out := c.compress(block):
            yield out
    yield c.flush()


def compressed(data: bytes, wbits: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return c.compress(data) + c.flush()


# --- answers that must fail, with the reason they fail for ------------------------------------

SMALL = 4096  # max_response_bytes where bodies just over it keep a test cheap
LIMIT = 1_000_000  # where the body must be large for another reason (200,000 levels deep)
HOSTILE_CROSSREF = [
    pytest.param(json_body(b" " * (LIMIT + 1)), "larger than 1000000 bytes", id="over-limit"),
    pytest.param(
        Reply(200, stream=lambda: iter([b"[" + b" " * 100_000] * 10)),
        "response larger than 1000000 bytes",
        id="over-limit-chunked",
    ),
    pytest.param(
        Reply(200, stream=lambda: bomb(64 * MB), headers={"Content-Encoding": "gzip"}),
        "response larger than 1000000 bytes",
        id="gzip-bomb",
    ),
    pytest.param(
        Reply(200, stream=lambda: bomb(64 * MB, 15), headers={"Content-Encoding": "deflate"}),
        "response larger than 1000000 bytes",
        id="deflate-bomb",
    ),
    pytest.param(
        Reply(200, stream=lambda: bomb(64 * MB, -15), headers={"Content-Encoding": "deflate"}),
        "response larger than 1000000 bytes",
        id="raw-deflate-bomb",
    ),
    pytest.param(
        Reply(200, b"(\xb5/\xfd", {"Content-Encoding": "zstd"}),
        "unsupported content encoding 'zstd'",
        id="zstd-not-asked-for",
    ),
    pytest.param(
        Reply(200, b"\x1f\x8bnot gzip at all", {"Content-Encoding": "gzip"}),
        "malformed compressed response",
        id="corrupt-gzip",
    ),
    pytest.param(
        json_body("[" * 200_000 + "]" * 200_000),
        "nested deeper than 64 levels",
        id="deep-arrays",
    ),
    pytest.param(
        json_body('{"a":' * 100_000 + "1" + "}" * 100_000),
        "nested deeper than 64 levels",
        id="deep-objects",
    ),
    pytest.param(json_body("[" * 200_000), "nested deeper than 64", id="deep-unterminated"),
    pytest.param(
        Reply(
            200,
            gzip.compress(("[" * 200_000 + "]" * 200_000).encode()),
            {"Content-Encoding": "gzip"},
        ),
        "nested deeper than 64 levels",
        id="deep-gzipped",
    ),
    pytest.param(
        json_body('{"message": {"DOI": "x", "issued": {"date-parts": [[1e400]]}}}'),
        "number out of range: 1e400",
        id="1e400",
    ),
    pytest.param(
        json_body('{"message": {"DOI": "x", "score": NaN}}'),
        "NaN is not a JSON number",
        id="nan",
    ),
    pytest.param(
        json_body('{"message": {"DOI": "x", "volume": -Infinity}}'),
        "-Infinity is not a JSON number",
        id="infinity",
    ),
    pytest.param(
        json_body('{"message": {"DOI": "x", "issued": {"date-parts": [[' + "9" * 5000 + "]]}}}"),
        "integer out of range",
        id="5000-digit-int",
    ),
    pytest.param(
        json_body('{"message": {"DOI": "x", "page": 9223372036854775808}}'),
        "integer out of range",
        id="int-over-64-bits",
    ),
    pytest.param(
        json_body(b'{"message": {"DOI": "x", "title": ["\xff\xfe bad"]}}'),
        "not UTF-8 at byte 36",
        id="invalid-utf8",
    ),
    pytest.param(json_body(b""), "malformed JSON", id="empty"),
    pytest.param(json_body('{"message": {"DOI": "x"}} trailing'), "malformed JSON", id="trailing"),
    pytest.param(json_body('"a string"'), "no message object", id="string"),
    pytest.param(json_body('{"message": [1, 2]}'), "no message object", id="message-list"),
    pytest.param(json_body('{"message": {"x": 1}}'), "not a work", id="message-not-a-work"),
]


@pytest.mark.parametrize(("reply", "fragment"), HOSTILE_CROSSREF)
def test_hostile_crossref_answers_are_failed_lookups(server, reply, fragment):
    server.routes[("GET", f"/works/{DOI}")] = reply
    verifier = CitationVerifier(policy(server, max_response_bytes=LIMIT))
    start = time.monotonic()
    result = verifier.verify(f"Dopamine neuron loss in mice (doi:{DOI}).")
    assert time.monotonic() - start < 2.0
    (c,) = result.details.citations
    assert c.status == "lookup_failed"
    assert fragment in c.reason
    assert result.verdict == "allow"
    json.dumps(result.to_dict())  # what a service would send back: serializable


SHAPES = [
    pytest.param({"title": {"a": 1}}, id="title-dict"),
    pytest.param({"title": [None, 5]}, id="title-list-of-junk"),
    pytest.param({"author": ["x", 1, None, {"family": ["y"]}]}, id="authors-not-dicts"),
    pytest.param({"author": {"family": "x"}}, id="authors-dict"),
    pytest.param({"issued": {"date-parts": [["2012"]]}}, id="year-string"),
    pytest.param({"issued": {"date-parts": "2012"}}, id="date-parts-string"),
    pytest.param({"issued": {"date-parts": [[99999999999]]}}, id="year-huge"),
    pytest.param({"issued": {"date-parts": [[-1.5e300]]}}, id="year-float"),
    pytest.param({"issued": [2012]}, id="issued-list"),
    pytest.param({"container-title": "PLoS"}, id="container-string"),
    pytest.param({"DOI": 5, "type": {"x": 1}}, id="doi-number"),
    pytest.param({"title": ["\ud800 lone surrogate"]}, id="lone-surrogate"),
]


@pytest.mark.parametrize("fields", SHAPES)
def test_crossref_fields_of_any_type_never_raise(server, fields):
    # The raw bytes go over the wire: json.dumps escapes the lone surrogate as "\ud800".
    server.routes[("GET", f"/works/{DOI}")] = json_body(json.dumps({"message": {**WORK, **fields}}))
    result = CitationVerifier(policy(server)).verify(f"Dopamine neuron loss in mice (doi:{DOI}).")
    (c,) = result.details.citations
    assert c.status in {"verified", "mismatch", "lookup_failed"}
    record = result.details.external_lookup[0]
    meta = record.metadata
    assert all(isinstance(meta.get(k), str | None) for k in ("title", "container", "type", "doi"))
    assert all(isinstance(a, str) for a in meta.get("authors", []))
    assert meta.get("year") is None or isinstance(meta["year"], int)
    json.dumps(result.to_dict())


def test_a_lone_surrogate_escape_becomes_a_replacement_character(server):
    body = json.dumps({"message": {**WORK, "title": ["Dopamine \ud800 loss"]}})
    assert "\\ud800" in body
    server.routes[("GET", f"/works/{DOI}")] = json_body(body)
    result = CitationVerifier(policy(server)).verify(f"Dopamine neuron loss in mice (doi:{DOI}).")
    assert result.details.external_lookup[0].metadata["title"] == "Dopamine \ufffd loss"
    json.dumps(result.to_dict())


def test_a_body_just_under_the_limit_is_read(server):
    body = json.dumps({"message": {**WORK, "padding": ""}})
    body = body.replace('"padding": ""', '"padding": "' + "x" * (SMALL - len(body)) + '"')
    assert len(body) == SMALL
    server.routes[("GET", f"/works/{DOI}")] = json_body(body)
    result = CitationVerifier(policy(server, max_response_bytes=SMALL)).verify(f"doi:{DOI}")
    assert result.details.citations[0].status == "verified"


def test_a_gzipped_answer_within_the_limit_is_read(server):
    body = gzip.compress(json.dumps({"message": WORK}).encode())
    server.routes[("GET", f"/works/{DOI}")] = Reply(
        200, body, {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    )
    result = CitationVerifier(policy(server)).verify(f"doi:{DOI}")
    assert result.details.citations[0].status == "verified"
    assert server.seen[0].headers["Accept-Encoding"] == "gzip, deflate"  # never zstd or br


def test_a_slow_trickle_within_the_call_timeout_is_read(server):
    body = json.dumps({"message": {**WORK, "padding": "x" * 8000}})  # 9 chunks of 1 KB
    server.routes[("GET", f"/works/{DOI}")] = Reply(
        200, body, {"Content-Type": "application/json"}, trickle=0.05
    )
    start = time.monotonic()
    result = CitationVerifier(policy(server, timeout=3.0)).verify(f"doi:{DOI}")
    assert time.monotonic() - start >= 0.4
    assert result.details.citations[0].status == "verified"


def test_an_endless_trickle_is_cut_by_the_call_timeout(server):
    server.routes[("GET", f"/works/{DOI}")] = Reply(
        200, stream=lambda: zeros(1000 * 1024, 1024), trickle=0.05
    )
    start = time.monotonic()
    result = CitationVerifier(policy(server, timeout=0.5)).verify(f"doi:{DOI}")
    assert time.monotonic() - start < 1.5
    assert "timed out after 0.5s" in result.details.citations[0].reason


def test_a_200_mb_body_is_cut_at_the_limit(server):
    sent: list[int] = []
    server.routes[("GET", f"/works/{DOI}")] = Reply(
        200, stream=lambda: zeros(200 * MB, sent=sent), length=200 * MB
    )
    start = time.monotonic()
    result = CitationVerifier(policy(server, timeout=10.0)).verify(f"doi:{DOI}")
    elapsed = time.monotonic() - start
    assert "response larger than 8000000 bytes" in result.details.citations[0].reason
    assert elapsed < 2.0
    time.sleep(0.2)  # the server notices the closed connection at its next write
    assert sum(sent) < 40 * MB  # the client hung up: the server stopped generating


# --- memory, measured in a child process (peak RSS is per process) ------------------------------

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    from citeverify_core import CitationVerifier

    base = sys.argv[1]
    verifier = CitationVerifier({"require_sources": False, "extensions": {"lookups": {
        "crossref_base_url": base, "timeout": 20.0, "deadline": 30.0}}})
    verifier.verify("warm up: doi:10.1234/warm")  # imports, the client, the loop
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    result = verifier.verify("the big one: doi:10.1234/big")
    seconds = time.monotonic() - start
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(json.dumps({"seconds": seconds, "grown_mb": grown / 1024,
                      "reason": result.details.citations[0].reason}))
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="peak RSS comes from resource (Unix)")
@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            lambda sent: Reply(200, stream=lambda: zeros(1 << 30, sent=sent), length=1 << 30),
            id="1-GiB-body",
        ),
        pytest.param(
            lambda sent: Reply(
                200, stream=lambda: bomb(1 << 30, sent=sent), headers={"Content-Encoding": "gzip"}
            ),
            id="1-MB-gzip-expanding-to-1-GiB",
        ),
    ],
)
def test_huge_bodies_cost_the_limit_not_the_body(server, reply):
    # Read whole, a 1 GiB body cost 2.1 GB and 9 s, the gzip bomb 0.7 GB until the timeout.
    sent: list[int] = []
    server.routes[("GET", "/works/10.1234/big")] = reply(sent)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, server.url],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=ROOT,
    )
    report = json.loads(out.stdout)
    assert "response larger than 8000000 bytes" in report["reason"]
    assert report["seconds"] < 3.0
    assert report["grown_mb"] < 80  # the limit is 8 MB; the body is 1 GiB
    assert sum(sent) < 100 * MB


# --- decode_json: bounds, and time linear in the body --------------------------------------------


def nested(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(b'{"a": [1, 2.5, "x"]}', {"a": [1, 2.5, "x"]}, id="plain"),
        pytest.param(b'\xef\xbb\xbf{"a": 1}', {"a": 1}, id="utf8-bom"),
        pytest.param(b'["[[[[", "}}}", "\\"[["]', ["[[[[", "}}}", '"[['], id="brackets-in-strings"),
        pytest.param(("[" * 64 + "]" * 64).encode(), nested(63), id="64-deep"),
        pytest.param(b'["\\ud83d\\ude00", "\\udc00"]', ["\U0001f600", "\ufffd"], id="surrogates"),
        pytest.param(b"[-9223372036854775808]", [-(1 << 63)], id="int64-min"),
        pytest.param(b"[1e308]", [1e308], id="large-finite-float"),
    ],
)
def test_decode_json_accepts(body, expected):
    assert decode_json(body) == expected


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param(("[" * 65 + "]" * 65).encode(), "nested deeper than 64", id="65-deep"),
        pytest.param(("[{" * 40 + "}]" * 40).encode(), "nested deeper than 64", id="80-mixed"),
        pytest.param(b"[[}]", "Expecting value", id="mismatched"),  # json.loads' own error
        pytest.param(b"]]]]" + b"[" * 66, "Expecting value", id="closing-first"),
        pytest.param(b"[" * 65, "nested deeper than 64", id="65-open"),
        pytest.param(b"[1e400]", "number out of range", id="1e400"),
        pytest.param(b"[-1e400]", "number out of range", id="minus-1e400"),
        pytest.param(b"[" + b"1" * 5000 + b"]", "integer out of range", id="5000-digits"),
        pytest.param(b"[Infinity]", "not a JSON number", id="Infinity"),
    ],
)
def test_decode_json_refuses(body, fragment):
    with pytest.raises((LookupFailure, ValueError), match=fragment):
        decode_json(body)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'"' + b'\\"' * 4_000_000, id="unterminated-escaped-quotes"),
        pytest.param(b"[" * 63 + b"]" * 63, id="63-deep-once"),
        pytest.param((b"[" * 63 + b"]" * 63) * 60_000, id="63-deep-60000-times"),
        pytest.param(b'["' + b"\\u" * 4_000_000 + b'"]', id="8-MB-of-escapes"),
    ],
)
def test_the_depth_check_is_linear(body):
    start = time.monotonic()
    with contextlib.suppress(LookupFailure, ValueError):  # the time is under test, not the outcome
        decode_json(body)
    assert time.monotonic() - start < 3.0


# --- URLs: unparsable, smuggled, redirected ---------------------------------------------------

BAD_URLS = [
    pytest.param("http://a:b:c/", "invalid URL", id="two-ports"),
    pytest.param("http://[::1/x", "invalid URL", id="open-bracket"),
    pytest.param("http://0177.0.0.1:{port}/secret", "invalid URL", id="octal-ipv4"),
    pytest.param("http://127.1:{port}/secret", "non-standard form", id="short-ipv4"),
    pytest.param("http://0x7f.0.0.1:{port}/secret", "non-standard form", id="hex-ipv4"),
    pytest.param("http://0x7f000001:{port}/secret", "non-standard form", id="hex-int-ipv4"),
    pytest.param("http://2130706433:{port}/secret", "non-standard form", id="decimal-ipv4"),
    pytest.param("http://127.0.0.1.:{port}/secret", "non-standard form", id="trailing-dot"),
    pytest.param("http://⒈.com/", "Invalid IDNA hostname", id="idna-fails"),
    pytest.param("http://" + "a" * 64 + ".com/", "cannot resolve", id="label-too-long"),
    pytest.param("http://example.com:99999/", "port 99999 out of range", id="port-too-big"),
    pytest.param("http://[2002:7f00:1::]:{port}/secret", "embeds 127.0.0.1", id="6to4-loopback"),
    pytest.param("http://[2002:c0a8:101::]/", "embeds 192.168.1.1", id="6to4-private"),
    pytest.param("http://[64:ff9b::7f00:1]:{port}/secret", "embeds 127.0.0.1", id="nat64"),
    pytest.param("http://[::127.0.0.1]:{port}/secret", "embeds 127.0.0.1", id="ipv4-compatible"),
    pytest.param("http://[::ffff:0:7f00:1]:{port}/secret", "127.0.0.1", id="ipv4-translated"),
    pytest.param("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "embeds 127.0.0.1", id="teredo"),
]


def verify_refused_url(server, answer, fragment, **extra):
    """Verify ``answer``: its one URL check is refused, the reason says ``fragment``."""
    server.routes[("*", "/secret")] = Reply(200, "secret")
    result = CitationVerifier(policy(server, **extra)).verify(answer)
    (c,) = [c for c in result.details.citations if c.type == "url"]
    assert c.status in {"blocked", "lookup_failed"}
    assert fragment in c.reason
    return result


@pytest.mark.parametrize(("url", "fragment"), BAD_URLS)
def test_urls_httpx_cannot_parse_or_that_smuggle_loopback(server, url, fragment):
    answer = "See " + url.format(port=server.port) + " now."
    verify_refused_url(server, answer, fragment)  # 127.0.0.1 is even allow-listed
    assert server.seen == []


BAD_LOCATIONS = [
    pytest.param("http:127.0.0.1:80/", "invalid URL", id="no-slashes"),
    pytest.param("http://[::1/x", "Invalid URL in location header", id="open-bracket"),
    pytest.param("http://a:b:c/", "Invalid URL in location header", id="two-ports"),
    pytest.param("http://0177.0.0.1:{port}/secret", "Invalid IPv4", id="octal-ipv4"),
    pytest.param("http://127.1:{port}/secret", "non-standard form", id="short-ipv4"),
    pytest.param("http://2130706433:{port}/secret", "non-standard form", id="decimal-ipv4"),
    pytest.param("http://xn--a.com/", "invalid host name", id="bad-punycode"),
    pytest.param("http://[2002:7f00:1::]:{port}/secret", "embeds 127.0.0.1", id="6to4"),
    pytest.param("javascript:alert(1)", "invalid URL", id="javascript"),
    pytest.param("file:///etc/passwd", "scheme 'file'", id="file"),
    pytest.param("http://example.com:70000/", "out of range", id="port-too-big"),
]


@pytest.mark.parametrize(("location", "fragment"), BAD_LOCATIONS)
def test_bad_redirect_locations_are_failed_lookups(server, location, fragment):
    server.routes[("HEAD", "/out")] = Reply(302, headers={"Location": location.format(port=1)})
    # By name only: the loopback address itself is not allow-listed, so no redirect may reach it.
    answer = f"See http://localhost:{server.port}/out now."
    result = verify_refused_url(server, answer, fragment, url_allow_hosts=["localhost"])
    assert len(result.details.citations) == 1
    assert server.calls("/secret") == 0


RAW = [
    pytest.param(b"HTTP/1.1 302 Found\r\nLocation: /x\x00y\r\n\r\n", id="nul-in-location"),
    pytest.param(b"HTTP/1.1 302 Found\r\nLocation: http://\xff\xfe/\r\n\r\n", id="bytes-location"),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", id="bad-content-length"),
    pytest.param(b"HTTP/1.1 200 OK\r\nBad Header Line\r\n\r\n", id="bad-header-line"),
    pytest.param(b"HTTP/1.1 200 OK\r\nX: " + b"a" * 100_000 + b"\r\n\r\n", id="huge-header"),
    pytest.param(b"garbage\r\n\r\n", id="not-http"),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", id="short-body"),
    pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", id="bad-chunking"),
    pytest.param(b"HTTP/1.1 99999 Odd\r\nContent-Length: 0\r\n\r\n", id="status-99999"),
    pytest.param(b"", id="closed-at-once"),
    pytest.param(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nxx", id="101"),
    pytest.param(b"HTTP/1.1 100 Continue\r\n\r\n", id="100-then-nothing"),
    pytest.param(b"HTTP/2 200\r\n\r\n", id="http2-status-line"),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", id="negative-length"),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 30 + b"\r\n\r\n", id="huge-length"
    ),
    pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", id="te-gzip"),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", id="two-lengths"
    ),
    pytest.param(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Encoding: gzip\r\n\r\n",
        id="gzip-gzip",
    ),
]


@pytest.mark.parametrize("raw", RAW)
def test_broken_http_from_a_json_api_is_a_failed_lookup(server, raw):
    server.routes[("GET", f"/works/{DOI}")] = Reply(raw=raw)
    result = CitationVerifier(policy(server, retries=0)).verify(f"doi:{DOI}")
    assert result.details.citations[0].status == "lookup_failed"
    json.dumps(result.to_dict())


@pytest.mark.parametrize("raw", RAW)
def test_broken_http_from_a_web_page_is_a_failed_lookup(server, raw):
    server.routes[("HEAD", "/page")] = Reply(raw=raw)
    result = CitationVerifier(policy(server)).verify(f"See {server.url}/page now.")
    assert result.details.citations[0].status in {"lookup_failed", "not_found", "verified"}
    json.dumps(result.to_dict())


@pytest.mark.parametrize(
    ("reply", "title"),
    [
        pytest.param(
            Reply(200, b"<title>\xff\xfe page</title>", {"Content-Type": "text/html"}),
            "\ufffd\ufffd page",
            id="invalid-utf8-title",
        ),
        pytest.param(
            Reply(200, gzip.compress(b"<title>Zipped</title>"), {"Content-Encoding": "gzip"}),
            "Zipped",
            id="gzipped-page",
        ),
        pytest.param(
            Reply(200, stream=lambda: bomb(1 << 30), headers={"Content-Encoding": "gzip"}),
            None,
            id="gzip-bomb-page",
        ),
        pytest.param(Reply(200, b"\x00" * 10, {"Content-Encoding": "br"}), None, id="brotli"),
        pytest.param(
            Reply(200, b"\x1f\x8b corrupt", {"Content-Encoding": "gzip"}), None, id="corrupt-gzip"
        ),
        pytest.param(
            Reply(200, stream=lambda: zeros(200 * MB), length=200 * MB), None, id="200-MB-page"
        ),
    ],
)
def test_pages_read_for_their_title_are_bounded(server, reply, title):
    server.routes[("HEAD", "/page")] = Reply(405)
    server.routes[("GET", "/page")] = reply
    start = time.monotonic()
    result = CitationVerifier(policy(server)).verify(f"See {server.url}/page now.")
    assert time.monotonic() - start < 2.0
    assert result.details.citations[0].status == "verified"  # the page exists
    assert result.details.external_lookup[0].metadata.get("title") == title


def test_final_url_drops_credentials(server):
    server.routes[("HEAD", "/a")] = Reply(302, headers={"Location": "/b"})
    server.routes[("HEAD", "/b")] = Reply(200)
    result = CitationVerifier(policy(server)).verify(f"See http://u:p@127.0.0.1:{server.port}/a")
    assert result.details.external_lookup[0].metadata["final_url"] == f"{server.url}/b"


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        pytest.param("2002:7f00:1::", "which embeds 127.0.0.1, a loopback address", id="6to4-lo"),
        pytest.param("2002:a00:1::1", "which embeds 10.0.0.1, a private address", id="6to4-10"),
        pytest.param("2002:a9fe:a9fe::", "which embeds 169.254.169.254", id="6to4-metadata"),
        pytest.param("2002:808:808::", None, id="6to4-public"),
        pytest.param("2001:0:4136:e378:8000:63bf:80ff:fffe", "embeds", id="teredo"),
        pytest.param("64:ff9b::a00:1", "which embeds 10.0.0.1", id="nat64-private"),
        pytest.param("64:ff9b:1::a00:1", "address", id="nat64-local-use"),
        pytest.param("::10.0.0.1", "which embeds 10.0.0.1", id="compatible"),
        pytest.param("::ffff:0:a00:1", "which embeds 10.0.0.1", id="translated"),
        pytest.param("::ffff:10.0.0.1", "a private address", id="mapped"),
        pytest.param("::ffff:8.8.8.8", None, id="mapped-public"),
        pytest.param("::1", "a loopback address", id="loopback"),
        pytest.param("::", "address", id="unspecified"),
        pytest.param("2606:4700:4700::1111", None, id="public-v6"),
        pytest.param("8.8.8.8", None, id="public-v4"),
    ],
)
def test_embedded_ipv4_addresses_are_judged(address, problem):
    found = forbidden(ipaddress.ip_address(address))
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


# --- identifiers stay inside their path segment -----------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("10.1234/../../../admin/secret", "10.1234/%2E%2E/%2E%2E/%2E%2E/admin/secret"),
        pytest.param("10.1234/./x", "10.1234/%2E/x"),
        pytest.param("10.1234/a..b/.x", "10.1234/a..b/.x"),
        pytest.param("10.1234/x?admin=1#y", "10.1234/x%3Fadmin%3D1%23y"),
        pytest.param("10.1234/%2e%2e/x", "10.1234/%252e%252e/x"),
        pytest.param("10.1234/a\\..\\b", "10.1234/a%5C..%5Cb"),
    ],
)
def test_quote_path(value, expected):
    assert quote_path(value) == expected


def test_a_doi_cannot_climb_out_of_the_crossref_path(server):
    server.routes[("*", "/admin/secret")] = Reply(200, {"message": WORK})
    result = CitationVerifier(policy(server)).verify("See doi:10.1234/../../../admin/secret now.")
    assert result.details.citations[0].status == "not_found"
    (seen,) = server.seen
    assert seen.path == "/works/10.1234/%2E%2E/%2E%2E/%2E%2E/admin/secret"
    assert server.calls("/admin/secret") == 0


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("crossref", "/works/10.1234/%2E%2E/%2E%2E/admin"),
        ("openalex", "/oa/works/doi:10.1234/%2E%2E/%2E%2E/admin"),
    ],
)
def test_a_doi_cannot_climb_out_of_a_source_path(server, source, expected):
    ref = ParsedReference(raw="x", doi="10.1234/../../admin")
    records, _ = candidates(server, source, ref)
    assert expected in [s.path for s in server.seen]
    assert all(not s.path.startswith("/admin") for s in server.seen)
    assert records == []


# --- CourtListener: any field of any type ------------------------------------------------------

CASE = "Marbury v. Madison, 5 U.S. 137 (1803)."


def item(**fields):
    return {"citation": "5 U.S. 137", "normalized_citations": ["5 U.S. 137"], **fields}


@pytest.mark.parametrize(
    ("answer", "status", "fragment"),
    [
        pytest.param([item(status="abc")], "not_found", "no status", id="status-string"),
        pytest.param([item(status=[200])], "not_found", "no status", id="status-list"),
        pytest.param([item(status=True)], "not_found", "no status", id="status-bool"),
        pytest.param([item(status=10**18)], "not_found", "status 1000000000000000000", id="big"),
        pytest.param([item(status=404, error_message={"x": 1})], "not_found", "not found", id="e"),
        pytest.param([item(status=200, clusters="x")], "verified", None, id="clusters-string"),
        pytest.param([item(status=200, clusters=[1])], "verified", None, id="clusters-ints"),
        pytest.param([item(status=200, clusters={"0": 1})], "verified", None, id="clusters-dict"),
        pytest.param(
            [item(status=200, clusters=[{"case_name": ["x"]}])], "verified", None, id="name-list"
        ),
        pytest.param(
            [{"citation": 5, "normalized_citations": 7, "status": 200}],
            "not_found",
            "not in CourtListener's answer",
            id="names-not-strings",
        ),
        pytest.param(["x", None, 5], "not_found", "not in CourtListener's answer", id="junk-items"),
        pytest.param({"detail": "x"}, "not_found", "not a list", id="not-a-list"),
    ],
)
def test_courtlistener_fields_of_any_type_never_raise(server, answer, status, fragment):
    server.routes[("POST", "/api/rest/v4/citation-lookup/")] = json_body(json.dumps(answer))
    result = CitationVerifier(
        policy(server, case_law_resolver=True, courtlistener_token="T")
    ).verify(CASE)
    (c,) = [c for c in result.details.citations if c.type == "case_law"]
    if status == "verified":
        assert c.status == "verified"
    else:
        assert c.status != "verified"
        assert fragment in (result.details.external_lookup[0].error or "")
    json.dumps(result.to_dict())


# --- sources: failures are notes, never exceptions ---------------------------------------------


def candidates(server, name, ref, **extra):
    lookups = Lookups(LookupSettings(**settings(server, **extra)))
    (source,) = make_sources([name], index=None, lookups=lookups)

    async def run():
        async with lookups.session():
            return await source.candidates(ref, 5)

    return asyncio.run(run()), source.failures


REF = ParsedReference(raw="LeCun (2015). Deep learning. Nature.", title="Deep learning")
ROUTES = {
    "crossref": "/works",
    "openalex": "/oa/works",
    "semanticscholar": "/s2/graph/v1/paper/search/match",
    "pubmed": "/eutils/esearch.fcgi",
}
BODIES = [
    pytest.param(b"[" * 200_000 + b"]" * 200_000, "nested deeper", id="deep"),
    pytest.param(b'{"a": 1e400}', "number out of range", id="1e400"),
    pytest.param(b'{"a": "\xff"}', "not UTF-8", id="invalid-utf8"),
    pytest.param(b" " * (LIMIT + 1), "response larger than 1000000 bytes", id="too-large"),
    pytest.param(b'{"a": 1', "malformed JSON", id="truncated"),
]


@pytest.mark.parametrize("name", list(ROUTES))
@pytest.mark.parametrize(("body", "fragment"), BODIES)
def test_hostile_bodies_are_source_failures(server, name, body, fragment):
    server.routes[("GET", ROUTES[name])] = json_body(body)
    records, failures = candidates(server, name, REF, max_response_bytes=LIMIT)
    assert records == []
    assert len(failures) == 1
    assert fragment in failures[0]


SOURCE_SHAPES = [
    ("crossref", {"message": {"items": [1, "x", None, {"title": {}}, {"DOI": ["x"]}]}}),
    ("crossref", {"message": {"items": {"0": {}}}}),
    ("crossref", {"message": "x"}),
    ("openalex", {"results": [1, {"authorships": "x"}, {"authorships": [1, {"author": 5}]}]}),
    ("openalex", {"results": [{"display_name": {}, "publication_year": "x" * 50}]}),
    ("openalex", {"results": [{"primary_location": "x", "biblio": [1], "title": 5}]}),
    ("semanticscholar", {"data": [{"authors": ["x", 5, {"name": 7}], "externalIds": "x"}]}),
    ("semanticscholar", {"data": [{"journal": 5, "venue": [], "year": "2015", "title": {}}]}),
    ("semanticscholar", {"data": [{"year": 10**18, "externalIds": {"DOI": 5}}]}),
    ("semanticscholar", {"data": "x"}),
    ("pubmed", {"esearchresult": {"idlist": [1, None, "12; DROP", "x" * 20, "26017442"]}}),
    ("pubmed", {"esearchresult": {"idlist": "26017442"}}),
]


@pytest.mark.parametrize(
    ("name", "payload"),
    [pytest.param(n, p, id=f"{n}-{i}") for i, (n, p) in enumerate(SOURCE_SHAPES)],
)
def test_sources_read_payloads_of_any_shape(server, name, payload):
    server.routes[("GET", ROUTES[name])] = Reply(200, payload)
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(200, {"result": {"26017442": 5}})
    records, _ = candidates(server, name, REF)
    for r in records:
        assert r.title is None or isinstance(r.title, str)
        assert r.year is None or isinstance(r.year, int)
        assert r.doi is None or isinstance(r.doi, str)
    if name == "pubmed" and isinstance(payload["esearchresult"]["idlist"], list):
        (summary,) = [s for s in server.seen if s.path == "/eutils/esummary.fcgi"]
        assert "id=26017442&" in summary.query + "&"  # only the well-formed PMID is sent on


ESUMMARY_SHAPES = [
    pytest.param({"authors": ["x"]}, id="authors-strings"),
    pytest.param({"authors": "x"}, id="authors-string"),
    pytest.param({"articleids": ["x", {"idtype": "doi", "value": 5}]}, id="articleids-junk"),
    pytest.param({"pubdate": 2015, "title": 5}, id="numbers"),
    pytest.param({"pubdate": {"y": 1}}, id="pubdate-dict"),
]


@pytest.mark.parametrize("fields", ESUMMARY_SHAPES)
def test_pubmed_esummary_of_any_shape_is_a_record_or_a_failure(server, fields):
    server.routes[("GET", ROUTES["pubmed"])] = Reply(200, {"esearchresult": {"idlist": ["1"]}})
    entry = {"uid": "1", "title": "Deep learning.", "pubdate": "2015", **fields}
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(200, {"result": {"1": entry}})
    records, failures = candidates(server, "pubmed", REF)
    assert len(records) + len(failures) == 1
    assert all("E-utilities" in f for f in failures)


@pytest.mark.parametrize("fields", ESUMMARY_SHAPES)
def test_pubmed_lookup_of_any_shape_never_raises(server, fields):
    entry = {"uid": "27933103", "title": "Jmol printing.", "pubdate": "2016", **fields}
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(200, {"result": {"27933103": entry}})
    record = lookup(server, Target("pubmed", "27933103"))
    assert record.ok or "E-utilities" in (record.error or "")


def test_a_hostile_esearch_list_is_capped(server):
    ids = [str(i) for i in range(1, 100_001)]
    server.routes[("GET", ROUTES["pubmed"])] = Reply(200, {"esearchresult": {"idlist": ids}})
    server.routes[("GET", "/eutils/esummary.fcgi")] = Reply(200, {"result": {}})
    candidates(server, "pubmed", REF, max_response_bytes=2_000_000)
    (summary,) = [s for s in server.seen if s.path == "/eutils/esummary.fcgi"]
    assert "id=1%2C2%2C3%2C4%2C5&" in summary.query + "&"


# --- the cache: files that are not caches, rows that are not payloads ---------------------------


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: p.write_bytes(b"not a database at all" * 100), id="text-file"),
        pytest.param(lambda p: p.write_bytes(gzip.compress(b"x" * 1000)), id="gzip-file"),
        pytest.param(lambda p: p.mkdir(), id="directory"),
        pytest.param(
            lambda p: sqlite3.connect(p).execute("CREATE TABLE lookups (a, b)").connection.commit(),
            id="other-lookups-table",
        ),
    ],
)
def test_a_cache_path_that_is_not_a_cache_is_an_input_error(tmp_path, make):
    path = tmp_path / "cache.sqlite"
    make(path)
    with pytest.raises(InputError, match=r"cannot use .* as the lookup cache") as info:
        LookupCache(path)
    assert info.value.path == "extensions.lookups.cache_path"
    with pytest.raises(InputError):
        CitationVerifier({"extensions": {"lookups": {"cache_path": str(path)}}})


@pytest.mark.parametrize(
    ("expires", "payload"),
    [
        pytest.param(1e300, "{not json", id="not-json"),
        pytest.param(1e300, "[1, 2]", id="not-an-object"),
        pytest.param(1e300, '{"ok": "maybe"}', id="not-a-record"),
        pytest.param(1e300, '{"service": "crossref", "cached": false, "x": 1}', id="extra-keys"),
        pytest.param(1e300, "[" * 100_000, id="deep"),
        pytest.param(1e300, b"\xff\xfe", id="blob"),
        pytest.param(1e300, 5, id="integer"),
        pytest.param("soon", "{}", id="expires-text"),
    ],
)
def test_unreadable_cache_rows_are_misses(server, tmp_path, expires, payload):
    server.routes[("GET", f"/works/{DOI}")] = json_body(json.dumps({"message": WORK}))
    path = tmp_path / "cache.sqlite"
    LookupCache(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO lookups VALUES (?, ?, ?, ?)", ("crossref", DOI, expires, payload))
    verifier = CitationVerifier(policy(server, cache_path=str(path)))
    result = verifier.verify(f"doi:{DOI}")
    assert result.details.citations[0].status == "verified"
    assert server.calls(f"/works/{DOI}") == 1  # a miss: looked up again
    assert verifier.verify(f"doi:{DOI}").details.external_lookup[0].cached  # and rewritten


def test_a_cache_file_damaged_after_opening_is_skipped(server, tmp_path):
    server.routes[("GET", f"/works/{DOI}")] = json_body(json.dumps({"message": WORK}))
    path = tmp_path / "cache.sqlite"
    verifier = CitationVerifier(policy(server, cache_path=str(path)))
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE lookups")
    result = verifier.verify(f"doi:{DOI}")
    assert result.details.citations[0].status == "verified"
    result = CitationVerifier(policy(server, cache_path=str(path))).verify(f"doi:{DOI}")
    assert result.details.citations[0].status == "verified"


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        pytest.param({"user_agent": "a\nb"}, "illegal header value", id="line-break-in-agent"),
        pytest.param({"mailto": "x\r\nX-Evil: 1"}, "illegal header value", id="header-injection"),
        pytest.param({"user_agent": "ü€"}, "cannot encode the request", id="non-ascii-agent"),
        pytest.param({"crossref_base_url": "http://a:b:c"}, "invalid URL", id="bad-base-url"),
        pytest.param({"crossref_base_url": "ftp://x"}, "UnsupportedProtocol", id="ftp-base-url"),
    ],
)
def test_unusable_settings_are_failed_lookups(server, extra, fragment):
    result = CitationVerifier(policy(server, **extra)).verify(f"doi:{DOI}")
    assert result.details.citations[0].status == "lookup_failed"
    assert fragment in result.details.citations[0].reason


def test_a_token_is_never_echoed_into_a_result(server):
    result = CitationVerifier(
        policy(server, case_law_resolver=True, courtlistener_token="SECRET-TOKEN\n")
    ).verify(CASE)
    assert "illegal header value" in result.details.external_lookup[0].error
    assert "SECRET" not in json.dumps(result.to_dict())


def test_the_memory_cache_is_bounded_in_bytes():
    cache = LookupCache(max_bytes=32_000)  # payloads over 1,000 bytes stay out of memory
    cache.put("OPENALEX", "big", {"data": "x" * 2000}, ttl=60)
    assert cache.get("OPENALEX", "big") is None
    for i in range(100):  # 100 payloads of about 510 bytes: 51,000 bytes
        cache.put("OPENALEX", str(i), {"data": "x" * 500}, ttl=60)
    kept = [i for i in range(100) if cache.get("OPENALEX", str(i)) is not None]
    assert kept == list(range(38, 100))  # the most recent ones that fit in 32,000 bytes
    assert cache._bytes <= 32_000


def test_big_payloads_are_still_kept_in_the_file(tmp_path):
    cache = LookupCache(tmp_path / "cache.sqlite", max_bytes=32_000)
    cache.put("OPENALEX", "big", {"data": "x" * 2000}, ttl=60)
    assert cache.get("OPENALEX", "big") == {"data": "x" * 2000}


@pytest.mark.parametrize(
    ("value", "status"),
    [
        pytest.param("\u00b2", "verified", id="superscript-two"),  # str.isdigit() says yes
        pytest.param("\u00bd", "verified", id="vulgar-half"),  # str.isnumeric() says yes
        pytest.param("9" * 5000, "lookup_failed", id="5000-digits"),  # beyond any deadline
        pytest.param("Mon, 01 Jan 99999 00:00:00 GMT", "verified", id="year-99999"),
        pytest.param("-5", "verified", id="negative"),
        pytest.param("nan", "verified", id="nan"),
    ],
)
def test_hostile_retry_after_values(server, value, status):
    server.routes[("GET", f"/works/{DOI}")] = [
        Reply(429, "slow down", {"Retry-After": value}),
        json_body(json.dumps({"message": WORK})),
    ]
    start = time.monotonic()
    result = CitationVerifier(policy(server)).verify(f"doi:{DOI}")
    assert time.monotonic() - start < 1.5
    assert result.details.citations[0].status == status


def test_pages_cannot_fill_the_shared_client_with_cookies(server):
    import citeverify_core.lookups.http as _lookup

    cookies = {"Set-Cookie": "a=" + "x" * 3000 + "; Path=/"}
    server.routes[("HEAD", "/page")] = Reply(200, headers=cookies)
    server.routes[("GET", f"/works/{DOI}")] = Reply(
        200, {"message": WORK}, {"Set-Cookie": "b=1; Path=/"}
    )
    result = CitationVerifier(policy(server)).verify(f"See {server.url}/page and doi:{DOI} now.")
    assert all(r.ok for r in result.details.external_lookup)
    assert _lookup._shared is not None
    assert len(_lookup._shared.cookies.jar) == 0
