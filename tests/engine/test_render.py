"""Readable results: the plain-text report and the HTML view for notebooks."""

from citeverify_core import CitationVerifier
from citeverify_core.engine.results import render_text

OFFLINE = {"extensions": {"lookups": {"enabled": False}}}


def result(include_original=False, **policy):
    answer = 'The museum opens at nine. "Dragons guard it." Tickets cost 12% more <b>[1]</b>.'
    docs = ["The museum opens at nine. Tickets cost 10% more."]
    verifier = CitationVerifier({**OFFLINE, **policy}, include_original=include_original)
    return verifier.verify(answer, docs)


def test_html_highlights_claims_quotes_and_citations():
    page = result()._repr_html_()
    assert '<span class="ok"' in page  # the supported claim
    assert '<span class="no"' in page  # the unsupported ones
    assert '<span class="q-no">&quot;Dragons guard it.&quot;</span>' in page
    assert "<td>unsupported</td>" in page
    assert "&lt;b&gt;" in page  # the answer is escaped, never injected
    assert "<b>[1]</b>" not in page


def test_html_and_text_of_a_redacted_answer_do_not_show_what_was_removed():
    r = result(output_action={"unverified_action": "redact"})
    for view in (r._repr_html_(), str(r)):
        assert "Dragons" not in view
        assert "12%" not in view
        assert "The museum opens at nine." in view


def test_html_keeps_the_original_text_under_redact_when_asked():
    r = result(include_original=True, output_action={"unverified_action": "redact"})
    assert r.original_answer.startswith("The museum opens at nine.")
    assert "Dragons" not in r.answer
    page = r._repr_html_()
    assert "Dragons guard it." in page
    assert "Redacted answer" in page


def test_text_report_names_everything():
    text = str(result())
    for fragment in (
        "Verdict: ALLOW",
        "Claims:",
        "NOT FOUND in the context",
        "unsupported",
        "Why unverified:",
    ):
        assert fragment in text


def test_a_misattributed_claim_is_marked_differently_from_a_supported_one():
    docs = ["The museum opens at nine.", "Tickets cost ten euros."]
    answer = "The museum opens at nine [2]. Tickets cost ten euros [2]."
    r = CitationVerifier(OFFLINE).verify(answer, docs)
    assert [c.misattributed for c in r.details.claims] == [True, False]
    page = r._repr_html_()
    assert '<span class="mis"' in page  # supported by document 1, but it cites document 2
    assert page.count('<span class="ok"') == 1
    assert "wrong source" in page  # shown, not only in the hover text


def test_reports_say_which_claims_the_semantic_tier_decided():
    def scorer(claim: str, passages: list[str]) -> float:
        return 0.95 if "9 am" in claim else 0.1

    verifier = CitationVerifier({"extensions": {"semantic": {"min_score": 0.8}}}, semantic=scorer)
    result = verifier.verify(
        "The museum opens at 9 am. Penguins fly south.", ["The museum opens at nine."]
    )
    text = render_text(result)
    assert "decided by the semantic tier: 0.95" in text
    assert "decided by the semantic tier: 0.10" in text  # failed on words, then on meaning too
    assert "semantic score 0.95 (semantic tier decided)" in result._repr_html_()
    # Without a scorer, nothing about a tier.
    plain = CitationVerifier().verify("The museum opens at 9 am.", ["The museum opens at nine."])
    assert "semantic" not in render_text(plain) and "semantic" not in plain._repr_html_()


def test_the_text_report_numbers_documents_from_1_as_markers_do():
    docs = ["Tickets cost ten euros.", "The museum opens at nine.", "Dragons are myths."]
    answer = (
        'The museum opens at nine [1]. "Tickets cost ten euros." Dragons are loud at night [3].'
    )
    r = CitationVerifier(OFFLINE).verify(answer, docs)
    opens, _quote, dragons = r.details.claims
    assert (opens.cited_documents, opens.best_document) == ([0], 1)  # JSON: indices from 0
    assert r.details.quotes[0].document == 0
    text = render_text(r)
    assert "cites #1: MISATTRIBUTED" in text  # [1] is the first document
    assert "closest document: #3" in text  # the dragons claim: the third document, "[3]"
    assert dragons.best_document == 2
    assert "found in document #1 at 0-" in text
    assert r.details.citations[0].reason == "found in context document 1"
