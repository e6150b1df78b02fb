"""Citation markers on the BEGIN benchmark: the word counts with and without their words.

``extensions.citation_words: ignore`` (the default) leaves the words of citation markers out of the
word overlap (author-year references, source notes, bracketed document names, DOIs and URLs found
as citations); ``count`` is the gateway control's arithmetic. This script verifies every BEGIN
response under both, in one run, for the default policy and the ``recommended`` pack (lookups off,
one context document: the response's knowledge snippet), and prints:

- the verdicts that change, by label; the one that must never happen is a response labelled
  faithful going from verified to unverified (the script exits with 1 if it does);
- balanced accuracy, ROC AUC of the groundedness, faithful responses blocked and unattributable
  ones let through, under each;
- the same with a citation marker appended to every response (``--marker``, by default
  ``" (Source: knowledge.md)"``): what a cited answer costs under each arithmetic, and how many
  verdicts under ``ignore`` differ from those of the responses as written (0: the marker is
  neutral).

Run: ``python -m uv run --frozen --all-extras python bench/bench_citation_words.py``
(``--data FILE`` for another copy of ``../shared/datasets/begin-groundedness-4749.jsonl``;
``--policy NAME`` for one policy only: ``default`` or a pack).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_accuracy import DATA, TEST, Confusion, Scored, load, make_policy, roc_auc, score

from citeverify_core import load_policy_pack

MARKER = " (Source: knowledge.md)"


def _policy(name: str, citation_words: str) -> dict[str, Any]:
    """The policy ``name`` (``default`` or a pack) with lookups off and ``citation_words``."""
    fields: dict[str, Any] = {}
    ext: dict[str, Any] = {}
    if name != "default":
        config, _notes = load_policy_pack(name)
        fields = config.model_dump(mode="json", exclude_unset=True)
        ext = fields.pop("extensions", {})
        ext.pop("lookups", None)
    return make_policy({**ext, "citation_words": citation_words}, **fields)


def _figures(items: Sequence[Scored]) -> str:
    labels = [s.label for s in items]
    c = Confusion.of([s.verified for s in items], labels)
    auc = roc_auc([s.groundedness for s in items], labels)
    return (
        f"BA {c.balanced_accuracy:.4f}  AUC g {auc:.4f}  faithful blocked "
        f"{c.blocked_pos}/{c.pos}  unattributable passed {c.passed_neg}/{c.neg}"
    )


def compare(rows: Sequence[dict[str, Any]], name: str, marker: str) -> int:
    """Print the comparison for one policy; return the faithful responses newly blocked."""
    print(f"\n== {name} ==")
    newly_blocked = 0
    plain: list[Scored] = []
    for title, suffix in (("as written", ""), (f"with {marker.strip()!r} appended", marker)):
        data = [{**r, "response": r["response"] + suffix} for r in rows]
        old = score(data, _policy(name, "count"))
        new = score(data, _policy(name, "ignore"))
        plain = plain or new
        flips = {
            (label, before): sum(
                1
                for o, n in zip(old, new, strict=True)
                if o.label == label and o.verified == before and n.verified != before
            )
            for label in (1, 0)
            for before in (True, False)
        }
        changed = sum(1 for o, n in zip(old, new, strict=True) if o.groundedness != n.groundedness)
        print(f"-- {title}: groundedness changed for {changed} of {len(rows)} responses")
        for subset, pick in (("all", None), (TEST, TEST)):
            o = [s for s in old if pick is None or s.subset == pick]
            n = [s for s in new if pick is None or s.subset == pick]
            print(f"   {subset:<15} count : {_figures(o)}")
            print(f"   {'':<15} ignore: {_figures(n)}")
        print(
            f"   faithful verified -> unverified: {flips[1, True]}; "
            f"faithful unverified -> verified: {flips[1, False]}; "
            f"unattributable unverified -> verified: {flips[0, False]}; "
            f"unattributable verified -> unverified: {flips[0, True]}"
        )
        if suffix:
            differ = sum(1 for p, n in zip(plain, new, strict=True) if p.verified != n.verified)
            print(f"   ignore: verdicts that differ from the responses as written: {differ}")
        newly_blocked += flips[1, True]
    return newly_blocked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--policy", action="append", help="default, or a pack (repeatable)")
    parser.add_argument("--marker", default=MARKER, help="the citation marker appended")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (the BEGIN copy of ../shared/datasets)")
        return 0
    rows = load(args.data)
    print(f"BEGIN: {len(rows)} responses from {args.data.name}; lookups off")
    newly_blocked = sum(
        compare(rows, name, args.marker) for name in (args.policy or ["default", "recommended"])
    )
    print(f"\nfaithful responses newly blocked by citation_words: ignore: {newly_blocked}")
    return 1 if newly_blocked else 0


if __name__ == "__main__":
    raise SystemExit(main())
