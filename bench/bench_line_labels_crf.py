"""Line labels by a CRF against the hand-written rules, on GROBID's annotated reference zones.

Question (the issue): would a small sequence model over text features, labelling each line of a
reference zone B (starts a reference), I (continues one) or O (outside any), split reference
lists better than the rules of ``segment_*.py``? Measured on the same real corpus and scored the
same way as ``bench_reference_zones.py``, whose zone reading and scoring are imported from it.

Data: GROBID's reference-segmenter TEI files (Apache-2.0), read by ``bench_reference_zones``
(``--grobid``: a checkout, its bare git mirror or a folder of ``*.tei.xml``). The files counted are
that bench's total: corpus documents with ``<lb/>`` (the evaluation files that annotate corpus
documents again and the files without ``<lb/>`` are left out, of training too).

Gold line labels: a line is B when an annotated ``<bibl>`` starts on it and no other ``<bibl>``
has text before it on the line (a reference starting mid-line after another one cannot be a
line start: that line is I), I when a ``<bibl>`` has text on it, O otherwise (headings, page
furniture, footnotes between the references).

Features: text only (the zones have no layout): the shape of the first token (label "[12]",
"12.", "(12)", surname + comma, initials, digits, lowercase...), whether a printed number follows
the last one seen, a year and where it is, length buckets (absolute and relative to the zone's
median and to the neighbours), the last character, "et al.", "In:", "pp.", URL/DOI, and the same
for the two lines before and after; plus one zone-level feature (the share of the zone's lines
that start with a label, bucketed).

Model: python-crfsuite (L-BFGS, elastic net), 5-fold cross-validation by file: each file is
predicted by a model that never saw it. Predicted labels become entries: B starts one, I
continues the current one (after O lines too: GROBID's ``<bibl>`` skips a page header in its
middle), O lines belong to none; an I with no entry before starts one. When most entries of a zone
start with a label (citeverify's ``LABEL`` pattern), the label is cut from each entry, as
citeverify does for numbered lists. Entries are then scored exactly as the rules are (keys
without whitespace, hyphens or dashes; ``bench_reference_zones.match``). The rules' line labels
for the B precision/recall come from the lines where citeverify's entries start (a label alone
on the line above counts as the start, as in ``bench_reference_zones.score``). A third row,
"gold line labels", turns GROBID's own line labels into entries the same way: the ceiling of any
line labeller on these zones.

python-crfsuite is a development dependency (the ``test`` group; never needed at run time, where
``segment_labels`` decodes the exported weights itself)::

    .venv/bin/python bench/bench_line_labels_crf.py --grobid /path/to/grobid

``--export core/citeverify_core/references/document/segment_labels.json`` writes the model trained
on every file: the one the reader ships.

``--top 10`` sets how many feature weights of a model trained on every file are printed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_reference_zones as z

from citeverify_core.references.document.segment_labels import (
    LineLabeller,
    crf_items,
    line_features,
    use_line_labeller,
)
from citeverify_core.references.document.segment_patterns import LABEL

FOLDS = 5
Features = dict[str, Any]


def load_crfsuite() -> ModuleType:
    """pycrfsuite (the ``test`` dependency group), with a clear error if it is missing."""
    try:
        import pycrfsuite
    except ImportError:
        sys.exit(
            "python-crfsuite not found: it is in the project's test dependency group "
            "(python -m uv sync --frozen --all-extras installs it)"
        )
    return cast(ModuleType, pycrfsuite)


# ---------------------------------------------------------------------------------------------
# Line labels


def gold_labels(zone: z.Zone) -> list[str]:
    """B, I or O per zone line, from GROBID's annotation."""
    labels: list[str] = []
    for i, owners in enumerate(zone.owners):
        bibls = [b for b in owners if b >= 0]
        if not bibls:
            labels.append("O")
        elif zone.bibls[bibls[0]].first == i:
            labels.append("B")
        else:
            labels.append("I")
    return labels


@dataclass(slots=True)
class Entry:
    """One predicted reference: its zone lines."""

    lines: list[int]


def entries_from_labels(labels: Sequence[str]) -> list[Entry]:
    """B starts an entry, I continues the current one (O lines skipped), O belongs to none."""
    entries: list[Entry] = []
    for i, label in enumerate(labels):
        if label == "B" or (label == "I" and not entries):
            entries.append(Entry([i]))
        elif label == "I":
            entries[-1].lines.append(i)
    return entries


def entry_texts(zone: z.Zone, entries: Sequence[Entry]) -> list[str]:
    """The entries' texts, their labels cut when most entries start with one."""
    texts = [" ".join(zone.lines[i] for i in e.lines) for e in entries]
    labelled = sum(bool(LABEL.match(t[:40])) for t in texts)
    if texts and labelled * 2 > len(texts):
        texts = [LABEL.sub("", t, count=1).lstrip(".):]- ") for t in texts]
    return texts


def rules_entries(zone: z.Zone) -> tuple[list[z.Ours], list[str]]:
    """citeverify's entries (public plain-text path) and the line labels they imply."""
    ours, _ = z.run_citeverify(zone)
    for k, o in enumerate(ours):  # as bench_reference_zones.score: a label alone above
        above = zone.lines[o.first - 1] if o.first > 0 else ""
        if (
            o.label
            and o.first - 1 > (ours[k - 1].last if k else -1)
            and z.LABEL_ONLY.match(above)
            and re.sub(r"\W", "", above) == re.sub(r"\W", "", o.label)
        ):
            o.first -= 1
    labels = ["O"] * len(zone.lines)
    for o in ours:
        for i in range(max(o.first, 0), min(o.last, len(labels) - 1) + 1):
            labels[i] = "I"
    for o in ours:
        if 0 <= o.first < len(labels):
            labels[o.first] = "B"
    return ours, labels


def exact(zone: z.Zone, texts: Sequence[str], firsts: Sequence[int]) -> int:
    """Annotated references found exactly (bench_reference_zones' keys and matching)."""
    ann = [z.key(b.body) for b in zone.bibls]
    found, _, _, _ = z.match(ann, [z.key(t) for t in texts], [b.first for b in zone.bibls], firsts)
    return found


# ---------------------------------------------------------------------------------------------
# Cross-validation


def folds_by_file(zones: Sequence[z.Zone], k: int, seed: int) -> list[int]:
    """A fold per zone: shuffled, dealt round-robin within numbered and unlabelled lists."""
    order = list(range(len(zones)))
    random.Random(seed).shuffle(order)
    fold = [0] * len(zones)
    dealt = {True: 0, False: 0}
    for i in order:
        kind = zones[i].labelled
        fold[i] = dealt[kind] % k
        dealt[kind] += 1
    return fold


def train(
    crfsuite: ModuleType,
    seqs: Sequence[tuple[list[dict[str, float]], list[str]]],
    model: Path,
    args: argparse.Namespace,
) -> None:
    trainer = crfsuite.Trainer(verbose=False)
    for items, labels in seqs:
        trainer.append(crfsuite.ItemSequence(items), labels)
    trainer.set_params(
        {
            "c1": args.c1,
            "c2": args.c2,
            "max_iterations": args.iterations,
            "feature.possible_transitions": True,
        }
    )
    trainer.train(str(model))


@dataclass(slots=True)
class Tally:
    """Figures of one method over a set of zones."""

    refs: int = 0
    exact: int = 0
    b_true: int = 0  # gold B lines
    b_pred: int = 0
    b_hit: int = 0

    def add(self, zone: z.Zone, gold: Sequence[str], pred: Sequence[str], found: int) -> None:
        self.refs += len(zone.bibls)
        self.exact += found
        self.b_true += sum(g == "B" for g in gold)
        self.b_pred += sum(p == "B" for p in pred)
        self.b_hit += sum(g == p == "B" for g, p in zip(gold, pred, strict=True))


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "-"


def report(tallies: dict[str, dict[str, Tally]]) -> str:
    """One markdown table: method x (numbered, unlabelled, all)."""
    head = (
        "| method | numbered exact | unlabelled exact | all exact | B precision | B recall |\n"
        "|---|--:|--:|--:|--:|--:|"
    )
    rows = [head]
    for method, by_kind in tallies.items():
        a = by_kind["all"]
        cells = [
            f"{_pct(t.exact, t.refs)} ({t.exact}/{t.refs})"
            for t in (by_kind["numbered"], by_kind["unlabelled"], a)
        ]
        rows.append(
            f"| {method} | {' | '.join(cells)} | {_pct(a.b_hit, a.b_pred)} | "
            f"{_pct(a.b_hit, a.b_true)} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--grobid",
        type=Path,
        required=True,
        help="a GROBID checkout, its bare git mirror, or a folder of *.tei.xml",
    )
    parser.add_argument("--dataset", default=z.DATASET, help="the folder inside the repository")
    parser.add_argument("--folds", type=int, default=FOLDS)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--c1", type=float, default=0.05, help="L1 weight")
    parser.add_argument("--c2", type=float, default=0.01, help="L2 weight")
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--top", type=int, default=10, help="print N feature weights")
    parser.add_argument("--model-dir", type=Path, default=Path("/tmp/crf_line_labels"))
    parser.add_argument(
        "--export",
        type=Path,
        help="write the model trained on every file as JSON weights (the shipped model: "
        "core/citeverify_core/references/document/segment_labels.json)",
    )
    args = parser.parse_args(argv)
    crfsuite = load_crfsuite()
    args.model_dir.mkdir(parents=True, exist_ok=True)
    wall0 = time.perf_counter()

    zones: list[z.Zone] = []
    for group, name, data in z.tei_files(args.grobid, args.dataset):
        zone = z.read_zone(data, group, name)
        if zone is not None and zone.bibls:
            zones.append(zone)
    corpus = {zn.name for zn in zones if zn.group == "corpus"}
    zones = [
        zn
        for zn in zones
        if (zn.group == "corpus" or zn.name not in corpus) and not zn.lines_lost and zn.lines
    ]
    golds = [gold_labels(zn) for zn in zones]
    seqs = [(crf_items(line_features(zn.lines)), g) for zn, g in zip(zones, golds, strict=True)]
    fold = folds_by_file(zones, args.folds, args.seed)

    predicted: list[list[str]] = [[] for _ in zones]
    fold_labeller: list[LineLabeller | None] = [None] * len(zones)
    for f in range(args.folds):
        model = args.model_dir / f"fold{f}.crfsuite"
        train(crfsuite, [s for s, k in zip(seqs, fold, strict=True) if k != f], model, args)
        tagger = crfsuite.Tagger()
        tagger.open(str(model))
        info = tagger.info()
        labeller = LineLabeller.from_weights(info.state_features, info.transitions)
        for i, k in enumerate(fold):
            if k == f:
                predicted[i] = list(tagger.tag(crfsuite.ItemSequence(seqs[i][0])))
                fold_labeller[i] = labeller
        tagger.close()

    methods = (
        "rules alone",
        f"rules + CRF for unlabelled lists without layout ({args.folds}-fold by file)",
        f"CRF alone ({args.folds}-fold by file)",
        "gold line labels",
    )
    tallies = {m: {k: Tally() for k in ("numbered", "unlabelled", "all")} for m in methods}
    for i, (zone, gold, pred) in enumerate(zip(zones, golds, predicted, strict=True)):
        runs = []
        for labeller in (None, fold_labeller[i]):
            with use_line_labeller(labeller):
                ours, rule_labels = rules_entries(zone)
            runs.append((rule_labels, exact(zone, [o.text for o in ours], [o.first for o in ours])))
        for labels in (pred, gold):
            entries = entries_from_labels(labels)
            runs.append(
                (labels, exact(zone, entry_texts(zone, entries), [e.lines[0] for e in entries]))
            )
        kind = "numbered" if zone.labelled else "unlabelled"
        for method, (labels, found) in zip(methods, runs, strict=True):
            for part in (kind, "all"):
                tallies[method][part].add(zone, gold, labels, found)

    lines = sum(len(zn.lines) for zn in zones)
    print(
        f"GROBID reference zones: {len(zones)} files (corpus, with <lb/>), {lines} lines, "
        f"{sum(len(zn.bibls) for zn in zones)} references; {args.folds} folds by file\n"
    )
    print(report(tallies))
    print(
        "\nexact: annotated references whose key (no whitespace, hyphens, dashes) equals an "
        "entry's, as in bench_reference_zones; B precision/recall: lines predicted to start a "
        "reference against GROBID's (rules: where citeverify's entries start); gold line labels: "
        "GROBID's own B/I/O turned into entries (the ceiling of line labelling)."
    )

    model = args.model_dir / "all.crfsuite"
    train(crfsuite, seqs, model, args)
    tagger = crfsuite.Tagger()
    tagger.open(str(model))
    info = tagger.info()
    tagger.close()
    weights = sorted(info.state_features.items(), key=lambda kv: -abs(kv[1]))
    print(f"\nTop {args.top} state features of a model trained on every file (|weight|):\n")
    print("| feature | label | weight |\n|---|---|--:|")
    for (feature, label), w in weights[: args.top]:
        print(f"| `{feature}` | {label} | {w:+.2f} |")
    print(
        "\nTransitions: "
        + ", ".join(f"{a}->{b} {w:+.2f}" for (a, b), w in info.transitions.items())
    )
    if args.export is not None:
        shipped = LineLabeller.from_weights(
            info.state_features,
            info.transitions,
            source=(
                "Trained by bench/bench_line_labels_crf.py --export (python-crfsuite, "
                f"c1={args.c1}, c2={args.c2}, {args.iterations} iterations) on GROBID's "
                f"reference-segmenter corpus ({len(zones)} annotated reference zones; "
                "https://github.com/kermitt2/grobid, "
                "grobid-trainer/resources/dataset/reference-segmenter, Apache-2.0)."
            ),
        )
        args.export.write_text(
            json.dumps(shipped.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n",
            encoding="utf-8",
        )
        print(
            f"\nwrote {args.export} ({args.export.stat().st_size:,} bytes, "
            f"{len(shipped.state):,} attributes)"
        )
    print(f"\nwall {time.perf_counter() - wall0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
