"""Where a reference list starts when no plain "References" heading stands before it (issue 34).

Each test reproduces a layout of a real development paper, built as the PDF reader gives its
lines (page, left edge, font size, heading flag): a list headed "Example References" at a
manual's end, a list printed under a title with no heading, a course bibliography whose title
ends in "Bibliography", running heads that carry the page number, an annotated bibliography;
and documents without a list, which must still be refused.
"""

from __future__ import annotations

import pytest

from citeverify_core.references.document.segment_lines import reference_heading
from citeverify_core.references.document.segment_start import qualified_heading
from tests.references.test_document_segment_lists import L, found


def hanging(first: str, *rest: str, page: int = 1) -> list[L]:
    """An entry set with a hanging indent: its first line flush, the others 11 points in."""
    return [L(first, page, 115.0), *(L(t, page, 126.0) for t in rest)]


LIST = [
    *hanging(
        "Cipriani, Alessandra and Wioletta M. Ruszel (2018). ‘Scaling limit of the odometer",
        "in divisible sandpiles’. In: Probability Theory and Related Fields 172.3.",
    ),
    *hanging(
        "Coleridge, Samuel Taylor (1983). The collected works of Samuel Taylor Coleridge.",
        "Ed. by Kathleen Coburn. London: Routledge and Kegan Paul.",
    ),
    *hanging("Gaonkar, Dilip Parameshwar, ed. (2001a). Alternative Modernities. Durham."),
    *hanging(
        "– (2001b). ‘On Alternative Modernities’. In: Alternative Modernities. Ed. by Dilip",
        "Parameshwar Gaonkar. Durham and London: Duke University Press, pp. 1–23.",
    ),
    *hanging(
        "Knuth, Donald E. (1984). Computers & Typesetting. Vol. A: The TeXbook. Reading,",
        "Mass.: Addison-Wesley.",
    ),
    *hanging(
        "Moore, Gordon E. (1965). ‘Cramming more components onto integrated circuits’. In:",
        "Electronics 38.8, pp. 114–117.",
    ),
]
ENTRIES = [
    "Cipriani, Alessandra and Wioletta M. Ruszel (2018). ‘Scaling limit of the odometer in "
    "divisible sandpiles’. In: Probability Theory and Related Fields 172.3.",
    "Coleridge, Samuel Taylor (1983). The collected works of Samuel Taylor Coleridge. Ed. by "
    "Kathleen Coburn. London: Routledge and Kegan Paul.",
    "Gaonkar, Dilip Parameshwar, ed. (2001a). Alternative Modernities. Durham.",
    "– (2001b). ‘On Alternative Modernities’. In: Alternative Modernities. Ed. by Dilip "
    "Parameshwar Gaonkar. Durham and London: Duke University Press, pp. 1–23.",
    "Knuth, Donald E. (1984). Computers & Typesetting. Vol. A: The TeXbook. Reading, Mass.: "
    "Addison-Wesley.",
    "Moore, Gordon E. (1965). ‘Cramming more components onto integrated circuits’. In: "
    "Electronics 38.8, pp. 114–117.",
]


def prose(page: int = 1) -> list[L]:
    """Running text with names and years, paragraphs set with a first-line indent."""
    return [
        L("As Smith, J. argued in 2019, the odometer of a sandpile grows with the", page, 87.0),
        L("number of grains that are dropped at its origin; others measured it on", page),
        L("larger grids, with the same result and with much the same methods.", page),
        L("Moore, G. E. observed in 1965 that the number of components doubled, and", page),
        L("the observation held for decades; it is quoted in many introductions.", page),
        L("Knuth, D. E. wrote in 1984 that typesetting deserved a program of its own,", page),
        L("which he then wrote, and which is still used for papers like this one.", page),
        L("Cipriani, A. and Ruszel, W. M. (2018) proved a scaling limit; their method", page, 87.0),
        L("was extended to random environments and to graphs of any degree, which", page),
        L("makes it the natural tool here. Gaonkar, D. P. edited a volume in which", page),
        L("alternative modernities are discussed at length by several authors.", page),
    ]


def test_a_heading_that_qualifies_the_list_name_starts_the_list() -> None:
    # biblatex-ext's manual: a change history with dates, then "Example References" on p. 57.
    rows = [
        L("0.6a 2019-01-04", 1, 99.0, paragraph=True),
        L("Minor improvements for biblatex-ext-oa . . . . . . . . . . . 7", 1, 99.0),
        L("0.6 2018-11-23", 1, 99.0, paragraph=True),
        L("Require biblatex 3.12", 1, 99.0),
        L("Example References", 2, 115.0, 14.3, heading=True),
        *[L(r.text, 2, r.x0) for r in LIST],
        L("A Punctuation Commands in Use", 3, 99.0, 14.3, heading=True),
        L("The following example bibliography shows some common punctuation commands.", 3, 99),
    ]
    result = found(rows)
    assert result.heading == "Example References"
    assert [r.text for r in result.references] == ENTRIES


@pytest.mark.parametrize(
    ("line", "word"),
    [
        ("Example References", "References"),
        ("Annotated Bibliography", "Bibliography"),
        ("Secondary Literature", "Literature"),
        ("Further Reading", "Reading"),
        ("Basics and Theories: Bibliography", "Bibliography"),
        ("SELECTED WORKS CITED", "WORKS CITED"),
        ("Cross References", None),
        ("Citing References", None),
        ("Using the Bibliography", None),
        ("see the Example References", None),
        ("These are the Example References.", None),
        ("Example References 57", None),
    ],
)
def test_qualified_headings(line: str, word: str | None) -> None:
    assert qualified_heading(line) == word


def test_a_plain_heading_wins_over_a_qualified_sub_heading_inside_its_list() -> None:
    # "Bibliography" / "Primary Sources" / "Secondary Literature": one list from the first.
    rows = [
        *prose(),
        L("Bibliography", 2, 115.0, 14.3, heading=True),
        L("Primary Sources", 2, 115.0, 12.0, heading=True),
        *[L(r.text, 2, r.x0) for r in LIST[:5]],
        L("Secondary Literature", 2, 115.0, 12.0, heading=True),
        *[L(r.text, 2, r.x0) for r in LIST[5:]],
    ]
    result = found(rows)
    assert result.heading == "Bibliography"
    assert [r.text for r in result.references] == ENTRIES


def test_a_qualified_heading_over_running_text_is_no_list() -> None:
    rows = [
        L("1 Introduction", 1, 72.0, 14.3, heading=True),
        *prose(1),
        L("Further Reading", 2, 72.0, 14.3, heading=True),
        *prose(2),
    ]
    assert found(rows).references == []


def test_a_list_without_any_heading_under_a_title_is_found() -> None:
    # biblatex-unified's test page: a title, then the list (heading=none).
    rows = [L("Unified biblatex style sheet for linguistics", 1, 115.0, 14.3, heading=True)]
    rows += LIST
    result = found(rows)
    assert [r.text for r in result.references] == ENTRIES
    assert result.start == 1


def test_running_text_with_names_and_years_and_no_list_is_refused() -> None:
    # Precision first: prose that names authors and years, with no list, gives no entry.
    rows = [L("A Study of Sandpiles", 1, 150.0, 17.0, heading=True)]
    for page in (1, 2, 3):
        rows += prose(page)
    assert found(rows).references == []


def test_a_short_run_of_reference_like_lines_in_running_text_is_no_list() -> None:
    # Four entries set off in the text (a quoted list) are too few to be taken as the list.
    rows = [*prose(1), *LIST[:7], *prose(2)]
    assert found(rows).references == []


def test_a_course_bibliography_starts_under_its_title_block() -> None:
    # jslectureplanner's bibliography: the title ends in "Bibliography", then the lecturer,
    # the term and the first session's heading, all set large; the entries follow.
    rows = [
        L("LEC Introduction to My Very Own Science –", 1, 149.0, 17.2, heading=True),
        L("Basics and Theories:", 1, 234.0, 17.2, heading=True),
        L("Bibliography", 1, 260.0, 17.2, heading=True),
        L("Dr. Paula Pan", 1, 273.0, 12.0, heading=True),
        L("Summer Term 2015", 1, 258.0, 12.0, heading=True),
        L("1 Introduction to the Introduction", 1, 115.0, 14.3, heading=True),
        *LIST[:4],
        L("2 Other Sciences: Wrong Tracks and False Facts", 1, 115.0, 14.3, heading=True),
        *LIST[4:],
    ]
    result = found(rows)
    assert result.heading == "Bibliography"
    # The next session's heading, in the size of the one above the first entry and followed
    # by references, is a sub-heading: the list goes on under it.
    assert [r.text for r in result.references] == ENTRIES[: len(result.references)]
    assert len(result.references) == len(ENTRIES)


def test_running_heads_with_the_page_number_name_the_list() -> None:
    # A dissertation's pages 180-181: "180 Bibliography" and "Bibliography 181" atop them.
    rows = [
        *prose(1),
        L("180 Bibliography", 2, 23.0),
        L("[Punzenberger98] Manfred Punzenberger and Christian C. Enz. “A compact low-", 2, 33),
        L("power BiCMOS log-domain filter.” IEEE Journal of Solid-State Circuits,", 2, 108),
        L("vol. 33, no. 7, pp. 1123–1129, Jul. 1998.", 2, 108),
        L("[Rao99] Narendra Rao, V. Balan, and R. Contreras. “A 3-V, 10–100-MHz", 2, 67),
        L("continuous-time seventh-order equiripple linear phase filter.” 1999.", 2, 108),
        L("[Rezzi97] Francesco Rezzi and Rinaldo Castello. “A 70-mW seventh-order", 2, 61),
        L("filter.” IEEE Journal of Solid-State Circuits, vol. 32, Dec. 1997.", 2, 108),
        L("Bibliography 181", 3, 264.0),
        L("[Sallen55] R. P. Sallen and E. L. Key. “A practical method of designing RC", 3, 63),
        L("active filters.” IRE Transactions on Circuit Theory, Mar. 1955.", 3, 108),
    ]
    result = found(rows)
    assert result.heading == "180 Bibliography"
    assert [r.label for r in result.references] == [
        "Punzenberger98",
        "Rao99",
        "Rezzi97",
        "Sallen55",
    ]
    assert not any("181" in r.text for r in result.references)


@pytest.mark.parametrize("line", ["180 Bibliography", "Bibliography 181", "REFERENCES 12"])
def test_a_running_head_with_a_page_number_is_a_heading(line: str) -> None:
    assert reference_heading(line) is not None


def test_long_entries_whose_first_lines_hold_one_year_keep_their_heading() -> None:
    # Entries of five lines, the year on the third, names without an author's comma: the six
    # lines under the heading hold one year, the entries the indents set apart one each.
    rows = [*prose(1), L("References", 2, 125.0, 14.3, heading=True)]
    for name, year in [("Aristotle", 1907), ("Idem", 1929), ("Idem", 1968), ("Averroes", 1869)]:
        rows += hanging(
            f"{name}: De Anima and other writings on the soul, edited with an introduction",
            "and a commentary on the text, its sources, its readers and its translations,",
            f"Cambridge: Cambridge University Press {year}, reprinted with corrections and",
            "an index of the Greek words, with a bibliography of the works on the soul",
            "that were printed before it, and a list of the manuscripts.",
            page=2,
        )
    result = found(rows)
    assert result.heading == "References"
    assert [r.text.split(":")[0] for r in result.references] == [
        "Aristotle",
        "Idem",
        "Idem",
        "Averroes",
    ]


def annotated(first: str, rest: list[str], note: list[str]) -> list[L]:
    """An entry with a hanging indent and, under it, a comment set a point smaller."""
    return [
        L(first, 2, 125.0),
        *(L(t, 2, 140.0) for t in rest),
        *(L(t, 2, 140.0, 9.0) for t in note),
    ]


def test_an_annotated_bibliography_is_taken_without_its_comments() -> None:
    # biblatex-dw (annotation=true): a comment set smaller under each entry; the entries are
    # read, their comments left out (no source would match an entry read with its comment).
    rows = [
        *prose(1),
        L("References", 2, 125.0, 14.3, heading=True),
        *annotated(
            "Angenendt, Arnold: In Honore Salvatoris – Vom Sinn und Unsinn der",
            [
                "Patrozinienkunde, in: Revue d’Histoire Ecclésiastique 97 (2002), pp. 431–456, 791–",
                "823.",
            ],
            [
                "A German article in a French journal. Apart from that, a typical article.",
                "Note the indextitle, library, shortjournal and options fields.",
                "Here is room for some notes regarding the library of the work.",
            ],
        ),
        *annotated(
            "Aristotle: De Anima, ed. by Robert Drew Hicks, Cambridge 1907.", [], ["A book."]
        ),
        *annotated(
            "Idem: Physics, trans. by P. H. Wicksteed, New York 1929.", [], ["A translation."]
        ),
        *annotated(
            "Idem: Poetics, ed. by D. W. Lucas, Oxford 1968.", [], ["A book with a series."]
        ),
    ]
    assert [r.text for r in found(rows).references] == [
        "Angenendt, Arnold: In Honore Salvatoris – Vom Sinn und Unsinn der Patrozinienkunde, "
        "in: Revue d’Histoire Ecclésiastique 97 (2002), pp. 431–456, 791–823.",
        "Aristotle: De Anima, ed. by Robert Drew Hicks, Cambridge 1907.",
        "Idem: Physics, trans. by P. H. Wicksteed, New York 1929.",
        "Idem: Poetics, ed. by D. W. Lucas, Oxford 1968.",
    ]


def test_notes_full_of_citations_are_no_list_without_a_heading() -> None:
    # A page's notes, set smaller, each citing a work with its year: never a list.
    rows = [*prose(1)]
    for n in range(20, 30):
        rows += [
            L(
                f"{n}This is just filler text. See Otto Springer: Mediaeval Pilgrim Routes",
                1,
                80,
                8,
            ),
            L("Rome, in: Mediaeval Studies 12 (1950), pp. 92–122.", 1, 72.0, 8.0),
        ]
    rows += prose(2)
    assert found(rows).references == []


def test_a_table_of_dated_rows_is_no_list_without_a_heading() -> None:
    # Rows that start like an author ("Germany, Berlin") and carry a year, but end on a number.
    rows = [*prose(1)]
    rows += [L(f"Germany, Berlin {2010 + n} 45.{n} 33.{n}", 1) for n in range(1, 9)]
    rows += prose(2)
    assert found(rows).references == []
