"""Citation consistency (issue 26): in-text citations matched to the reference list, findings."""

import itertools
import json
import random
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeverify_core.references.document import (
    DocumentLine,
    ExtractedReference,
    Location,
    extract_document,
)
from citeverify_core.references.document.consistency import check_consistency

# --- building documents ---------------------------------------------------------------------------


def body(*texts: str, page: int | None = 1) -> list[DocumentLine]:
    """Body lines 1, 2, 3, ... on one page."""
    return [DocumentLine(t, Location(line=i, page=page)) for i, t in enumerate(texts, 1)]


def numbered(n: int) -> list[ExtractedReference]:
    """An IEEE list [1]..[n] of distinct works on page 9."""
    surnames = ["Smith", "Jones", "Lee", "Kim", "Brown", "Garcia", "Miller", "Davis", "Wilson"]
    return [
        ExtractedReference(
            text=(
                f'A. {surnames[i % len(surnames)]}{i}, "On problem number {i} of '
                f'{["graphs", "codes", "fields", "rings"][i % 4]}," IEEE Trans. X, vol. {i}, '
                f"pp. {i}-{i + 9}, {1990 + i}."
            ),
            number=i,
            location=Location(line=i, page=9),
            label=str(i),
        )
        for i in range(1, n + 1)
    ]


APA = [
    "Smith, J., & Jones, K. (2020). A study of learning in groups. Journal of Learning, 3(2), 1-10.",
    "Lee, H. (2019a). Graphs and their colourings. Discrete Mathematics, 12, 33-40.",
    "Lee, H. (2019b). Colourings of planar maps. Discrete Mathematics, 13, 41-50.",
    "van der Berg, A., Kim, C., & Park, D. (2018). Particles in names. Nature, 1, 2-3.",
    "Müller, H. (2017). Umlaut handling in indexes. Information Retrieval, 4, 5-6.",
    "García-López, M., & O'Neil, P. (2016). Hyphens and apostrophes. Names Quarterly, 7, 8-9.",
    "World Health Organization. (2021). Global report on things. WHO Press.",
    "Smith, J. (2015). An early single-author book. Academic Press.",
]


def author_date(texts: list[str] = APA) -> list[ExtractedReference]:
    return [
        ExtractedReference(text=t, number=i, location=Location(line=i, page=9))
        for i, t in enumerate(texts, 1)
    ]


def keyed(*keys: str) -> list[ExtractedReference]:
    return [
        ExtractedReference(
            text=f"A. Author{i}. Title number {i} of a keyed work. Journal, {2000 + i}.",
            number=i,
            location=Location(line=i),
            key=k,
        )
        for i, k in enumerate(keys, 1)
    ]


def kinds(findings):
    return [f.kind for f in findings]


# --- numeric ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "targets"),
    [
        ("[12]", ("12",)),
        ("[3-5]", ("3", "4", "5")),
        ("[3–5]", ("3", "4", "5")),
        ("[1, 4, 7]", ("1", "4", "7")),
        ("[1,3-5]", ("1", "3", "4", "5")),
        ("[3]-[5]", ("3", "4", "5")),
        ("[3]–[5]", ("3", "4", "5")),
        ("[12, p. 4]", ("12",)),
        ("[2; 6]", ("2", "6")),
        ("[see 9]", ("9",)),
    ],
)
def test_numeric_forms_are_found_and_matched(written, targets):
    refs = numbered(12)
    citations, _ = check_consistency(body(f"This was shown before {written} and holds."), refs)
    assert [c.text for c in citations] == [written]
    (citation,) = citations
    assert citation.kind == "numeric"
    assert citation.targets == targets
    assert citation.entries == tuple(int(t) for t in targets)
    assert citation.location == Location(line=1, page=1)


def test_adjacent_brackets_are_two_citations():
    citations, _ = check_consistency(body("as in [3], [4] and [5]"), numbered(5))
    assert [c.targets for c in citations] == [("3",), ("4",), ("5",)]


def test_a_citation_split_across_lines_is_found_at_its_first_line():
    lines = body("Earlier work [2,", "3] and later ones [4–", "6] agree.")
    citations, _ = check_consistency(lines, numbered(6))
    assert [(c.targets, c.location.line) for c in citations] == [
        (("2", "3"), 1),
        (("4", "5", "6"), 2),
    ]


def test_planted_missing_numeric_entry_is_found_where_it_is():
    refs = numbered(12)
    lines = body(*(f"Sentence {i} cites [{i}]." for i in range(1, 13)), "And also [14] here.")
    citations, findings = check_consistency(lines, refs)
    assert kinds(findings) == ["missing-entry"]
    (missing,) = findings
    assert missing.target == "14"
    assert missing.location == Location(line=13, page=1)
    assert "[14]" in missing.message
    assert "page 1, line 13" in missing.message
    assert "[12]" in missing.message  # what the list goes up to
    assert citations[-1].entries == (None,)


def test_planted_uncited_numeric_entry_is_found_with_the_entry_location():
    refs = numbered(10)
    lines = body("We follow [1]-[3] and [4, 5].", "Then [6], [8] and [9-10].")
    _, findings = check_consistency(lines, refs)
    assert kinds(findings) == ["uncited-entry"]
    (uncited,) = findings
    assert uncited.entry == 7
    assert uncited.target == "7"
    assert uncited.location == Location(line=7, page=9)
    assert "[7]" in uncited.message


def test_a_missing_number_cited_several_times_is_one_finding():
    refs = numbered(3)
    lines = body("[1] [2] [3] and [4].", "Again [4].", "And [4].")
    _, findings = check_consistency(lines, refs)
    assert kinds(findings) == ["missing-entry"]
    assert findings[0].location.line == 1
    assert "(and 2 more times)" in findings[0].message


@pytest.mark.parametrize(
    ("written", "list_kind"),
    [("[?]", "numeric"), ("[?, ?]", "numeric"), ("(?)", "author-date"), ("?? (??)", "author-date")],
)
def test_a_citation_latex_could_not_resolve_is_a_missing_entry(written, list_kind):
    # A typeset paper shows "[?]" (natbib "(?)", "?? (??)") where a key had no entry: the entry
    # is missing though its key is gone from the PDF. One finding, counting the others.
    if list_kind == "numeric":
        refs, cites = numbered(3), "[1] [2] [3]"
    else:
        refs = [
            ExtractedReference(text=t, number=i, location=Location(line=i, page=9))
            for i, t in enumerate(APA[:2], 1)
        ]
        cites = "(Smith & Jones, 2020) and (Lee, 2019)"
    lines = body(f"We cite {cites}.", f"And this {written} again.", f"Once more {written}.")
    _, findings = check_consistency(lines, refs)
    missing = [f for f in findings if f.kind == "missing-entry"]
    assert len(missing) == 1, findings
    assert missing[0].target == "?"
    assert missing[0].location.line == 2
    assert written in missing[0].message and "(and 1 more time)" in missing[0].message
    # A question mark in parentheses inside words is no citation.
    _, clean = check_consistency(body(f"We cite {cites}.", "Is it so (really?) or not?"), refs)
    assert not [f for f in clean if f.kind == "missing-entry"]


def test_clean_numeric_document_with_mathematics_years_and_tables_has_no_findings():
    refs = numbered(8)
    lines = body(
        "Introduction",
        "Deep models [1], [2] work for x ∈ [0, 1] and for y in the interval [2, 40].",
        "The matrix A[3][4] and the list a[17] hold values; f(x)[22] too.",
        "Scores (Table 2) were computed in 2020 (n = 12) for [3-5] with weights [0.5, 1.5].",
        "A bracketed year [2020] and a quantity [250] are no citations; [citation needed].",
        "Intervals [a, b] and [-1, 1] and [0,1]^2 and [01] are mathematics. See [6, 7] and",
        "[8].",
    )
    citations, findings = check_consistency(lines, refs)
    assert findings == []
    cited = {t for c in citations for t in c.targets}
    assert cited == {str(i) for i in range(1, 9)}


def test_quantities_vectors_and_nested_brackets_beyond_the_list_are_not_citations():
    refs = numbered(6)
    lines = body(
        "Layers [64, 128, 256] are stacked; the range is [10, 30] mm and lasts [9, 12] ms.",
        "The matrix [[1, 2], [3, 40]] and the shape [3, 224, 224]; the sizes were [5, 25].",
        "Differences between [1] and [2] are small; see [3]-[6].",
    )
    citations, findings = check_consistency(lines, refs)
    assert findings == []
    assert [c.text for c in citations] == ["[1]", "[2]", "[3]-[6]"]


def test_numbers_in_parentheses_when_no_bracket_cites():
    refs = numbered(8)
    lines = body(
        "Deep models (1) beat shallow ones (2, 3) and (4-6); as Eq. (10) and Table (12) show,",
        "the energy is E = mc^2 (9)",
        "and (7) holds, as does (8). Counts (n = 5) and steps (1) first, (2) second.",
        "A claim with no entry (13) here.",
    )
    citations, findings = check_consistency(lines, refs)
    assert [c.text for c in citations] == [
        "(1)",
        "(2, 3)",
        "(4-6)",
        "(7)",
        "(8)",
        "(2)",
        "(13)",
    ]  # fmt: skip (not "Eq. (10)", "Table (12)", "mc^2 (9)" at a line end, "steps (1)")
    assert [(f.kind, f.target, f.location) for f in findings] == [
        ("missing-entry", "13", Location(line=4, page=1))
    ]
    assert findings[0].message.startswith("(13) on page 1, line 4")


def test_numbers_in_parentheses_are_not_read_when_brackets_cite_or_few_match():
    refs = numbered(8)
    citations, findings = check_consistency(body("See [1]-[8] and Eq. (3), (4) and (12)."), refs)
    assert [c.text for c in citations] == ["[1]-[8]"]
    assert findings == []
    # Enumerations that name a quarter of the list: not the document's way of citing.
    citations, findings = check_consistency(body("Steps: (1) read, (2) write (15)."), refs)
    assert (citations, findings) == ([], [])


def test_unlabelled_and_relabelled_entries_of_a_numbered_list_are_not_called_uncited():
    refs = [
        *numbered(3),
        ExtractedReference("Appendix A. Proofs of the lemmas.", 4, Location(40, 9)),
    ]
    refs.append(ExtractedReference(refs[2].text, 5, Location(41, 9), label="3"))
    citations, findings = check_consistency(body("See [ 1 ], [2] and [3]."), refs)
    assert [c.targets for c in citations] == [("1",), ("2",), ("3",)]
    assert [f.kind for f in findings] == ["duplicate-entry"]


def test_a_huge_range_is_not_expanded():
    refs = numbered(40)
    citations, _ = check_consistency(body("See [1-40] and [3-500]."), refs)
    assert [c.text for c in citations] == ["[1-40]"]
    assert len(citations[0].targets) == 40


def test_numbers_in_brackets_are_ignored_in_an_author_date_document():
    citations, findings = check_consistency(
        body("As (Smith & Jones, 2020) show, [14] and [2, 3] are mathematics here."),
        author_date(APA[:1]),
    )
    assert [c.kind for c in citations] == ["author-date"]
    assert findings == []


def test_alphabetic_labels():
    refs = [
        ExtractedReference("J. Smith. A work. 2020.", 1, Location(1), label="Smi20"),
        ExtractedReference("K. Lee, M. Kim. Another. 2019.", 2, Location(2), label="LK19"),
        ExtractedReference("P. Q. Third. 2001.", 3, Location(3), label="Thi01"),
    ]
    citations, findings = check_consistency(
        body("As [Smi20, LK19] show and [Thi01, p. 3]; but [Xyz99] is unknown; [a, b]."), refs
    )
    assert [c.targets for c in citations] == [("Smi20", "LK19"), ("Thi01",), ("Xyz99",)]
    assert [(f.kind, f.target) for f in findings] == [("missing-entry", "Xyz99")]


# --- author-date --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "written", "targets", "entries"),
    [
        (
            "It is so (Smith & Jones, 2020).",
            "(Smith & Jones, 2020)",
            ("Smith and Jones 2020",),
            (1,),
        ),
        (
            "It is so (Smith & Jones, 2020; Lee, 2019a).",
            "(Smith & Jones, 2020; Lee, 2019a)",
            ("Smith and Jones 2020", "Lee 2019a"),
            (1, 2),
        ),
        ("So (Smith 2015, p. 4).", "(Smith 2015, p. 4)", ("Smith 2015",), (8,)),
        ("So (see Smith, 2015).", "(see Smith, 2015)", ("Smith 2015",), (8,)),
        ("So (J. Smith, 2015).", "(J. Smith, 2015)", ("Smith 2015",), (8,)),
        (
            "So (e.g., Lee, 2019a, 2019b).",
            "(e.g., Lee, 2019a, 2019b)",
            ("Lee 2019a", "Lee 2019b"),
            (2, 3),
        ),
        ("So (Lee, 2019a, b).", "(Lee, 2019a, b)", ("Lee 2019a", "Lee 2019b"), (2, 3)),
        ("As Lee (2019b) said.", "Lee (2019b)", ("Lee 2019b",), (3,)),
        (
            "As van der Berg et al. (2018) said.",
            "van der Berg et al. (2018)",
            ("van der Berg et al. 2018",),
            (4,),
        ),
        (
            "So (van der Berg et al., 2018).",
            "(van der Berg et al., 2018)",
            ("van der Berg et al. 2018",),
            (4,),
        ),
        (
            "As Smith and Jones (2020) said.",
            "Smith and Jones (2020)",
            ("Smith and Jones 2020",),
            (1,),
        ),
        (
            "As Smith and Jones [2020] said.",
            "Smith and Jones [2020]",
            ("Smith and Jones 2020",),
            (1,),
        ),
        (
            "As said [Smith and Jones 2020; Lee 2019a].",
            "[Smith and Jones 2020; Lee 2019a]",
            ("Smith and Jones 2020", "Lee 2019a"),
            (1, 2),
        ),
        ("As Muller (2017) said.", "Muller (2017)", ("Muller 2017",), (5,)),
        ("As Müller (2017, p. 9) said.", "Müller (2017, p. 9)", ("Müller 2017",), (5,)),
        (
            "So (García-López & O’Neil, 2016).",
            "(García-López & O’Neil, 2016)",
            ("García-López and O’Neil 2016",),
            (6,),
        ),
        (
            "As Garcia-Lopez and O'Neil (2016) said.",
            "Garcia-Lopez and O'Neil (2016)",
            ("Garcia-Lopez and O'Neil 2016",),
            (6,),
        ),
        (
            "So (World Health Organization, 2021).",
            "(World Health Organization, 2021)",
            ("World Health Organization 2021",),
            (7,),
        ),
        ("Smith’s (2015) book.", "Smith’s (2015)", ("Smith 2015",), (8,)),
        # "Smith 2020" is taken to be Smith & Jones 2020 rather than called missing.
        ("So (Smith, 2015, 2020).", "(Smith, 2015, 2020)", ("Smith 2015", "Smith 2020"), (8, 1)),
    ],
)
def test_author_date_forms_are_found_and_matched(sentence, written, targets, entries):
    citations, _ = check_consistency(body(sentence), author_date())
    assert [c.text for c in citations] == [written]
    assert citations[0].kind == "author-date"
    assert citations[0].targets == targets
    assert citations[0].entries == entries


def test_a_surname_that_is_also_a_common_word_is_read_when_it_names_an_entry():
    refs = author_date(
        [
            "Law, J. (2004). After method: Mess in social science research. Routledge.",
            "Page, S. T., & Lee, K. (1997). Differential contribution of things. Cell, 1, 2.",
            "See, S. G. (2013). The riskiest of them all. Journal, 3, 4-5.",
        ]
    )
    citations, findings = check_consistency(
        body("As Law (2004) and (Page & Lee, 1997) and See (2013) argue, Python (2020) helps."),
        refs,
    )
    assert [c.entries for c in citations] == [(1,), (2,), (3,)]
    assert findings == []


def test_single_and_two_author_works_of_one_name_and_year_are_told_apart():
    refs = author_date(
        [
            "Smith, J., & Lee, K. (2020). Joint work on a topic. Journal A, 1, 1-2.",
            "Smith, J. (2020). Solo work on the topic. Journal B, 2, 3-4.",
            "Smith, J., Lee, K., & Kim, M. (2020). Team work on the topic. Journal C, 3, 5-6.",
        ]
    )
    citations, findings = check_consistency(
        body("(Smith, 2020), (Smith & Lee, 2020) and (Smith et al., 2020)."), refs
    )
    assert [c.entries for c in citations] == [(2,), (1,), (3,)]
    assert findings == []


def test_year_letters_follow_the_list_order_when_the_list_prints_none():
    refs = author_date(
        [
            "Smith, J. (2020). Alpha title of a work. Journal A, 1, 1-2.",
            "Smith, J. (2020). Beta title of a work. Journal B, 2, 3-4.",
        ]
    )
    citations, findings = check_consistency(body("Smith (2020b) and (Smith, 2020a)."), refs)
    assert [c.entries for c in citations] == [(2,), (1,)]
    assert findings == []


def test_year_letters_printed_in_the_list_win_over_its_order():
    refs = author_date(
        [
            "Smith, J. (2020b). Alpha title of a work. Journal A, 1, 1-2.",
            "Smith, J. (2020a). Beta title of a work. Journal B, 2, 3-4.",
        ]
    )
    citations, _ = check_consistency(body("Smith (2020a) and Smith (2020b)."), refs)
    assert [c.entries for c in citations] == [(2,), (1,)]


def test_entry_the_parser_cannot_read_is_matched_by_its_first_name_and_year():
    refs = author_date(["ACME Consortium 2011 internal memo without any usual layout"])
    citations, _ = check_consistency(body("As noted (ACME Consortium, 2011)."), refs)
    assert citations[0].entries == (1,)


def test_planted_missing_author_date_entry_names_the_near_miss():
    lines = body(
        "Learning in groups (Smith & Jones, 2020) and colourings (Lee, 2019a; Lee, 2019b).",
        "Particles (van der Berg et al., 2018), umlauts (Müller, 2017), hyphens",
        "(García-López & O'Neil, 2016), reports (World Health Organization, 2021) and",
        "an early book (Smith, 2015). Finally Taylor (2012) and Smith (2014) disagree.",
    )
    _, findings = check_consistency(lines, author_date())
    assert [(f.kind, f.target, f.location) for f in findings] == [
        ("missing-entry", "Taylor 2012", Location(line=4, page=1)),
        ("missing-entry", "Smith 2014", Location(line=4, page=1)),
    ]
    assert "Smith 2015" in findings[1].message  # the list has Smith with other years


def test_planted_uncited_author_date_entry():
    lines = body(
        "Learning in groups (Smith & Jones, 2020) and colourings (Lee, 2019a, b).",
        "Particles (van der Berg et al., 2018), umlauts (Müller, 2017), hyphens",
        "(García-López & O'Neil, 2016) and an early book (Smith, 2015).",
    )
    _, findings = check_consistency(lines, author_date())
    assert [(f.kind, f.entry, f.location) for f in findings] == [
        ("uncited-entry", 7, Location(line=7, page=9))
    ]
    assert "World Health Organization" in findings[0].message


def test_clean_author_date_document_with_years_tables_and_proper_nouns_has_no_findings():
    lines = body(
        "1 Introduction",
        "In 2020 (Table 2) the values (n = 12) rose; see (Fig. 3, 2020 data) and (2020).",
        "Since (2019) and In (2020) nothing changed. Table (2020) is a heading. The Project",
        "Apollo (1969) and ImageNet (2009) and the COVID-19 pandemic (2020) are no citations,",
        "nor (COVID-19 Europe, 2020) or (GPT-4, 2023) or (personal communication, 2021),",
        "nor Python (2020), Copyright (2021), (Census, 2020) or (Survey 2019, p. 3).",
        "nor are (January 2020), (p < 0.05), [0, 1], [12] or (Section 3, 2021 revision).",
        "Learning in groups (Smith & Jones, 2020) and colourings (Lee, 2019a, b). As",
        "van der Berg et al. (2018) and Müller (2017) show, hyphens (García-López & O'Neil,",
        "2016) matter (World Health Organization [WHO], 2021; cf. Smith, 2015, p. 12).",
    )
    citations, findings = check_consistency(lines, author_date())
    assert findings == []
    assert sorted({e for c in citations for e in c.entries}) == list(range(1, 9))


def test_an_organisation_is_cited_by_its_initials():
    citations, findings = check_consistency(
        body("First (World Health Organization [WHO], 2021), then (WHO, 2021) and WHO (2021)."),
        author_date([APA[6]]),
    )
    assert [c.entries for c in citations] == [(1,), (1,), (1,)]
    assert findings == []


def test_line_breaks_inside_a_paragraph_line_are_spaces():
    citations, _ = check_consistency(
        body("as (Smith &\nJones,\t2020) and Lee\n(2019a)"), author_date()
    )
    assert [c.entries for c in citations] == [(1,), (2,)]


def test_a_name_split_by_a_line_end_hyphen_is_joined():
    refs = author_date(["Vandenberghe, L. (2010). Convex things. SIAM, 1, 2-3."])
    citations, _ = check_consistency(body("as (Vanden-", "berghe, 2010) shows"), refs)
    assert citations[0].entries == (1,)
    # TeX hyphenates a name in capitals too: "GEF-" + "FLAUT" cites GEFFLAUT.
    caps = author_date(["GEFFLAUT, T. (2010). Hydrobiology of lakes. Hydrobiologia, 3, 1-9."])
    citations, findings = check_consistency(body("as shown (GEF-", "FLAUT, 2010)."), caps)
    assert citations[0].entries == (1,) and not findings


def test_no_uncited_findings_when_the_citations_are_not_read():
    # Superscript citations are not in the text: no entry may be called uncited.
    refs = numbered(10)
    _, findings = check_consistency(body("Shown before.1,2 And again.3 Only [4] reads."), refs)
    assert findings == []


# --- LaTeX keys ---------------------------------------------------------------------------------


def test_latex_cite_commands_are_matched_by_key():
    refs = keyed("smith20", "lee19", "kim18", "park17", "cho16", "yu15")
    lines = body(
        r"As \citep[p.~3]{smith20, lee19} and \textcite{kim18} show, \parencite[see][]{park17}",
        r"and \autocite{cho16}; \citeauthor{yu15} agrees (\citet*{smith20}).",
    )
    citations, findings = check_consistency(lines, refs)
    assert findings == []
    assert [c.targets for c in citations] == [
        ("smith20", "lee19"),
        ("kim18",),
        ("park17",),
        ("cho16",),
        ("yu15",),
        ("smith20",),
    ]
    assert citations[0].entries == (1, 2)
    assert {c.kind for c in citations} == {"key"}


def test_latex_missing_and_uncited_keys():
    refs = keyed("a", "b", "c")
    lines = body(r"Text \cite{a,", r"b} and \cite{nothere}.")
    citations, findings = check_consistency(lines, refs)
    assert citations[0].targets == ("a", "b")
    assert [(f.kind, f.target, f.location) for f in findings] == [
        ("missing-entry", "nothere", Location(line=2, page=1)),
        ("uncited-entry", "c", Location(line=3)),
    ]


def test_commented_out_latex_citations_are_not_read():
    refs = keyed("a", "b")
    lines = body(r"We cite \cite{a} and \cite{b}. % \cite{old} was dropped", r"50\% of \cite{a}")
    citations, findings = check_consistency(lines, refs)
    assert [c.targets for c in citations] == [("a",), ("b",), ("a",)]
    assert findings == []


def test_nocite_star_cites_everything():
    refs = keyed("a", "b", "c")
    _, findings = check_consistency(body(r"Text \cite{a}. \nocite{*}"), refs)
    assert findings == []


def test_clean_latex_document_with_math_has_no_findings():
    refs = keyed("a", "b")
    lines = body(r"For $x \in [0, 1]$ and (2020) and [12] we cite \cite{a} and \cite{b}.")
    _, findings = check_consistency(lines, refs)
    assert findings == []


# --- the list itself ----------------------------------------------------------------------------


def test_a_numbered_list_with_a_gap_and_a_reversal_is_out_of_order():
    refs = numbered(6)
    relabelled = [
        ExtractedReference(r.text, r.number, r.location, label=label)
        for r, label in zip(refs, ["1", "2", "4", "3", "5", "6"], strict=True)
    ]
    _, findings = check_consistency([], relabelled)
    assert [(f.kind, f.target, f.entry) for f in findings] == [("out-of-order", "3", 4)]
    assert "[4]" in findings[0].message  # what it comes after


def test_a_numbered_list_with_a_gap_names_the_missing_numbers():
    refs = [
        ExtractedReference(r.text, r.number, r.location, label=label)
        for r, label in zip(numbered(4), ["1", "2", "5", "6"], strict=True)
    ]
    _, findings = check_consistency([], refs)
    assert [(f.kind, f.target, f.location) for f in findings] == [
        ("out-of-order", "5", Location(line=3, page=9))
    ]
    assert "[3], [4] are missing" in findings[0].message


def test_a_list_starting_after_1_is_out_of_order():
    refs = [
        ExtractedReference(r.text, r.number, r.location, label=str(r.number + 1))
        for r in numbered(3)
    ]
    _, findings = check_consistency([], refs)
    assert [(f.kind, f.entry) for f in findings] == [("out-of-order", 1)]


def test_a_clean_numbered_list_has_no_list_findings():
    assert check_consistency([], numbered(30)) == ([], [])


def test_duplicate_label_and_duplicate_work():
    refs = [
        ExtractedReference(
            "Smith, J. (2020). A study of learning in groups. Journal of Learning, 3, 1-10.",
            1,
            Location(1, 9),
            label="1",
        ),
        ExtractedReference(
            "Lee, H. (2019). Graphs and colourings. DM, 12, 3.", 2, Location(2, 9), label="2"
        ),
        ExtractedReference(
            "Kim, C. (2018). Particles. Nature, 1, 2.", 3, Location(3, 9), label="2"
        ),
        ExtractedReference(
            "Smith, J. (2020). A study of learning in groups. J. Learn., 3(2), 1–10.",
            4,
            Location(4, 9),
            label="3",
        ),
    ]
    _, findings = check_consistency([], refs)
    assert [(f.kind, f.entry) for f in findings] == [
        ("duplicate-entry", 3),
        ("duplicate-entry", 4),
    ]
    assert "[2]" in findings[0].message
    assert "same work" in findings[1].message


def test_parts_of_a_series_are_not_duplicates():
    refs = author_date(
        [
            "Smith, J. (2020). Learning in groups of agents, part 1. Journal A, 1, 1-2.",
            "Smith, J. (2020). Learning in groups of agents, part 2. Journal A, 1, 3-4.",
        ]
    )
    assert check_consistency([], refs) == ([], [])


# --- odd and hostile input ----------------------------------------------------------------------


def test_odd_input_does_not_raise():
    assert check_consistency([], []) == ([], [])
    assert check_consistency(body("[1] (Smith, 2020)"), []) == ([], [])
    odd = [
        ExtractedReference("", 1, Location(1), label="1"),
        ExtractedReference("x" * 5000, 2, Location(2), label="2"),
        ExtractedReference("\x00\ud800 ß", 3, Location(3), label=" "),
    ]
    citations, _ = check_consistency(body("", "   ", "[1] [2] \\cite{", "(,) ( ) [ ]"), odd)
    assert [c.targets for c in citations] == [("1",), ("2",)]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text(alphabet="[](){}\\,;-–&.'’ 0123456789aeSmithJonesetal.citep20n\n%ÄØ", max_size=80),
        max_size=6,
    )
)
def test_any_text_gives_citations_without_raising(texts):
    for refs in (author_date(APA[:3]), numbered(5), keyed("a", "Smith")):
        citations, findings = check_consistency(body(*texts), refs)
        for citation in citations:
            assert len(citation.targets) == len(citation.entries)
            assert 1 <= citation.location.line <= max(len(texts), 1)
        assert all(f.message.endswith(".") for f in findings)


# --- MLA: author and page ---------------------------------------------------------------------

MLA = [
    "Seitz, Anna, et al. “Pressure Fluctuations in Gas-Fluidized Beds.” Chemical Engineering "
    "Science 61.2 (2006): 1701-1745.",
    "Shadmi, Yehuda. “A Few Remarks on Teacher Training.” AIP Conference Proceedings (1988): "
    "n. pag.",
    "Katou, Ken’ichi, and Yukio Takahashi. “A Queueing Model for Customers.” Journal of the "
    "Operations Research Society 23.1 (1980): 140-160.",
    "Wohlfarth, Christian. “Viscosity of the Mixture.” Landolt-Börnstein 25 (2009): 1320-1322.",
    "Odom, Leslie, and Roger Adams. “Design and Fabrication of Gratings.” Applied Optics 12.4 "
    "(1994): 55-61.",
    "Cherif, Samir. “A Listed Work Nobody Cites.” Journal of Examples 3.1 (2016): 4-9.",
]


def test_mla_author_page_citations_are_matched_by_name_even_when_the_page_looks_like_a_year():
    # "(Seitz et al. 1738)": MLA cites a page, here one that looks like a year; no finding.
    citations, findings = check_consistency(
        body(
            "Pressure was studied before (Seitz et al. 1738). Teachers were trained (Shadmi;",
            "Katou and Takahashi 147). As Wohlfarth (1321) showed, viscosity matters, and as",
            "Odom and Adams showed, gratings do too. The last work is cited (Cherif 5).",
        ),
        author_date(MLA),
    )
    assert findings == []
    matched = {t: e for c in citations for t, e in zip(c.targets, c.entries, strict=True)}
    assert matched == {
        "Seitz et al. 1738": 1,
        "Shadmi": 2,
        "Katou and Takahashi 147": 3,
        "Wohlfarth 1321": 4,
        "Cherif 5": 6,
    }


def test_planted_missing_and_uncited_mla_entries_are_found():
    _, findings = check_consistency(
        body(
            "Pressure was studied before (Seitz et al. 1738). Teachers were trained (Shadmi;",
            "Katou and Takahashi 147). As Wohlfarth (1321) showed, viscosity matters, and as",
            "Odom and Adams showed, gratings do too. A last study is mentioned (Frank 411).",
        ),
        author_date(MLA),
    )
    assert [(f.kind, f.target) for f in findings] == [
        ("missing-entry", "Frank 411"),
        ("uncited-entry", "Cherif 2016"),
    ]
    assert findings[0].location == Location(line=3, page=1)
    assert findings[1].entry == 6


def test_mla_parentheses_without_a_page_or_naming_no_surname_are_not_findings():
    # "(Fourier)" alone, "(Table 3)", "(see Figure 2)" may be anything: only a name and a
    # page that names no entry is reported.
    _, findings = check_consistency(
        body(
            "Transforms (Fourier) were applied (Table 3; see Figure 2). Pressure (Seitz et al.",
            "1738), teachers (Shadmi 3), queues (Katou and Takahashi 147), viscosity (Wohlfarth",
            "1321), gratings (Odom and Adams 56) and an uncited work (Cherif 4) are cited.",
        ),
        author_date(MLA),
    )
    assert findings == []


def test_an_apa_list_is_not_read_as_mla():
    # Years right after the authors: "(Smith 42)" is no citation there, "(Smith, 2021)" is
    # one that names no entry.
    _, findings = check_consistency(
        body("As shown (Smith 42) and (Smith, 2021), groups learn (Smith & Jones, 2020)."),
        author_date(APA[:1]),
    )
    assert [(f.kind, f.target) for f in findings] == [("missing-entry", "Smith 2021")]


def _dated_list(n: int) -> list[str]:
    surnames = ["Abel", "Baker", "Cohen", "Dunn", "Evans", "Fox", "Gray", "Hill", "Ito", "Jain"]
    return [
        f"{surnames[i]}, A. ({2000 + i}). Work number {i} on a topic. Journal of Things, {i}, 1-9."
        for i in range(n)
    ]


def test_a_yearless_tail_of_a_split_entry_is_not_called_uncited():
    # A page break split an entry in two (the segmenter's error): the tail has no year and
    # cannot be cited "(Name, year)"; the dated entries cited are all there is to check.
    texts = _dated_list(10)
    refs = author_date([*texts[:5], "Physical Review B, 40(8), 5774-5779.", *texts[5:]])
    cited = "; ".join(f"{t.split(',')[0]}, {2000 + i}" for i, t in enumerate(texts))
    _, findings = check_consistency(body(f"Many have studied this ({cited})."), refs)
    assert findings == []
    # An uncited dated entry is still reported.
    _, findings = check_consistency(body(f"Some have ({cited.rsplit(';', 1)[0]})."), refs)
    assert [(f.kind, f.target) for f in findings] == [("uncited-entry", "Jain 2009")]


def test_an_entry_whose_year_cannot_be_read_is_matched_by_its_first_author():
    # "Jedrich, ..., " lost its year to the next entry when the list was split wrongly.
    refs = author_date(
        [
            "Jedrich, Nicholas M., Teri Gregory, Darrell F. Zimbelman,",
            "Buchko, Marc, and Francis X. Dolan. 2003. Attitude control. Journal of Space, 4.",
        ]
    )
    _, findings = check_consistency(
        body("Jedrich et al. (2003) and Buchko and Dolan (2003) built it."), refs
    )
    assert findings == []
    _, findings = check_consistency(
        body("Jedrich et al. (2003), Buchko and Dolan (2003) and Zoller (2003) built it."), refs
    )
    assert [(f.kind, f.target) for f in findings] == [("missing-entry", "Zoller 2003")]


def test_mla_citation_with_et_al_and_no_page_naming_no_entry_is_missing():
    _, findings = check_consistency(
        body(
            "Pressure (Seitz et al. 1738), teachers (Shadmi 3), queues (Katou and Takahashi",
            "147), viscosity (Wohlfarth 1321), gratings (Odom and Adams 56), a work (Cherif",
            "4), and one more (Ramabadran et al.).",
        ),
        author_date(MLA),
    )
    assert [(f.kind, f.target) for f in findings] == [("missing-entry", "Ramabadran et al.")]


def test_author_page_citations_are_read_as_mla_when_the_list_is_not_recognised_as_mla():
    # Each title holds a year before the entry's own, so the list does not look like MLA; the
    # citations' numbers are no year of any entry of their authors: they are pages.
    refs = author_date(
        [
            "Seitz, Anna, et al. “The 1962 Floods Revisited.” Hydrology 61.2 (2006): 1701-1745.",
            "Shadmi, Yehuda. “Teacher Training after 1948.” AIP Conference Proceedings (1988).",
            "Katou, Ken’ichi, and Yukio Takahashi. “Queues in 1970.” Operations 23.1 (1980): 140.",
        ]
    )
    _, findings = check_consistency(
        body("Floods (Seitz et al. 1738), teachers (Shadmi 3), queues (Katou and Takahashi 140)."),
        refs,
    )
    assert findings == []


N = 5_000_000
HOSTILE = {
    "brackets": "[" * N,
    "parentheses": "(" * N,
    "open citations": "(Smith, " * (N // 8),
    "name run": "Smith " * (N // 6) + "(2020)",
    "capitals": "A " * (N // 2) + "(2020)",
    "many narrative citations": "Smith (2020) " * (N // 13),
    "numbers": "[1," * (N // 3),
    "cite commands": "\\cite{" * (N // 6),
    "cite options": "\\cite[" * (N // 6),
    "dashes": "[1" + "-" * N,
    "one long word": "(" + "A" * N + ", 2020)",
    # Distinct capitalised words: each is looked up among the surnames once (MLA's names
    # in running text).
    "distinct capitals": " ".join(
        f"S{a}{b}{c}{d}h"
        for a, b, c, d in itertools.islice(
            itertools.product("abcdefghijklmnopqrstuvwxyz", repeat=4), N // 7
        )
    )
    + " (12)",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_finishes_fast(name):
    text = HOSTILE[name]
    for refs in (author_date(APA[:2]), numbered(20), keyed("a")):
        # CPU time, not wall time: the test machine may be shared.
        start = time.process_time()
        check_consistency([DocumentLine(text, Location(1))], refs)
        assert time.process_time() - start < 5, name


# --- through extract_document -------------------------------------------------------------------


def test_extract_document_checks_a_numeric_text_file():
    text = (
        "A Paper\n"
        "\n"
        "Deep models [1] beat shallow ones [2, 3] on [0, 1] inputs (Table 2).\n"
        "A later claim [5] has no entry.\n"
        "\n"
        "References\n"
        "\n"
        '[1] A. Smith, "Deep models," IEEE Trans. X, vol. 1, pp. 1-9, 2019.\n'
        '[2] B. Jones, "Shallow models," IEEE Trans. Y, vol. 2, pp. 3-7, 2018.\n'
        '[3] C. Lee, "Inputs in the unit interval," Proc. Z, pp. 11-19, 2017.\n'
        '[4] D. Kim, "Never cited," J. W, vol. 4, pp. 1-2, 2016.\n'
    )
    doc = extract_document(text.encode(), name="paper.txt")
    assert [c.targets for c in doc.citations] == [("1",), ("2", "3"), ("5",)]
    assert [(f.kind, f.target, f.location) for f in doc.findings] == [
        ("missing-entry", "5", Location(line=4)),
        ("uncited-entry", "4", Location(line=11)),
    ]
    assert doc.to_dict()["findings"][0]["location"] == {"page": None, "line": 4}


def test_extract_document_checks_an_author_date_markdown_file():
    text = (
        "# On groups\n"
        "\n"
        "Groups learn (Smith & Jones, 2020), as Lee (2019) found in 2019 (n = 40).\n"
        "\n"
        "## References\n"
        "\n"
        "Lee, H. (2019). Graphs and their colourings. Discrete Mathematics, 12, 33-40.\n"
        "\n"
        "Smith, J., & Jones, K. (2020). A study of learning in groups. Journal of Learning, 3(2), 1-10.\n"
    )
    doc = extract_document(text.encode(), name="paper.md")
    assert [c.entries for c in doc.citations] == [(2,), (1,)]
    assert doc.findings == []


# --- documents built from the dev set's works ---------------------------------------------------

DEV = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "datasets"
    / "crossref-multistyle-dev-1000.jsonl"
)


def _dev_works(style):
    if not DEV.exists():
        pytest.skip(f"{DEV} is absent (the shared datasets are not on this machine)")
    works = []
    for line in DEV.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        work, text = row["work"], row["strings"].get(style)
        families = [a.get("family") for a in work.get("author") or []]
        try:
            year = work["issued"]["date-parts"][0][0]
        except (KeyError, IndexError, TypeError):
            year = None
        # Works whose first author is a name a citation can carry ("&NA;", "s", "M." are not).
        if (
            text
            and year
            and families
            and all(families)
            and re.fullmatch(r"[A-Z][^\s\d]*[a-z][^\s\d]*", families[0])
        ):
            works.append((text, families, year))
    return works


@pytest.mark.parametrize("style", ["apa", "chicago-author-date", "harvard3"])
def test_dev_set_documents_clean_and_planted(style):
    """Documents of 30 dev-set works each, cited as a writing tool would from the metadata."""
    rng = random.Random(26)
    works = _dev_works(style)
    documents = 0
    for start in range(0, len(works) - 30, 30):
        chunk = sorted(works[start : start + 30])
        refs = [ExtractedReference(t, i, Location(i, 9)) for i, (t, _, _) in enumerate(chunk, 1)]
        same = Counter((f[0], y) for _, f, y in chunk)
        seen: Counter = Counter()
        sentences = []
        for _, families, year in chunk:
            letter = ""
            if same[families[0], year] > 1:
                letter = "abcdefgh"[seen[families[0], year]]
                seen[families[0], year] += 1
            if len(families) == 1:
                who = families[0]
            elif len(families) == 2:
                who = f"{families[0]} and {families[1]}"
            else:
                who = f"{families[0]} et al."
            if rng.random() < 0.5:
                sentences.append(
                    f"The claim holds ({who.replace(' and ', ' & ')}, {year}{letter})."
                )
            else:
                sentences.append(f"As {who} ({year}{letter}) showed, it holds.")
        citations, findings = check_consistency(body(*sentences), refs)
        assert findings == [], (style, [f.message for f in findings])
        assert [c.entries for c in citations] == [(i,) for i in range(1, 31)]
        dropped = rng.randrange(30)
        planted = sentences[:dropped] + sentences[dropped + 1 :]
        planted.insert(7, "Yet Zyxwort et al. (2013) disagree.")
        _, findings = check_consistency(body(*planted), refs)
        assert sorted((f.kind, f.entry or f.target) for f in findings) == [
            ("missing-entry", "Zyxwort et al. 2013"),
            ("uncited-entry", dropped + 1),
        ]
        assert findings[0].location.line == 8
        documents += 1
    assert documents >= 20
