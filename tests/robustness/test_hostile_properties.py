"""Hostile inputs as properties (issue 9): for any input, only library errors, never a hang.

Hypothesis draws arbitrary text (surrogates and control characters included), arbitrary JSON-like
values and arbitrary argv for ``verify``, ``parse_reference``, ``PolicyConfig.model_validate``,
``verify_exchange``, the ``JobStore`` and the CLI. Whatever comes in, the only exceptions that may
come out are ``CiteVerifyError`` subclasses (the CLI: exit 0, 1 or 2 and no traceback), and each
example has a wall-clock budget (SIGALRM) so that a hang fails instead of stalling the suite.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from citeverify_core import CitationVerifier, CiteVerifyError, PolicyConfig, PolicyError
from citeverify_core.cli.app import app
from citeverify_core.engine.exchange import verify_exchange
from citeverify_core.references import (
    LocalIndex,
    ReferenceVerifier,
    apa7,
    parse_bibtex,
    parse_reference,
    record_from_work,
)
from citeverify_core.service.jobs import JobStore

DATA = Path(__file__).parents[1] / "data"
#: Seconds one example may take (small inputs: anything near this is a hang or a blow-up).
BUDGET = 10
SETTINGS = settings(
    max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@contextlib.contextmanager
def budget(seconds: float = BUDGET) -> Iterator[None]:
    """Fail with TimeoutError when the block runs longer than ``seconds`` (main thread only)."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"hang: over {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def only_library_errors(
    fn: Callable[[], object], expected: type[Exception] = CiteVerifyError
) -> Any:
    """Run ``fn`` within the budget; a CiteVerifyError (``expected``) is fine, anything else fails."""
    message = "ok"
    with budget():
        try:
            return fn()
        except expected as exc:
            message = str(exc)
    assert message, "a library error without a message"
    return None


# --- strategies ------------------------------------------------------------------------------------

#: Any code point, lone surrogates and control characters included.
ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=300)
#: Text that looks like what the extractors look for, glued from hostile fragments.
FRAGMENTS = st.sampled_from(
    [
        " ", ". ", "\n", "\r\n", "a", "Aa", "@", "a.", "5 Ab. ", "Id. ", "supra ", " v. ", "U.S.C. ",
        "§ ", "42 U.S.C. § 1983", "C.F.R. ", "Fed. Reg. ", "Pub. L. No. 1-2", "Regulation (EU) ",
        "http://", "https://a.com/", "www.", "10.1234/", "doi:", "PMID: ", "PMC", "arXiv:", "[",
        "]", "[1]", "【", "】", "†", '"', "“", "”", "„", "«", "»", "'", "(", ")", "%", "$", "€",
        "£", "9", "99999", "1,", ",000", ".5", "p < ", "n = ", ":", " in ", " million", " percent",
        "\u0301", "\u202e", "\u200b", "\ud800", "\udfff", "\x00", "\x1b", "😀", "ﬁ", "ﷺ", "１",
    ]
)  # fmt: skip
HOSTILE_TEXT = st.one_of(ANY_TEXT, st.lists(FRAGMENTS, max_size=80).map("".join))
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    HOSTILE_TEXT,
)
JSON_LIKE = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(HOSTILE_TEXT, st.sampled_from(["content", "page_content", "text"])),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=20,
)
DOCUMENT = st.one_of(
    HOSTILE_TEXT,
    st.fixed_dictionaries({"content": HOSTILE_TEXT}),
    st.fixed_dictionaries({"page_content": HOSTILE_TEXT}),
    JSON_LIKE,
)

VERIFIER = CitationVerifier(
    {
        "output_action": {"unverified_action": "redact"},
        "extensions": {
            "strict_quotes": True,
            "strict_statistics": True,
            "lookups": {"enabled": False},
        },
    }
)
VERIFIER.verify('See 5 U.S. 137 (1803), doi:10.1234/x, "q", 5% [1].', ["x"])  # imports eyecite


# --- verify ----------------------------------------------------------------------------------------


@SETTINGS
@given(answer=HOSTILE_TEXT, docs=st.lists(DOCUMENT, max_size=4))
def test_verify_any_text_any_documents(answer: str, docs: list[Any]) -> None:
    result = only_library_errors(lambda: VERIFIER.verify(answer, docs))
    if result is not None:
        json.dumps(result.to_dict())  # the result is JSON-ready, whatever the input
        str(result)


@SETTINGS
@given(answer=JSON_LIKE, docs=JSON_LIKE)
def test_verify_any_values(answer: Any, docs: Any) -> None:
    only_library_errors(lambda: VERIFIER.verify(answer, docs))


# --- references ------------------------------------------------------------------------------------


@SETTINGS
@given(text=st.one_of(HOSTILE_TEXT, JSON_LIKE, st.text(max_size=1300)))
def test_parse_reference_any_input(text: Any) -> None:
    only_library_errors(lambda: parse_reference(text))


CROSSREF_WORK = st.fixed_dictionaries(
    {},
    optional={
        "DOI": JSON_LIKE,
        "title": st.one_of(st.lists(JSON_LIKE, max_size=3), JSON_LIKE),
        "author": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {}, optional={"family": JSON_LIKE, "given": JSON_LIKE, "name": JSON_LIKE}
                ),
                max_size=4,
            ),
            JSON_LIKE,
        ),
        "issued": st.one_of(
            st.fixed_dictionaries(
                {
                    "date-parts": st.one_of(
                        st.lists(st.lists(JSON_SCALARS, max_size=3), max_size=2), JSON_LIKE
                    )
                }
            ),
            JSON_LIKE,
        ),
        "container-title": st.one_of(st.lists(JSON_LIKE, max_size=2), JSON_LIKE),
        "volume": JSON_LIKE,
        "issue": JSON_LIKE,
        "page": JSON_LIKE,
        "type": st.one_of(st.sampled_from(["journal-article", "book", "x"]), JSON_LIKE),
        "publisher": JSON_LIKE,
    },
)
OPENALEX_WORK = st.fixed_dictionaries(
    {"id": st.one_of(st.just("https://openalex.org/W1"), JSON_LIKE)},
    optional={
        "doi": JSON_LIKE,
        "title": JSON_LIKE,
        "display_name": JSON_LIKE,
        "publication_year": JSON_LIKE,
        "authorships": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "author": st.one_of(
                            st.fixed_dictionaries({"display_name": JSON_LIKE}), JSON_LIKE
                        )
                    }
                ),
                max_size=3,
            ),
            JSON_LIKE,
        ),
        "primary_location": JSON_LIKE,
        "biblio": JSON_LIKE,
    },
)


@SETTINGS
@given(
    work=st.one_of(
        CROSSREF_WORK, st.fixed_dictionaries({"message": CROSSREF_WORK}), OPENALEX_WORK, JSON_LIKE
    )
)
def test_record_from_work_never_raises(work: Any) -> None:
    # Dumps and API answers are untrusted: a Record or None, and the Record renders.
    with budget():
        record = record_from_work(work)
        if record is not None:
            apa7(record)
            repr(record)


@SETTINGS
@given(
    text=st.one_of(
        HOSTILE_TEXT,
        st.lists(
            st.sampled_from(
                [
                    "@article{",
                    "@book{",
                    "x,",
                    "title",
                    "=",
                    "{",
                    "}",
                    '"',
                    "author = {",
                    " and ",
                    "year = 99999999999999",
                    ",\n",
                    "%",
                    "@comment{",
                    "@string{a = {b}}",
                    "#",
                ]
            ),
            max_size=40,
        ).map("".join),
    )
)
def test_parse_bibtex_any_text(text: str) -> None:
    only_library_errors(lambda: parse_bibtex(text))


# --- policy ----------------------------------------------------------------------------------------

POLICY_KEYS = st.sampled_from(
    [
        "require_sources", "require_source_match", "min_confidence", "min_groundedness",
        "extract_patterns", "rag_context", "output_action", "response", "external_resolver",
        "hallucination_action", "extensions", "unverified_action", "verify_against_context",
        "min_context_overlap", "include_verification_report", "lookups", "redaction_marker",
        "strict_quotes", "strict_statistics", "enabled", "timeout", "deadline", "max_lookups",
        "retries", "url_allow_hosts", "url_max_bytes", "cache_path", "crossref_base_url",
        "mailto", "user_agent",
    ]
)  # fmt: skip
POLICY_LIKE = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(POLICY_KEYS, HOSTILE_TEXT, st.integers(), st.none()), inner, max_size=5
        ),
    ),
    max_leaves=25,
)


@SETTINGS
@given(data=st.one_of(POLICY_LIKE, st.dictionaries(POLICY_KEYS, POLICY_LIKE, max_size=6)))
def test_policy_model_validate_any_mapping(data: Any) -> None:
    only_library_errors(lambda: PolicyConfig.model_validate(data), PolicyError)


@SETTINGS
@given(data=st.dictionaries(POLICY_KEYS, POLICY_LIKE, max_size=6))
def test_verifier_with_any_policy(data: Any) -> None:
    def run() -> object:
        verifier = CitationVerifier(data)
        if verifier.policy.extensions.lookups.enabled:
            return None  # no network in the tests
        return verifier.verify("The museum opens at nine. See doi:10.1/x.", ["The museum."])

    only_library_errors(run)


# --- gateway ---------------------------------------------------------------------------------------

CHAT = st.fixed_dictionaries(
    {
        "choices": st.lists(
            st.fixed_dictionaries(
                {
                    "message": st.fixed_dictionaries(
                        {
                            "role": st.just("assistant"),
                            "content": st.one_of(HOSTILE_TEXT, JSON_LIKE),
                        }
                    )
                }
            ),
            max_size=2,
        )
    }
)
RESPONSES_API = st.fixed_dictionaries(
    {
        "output": st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["message", "x"]),
                    "content": st.lists(
                        st.fixed_dictionaries(
                            {
                                "type": st.sampled_from(["output_text", "text", "refusal"]),
                                "text": st.one_of(HOSTILE_TEXT, JSON_LIKE),
                            }
                        ),
                        max_size=3,
                    ),
                }
            ),
            max_size=2,
        )
    }
)
REQUEST = st.one_of(
    JSON_LIKE,
    st.fixed_dictionaries(
        {
            "messages": st.just([]),
            "verdictan": st.one_of(
                JSON_LIKE,
                st.fixed_dictionaries(
                    {"context_documents": st.one_of(JSON_LIKE, st.lists(DOCUMENT, max_size=3))}
                ),
            ),
        },
        optional={"stream": JSON_SCALARS},
    ),
)
GATEWAY_VERIFIER = CitationVerifier(
    {"output_action": {"unverified_action": "block"}, "extensions": {"lookups": {"enabled": False}}}
)


@SETTINGS
@given(request=REQUEST, response=st.one_of(CHAT, RESPONSES_API, JSON_LIKE))
def test_verify_exchange_any_exchange(request: Any, response: Any) -> None:
    def run() -> object:
        decision = verify_exchange(request, response, verifier=GATEWAY_VERIFIER)
        status, body = decision.to_http()
        assert status in {200, 400}
        return json.dumps(body)

    only_library_errors(run)


# --- the job store ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store() -> Iterator[JobStore]:
    with tempfile.TemporaryDirectory() as folder:
        index = LocalIndex(Path(folder) / "index.sqlite")
        index.build(DATA / "works-crossref.jsonl")
        jobs = JobStore(Path(folder) / "jobs.sqlite", ReferenceVerifier(index))
        yield jobs
        jobs.close()
        index.close()


IDS = st.one_of(
    st.text(max_size=40),
    st.integers(),
    st.sampled_from(["1", "2", "²", "٣", "9" * 30, "-1", "0", "1e3", " 1", "1\x00", "\ud800"]),
    JSON_SCALARS,
)
KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
OPERATIONS = st.one_of(
    st.tuples(
        st.just("submit"),
        st.one_of(st.lists(st.one_of(HOSTILE_TEXT, st.just(KUHN)), max_size=22), JSON_LIKE),
        st.one_of(st.none(), HOSTILE_TEXT, JSON_LIKE),
    ),
    st.tuples(st.just("results"), st.one_of(st.lists(IDS, max_size=55), JSON_LIKE)),
    st.tuples(
        st.just("cancel"),
        st.one_of(st.none(), IDS, JSON_LIKE),
        st.one_of(st.none(), st.lists(IDS, max_size=55), JSON_LIKE),
    ),
    st.tuples(st.just("history"), st.one_of(IDS, JSON_LIKE), st.one_of(IDS, JSON_LIKE)),
    st.tuples(st.just("process")),
)


@settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=st.lists(OPERATIONS, min_size=1, max_size=6))
def test_job_store_any_arguments(store: JobStore, operations: list[tuple[Any, ...]]) -> None:
    for op in operations:
        if op[0] == "submit":
            only_library_errors(functools.partial(store.submit, op[1], title=op[2]))
        elif op[0] == "results":
            only_library_errors(functools.partial(store.results, op[1]))
        elif op[0] == "cancel":
            only_library_errors(functools.partial(store.cancel, document_id=op[1], job_ids=op[2]))
        elif op[0] == "history":
            only_library_errors(functools.partial(store.history, limit=op[1], offset=op[2]))
        else:
            only_library_errors(store.process)
    only_library_errors(lambda: json.dumps(store.history(limit=50)))


# --- the CLI ---------------------------------------------------------------------------------------

RUNNER = CliRunner()
ARGV_TEXT = st.text(
    st.characters(codec="utf-8", exclude_characters="\x00"),
    max_size=30,  # utf-8: no surrogates
)
FILES = {
    "answer.txt": b"The museum opens at nine. Entry is free 5% of days.",
    "doc.txt": b"The museum opens at nine.",
    "docs.json": b'[{"content": "The museum opens at nine."}, "x", 5]',
    "nested.json": b"[" * 50_000 + b"]" * 50_000,
    "bad.txt": b"\xff\xfe\xfa",
    "surrogate.json": b'{"choices": [{"message": {"content": "a \\ud800 b"}}]}',
    "request.json": b'{"verdictan": {"context_documents": [{"content": "The museum."}]}}',
    "policy.yaml": b"policy:\n  citation-verifier:\n    output_action: {unverified_action: block}\n",
    "deep.yaml": b"[" * 600 + b"]" * 600,
    "intkeys.yaml": b"policy:\n  citation-verifier:\n    1: 2\n",
    "empty.yaml": b"",
    "index.sqlite": b"not a database" * 50,
    "refs.txt": KUHN.encode(),
}
ARG = st.one_of(
    st.sampled_from(
        [
            "check", "lint", "demo", "refs", "index", "build", "stats", "--help", "-a", "--answer",
            "-c", "--context", "-p", "--policy", "--request", "--response", "--action", "block",
            "redact", "flag", "--json", "--strict", "--no-strict", "--no-lookups", "--index", "-",
            "--", ".", "/",
        ]
    ),
    st.sampled_from(sorted(FILES)),
    ARGV_TEXT,
)  # fmt: skip


@pytest.fixture(scope="module")
def cli_folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        for name, content in FILES.items():
            (Path(folder) / name).write_bytes(content)
        yield Path(folder)


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@settings(
    max_examples=80,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    command=st.sampled_from(["check", "lint", "refs", "index", "demo"]),
    args=st.lists(ARG, max_size=8),
    stdin=st.one_of(st.none(), ARGV_TEXT),
)
def test_cli_any_argv(cli_folder: Path, command: str, args: list[str], stdin: str | None) -> None:
    argv = [command, *args]
    if command == "check" and "--no-lookups" not in argv:
        argv.append("--no-lookups")  # no network in the tests
    with working_directory(cli_folder), budget():
        result = RUNNER.invoke(app, argv, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = result.exception
        raise AssertionError(f"{argv!r}: {type(exc).__name__}: {exc}") from exc
    assert result.exit_code in {0, 1, 2}, (argv, result.exit_code, result.output[-2000:])
    assert "Traceback" not in result.output, (argv, result.output[-2000:])
