"""Reference lists read back from papers that pdfLaTeX typeset: documents another tool made.

``bench_documents.py`` draws its PDFs with reportlab and fpdf2 from the generator's own line
breaks. Here the same generated papers (``tests/support/papers.py``: the dev set's works in 9
styles, in-text citations in each style's form, planted missing and uncited entries) are
written as LaTeX and typeset by pdflatex, so that TeX decides line breaks, hyphenation,
ligatures, accents (drawn as separate glyphs in the OT1 encoding), kerning and the two-column
layout, as in the papers a reviewer gets. Three classes:

- ``article``: one column, Computer Modern in OT1 (accents over letters, ``fi`` ligatures);
- ``twocolumn-times``: ``[twocolumn]{article}``, Times in T1 (``mathptmx``);
- ``ieeetran``: ``[conference]{IEEEtran}``, two columns, numbered styles only.

Characters pdflatex cannot set without extra packages (Greek, CJK, most symbols) are
transliterated in the truth first, as the PDF bench does for its fonts. "Exact" compares after
whitespace normalisation, with typographic quotes folded (TeX prints ``'`` as ``’``) and "…"
as TeX prints it (". . .").

Needs pdflatex (Debian: texlive-latex-base, texlive-latex-recommended, texlive-fonts-recommended,
texlive-publishers); without it the script says so and exits 0. Not run by CI (TeX Live is
large); run: ``python -m uv run python bench/bench_latex_papers.py [--quick] [--write DIR]``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support

import bench_documents as documents_bench
import bench_reference_accuracy as strings_bench

from citeverify_core.errors import CiteVerifyError
from citeverify_core.references.document import extract_document
from tests.support import papers
from tests.support.papers import TruthReference, normalise

#: The classes typeset (tests/support/papers.py, LATEX_CLASSES) and the styles each is used for.
CLASSES: dict[str, tuple[str, ...]] = {
    "article": tuple(papers.STYLES),
    "twocolumn-times": tuple(papers.STYLES),
    "ieeetran": papers.NUMBERED,
}
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "´": "'"})


def _typeset_form(text: str) -> str:
    """``text`` as TeX prints it: quotes folded, "…" as ". . ." (``\\textellipsis``)."""
    return normalise(text).translate(_QUOTES).replace("…", ". . .")


def _same(a: str, b: str) -> bool:
    return _typeset_form(a) == _typeset_form(b)


Cell = documents_bench.Tally  # one cell's counts, as the PDF bench keeps them


@dataclass
class Results:
    cells: dict[tuple[str, str], Cell] = field(default_factory=lambda: defaultdict(Cell))
    misses: list[str] = field(default_factory=list)
    planted_found: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    false_findings: list[str] = field(default_factory=list)
    clean_docs: int = 0
    seconds_tex: float = 0.0
    seconds_read: float = 0.0


def run(quick: bool, write: Path | None) -> Results:
    rows = papers.load_rows()
    _, absent = strings_bench.build_index(rows)
    res = Results()
    n_refs = 15 if quick else 30
    seeds = (0, 1) if quick else (0, 1, 2, 3)
    for cls, styles in CLASSES.items():
        for style in styles:
            for seed in seeds:
                planted = seed % 2 == 1
                paper = papers.make_paper(
                    rows,
                    style,
                    seed=seed,
                    n_refs=n_refs,
                    planted=planted,
                    fabricated=0 if style in papers.TITLELESS else 1,
                    absent=absent,
                )
                name = f"{style.lower()}-{cls}-{seed}"
                cell = res.cells[(style, cls)]
                cell.docs += 1
                cell.refs += len(paper.references)
                start = time.perf_counter()
                try:
                    made = papers.typeset_latex(paper, cls)
                except RuntimeError as exc:
                    cell.failed += 1
                    res.misses.append(f"{name}: {exc}")
                    continue
                finally:
                    res.seconds_tex += time.perf_counter() - start
                if made is None:
                    cell.failed += 1
                    res.misses.append(f"{name}: the class is not installed")
                    continue
                data, paper = made
                if write:
                    write.mkdir(parents=True, exist_ok=True)
                    (write / f"{name}.pdf").write_bytes(data)
                start = time.perf_counter()
                try:
                    doc = extract_document(data, name=f"{name}.pdf")
                except CiteVerifyError as exc:
                    cell.failed += 1
                    res.misses.append(f"{name}: {exc}")
                    continue
                res.seconds_read += time.perf_counter() - start
                score(res, cell, name, style, paper.references, doc, paper, planted)
    return res


def score(
    res: Results,
    cell: Cell,
    name: str,
    style: str,
    refs: Sequence[TruthReference],
    doc: object,
    paper: papers.Paper,
    planted: bool,
) -> None:
    got = [r.text for r in doc.references]  # type: ignore[attr-defined]
    cell.extracted += len(got)
    pairs = documents_bench.align([t.text for t in refs], got)
    cell.spurious += len(got) - len(pairs)
    titleless = style in papers.TITLELESS
    for i, t in enumerate(refs):
        j = pairs.get(i)
        if j is None:
            res.misses.append(f"{name} #{t.number} not found: {t.text}")
            continue
        if _same(got[j], t.text):
            cell.exact += 1
        else:
            res.misses.append(f"{name} #{t.number}\n    truth: {t.text}\n    got:   {got[j]}")
        fields = documents_bench._fields
        if fields(got[j].translate(_QUOTES), titleless) == fields(
            t.text.translate(_QUOTES), titleless
        ):
            cell.fields += 1
    findings = doc.findings  # type: ignore[attr-defined]
    if not planted:
        res.clean_docs += 1
        res.false_findings += [f"{name}: {f.kind} {f.target!r}" for f in findings]
        return
    for p in paper.planted:
        tally = res.planted_found[p.kind]
        tally[1] += 1
        if p.kind == "uncited-entry":
            tally[0] += any(f.kind == p.kind and f.entry == p.entry for f in findings)
        else:
            # A typeset paper prints "[?]" for the missing key: the finding cannot name it.
            family = p.target.rsplit(" ", 1)[0].casefold()
            tally[0] += any(
                f.kind == p.kind and (f.target == "?" or family in (f.target or "").casefold())
                for f in findings
            )


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "—"


def report(res: Results, misses: int) -> list[str]:
    out = ["## Extraction from pdfLaTeX papers: exact / all fields / spurious (refused)", ""]
    out.append("| style | " + " | ".join(CLASSES) + " |")
    out.append("| --- |" + " --- |" * len(CLASSES))
    for style in papers.STYLES:
        cells = []
        for cls in CLASSES:
            c = res.cells.get((style, cls))
            if c is None or not c.docs:
                cells.append("—")
                continue
            cells.append(
                f"{_pct(c.exact, c.refs)} / {_pct(c.fields, c.refs)} / "
                f"{_pct(c.spurious, max(c.extracted, 1))}" + (f" ({c.failed})" if c.failed else "")
            )
        out.append(f"| {style} | " + " | ".join(cells) + " |")
    total = Cell()
    for c in res.cells.values():
        total.add(c)
    t = documents_bench.TARGETS
    out += [
        "",
        f"all: {total.docs} documents ({total.failed} refused or not typeset), {total.refs} "
        f"references: exact {_pct(total.exact, total.refs)} (target >= {t['exact']:.0%}, ratio "
        f"{total.exact / max(total.refs, 1) / t['exact']:.3f}), all fields "
        f"{_pct(total.fields, total.refs)} (>= {t['fields']:.0%}), spurious "
        f"{_pct(total.spurious, max(total.extracted, 1))} ({total.spurious}/{total.extracted}; "
        f"<= {t['spurious']:.0%})",
    ]
    for kind, (found, planted) in sorted(res.planted_found.items()):
        out.append(f"planted {kind}: {found}/{planted} found (target all)")
    out.append(
        f"false findings on {res.clean_docs} clean documents: {len(res.false_findings)} (target 0)"
    )
    out += [f"  {f}" for f in res.false_findings[:misses]]
    out.append(
        f"pdflatex {res.seconds_tex:.0f} s; extraction {res.seconds_read:.1f} s "
        f"({res.seconds_read / max(total.docs - total.failed, 1):.2f} s a paper)"
    )
    if res.misses:
        out += ["", f"first {min(misses, len(res.misses))} of {len(res.misses)} misses:"]
        out += [f"  {m}" for m in res.misses[:misses]]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 papers a cell, 15 references")
    parser.add_argument("--write", type=Path, help="keep the PDFs here")
    parser.add_argument("--misses", type=int, default=20, help="misses shown")
    args = parser.parse_args(argv)
    if shutil.which("pdflatex") is None:
        print("pdflatex is not installed: nothing measured (apt-get install texlive-latex-base")
        print("texlive-latex-recommended texlive-fonts-recommended texlive-publishers)")
        return 0
    if not papers.DEV_SET.is_file():
        print(f"the dev set is not at {papers.DEV_SET}: nothing measured")
        return 0
    head = subprocess.run(
        ["git", "-C", str(documents_bench.ROOT), "log", "-1", "--format=%h %cI %s"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(f"commit {head}")
    res = run(args.quick, args.write)
    print("\n".join(report(res, args.misses)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
