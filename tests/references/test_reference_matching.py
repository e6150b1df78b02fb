"""Issue 10: titleless references, title typos, generic titles, and sources that do not answer."""

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeverify_core.policy.settings import LookupSettings
from citeverify_core.references import (
    Author,
    LocalIndex,
    ParsedReference,
    Record,
    ReferenceVerifier,
    parse_reference,
)
from citeverify_core.references.parse import ParsedCitation
from tests.support.loopback import Loopback, Reply


def name(i):
    """A made-up surname, far from the others (no typo of another)."""
    return "".join(
        "bcdfghklmnprstvz"[(i * 7 + k * 5) % 16] + "aeiou"[(i + k) % 5] for k in range(4)
    ).title() + str(i)


def record(doi, title, authors, year, venue, volume=None, pages=None):
    """A Record of the local index, authors as "Family, Given" strings."""
    return Record(
        source="LOCAL",
        title=title,
        authors=tuple(Author(*a.split(", ")) for a in authors),
        year=year,
        venue=venue,
        doi=doi,
        volume=volume,
        pages=pages,
    )


JONES = record(
    "10.1021/j100206a036", "Gas-phase chemistry of silver(1+) with alkyl chlorides",
    ["Jones, R. W.", "Staley, R. H."], 1982, "The Journal of Physical Chemistry", "86", "1669-1674",
)  # fmt: skip
#: Same journal, year and volume: what the year + volume query also finds.
NEIGHBOURS = [
    record(f"10.1021/j1002{i:02d}", f"Another paper {i}", [f"Other{i}, A."], 1982,
           "The Journal of Physical Chemistry", "86", f"{1000 + 10 * i}-{1005 + 10 * i}")
    for i in range(60)
]  # fmt: skip
BOOK = record(
    "10.1007/978-1-4842-0000-0_1", "Getting started", ["Laursen, G. H. N.", "Thorlund, J."], 2014,
    "Business Analytics for Managers", None, "1-15",
)  # fmt: skip


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    idx = LocalIndex(tmp_path_factory.mktemp("matching") / "works.sqlite")
    generic = [
        record(f"10.1/intro.{i}", "Introduction", [f"{name(i)}, A."], 1990 + i % 30, f"Journal {i}")
        for i in range(120)
    ]
    words = [
        record("10.1/riposte", "Riposte", ["Collins, D."], 1977, "Books Ireland"),
        record("10.1/tenofovir", "Tenofovir", ["Roe, P."], 2011, "Reactions Weekly"),
    ]
    idx.add([JONES, *NEIGHBOURS, BOOK, *generic, *words])
    yield idx
    idx.close()


@pytest.fixture(scope="module")
def verifier(index):
    return ReferenceVerifier(index)


# --- titleless references (ACS, AIP, Elsevier) ----------------------------------------------------

TITLELESS = [
    pytest.param("Jones, R. W.; Staley, R. H. J. Phys. Chem. 1982, 86, 1669–1674.", id="acs"),
    pytest.param("1 R.W. Jones and R.H. Staley, J. Phys. Chem. 86, 1669 (1982).", id="aip"),
    pytest.param("[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 86 (1982) 1669.", id="elsevier"),
    pytest.param(
        "(1) Jones, R. W.; Staley, R. H. The Journal of Physical Chemistry 1982, 86, 1669.",
        id="acs-full-venue",
    ),
]


@pytest.mark.parametrize("text", TITLELESS)
def test_a_titleless_reference_is_matched_to_its_work(verifier, text):
    result = verifier.verify(text)
    assert result.status == "verified", result.message
    assert result.field_results["title"] == "ABSENT"
    best = next(n for n in result.verificationGraph["nodes"] if n["type"] == "RESULT")
    chosen = next(
        n for n in result.verificationGraph["nodes"] if n["id"] == best["bestCandidateId"]
    )
    assert chosen["candidateFields"]["doi"] == JONES.doi


NOT_THAT_WORK = [
    pytest.param("[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 86 (1982) 1700.", id="other-page"),
    pytest.param("[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 87 (1982) 1669.", id="other-volume"),
    pytest.param("[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 86 (1983) 1669.", id="other-year"),
    pytest.param("[1] A. Smith, J. Phys. Chem. 86 (1982) 1669.", id="other-author"),
    pytest.param("[1] R.W. Jones, R.H. Staley, Nature 86 (1982) 1669.", id="other-journal"),
]


@pytest.mark.parametrize("text", NOT_THAT_WORK)
def test_a_titleless_reference_to_a_work_not_indexed_is_never_verified(verifier, text):
    assert verifier.verify(text).status != "verified"


def test_a_book_chapter_cited_by_its_pages(verifier):
    # "Venue 2014, 1–15.": pages, no volume (the parser used to read "1–15" as the volume).
    ref = parse_reference(
        "(1) Laursen, G. H. N.; Thorlund, J. Business Analytics for Managers 2014, 1–15."
    )
    assert (ref.style, ref.volume, ref.pages, ref.first_page) == ("titleless", None, "1-15", "1")
    assert verifier.verify(ref.raw).status == "verified"


BY_NUMBERS = [
    pytest.param({"year": 1982, "volume": "86", "first_page": "1669"}, [JONES.doi], id="page"),
    pytest.param({"year": 1982, "volume": "86", "first_page": "9999"}, [], id="no-such-page"),
    pytest.param({"year": 1983, "volume": "86", "first_page": "1669"}, [], id="other-year"),
    pytest.param({"year": 1982, "volume": "87"}, [], id="other-volume"),
    pytest.param({"year": 2014, "volume": None, "first_page": "1"}, [BOOK.doi], id="book"),
]


@pytest.mark.parametrize(("query", "dois"), BY_NUMBERS)
def test_index_by_numbers(index, query, dois):
    # Records of the year with the same volume or none, whose pages start at the first page or
    # are unknown (the generic records here): those with the page first.
    found = index.by_numbers(**query)
    assert [r.doi for r in found][: len(dois)] == dois
    assert all(r.pages is None for r in found[len(dois) :])


def test_index_by_numbers_puts_the_cited_author_first(index):
    found = index.by_numbers(year=1982, volume="86", author="Other59", limit=3)
    assert len(found) == 3
    assert found[0].doi == "10.1021/j100259"  # of 61 records, the one by the cited author


def test_an_index_built_before_by_numbers_gets_its_sql_index(tmp_path):
    path = tmp_path / "old.sqlite"
    LocalIndex(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP INDEX works_year_volume")
    db.commit()
    db.close()
    LocalIndex(path).close()  # opening it again creates the index
    db = sqlite3.connect(path)
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    assert "works_year_volume" in names


def test_parsed_reference_carries_the_numbers():
    ref = parse_reference("[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 86 (1982) 1669.")
    assert isinstance(ref, ParsedReference)
    assert ParsedCitation is ParsedReference
    assert (ref.volume, ref.first_page, ref.year) == ("86", "1669", 1982)


# --- title typos and generic titles ------------------------------------------------------------


TYPOS = [
    pytest.param("Collins, D. (1977). Ripotse. Books Ireland, (13), 100.", "10.1/riposte", id="transposed"),
    pytest.param("Roe, P. (2011). Teonfovir. Reactions Weekly, 35.", "10.1/tenofovir", id="one-word"),
    pytest.param(
        "Jones, R. W., & Staley, R. H. (1982). Gas-phase chemistry of silver(1+) with alkyl "
        "chlroides. The Journal of Physical Chemistry, 86, 1669–1674.",
        JONES.doi,
        id="long-title",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("text", "doi"), TYPOS)
def test_a_title_with_a_typo_is_found_and_flagged(verifier, text, doi):
    # A word the index has never seen is replaced by the index's words that look like it.
    result = verifier.verify(text)
    assert (result.status, result.field_results["title"]) == (
        "verified-with-error",
        "MATCH_WITH_TYPO",
    ), result.message
    assert doi in result.reference


def test_a_typo_is_not_a_title_of_its_own(index):
    assert [r.doi for r in index.search("Ripotse")] == ["10.1/riposte"]
    assert index.search("Zqxwv") == []  # nothing like it in the vocabulary


def test_a_generic_title_is_found_by_its_author_among_many(verifier):
    # 120 records are called "Introduction"; the cited one is found by its first author.
    result = verifier.verify(f"{name(97)}, A. (1997). Introduction. Journal 97, 1, 1–2.")
    assert result.status == "verified", result.message
    assert "10.1/intro.97" in result.reference


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Nobody, Z. (1937). Introduction. Journal of Nothing, 3, 1–2.", id="no-agreement"),
        pytest.param(f"{name(97)}, A. (1950). Introduction. Journal of Nothing, 3, 1–2.", id="author-only"),
    ],
)  # fmt: skip
def test_a_generic_title_alone_is_never_verified(verifier, text):
    # Without the authors, the year and the venue, "Introduction" is no match; with the author
    # only, it is at best a work with errors.
    assert verifier.verify(text).status != "verified"


# --- sources that do not answer ---------------------------------------------------------------

REFERENCE = "LeCun, Y., Bengio, Y., & Hinton, G. (2015). Deep learning. Nature, 521(7553), 436–444."
OPENALEX_WORK = {
    "id": "https://openalex.org/W1", "doi": "https://doi.org/10.1038/nature14539",
    "title": "Deep learning", "display_name": "Deep learning", "publication_year": 2015,
    "type": "article",
    "authorships": [{"author": {"display_name": n}} for n in
                    ("Yann LeCun", "Yoshua Bengio", "Geoffrey Hinton")],
    "primary_location": {"source": {"display_name": "Nature"}},
    "biblio": {"volume": "521", "issue": "7553", "first_page": "436", "last_page": "444"},
}  # fmt: skip


@pytest.fixture
def server():
    with Loopback() as s:
        yield s


def remote(server, *names):
    settings = LookupSettings(
        crossref_base_url=server.url, openalex_base_url=server.url + "/oa", timeout=0.5, retries=0
    )
    return ReferenceVerifier(sources=list(names), settings=settings)


FAILURES = [
    pytest.param(Reply(200, {"message": {"items": []}}, delay=2), "crossref timed out", id="timeout"),
    pytest.param(Reply(500, "boom"), "crossref answered HTTP 500", id="http-500"),
    pytest.param(Reply(200, "{not json", {"Content-Type": "application/json"}), "crossref", id="bad-json"),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "reason"), FAILURES)
def test_a_source_that_did_not_answer_makes_it_needs_human(server, reply, reason):
    server.routes[("GET", "/works")] = reply
    result = remote(server, "crossref").verify(REFERENCE)
    assert result.status == "needs-human"  # never "unverified" on the word of a silent source
    assert "could not check: " + reason in result.message.replace(
        "Could not check", "could not check"
    )
    assert reason in result.verificationGraph["metadata"]["sourcesFailed"][0]
    assert result.reference.startswith("Not checked: a source did not answer")


def test_a_silent_source_does_not_hide_another_sources_verdict(server):
    server.routes[("GET", "/works")] = Reply(500, "boom")
    server.routes[("GET", "/oa/works")] = Reply(200, {"results": [OPENALEX_WORK]})
    result = remote(server, "crossref", "openalex").verify(REFERENCE)
    assert result.status == "verified"
    assert "Could not check: crossref answered HTTP 500" in result.message
    assert result.verificationGraph["metadata"]["sourcesFailed"] == ["crossref answered HTTP 500"]


def test_not_found_by_sources_that_answered_is_unverified(server):
    server.routes[("GET", "/works")] = Reply(200, {"message": {"items": []}})
    result = remote(server, "crossref").verify(REFERENCE)
    assert result.status == "unverified"
    assert "sourcesFailed" not in result.verificationGraph["metadata"]  # the seed's three keys


# --- any input: a list, never an exception (issue 9's rule for the new queries) ------------------


@settings(max_examples=200, deadline=None)
@given(
    title=st.text(max_size=80),
    author=st.none() | st.text(max_size=30),
    year=st.integers(min_value=-10, max_value=20_000),
    volume=st.none() | st.text(max_size=10),
    page=st.none() | st.text(max_size=10),
)
def test_the_new_queries_take_any_input(index, title, author, year, volume, page):
    assert isinstance(index.search(title, author=author), list)
    found = index.by_numbers(year=year, volume=volume, first_page=page, author=author)
    assert all(r.year == year for r in found)


# --- issue 26: the record's title shows where the cited title ends -------------------------------

REVIEW = record(
    "10.1/review",
    "Book review: The sea. Harbour Press, London, 1990. 120 pp.",
    ["Okafor, C."],
    1992,
    "Review of Oceans",
)


def _labels(text, rec):
    from citeverify_core.references.compare import compare, decide

    ref = parse_reference(text)
    comparison = compare(ref, rec)
    return {f.field: f.label for f in comparison.fields}, decide(ref, [comparison])[0]


def test_a_title_with_sentences_inside_is_read_around_the_records_title():
    text = (
        "Okafor, C. (1992). Book review: The sea. Harbour Press, London, 1990. 120 pp. "
        "Review of Oceans, 8(2), 30–31."
    )
    labels, status = _labels(text, REVIEW)
    assert (labels["title"], labels["venue"], labels["year"], status) == (
        "MATCH", "MATCH", "MATCH", "verified"
    )  # fmt: skip
    vancouver = (
        "Okafor C. Book review: The sea. Harbour Press, London, 1990. 120 pp. Review of Oceans. "
        "1992;8(2):30-1."
    )
    assert _labels(vancouver, REVIEW) == (
        {"title": "MATCH", "authors": "MATCH", "year": "MATCH", "venue": "MATCH",
         "identifier": "ABSENT"},
        "verified",
    )  # fmt: skip


def test_errors_stay_errors_when_the_title_is_read_again():
    # A misspelled title is not the record's title whole: never verified.
    typo = (
        "Okafor, C. (1992). Book reveiw: The sea. Harbour Press, London, 1990. 120 pp. "
        "Review of Oceans, 8(2), 30–31."
    )
    labels, status = _labels(typo, REVIEW)
    assert labels["title"] != "MATCH" and status != "verified"
    # Another year, another journal after the title: still errors.
    wrong = (
        "Okafor, C. (1993). Book review: The sea. Harbour Press, London, 1990. 120 pp. "
        "Journal of Lakes, 8(2), 30–31."
    )
    labels, status = _labels(wrong, REVIEW)
    assert (labels["title"], labels["year"], labels["venue"], status) == (
        "MATCH", "CONTRADICTION", "CONTRADICTION", "verified-with-error"
    )  # fmt: skip


def test_a_longer_cited_title_is_not_read_as_the_records_shorter_one():
    # The record's title is in the string, but what follows it is more title, not its venue.
    rec = record(
        "10.1/tides", "Tides and currents of the north", ["Okafor, C."], 2019, "Ocean Letters"
    )
    text = "Okafor, C. (2019). Tides and currents of the north. Sea coast studies. Ocean Letters, 4, 1–2."
    labels, status = _labels(text, rec)
    assert labels["title"] == "CONTAINS" and status == "verified-with-error"
    glued = "Okafor, C. (2019). Tides and currents of the north sea coast. Ocean Letters, 4, 1–2."
    assert _labels(glued, rec)[0]["title"] == "CONTAINS"


def test_a_trailing_bracket_is_compared_alike_on_both_sides():
    rec = record(
        "10.1/nic", "Nicotine [Methods for biomonitoring in German, 2001]", ["Okafor, C."], 2012,
        "The Collection",
    )  # fmt: skip
    text = "Okafor, C. (2012). Nicotine [Methods for biomonitoring in German, 2001]. The Collection, 1–12."
    labels, status = _labels(text, rec)
    assert labels["title"] == "MATCH" and status == "verified"
    other = "Okafor, C. (2012). Cotinine [Methods for biomonitoring in German, 2001]. The Collection, 1–12."
    assert _labels(other, rec)[0]["title"] != "MATCH"
    # A translated title in brackets is part of the title: a typo in it is a typo.
    typo = text.replace("biomonitoring", "biomonitornig")
    assert _labels(typo, rec) == (
        {"title": "MATCH_WITH_TYPO", "authors": "MATCH", "year": "MATCH", "venue": "MATCH",
         "identifier": "ABSENT"},
        "verified-with-error",
    )  # fmt: skip
    # A designator ("[Internet]", "[Doctoral dissertation]") is no part of it, on either side.
    plain = record("10.1/bay", "Tides of the bay", ["Okafor, C."], 2012, "Oceans")
    tagged = record("10.1/bay", "Tides of the bay [Internet]", ["Okafor, C."], 2012, "Oceans")
    for rec_, cited in ((plain, "Tides of the bay [Internet]"), (tagged, "Tides of the bay")):
        labels, status = _labels(f"Okafor C. {cited}. Oceans. 2012;4:1-2.", rec_)
        assert (labels["title"], status) == ("MATCH", "verified")


def test_fold_drops_control_characters_and_decodes_references():
    from citeverify_core.references.folding import fold

    assert fold("Carbon\u00e2\x80\x93Hydrogen bonds") == fold("Carbon\u00e2Hydrogen bonds")
    assert fold("Soci&#233;t&#233; math&eacute;matique") == fold("Société mathématique")
    assert fold("Tides\tand currents") == "tides and currents"  # whitespace is no control


def test_names_read_from_the_title_are_read_again_before_it():
    # A review's title opens with the reviewed book's authors; Vancouver's sentences take them
    # for more authors of the reference.
    rec = record(
        "10.1/rev2", "Mensah, K. & Boateng, A. (1990): Tides of the bay. Harbour Press; 120 S.",
        ["Okafor, C."], 1992, "Review of Oceans",
    )  # fmt: skip
    text = (
        "Okafor C. Mensah, K. & Boateng, A. (1990): Tides of the bay. Harbour Press; 120 S. "
        "Review of Oceans. 1992;8(2):30-1."
    )
    labels, status = _labels(text, rec)
    assert (labels["title"], labels["authors"], labels["year"], status) == (
        "MATCH", "MATCH", "MATCH", "verified"
    )  # fmt: skip
    swapped = text.replace("Okafor C.", "Okafor C, Adjei K.")
    assert _labels(swapped, rec)[0]["authors"] == "CONTRADICTION"  # an added author stays one


def test_a_year_inside_a_title_read_again_is_not_the_references_year():
    rec = record(
        "10.1/rev3", "Mensah, K. & Boateng, A. (1990): Tides of the bay. Harbour Press; 120 S.",
        ["Okafor, C."], 1992, "Review of Oceans",
    )  # fmt: skip
    text = (
        "Okafor, C., 1992. Mensah, K. & Boateng, A. (1990): Tides of the bay. Harbour Press; "
        "120 S. Review of Oceans, 8(2), pp.30–31."
    )
    assert _labels(text, rec) == (
        {"title": "MATCH", "authors": "MATCH", "year": "MATCH", "venue": "MATCH",
         "identifier": "ABSENT"},
        "verified",
    )  # fmt: skip
    labels, status = _labels(text.replace("1992", "1993"), rec)
    assert (labels["year"], status) == ("CONTRADICTION", "verified-with-error")


def test_apa_without_authors_is_verified_by_its_other_reading(tmp_path):
    index = LocalIndex(tmp_path / "front.sqlite")
    index.add(
        [
            Record(source="LOCAL", title="Front matter", year=2017, venue="Surveying methods",
                   doi="10.1/front"),
            Record(source="LOCAL", title="Back matter", year=2017, venue="Other methods",
                   doi="10.1/back"),
        ]
    )  # fmt: skip
    verifier = ReferenceVerifier(index)
    result = verifier.verify("Front matter. (2017). Surveying methods.")
    assert result.status == "verified", result.message
    # The other reading is a guess: kept only when every field agrees.
    assert verifier.verify("Back matter. (2017). Surveying methods.").status == "unverified"
