"""Real typeset papers (issue 34): reference lists and consistency findings, against hand truth.

``bench_documents.py`` and ``bench_latex_papers.py`` measure papers that our own code generated.
This bench reads papers that nobody here wrote or typeset: Bioconductor vignettes and TeX Live
package documentation, as Debian ships them (``bench/real_papers/README.md`` lists them, where
each comes from and how its truth was made). Each document is described by one JSON file in
``bench/real_papers/docs/``: the Debian package and version, the file's path inside the
``.deb`` and its SHA-256, its group (author-year, other-article, two-column, numbered,
humanities, latex-source), and the truth: every reference as the page prints it, and whether the
citations and the list agree (with the true findings where they do not).

For every document the script gets the package (``apt-get download`` into a cache directory,
``~/.cache/citeverify-bench/debs`` unless ``--cache DIR``), extracts the file (a ``.tex``
with the files beside it, ``.gz`` files decompressed as Debian compresses them), checks its
SHA-256 (a mismatch or an unavailable package is said and counted, and the document skipped),
and runs ``extract_document`` in a fresh child process pinned to one core, measuring its CPU
seconds and peak RSS. It compares:

- references: exact (the same string after ``normalise``), near (the aligned pair's similarity
  ratio >= 90), missed (a truth reference aligned to no extracted entry), spurious (an
  extracted entry aligned to no truth reference); alignment is ``bench_documents.align``;
- findings: on papers whose citations and list agree, every finding is false; on papers with
  confirmed inconsistencies, how many of the true findings were reported, and the others.

Run: ``.venv/bin/python bench/bench_real_papers.py`` (``--doc ID`` for one document,
``--show ID`` for its entries side by side, ``--json FILE`` for the results). Needs ``apt-get``
(Debian) and network on the first run; without them every document is skipped with a message.
It never reads ``../shared/datasets/measure/``.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support

import bench_documents

from tests.support.papers import normalise


def _ratio(a: str, b: str) -> float:
    """0-100 similarity: rapidfuzz's ratio, difflib's where rapidfuzz is absent."""
    try:
        from rapidfuzz.fuzz import ratio  # optional; Python caches the import
    except ImportError:  # pragma: no cover - rapidfuzz is a dev dependency
        return 100 * difflib.SequenceMatcher(None, a, b).ratio()
    return float(ratio(a, b))


ROOT = Path(__file__).resolve().parent.parent
DOCS = Path(__file__).resolve().parent / "real_papers" / "docs"
DEFAULT_CACHE = Path.home() / ".cache" / "citeverify-bench" / "debs"
GROUPS = ("author-year", "other-article", "two-column", "numbered", "humanities", "latex-source")
GROUP_NAMES = {
    "author-year": "one column, author-year (JSS-like)",
    "other-article": "other article styles",
    "two-column": "two columns",
    "numbered": "numbered",
    "humanities": "humanities and notes styles",
    "latex-source": "LaTeX sources",
}
NEAR = 90.0
TIMEOUT = 300  # seconds for one document's child (a hang is reported, not waited for)

# --- getting the file ---------------------------------------------------------------------------


class Unavailable(Exception):
    """The document's package or file cannot be had, or is not the one the truth was made on."""


def _deb(package: str, version: str, cache: Path) -> Path:
    """The package's ``.deb`` of that version in the cache, downloaded there if absent."""
    cache.mkdir(parents=True, exist_ok=True)
    stem = f"{package}_{version.replace(':', '%3a')}_"
    found = sorted(cache.glob(f"{stem}*.deb"))
    if found:
        return found[0]
    if shutil.which("apt-get") is None:
        msg = "apt-get is not available (not Debian)"
        raise Unavailable(msg)
    proc = subprocess.run(
        ["apt-get", "download", f"{package}={version}"],
        cwd=cache,
        capture_output=True,
        text=True,
        check=False,
    )
    found = sorted(cache.glob(f"{stem}*.deb"))
    if not found:
        tail = (proc.stderr.strip().splitlines() or ["no .deb written"])[-1]
        msg = f"apt-get download {package}={version} failed: {tail}"
        raise Unavailable(msg)
    return found[0]


def _members(deb: Path, wanted: set[str], folder: str | None, dest: Path) -> None:
    """Extract the named members (and, with ``folder``, every file in it) of the ``.deb``."""
    # dpkg-deb streams the data archive whatever its compression; tarfile reads the stream.
    with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                inside = folder is not None and os.path.dirname(name) == folder
                if not member.isfile() or (name not in wanted and not inside):
                    continue
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None
                target.write_bytes(source.read())
        proc.stdout.close()


def fetch(doc: dict[str, Any], cache: Path) -> Path:
    """The document's file on disk (checked against its SHA-256), decompressed, ready to read.

    A ``.tex`` comes with the files of its folder (its ``.bib``/``.bbl``), decompressed too.
    """
    package, version = str(doc["package"]), str(doc["version"])
    inner = str(doc["file"]).lstrip("./")
    root = cache.parent / "files" / f"{package}_{version.replace(':', '%3a')}"
    raw = root / inner
    folder = os.path.dirname(inner) if doc["format"] == "tex" else None
    if not raw.is_file() or (folder and not (root / folder / ".complete").exists()):
        _members(_deb(package, version, cache), {inner}, folder, root)
        if folder:
            (root / folder / ".complete").touch()
    if not raw.is_file():
        msg = f"{inner} is not in {package} {version}"
        raise Unavailable(msg)
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    if digest != doc["sha256"]:
        msg = f"{inner}: sha256 {digest[:12]}... is not the truth's {doc['sha256'][:12]}..."
        raise Unavailable(msg)
    if not inner.endswith(".gz"):
        return raw
    # Debian gzips documentation sources; the reader gets them as their authors wrote them.
    plain = root / "plain" / inner.removesuffix(".gz")
    plain.parent.mkdir(parents=True, exist_ok=True)
    for path in [raw, *(raw.parent.iterdir() if folder else [])]:
        if path.is_file() and path.name != ".complete":
            out = plain.parent / path.name.removesuffix(".gz")
            data = path.read_bytes()
            out.write_bytes(gzip.decompress(data) if path.name.endswith(".gz") else data)
    return plain


# --- reading it in a child ----------------------------------------------------------------------

_CHILD = (
    bench_documents.CHILD_MEASURES
    + r"""
from citeverify_core.errors import CiteVerifyError
from citeverify_core.references.document import extract_document
path = sys.argv[1]
start = cpu()
out = {}
try:
    # A path, not bytes: a .tex reads the .bbl/.bib beside it.
    doc = extract_document(path)
except CiteVerifyError as exc:
    out["error"] = f"{getattr(exc, 'code', type(exc).__name__)}: {exc}"
except Exception as exc:  # a crash is what the bench must show
    out["error"] = f"crash {type(exc).__name__}: {exc}"
else:
    out["references"] = [r.text for r in doc.references]
    out["findings"] = [
        {"kind": f.kind, "target": f.target, "entry": f.entry, "message": f.message}
        for f in doc.findings
    ]
    out["notes"] = list(doc.notes)
    out["pages"] = doc.pages
out["cpu"] = cpu() - start
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
out["rss"] = hwm() + kids
print(json.dumps(out))
"""
)


def read(path: Path) -> dict[str, Any]:
    """``extract_document`` of the file in a fresh process on one core: its output and cost."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=TIMEOUT,
            # The caller's PYTHONPATH wins (to measure another checkout's extractor).
            env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT / "core"))},
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout: more than {TIMEOUT} s", "cpu": float(TIMEOUT), "rss": 0}
    if proc.returncode or not proc.stdout.strip():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"child failed ({proc.returncode}): {tail}", "cpu": 0.0, "rss": 0}
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


# --- comparing -----------------------------------------------------------------------------------


def similarity(a: str, b: str) -> float:
    """0-100: how alike two references are after whitespace normalisation."""
    return float(_ratio(normalise(a), normalise(b)))


@dataclass
class Score:
    """One document's (or a group's) counts."""

    docs: int = 0
    refs: int = 0
    extracted: int = 0
    exact: int = 0
    near: int = 0  # exact or near
    missed: int = 0
    spurious: int = 0
    refused: int = 0
    agree_docs: int = 0
    false_on_agree: int = 0
    true_findings: int = 0
    true_found: int = 0
    other_findings: int = 0  # reported on a paper with inconsistencies, not among the true ones
    cpu: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


def _same_finding(found: dict[str, Any], true: dict[str, Any], entries: dict[int, int]) -> bool:
    """Whether a reported finding is this true one: its kind, and its entry or its target.

    ``entries`` maps an extracted entry's number to the truth's (both from 1, by the alignment):
    the reader's numbering differs from the truth's where it split or merged entries.
    """
    if found["kind"] != true["kind"]:
        return False
    if true.get("entry") is not None and entries.get(found.get("entry") or 0) == true["entry"]:
        return True
    target = true.get("target")
    return bool(target) and normalise(str(found.get("target") or "")) == normalise(str(target))


def compare(doc: dict[str, Any], out: dict[str, Any]) -> tuple[Score, dict[str, Any]]:
    """The document's score and the details (pairs, misses, findings) for --show and --json."""
    truth: list[str] = doc["references"]
    score = Score(docs=1, refs=len(truth), cpu=[out.get("cpu", 0.0)], rss=[out.get("rss", 0)])
    detail: dict[str, Any] = {"id": doc["id"], "group": doc["group"]}
    consistency = doc.get("consistency") or {}
    agree = consistency.get("agree")
    if "error" in out:
        # A refused paper misses every reference and every true finding (it reports none).
        score.refused = 1
        score.missed = len(truth)
        score.agree_docs = int(agree is True)
        score.true_findings = len(consistency.get("findings", [])) if agree is False else 0
        detail["error"] = out["error"]
        return score, detail
    extracted: list[str] = out["references"]
    pairs = bench_documents.align(truth, extracted)
    score.extracted = len(extracted)
    rows = []
    for i, t in enumerate(truth):
        j = pairs.get(i)
        got = extracted[j] if j is not None else None
        ratio = similarity(t, got) if got is not None else 0.0
        kind = (
            "missed"
            if got is None
            else "exact"
            if normalise(t) == normalise(got)
            else "near"
            if ratio >= NEAR
            else "wrong"
        )
        score.exact += kind == "exact"
        score.near += kind in ("exact", "near")
        score.missed += kind == "missed"
        rows.append(
            {"truth": t, "extracted": got, "entry": j, "ratio": round(ratio, 1), "kind": kind}
        )
    used = set(pairs.values())
    spurious = [e for j, e in enumerate(extracted) if j not in used]
    score.spurious = len(spurious)
    findings: list[dict[str, Any]] = out["findings"]
    false: list[dict[str, Any]] = []
    if agree is True:
        score.agree_docs = 1
        score.false_on_agree = len(findings)
        false = findings
    elif agree is False:
        true_findings = consistency.get("findings", [])
        score.true_findings = len(true_findings)
        entries = {j + 1: i + 1 for i, j in pairs.items()}
        hit = [any(_same_finding(f, t, entries) for f in findings) for t in true_findings]
        score.true_found = sum(hit)
        false = [
            f for f in findings if not any(_same_finding(f, t, entries) for t in true_findings)
        ]
        score.other_findings = len(false)
    detail.update(
        rows=rows, spurious=spurious, findings=findings, false_findings=false, notes=out["notes"]
    )
    return score, detail


# --- printing ------------------------------------------------------------------------------------


def _pct(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "-"


def show(doc: dict[str, Any], detail: dict[str, Any]) -> None:
    """Every truth reference next to the entry it was aligned to, then the rest."""
    print(f"# {doc['id']} ({doc['group']}, {doc['producer']}, {doc['pages']} pages)")
    if "error" in detail:
        print(f"refused: {detail['error']}")
        return
    for i, row in enumerate(detail["rows"]):
        print(f"\n[{i + 1}] {row['kind'].upper()} (ratio {row['ratio']}, entry {row['entry']})")
        print(f"  truth:     {row['truth']}")
        if row["kind"] != "exact":
            print(f"  extracted: {row['extracted']}")
    for text in detail["spurious"]:
        print(f"\nSPURIOUS: {text}")
    for note in detail["notes"]:
        print(f"\nnote: {note}")
    print(f"\nfindings ({len(detail['findings'])}):")
    for f in detail["findings"]:
        mark = "FALSE " if f in detail["false_findings"] else ""
        print(f"  {mark}{f['kind']} target={f['target']!r} entry={f['entry']}: {f['message']}")


def table(docs: Sequence[dict[str, Any]], scores: dict[str, Score]) -> None:
    """The per-document table, then the group table (as in the issue)."""
    print(
        "| document | group | producer | pages | refs | extracted | exact | near | missed "
        "| spurious | findings (false) | CPU s | RSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for doc in docs:
        s = scores.get(doc["id"])
        if s is None:
            continue
        fl = (
            f"{s.false_on_agree}"
            if s.agree_docs
            else (
                f"{s.true_found}/{s.true_findings} true, {s.other_findings} other"
                if s.true_findings
                else "-"
            )
        )
        print(
            f"| {doc['id']} | {doc['group']} | {doc['producer'][:24]} | {doc['pages'] or '-'} "
            f"| {s.refs} | {'refused' if s.refused else s.extracted} | {s.exact} | {s.near} "
            f"| {s.missed} | {s.spurious} | {fl} | {s.cpu[0]:.2f} | {s.rss[0] / 2**20:.0f} |"
        )
    groups: dict[str, Score] = defaultdict(Score)
    total = Score()
    for doc in docs:
        if doc["id"] in scores:
            groups[doc["group"]].add(scores[doc["id"]])
            total.add(scores[doc["id"]])
    print(
        "\n| group | documents | references | exact | exact or near (ratio >= 90) | missed "
        "| spurious |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in [*GROUPS, *sorted(set(groups) - set(GROUPS))]:
        g = groups.get(name)
        if g is None:
            continue
        print(
            f"| {GROUP_NAMES.get(name, name)} | {g.docs} | {g.refs} | {_pct(g.exact, g.refs)} "
            f"| {_pct(g.near, g.refs)} | {g.missed} | {_pct(g.spurious, g.extracted)} |"
        )
    print(
        f"| **all** | {total.docs} | {total.refs} | **{_pct(total.exact, total.refs)}** "
        f"| {_pct(total.near, total.refs)} | {total.missed} "
        f"| {_pct(total.spurious, total.extracted)} |"
    )
    print(
        f"\nfindings on the {total.agree_docs} papers whose citations and list agree: "
        f"{total.false_on_agree}, all false (target 0)"
    )
    if total.true_findings:
        print(
            f"papers with confirmed inconsistencies: {total.true_found} of "
            f"{total.true_findings} true findings reported, {total.other_findings} other findings"
        )
    if total.cpu:
        print(
            f"CPU per paper: median {statistics.median(total.cpu):.2f} s, max "
            f"{max(total.cpu):.2f} s; peak RSS max {max(total.rss) / 2**20:.0f} MB; "
            f"refused {total.refused}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the .debs go")
    parser.add_argument("--doc", action="append", help="only this document id (repeatable)")
    parser.add_argument("--show", metavar="ID", help="print one document's entries, truth and read")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results here")
    args = parser.parse_args(argv)
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(DOCS.glob("*.json"))]
    wanted = set(args.doc or []) | ({args.show} if args.show else set())
    if wanted:
        unknown = wanted - {d["id"] for d in docs}
        if unknown:
            print(f"unknown document id(s): {', '.join(sorted(unknown))}")
            return 2
        docs = [d for d in docs if d["id"] in wanted]
    head = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h %cI %s"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(f"commit {head}\n{len(docs)} documents")
    scores: dict[str, Score] = {}
    details: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    for doc in docs:
        try:
            path = fetch(doc, args.cache)
        except (Unavailable, OSError, tarfile.TarError) as exc:
            skipped.append(f"{doc['id']}: {exc}")
            continue
        out = read(path)
        scores[doc["id"]], details[doc["id"]] = compare(doc, out)
        if args.show:
            show(doc, details[doc["id"]])
            print()
    if skipped:
        print(f"\nskipped {len(skipped)} document(s):")
        for line in skipped:
            print(f"  {line}")
    print()
    table(docs, scores)
    errors = [f"{k}: {d['error']}" for k, d in details.items() if "error" in d]
    if errors:
        print("\nrefused or failed:")
        for line in errors:
            print(f"  {line}")
    kinds: Counter[str] = Counter()
    for doc in docs:
        d = details.get(doc["id"])
        if d and (doc.get("consistency") or {}).get("agree") is True:
            kinds.update(f["kind"] for f in d.get("findings", []))
    if kinds:
        print(
            "false findings by kind (agreeing papers): "
            + ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "commit": head,
                    "skipped": skipped,
                    "documents": {k: {"score": vars(scores[k]), **details[k]} for k in scores},
                },
                ensure_ascii=False,
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
