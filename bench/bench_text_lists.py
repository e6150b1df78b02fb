"""Plain-text reference lists of real reference strings: the rules alone against the rules with the
shipped line labeller (``segment_labels.json``), on the public ``.txt`` path.

Data: the 2,000 real unstructured reference strings of Crossref's reference-matching evaluation
(``../shared/datasets/crossref-real-2000-unstructured-sbmv.json``, MIT; see its SOURCES.md), as
authors deposited them: every citation style, many without a full stop at the end. The strings
are real; the lists are made here, so this bench checks the plain-text path a user pastes into,
not a layout nobody here wrote (``bench_line_labels_crf.py`` measures that, on GROBID's zones).

Lists: the strings are dealt, in a seeded random order, into lists of ``--size`` entries, each
sorted by its text as an author-date list is, and written under a "References" heading three
ways:

- ``one per line``: one reference a line (a pasted list);
- ``blank lines``: the same with a blank line between references;
- ``wrapped``: each reference wrapped at ``--width`` columns, flush left, no blank lines (a PDF's
  text copied without its layout: the case the labeller is for).

Each list goes through :func:`extract_document` (``name="list.txt"``) with the rules alone
(``use_line_labeller(None)``) and with the shipped model, and each reference is scored exact when
its text, whitespace and hyphens aside, equals a string of the list (one-to-one). Strings with a
line break of their own, under 20 characters, or starting with a number (a deposit's leftover
label, "19. W. J. Yang ...": sorted first, it makes an unlabelled list look numbered) are left
out.

Run: ``.venv/bin/python bench/bench_text_lists.py [--size 25] [--width 80]``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from citeverify_core.errors import DocumentError
from citeverify_core.references.document import extract_document
from citeverify_core.references.document.segment_labels import line_labeller, use_line_labeller

DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "datasets"
    / "crossref-real-2000-unstructured-sbmv.json"
)
_DROPPED = re.compile(r"[\s\-‐‑‒–—―−\u00ad]+")


def key(text: str) -> str:
    return _DROPPED.sub("", text)


def layouts(refs: Sequence[str], width: int) -> dict[str, str]:
    """The three plain-text forms of one list, each under a "References" heading."""
    wrapped = [line for r in refs for line in textwrap.wrap(r, width, break_on_hyphens=False)]
    return {
        "one per line": "References\n" + "\n".join(refs) + "\n",
        "blank lines": "References\n\n" + "\n\n".join(refs) + "\n",
        "wrapped": "References\n" + "\n".join(wrapped) + "\n",
    }


def exact(refs: Sequence[str], found: Sequence[str]) -> int:
    """References of ``refs`` found exactly (keys without whitespace and hyphens, one-to-one)."""
    wanted = Counter(key(r) for r in refs)
    hits = 0
    for text in found:
        k = key(text)
        if wanted[k] > 0:
            wanted[k] -= 1
            hits += 1
    return hits


def run(text: str) -> list[str]:
    try:
        doc = extract_document(text.encode(), name="list.txt")
    except DocumentError:
        return []
    return [r.text for r in doc.references]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--size", type=int, default=25, help="references per list")
    parser.add_argument("--width", type=int, default=80, help="columns of the wrapped form")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        sys.exit(f"{args.data} not found (the shared datasets folder is needed)")
    strings = [
        " ".join(d["ref_string"].split())
        for d in json.loads(args.data.read_text(encoding="utf-8"))["dataset"]
        if len(d["ref_string"]) >= 20
        and "\n" not in d["ref_string"]
        and not d["ref_string"].lstrip()[:1].isdigit()
    ]
    random.Random(args.seed).shuffle(strings)
    lists = [sorted(strings[k : k + args.size]) for k in range(0, len(strings), args.size)]
    methods = {"rules alone": None, "rules + line labeller": line_labeller()}
    totals: dict[tuple[str, str], list[int]] = {}
    t0 = time.perf_counter()
    for refs in lists:
        for form, text in layouts(refs, args.width).items():
            for method, labeller in methods.items():
                with use_line_labeller(labeller):
                    found = run(text)
                cell = totals.setdefault((form, method), [0, 0, 0])
                cell[0] += len(refs)
                cell[1] += exact(refs, found)
                cell[2] += len(found)
    print(
        f"{len(strings)} real reference strings in {len(lists)} lists of {args.size}; "
        f"wrapped at {args.width} columns\n"
    )
    print("| form | method | exact | entries found / references |\n|---|---|--:|--:|")
    for (form, method), (refs_n, hits, found_n) in totals.items():
        print(
            f"| {form} | {method} | {100 * hits / refs_n:.1f}% ({hits}/{refs_n}) | "
            f"{found_n}/{refs_n} |"
        )
    print(f"\nwall {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
