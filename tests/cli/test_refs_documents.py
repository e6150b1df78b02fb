"""``citeverify refs PAPER``: a whole paper's references verified, with locations (issue 26).

Real files (Markdown written here, a PDF drawn with reportlab), the real command (typer's
runner), a real local index built from the test data's Crossref works. The papers are simple (a
labelled "References" section) so that they read the same with every version of the extractor.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from citeverify_core.cli.app import app
from citeverify_core.references import LocalIndex
from tests.conftest import DATA

runner = CliRunner()

KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
LECUN_WRONG_YEAR = (
    "LeCun, Y., Bengio, Y., & Hinton, G. (2013). Deep learning. Nature, 521(7553), 436–444."
)
IOANNIDIS = (
    "Ioannidis, J. P. A. (2005). Why Most Published Research Findings Are False. "
    "PLoS Medicine, 2(8), e124."
)
#: Fabricated, with markup a report must never run.
HOSTILE = (
    "Doe, J. (2020). Quantum sponges <script>alert('x')</script> of the deep sea & 1 < 2. "
    "Journal of Nothing, 1, 1-2."
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("documents-index") / "index.sqlite"
    built = LocalIndex(path)
    built.build(DATA / "works-crossref.jsonl")
    built.close()
    return path


def markdown_paper(references: list[str]) -> str:
    """A short paper: a body citing [1]..[n], then its numbered "References" list."""
    cites = " ".join(f"Finding {n} [{n}]." for n in range(1, len(references) + 1))
    entries = "\n".join(f"[{n}] {r}" for n, r in enumerate(references, 1))
    return f"# A short paper\n\nWe build on earlier work. {cites}\n\n## References\n\n{entries}\n"


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` that holds ``needle``."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def refs(*args: str) -> tuple[int, str, str]:
    done = runner.invoke(app, ["refs", *args])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.output
    return done.exit_code, done.stdout, done.stderr


def test_a_markdown_paper_is_reported_with_counts_locations_and_statuses(
    tmp_path: Path, index: Path
) -> None:
    text = markdown_paper([KUHN, LECUN_WRONG_YEAR, HOSTILE])
    paper = tmp_path / "paper.md"
    paper.write_text(text, encoding="utf-8")
    code, out, _ = refs(str(paper), "--index", str(index))
    assert code == 1  # not every reference is verified
    assert out.startswith("paper.md (Markdown)")
    assert '3 references under "References": 1 verified, 1 verified-with-error, 1 unverified' in out
    blocks = re.split(r"\n(?=\s*\d+\. )", out.split("\n\n", 1)[1].split("\n\n")[0])
    assert len(blocks) == 3
    expected = [
        ("VERIFIED", KUHN[:40]),
        ("VERIFIED-WITH-ERROR", LECUN_WRONG_YEAR[:40]),
        ("UNVERIFIED", "Doe, J. (2020)"),
    ]
    for number, (block, (status, start)) in enumerate(zip(blocks, expected, strict=True), 1):
        head = block.strip().splitlines()[0]
        assert head == f"{number}. [{number}] line {line_of(text, start)}  {status}"
        assert start in block
    assert "-> LeCun, Y., Bengio, Y., & Hinton, G. (2015)" in blocks[1]  # corrected APA 7
    assert "fields that differ: year" in blocks[1]
    assert "->" not in blocks[2]  # nothing to correct an unverified reference to
    assert "->" not in blocks[0]  # nor a verified one: it is right as written
    assert "findings on the citations and the list" in out


def test_the_text_never_passes_a_terminal_escape_through(tmp_path: Path, index: Path) -> None:
    paper = tmp_path / "paper.md"
    escape = "Doe, J. (2020). Sponges \x1b[2J\x1b]0;owned\x07 of the sea. Journal of Nothing, 1."
    paper.write_text(markdown_paper([KUHN, escape]), encoding="utf-8")
    code, out, _ = refs(str(paper), "--index", str(index))
    assert code == 1
    assert "Sponges" in out and "\x1b" not in out and "\x07" not in out


def test_a_paper_whose_references_are_all_verified_exits_0(tmp_path: Path, index: Path) -> None:
    paper = tmp_path / "good.md"
    paper.write_text(markdown_paper([KUHN, IOANNIDIS]), encoding="utf-8")
    code, out, _ = refs(str(paper), "--index", str(index))
    assert code == 0, out
    assert "2 references" in out and "2 verified" in out


def test_json_is_the_document_with_each_result_merged(tmp_path: Path, index: Path) -> None:
    text = markdown_paper([KUHN, LECUN_WRONG_YEAR, HOSTILE])
    paper = tmp_path / "paper.md"
    paper.write_text(text, encoding="utf-8")
    code, out, _ = refs(str(paper), "--index", str(index), "--json")
    assert code == 1
    data = json.loads(out)
    assert (data["name"], data["format"]) == ("paper.md", "md")
    assert data["counts"] == {
        "verified": 1,
        "verified-with-error": 1,
        "needs-human": 0,
        "unverified": 1,
    }
    references = data["references"]
    assert [r["number"] for r in references] == [1, 2, 3]
    assert [r["label"] for r in references] == ["1", "2", "3"]
    assert [r["status"] for r in references] == ["verified", "verified-with-error", "unverified"]
    assert references[0]["text"] == KUHN
    assert references[1]["location"] == {"page": None, "line": line_of(text, "LeCun")}
    assert references[1]["field_results"]["year"] != "MATCH"
    assert references[1]["reference"].startswith("LeCun, Y., Bengio, Y., & Hinton, G. (2015)")
    for reference in references:
        assert {"message", "citations", "findings", "match_set_size"} <= set(reference)
    assert isinstance(data["findings"], list) and isinstance(data["citations"], list)


def test_report_is_one_self_contained_page_with_the_references_escaped(
    tmp_path: Path, index: Path
) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(markdown_paper([KUHN, LECUN_WRONG_YEAR, HOSTILE]), encoding="utf-8")
    page = tmp_path / "report.html"
    code, out, err = refs(str(paper), "--index", str(index), "--json", "--report", str(page))
    assert code == 1
    assert json.loads(out)["counts"]["verified"] == 1  # --json and --report together
    assert f"report: {page}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.md", "report.html"]
    shown = page.read_text(encoding="utf-8")
    assert shown.startswith("<!DOCTYPE html>") and shown.rstrip().endswith("</html>")
    # Nothing is fetched: no script, stylesheet link, frame or external URL in an attribute.
    assert not re.search(r"<\s*(script|link|iframe|img|object|embed)\b", shown, re.I)
    assert not re.search(r"(src|href)\s*=", shown, re.I)
    assert "url(" not in shown and "@import" not in shown
    # Markdown's inline HTML may be dropped by the reader; what it keeps is shown escaped.
    hostile = json.loads(out)["references"][2]["text"]
    assert "<" in hostile and html.escape(hostile) in shown
    for status in ("verified", "verified-with-error", "unverified"):
        assert f'class="st-{status}"' in shown
    assert f"line {line_of(paper.read_text(encoding='utf-8'), 'Kuhn')}" in shown
    assert "Deep learning. Nature, 521(7553), 436–444. https://doi.org/10.1038/nature14539" in shown


def _pdf_paper(path: Path, references: list[str]) -> None:
    """A two-page PDF: a body citing [1]..[n] on page 1, "References" on page 2."""
    pytest.importorskip("reportlab", reason="the documents extra draws the test PDF")
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setTitle("Reference checking in practice")
    pdf.setFont("Helvetica-Bold", 16)
    pdf.drawString(72, 770, "Reference checking in practice")
    pdf.setFont("Helvetica", 10)
    y = 740
    for n in range(1, len(references) + 1):
        pdf.drawString(72, y, f"Earlier work established result number {n} [{n}].")
        y -= 14
    pdf.showPage()
    pdf.setFont("Helvetica-Bold", 12)
    pdf.drawString(72, 770, "References")
    pdf.setFont("Helvetica", 8)
    y = 748
    for n, reference in enumerate(references, 1):
        pdf.drawString(60, y, f"[{n}] {reference}")
        y -= 18
    pdf.showPage()
    pdf.save()


def test_a_pdf_paper_gives_pages_and_lines(tmp_path: Path, index: Path) -> None:
    paper = tmp_path / "paper.pdf"
    _pdf_paper(paper, [KUHN, LECUN_WRONG_YEAR, HOSTILE])
    code, out, _ = refs(str(paper), "--index", str(index))
    assert code == 1, out
    assert out.startswith("paper.pdf (PDF, 2 pages)")
    assert "3 references" in out and "1 verified, 1 verified-with-error, 1 unverified" in out
    heads = re.findall(r"^\s*(\d+)\. \[(\d+)\] page (\d+), line (\d+)  (\S+)$", out, re.M)
    assert [(n, label, page, status) for n, label, page, _, status in heads] == [
        ("1", "1", "2", "VERIFIED"),
        ("2", "2", "2", "VERIFIED-WITH-ERROR"),
        ("3", "3", "2", "UNVERIFIED"),
    ]
    lines = [int(line) for *_, line, _ in heads]
    assert lines == sorted(lines) and len(set(lines)) == 3 and lines[0] > 1  # below the heading
    page = tmp_path / "paper.html"
    as_json = json.loads(
        refs(str(paper), "--index", str(index), "--json", "--report", str(page))[1]
    )
    assert [r["location"]["page"] for r in as_json["references"]] == [2, 2, 2]
    assert as_json["pages"] == 2
    shown = page.read_text(encoding="utf-8")
    assert "<script" not in shown and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in shown
    assert "page 2, line" in shown


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        pytest.param("empty.md", b"# Notes\n\nNo list at all here.\n", "no reference list found",
                     id="no-list"),
        pytest.param("broken.pdf", b"%PDF-1.7\n" + b"\x00garbage" * 50, "broken.pdf", id="corrupt"),
        pytest.param("broken.docx", b"PK\x03\x04 not a zip", "broken.docx", id="corrupt-docx"),
    ],
)  # fmt: skip
def test_a_document_that_cannot_be_read_is_one_line_and_exit_2(
    tmp_path: Path, index: Path, name: str, content: bytes, fragment: str
) -> None:
    paper = tmp_path / name
    paper.write_bytes(content)
    code, out, err = refs(str(paper), "--index", str(index))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("citeverify: error:") and fragment in lines[0]
    assert "Traceback" not in err and "internal error" not in err


def test_a_paper_without_an_index_or_a_file_is_bad_input(tmp_path: Path) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(markdown_paper([KUHN]), encoding="utf-8")
    code, _, err = refs(str(paper), "--index", str(tmp_path / "none.sqlite"))
    assert code == 2 and "citeverify index build" in err
    code, _, err = refs(str(tmp_path / "absent.pdf"), "--index", str(tmp_path / "none.sqlite"))
    assert code == 2 and "no such file" in err


def test_a_reference_list_keeps_its_behaviour_and_gets_a_report(
    tmp_path: Path, index: Path
) -> None:
    listing = tmp_path / "refs.txt"
    listing.write_text(f"References\n{KUHN}\n\n{HOSTILE}\n", encoding="utf-8")
    page = tmp_path / "list.html"
    code, out, _ = refs(str(listing), "--index", str(index), "--report", str(page))
    assert code == 1
    assert "VERIFIED " in out and "UNVERIFIED" in out  # the table of a reference list
    shown = page.read_text(encoding="utf-8")
    assert "line 2" in shown and "line 4" in shown  # its lines are the locations
    assert "<script>" not in shown and "&lt;script&gt;" in shown


def test_a_paper_sent_to_a_service_reports_as_here(tmp_path: Path, index: Path) -> None:
    """``refs paper.md --server``: the service reads and verifies; the report is the same."""
    from citeverify_core.client import ReferenceClient

    paper = tmp_path / "paper.md"
    paper.write_text(markdown_paper([KUHN, LECUN_WRONG_YEAR, HOSTILE]), encoding="utf-8")
    if not hasattr(ReferenceClient, "submit_document"):  # the service route: another part
        code, out, err = refs(str(paper), "--server", "http://127.0.0.1:9")
        assert (code, out) == (2, "")
        assert "cannot send a paper to a service" in err and len(err.strip().splitlines()) == 1
        return
    from tests.support.service import Service

    with Service(tmp_path / "jobs.sqlite", LocalIndex(index)) as service:
        key = service.key(tokens=20)
        remote = refs(str(paper), "--server", service.url, "--api-key", key, "--json")
    local = refs(str(paper), "--index", str(index), "--json")
    assert remote[0] == local[0] == 1, remote[2]
    mine, theirs = json.loads(remote[1]), json.loads(local[1])
    keep = ("number", "label", "location", "text", "status", "reference", "field_results")
    assert [{k: r[k] for k in keep} for r in mine["references"]] == [
        {k: r[k] for k in keep} for r in theirs["references"]
    ]
    assert mine["counts"] == theirs["counts"]


def test_the_command_and_the_batch_read_the_same_suffixes() -> None:
    from citeverify_core.batch.documents import DOCUMENT_SUFFIXES as BATCH
    from citeverify_core.cli.refs_command import DOCUMENT_SUFFIXES as COMMAND

    assert BATCH == COMMAND


def test_a_document_comes_back_whole_from_its_dict(tmp_path: Path) -> None:
    """What a service answers (``to_dict``) is the document again (``--server`` reports it)."""
    from citeverify_core.references.document import (
        ConsistencyFinding,
        InTextCitation,
        Location,
        extract_document,
    )
    from citeverify_core.references.document.report import document_from_dict

    paper = tmp_path / "paper.md"
    paper.write_text(markdown_paper([KUHN, HOSTILE]), encoding="utf-8")
    document = extract_document(paper)
    document.citations.append(
        InTextCitation("[1, 7]", "numeric", ("1", "7"), (1, None), Location(line=3, page=2))
    )
    document.findings.append(
        ConsistencyFinding("missing-entry", "[7] names no entry", "7", None, Location(3, 2))
    )
    assert document_from_dict(json.loads(json.dumps(document.to_dict()))) == document
    with pytest.raises(ValueError, match="not a document"):
        document_from_dict({"name": "x", "format": "md", "references": [{"text": "a"}]})


SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
DEV = SHARED / "crossref-multistyle-dev-1000.jsonl"


@pytest.mark.skipif(not DEV.is_file(), reason=f"needs {DEV} (the shared datasets)")
@pytest.mark.parametrize("kind", ["md", "pdf"])
def test_a_paper_of_real_works_is_verified_as_its_strings_are(tmp_path: Path, kind: str) -> None:
    """Twelve APA references of real works and two fabricated: the paper's references are the
    strings, each verified as the string verifier verifies it alone; the fabricated never pass."""
    from citeverify_core.references import ReferenceVerifier

    rows = [json.loads(line) for line in DEV.read_text("utf-8").splitlines()[:60]]
    works = tmp_path / "works.jsonl"
    works.write_text("".join(json.dumps(r["work"]) + "\n" for r in rows), "utf-8")
    index = tmp_path / "index.sqlite"
    LocalIndex(index).build(works)
    # Strings the PDF's standard font can show (WinAnsi), whitespace normalised.
    strings = [
        " ".join(r["strings"]["apa"].split())
        for r in rows[::4]
        if r["strings"].get("apa") and _win_ansi(r["strings"]["apa"])
    ][:12]
    assert len(strings) == 12
    fabricated = [
        "Quill, A. (2019). Ferromagnetic dreams of hollow lattices. Journal of Imagined "
        "Physics, 12(3), 45–67.",
        "Varga, T., & Olsen, M. (2021). A survey of quantum sponges. Annals of Nothing, 4, 1–9.",
    ]
    references = [*strings[:6], fabricated[0], *strings[6:], fabricated[1]]
    paper = tmp_path / f"paper.{kind}"
    if kind == "md":
        paper.write_text(markdown_paper(references), encoding="utf-8")
    else:
        _pdf_paper_wrapped(paper, references)
    code, out, _ = refs(str(paper), "--index", str(index), "--json")
    assert code == 1  # the fabricated ones
    found = json.loads(out)["references"]
    assert [" ".join(r["text"].split()) for r in found] == references
    alone = ReferenceVerifier(index, sources=["local"]).verify_references(references)
    assert [r["status"] for r in found] == [r.status for r in alone]
    assert found[6]["status"] != "verified" and found[-1]["status"] != "verified"
    assert all(r["location"]["line"] >= 1 for r in found)


def _win_ansi(text: str) -> bool:
    try:
        text.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def _pdf_paper_wrapped(path: Path, references: list[str]) -> None:
    """A PDF whose long references wrap onto a hanging-indented second line (at spaces)."""
    import textwrap

    pytest.importorskip("reportlab", reason="the documents extra draws the test PDF")
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setFont("Helvetica", 10)
    pdf.drawString(72, 770, "Body text citing " + ", ".join(f"[{n}]" for n in range(1, 15)) + ".")
    pdf.setFont("Helvetica-Bold", 12)
    pdf.drawString(60, 730, "References")
    pdf.setFont("Helvetica", 8)
    y = 710
    for n, reference in enumerate(references, 1):
        for i, line in enumerate(textwrap.wrap(f"[{n}] {reference}", 110)):
            pdf.drawString(60 if i == 0 else 76, y, line)
            y -= 11
        y -= 5
    pdf.showPage()
    pdf.save()


def test_a_latex_paper_is_checked_with_the_bbl_beside_it(tmp_path: Path, index: Path) -> None:
    from citeverify_core.errors import DocumentError
    from citeverify_core.references.document import extract_document

    tex = tmp_path / "paper.tex"
    tex.write_text(
        "\\documentclass{article}\n\\title{Paradigms}\n\\begin{document}\n"
        "Paradigms shift \\cite{kuhn}; deep nets learn \\cite{lecun}.\n"
        "\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n",
        encoding="utf-8",
    )
    bbl = tmp_path / "paper.bbl"
    bbl.write_text(
        "\\begin{thebibliography}{2}\n\n"
        f"\\bibitem{{kuhn}}\n{KUHN}\n\n\\bibitem{{lecun}}\n{LECUN_WRONG_YEAR}\n\n"
        "\\end{thebibliography}\n",
        encoding="utf-8",
    )
    try:
        extract_document(bbl)
    except DocumentError as exc:
        pytest.skip(f"this version's extractor reads no .bbl list ({exc})")
    code, out, err = refs(str(tex), "--index", str(index), "--json")
    assert code == 1, err
    data = json.loads(out)
    assert data["name"] == "paper.tex"
    assert [r["status"] for r in data["references"]] == ["verified", "verified-with-error"]
    assert [" ".join(r["text"].split()) for r in data["references"]] == [KUHN, LECUN_WRONG_YEAR]
