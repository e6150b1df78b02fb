"""Citation forms of real papers (issue 34): each form read, and no finding where unsure.

Each test builds the body and the list a class of real layouts produces (JSS and R vignettes,
Chicago notes-bibliography, superscript-numbered journals), and asserts what a user relies on:
the citations are matched to their entries, and no finding is made that is not true.
"""

import json

import pytest

from citeverify_core.references.document import (
    CitationCoverage,
    DocumentLine,
    ExtractedDocument,
    ExtractedReference,
    Location,
)
from citeverify_core.references.document.consistency import check_consistency, read_consistency
from citeverify_core.references.document.report import document_from_dict


def lines(*texts: str, footnote: bool = False, unreliable: bool = False) -> list[DocumentLine]:
    return [
        DocumentLine(t, Location(line=i, page=1), footnote=footnote, unreliable=unreliable)
        for i, t in enumerate(texts, 1)
    ]


def refs(*texts: str, labels: bool = False) -> list[ExtractedReference]:
    return [
        ExtractedReference(
            text=t, number=i, location=Location(line=i, page=9), label=str(i) if labels else None
        )
        for i, t in enumerate(texts, 1)
    ]


def kinds(findings) -> list[str]:
    return [f.kind for f in findings]


JSS = refs(
    "Chappell, R. (1989). Fitting bent lines to data. Applied Statistics, 38, 1-10.",
    "Cytel Inc. (2003). StatXact 6. Cambridge, MA.",
    "Henderson Jr., C. R. (1982). Analysis of covariance in the mixed model. Biometrics, 38, 623-640.",
    "Bates, D. M., and Watts, D. G. (1988). Nonlinear Regression Analysis. Wiley.",
    "Zeileis, A. (2006a). Object-oriented computation of sandwich estimators. JSS, 16(9), 1-16.",
    "Zeileis, A. (2006b). Implementing a class of structural change tests. CSDA, 50, 2987-3008.",
    "Abrahams, D., and Gurtovoy, A. (2004). C++ Template Metaprogramming. Addison-Wesley.",
    "Meena, S., and Sood, R. (2017). A study of things. Journal, 1, 2-3.",
    "van der Laan, M. J., Polley, E., and Hubbard, A. (2007). Super learner. SAGMB, 6, 1.",
    "Müller, K., & Çelik, Ö. (2015). Diacritics in names. Names, 2, 3.",
    "Efron, B., Hastie, T., Johnstone, I., and Tibshirani, R. (2004). Least angle regression. "
    "Annals of Statistics, 32, 407-499.",
)


@pytest.mark.parametrize(
    ("sentence", "entry"),
    [
        ("As shown by Chappell [1989] the fit is good.", 1),
        ("The software (Cytel Inc., 2003) was used.", 2),
        ("This follows (Henderson Jr. 1982) closely.", 3),
        ("This follows (Henderson, Jr., 1982) closely.", 3),
        ("See Bates and Watts (1988, Chapter 6) for the details.", 4),
        ("See (Bates and Watts 1988, Section 2.3, p. 4).", 4),
        ("Sandwiches are computed (see Zeileis 2006a, for more details).", 5),
        ("Templates are used (Abrahams and Gurtovoy, 2004; Zeileis 2006b).", 7),
        ("Meena and Sood (2017) studied this.", 8),
        ("The learner of van der Laan et al. (2007) is used.", 9),
        ("Names with marks (Müller & Çelik, 2015).", 10),
        ("LARS (Efron et al. 2004, Table 3) was used.", 11),
    ],
)
def test_each_form_cites_its_entry(sentence: str, entry: int) -> None:
    citations, findings = check_consistency(lines(sentence), JSS)
    assert entry in {x for c in citations for x in c.entries}
    assert "missing-entry" not in kinds(findings)


def test_every_form_together_leaves_no_entry_uncited() -> None:
    text = (
        "As shown by Chappell [1989]. The software (Cytel Inc., 2003). (Henderson Jr. 1982). "
        "Bates and Watts (1988, Chapter 6). (see Zeileis 2006a, for more details). "
        "(Abrahams and Gurtovoy, 2004; Zeileis 2006b). Meena and Sood (2017). "
        "van der Laan et al. (2007). (Müller & Çelik, 2015). (Efron et al. 2004, Section 3)."
    )
    _, findings = check_consistency(lines(text), JSS)
    assert findings == []


def test_words_after_the_year_do_not_make_a_missing_entry() -> None:
    # "(Smith 2020, for a review)" of a work not listed: the less certain form is not reported.
    _, findings = check_consistency(
        lines("Known (Chappell 1989). (Nobody 2020, for a review)."), JSS
    )
    assert "missing-entry" not in kinds(findings)


def test_a_citation_naming_no_entry_is_still_reported() -> None:
    _, findings = check_consistency(lines("Everything (Chappell 1989; Nobody 2020)."), JSS)
    assert [f.target for f in findings if f.kind == "missing-entry"] == ["Nobody 2020"]


# --- code output is no citation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        "[20] 132 139 145",
        "[1] 0.5",
        '## [6] "Campylobacter curvus"',
        "## [6] methods base",
        "[10] LC_TELEPHONE=C LC_MEASUREMENT=en_US.UTF-8",
        "R> x[12] <- 3",
    ],
)
def test_console_output_is_no_numeric_citation(output: str) -> None:
    listed = refs(
        *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 6)), labels=True
    )
    body = lines("We cite [1], [2], [3], [4] and [5].", output)
    _, findings = check_consistency(body, listed)
    assert findings == []


def test_a_citation_at_a_line_start_is_still_read() -> None:
    listed = refs(
        *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 4)), labels=True
    )
    citations, findings = check_consistency(lines("[3] proposed it, as [1] and [2] did."), listed)
    assert {x for c in citations for x in c.entries} == {1, 2, 3}
    assert findings == []


# --- duplicates -----------------------------------------------------------------------------------


def test_volumes_of_one_work_are_not_duplicates() -> None:
    listed = refs(
        "Knuth, D. E. (1973). The Art of Computer Programming, Vol. III: Sorting. Addison-Wesley.",
        "Knuth, D. E. (1973). The Art of Computer Programming, Vol. IV: Sorting. Addison-Wesley.",
    )
    _, findings = check_consistency(lines("As Knuth (1973a) and Knuth (1973b) show."), listed)
    assert "duplicate-entry" not in kinds(findings)


def test_one_work_twice_is_still_a_duplicate() -> None:
    listed = refs(
        "Knuth, D. E. (1973). The Art of Computer Programming: Sorting and Searching. AW.",
        "Knuth, D. E. (1973). The Art of Computer Programming: Sorting and Searching. AW.",
    )
    _, findings = check_consistency(lines("As Knuth (1973) shows."), listed)
    assert "duplicate-entry" in kinds(findings)


# --- precision: what the reader is not sure of is counted, not reported ---------------------------

APA = refs(
    "Smith, J. (2020). A study of learning. Journal of Learning, 3, 1-10.",
    "Lee, H. (2019). Graphs and their colourings. Discrete Mathematics, 12, 33-40.",
    "Kim, C. (2018). Particles in names. Nature, 1, 2-3.",
    "Park, D. (2017). Umlaut handling. Information Retrieval, 4, 5-6.",
)


def test_an_author_near_the_year_in_an_unknown_form_is_not_called_uncited() -> None:
    body = lines(
        "We follow (Smith, 2020) and (Lee, 2019) and (Kim, 2018).", "Park — 2017 — says so."
    )
    checked = read_consistency(body, APA)
    assert checked.findings == []
    assert checked.coverage == CitationCoverage(
        entries=4, checked=3, not_checked=(("citation forms not read", 1),), citations=3, unread=1
    )
    assert "1 entry not checked: citation forms not read" in checked.notes


def test_a_truly_uncited_entry_is_reported_and_counted_checked() -> None:
    checked = read_consistency(
        lines("We follow (Smith, 2020) and (Lee, 2019) and (Kim, 2018)."), APA
    )
    assert kinds(checked.findings) == ["uncited-entry"]
    assert checked.coverage is not None and checked.coverage.checked == 4


def test_too_few_citations_read_says_so_with_a_count() -> None:
    checked = read_consistency(lines("Only (Smith, 2020) is cited in a form read."), APA)
    assert checked.findings == []
    assert checked.notes == ["3 entries not checked: citation forms not read"]


def test_a_list_not_read_whole_makes_no_missing_entry_but_checks_the_entries_read() -> None:
    body = lines("We follow (Smith, 2020), (Lee, 2019), (Kim, 2018) and (Nobody, 2001).")
    checked = read_consistency(body, APA, incomplete="a page of figures inside the list")
    # "Nobody 2001" may be in the part not read; Park 2017 was read and is not cited.
    assert [(f.kind, f.entry) for f in checked.findings] == [("uncited-entry", 4)]
    assert any("1 citation naming no entry not reported" in note for note in checked.notes)


def test_damaged_text_makes_no_finding() -> None:
    body = lines("We follow (Smith, 2020) and (Nobody, 2001).", unreliable=True)
    checked = read_consistency(body, APA)
    assert checked.findings == []
    assert checked.coverage is not None and checked.coverage.checked == 1


def test_an_entry_of_damaged_text_is_not_called_uncited() -> None:
    listed = [*APA[:3], ExtractedReference(APA[3].text, 4, APA[3].location, unreliable="Type 3")]
    checked = read_consistency(
        lines("We follow (Smith, 2020), (Lee, 2019) and (Kim, 2018)."), listed
    )
    assert checked.findings == []
    assert checked.coverage is not None
    assert checked.coverage.not_checked == (("damaged text (a font without a Unicode map)", 1),)


# --- notes ------------------------------------------------------------------------------------------

CHICAGO = refs(
    "Kuhn, Thomas S. The Structure of Scientific Revolutions. Chicago: University of Chicago "
    "Press, 1962.",
    "Geertz, Clifford. The Interpretation of Cultures. New York: Basic Books, 1973.",
    "Said, Edward W. Orientalism. New York: Pantheon Books, 1978.",
)


def test_notes_cite_by_author_and_title_and_publication_details_are_no_citation() -> None:
    body = [
        *lines("Paradigms change, as is well known.¹ Cultures are read as texts.²"),
        *lines(
            "1. Thomas S. Kuhn, The Structure of Scientific Revolutions (Chicago: University of "
            "Chicago Press, 1962), 23.",
            "2. Clifford Geertz, The Interpretation of Cultures (New York: Basic Books, 1973), 5.",
            "3. Kuhn, Structure of Scientific Revolutions, 40.",
            "4. Ibid., 41.",
            "5. Edward W. Said, Orientalism (New York: Pantheon Books, 1978), 3.",
            footnote=True,
        ),
    ]
    checked = read_consistency(body, CHICAGO)
    assert checked.findings == []
    notes = [c for c in checked.citations if c.kind == "note"]
    assert {x for c in notes for x in c.entries} == {1, 2, 3}
    assert [c.entries for c in notes if c.text.startswith("Ibid")] == [(1,)]


def test_publication_details_in_the_text_are_no_missing_entry() -> None:
    body = lines(
        "As Kuhn argued in The Structure of Scientific Revolutions (Chicago: University of "
        "Chicago Press, 1962), and (Oxford University Press 1990) too.",
        "Geertz, The Interpretation of Cultures, and Said, Orientalism.",
    )
    _, findings = check_consistency(body, CHICAGO)
    assert "missing-entry" not in kinds(findings)


def test_words_of_a_title_out_of_order_are_no_note() -> None:
    body = lines("Kuhn revolutions were scientific and structured.", footnote=True)
    citations, _ = check_consistency(body, CHICAGO)
    assert not [c for c in citations if c.kind == "note"]


def test_superscript_numbers_cite_a_numbered_list() -> None:
    listed = refs(
        *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 5)), labels=True
    )
    text = "Shown before1,2 and since3-4 at 105 K."
    spans = tuple((text.index(s), text.index(s) + len(s)) for s in ("1,2", "3-4", "5 "))
    body = [DocumentLine(text, Location(1, 1), raised=spans)]
    citations, findings = check_consistency(body, listed)
    assert {x for c in citations for x in c.entries} == {1, 2, 3, 4}  # "10⁵" is a power
    assert findings == []


# --- what a user sees -------------------------------------------------------------------------------


def test_coverage_travels_in_json_and_old_json_still_reads() -> None:
    coverage = CitationCoverage(4, 3, (("citation forms not read", 1),), citations=3, unread=1)
    document = ExtractedDocument("p.pdf", "pdf", references=APA, coverage=coverage)
    data = json.loads(json.dumps(document.to_dict()))
    assert data["coverage"]["not_checked"] == [{"reason": "citation forms not read", "count": 1}]
    assert document_from_dict(data) == document
    del data["coverage"]
    assert document_from_dict(data).coverage is None


def test_the_readable_report_says_how_much_was_checked() -> None:
    from citeverify_core.references.document.report import DocumentReport
    from citeverify_core.references.result import ReferenceResult

    coverage = CitationCoverage(4, 3, (("citation forms not read", 1),), citations=3, unread=1)
    document = ExtractedDocument("p.pdf", "pdf", references=APA, coverage=coverage)
    results = [
        ReferenceResult.model_construct(
            status="unverified", reference="", field_results={}, error=None, verificationGraph=None
        )
    ] * 4
    text = DocumentReport(document, results).to_text()
    assert "checked: 3 of 4 entries (1 not checked: 1 citation forms not read)" in text
    assert "1 citation-like place not read" in text


def test_a_note_number_glued_to_the_author_is_still_read() -> None:
    body = [
        *lines("Text."),
        *lines(
            "10Said, Orientalism, 3.", "11Geertz, The Interpretation of Cultures, 9.", footnote=True
        ),
        *lines("12Kuhn, The Structure of Scientific Revolutions, 1.", footnote=True),
    ]
    checked = read_consistency(body, CHICAGO)
    assert {x for c in checked.citations for x in c.entries} == {1, 2, 3}
    assert checked.findings == []


# --- the list's own ways ------------------------------------------------------------------------------


def test_an_entry_printed_with_a_rule_has_the_authors_before_it() -> None:
    listed = refs(
        "Wells, H. G. (1933). The Scientific Romances. London: Gollancz.",
        "——— (1938). Fiction about the future. London: Gollancz.",
        "Lee, H. (2019). Graphs and their colourings. Discrete Mathematics, 12, 33-40.",
    )
    citations, findings = check_consistency(
        lines("As (Wells 1933, 1938) and (Lee 2019) say."), listed
    )
    assert {x for c in citations for x in c.entries} == {1, 2, 3}
    assert findings == []


def test_an_entry_without_an_author_read_is_not_called_uncited() -> None:
    listed = [
        *APA[:3],
        ExtractedReference("A Reference Guide to Films. Boston: Hall, 1981.", 4, Location(4, 9)),
    ]
    checked = read_consistency(
        lines("We follow (Smith, 2020), (Lee, 2019) and (Kim, 2018)."), listed
    )
    assert checked.findings == []
    assert checked.coverage is not None
    assert checked.coverage.not_checked == (("no author read in the entry", 1),)


def test_latex_keys_merged_with_a_star_and_control_entries() -> None:
    listed = [
        ExtractedReference(f"A. Author{i}. Work {i}. Journal, {2000 + i}.", i, Location(i), key=k)
        for i, k in enumerate(("Glashow", "Salam", "Weinberg"), 1)
    ]
    body = lines(
        r"\bstctlcite{BSTcontrol}",
        r"Unified \cite{Glashow,*Salam,*Weinberg}.",
        "(?) is no finding in a source.",
    )
    _, findings = check_consistency(body, listed)
    assert findings == []


def test_possessives_and_apostrophes_in_names() -> None:
    listed = refs(
        "Buss, D. M. (2004). Evolutionäre Psychologie. München: Pearson.",
        "Il’inskaja, V. A. (1965). Nekotorye motivy ranneskifs kogo zverinogo stilja. Moskva.",
        "Jones, K. (2001). A title here. Journal, 1, 2.",
    )
    body = lines(
        "As Buss’ (2004, p. 123) and Jones’ (2001) say; see V. A. Il’inskaja, Nekotorye motivy ranneskifs."
    )
    citations, findings = check_consistency(body, listed)
    assert {x for c in citations for x in c.entries} == {1, 2, 3}
    assert findings == []


def test_a_film_director_and_country_are_no_missing_entry() -> None:
    _, findings = check_consistency(
        lines("Seen (Chappell 1989) and (Stanley Kubrick, GB/USA 1968), (Daniel Haller, GB 1965)."),
        JSS,
    )
    assert "missing-entry" not in kinds(findings)


def test_a_surname_and_given_name_before_a_year_are_no_two_authors() -> None:
    _, findings = check_consistency(
        lines("Known (Chappell 1989). Müller, Hans (2000) wrote it."), JSS
    )
    assert "missing-entry" not in kinds(findings)


def test_many_numbers_beyond_the_list_mean_it_was_not_read_whole() -> None:
    listed = refs(
        *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 6)), labels=True
    )
    checked = read_consistency(lines("See [1], [2], [3], [4] and [7, 8–9, 12]."), listed)
    assert checked.findings == []
    assert any("may not have been read whole" in n for n in checked.notes)


def test_one_number_beyond_the_list_is_still_reported() -> None:
    listed = refs(
        *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 6)), labels=True
    )
    _, findings = check_consistency(lines("See [1], [2], [3], [4], [5] and [6]."), listed)
    assert kinds(findings) == ["missing-entry"]


def test_an_empty_page_argument_leaves_a_comma() -> None:
    listed = refs(
        *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 4)), labels=True
    )
    citations, findings = check_consistency(lines("Shown [1, 2, ] and [3, ]."), listed)
    assert {x for c in citations for x in c.entries} == {1, 2, 3}
    assert findings == []


NUMBERED = refs(
    *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 7)), labels=True
)


def test_a_numbered_list_cited_once_in_brackets_has_its_other_entries_uncited() -> None:
    # An R vignette citing [1] of six: the only form is brackets, the others are not cited.
    _, findings = check_consistency(lines("Data of the consortium [1].", "More text."), NUMBERED)
    assert [f.entry for f in findings if f.kind == "uncited-entry"] == [2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    "other",
    [
        DocumentLine("1 Kuhn, Structure, 40.", Location(9, 1), footnote=True),  # a short note
        DocumentLine("2 Kuhn, Structure (Chicago 1962).", Location(9, 1), footnote=True),
        DocumentLine("Shown before9 again.", Location(9, 1), raised=((12, 13),)),  # a note call
        DocumentLine("Shown before.3 and after.4 too.", Location(9, 1)),
    ],
)
def test_a_sign_of_another_citation_form_keeps_them_unchecked(other: DocumentLine) -> None:
    checked = read_consistency([*lines("Data of the consortium [1]."), other], NUMBERED)
    assert "uncited-entry" not in kinds(checked.findings)
    assert checked.coverage is not None and checked.coverage.checked < 6


def test_notes_that_were_read_and_cite_nothing_leave_the_entries_checked() -> None:
    # hpsdiss: its notes were read ("2Although it is rather small, ..."), and so were the note
    # calls; entries its brackets never name are uncited.
    body = [
        *lines("Data of the consortium [1].", "An attenuation.2"),
        DocumentLine(
            "2Although it is rather small, this attenuation", Location(9, 1), footnote=True
        ),
    ]
    body[1] = DocumentLine("An attenuation.2", Location(2, 1), raised=((15, 16),))
    checked = read_consistency(body, NUMBERED)
    assert [f.entry for f in checked.findings if f.kind == "uncited-entry"] == [2, 3, 4, 5, 6]


def test_an_entry_with_an_accent_apart_from_its_letter_is_not_called_uncited() -> None:
    listed = [
        *APA[:3],
        ExtractedReference(
            "Magnus ¯strand. Contrast normalization. J. Comp. Biol., 2003.", 4, Location(4, 9)
        ),
    ]
    checked = read_consistency(
        lines("We follow (Smith, 2020), (Lee, 2019) and (Kim, 2018)."), listed
    )
    assert checked.findings == []
    assert checked.coverage is not None
    assert checked.coverage.not_checked == (("damaged text (a font without a Unicode map)", 1),)


def test_matrix_rows_are_no_citations() -> None:
    listed = refs(
        *(f"A. Author{i}, Title {i} of a work, J. X, {1990 + i}." for i in range(1, 3)), labels=True
    )
    _, findings = check_consistency(
        lines("See [1] and [2].", "[2,] 1 4 7", "x[5,] is a row"), listed
    )
    assert findings == []


def test_an_entry_read_from_program_output_is_not_called_uncited() -> None:
    listed = [
        *NUMBERED[:3],
        ExtractedReference("chr2 2000-3000 * | 0.10 7 8 1", 4, Location(4, 9), label="4"),
    ]
    checked = read_consistency(lines("See [1], [2] and [3]."), listed)
    assert checked.findings == []
    assert checked.coverage is not None
    assert checked.coverage.not_checked == (("the entry looks like a program's output", 1),)


def test_keys_of_an_example_bibliography_shown_in_the_body_are_no_missing_entry() -> None:
    listed = [
        ExtractedReference("M. Shell. mciteplus. CTAN, 2013.", 1, Location(1), key="ctan:mciteplus")
    ]
    body = lines(
        r"Get it at CTAN \cite{ctan:mciteplus}. Write \cite{Glashow,*Salam} and then:",
        r"\bibitem{Glashow} S. L. Glashow, Nucl. Phys. 22, 579 (1961).",
        r"\bibitem{Salam} A. Salam, in Elementary Particle Theory.",
        r"A real slip \cite{Nobody}.",
    )
    _, findings = check_consistency(body, listed)
    assert [f.target for f in findings] == ["Nobody"]


def test_where_brackets_cite_a_raised_number_is_a_note_call() -> None:
    text = "Activate the hook.1 Assuming [2] and [3]."
    body = [DocumentLine(text, Location(1, 1), raised=((18, 19),))]
    _, findings = check_consistency(body, NUMBERED[:3])
    assert [(f.kind, f.entry) for f in findings] == [("uncited-entry", 1)]


def test_a_work_listed_under_its_title_is_cited_by_its_editor() -> None:
    """A collection listed under its title, its compiler named at the end, cited by the
    compiler's name and year: matched, not a missing entry. A name no entry holds still is."""
    listed = refs(
        "CinémAction Nr. 115, 2005: Utopie et Cinéma. Zusammengestellt von Yona Dureau.",
        "Kracauer, Siegfried (1960): Theory of Film. New York: Oxford University Press.",
    )
    body = lines(
        "as shown by Dureau (2005) and by Kracauer (1960), it is so,",
        "unlike what Morin (1956) says.",
    )
    citations, findings = check_consistency(body, listed)
    assert [(c.targets, c.entries) for c in citations] == [
        (("Dureau 2005",), (1,)),
        (("Kracauer 1960",), (2,)),
        (("Morin 1956",), (None,)),
    ]
    assert [(f.kind, f.target) for f in findings] == [("missing-entry", "Morin 1956")]


def test_a_year_chooses_among_an_author_s_works_in_a_list_that_prints_years_last() -> None:
    """plainnat prints the year last (the list reads as MLA-like), yet "(Affymetrix, 2001)"
    cites the 2001 edition, not the first work of that author."""
    listed = refs(
        "Affymetrix. Microarray Suite User Guide. Affymetrix, Santa Clara, CA, version 4, 1999.",
        "Affymetrix. Microarray Suite User Guide. Affymetrix, Santa Clara, CA, version 5, 2001.",
        "Li, C. and Wong, W. H. Model-based analysis of oligonucleotide arrays. PNAS, 98, 2001.",
    )
    body = lines("as in (Affymetrix, 2001), unlike (Affymetrix, 1999) and Li and Wong (2001).")
    citations, findings = check_consistency(body, listed)
    assert [(c.targets, c.entries) for c in citations] == [
        (("Affymetrix 2001",), (2,)),
        (("Affymetrix 1999",), (1,)),
        (("Li and Wong 2001",), (3,)),
    ]
    assert findings == []


def test_a_lexicon_article_cited_title_first_then_its_author_is_cited() -> None:
    # biblatex-archaeology's notes: "RGA VII, S. 501 s. v. „Erik Blutaxt“ (G. Authén-Blom)".
    listed = refs(
        "Authén-Blom, G. in: RGA VII. (Berlin, New York: de Gruyter 1989), S. 501–502 s. v. "
        "„Erik Blutaxt“.",
        "Bauchhenß, G. in: RGA III. (Berlin, New York: de Gruyter 1978), S. 450–458 "
        "s. v. „Brettspiel“.",
    )
    body = [
        *lines("Ein Brettspiel ist belegt.¹"),
        *lines(
            "1 RGA III, S. 433 s. v. „Brettspiel“ (G. Bauchhenß). – RGA VII, S. 501 s. v. "
            "„Erik Blutaxt“ (G. Authén-Blom).",
            footnote=True,
        ),
    ]
    checked = read_consistency(body, listed)
    assert "uncited-entry" not in kinds(checked.findings)
    # The title's words far before a name are no citation of that name's entry.
    far = lines(
        "1 RGA III, S. 433 s. v. „Brettspiel“ (G. Bauchhenß).",
        "RGA VII is a lexicon. "
        + "Many words follow here about other things. " * 3
        + "Authén-Blom",
    )
    assert [(f.kind, f.entry) for f in read_consistency(far, listed).findings] == [
        ("uncited-entry", 1)
    ]


def test_a_style_guide_s_placeholder_author_is_no_citation() -> None:
    # zootaxa's instructions: "Internet resources Author (2002) Title of website, ...".
    listed = refs("Smith, A. (1999) Title of the paper. Journal, 1, 2-3.")
    body = lines(
        "As Smith (1999) showed. Internet resources Author (2002) Title of website, database.",
        "Cite as (Authors 2003) or (Surname, 2004).",
    )
    assert read_consistency(body, listed).findings == []
    # A real name in the same form still makes a finding.
    body = lines("As Smith (1999) and Jones (2002) showed.")
    assert kinds(read_consistency(body, listed).findings) == ["missing-entry"]


def test_a_table_s_source_note_makes_no_missing_entry_but_still_cites() -> None:
    # An ApJ table note typed by hand: "References. — (1) Barbuy, ...; (8) Gratton & Sneden (1988)".
    listed = refs(
        "Barbuy, B., Spite, F., & Spite, M. 1985, A&A, 144, 343",
        "Kron, G. E. 1984, PASP, 96, 198",
    )
    body = lines(
        "As Kron (1984) showed.",
        "References. — (1) Barbuy, Spite, & Spite (1985); (6) Gratton & Ortolani 1986;",
        "(8) Gratton & Sneden (1988); (9) Gratton & Sneden 1991.",
    )
    checked = read_consistency(body, listed)
    assert checked.findings == []
    assert {x for c in checked.citations for x in c.entries} - {None} == {1, 2}
    # The same citation in running text is reported.
    body = lines("As Kron (1984) and Barbuy et al. (1985) showed, and Gratton & Sneden (1988).")
    assert kinds(read_consistency(body, listed).findings) == ["missing-entry"]


@pytest.mark.parametrize("locator", ["Abs. 3.3.4", "S. 40", "Kap. 2", "chap. 3", "no. 5"])
def test_an_alphabetic_citation_with_a_locator_in_another_language(locator: str) -> None:
    listed = refs("F. Mittelbach. The LaTeX Companion. 1994.", "D. E. Knuth. The TeXbook. 1986.")
    listed = [
        ExtractedReference(text=r.text, number=r.number, location=r.location, label=label)
        for r, label in zip(listed, ["GMS94", "Knu86"], strict=True)
    ]
    body = lines(f"As described in [GMS94, {locator}] and [Knu86].")
    checked = read_consistency(body, listed)
    assert {x for c in checked.citations for x in c.entries} == {1, 2}
    assert checked.findings == []


def test_a_year_last_list_cited_with_years_calls_the_other_work_of_the_author_uncited() -> None:
    # ROTS: entries print their year last (read as MLA-like); the body cites "(Elo 2008)" and
    # "Elo et al. (2008)": the surname in the text is the 2008 work's, the 2009 one is uncited.
    listed = refs(
        "Elo, L.L. et al., Reproducibility-optimized test statistic. IEEE/ACM TCBB, 5, 2008.",
        "Elo, L.L. et al. Optimized detection of differential expression. Briefings, 10, 2009.",
        "Seyednasrollah et al. ROTS: reproducible RNA-seq biomarker detector. Briefings, 2015.",
    )
    body = lines(
        "The method (Elo 2008) was extended (Seyednasrollah et al. 2015).",
        "As Elo et al. (2008) showed.",
    )
    checked = read_consistency(body, listed)
    assert [(f.kind, f.entry) for f in checked.findings] == [("uncited-entry", 2)]
