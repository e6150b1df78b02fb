"""Hostile text for the verifier (issue 9): named generators shared by the tests and the bench.

Each generator is ``gen(n_chars) -> str``: about ``n_chars`` characters (never more) of text that
an attacker, or a model gone wrong, could write as an answer. A few cases come with their own
context (``Case.context(n_chars) -> list[str]``): many quotes against one large document, many
distinct percentages against a context full of numbers, many claims against many documents.

The first cases are the ones issue 9 reports; the others are their siblings and the cases found
while probing (``Case.origin`` says which). Everything is deterministic: the same text every run.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from citeverify_core.engine.verifier import MAX_CLAIMS

__all__ = ["CASES", "SIZES", "Case", "english", "english_context"]

#: The sizes the tests and the bench use (answers are accepted up to 2,000,000 characters).
SIZES = (10_000, 100_000, 1_000_000)

Gen = Callable[[int], str]
ContextGen = Callable[[int], list[str]]

_WORDS = [
    "the",
    "museum",
    "opens",
    "at",
    "nine",
    "and",
    "entry",
    "is",
    "free",
    "on",
    "sundays",
    "revenue",
    "rose",
    "sharply",
    "in",
    "the",
    "last",
    "quarter",
    "while",
    "costs",
    "fell",
    "the",
    "study",
    "enrolled",
    "patients",
    "across",
    "several",
    "hospitals",
    "researchers",
    "found",
    "that",
    "the",
    "treatment",
    "reduced",
    "symptoms",
    "court",
    "held",
    "that",
    "the",
    "statute",
    "applied",
    "to",
    "the",
    "case",
    "agency",
    "published",
    "its",
    "final",
    "rule",
    "after",
    "comment",
    "period",
    "ended",
]


@cache
def english(n_chars: int, seed: int = 1) -> str:
    """About ``n_chars`` of plain sentences with numbers and percentages (a context document)."""
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n_chars:
        sentence = [rng.choice(_WORDS) for _ in range(rng.randint(8, 20))]
        if rng.random() < 0.3:
            sentence.insert(
                rng.randrange(len(sentence)), f"{rng.randint(1, 999)}.{rng.randint(0, 9)}%"
            )
        if rng.random() < 0.2:
            sentence.insert(rng.randrange(len(sentence)), f"${rng.randint(1, 99_999):,}")
        chunk = " ".join(sentence).capitalize() + ". "
        out.append(chunk)
        size += len(chunk)
    return "".join(out)[:n_chars]


def english_context(n_chars: int) -> list[str]:
    """The default context: one document of ``n_chars`` of :func:`english`."""
    return [english(n_chars)]


def _fill(unit: str, n: int, prefix: str = "", suffix: str = "") -> str:
    """``prefix + unit * k + suffix``, at most ``n`` characters."""
    k = max(1, (n - len(prefix) - len(suffix)) // max(1, len(unit)))
    return (prefix + unit * k + suffix)[: max(n, len(prefix) + len(suffix) + len(unit))]


#: The policy of the hostile cases (tests and bench): lookups off, every code path on: redact
#: (the answer is rewritten), strict quotes and statistics (failures attached to claims).
POLICY: dict[str, Any] = {
    "output_action": {"unverified_action": "redact"},
    "extensions": {
        "strict_quotes": True,
        "strict_statistics": True,
        "lookups": {"enabled": False},
    },
}


@dataclass(frozen=True)
class Case:
    """One hostile generator.

    Attributes:
        name: Identifier (test ids, bench rows).
        gen: ``gen(n_chars) -> str``, the answer.
        context: ``context(n_chars) -> list[str]``, the context documents that go with it (None:
            the caller's default context).
        cheap: Cheap enough (once fixed) to run at 1M characters in the tests.
        origin: ``issue`` (reported in issue 9), ``sibling`` (a variant of one), ``probe`` (found
            while probing).
        note: What it attacks.
    """

    name: str
    gen: Gen
    context: ContextGen | None = None
    cheap: bool = False
    origin: str = "sibling"
    note: str = ""


# --- generators with their own context ------------------------------------------------------


def _quotes_answer(n: int) -> str:
    # Near-miss quotes of the 1 MB document: its words, one changed, so no exact match is found.
    doc = english(1_000_000)
    rng = random.Random(5)
    out: list[str] = []
    size = 0
    while size < n:
        start = rng.randrange(0, len(doc) - 200)
        start = doc.find(" ", start) + 1
        quote = doc[start : start + rng.randint(40, 120)].rsplit(" ", 1)[0] + " zebra"
        piece = f'The report says "{quote}". '
        out.append(piece)
        size += len(piece)
    return "".join(out)[:n]


def _quotes_context(_: int) -> list[str]:
    return [english(1_000_000)]


def _matching_quotes_answer(n: int) -> str:
    # Short quotes that the 1 MB document does contain: each one's offsets are mapped back.
    return _fill('He said "the study" here. ', n)


def _percentages_answer(n: int) -> str:
    out: list[str] = []
    size = 0
    i = 0
    while size < n:
        piece = f"{i // 10}.{i % 10}% "
        out.append(piece)
        size += len(piece)
        i += 1
    return "".join(out)[:n].rsplit(" ", 1)[0]


def _numbers_context(n: int) -> list[str]:
    # A context full of numbers: every percentage search finds candidates everywhere.
    rng = random.Random(11)
    out: list[str] = []
    size = 0
    while size < n:
        piece = f"{rng.randint(0, 9999)} {rng.randint(0, 99)}.{rng.randint(0, 9)} "
        out.append(piece)
        size += len(piece)
    return ["".join(out)[:n]]


def _many_claims_answer(n: int) -> str:
    rng = random.Random(3)
    out: list[str] = []
    size = 0
    while size < n:
        piece = f"{rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)} w{rng.randint(0, 99999)}. "
        out.append(piece)
        size += len(piece)
    return "".join(out)[:n]


def _many_docs_context(n: int) -> list[str]:
    # Many small documents (n / 20 of them), each with distinct words.
    return [f"doc{i} {_WORDS[i % len(_WORDS)]} w{i}" for i in range(max(1, n // 20))]


def _markers_answer(n: int) -> str:
    out: list[str] = []
    size = 0
    i = 0
    while size < n:
        piece = f"Claim {i} holds [{i % 999 + 1}][{(i * 7) % 999 + 1}]. "
        out.append(piece)
        size += len(piece)
        i += 1
    return "".join(out)[:n]


def _distinct_dois(n: int) -> str:
    out: list[str] = []
    size = 0
    i = 0
    while size < n:
        piece = f"See doi:10.{1000 + i % 9000}/x{i} and https://ex{i}.org/p{i}. "
        out.append(piece)
        size += len(piece)
        i += 1
    return "".join(out)[:n]


def _claims_at_limit(n: int) -> str:
    # Just under the claim limit (MAX_CLAIMS since issue 9), each claim as long as n allows.
    count = MAX_CLAIMS - 10
    per = max(4, n // count)
    return (("W" + "a" * (per - 3) + ". ") * count)[:n]


def _mixed_scripts(n: int) -> str:
    return _fill("Latin Кириллица العربية 中文字 עברית ελληνικά हिन्दी ᚠᚢᚦ 𝔘𝔫𝔦 ", n)


def _bidi(n: int) -> str:
    return _fill("abc\u202edef\u2066g\u200bh\u200d\u200ci\u2069\u202c\u200fj\u061c ", n)


def _combining(n: int) -> str:
    return "a" + "\u0301" * (n - 1)


def _emoji(n: int) -> str:
    return _fill("👩\u200d👩\u200d👧\u200d👦🏳️\u200d🌈 ", n)


def _surrogates(n: int) -> str:
    return _fill("text \ud800 more \udfff and \udc00\ud83d. ", n)


def _nul(n: int) -> str:
    return _fill("word\x00\x01\x7f\x1b[31m. ", n)


def _random_unicode(n: int) -> str:
    rng = random.Random(13)
    return "".join(chr(rng.randrange(0x110000)) for _ in range(n))


CASES: tuple[Case, ...] = (
    # --- reported in issue 9 -------------------------------------------------------------------
    Case("email_run", lambda n: "a" * (n - 1) + "@", origin="issue", note="e-mail pattern"),
    Case(
        "case_prefilter",
        lambda n: "See 5 Ab. " + "A" * (n - 10),
        origin="issue",
        note="case-like pre-filter",
    ),
    Case("id_supra", lambda n: _fill("Id. supra ", n), origin="issue", note="eyecite windows"),
    Case("dot_space", lambda n: _fill(". ", n), origin="issue", note="'[' scan per claim"),
    Case(
        "quotes_1mb",
        _quotes_answer,
        _quotes_context,
        origin="issue",
        note="near-miss quotes against one 1 MB document",
    ),
    Case(
        "quotes_matching_1mb",
        _matching_quotes_answer,
        _quotes_context,
        origin="issue",
        note="quotes found in one 1 MB document (offset mapping per quote)",
    ),
    Case(
        "percentages",
        _percentages_answer,
        _numbers_context,
        origin="issue",
        note="distinct percentages against a context full of numbers",
    ),
    Case(
        "many_claims_docs",
        _many_claims_answer,
        _many_docs_context,
        origin="issue",
        note="many claims against many documents",
    ),
    Case(
        "digits_percent",
        lambda n: "Rose " + "9" * (n - 6) + "%",
        cheap=True,
        origin="issue",
        note="int() digit limit",
    ),
    Case("digits_dollar", lambda n: "$" + "9" * (n - 1), cheap=True, origin="issue"),
    Case("digits_euro", lambda n: "€" + "9" * (n - 1), cheap=True, origin="issue"),
    # --- siblings --------------------------------------------------------------------------------
    Case("digits_percent_word", lambda n: "9" * (n - 8) + " percent", cheap=True),
    Case("digits_million", lambda n: "$" + "9" * (n - 10) + " million", cheap=True),
    Case("digits_pvalue", lambda n: "p < 0." + "0" * (n - 7) + "1", cheap=True),
    Case("digits_sample", lambda n: "n = " + "9" * (n - 4), cheap=True),
    Case("digits_ratio", lambda n: "9" * (n // 2 - 1) + ":" + "1" * (n // 2), cheap=True),
    Case("digits_decimal_percent", lambda n: "0." + "1" * (n - 3) + "%", cheap=True),
    Case("digits_plain", lambda n: "9" * n, cheap=True),
    Case("thousands_commas", lambda n: _fill("1,", n, suffix="1%"), cheap=True),
    Case("thousands_groups", lambda n: _fill("999,", n, prefix="$1,", suffix="999"), cheap=True),
    Case("email_dotted", lambda n: _fill("a.", n, suffix="@"), note="e-mail pattern"),
    Case("email_plus", lambda n: _fill("a+-", n, suffix="@b"), note="e-mail pattern"),
    Case("email_at_dot", lambda n: "a@" + "b" * (n - 3) + ".", note="e-mail domain part"),
    Case("email_many_ats", lambda n: _fill("a@", n), note="e-mail pattern"),
    Case("case_prefilter_words", lambda n: _fill("See 5 Ab. Aaa ", n), note="case-like pattern"),
    Case(
        "case_name_run", lambda n: _fill("Smith ", n, suffix="v. Jones, 5 Xy. 1"), note="case name"
    ),
    Case(
        "case_citations",
        lambda n: _fill("Roe v. Wade, 410 U.S. 113 (1973). ", n),
        origin="probe",
        note="real case citations everywhere: eyecite over one merged window",
    ),
    Case(
        "claims_at_limit",
        _claims_at_limit,
        origin="probe",
        note="MAX_CLAIMS - 10 claims (under the claim limit) as long as the size allows",
    ),
    Case("capitalized_run", lambda n: _fill("Aaa Bbb Ccc ", n), cheap=True),
    Case("v_repeated", lambda n: _fill("v. ", n), note="case hint per 3 characters"),
    Case("v_names", lambda n: _fill("Ab v. ", n)),
    Case(
        "id_glued",
        lambda n: _fill("Id.", n),
        origin="probe",
        note="_windows: each hint widened to whitespace",
    ),
    Case("supra_glued", lambda n: _fill("x,supra", n)),
    Case("usc_repeated", lambda n: _fill("U.S.C. ", n)),
    Case("usc_sections", lambda n: _fill("42 U.S.C. § 1983 ", n)),
    Case("cfr_repeated", lambda n: _fill("5 C.F.R. ", n)),
    Case("section_signs", lambda n: _fill("§", n)),
    Case("fed_reg", lambda n: _fill("1 Fed. Reg. 1 ", n)),
    Case("reporter_hints", lambda n: _fill("5 Ab. ", n)),
    Case("reporter_hints_glued", lambda n: _fill("5 Ab.x", n)),
    Case("eu_acts", lambda n: _fill("Regulation (EU) 2016/679 ", n)),
    Case("unclosed_quote", lambda n: '"' + _fill("word ", n - 1), cheap=True),
    Case("unclosed_curly", lambda n: _fill("“word ", n), cheap=True),
    Case("quote_chars", lambda n: _fill('"', n), cheap=True),
    Case("guillemets", lambda n: _fill("»a «", n), origin="probe", note="a quote every 4 chars"),
    Case(
        "stats_per_claim",
        lambda n: _fill("Rose 5 kg. ", n),
        origin="probe",
        note="_claim_at: a scan of every claim per statistic",
    ),
    Case(
        "strict_stats",
        lambda n: _fill("Rose 77777%. ", n),
        origin="probe",
        note="_apply_strict: every failing statistic per claim",
    ),
    Case(
        "strict_quotes",
        lambda n: _fill('"zq". ', n),
        origin="probe",
        note="_apply_strict: every failing quote per claim",
    ),
    Case("nested_brackets", lambda n: _fill("[", n), cheap=True),
    Case("brackets_digits", lambda n: _fill("[1", n), cheap=True),
    Case("lenticular", lambda n: _fill("【", n), cheap=True),
    Case("lenticular_dagger", lambda n: _fill("【1†", n)),
    Case(
        "markers",
        _markers_answer,
        origin="probe",
        note="_score_claim/_without_markers: every marker per claim",
    ),
    Case(
        "marker_ranges",
        lambda n: _fill("Claim x [1-999]. ", n),
        origin="probe",
        note="a marker range cites 999 documents: per-claim work x 999",
    ),
    Case(
        "empty_documents",
        lambda n: _fill("The museum opens at nine [2]. ", n),
        lambda n: [""] * max(1, n // 10),
        origin="probe",
        note="many empty documents (per-document cost, claims x documents)",
    ),
    Case(
        "marker_lines",
        lambda n: _fill("The museum opens at nine.\n[1]\n", n),
        cheap=True,
        origin="probe",
        note="a marker alone on its line: a claim without words (ZeroDivisionError)",
    ),
    Case("markers_glued", lambda n: _fill("[1]", n, prefix="Claim. ")),
    Case("parens", lambda n: _fill("(", n, suffix=")"), cheap=True),
    Case("url_long", lambda n: "http://a.com/" + "a" * (n - 13), cheap=True),
    Case("url_close_parens", lambda n: "http://a.com/" + ")" * (n - 13), note="_trim count loop"),
    Case("url_trailing_dots", lambda n: "See http://a.com/" + "." * (n - 17)),
    Case("http_repeated", lambda n: _fill("http://", n)),
    Case("https_labels", lambda n: "https://" + _fill("a.", n - 8)),
    Case("url_query", lambda n: _fill("&a=1", n, prefix="https://a.com/?")),
    Case("url_bad_hosts", lambda n: _fill("http://a:b:c/ http://[::1/x ", n)),
    Case("www_repeated", lambda n: _fill("www.", n)),
    Case("doi_prefix_repeated", lambda n: _fill("10.1234/", n)),
    Case("doi_long", lambda n: "doi:10.1234/" + "a" * (n - 12)),
    Case("doi_close_parens", lambda n: "10.1234/" + ")" * (n - 8), note="_trim count loop"),
    Case("doi_org_repeated", lambda n: _fill("https://doi.org/", n)),
    Case("distinct_citations", _distinct_dois, note="many DOIs and URLs (lookups off)"),
    Case("pmid_repeated", lambda n: _fill("PMID: 1 ", n)),
    Case("arxiv_repeated", lambda n: _fill("arXiv:", n)),
    Case("abbreviations", lambda n: _fill("e.g. Mr. U.S. ", n)),
    Case("dotted_token", lambda n: _fill("a.", n), cheap=True),
    Case("dots", lambda n: "." * n, cheap=True),
    Case("bang_question", lambda n: _fill("?!", n), cheap=True),
    Case("crlf_flood", lambda n: _fill("\r\n", n), cheap=True),
    Case("crlf_words", lambda n: _fill("a\r\n", n), cheap=True),
    Case("whitespace_only", lambda n: _fill(" \t\n\u3000\u00a0\u2028", n), cheap=True),
    Case("one_long_word", lambda n: "a" * n, cheap=True),
    Case("one_long_sentence", lambda n: _fill("word ", n), cheap=True),
    Case("combining_marks", _combining, cheap=True),
    Case("bidi_zero_width", _bidi, cheap=True),
    Case("lone_surrogates", _surrogates, cheap=True),
    Case("nul_control", _nul, cheap=True),
    Case("emoji", _emoji, cheap=True),
    Case("mixed_scripts", _mixed_scripts, cheap=True),
    Case("random_unicode", _random_unicode, cheap=True),
    Case("fullwidth_digits", lambda n: _fill("１２３％ ", n), cheap=True),
    Case("ligatures_nfkc", lambda n: _fill("ﬁﬂ ﷺ ", n), note="NFKC expansion (x18)"),
)

BY_NAME = {case.name: case for case in CASES}
assert len(BY_NAME) == len(CASES)
