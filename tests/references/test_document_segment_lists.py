"""Where a real paper's reference list ends, and what inside it is not an entry (issue 34).

Each test reproduces a class of layout seen in typeset papers (R package vignettes, JSS papers,
ACM and biblatex samples): the lines are built as the PDF reader makes them, with their page,
left edge, font size and footnote flag.
"""

from __future__ import annotations

from dataclasses import dataclass

from citeverify_core.references.document.model import DocumentLine, DocumentText, Location
from citeverify_core.references.document.segment import FoundReferences, find_references


@dataclass
class L:
    """One line as a PDF reader gives it (page and place, font size, flags)."""

    text: str
    page: int = 1
    x0: float = 72.0
    size: float = 10.0
    footnote: bool = False
    unreliable: bool = False
    paragraph: bool = False
    heading: bool = False


def doc(rows: list[L], pages: int | None = None) -> DocumentText:
    numbers: dict[int, int] = {}
    lines: list[DocumentLine] = []
    for row in rows:
        numbers[row.page] = numbers.get(row.page, 0) + 1
        lines.append(
            DocumentLine(
                row.text,
                Location(line=numbers[row.page], page=row.page),
                x0=row.x0,
                size=row.size,
                footnote=row.footnote,
                unreliable=row.unreliable,
                starts_paragraph=row.paragraph,
                heading=row.heading,
            )
        )
    return DocumentText(format="pdf", lines=lines, pages=pages or max(numbers))


def found(rows: list[L], pages: int | None = None) -> FoundReferences:
    return find_references(doc(rows, pages))


def texts(rows: list[L], pages: int | None = None) -> list[str]:
    return [r.text for r in found(rows, pages).references]


def entry(author: str, year: int, page: int) -> list[L]:
    """An author-date entry on two lines with a hanging indent."""
    return [
        L(f"{author}, A. ({year}). A study of things that matter in", page, 72),
        L(f"practice. Journal of Studies, {year % 50}(2), 1–20.", page, 84),
    ]


def body(page: int = 1) -> list[L]:
    return [L("Running text of the paper that cites Adams (2001) and others.", page)]


def test_a_page_of_figures_inside_an_author_date_list_does_not_end_it() -> None:
    # A float page between two pages of the list (a 48-page JSS paper: 8 of 28 entries read).
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        *entry("Adams", 2001, 1),
        *entry("Baker", 2002, 1),
        L("0.2 0.4 0.6 0.8", 2, 120, 6.0),
        L("Time (days)", 2, 150, 6.0),
        L("Figure 7: The fitted model and its residuals over time.", 2, 72),
        *entry("Cole", 2003, 3),
        *entry("Dunn", 2004, 3),
    ]
    assert [t.split(",")[0] for t in texts(rows)] == ["Adams", "Baker", "Cole", "Dunn"]
    assert not any("Figure" in t or "0.2" in t for t in texts(rows))


def test_a_table_page_inside_a_numbered_list_does_not_end_it() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        L("[1] A. Adams. A title. Journal, 1(2):3–4, 2001.", 1),
        L("[2] B. Baker. Another title. Journal, 2(1):5–6, 2002.", 1),
        L("Table 3: Timings of the methods.", 2),
        L("method time memory", 2),
        L("fast 1.2 3.4", 2),
        L("[3] C. Cole. A third title. Journal, 3(1):7–8, 2003.", 3),
    ]
    assert [t[:9] for t in texts(rows)] == ["A. Adams.", "B. Baker.", "C. Cole. "]


def test_a_caption_after_the_list_ends_it_and_figure_labels_do_not_join_the_last_entry() -> None:
    # pcaMethods' "outliers" vignette: the plot's tick labels come before the caption.
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        L("[1] Hawkins, D.M. Robust Singular Value Decom-", 1, 72),
        L("position. Tech Report 122, 2001.", 1, 88),
        L("[2] Liu, L. Robust SVD of microarray data. PNAS, 2003;100:13167", 1, 72),
        L("13172.", 1, 88),
        L("0.00 0.05 0.10 0.15 0.20 0.00 0.05 0.10 0.15 0.20", 2, 160, 6.0),
        L("Loading 1 SVD Loading 1 SVD", 2, 190, 6.0),
        L("Figure 1: Figures show (from left to right):", 2, 72),
        L("Original PCA solution vs. solution on data with outliers;", 2, 72),
    ]
    assert texts(rows)[-1] == "Liu, L. Robust SVD of microarray data. PNAS, 2003;100:13167 13172."
    assert len(texts(rows)) == 2


def test_a_numbered_appendix_heading_after_an_author_date_list_is_no_entry() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        *entry("Adams", 2001, 1),
        *entry("Baker", 2002, 1),
        L("1. A subsection in an appendix", 2, 72),
        L("Here the appendix explains the proof of the second theorem.", 2, 72),
    ]
    result = found(rows)
    assert [r.text.split(",")[0] for r in result.references] == ["Adams", "Baker"]


def test_an_appendix_in_capitals_is_not_appended_to_the_last_entry() -> None:
    # ACM: "A RESEARCH METHODS" then "A.1 Part One", in the list's size.
    rows = [
        *body(),
        L("REFERENCES", 1, 72, 9.0),
        L("[1] A. Adams. 2001. A title. Journal 1, 2 (2001), 3–4.", 1, 72, 9.0),
        L("[2] B. Baker. 2002. Another title. In Proceedings. ACM, 5–6.", 1, 72, 9.0),
        L("A RESEARCH METHODS", 1, 72, 9.0),
        L("A.1 Part One", 1, 72, 9.0),
        L("Lorem ipsum dolor sit amet, consectetur adipiscing elit.", 1, 72, 9.0),
    ]
    assert texts(rows)[-1] == "B. Baker. 2002. Another title. In Proceedings. ACM, 5–6."


def test_a_jss_affiliation_block_after_the_list_is_no_entry() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        *entry("Adams", 2001, 1),
        *entry("Zeileis", 2006, 1),
        L("Affiliation:", 2, 72),
        L("Achim Zeileis", 2, 72),
        L("Department of Statistics", 2, 72),
        L("Universitätsstr. 15, CH-8001 Zürich, Switzerland", 2, 72),
        L("E-mail: Achim.Zeileis@R-project.org", 2, 72),
    ]
    assert [t.split(",")[0] for t in texts(rows)] == ["Adams", "Zeileis"]


def test_footnotes_never_join_an_entry() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        *entry("Adams", 2001, 1),
        L("Baker, A. (2002). A study of things that matter in", 1, 72),
        L("3 The data were collected in 2019 by the first author.", 1, 72, 8.0, footnote=True),
        L("practice. Journal of Studies, 2(2), 1–20.", 2, 84),
    ]
    assert texts(rows)[1] == (
        "Baker, A. (2002). A study of things that matter in practice. Journal of Studies, "
        "2(2), 1–20."
    )


def test_body_size_is_not_taken_from_pages_of_notes() -> None:
    # Chicago notes-bibliography: 12-pt text and entries, and pages full of 10-pt notes after
    # the list: the entries' lines without a comma are no headings.
    text = [L("Running text of the paper, set in twelve points, on and on.", 1, 72, 12.0)] * 30
    notes = [L("12. Smith, Title of a Work (Chicago: Press, 1990), 33.", 3, 72, 10.0)]
    rows = [
        *text,
        L("Bibliography", 2, 72, 14.0),
        L("Adams, John. 1990.", 2, 72, 12.0),
        L("The Book of Things", 2, 84, 12.0),
        L("and More. Chicago: University of Chicago Press.", 2, 84, 12.0),
        L("Baker, Kate. Another Book. New York: House, 1991.", 2, 72, 12.0),
        L("Cole, Lee. A Third Book. London: Hall, 1992.", 2, 72, 12.0),
        L("Dunn, Mary. A Fourth Book. London: Hall, 1993.", 2, 72, 12.0),
        L("Evans, Paul. A Fifth Book. Boston: Beacon Press,", 2, 72, 12.0),
        L("1994.", 2, 84, 12.0),
        L("Notes", 3, 72, 12.0),
        *(notes * 60),
    ]
    assert [t.split(",")[0] for t in texts(rows)] == ["Adams", "Baker", "Cole", "Dunn", "Evans"]


def test_repeated_authors_printed_as_a_rule_start_entries_and_keep_the_rule() -> None:
    # No hanging indent to tell: the rule is the sign.
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        L("Becker, Gary S. 1964. Human Capital. New York: Columbia", 1),
        L("University Press.", 1),
        L("———. 1965. A Theory of the Allocation of Time. Economic", 1),
        L("Journal 75:493–517.", 1),
        L("—— (1976). The Economic Approach. Chicago: Press.", 1),
        L("--- 1981. A Treatise on the Family. Cambridge: Harvard.", 1),
        L("Card, David. 1999. The Causal Effect of Education. Elsevier.", 1),
    ]
    assert texts(rows) == [
        "Becker, Gary S. 1964. Human Capital. New York: Columbia University Press.",
        "———. 1965. A Theory of the Allocation of Time. Economic Journal 75:493–517.",
        "—— (1976). The Economic Approach. Chicago: Press.",
        "--- 1981. A Treatise on the Family. Cambridge: Harvard.",
        "Card, David. 1999. The Causal Effect of Education. Elsevier.",
    ]


def test_a_page_range_cut_after_its_dash_is_no_repeated_author() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        L("Adams, A. 2001. A title. Journal 3: 117", 1),
        L("–145.", 1),
        L("Baker, B. 2002. Another title. Journal 4: 5–6.", 1),
    ]
    assert len(texts(rows)) == 2


def test_an_entry_read_from_damaged_text_says_so() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        *entry("Adams", 2001, 1),
        L("Baker, A. (2002). Dierential analysis of a study. Journal, 2,", 1, 72, unreliable=True),
        L("1–20.", 1, 84),
    ]
    refs = found(rows).references
    assert refs[0].unreliable is None
    assert refs[1].unreliable


def test_a_clean_list_is_complete() -> None:
    rows = [*body(), L("References", 1, 72, 12.0), *entry("Adams", 2001, 1)]
    rows += entry("Baker", 2002, 2)
    assert found(rows).incomplete is None


def test_a_list_over_a_page_without_text_may_be_incomplete() -> None:
    rows = [*body(), L("References", 1, 72, 12.0), *entry("Adams", 2001, 1)]
    rows += entry("Baker", 2002, 3)  # page 2 has no text (a scan, or unreadable)
    assert "page 2" in (found(rows).incomplete or "")


def test_a_list_running_to_the_last_page_read_before_unread_pages_may_be_incomplete() -> None:
    rows = [*body(), L("References", 1, 72, 12.0), *entry("Adams", 2001, 1)]
    assert "page 2" in (found(rows, pages=2).incomplete or "")


def test_a_numbered_list_whose_numbers_skip_may_be_incomplete() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        L("[1] A. Adams. A title. Journal, 1(2):3–4, 2001.", 1),
        L("[2] B. Baker. Another title. Journal, 2(1):5–6, 2002.", 1),
        L("[4] D. Dunn. A fourth title. Journal, 4(1):7–8, 2004.", 1),
    ]
    assert "3" in (found(rows).incomplete or "")


def test_a_repeated_author_s_rule_drawn_as_a_line_starts_an_entry() -> None:
    # biblatex draws the rule: the line starts with the year, about three ems in.
    rows = [
        *body(),
        L("References", 1, 72, 12.0, paragraph=True),
        L("Wrede, H. (1981), consecratio in formam deorum: Vergöttlichte Privatpersonen", 1, 72, 8),
        L("in der römischen Kaiserzeit, Mainz.", 1, 87, 8),
        L("Zanker, P. (1990), The Power of Images, trans. by A. H. Shapiro, Ann Arbor.", 1, 72, 8),
        L("(2010), Roman Art, trans. by H. Heitmann-Gordon, California.", 1, 98, 8),
        L("Zanker, P. and Ewald, B. C. (2012), Living with Myths, Oxford.", 1, 72, 8),
    ]
    assert texts(rows)[2:] == [
        "——— (2010), Roman Art, trans. by H. Heitmann-Gordon, California.",
        "Zanker, P. and Ewald, B. C. (2012), Living with Myths, Oxford.",
    ]


def test_a_bib_file_shown_after_the_list_is_no_entry() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        *entry("Adams", 2001, 1),
        L("@Book{Adams2001 ,", 2, 72),
        L("author = {Adams , A.} ,", 2, 82),
        L("year = {2001} ,", 2, 82),
    ]
    assert [t.split(",")[0] for t in texts(rows)] == ["Adams"]


def test_unmarked_footnotes_set_smaller_are_no_entries_but_small_urls_are_the_entry_s() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        L("[Ars13] Donald Arseneau. relsize. version 4.1, Mar. 29, 2013.", 1, 72, 10.9),
        L("url: https://www.ctan.org/pkg/relsize.", 1, 120, 8.8),
        L("[Bra22] Johannes Braams. babel. version 3.70, Jan. 26, 2022.", 1, 72, 10.9),
        L("url: https://www.transcript-", 1, 120, 8.8),
        L("verlag.de/babel/.", 1, 120, 8.8),
        L("7 http://mirrors.ctan.org/macros/latex/contrib/biblatex/doc/biblatex.pdf", 1, 60, 9.0),
        L("8 See the manual for the options of", 1, 60, 9.0),
        L("the style.", 1, 60, 9.0),
    ]
    assert texts(rows) == [
        "Donald Arseneau. relsize. version 4.1, Mar. 29, 2013. url: https://www.ctan.org/pkg/relsize.",
        "Johannes Braams. babel. version 3.70, Jan. 26, 2022. url: "
        "https://www.transcript-verlag.de/babel/.",
    ]


def test_a_numbered_list_without_years_is_found() -> None:
    # Software manuals cite packages and web pages: "[1] cite: ctan:/macros/latex/contrib/cite/".
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        L("[1] CTAN: http://www.ctan.org.", 1),
        L("[2] scrbook: ctan:/macros/latex/contrib/komascript/", 1),
        L("[3] cite: ctan:/macros/latex/contrib/cite/", 1),
    ]
    assert len(texts(rows)) == 3


def test_a_filmography_after_the_bibliography_is_part_of_the_list() -> None:
    rows = [
        *body(),
        L("Bibliographie", 1, 72, 14.0),
        *entry("Adams", 2001, 1),
        *entry("Zymner", 2003, 1),
        L("Filmographie", 1, 72, 14.0),
        L("Die, Monster, Die!. Daniel Haller, GB 1965.", 1, 72),
        L("The Godfather (Der Pate). Francis Ford Coppola, USA 1972.", 1, 72),
    ]
    assert texts(rows)[2:] == [
        "Die, Monster, Die!. Daniel Haller, GB 1965.",
        "The Godfather (Der Pate). Francis Ford Coppola, USA 1972.",
    ]


def test_a_continuation_line_that_starts_with_a_number_and_a_dot_is_no_entry() -> None:
    # "2. Aufl." (second edition) set as a continuation of a hanging-indent list.
    rows = [
        *body(),
        L("Bibliographie", 1, 72, 14.0),
        L("James, Henry: »The Turn of the Screw« (1898). Hrsg. von Peter G. Beidler.", 1, 72),
        L("2. Aufl. Boston 2004, 22–120.", 1, 84),
        L("Kepler, Johannes: »Somnium«. In: Ders.: Gesammelte Werke. München", 1, 72),
        L("1993, 317–379.", 1, 84),
    ]
    assert texts(rows)[0].endswith("Beidler. 2. Aufl. Boston 2004, 22–120.")
    assert len(texts(rows)) == 2


def test_a_drawn_rule_before_a_full_stop_and_an_index_after_the_list() -> None:
    # SBL: "———." drawn as a line leaves ". “Pottery ..."; the subject index on the next page
    # has its heading read after its first lines.
    rows = [
        *body(),
        L("BIBLIOGRAPHY", 1, 260, 12.0),
        L("Freedman, David Noel. “Pottery, Poetry, and Prophecy.” JBL 96", 1, 72, 12.0),
        L("(1977): 5–26.", 1, 90, 12.0),
        L(". “Pottery, Poetry, and Prophecy.” Pages 1–22 in Pottery,", 1, 108, 12.0),
        L("Poetry, and Prophecy. Winona Lake, IN: Eisenbrauns, 1980.", 1, 90, 12.0),
        L("appendixes, 4", 2, 72, 12.0),
        L("citations, 2", 2, 72, 12.0),
        L("footnotes, 2", 2, 72, 12.0),
        L("SUBJECT INDEX", 2, 264, 12.0),
    ]
    assert texts(rows) == [
        "Freedman, David Noel. “Pottery, Poetry, and Prophecy.” JBL 96 (1977): 5–26.",
        "———. “Pottery, Poetry, and Prophecy.” Pages 1–22 in Pottery, Poetry, and Prophecy. "
        "Winona Lake, IN: Eisenbrauns, 1980.",
    ]


def test_the_other_column_of_the_section_before_is_read_after_the_heading() -> None:
    # cnltx: "E. Bibliography", then the right column of the index of packages before it
    # (a size of its own), then the entries; the heading repeats as the next page's running head.
    rows = [
        *body(),
        *[L("pkg:other (@package), pkg:more (@package),", 1, 89, 8.1) for _ in range(4)],
        L("E. Bibliography", 1, 89, 14.3, paragraph=True),
        *[L(f"pkg:package{n} (@package),", 1, 373, 8.1) for n in range(12)],
        L("[Ars11] Donald Arseneau. ulem. Mar. 18, 2011 (or newer).", 1, 89, 10.9),
        L("url: http://mirror.ctan.org/macros/latex/contrib/ulem/.", 1, 141, 8.8),
        L(
            "[Gre16] Enrico Gregorio. imakeidx. version 1.3e, Oct. 15, 2016 (or newer).",
            1,
            89,
            10.9,
        ),
        L("E. Bibliography", 2, 262, 10.9),
        L("[Wri14] Joseph Wright. pgfopts. version 2.1a, July 10, 2014 (or newer).", 2, 89, 10.9),
        L("Running text on the last page, set in the text's size.", 2, 89, 10.9),
        L("E. Bibliography", 3, 262, 10.9),
    ]
    result = texts(rows)
    assert [t.split(".")[0] for t in result] == [
        "Donald Arseneau",
        "Enrico Gregorio",
        "Joseph Wright",
    ]


def test_an_index_of_commands_after_a_numbered_list_and_a_sub_heading_inside_it() -> None:
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        L("[1] Michael Spivak, The joy of TeX, Amer. Math. Soc., Providence, RI, 1990.", 1),
        L("Package documentation", 1, 72, 10.0),
        L("[2] AMSFonts user’s guide, Amer. Math. Soc., 2002; see http:", 1),
        L("//mirror.ctan.org/fonts/amsfonts/doc/amsfndoc.pdf.", 1, 90),
        L("&, 29", 2, 160),
        L("\\!, 3, 13", 2, 160),
        L("\\,, 3, 13", 2, 160),
    ]
    assert texts(rows) == [
        "Michael Spivak, The joy of TeX, Amer. Math. Soc., Providence, RI, 1990.",
        "AMSFonts user’s guide, Amer. Math. Soc., 2002; see "
        "http://mirror.ctan.org/fonts/amsfonts/doc/amsfndoc.pdf.",
    ]


def test_an_entry_cut_by_a_table_goes_on_after_the_table_s_caption() -> None:
    # rgsepd: "... Genome Biol-" / a table set smaller / "Table 6: ..." / "ogy, 11(2):R14, 2010."
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        L("Michael I Love and Simon Anders. Moderated estimation of fold change, 2014.", 1, 72, 12),
        L(
            "Andrew Rosenberg and Julia Hirschberg. V-Measure, 2007. Columbia University.",
            1,
            72,
            12,
        ),
        L("Karl Stamm and Serdar Bozdag. Gsepd: a bioconductor package. BMC", 1, 72, 12.0),
        L("Bioinformatics, 20(1):115, 2019.", 1, 84, 12.0),
        L("Matthew Young and Alicia Oshlack. Gene ontology analysis for rna-seq:", 1, 72, 12.0),
        L("accounting for selection bias. Genome Biol-", 1, 84, 12.0),
        L("adipose.1 adipose.2 blood.1 heart.1", 2, 168, 9.6),
        L("GO:0002262 0.03 0.01 0.01 0.03 0.44", 2, 108, 9.6),
        L("Table 6: First ten rows of the output, showing the linear divergence.", 2, 72, 12.0),
        L("ogy, 11(2):R14, 2010.", 2, 84, 12.0, paragraph=True),
        L("Session Info", 2, 72, 17.2, paragraph=True),
    ]
    assert texts(rows)[-1] == (
        "Matthew Young and Alicia Oshlack. Gene ontology analysis for rna-seq: accounting for "
        "selection bias. Genome Biology, 11(2):R14, 2010."
    )


def test_a_caption_between_numbered_entries_joins_neither() -> None:
    # Mergeomics: a full-page figure's caption between [3] and [4] was appended to [3].
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        L("[1] Willer CJ, Schmidt EM (2013) Discovery of loci. Nature Genetics 45.", 1, 72),
        L("[2] Derry JMJ, Zhong H (2010) Identification of genes. PLoS ONE 5: e14319.", 1, 72),
        L("[3] Wang SS, Schadt EE (2007) Identification of pathways. Circ Res 101:", 1, 72),
        L("e11-e30.", 1, 88),
        L("Figure 1: The key driver gene subnetwork", 2, 200),
        L("[4] Yang X, Schadt EE (2006) Tissue-specific expression. Genome Res 16.", 3, 72),
    ]
    got = texts(rows)
    assert len(got) == 4
    assert got[2] == "Wang SS, Schadt EE (2007) Identification of pathways. Circ Res 101: e11-e30."
    assert got[3].startswith("Yang X")


def test_lines_before_a_numbered_list_s_first_label_that_are_no_reference_are_left_out() -> None:
    # DESeq's session info: a column of package names read after the heading, before "[1]".
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        L("bit_1.1-14", 1, 400),
        L("grid_4.0.0", 1, 400),
        L("[1] Simon Anders and Wolfgang Huber. Differential expression. Genome Biology,", 1, 72),
        L("11:R106, 2010.", 1, 88),
        L("[2] Valerie Obenchain. Counting with summarizeOverlaps. Vignette, 2011.", 1, 72),
    ]
    got = found(rows)
    assert [r.label for r in got.references] == ["1", "2"]
    assert got.references[0].text.startswith("Simon Anders")


def test_entries_that_end_on_a_number_or_a_word_are_still_split_in_plain_text() -> None:
    # GROBID's annotated reference zones: astrophysics and Vancouver lists without full stops.
    from citeverify_core.references.document import extract_document

    text = (
        "References\n"
        "Katsuda, S., & Tsunemi, H. 2005, PASJ, 57, 621\n"
        "Katsuda, S., & Tsunemi, H. 2006, ApJ, 642, 917\n"
        "Cheung SW, Nagarajan SS (2009) Cortical maps. Neuroimage\n"
        "Smith, J., Brown, K., 2004, A&A, 420, 1.\n"
        "Wood, K., Brown, K., and\n"
        "Jones, L. 2005, A&A, 421, 2\n"
    )
    got = [r.text for r in extract_document(text.encode(), name="zone.txt").references]
    assert got == [
        "Katsuda, S., & Tsunemi, H. 2005, PASJ, 57, 621",
        "Katsuda, S., & Tsunemi, H. 2006, ApJ, 642, 917",
        "Cheung SW, Nagarajan SS (2009) Cortical maps. Neuroimage",
        "Smith, J., Brown, K., 2004, A&A, 420, 1.",
        # A line that ends on a joining word goes on, author and year or not.
        "Wood, K., Brown, K., and Jones, L. 2005, A&A, 421, 2",
    ]


def test_an_entry_of_over_forty_lines_does_not_end_a_numbered_list() -> None:
    # A genome paper's 190 authors over 41 lines, then the list goes on at [30].
    from citeverify_core.references.document import extract_document

    authors = "".join(f"Author{k} A, Author{k} B, Author{k} C, Author{k} D,\n" for k in range(44))
    text = (
        "References\n[1] Smith J. A first paper. Nature. 2001;1:1-2.\n"
        f"[2] {authors}Consortium Z. The genome of a fly. Science. 2000;287:2185-95.\n"
        "[3] Brown K. A third paper. Cell. 2003;3:3-4.\n"
    )
    got = extract_document(text.encode(), name="zone.txt").references
    assert [r.label for r in got] == ["1", "2", "3"]
    assert got[2].text == "Brown K. A third paper. Cell. 2003;3:3-4."


def test_alphabetic_labels_made_of_a_year_do_not_make_the_list_numbered() -> None:
    # biblatex-ieee-alphabetic: works without an author sort first as "[08]", "[96]", "[97]".
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        L("[08] IEEE Personal Commun. Mag., Special Issue on Wireless ATM", 1, 72),
        L("vol. 3 1996-08.", 1, 100),
        L("[96] FLEXChip signal processor (MC68175/D), Motorola, 1996.", 1, 72),
        L("[97] Wireless LAN medium access control (MAC), IEEE Std. 802.11, 1997.", 1, 72),
        L("[AT00] J. B. Anderson and K. Tepe, “Properties of the tailbiting BCJR de-", 1, 72),
        L("coder,” in Codes, Systems and Graphical Models. Springer, 2000.", 1, 100),
        L("[Bre89] J. Breckling, Ed., The Analysis of Directional Time Series. 1989.", 1, 72),
    ]
    got = found(rows).references
    assert [r.label for r in got] == ["08", "96", "97", "AT00", "Bre89"]


def test_a_last_entry_whose_year_comes_after_many_names_is_kept() -> None:
    # affy's builtinMethods: ten authors written "Christopher. Workman, Lars. Juhl. Jensen, ...".
    rows = [
        *body(),
        L("References", 1, 72, 14.0),
        *entry("Adams", 2001, 1),
        L("J. W. Tukey. Exploratory Data Analysis. Addison-Wesley, 1977.", 1, 72),
        L("Christopher. Workman, Lars. Juhl. Jensen, Hanne. Jarmer, Randy. Berka, Laurent.", 1, 72),
        L(
            "Gautier, Henrik. Bjorn. Nielser, Hans.-Henrik Saxild, Claus. Nielsen, Soren. Brunak,",
            1,
            84,
        ),
        L(
            "and Steen. Knudsen. A new non-linear normalization method for reducing variability",
            1,
            84,
        ),
        L("in DNA microarray experiments. Genome Biol, 3(9):research0048, Aug 2002.", 1, 84),
    ]
    got = texts(rows)
    assert len(got) == 3
    assert got[-1].endswith("Genome Biol, 3(9):research0048, Aug 2002.")


def test_a_long_caption_after_an_author_date_list_and_a_page_number_cut_from_its_entry() -> None:
    # emulateapj: "PASP, 96," + "198" (the last page on a line of its own, not a page number),
    # then the appendix figures' captions, a full line long, after the list's last entry.
    rows = [
        *body(),
        L("References", 1, 72, 12.0),
        L("Kron, G. E., Hewitt, A. V., & Wasserman, L. H. 1984, PASP, 96,", 1, 72, 8.0),
        L("198", 1, 80, 8.0),
        L("Lynden-Bell, D., & Wood, R. 1968, MNRAS, 138, 495", 1, 72, 8.0),
        L("Treu, T. et al., 2003, ApJ, 591, 53", 1, 72, 8.0),
        L(
            "Fig. A1.— Derived spectra for 3C138 (see Heiles & Troland 2003). Plots for all "
            "sources are available in the electronic edition of The",
            2,
            72,
            8.0,
        ),
        L("Astrophysical Journal.", 2, 72, 8.0),
    ]
    assert texts(rows) == [
        "Kron, G. E., Hewitt, A. V., & Wasserman, L. H. 1984, PASP, 96, 198",
        "Lynden-Bell, D., & Wood, R. 1968, MNRAS, 138, 495",
        "Treu, T. et al., 2003, ApJ, 591, 53",
    ]


def test_labels_in_the_outer_margin_right_of_the_text_on_odd_pages() -> None:
    # A twoside thesis (hpsdiss): "[Schmid97] Hanspeter ..." on even pages, "Hanspeter
    # Schmid. ... [Schmid98a]" on odd ones; each entry after vertical space.
    rows = [
        *body(),
        L("Bibliography", 1, 72, 14.0, heading=True),
        L("[Sansen99] Willy Sansen. “Distortion in elementary transistor circuits.” IEEE", 2, 57),
        L("Transactions on Circuits and Systems–II, vol. 46, pp. 315–325, 1999.", 2, 108),
        L("[Schmid97] H. Schmid and G. S. Moschytz. “Tunable CCII-MOSFET-C filter", 2, 55),
        L("biquads.” In Proceedings of ECCTD, vol. 1, pp. 82–87. Budapest, 1997.", 2, 108),
        L("Hanspeter Schmid. “The ideal amplifier myth, and a complete am- [Schmid98a]", 3, 63),
        L("plifier classification.” Tech. Rep. 9801, ETH Zürich, Jan. 1998.", 3, 63),
        L(
            "Hanspeter Schmid. “Understanding integrated amplifiers.” Tech. [Schmid98b]",
            3,
            63,
            paragraph=True,
        ),
        L("Rep. 9802, ETH Zürich, Mar. 1998.", 3, 63),
    ]
    got = found(rows).references
    assert [r.label for r in got] == ["Sansen99", "Schmid97", "Schmid98a", "Schmid98b"]
    assert got[2].text == (
        "Hanspeter Schmid. “The ideal amplifier myth, and a complete amplifier "
        "classification.” Tech. Rep. 9801, ETH Zürich, Jan. 1998."
    )


def test_an_author_list_cut_after_a_given_name_goes_on() -> None:
    # Chicago: "..., Kinley Taylor, Alison" + "Amos, and Charlotte Haithcox. 2017. ...": the
    # next line starts like an author with a year, but the names go on.
    from citeverify_core.references.document import extract_document

    text = (
        "References\n"
        "Davis, Rebecca, Marcie L. Riches, Paula Stinson, Kinley Taylor, Alison\n"
        "Amos, and Charlotte Haithcox. 2017. “Research on Coatings.” Biology 23 (3): S447.\n"
        "Baker, Stacey L., Scott P. Carroll, Jose\n"
        "Andres, and David R. Angelini. 2011. “Examining the Basis.” Dev. Biol. 356 (1): 245.\n"
    )
    got = [r.text for r in extract_document(text.encode(), name="list.txt").references]
    assert [g.split(",")[0] for g in got] == ["Davis", "Baker"]
