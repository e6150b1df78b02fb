"""Citation markers in the answer are not answer words (``extensions.citation_words``)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeverify_core import CitationVerifier, PolicyError
from citeverify_core.engine.extract import citation_markers
from citeverify_core.policy import load_policy

CONTEXT = "The museum opens at nine. It is closed on Mondays. Tickets cost ten euros."
OFFLINE = {"extensions": {"lookups": {"enabled": False}}}
COUNT = {"extensions": {"lookups": {"enabled": False}, "citation_words": "count"}}
GROUNDED = "The museum opens at nine"
INVENTED = "Dragons guard the museum at night and eat visitors"

#: Each citation style, as it follows a claim (``{}`` is the claim, without its period).
STYLES = [
    "{}. [1]",
    "{}. [1][2]",
    "{}. [doc1]",
    "{}. 【1】",
    "{}. (Source: hours.md)",
    "{} (Source: hours.md).",
    "{} (Sources: hours.md, Louvre FAQ).",
    "{}. Source: hours.md",
    "{}.\nSource: hours.md",
    "{}. Source: Louvre FAQ. It is closed on Mondays.",
    "{} [Source: Louvre FAQ].",
    "{} (Source: Annual Report 2023, p. 12).",
    "{} (Smith et al., 2020).",
    "{} (Smith & Jones, 2019; Lee, 2021).",
    "{} (Smith, 2020, p. 4).",
    "{} (van der Berg 2019a: 12).",
    "{} (World Health Organization, 2021).",
    "{} [hours.md].",
    "{} [doc1].",
    "{} [Louvre FAQ].",
    "{} (doi:10.1038/nature14539).",
    "{} (https://doi.org/10.1038/nature14539).",
    "{} (PMID: 12345678).",
    "{} (https://louvre.fr/hours).",
    "{}: https://louvre.fr/hours.",
]


def verify(answer, policy=OFFLINE, context=CONTEXT):
    return CitationVerifier(policy).verify(answer, [context])


def unsupported(result):
    return sum(len(c.missing_words) for c in result.details.claims)


@pytest.mark.parametrize("style", STYLES)
def test_a_grounded_claim_with_a_citation_is_verified(style):
    answer = style.format(GROUNDED)
    result = verify(answer)
    assert result.details.verified, result.details.claims
    assert result.details.groundedness == 1.0
    # Spans index the answer as written, and the citation stays with its claim.
    for claim in result.details.claims:
        assert answer[slice(*claim.span)] == claim.text
    assert len(result.details.claims) == (2 if "Mondays" in style else 1)


@pytest.mark.parametrize(
    "style", [s for s in STYLES if not any(m in s for m in ("[1", "【", "[doc1]"))]
)
def test_count_restores_the_gateway_arithmetic(style):
    answer = style.format(GROUNDED)
    old = verify(answer, COUNT)
    assert unsupported(old) > 0
    assert old.details.groundedness is not None and old.details.groundedness < 1.0


@pytest.mark.parametrize("style", STYLES)
def test_a_citation_never_launders_an_invented_claim(style):
    answer = style.format(INVENTED)
    result = verify(answer)
    assert not result.details.verified
    claim = result.details.claims[0]
    assert claim.verified is False
    assert {"dragons", "guard", "eat", "visitors"} <= set(claim.missing_words)


@pytest.mark.parametrize(
    ("answer", "counted"),
    [
        ("The museum opens at nine (the gardens open at eight).", {"gardens", "eight"}),
        ("The museum opens at nine (since May 2019).", {"since", "may", "2019"}),
        ("The museum opens at nine (In 2019, it opened at eight).", {"2019", "eight"}),
        ("The museum opens at nine. Source: the gardens open at eight.", {"gardens", "eight"}),
        ("[Guards] said the museum opens at nine.", {"guards", "said"}),
        ("The museum opens at nine [sic].", {"sic"}),
        ("See [the garden page](https://louvre.fr/x) for hours.", {"garden", "page"}),
    ],
)
def test_prose_in_brackets_is_still_counted(answer, counted):
    claims = verify(answer).details.claims
    missing = {w for c in claims for w in c.missing_words}
    assert counted <= missing


def test_the_old_counts_exactly():
    old = verify("The museum opens at nine (Smith et al., 2020).", COUNT).details.claims[0]
    assert old.missing_words == ["smith", "et", "al", "2020"]
    assert old.groundedness == pytest.approx(5 / 9)
    new = verify("The museum opens at nine (Smith et al., 2020).").details.claims[0]
    assert (new.missing_words, new.groundedness, new.word_count) == ([], 1.0, 5)


def test_a_doi_keeps_its_own_citation_check():
    answer = "The museum opens at nine (doi:10.1038/nature14539)."
    result = verify(answer)
    [citation] = result.details.citations
    assert (citation.type, citation.kind, citation.normalized) == (
        "academic",
        "doi",
        "10.1038/nature14539",
    )
    assert answer[slice(*citation.span)] == "doi:10.1038/nature14539"
    assert result.details.claims[0].missing_words == []


def test_a_url_is_a_citation_only_when_extracted():
    policy = {**OFFLINE, "extract_patterns": ["quote"]}
    claim = verify("The museum opens at nine (https://louvre.fr/hours).", policy).details.claims[0]
    assert {"https", "louvre", "fr", "hours"} <= set(claim.missing_words)


NUMBERS = {
    "extensions": {"lookups": {"enabled": False}, "numbers": "value", "strict_statistics": True}
}


@pytest.mark.parametrize(
    "answer",
    [
        "The museum opens at nine (Smith, 2020, p. 4).",
        "Tickets cost ten euros (Lee 2021: 12-14).",
        "Tickets cost ten euros (PMID: 12345678).",
    ],
)
def test_numbers_in_a_citation_are_not_answer_numbers(answer):
    result = verify(answer, NUMBERS)
    assert result.details.verified, result.reasons
    assert not any(c.problems for c in result.details.claims)
    old = verify(answer, {"extensions": {**NUMBERS["extensions"], "citation_words": "count"}})
    assert not old.details.verified


def test_a_statistic_inside_a_citation_is_not_checked():
    answer = "Tickets cost ten euros (Source: Visitors Up 12 Percent Report, p. 4)."
    strict = {"extensions": {"lookups": {"enabled": False}, "strict_statistics": True}}
    result = verify(answer, strict)
    assert [c.kind for c in result.details.citations] == []
    assert result.details.verified
    old = verify(answer, {"extensions": {**strict["extensions"], "citation_words": "count"}})
    assert [c.kind for c in old.details.citations] == ["percent"]
    assert not old.details.verified


def test_a_quoted_title_in_a_citation_is_not_a_quotation():
    answer = 'The museum opens at nine (Source: "Louvre FAQ").'
    strict = {"extensions": {"lookups": {"enabled": False}, "strict_quotes": True}}
    result = verify(answer, strict)
    assert result.details.verified, result.reasons
    assert result.details.quotes == []
    old = verify(answer, {"extensions": {**strict["extensions"], "citation_words": "count"}})
    assert [q.text for q in old.details.quotes] == ["Louvre FAQ"]
    # A quotation in the claim itself is still checked.
    quoted = verify('The guide says "the museum opens at ten" (Source: "Louvre FAQ").', strict)
    assert [q.text for q in quoted.details.quotes] == ["the museum opens at ten"]
    assert not quoted.details.verified


def test_redact_removes_a_claim_with_its_citation():
    answer = f"{GROUNDED}. {INVENTED}. (Source: dragons.md)\nTickets cost ten euros."
    result = verify(answer, {**OFFLINE, "output_action": {"unverified_action": "redact"}})
    assert result.answer == (f"{GROUNDED}. [unverified claim removed]\nTickets cost ten euros.")
    [removed] = result.details.unverified_claims
    assert answer[slice(*removed.span)] == f"{INVENTED}. (Source: dragons.md)"


def test_a_source_line_of_its_own_stays_after_a_redaction():
    # On its own line the note cites the answer, not one claim: a redaction leaves it.
    answer = f"{INVENTED}.\nSource: hours.md"
    result = verify(answer, {**OFFLINE, "output_action": {"unverified_action": "redact"}})
    assert result.answer == "[unverified claim removed]\nSource: hours.md"


@pytest.mark.parametrize(
    "answer",
    ["(Smith et al., 2020)", "Source: hours.md", "[Louvre FAQ]\n(doi:10.1038/nature14539)"],
)
def test_an_answer_of_citations_only_is_not_empty(answer):
    # Its words count, as under count: a lone reference is not an empty answer (which passes).
    result = verify(answer)
    assert result.details.groundedness is not None
    assert not result.details.verified
    assert result.details.groundedness == verify(answer, COUNT).details.groundedness


def test_the_option_is_validated():
    assert load_policy(COUNT).to_settings().extensions.citation_words == "count"
    assert load_policy(OFFLINE).to_settings().extensions.citation_words == "ignore"
    with pytest.raises(PolicyError, match="citation_words"):
        load_policy({"extensions": {"citation_words": "skip"}})


# --- appending a citation never raises a grounded answer's unsupported words ------------------------

SENTENCES = [
    "The museum opens at nine",
    "It is closed on Mondays",
    "Tickets cost ten euros",
]
_SURNAMES = st.sampled_from(["Smith", "Lee", "Nguyen", "García", "O'Brien", "Müller", "Ito"])
_NAMES = st.one_of(
    _SURNAMES,
    st.builds(lambda a: f"{a} et al.", _SURNAMES),
    st.builds(lambda a, b: f"{a} & {b}", _SURNAMES, _SURNAMES),
    st.builds(lambda a, b: f"{a} and {b}", _SURNAMES, _SURNAMES),
)
_YEARS = st.integers(1900, 2030).map(str)
_REFERENCES = st.builds(
    lambda name, year, comma, page: f"{name}{',' if comma else ''} {year}{page}",
    _NAMES,
    _YEARS,
    st.booleans(),
    st.sampled_from(["", ", p. 4", ", pp. 12-14", ": 7"]),
)
_FILES = st.from_regex(r"[a-z]{2,10}(_[a-z]{2,8})?\.(md|pdf|txt|html)", fullmatch=True)
_URLS = st.from_regex(r"https://[a-z]{2,10}\.(org|fr|com)(/[a-z]{1,8}){0,3}", fullmatch=True)
_MARKERS = st.one_of(
    st.builds(lambda refs: f" ({'; '.join(refs)})", st.lists(_REFERENCES, min_size=1, max_size=3)),
    st.builds(lambda f: f" [{f}]", _FILES),
    st.builds(lambda n: f" [doc{n}]", st.integers(1, 99)),
    st.builds(lambda fs: f" (Sources: {', '.join(fs)})", st.lists(_FILES, min_size=1, max_size=3)),
    st.builds(lambda u: f" ({u})", _URLS),
    st.builds(lambda n: f" (doi:10.{n}/abc.{n})", st.integers(1000, 99999)),
)
_AFTER = st.builds(lambda f: f" (Source: {f})", _FILES) | st.builds(
    lambda f: f" Source: {f}", _FILES
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3),
    st.lists(st.one_of(_MARKERS.map(lambda m: ("in", m)), _AFTER.map(lambda m: ("after", m)))),
)
def test_appending_a_citation_never_raises_the_unsupported_words(sentences, markers):
    plain = ". ".join(sentences) + "."
    cited = []
    for sentence, (where, marker) in zip(sentences, markers + [("", "")] * 3, strict=False):
        # A note after a sentence ends with a period when another sentence follows it.
        cited.append(f"{sentence}{marker}." if where == "in" else f"{sentence}.{marker}.")
    answer = " ".join(cited)
    before, after = verify(plain), verify(answer)
    assert unsupported(after) <= unsupported(before) == 0
    assert after.details.verified
    assert len(after.details.claims) == len(before.details.claims)
    for claim in after.details.claims:
        assert answer[slice(*claim.span)] == claim.text


@pytest.mark.parametrize(
    "unit",
    ["(", "[", "(Smith, ", "(Smith & Jones and Lee, ", "[Aa Bb Cc Dd Ee Ff Gg ", "(van ",
     ". Source: Aaa Bbb Ccc Ddd Eee Fff Ggg, Hhh", "(Smith 2020, 2021, ", "[a a a "],
)  # fmt: skip
def test_marker_patterns_stay_linear_on_hostile_text(unit):
    text = unit * (1_000_000 // len(unit))
    start = time.process_time()
    citation_markers(text)
    assert time.process_time() - start < 2.0  # about 0.4 s on a loaded 2-core machine
