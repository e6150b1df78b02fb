r"""A LaTeX document's own macros, Sweave chunks, \input and citation forms (issue 34).

Real sources (R package vignettes, journal samples) define their own commands: ``{\RR}`` must
read "R", ``\pkg{limma}`` "limma", and no definition (``\def\a{\a}``) may hang the reader.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from citeverify_core.references.document import extract_document
from citeverify_core.references.document.latex_text import latex_to_text, new_macro_table
from citeverify_core.references.document.markup import read_markup


def _text(source: str, preamble: str = "") -> str:
    macros = new_macro_table()
    macros.read(preamble)
    return " ".join(latex_to_text(source, macros=macros).split())


@pytest.mark.parametrize(
    ("preamble", "source", "text"),
    [
        (
            r"\newcommand{\RR}{R}",
            r"analysis with {\RR} and \RR{} code",
            "analysis with R and R code",
        ),
        (r"\newcommand\RR{R}", r"with \RR\ code", "with R code"),
        (r"\newcommand*\pkg[1]{\textbf{#1}}", r"the \pkg{limma} package", "the limma package"),
        (
            r"\newcommand{\pkg}[1]{{\normalfont\fontseries{b}\selectfont #1}}",
            r"\pkg{edgeR}.",
            "edgeR.",
        ),
        (r"\newcommand{\two}[2]{#2 by #1}", r"\two{Smith}{A Study}", "A Study by Smith"),
        (r"\newcommand{\opt}[2][none]{#1/#2}", r"\opt{x} and \opt[y]{z}", "none/x and y/z"),
        (r"\newcommand{\RR}{R}\renewcommand{\RR}{S}", r"{\RR}", "S"),
        (r"\newcommand{\RR}{R}\providecommand{\RR}{S}", r"{\RR}", "R"),
        (r"\providecommand{\RR}{S}", r"{\RR}", "S"),
        (r"\DeclareRobustCommand{\proglang}[1]{\textsf{#1}}", r"\proglang{Python}", "Python"),
        (r"\def\foo{Foo}", r"a \foo{} b", "a Foo b"),
        (r"\def\swap#1#2{#2#1}", r"\swap{a}{b}", "ba"),
        (r"\gdef\foo{Foo}\let\bar\foo", r"\bar{}", "Foo"),
        (r"\let\bar=\foo \def\foo{Foo}", r"\bar{}", "Foo"),
        (
            r"\newcommand{\Rpackage}[1]{\textit{#1}}\newcommand{\Bioc}{\Rpackage{Bioconductor}}",
            r"\Bioc{} rocks",
            "Bioconductor rocks",
        ),
        # \xspace keeps the space a word macro would otherwise end at, as in TeX.
        (r"\newcommand{\RR}{R\xspace}", r"\RR is here, \RR.", "R is here, R."),
        (r"\newcommand{\RR}{R}", r"\RR is", "Ris"),
        # A delimited parameter text is not guessed: the use reads as an unknown command.
        (r"\def\dot#1.{[#1]}", r"\dot{x}.", "x."),
        # A name the reader reads itself is never redefined (hyperref, a .bbl's \providecommand).
        (
            r"\renewcommand{\cite}[1]{X}\providecommand{\url}[1]{\texttt{#1}}",
            r"\url{https://a.org/x_y}",
            "https://a.org/x_y",
        ),
        (r"\def\newblock{\hskip .11em plus .33em minus .07em}", r"A.\newblock B.", "A. B."),
        # TeX programming is no text macro: read as an unknown command (IEEEtran's .bbl).
        (
            r"\providecommand{\BIBalt}{\spaceskip=\fontdimen2\font plus 4\fontdimen3\font}",
            r"\BIBalt M. Shell. Title.",
            "M. Shell. Title.",
        ),
        (r"\newcommand{\opt}[1]{\ifx#1\empty none\else#1\fi}", r"\opt{x}", "x"),
        # \unskip takes back the space before it, from inside a macro too.
        (
            r"\providecommand\Dash {\unskip \textemdash}",
            r"Tagged PDF \Dash A blueprint",
            "Tagged PDF—A blueprint",
        ),
        # bibtex's \noopsort (a sort key the page does not print).
        (r"\providecommand{\noopsort}[1]{}", r"\noopsort{1999}Smith", "Smith"),
    ],
)
def test_document_macros_are_expanded(preamble: str, source: str, text: str) -> None:
    assert _text(source, preamble) == text


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"\LaTeX{} and \TeX\ with \BibTeX, \LaTeXe", "LaTeX and TeX with BibTeX, LaTeX 2ε"),
        (
            r"as \eg shown, \ie{} here, Smith \etal (2020)",
            "as e.g. shown, i.e. here, Smith et al. (2020)",
        ),
        (r"\textsc{Knuth}, M\"{u}ller, {\ss}, G\'omez", "Knuth, Müller, ß, Gómez"),
        (r"pp.~1--10 --- ``quoted''", "pp. 1–10 — “quoted”"),
        (r"11\penalty0 (1):\penalty0 94, \hskip 1em plus 1fil x", "11(1):94, x"),
        (r"a\\[2pt] b \verb|x_y| c", "a b x_y c"),
        (r"\begin{tabular}{p{2in}|l} a & b \end{tabular}", "a & b"),
    ],
)
def test_text_macros_and_logos(latex: str, text: str) -> None:
    assert " ".join(latex_to_text(latex).split()) == text


@pytest.mark.parametrize(
    "preamble",
    [
        r"\def\a{\a}",  # expands to itself
        r"\newcommand{\a}{x\a}",
        r"\def\a{\a\a}",  # doubles at each level: 2^n without a budget
        r"\def\a#1{\a{#1#1}}",  # its argument doubles
        r"\def\q{\a}\def\a{\q}",  # a cycle through two macros
        r"\let\a\q \let\q\a",  # aliases in a cycle
    ],
)
def test_hostile_macros_end_quickly(preamble: str) -> None:
    started = time.process_time()
    text = _text(r"start " + r"\a \q " * 50 + " end", preamble)
    assert text.startswith("start") and text.endswith("end")
    assert time.process_time() - started < 5


def _name(k: int) -> str:
    letters = ""
    while True:
        k, r = divmod(k, 26)
        letters += chr(97 + r)
        if not k:
            return "m" + letters


def test_ten_thousand_chained_macros() -> None:
    chain = "".join(rf"\def\{_name(k)}{{\{_name(k + 1)} {k}}}" for k in range(10_000))
    started = time.process_time()
    text = _text(rf"start \{_name(0)} end", chain)
    assert time.process_time() - started < 5
    assert text.startswith("start") and text.endswith("end")


def test_ten_thousand_nested_groups_and_quotes() -> None:
    deep = r"\enquote{" * 10_000 + "x" + "}" * 10_000
    started = time.process_time()
    text = latex_to_text(deep)  # read in one pass: no recursion, no rescan
    assert text == "“" * 10_000 + "x" + "”" * 10_000
    assert latex_to_text(r"\enquote{a \enquote{b} {c}} d") == "“a “b” c” d"
    assert latex_to_text("{" * 10_000 + "x" + "}" * 10_000) == "x"
    assert time.process_time() - started < 5


def test_huge_expansion_is_bounded_and_noted() -> None:
    big = "x" * 10_000  # under the longest body kept; four of them per use, 2,000 uses
    tex = (
        rb"\documentclass{article}\def\big{" + big.encode() + rb"}\def\a{\big\big\big\big}"
        b"\n\\begin{document}\n" + rb"\a" * 2000 + b"\n\\end{document}\n"
    )
    started = time.process_time()
    doc = read_markup(tex, "tex", name="p.tex")
    assert time.process_time() - started < 10
    assert sum(len(line.text) for line in doc.lines) < 20_000_000
    assert any("macros" in note for note in doc.notes)


RNW = rb"""\documentclass{article}
\newcommand{\Rpackage}[1]{\textit{#1}}
\newcommand{\RR}{R}
\newcommand{\mycite}[1]{\citep{#1}}
\begin{document}
\SweaveOpts{eps=false}
We use {\RR} and \Rpackage{limma} \citep{smyth04}, \citeauthor{gentleman04}.
See \parencites[p.~3]{a}[5]{b} and \cite<see>[p.~2]{c}; value \Sexpr{round(pi, 2)}.
<<load, echo=TRUE>>=
library(limma) # [20] 132 139
x <- c(1, 2)
@
\begin{verbatim}
[20] 132 139
\end{verbatim}
Done \mycite{d}.
\begin{thebibliography}{1}
\bibitem{smyth04} G.~K. Smyth. \newblock Linear models with {\RR}. \newblock \Rpackage{SAGMB}, 2004.
\end{thebibliography}
\end{document}
"""


def test_sweave_document_macros_chunks_and_citations() -> None:
    doc = read_markup(RNW, "tex", name="vignette.Rnw")
    texts = [line.text for line in doc.lines]
    assert texts[0] == r"We use R and limma \citep{smyth04}, \citeauthor{gentleman04}."
    # apacite's <prenote> as natbib's first option, the form the citation reader reads.
    assert texts[1] == r"See \parencites[p.~3]{a}[5]{b} and \cite[see][p.~2]{c}; value ."
    assert not any("132" in t or "library" in t or "eps" in t for t in texts)
    assert texts[-1] == r"Done \mycite{d}."
    assert doc.entries is not None
    assert doc.entries[0].text == "G. K. Smyth. Linear models with R. SAGMB, 2004."


def test_input_of_a_sibling_is_spliced() -> None:
    files = {
        "intro.tex": b"\\newcommand{\\RR}{R}\nIntro with {\\RR} \\cite{k}.\n",
        "refs.bbl": b"\\begin{thebibliography}{1}\n\\bibitem{k} A. Author. Title with {\\RR}.\n"
        b"\\end{thebibliography}\n",
    }
    main = b"\\begin{document}\n\\input{intro}\n\\input{main}\n\\input{refs.bbl}\n\\end{document}\n"

    def sibling(name: str) -> bytes | None:
        return files.get(name)

    doc = read_markup(main, "tex", name="main.tex", sibling=sibling)
    assert [(line.text, line.location.line) for line in doc.lines] == [
        (r"Intro with R \cite{k}.", 2)
    ]
    assert doc.entries is not None
    assert [(e.key, e.text, e.location.line) for e in doc.entries] == [
        ("k", "A. Author. Title with R.", 4)
    ]


def test_a_source_on_disk_reads_its_input_files_and_none_outside_its_folder(tmp_path: Path) -> None:
    """``citeverify refs paper.tex`` splices ``\\input{intro}`` from the paper's folder, and a
    name that leaves the folder (a symbolic link to another place) reads nothing."""
    paper = tmp_path / "paper"
    paper.mkdir()
    (tmp_path / "secret.tex").write_text("Secret words \\cite{b}.\n")
    (paper / "intro.tex").write_text("We follow \\Citet{a}.\n")
    (paper / "leak.tex").symlink_to(tmp_path / "secret.tex")
    (paper / "main.bbl").write_text(  # what bibtex writes beside main
        "\\begin{thebibliography}{1}\n\\bibitem{a} A. Author. A title. 2001.\n"
        "\\end{thebibliography}\n"
    )
    main = paper / "main.Rnw"  # a Sweave source is read as LaTeX, its chunks left out
    main.write_text(
        "\\begin{document}\n\\input{intro}\n\\input{leak}\n<<>>=\nx <- 1 # \\cite{c}\n@\n"
        "\\bibliography{refs}\n\\end{document}\n"
    )
    doc = extract_document(main)
    assert doc.format == "tex"
    assert [r.text for r in doc.references] == ["A. Author. A title. 2001."]
    # \Citet in the spliced file cites "a"; the linked file outside the folder was not read.
    assert [(c.text, c.entries) for c in doc.citations] == [("\\Citet{a}", (1,))]
    assert doc.findings == []


def test_two_inputs_on_one_line_are_both_spliced() -> None:
    files = {"a.tex": b"First \\cite{a}.\n", "b.tex": b"Second \\cite{b}.\n"}
    main = b"\\begin{document}\nBefore \\input{a}\\input{missing} middle \\input{b} after.\n"
    doc = read_markup(main, "tex", name="main.tex", sibling=files.get)
    assert [line.text for line in doc.lines] == [
        "Before",
        r"First \cite{a}.",
        "middle",
        r"Second \cite{b}.",
        "after.",
    ]


def test_citations_after_a_comment_are_not_read_on_that_line_only() -> None:
    bib = "".join(f"\\bibitem{{k{i}}} A. Author. Title {i}. 2001.\n" for i in range(4))
    src = (
        "\\begin{document}\n\\cite{k0} and \\cite{k1} % \\cite{k2} \\cite{k9}\n"
        "Also \\cite{k3}.\n"
        f"\\begin{{thebibliography}}{{9}}\n{bib}\\end{{thebibliography}}\n\\end{{document}}\n"
    )
    doc = extract_document(src.encode(), name="c.tex")
    assert [c.text for c in doc.citations] == [r"\cite{k0}", r"\cite{k1}", r"\cite{k3}"]
    assert [(f.kind, f.entry) for f in doc.findings] == [("uncited-entry", 3)]


def _bib(n: int) -> str:
    items = "".join(f"\\bibitem{{k{i}}} A. Author. Title {i}. 2001.\n" for i in range(n))
    return f"\\begin{{thebibliography}}{{9}}\n{items}\\end{{thebibliography}}\n"


def test_a_citation_in_the_title_block_s_note_cites() -> None:
    # mciteplus's manual: "\author{M. Shell\thanks{... at CTAN \cite{ctan:mciteplus}.}}".
    src = (
        "\\documentclass{article}\n\\title{A Manual}\n"
        "\\author{Michael Shell\\thanks{See the web page.\n"
        "The latest version is on CTAN \\cite{k0}.}}\n"
        "\\begin{document}\n\\maketitle\nText citing \\cite{k1}.\n"
        f"{_bib(2)}\\end{{document}}\n"
    )
    doc = extract_document(src.encode(), name="m.tex")
    assert doc.findings == []
    assert [c.text for c in doc.citations] == [r"\cite{k0}", r"\cite{k1}"]
    assert doc.citations[0].location.line == 4
    assert doc.title == "A Manual"


def test_examples_shown_by_a_catcode_changing_macro_are_no_citations() -> None:
    # "\MYlongcmd" -> "\ZAXlong" -> "\ZAXstartLong" sets catcodes: what follows is code shown.
    src = (
        "\\documentclass{article}\n"
        "\\def\\ZAXstartLong{\\begingroup\\catcode`\\|=0 \\catcode`\\\\=12 \\ZAXrun}\n"
        "\\def\\ZAXlong#1{#1\\ZAXstartLong}\n"
        "\\newcommand{\\MYlongcmd}{\\ZAXlong{\\ttfamily\\small}}\n"
        "\\begin{document}\nAs shown in \\cite{k0}:\n"
        "\\begin{MYlistblk}\n\\MYlongcmd\n\\cite{Glashow,*Salam}|end\n"
        "\\cite{Weinberg} |% a comment|end\n\\end{MYlistblk}\n"
        "After the block \\cite{k1}.\n"
        f"{_bib(2)}\\end{{document}}\n"
    )
    doc = extract_document(src.encode(), name="m.tex")
    assert [c.text for c in doc.citations] == [r"\cite{k0}", r"\cite{k1}"]
    assert doc.findings == []


def test_thousands_of_catcode_macros_and_their_uses_end_quickly() -> None:
    # A hostile preamble: 5,000 macros, each calling the next, the last setting a catcode,
    # each body long; a body using them 10,000 times. Followed as sets, read once.
    chain = "".join(rf"\def\{_name(k)}{{\{_name(k + 1)}" + " x" * 900 + "}\n" for k in range(5000))
    chain += rf"\def\{_name(5000)}{{\catcode`\|=0 }}" + "\n"
    uses = "".join(rf"Text \{_name(k % 5000)} and \cite{{k0}}." + "\n\n" for k in range(10_000))
    src = (
        f"\\documentclass{{article}}\n{chain}\\begin{{document}}\n{uses}"
        "\\begin{thebibliography}{9}\n\\bibitem{k0} A. Author. Title. 2001.\n"
        "\\end{thebibliography}\n\\end{document}\n"
    )
    started = time.process_time()
    doc = extract_document(src.encode(), name="hostile.tex")
    assert time.process_time() - started < 20
    assert len(doc.references) == 1
