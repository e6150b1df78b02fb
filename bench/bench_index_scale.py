"""The local index at the size of the literature: a realistic generator, built and measured (issue 35).

Generator (``Literature``), fitted on real records nobody here wrote: the 1,000 Crossref works of
``../shared/datasets/crossref-multistyle-dev-1000.jsonl`` (titles, authors, venues) and the titles
of the 2,500 APA strings of ``crossref-generated-2500-apa.json`` (real Crossref records rendered by
CSL; titles cut from between the year and the venue). From them:

- **titles** from a word-pair chain over the real titles (a word follows a word it follows in a
  real title), so that word frequencies and common phrases are the real ones;
- **a vocabulary that grows with the corpus** as real titles' does: Heaps' law ``V = K n^b`` is
  fitted on the real titles' tokens, and while generating, a token is a new word with the
  probability that keeps the vocabulary on that curve (``dV/dn = K b n^(b-1)``); new words are
  made of syllables of real words and come back later (older ones more often), as rare words do;
- **near duplicates** as the literature has them: 1.5% of works repeat an earlier work's title
  exactly (another author, year, venue), 1% with one word changed;
- **authors and venues** drawn from the real ones by their frequency, with new surnames (a third)
  and new venues (a fifth) minted as the corpus grows; years weighted to recent ones.

Then the 1,000 real works are added, and ``--sample`` of them are verified from their real APA
strings (``ReferenceVerifier`` on the local index alone): the share verified to the right DOI, the
title-search latency (p50, p99) and references per second, one core. The works are written as a
Crossref public data file (``N.json.gz`` of 5,000 items) and built with ``index_build.ingest``
(``--workers``), so the build rate, bytes per work and peak memory are the real build's.

Run: ``.venv/bin/python bench/bench_index_scale.py --works 1000000 [--workers 2] [--keep DIR]``.

Generating is one core's work (about 100 s a million works). ``--corpus DIR`` keeps a generated
corpus there and reuses it: the generator is deterministic, so the first N works of a 20M corpus
are the N-work corpus, and the 1M, 5M and 20M indexes are built from one generation
(``--generate-only`` to make it, then ``--works`` of at most its size).
"""

from __future__ import annotations

import argparse
import bisect
import gzip
import itertools
import json
import math
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
DEV = SHARED / "crossref-multistyle-dev-1000.jsonl"
APA = SHARED / "crossref-generated-2500-apa.json"
PER_FILE = 5000
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+")
_APA_TITLE = re.compile(r"\(\d{4}[a-z]?\)\. (.+?)\. [A-Z]")


def real_records() -> tuple[list[dict[str, Any]], list[str]]:
    """The dev works (metadata and APA string) and every real title."""
    works = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line]
    titles = [w["work"]["title"][0] for w in works if w["work"].get("title")]
    for item in json.loads(APA.read_text(encoding="utf-8"))["dataset"]:
        if m := _APA_TITLE.search(item["ref_string"]):
            titles.append(m.group(1))
    return works, titles


def heaps(titles: list[str], seed: int = 3) -> tuple[float, float]:
    """Heaps' law ``V = K n^b`` fitted (least squares in log-log) on the titles' tokens."""
    order = titles[:]
    random.Random(seed).shuffle(order)
    seen: set[str] = set()
    points: list[tuple[float, float]] = []
    n = 0
    for title in order:
        for token in _WORD.findall(title.lower()):
            n += 1
            seen.add(token)
            if n % 200 == 0:
                points.append((math.log(n), math.log(len(seen))))
    xs, ys = zip(*points, strict=True)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return math.exp(my - b * mx), b


class Literature:
    """Works like the literature's, generated one by one (deterministic for a seed)."""

    def __init__(self, works: list[dict[str, Any]], titles: list[str], seed: int = 11) -> None:
        self.rng = random.Random(seed)
        self.k, self.b = heaps(titles)
        self.next: dict[str, list[str]] = defaultdict(list)
        self.starts: list[str] = []
        tokens = 0
        vocab: set[str] = set()
        for title in titles:
            words = _WORD.findall(title.lower())
            if not words:
                continue
            self.starts.append(words[0])
            for a, b in itertools.pairwise([*words, ""]):
                self.next[a].append(b)
            tokens += len(words)
            vocab.update(words)
        self.real_vocab = vocab
        self.tokens = tokens  # the generated corpus continues the real one's token count
        self.minted: list[str] = []
        self.syllables = sorted(
            {w[i : i + 3] for w in vocab if w.isalpha() and len(w) >= 6 for i in (0, 3)}
        )
        families = Counter(
            a["family"] for w in works for a in w["work"].get("author", []) if a.get("family")
        )
        self.families = list(families)
        self.family_weights = list(itertools.accumulate(families.values()))
        self.new_families: list[str] = []
        venues = Counter(
            w["work"]["container-title"][0] for w in works if w["work"].get("container-title")
        )
        self.venues = list(venues)
        self.venue_weights = list(itertools.accumulate(venues.values()))
        self.new_venues: list[str] = []
        self.titles: list[str] = []  # kept for near duplicates (a sample: memory stays bounded)

    # -- words -------------------------------------------------------------------------------

    def _mint(self) -> str:
        while True:
            word = "".join(self.rng.choice(self.syllables) for _ in range(self.rng.randint(2, 4)))
            if word not in self.real_vocab:
                return word

    def _word(self, chained: str) -> str:
        self.tokens += 1
        p_new = self.k * self.b * self.tokens ** (self.b - 1)
        u = self.rng.random()
        if u < p_new:
            word = self._mint()
            self.minted.append(word)
            return word
        if self.minted and u < p_new + 0.04:
            # A rare word seen before: older ones come back more often.
            return self.minted[int(len(self.minted) * self.rng.random() ** 3)]
        return chained

    def title(self) -> str:
        rng = self.rng
        if self.titles and rng.random() < 0.025:
            earlier = rng.choice(self.titles)
            if rng.random() < 0.6:
                return earlier  # the same title, another work
            words = earlier.split()
            words[rng.randrange(len(words))] = self._word(rng.choice(self.starts))
            return " ".join(words)
        word = rng.choice(self.starts)
        out: list[str] = []
        while word and len(out) < 30:
            out.append(self._word(word))
            word = rng.choice(self.next.get(word) or [""])
        text = " ".join(out)
        text = text[:1].upper() + text[1:]
        if len(self.titles) < 200_000:
            self.titles.append(text)
        elif rng.random() < 0.01:
            self.titles[rng.randrange(len(self.titles))] = text
        return text

    def _family(self) -> str:
        if self.rng.random() < 0.33:
            if not self.new_families or self.rng.random() < 0.3:
                name = self._mint().capitalize()
                self.new_families.append(name)
                return name
            return self.new_families[int(len(self.new_families) * self.rng.random() ** 2)]
        u = self.rng.random() * self.family_weights[-1]
        return self.families[bisect.bisect_left(self.family_weights, u)]

    def _venue(self) -> str:
        if self.rng.random() < 0.2:
            if not self.new_venues or self.rng.random() < 0.05:
                name = "Journal of " + self._mint().capitalize()
                self.new_venues.append(name)
                return name
            return self.rng.choice(self.new_venues)
        u = self.rng.random() * self.venue_weights[-1]
        return self.venues[bisect.bisect_left(self.venue_weights, u)]

    def work(self, i: int) -> dict[str, Any]:
        rng = self.rng
        year = 2025 - int(rng.expovariate(1 / 14)) % 75
        authors = [
            {"family": self._family(), "given": f"{chr(65 + rng.randrange(26))}."}
            for _ in range(1 + min(int(rng.expovariate(1 / 2.5)), 12))
        ]
        first = rng.randrange(1, 2000)
        return {
            "DOI": f"10.{5000 + i % 4000}/gen.{i}",
            "title": [self.title()],
            "author": authors,
            "issued": {"date-parts": [[year]]},
            "container-title": [self._venue()],
            "volume": str(rng.randrange(1, 120)),
            "page": f"{first}-{first + rng.randrange(2, 30)}",
            "type": "journal-article",
        }


def write_corpus(folder: Path, works: int, lit: Literature, real: list[dict[str, Any]]) -> None:
    """Crossref data files of generated works, and one of the real works."""
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, works, PER_FILE):
        items = [lit.work(i) for i in range(start, min(works, start + PER_FILE))]
        with gzip.open(folder / f"{start // PER_FILE:06d}.json.gz", "wt", compresslevel=1) as f:
            json.dump({"items": items}, f)
    with gzip.open(folder / "real.json.gz", "wt") as f:
        json.dump({"items": [w["work"] for w in real]}, f)


def corpus_view(corpus: Path, works: int, base: Path) -> tuple[Path, dict[str, Any]]:
    """A folder of the first ``works`` works of a generated corpus (links), and what it holds."""
    made = json.loads((corpus / "corpus.json").read_text(encoding="utf-8"))
    if made["works"] < works:
        sys.exit(f"{corpus} holds {made['works']:,} works, fewer than {works:,}")
    if made["works"] == works:
        return corpus, made
    view = base / f"crossref-{works}"
    view.mkdir(parents=True, exist_ok=True)
    for k in range(math.ceil(works / PER_FILE)):
        name = f"{k:06d}.json.gz"
        if not (view / name).exists():
            (view / name).symlink_to((corpus / name).resolve())
    if not (view / "real.json.gz").exists():
        (view / "real.json.gz").symlink_to((corpus / "real.json.gz").resolve())
    return view, made


def peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    from citeverify_core.references import LocalIndex
    from citeverify_core.references.index_build import ingest
    from citeverify_core.references.snapshots import open_snapshot

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--works", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample", type=int, default=500, help="real works verified")
    parser.add_argument("--keep", type=Path, help="keep the corpus and the index in this folder")
    parser.add_argument(
        "--corpus", type=Path, help="a generated corpus to reuse (made there when missing)"
    )
    parser.add_argument("--generate-only", action="store_true", help="make --corpus and stop")
    parser.add_argument(
        "--measure-only",
        action="store_true",
        help="measure the index --keep holds (built by an earlier run): the search again",
    )
    args = parser.parse_args()
    if args.works % PER_FILE:
        sys.exit(f"--works must be a multiple of {PER_FILE:,}")
    if not DEV.is_file() or not APA.is_file():
        sys.exit(f"the real records are needed: {DEV} and {APA}")
    real, titles = real_records()
    lit = Literature(real, titles)
    print(
        f"fitted on {len(titles):,} real titles ({lit.tokens:,} tokens, {len(lit.real_vocab):,} "
        f"words): Heaps' law V = {lit.k:.2f} n^{lit.b:.3f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        corpus = args.corpus or base / "crossref"
        if not (corpus / "corpus.json").is_file():
            t0 = time.perf_counter()
            write_corpus(corpus, args.works, lit, real)
            made = {
                "works": args.works,
                "vocabulary": len(lit.real_vocab) + len(lit.minted),
                "new_words": len(lit.minted),
                "new_surnames": len(lit.new_families),
                "seconds": round(time.perf_counter() - t0),
            }
            (corpus / "corpus.json").write_text(json.dumps(made), encoding="utf-8")
        corpus, made = corpus_view(corpus, args.works, base)
        print(
            f"generated {made['works']:,} works in {made['seconds']} s; vocabulary "
            f"{made['vocabulary']:,} words ({made['new_words']:,} new), "
            f"{made['new_surnames']:,} new surnames"
            + (f"; the first {args.works:,} are indexed" if made["works"] > args.works else "")
        )
        if args.generate_only:
            return
        index_path = base / "index.sqlite"
        built = base / "build.json"
        if args.measure_only:
            print(json.loads(built.read_text(encoding="utf-8"))["line"], "(earlier run)")
            measure(LocalIndex(index_path), real, args.sample)
            return
        index_path.unlink(missing_ok=True)
        local = LocalIndex(index_path)
        cpu0 = time.process_time()
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        report = ingest(local, open_snapshot([corpus]), workers=args.workers)
        wall = time.perf_counter() - t0
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (
            time.process_time()
            - cpu0
            + (kids.ru_utime - kids0.ru_utime)
            + (kids.ru_stime - kids0.ru_stime)
        )
        # Before stats(): its count of the records reads the whole file through the reader's
        # mmap, and the mapped pages (file cache, not the build's memory) count in the RSS.
        peak = peak_mb()
        records = local.stats()["records"]
        size = index_path.stat().st_size
        line = (
            f"built {report.records:,} works in {wall:.0f} s: {report.records / wall:,.0f}/s "
            f"({report.records / max(cpu, 1e-9):,.0f}/s per core-second of CPU, x{cpu / wall:.1f}); "
            f"{size / records:,.0f} bytes/work ({size / 2**30:.2f} GiB); peak RSS {peak:.0f} MB"
        )
        print(line)
        built.write_text(json.dumps({"line": line}), encoding="utf-8")
        measure(local, real, args.sample)


def measure(local: Any, real: list[dict[str, Any]], size: int) -> None:
    """Title search and verification of ``size`` real works from their APA strings."""
    from citeverify_core.references import ReferenceVerifier

    verifier = ReferenceVerifier(local)
    # A running service has loaded its parser and models: the first call's cost is not timed.
    verifier.verify("Smith, J. (2001). A reference to warm up with. Nature, 1, 1-2.")
    sample = random.Random(5).sample(real, min(size, len(real)))
    search_ms: list[float] = []
    for w in sample:
        t = time.perf_counter()
        local.search(w["work"]["title"][0])
        search_ms.append((time.perf_counter() - t) * 1000)
    verify_ms: list[float] = []
    statuses: Counter[str] = Counter()
    right = 0
    t_all = time.perf_counter()
    for w in sample:
        t = time.perf_counter()
        result = verifier.verify(w["strings"]["apa"])
        verify_ms.append((time.perf_counter() - t) * 1000)
        statuses[result.status] += 1
        fields = (result.verificationGraph or {}).get("nodes", [])
        best = next((n for n in fields if n.get("type") == "RESULT"), {})
        cand = next((n for n in fields if n.get("id") == best.get("bestCandidateId")), {})
        doi = (cand.get("candidateFields") or {}).get("doi")
        if result.status == "verified" and doi == w["work"]["DOI"].lower():
            right += 1
    elapsed = time.perf_counter() - t_all
    print(
        f"title search p50 {pct(search_ms, 0.5):.2f} ms, p99 {pct(search_ms, 0.99):.2f} ms; "
        f"verify p50 {pct(verify_ms, 0.5):.2f} ms, p99 {pct(verify_ms, 0.99):.2f} ms, "
        f"{len(sample) / elapsed:,.0f} references/s (one core); real works verified to their "
        f"DOI {right}/{len(sample)} ({100 * right / len(sample):.1f}%); statuses "
        + ", ".join(f"{k} {v}" for k, v in statuses.most_common())
    )
    local.close()


if __name__ == "__main__":
    main()
