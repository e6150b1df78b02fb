"""Finding the reference list among a document's lines and splitting it (issue 26).

The lines are built as the readers make them: a PDF's with their page, line and left edge
(``x0``), a Word document's paragraphs with their automatic numbers, text files' lines.
"""

from __future__ import annotations

import time

import pytest

from citeverify_core.references.document.model import DocumentLine, DocumentText, Location
from citeverify_core.references.document.segment import (
    find_references,
    join_lines,
    reference_heading,
)

Row = tuple[str, float] | tuple[str, float, int] | str


def pdf(rows: list[Row], *, first_page: int = 1) -> DocumentText:
    """Lines of a PDF: (text, x0) on the current page, or (text, x0, page)."""
    lines: list[DocumentLine] = []
    numbers: dict[int, int] = {}
    for row in rows:
        if isinstance(row, str):
            text, x0, page = row, 72.0, first_page
        elif len(row) == 2:
            text, x0, page = row[0], row[1], first_page
        else:
            text, x0, page = row
        numbers[page] = numbers.get(page, 0) + 1
        lines.append(DocumentLine(text, Location(line=numbers[page], page=page), x0=x0, size=10.0))
    return DocumentText(format="pdf", lines=lines, pages=max(numbers))


def plain(text: str) -> DocumentText:
    lines = [
        DocumentLine(t, Location(line=n)) for n, t in enumerate(text.splitlines(), 1) if t.strip()
    ]
    return DocumentText(format="txt", lines=lines)


def texts(doc: DocumentText) -> list[str]:
    return [r.text for r in find_references(doc).references]


def test_numbered_list_across_a_page_break_with_page_furniture() -> None:
    doc = pdf(
        [
            ("Intro citing [1] and [2].", 72, 1),
            ("A running title", 72, 1),
            ("References", 72, 1),
            ("[1] A. Smith and B. Jones, “A study of", 72, 1),
            ("things,” Nature, vol. 3, pp. 1–10, 2020.", 90, 1),
            ("[2] C. Doe, “Another study that goes on", 72, 1),
            ("7", 300, 1),
            ("A running title", 72, 2),
            ("over the page,” Science, 2019.", 90, 2),
            ("[3] E. Roe, “Third,” Cell, 2018.", 72, 2),
            ("8", 300, 2),
            ("A running title", 72, 3),
            ("Appendix A: Proofs", 72, 3),
            ("We prove Theorem 1 [3] in 2020.", 72, 3),
        ]
    )
    found = find_references(doc)
    assert [r.text for r in found.references] == [
        "A. Smith and B. Jones, “A study of things,” Nature, vol. 3, pp. 1–10, 2020.",
        "C. Doe, “Another study that goes on over the page,” Science, 2019.",
        "E. Roe, “Third,” Cell, 2018.",
    ]
    second = found.references[1]
    assert second.label == "2"
    assert second.location == Location(line=6, page=1)
    assert second.end == Location(line=2, page=2)
    assert found.heading == "References"
    # The body is what is outside the list: the introduction and the appendix.
    body = [line.text for line in found.body]
    assert "Intro citing [1] and [2]." in body and "We prove Theorem 1 [3] in 2020." in body
    assert not any("Smith" in t for t in body)


def test_author_date_list_with_hanging_indents_in_two_columns() -> None:
    doc = pdf(
        [
            ("Body text of the left column.", 54, 1),
            ("References", 310, 1),
            ("Adams, J. (2001). A title that runs on to", 310, 1),
            ("a second line. Journal, 3(2), 1–9.", 322, 1),
            ("Baker, K., & Cole, L. (2010). Short.", 310, 1),
            ("Journal of Things, 4, 5–6.", 322, 1),
            ("Dunn, M. (2015). Carried over the", 310, 1),
            ("column break. Press.", 66, 2),
            ("Evans, P. (2016). Last one. Press.", 54, 2),
            ("Fox, Q. (2017). Really the last, cut", 54, 2),
            ("over two lines. Press.", 66, 2),
        ]
    )
    assert texts(doc) == [
        "Adams, J. (2001). A title that runs on to a second line. Journal, 3(2), 1–9.",
        "Baker, K., & Cole, L. (2010). Short. Journal of Things, 4, 5–6.",
        "Dunn, M. (2015). Carried over the column break. Press.",
        "Evans, P. (2016). Last one. Press.",
        "Fox, Q. (2017). Really the last, cut over two lines. Press.",
    ]


def test_labels_in_a_margin_column() -> None:
    doc = pdf(
        [
            ("REFERENCES", 72),
            ("[1]", 54),
            ("A. Smith, “One,” J. Things, 2001.", 80),
            ("[2]", 54),
            ("B. Jones, “Two, with a title long", 80),
            ("enough to wrap,” J. Things, 2002.", 80),
        ]
    )
    found = find_references(doc)
    assert [(r.label, r.text) for r in found.references] == [
        ("1", "A. Smith, “One,” J. Things, 2001."),
        ("2", "B. Jones, “Two, with a title long enough to wrap,” J. Things, 2002."),
    ]


def test_word_automatic_numbers_are_labels() -> None:
    lines = [
        DocumentLine("Text [1].", Location(line=1), starts_paragraph=True),
        DocumentLine("Bibliography", Location(line=2), heading=True, starts_paragraph=True),
        DocumentLine("Smith J. One. 2001.", Location(line=3), label="[1]", starts_paragraph=True),
        DocumentLine("Doe J. Two. 2002.", Location(line=4), label="[2]", starts_paragraph=True),
        DocumentLine("Acknowledgements", Location(line=5), heading=True, starts_paragraph=True),
        DocumentLine("We thank 2020 funders.", Location(line=6), starts_paragraph=True),
    ]
    found = find_references(DocumentText(format="docx", lines=lines))
    assert [(r.label, r.text) for r in found.references] == [
        ("1", "Smith J. One. 2001."),
        ("2", "Doe J. Two. 2002."),
    ]


@pytest.mark.parametrize(
    ("lines", "joined"),
    [
        (["Bio-", "logy of cells."], "Biology of cells."),
        (["Smith-", "Jones, A."], "Smith-Jones, A."),
        (["a self-", "assessment."], "a self-assessment."),
        (["COVID-", "19 cases."], "COVID-19 cases."),
        (["pp. 123–", "145."], "pp. 123–145."),
        (["state-of-the-", "art models."], "state-of-the-art models."),
        (["https://doi.org/10.1000/", "abc.123"], "https://doi.org/10.1000/abc.123"),
        # Real hyphens the document does not decide: two parts meeting vowel to vowel, a
        # Greek letter before a long name, a whole adjective before another.
        (["neo-", "angiogenesis by"], "neo-angiogenesis by"),
        (["alpha-", "difluoromethylornithine."], "alpha-difluoromethylornithine."),
        (["analytical-", "methodological."], "analytical-methodological."),
        # A suspended hyphen before a conjunction.
        (["Kinder-", "und Jugendpsychiatrie"], "Kinder- und Jugendpsychiatrie"),
        (["pre-", "and post-operative care"], "pre- and post-operative care"),
        # Soft breaks a syllable makes, also where a vowel meets a vowel.
        (["Phy-", "siological"], "Physiological"),
        (["situ-", "ational"], "situational"),
        (["evalu-", "ation."], "evaluation."),
        (["individu-", "ally"], "individually"),
        (["Alpha-", "betical"], "Alphabetical"),
        (["histor-", "ical"], "historical"),
        (["Autobi-", "ography"], "Autobiography"),
        (["anti-", "dandruff formulation"], "anti-dandruff formulation"),
        (["re-", "search of"], "research of"),
        (["Re-", "actionary Behavioural"], "Reactionary Behavioural"),
        (["The-", "ologie"], "Theologie"),
        (["PsycEX-", "TRA Dataset"], "PsycEXTRA Dataset"),
    ],
)
def test_line_end_hyphens(lines: list[str], joined: str) -> None:
    assert join_lines(lines) == joined


def test_hyphens_follow_how_the_document_writes_the_word() -> None:
    doc = plain(
        "We use multi-task models and nonlinear maps.\n"
        "References\n"
        "[1] A. Smith, “Multi-\ntask and non-\nlinear,” 2020.\n"
    )
    assert texts(doc) == ["A. Smith, “Multi-task and nonlinear,” 2020."]


@pytest.mark.parametrize(
    "heading",
    [
        "References", "REFERENCES", "7 References", "VII. REFERENCES", "R EFERENCES",
        "Bibliography", "Works Cited", "Literature Cited", "Reference List", "Literatur",
        "Literaturverzeichnis", "Références", "Bibliographie", "Referencias", "Bibliografía",
        "Riferimenti bibliografici", "Referências", "Literatuur", "参考文献", "Список литературы",
    ],
)  # fmt: skip
def test_headings_in_several_languages(heading: str) -> None:
    assert reference_heading(heading)
    doc = plain(f"Body.\n{heading}\n[1] A. Smith, One, 2001.\n[2] B. Doe, Two, 2002.\n")
    assert texts(doc) == ["A. Smith, One, 2001.", "B. Doe, Two, 2002."]


@pytest.mark.parametrize(
    "line", ["see the references below", "literature.", "References are cited as [1]."]
)
def test_running_text_is_not_a_heading(line: str) -> None:
    assert reference_heading(line) is None


def test_a_table_of_contents_does_not_win() -> None:
    doc = plain(
        "Contents\n1 Introduction\nReferences\nAppendix A\n"
        "1 Introduction\nAs Smith (2020) showed.\n"
        "References\n"
        "Smith, J. (2020). A title. Journal, 1, 2–3.\n"
        "Zhou, K. (2019). Another. Journal, 4, 5–6.\n"
    )
    found = find_references(doc)
    assert [r.text for r in found.references] == [
        "Smith, J. (2020). A title. Journal, 1, 2–3.",
        "Zhou, K. (2019). Another. Journal, 4, 5–6.",
    ]
    assert found.references[0].location.line == 8


def test_numbered_list_at_the_end_without_a_heading() -> None:
    doc = plain(
        "Some text cites [1].\nA list of contributions:\n1. We do this.\n2. And that.\n"
        "More text.\n"
        "[1] A. Smith, One, 2001.\n[2] B. Doe, Two,\ncontinued, 2002.\n"
    )
    found = find_references(doc)
    assert found.heading == "numbered list at the end"
    assert [r.text for r in found.references] == [
        "A. Smith, One, 2001.",
        "B. Doe, Two, continued, 2002.",
    ]


def test_list_ends_at_a_caption_a_new_section_or_biographies() -> None:
    for closing in ("Figure 3: Results of the runs.", "8 Discussion", "Author Biographies"):
        doc = plain(
            f"References\n[1] A. Smith, One, 2001.\n[2] B. Doe, Two, 2002.\n{closing}\n"
            "Running text of the next part goes on here in 2021.\n"
        )
        assert texts(doc) == ["A. Smith, One, 2001.", "B. Doe, Two, 2002."], closing


def test_a_numbered_list_goes_on_after_a_heading_looking_line() -> None:
    doc = plain(
        "References\n[1] A. Smith, One, 2001.\n"
        "[2] B. Doe, Theory of Everything,\nAppendix\n[3] C. Roe, Three, 2003.\n"
    )
    assert [t[:8] for t in texts(doc)] == ["A. Smith", "B. Doe, ", "C. Roe, "]


def test_author_date_text_list_splits_on_author_starts() -> None:
    doc = plain(
        "References\n"
        "Adams, J. (2001). A title. Journal, 3, 1–9.\n"
        "van der Berg, K. (2010). Short. Journal of\n"
        "Things, 4, 5–6.\n"
        "WHO, A. (2015). Report. Geneva.\n"
    )
    assert texts(doc) == [
        "Adams, J. (2001). A title. Journal, 3, 1–9.",
        "van der Berg, K. (2010). Short. Journal of Things, 4, 5–6.",
        "WHO, A. (2015). Report. Geneva.",
    ]


def test_no_list_and_no_spurious_entries_from_headings() -> None:
    assert find_references(plain("Just a note.\nNothing cited here.\n")).references == []
    found = find_references(
        plain("References\nPrimary sources\n[1] A. Smith, One, 2001.\nReferences\n")
    )
    assert [r.text for r in found.references] == ["A. Smith, One, 2001."]


def test_hostile_lines_are_read_in_bounded_time() -> None:
    start = time.monotonic()
    big = "x" * 5_000_000
    for rows in (
        ["References", big],
        ["References", "[1] " + "Smith, J. " * 500_000],
        ["References", *(["1."] * 20_000)],
        ["References", *(["Bio-"] * 20_000)],
    ):
        find_references(
            DocumentText("txt", [DocumentLine(t, Location(line=n)) for n, t in enumerate(rows, 1)])
        )
    assert time.monotonic() - start < 30


def test_mla_list_with_years_at_the_entries_ends_is_found() -> None:
    # MLA puts the year last, so the first lines under the heading hold one year between them:
    # the author-first lines are what says this is a list.
    doc = pdf(
        [
            ("We follow the usual protocol (Caan 12).", 72),
            ("References", 72),
            ("Achig, M et al. “Heritage Building’s Condition at Maintenance", 72),
            ("Campaign in San Roque, Cuenca, Ecuador: A Long Title That", 86),
            ("Runs Over Several Lines of the Narrow Column of This", 86),
            ("Rather Small and Crowded Conference", 86),
            ("Journal.” Structural Analysis of Historical", 86),
            ("Constructions (2016): n. pag.", 86),
            ("Caan, Michael N., Robert L. McPherron, and Christopher T. Russell.", 72),
            ("“Age-specific angulation of unerupted human third molar teeth", 86),
            ("in a cross-sectional sample.” Journal of Geophysical Research", 86),
            ("78.34 (1973): 8087–8096.", 86),
            ("Calvez, Jean-Yves. “Force et Fragilité.” Droit (1986): 125.", 72),
        ]
    )
    got = texts(doc)
    assert len(got) == 3
    assert got[0].startswith("Achig, M et al.") and got[0].endswith("(2016): n. pag.")
    assert got[1].endswith("78.34 (1973): 8087–8096.")


def test_hanging_indents_beat_name_like_continuations_in_each_column() -> None:
    # Continuation lines that begin like a name ("Gender, Work and ...", "Matthews, R. W.")
    # stay in their entry, because the list's hanging indents say so; in the second column
    # the indents are judged from that column's own edge (307/321, not 66/80).
    doc = pdf(
        [
            ("Intro text (Matthews 2013).", 72),
            ("References", 66),
            ("Acker, J. (2005). Gendered organizations. Work and", 66),
            ("Gender, Work and Organization, 12(1), 1–13.", 80),
            ("Baker, T., A. Matthews, and L. Long (2013). A study by", 66),
            ("Matthews, R. W. Johnstone, et al. 2013. More text.", 80),
            ("Cole, B. (2001). A third work on the topic at hand,", 66),
            ("and its continuation. Journal 3, 4–5.", 80),
            ("Dunn, C. (2002). A fourth work that runs into the", 66),
            ("next column. Journal 4, 5–6.", 321),
            ("Evans, D. (2003). A fifth work in the second column", 307),
            ("goes on here. Journal 5, 6–7.", 321),
            ("Gray, F. (2005). A sixth work that has two lines", 307),
            ("Harris, G. and more. Journal 7, 8–9.", 321),
        ]
    )
    got = texts(doc)
    assert [t.split(",")[0] for t in got] == ["Acker", "Baker", "Cole", "Dunn", "Evans", "Gray"]
    assert got[0].endswith("Gender, Work and Organization, 12(1), 1–13.")
    assert got[1].endswith("Matthews, R. W. Johnstone, et al. 2013. More text.")
    assert got[3].endswith("next column. Journal 4, 5–6.")
    assert got[5].endswith("Harris, G. and more. Journal 7, 8–9.")


def test_a_reference_ending_in_a_heading_word_on_its_own_line_is_no_heading() -> None:
    # "Literature." finishes the entry above it (same size, hanging indent, full stop): the
    # list starts at "REFERENCES", and the word stays in its entry.
    doc = pdf(
        [
            ("Body text citing (Birge, 1981) and (Eichenbaum, 2003).", 66, 1),
            ("REFERENCES", 66, 1),
            ("Birge, S. J. (1981). Intestinal phosphate transport. Calcium and", 66, 1),
            ("Phosphate Transport Across Biomembranes, 181–184.", 80, 1),
            (
                "Eichenbaum, H. (2003). Faculty of 1000 evaluation. Peer Review of the Biomedical",
                66,
            ),
            ("Literature.", 80, 1),
            ("Getoff, N. (1986). Radiation induced decomposition of biological", 66, 1),
            ("compounds. Applied Radiation, 37(2), 1–5.", 80, 1),
        ]
    )
    got = texts(doc)
    assert [t.split(",")[0] for t in got] == ["Birge", "Eichenbaum", "Getoff"]
    assert got[1].endswith("Peer Review of the Biomedical Literature.")


def test_a_line_ending_in_an_initial_goes_on_with_the_next_author() -> None:
    # No hanging indent: the text decides, and ", G." is an author list cut by the line end.
    doc = pdf(
        [
            ("References", 66),
            ("Roberts, Michael C., and David A. Layfield. 1987. “Promoting", 66),
            ("Child Passenger Safety.” Journal of Pediatric Psychology 12 (2): 257–271.", 66),
            ("Tanno, T., Y. Lim, Q. Wang, M. Chesi, P. L. Bergsagel, G.", 66),
            ("Matthews, R. W. Johnstone, et al. 2013. “Growth Factor.” Blood 123: 1–5.", 66),
            ("Thone, F. 1933. “Nature Ramblings.” Science News-Letter 23: 2–3.", 66),
        ]
    )
    got = texts(doc)
    assert [t.split(",")[0] for t in got] == ["Roberts", "Tanno", "Thone"]
    assert "Bergsagel, G. Matthews, R. W. Johnstone" in got[1]


def test_a_name_like_line_without_a_year_before_the_next_entry_continues() -> None:
    # Flush-left author-date list: "Business, Economics, ..." looks like "Surname, X." after a
    # full stop, but no year comes before the next entry, so it ends the entry above.
    doc = pdf(
        [
            ("References", 66),
            ("Jia, Z., Chen, M. & Wu, C., 2012. A Distributed Estimation Algorithm.", 66),
            ("Business, Economics, Financial Sciences, and Management, pp.691–698.", 66),
            ("Magnus, M.C.M., 2018. Modelagem matemática. Cadernos CIMEAC, 8(1), p.391.", 66),
            ("Tanno, T., Y. Lim, Q. Wang, M. Chesi, P. L. Bergsagel, G.", 66),
            ("Matthews, R. W. Johnstone, et al. 2013. “Growth Factor.” Blood 123: 1–5.", 66),
        ]
    )
    got = texts(doc)
    assert [t.split(",")[0] for t in got] == ["Jia", "Magnus", "Tanno"]
    assert got[0].endswith(
        "Algorithm. Business, Economics, Financial Sciences, and Management, pp.691–698."
    )


def test_a_year_line_at_the_foot_of_several_pages_is_the_reference_s_own() -> None:
    # "(1938)." ends a reference at the bottom of three pages: same shape, digits aside, but the
    # years do not move with the page, so it is no running footer; "Page 1".. "Page 4" is.
    names, years = ["Bell", "Kim", "Roe", "Doe"], [1938, 1921, 1987, 1950]
    rows: list[Row] = [("References", 66, 1)]
    for page in range(1, 5):
        n, name, year = 3 * page - 2, names[page - 1], years[page - 1]
        rows += [
            (f"Page {page}", 66, page),
            (f"[{n}] S.C. {name}son, JAMA 308, 4 (2012).", 66, page),
            (f"[{n + 1}] A. {name}ley, Science 12, 5 (1999).", 66, page),
            (f"[{n + 2}] H.I. {name}, The British Museum Quarterly 12, 39", 66, page),
            (f"({year}).", 66, page),
        ]
    got = texts(pdf(rows))
    assert len(got) == 12
    assert [t for t in got if t.startswith("H.I.")] == [
        f"H.I. {name}, The British Museum Quarterly 12, 39 ({year})."
        for name, year in zip(names, years, strict=True)
    ]
    assert not any("Page" in t for t in got)


def test_a_line_ending_in_a_given_name_and_initial_goes_on() -> None:
    # Flush left, Chicago: ", Jose A." is an author list cut by the line end; "Ed." is followed
    # by the editors. Neither ends a reference, though the next line looks like one's start.
    doc = pdf(
        [
            ("References", 66),
            ("Baker, Stacey L., Ariel C. Aspiras, Scott P. Carroll, Jose A.", 66),
            ("Andres, and David R. Angelini. 2011. “The Genetic Basis.” Biology 356: 245.", 66),
            ("Toon, Geoffrey C. 1993. “Airborne Observations.” Ed.", 66),
            ("Harold I. Schiff and Ulrich Platt. Optical Methods 1993: 12–19.", 66),
            ("Thone, F. 1933. “Nature Ramblings.” Proc. R. Soc., Series A.", 66),
            ("Vane, John R. 1971. “Inhibition.” Nature New Biology 231: 232–235.", 66),
        ]
    )
    got = texts(doc)
    assert [t.split(",")[0] for t in got] == ["Baker", "Toon", "Thone", "Vane"]
    assert "Jose A. Andres, and David R. Angelini" in got[0]
    assert got[1].endswith("Ed. Harold I. Schiff and Ulrich Platt. Optical Methods 1993: 12–19.")


def test_a_bracket_at_a_line_start_in_a_numbered_list_is_text() -> None:
    doc = pdf(
        [
            ("References", 66),
            ("[1] P. D. Acton, “Comparison of observers in Parkinson’s disease using", 66),
            ("[99mTc]TRODAT-1 and SPECT,” Phys. Med. Biol., vol. 51, 2006.", 66),
            ("[2] M. K. Tolba, “A Harvest of Dust?,” Environ. Conserv., vol. 11, 1984.", 66),
        ]
    )
    got = texts(doc)
    assert len(got) == 2
    assert got[0].endswith("using [99mTc]TRODAT-1 and SPECT,” Phys. Med. Biol., vol. 51, 2006.")
    # A list labelled with words keeps each "[Key]" as a label.
    keyed = pdf(
        [
            ("References", 66),
            ("[Act06] P. D. Acton, “Comparison of observers,” Phys. Med. Biol., 2006.", 66),
            ("[Tol84] M. K. Tolba, “A Harvest of Dust?,” Environ. Conserv., 1984.", 66),
        ]
    )
    assert [r.label for r in find_references(keyed).references] == ["Act06", "Tol84"]


def test_a_number_alone_on_the_last_line_of_a_reference_is_its_end_not_a_label() -> None:
    # TeX puts the last page number on a line of its own: "...11(01)," + "1." in an author-date
    # list, "...281-" + "6." in a list labelled "[n]". Neither is the next reference's label.
    author_date = pdf(
        [
            ("References", 133),
            ("Tolba, M. K. (1984). A Harvest of Dust? Environmental Conservation, 11(01),", 133),
            ("1.", 143),
            ("Tomohiro, I. (1966). Studies on the mechanism. Journal of Japan, 30, 1–9.", 133),
        ]
    )
    assert texts(author_date) == [
        "Tolba, M. K. (1984). A Harvest of Dust? Environmental Conservation, 11(01), 1.",
        "Tomohiro, I. (1966). Studies on the mechanism. Journal of Japan, 30, 1–9.",
    ]
    numbered = pdf(
        [
            ("References", 77),
            *[(f"[{n}] Roe A{n}. A short work. Cell. 2001;{n}(1):1-9.", 77) for n in range(1, 5)],
            ("[5] Owen-Smith BD. Ibuprofen in osteoarthrosis. Rheumatology. 1972;11(6):281-", 77),
            ("6.", 93),
            ("[6] Hirano T. Anatomical characteristics. J Orthop Sci. 2015;20(1):124-8.", 77),
        ]
    )
    got = find_references(numbered).references
    assert [r.label for r in got] == ["1", "2", "3", "4", "5", "6"]
    assert got[4].text.endswith("1972;11(6):281-6.")
