"""Line-end hyphens in real typeset lists: an English word cut in two is joined (issue 34).

TeX breaks "correlated" as "cor-" + "related" and "influential" as "influ-" + "ential"; the shape
rules alone kept those hyphens. A compact word list shipped with the core now says they are
words; real compounds and names keep their hyphen, and the document's own spelling wins.
"""

from __future__ import annotations

from collections import Counter

import pytest

from citeverify_core.references.document.segment import join_lines


@pytest.mark.parametrize(
    ("lines", "joined"),
    [
        (["Cor-", "related errors in panel data."], "Correlated errors in panel data."),
        (["Influ-", "ential observations."], "Influential observations."),
        (["A data-", "driven method."], "A data-driven method."),
        (["Smith-", "Jones, A."], "Smith-Jones, A."),
        (["A self-", "assessment."], "A self-assessment."),
        (["non-", "linear models"], "non-linear models"),
    ],
)
def test_words_cut_by_a_line_end_and_real_hyphens(lines: list[str], joined: str) -> None:
    assert join_lines(lines) == joined


def test_the_document_s_own_spelling_beats_the_word_list() -> None:
    # The document writes "cor-related" with a hyphen elsewhere: kept.
    compounds = Counter({"cor-related": 2})
    assert join_lines(["Cor-", "related"], Counter(), compounds) == "Cor-related"


@pytest.mark.parametrize(
    ("lines", "joined"),
    [
        (["http://mirrors.", "ctan.org/macros/a.pdf."], "http://mirrors.ctan.org/macros/a.pdf."),
        (
            ["url: https://www.transcript-", "verlag.de/978/."],
            "url: https://www.transcript-verlag.de/978/.",
        ),
        (["see http:", "//mirror.ctan.org/a.pdf."], "see http://mirror.ctan.org/a.pdf."),
        (["see http://x.org/a.pdf.", "Accessed 2020."], "see http://x.org/a.pdf. Accessed 2020."),
        (["url: https://ctan.", "org/pkg/caption."], "url: https://ctan.org/pkg/caption."),
        (
            ["http://darwin-online.org.", "uk/content/a.html"],
            "http://darwin-online.org.uk/content/a.html",
        ),
        (["at https://x.org.", "in 2020 it"], "at https://x.org. in 2020 it"),
        (["see https://x.org.", "See also"], "see https://x.org. See also"),
        (
            ["Oxford Reference (2013), http://www.oxfordref", "erence.com/page/a, accessed 9 Nov."],
            "Oxford Reference (2013), http://www.oxfordref" + "erence.com/page/a, accessed 9 Nov.",
        ),
        (
            ["https://www.youtube.com/watch?v=0", "pDE4VX_9Kk, accessed"],
            "https://www.youtube.com/watch?v=0pDE4VX_9Kk, accessed",
        ),
        (["see http://x.org/a", "which, as we said"], "see http://x.org/a which, as we said"),
    ],
)
def test_urls_cut_by_a_line_end(lines: list[str], joined: str) -> None:
    assert join_lines(lines) == joined


@pytest.mark.parametrize(
    ("lines", "joined"),
    [
        (
            ["Wiggle track. http://genome.ucsc.edu/help/wiggle.", "html."],
            "Wiggle track. http://genome.ucsc.edu/help/wiggle.html.",
        ),
        (
            ["url: darwin-online.org.", "uk/content/frameset?itemID=A142 (accessed"],
            "url: darwin-online.org.uk/content/frameset?itemID=A142 (accessed",
        ),
        (
            ["URL: http://www.ncbi.nih.gov/articlerender.fcgi?", "artid=39{&}tool=pmcentrez."],
            "URL: http://www.ncbi.nih.gov/articlerender.fcgi?artid=39{&}tool=pmcentrez.",
        ),
        (["Published by example.com.", "In press."], "Published by example.com. In press."),
    ],
)
def test_urls_cut_after_a_dot_or_a_query_mark(lines: list[str], joined: str) -> None:
    assert join_lines(lines) == joined


def test_a_word_cut_before_a_compound_s_hyphen_is_joined() -> None:
    # "method-" + "ology-independent": TeX cut "methodology", then the compound's own hyphen.
    assert join_lines(["Computation of method-", "ology-independent energies."]) == (
        "Computation of methodology-independent energies."
    )
    assert join_lines(["the state-", "of-the-art method"]) == "the state-of-the-art method"
    assert join_lines(["a time-", "series-based test"], Counter({"series": 3})) == (
        "a time-series-based test"
    )


def test_doi_prefix_at_a_line_end_keeps_the_document_s_spacing() -> None:
    lines = ["Bioinformatics, 26(1):139–40, 2010. doi:", "10.1093/bioinformatics/btp616."]
    # TeX breaks at a space: "doi: 10..." unless the document prints its DOIs without one.
    assert join_lines(lines).endswith("doi: 10.1093/bioinformatics/btp616.")
    from citeverify_core.references.document.model import DocumentLine, Location
    from citeverify_core.references.document.segment_hyphens import document_vocabulary

    tight = [DocumentLine(f"X. Y. doi:10.1000/{k}.", Location(line=k)) for k in range(3)]
    words, compounds = document_vocabulary(tight)
    assert join_lines(lines, words, compounds).endswith("doi:10.1093/bioinformatics/btp616.")
