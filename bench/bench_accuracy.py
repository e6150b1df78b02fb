"""Grounding accuracy on the BEGIN benchmark (issue 16).

Each BEGIN response is verified against its knowledge snippet (one context document, lookups off)
and the scores are compared with the people's labels (1 = fully attributable, 0 = not):

- ROC AUC of the answer's groundedness, of the claim confidence, of the lowest claim score, and of
  ROUGE-1 recall (the anchor: the share of the response's words, counted with repeats, that the
  snippet holds, clipped at the snippet's counts);
- the verdict (``verified``: what ``unverified_action: block`` lets through) with the seed's
  defaults: balanced accuracy, faithful responses blocked, unattributable ones let through;
- thresholds (``min_context_overlap``, ``min_groundedness``, ``min_confidence``) chosen on the dev
  subsets only, reported on ``begin-wow-test``.

The data is ``../shared/datasets/begin-groundedness-4749.jsonl`` (SOURCES.md there); nothing reads
``../shared/datasets/measure/``.

Run: ``python -m uv run --frozen --all-extras python bench/bench_accuracy.py``
(``--data FILE`` for another copy; the matching options of issue 16 with ``--words stem``,
``--stopwords ignore``, ``--numbers value``, ``--strict-statistics``, ``--language NAME``, or any
``--extensions JSON``; ``--no-tune`` skips the threshold search; ``--timing`` also times verify()
per response, best of 3 passes, with the context cache; ``--sweep`` compares every option alone
and together in one table: dev-tuned thresholds, begin-wow-test figures, time against exact).

The semantic tier: ``--scorer MODULE:NAME`` (or ``path/to/file.py:NAME``) loads a scorer (a
callable ``(claim, passages) -> score``, a LangChain ``Embeddings``, a LlamaIndex embedding model,
or a class of one, instantiated without arguments) and measures it: ``extensions.semantic.
min_score`` is chosen on the dev subsets over a grid and reported on begin-wow-test, against the
same policy without the tier (``--semantic-scope all`` scores every claim; ``--fields JSON`` sets
top-level policy fields such as ``min_groundedness``). No model is needed: ``--scorer
bench/bench_accuracy.py:char_trigram_scorer`` runs the plumbing with a lexical stand-in (character
trigram cosine, not a model); ``--scorer bench/scorers.py:minilm`` measures a real embedding model
(all-MiniLM-L6-v2, in a virtualenv of its own: bench/scorers.py says how).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeverify_core import CitationVerifier, PolicyConfig, load_policy_pack

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "datasets" / "begin-groundedness-4749.jsonl"
DEV = ("begin-wow-dev", "begin-cmu-dev", "begin-tc-dev")
TEST = "begin-wow-test"

#: Issue 16's figures for the whole file under the seed's defaults.
ANCHORS = {
    "auc_groundedness": 0.940,
    "auc_rouge1": 0.940,
    "auc_confidence": 0.84,
    "balanced_accuracy": 0.820,
    "faithful_blocked": (531, 1705),
    "unattributable_passed": (145, 3044),
    "overlap_rule_only_0.7": 0.862,
}

#: Lookups off: only the grounding decides (issue 16: "with the seed's defaults, lookups off").
BASE_POLICY: dict[str, Any] = {"extensions": {"lookups": {"enabled": False}}}

WORD = re.compile(r"[^\W_]+")
GRID = [round(i * 0.05, 2) for i in range(21)]


# --- metrics -------------------------------------------------------------------------------------


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """ROC AUC by the Mann-Whitney U statistic: P(score of a positive > score of a negative).

    Ties count one half (average ranks). ``labels`` are 1 (positive) or 0.

    Raises:
        ValueError: a class is missing, or the lengths differ.
    """
    if len(scores) != len(labels):
        raise ValueError("scores and labels differ in length")
    n_pos = sum(1 for y in labels if y == 1)
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("both classes are needed for an AUC")
    order = sorted(range(len(scores)), key=scores.__getitem__)
    rank_sum = 0.0  # sum of the positives' ranks (1-based, ties averaged)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        average = (i + j) / 2 + 1
        rank_sum += average * sum(1 for k in order[i : j + 1] if labels[k] == 1)
        i = j + 1
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg)


@dataclass(frozen=True)
class Confusion:
    """A verdict against the labels: positives are attributable responses, passed = verified."""

    passed_pos: int
    pos: int
    passed_neg: int
    neg: int

    @classmethod
    def of(cls, passed: Iterable[bool], labels: Iterable[int]) -> Confusion:
        pp = p = pn = n = 0
        for ok, y in zip(passed, labels, strict=True):
            if y == 1:
                p += 1
                pp += ok
            else:
                n += 1
                pn += ok
        return cls(pp, p, pn, n)

    @property
    def blocked_pos(self) -> int:
        return self.pos - self.passed_pos

    @property
    def balanced_accuracy(self) -> float:
        """Mean of the pass rate of the attributable and the block rate of the others."""
        tpr = self.passed_pos / self.pos if self.pos else 0.0
        tnr = (self.neg - self.passed_neg) / self.neg if self.neg else 0.0
        return (tpr + tnr) / 2

    @property
    def faithful_blocked(self) -> float:
        return self.blocked_pos / self.pos if self.pos else 0.0

    @property
    def unattributable_passed(self) -> float:
        return self.passed_neg / self.neg if self.neg else 0.0


def balanced_accuracy(passed: Iterable[bool], labels: Iterable[int]) -> float:
    """Balanced accuracy of a pass/block verdict (pass = predicted attributable)."""
    return Confusion.of(passed, labels).balanced_accuracy


def rouge1_recall(response: str, reference: str) -> float:
    """Share of the response's words (with repeats) that the reference holds, clipped counts.

    Casefolded ``[^\\W_]+`` words. An empty response scores 1.0 (nothing unsupported).
    """
    resp = Counter(WORD.findall(response.casefold()))
    total = sum(resp.values())
    if not total:
        return 1.0
    ref = Counter(WORD.findall(reference.casefold()))
    return sum(min(c, ref[w]) for w, c in resp.items()) / total


# --- scoring -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    """One response's scores under one policy."""

    subset: str
    label: int
    groundedness: float
    confidence: float
    lowest_claim: float
    claim_scores: tuple[float, ...]
    claim_problems: bool  # a strict option failed some claim
    verified: bool
    rouge1: float
    semantic_scored: int = 0  # claims the semantic tier gave a score
    semantic_failure: str | None = None  # the tier's note when the scorer failed


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def make_policy(extensions: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    ext = {**BASE_POLICY["extensions"], **(extensions or {})}
    return {**fields, "extensions": ext}


def score(
    rows: Sequence[dict[str, Any]], policy: dict[str, Any], semantic: Any = None
) -> list[Scored]:
    verifier = CitationVerifier(policy, semantic=semantic)
    out = []
    for row in rows:
        r = verifier.verify(row["response"], [row["context"]])
        d = r.details
        claims = [c for c in d.claims if c.groundedness is not None]
        scores = tuple(c.groundedness for c in claims if c.groundedness is not None)
        g = 1.0 if d.groundedness is None else d.groundedness  # an empty answer passes
        out.append(
            Scored(
                subset=row["subset"],
                label=int(row["label"]),
                groundedness=g,
                confidence=1.0 if d.claim_confidence is None else d.claim_confidence,
                lowest_claim=min(scores, default=g),
                claim_scores=scores,
                claim_problems=any(c.problems for c in claims),
                verified=bool(d.verified),
                rouge1=rouge1_recall(row["response"], row["context"]),
                semantic_scored=sum(c.semantic_score is not None for c in d.claims),
                semantic_failure=next((n for n in r.notes if n.startswith("semantic tier")), None),
            )
        )
    return out


def check_tier(items: Sequence[Scored]) -> None:
    """Stop when the scorer scored nothing and failed: a broken scorer must not look like a
    measurement of a tier that changed nothing."""
    failures = [s.semantic_failure for s in items if s.semantic_failure]
    if failures and not any(s.semantic_scored for s in items):
        msg = f"the semantic scorer failed on every response it was asked about: {failures[0]}"
        raise SystemExit(msg)


def offline_verdict(s: Scored, overlap: float, groundedness: float, confidence: float) -> bool:
    """The seed's step 7 for one document, no quotes decisive, lookups off.

    Verified iff the answer overlap reaches ``overlap`` (which is then also the source evidence),
    the share of claims at or above ``groundedness`` reaches ``confidence``, and no strict option
    failed a claim. bench_accuracy checks it against the real verifier for the tuned thresholds.
    """
    if s.claim_problems or s.groundedness < overlap:
        return False
    if not s.claim_scores:
        return True
    passing = sum(1 for x in s.claim_scores if x >= groundedness)
    return passing / len(s.claim_scores) >= confidence


# --- report --------------------------------------------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "-"


def _row(name: str, items: list[Scored], passed: list[bool]) -> str:
    labels = [s.label for s in items]
    c = Confusion.of(passed, labels)
    aucs = [
        roc_auc([getattr(s, f) for s in items], labels)
        for f in ("groundedness", "confidence", "lowest_claim", "rouge1")
    ]
    return (
        f"{name:<15} {len(items):>5} "
        + " ".join(f"{a:>6.3f}" for a in aucs)
        + f" {c.balanced_accuracy:>6.3f} {_pct(c.blocked_pos, c.pos):>19}"
        f" {_pct(c.passed_neg, c.neg):>19}"
    )


HEADER = (
    f"{'subset':<15} {'n':>5} {'AUC g':>6} {'AUC cc':>6} {'AUC lo':>6} {'AUC R1':>6}"
    f" {'BA':>6} {'faithful blocked':>19} {'unattr. passed':>19}"
)


def report(items: list[Scored], passed: list[bool], title: str) -> None:
    print(title)
    print(HEADER)
    subsets = sorted({s.subset for s in items}, key=lambda x: (x not in DEV, x))
    for name in subsets:
        idx = [i for i, s in enumerate(items) if s.subset == name]
        print(_row(name, [items[i] for i in idx], [passed[i] for i in idx]))
    dev = [i for i, s in enumerate(items) if s.subset in DEV]
    if dev:
        print(_row("dev (pooled)", [items[i] for i in dev], [passed[i] for i in dev]))
    print(_row("all", items, passed))


def tune(
    items: list[Scored], max_passed: float | None = None
) -> tuple[float, float, float, Confusion]:
    """Thresholds that maximize balanced accuracy on ``items`` (ties: the first in grid order).

    With ``max_passed``, only thresholds letting through at most that share of unattributable
    responses are considered.
    """
    labels = [s.label for s in items]
    best: tuple[float, float, float, Confusion] | None = None
    for g in GRID:
        # claim confidence under this min_groundedness, once per response
        conf = [
            (sum(1 for x in s.claim_scores if x >= g) / len(s.claim_scores))
            if s.claim_scores
            else 1.0
            for s in items
        ]
        for c in GRID:
            conf_ok = [not s.claim_problems and k >= c for s, k in zip(items, conf, strict=True)]
            for a in GRID:
                passed = [ok and s.groundedness >= a for s, ok in zip(items, conf_ok, strict=True)]
                m = Confusion.of(passed, labels)
                if max_passed is not None and m.unattributable_passed > max_passed:
                    continue
                if best is None or m.balanced_accuracy > best[3].balanced_accuracy:
                    best = (a, g, c, m)
    assert best is not None
    return best


def verify_time(rows: Sequence[dict[str, Any]], ext: dict[str, Any], rounds: int = 3) -> float:
    """Seconds per response of verify() with a warm context cache (best of ``rounds`` passes)."""
    verifier = CitationVerifier(make_policy(ext), context_cache=True)
    pairs = [(r["response"], [r["context"]]) for r in rows]
    for ans, docs in pairs:  # fill the cache
        verifier.verify(ans, docs)
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for ans, docs in pairs:
            verifier.verify(ans, docs)
        best = min(best, time.perf_counter() - t0)
    return best / len(pairs)


#: The option sets that ``--sweep`` compares (issue 16's matching options).
SWEEP: list[tuple[str, dict[str, Any]]] = [
    ("exact (the seed)", {}),
    ("words: stem", {"words": "stem"}),
    ("stopwords: ignore", {"stopwords": "ignore"}),
    ("numbers: value", {"numbers": "value"}),
    ("numbers: value + strict_statistics", {"numbers": "value", "strict_statistics": True}),
    ("stem + stopwords", {"words": "stem", "stopwords": "ignore"}),
    ("stem + stopwords + numbers", {"words": "stem", "stopwords": "ignore", "numbers": "value"}),
]


def sweep(rows: Sequence[dict[str, Any]]) -> None:
    """One line per option set: AUC, the defaults and dev-tuned thresholds on begin-wow-test."""
    print(
        "\n== options compared: AUC of groundedness (all); begin-wow-test at the seed's "
        "thresholds, at the dev-tuned ones (best BA) and at the dev-tuned ones with at most 5% "
        "of the dev unattributable passed; verify() time with a warm cache =="
    )
    print(
        f"{'options':<36} {'AUC':>6} | {'BA':>6} {'blk':>6} {'pass':>6} | {'tuned':<15} {'BA':>6}"
        f" {'blk':>6} {'pass':>6} | {'tuned <=5%':<15} {'BA':>6} {'blk':>6} {'pass':>6} |"
        f" {'us':>5} {'x':>5}"
    )
    base_time = None
    for name, ext in SWEEP:
        items = score(rows, make_policy(ext))
        labels = [s.label for s in items]
        auc = roc_auc([s.groundedness for s in items], labels)
        test = [s for s in items if s.subset == TEST]
        dev = [s for s in items if s.subset in DEV]
        test_labels = [s.label for s in test]
        cells = []
        for thresholds in [(0.7, 0.8, 0.8), tune(dev)[:3], tune(dev, 0.05)[:3]]:
            c = Confusion.of([offline_verdict(s, *thresholds) for s in test], test_labels)
            cells.append(
                (
                    "/".join(f"{x:g}" for x in thresholds),
                    f"{c.balanced_accuracy:>6.3f} {100 * c.faithful_blocked:>5.1f}%"
                    f" {100 * c.unattributable_passed:>5.1f}%",
                )
            )
        t = verify_time(rows, ext)
        base_time = base_time or t
        print(
            f"{name:<36} {auc:>6.3f} | {cells[0][1]} | {cells[1][0]:<15} {cells[1][1]} |"
            f" {cells[2][0]:<15} {cells[2][1]} | {t * 1e6:>5.0f} {t / base_time:>4.2f}x"
        )


# --- the semantic tier -----------------------------------------------------------------------------

#: Candidate ``extensions.semantic.min_score`` values tried on dev.
SEMANTIC_GRID = [round(0.3 + i * 0.05, 2) for i in range(14)]  # 0.3 .. 0.95


def load_scorer(spec: str) -> Any:
    """``MODULE:NAME`` or ``path/to/file.py:NAME``; a class is instantiated without arguments."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        msg = f"--scorer takes MODULE:NAME or FILE.py:NAME, got {spec!r}"
        raise SystemExit(msg)
    if where.endswith(".py"):
        module_spec = importlib.util.spec_from_file_location(Path(where).stem, where)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"--scorer: cannot load {where}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    obj = getattr(module, name)
    return obj() if isinstance(obj, type) else obj


class MemoScorer:
    """A callable scorer that answers each (claim, passages) once: the dev grid re-runs are free."""

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        self.memo: dict[tuple[str, tuple[str, ...]], Any] = {}
        self.calls = 0

    def __call__(self, claim: str, passages: list[str]) -> Any:
        key = (claim, tuple(passages))
        if key not in self.memo:
            self.calls += 1
            self.memo[key] = self.scorer(claim, passages)
        return self.memo[key]


class MemoEmbeddings:
    """An embedding model (LangChain's, LlamaIndex's or sentence-transformers' shape) whose texts
    are embedded once."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.memo: dict[str, Any] = {}
        self.calls = 0
        embed = (
            getattr(model, "embed_documents", None)
            or getattr(model, "get_text_embedding_batch", None)
            or model.encode  # sentence-transformers: encode(list) -> array, one row per text
        )
        self._embed = embed

    def embed_documents(self, texts: list[str]) -> list[Any]:
        new = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if new:
            self.calls += 1
            self.memo.update(zip(new, self._embed(new), strict=True))
        return [self.memo[t] for t in texts]


def memoized(scorer: Any) -> MemoScorer | MemoEmbeddings:
    """The scorer behind a memo (callables per claim, embedding models per text)."""
    if any(
        callable(getattr(scorer, name, None))
        for name in ("embed_documents", "get_text_embedding_batch", "encode")
    ):
        return MemoEmbeddings(scorer)
    return MemoScorer(scorer)


def _trigrams(text: str) -> Counter[str]:
    t = " " + " ".join(WORD.findall(text.casefold())) + " "
    return Counter(t[i : i + 3] for i in range(len(t) - 2))


def char_trigram_scorer(claim: str, passages: list[str]) -> float:
    """A lexical stand-in for a model: the best cosine of character-trigram counts.

    Not semantic (it knows no synonyms or negation): it only shows the tier's plumbing and what
    inflections and spelling variants are worth. Use a real embedding or NLI model for meaning.
    """
    a = _trigrams(claim)
    na = math.sqrt(sum(v * v for v in a.values()))
    best = 0.0
    for p in passages:
        b = _trigrams(p)
        nb = math.sqrt(sum(v * v for v in b.values()))
        if na and nb:
            best = max(best, sum(v * b[k] for k, v in a.items()) / (na * nb))
    return min(1.0, best)


def semantic_bench(
    rows: Sequence[dict[str, Any]], policy: dict[str, Any], scorer: Any, scope: str
) -> None:
    """The policy with and without the tier; min_score chosen on dev, reported on the test set."""
    dev_rows = [r for r in rows if r["subset"] in DEV]
    test_rows = [r for r in rows if r["subset"] == TEST]
    memo = memoized(scorer)
    ext = policy["extensions"]

    def with_tier(min_score: float) -> dict[str, Any]:
        semantic = {**ext.get("semantic", {}), "min_score": min_score, "scope": scope}
        return {**policy, "extensions": {**ext, "semantic": semantic}}

    base_dev = Confusion.of([s.verified for s in score(dev_rows, policy)], _labels(dev_rows))
    t0 = time.perf_counter()
    best: tuple[float, Confusion] | None = None
    for m in SEMANTIC_GRID:
        scored = score(dev_rows, with_tier(m), memo)
        check_tier(scored)
        c = Confusion.of([s.verified for s in scored], _labels(dev_rows))
        print(
            f"dev, min_score {m:<4g}: BA {c.balanced_accuracy:.3f}, faithful blocked "
            f"{100 * c.faithful_blocked:.1f}%, unattributable passed "
            f"{100 * c.unattributable_passed:.1f}%"
        )
        if best is None or c.balanced_accuracy > best[1].balanced_accuracy:
            best = (m, c)
    assert best is not None
    grid_time = time.perf_counter() - t0
    m = best[0]
    base = score(test_rows, policy)
    t1 = time.perf_counter()
    tiered = score(test_rows, with_tier(m), memo)
    check_tier(tiered)
    tier_time = time.perf_counter() - t1
    labels = _labels(test_rows)
    print(
        f"\n== semantic tier ({type(scorer).__name__}, scope {scope}); min_score {m:g} chosen on "
        f"dev (dev BA {base_dev.balanced_accuracy:.3f} without the tier, "
        f"{best[1].balanced_accuracy:.3f} with it) =="
    )
    if best[1].balanced_accuracy <= base_dev.balanced_accuracy:
        print("note: on dev no min_score does better than the policy without the tier")
    for name, items in (("without the tier", base), ("with the tier", tiered)):
        c = Confusion.of([s.verified for s in items], labels)
        print(
            f"{TEST} {name:<17}: BA {c.balanced_accuracy:.3f}, faithful blocked "
            f"{_pct(c.blocked_pos, c.pos)}, unattributable passed {_pct(c.passed_neg, c.neg)}"
        )
    print(
        f"scorer calls: {memo.calls} (memoized over the dev grid: {grid_time:.1f} s); "
        f"{TEST} with the tier {tier_time:.1f} s for {len(test_rows)} responses"
    )


def _labels(rows: Sequence[dict[str, Any]]) -> list[int]:
    return [int(r["label"]) for r in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--extensions", type=json.loads, default={}, help="JSON object")
    parser.add_argument("--words", choices=["exact", "stem"])
    parser.add_argument("--stopwords", choices=["count", "ignore"])
    parser.add_argument("--numbers", choices=["words", "value"])
    parser.add_argument("--language")
    parser.add_argument("--strict-statistics", action="store_true")
    parser.add_argument("--no-tune", action="store_true")
    parser.add_argument("--timing", action="store_true")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--scorer", help="MODULE:NAME or FILE.py:NAME of a semantic scorer")
    parser.add_argument("--semantic-scope", choices=["failing", "all"], default="failing")
    parser.add_argument("--fields", type=json.loads, default={}, help="top-level policy JSON")
    parser.add_argument("--policy", help="a policy pack (path, or a bundled name: recommended)")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (the BEGIN copy of ../shared/datasets)")
        return 0
    rows = load(args.data)
    if args.sweep:
        sweep(rows)
        return 0
    fields: dict[str, Any] = {}
    ext: dict[str, Any] = {}
    if args.policy:  # the pack's options, lookups still off; flags and --fields override it
        config, _notes = load_policy_pack(args.policy)
        fields = config.model_dump(mode="json", exclude_unset=True)
        ext = fields.pop("extensions", {})
        ext.pop("lookups", None)
    ext.update(args.extensions)
    fields.update(args.fields)
    for key in ("words", "stopwords", "numbers", "language"):
        if getattr(args, key) is not None:
            ext[key] = getattr(args, key)
    if args.strict_statistics:
        ext["strict_statistics"] = True
    print(
        f"BEGIN: {len(rows)} responses from {args.data.name}; extensions: {json.dumps(ext)}"
        + (f"; fields: {json.dumps(fields)}" if fields else "")
    )
    if args.scorer:
        semantic_bench(
            rows, make_policy(ext, **fields), load_scorer(args.scorer), args.semantic_scope
        )
        return 0

    items = score(rows, make_policy(ext, **fields))
    passed = [s.verified for s in items]
    config = PolicyConfig.model_validate(make_policy(ext, **fields))
    report(
        items,
        passed,
        f"\n== {args.policy or 'the seed' + chr(39) + 's defaults'} (min_groundedness "
        f"{config.min_groundedness:g}, min_confidence {config.min_confidence:g}, "
        f"min_context_overlap {config.effective_min_context_overlap:g}) ==",
    )
    test_items = [s for s in items if s.subset == TEST]
    tc = Confusion.of([s.verified for s in test_items], [s.label for s in test_items])
    print(
        f"{TEST}: BA {tc.balanced_accuracy:.3f}, faithful blocked {_pct(tc.blocked_pos, tc.pos)}, "
        f"unattributable passed {_pct(tc.passed_neg, tc.neg)}"
    )
    all_c = Confusion.of(passed, [s.label for s in items])
    print(
        f"anchors (issue 16, all): AUC g {ANCHORS['auc_groundedness']:.3f}, AUC cc "
        f"{ANCHORS['auc_confidence']:.2f}, AUC R1 {ANCHORS['auc_rouge1']:.3f}, BA "
        f"{ANCHORS['balanced_accuracy']:.3f}, faithful blocked 531/1705, unattributable passed "
        f"145/3044; here {all_c.blocked_pos}/{all_c.pos} and {all_c.passed_neg}/{all_c.neg}"
    )
    overlap_only = [s.groundedness >= 0.7 and not s.claim_problems for s in items]
    print(
        f"answer-overlap rule alone at 0.7 (all): BA "
        f"{balanced_accuracy(overlap_only, [s.label for s in items]):.3f} "
        f"(anchor {ANCHORS['overlap_rule_only_0.7']:.3f})"
    )
    at = (
        config.effective_min_context_overlap,
        config.min_groundedness,
        config.min_confidence,
    )
    mismatches = sum(1 for s in items if offline_verdict(s, *at) != s.verified)
    print(f"offline verdict vs verify() at these thresholds: {mismatches} differences")

    if not args.no_tune:
        dev = [s for s in items if s.subset in DEV]
        test = [s for s in items if s.subset == TEST]
        for label, cap in (("best balanced accuracy", None), ("unattributable passed <= 5%", 0.05)):
            a, g, c, m = tune(dev, cap)
            tuned_fields = {
                "min_groundedness": g,
                "min_confidence": c,
                "rag_context": {"min_context_overlap": a},
            }
            tuned = score(rows, make_policy(ext, **{**fields, **tuned_fields}))
            tuned_passed = [s.verified for s in tuned]
            report(
                tuned,
                tuned_passed,
                f"\n== tuned on dev ({label}): min_context_overlap {a}, min_groundedness {g}, "
                f"min_confidence {c}; dev BA {m.balanced_accuracy:.3f} ==",
            )
            off = sum(
                1
                for s, v in zip(items, tuned_passed, strict=True)
                if offline_verdict(s, a, g, c) != v
            )
            t = Confusion.of(
                [v for s, v in zip(tuned, tuned_passed, strict=True) if s.subset == TEST],
                [s.label for s in test],
            )
            print(
                f"{TEST}: BA {t.balanced_accuracy:.3f}, faithful blocked "
                f"{_pct(t.blocked_pos, t.pos)}, unattributable passed {_pct(t.passed_neg, t.neg)}"
                f"; offline verdict vs verify(): {off} differences"
            )

    if args.timing:
        best = verify_time(rows, ext) * len(rows)
        pairs = [(r["response"], [r["context"]]) for r in rows]
        cold = CitationVerifier(make_policy(ext))
        t0 = time.perf_counter()
        for ans, docs in pairs:
            cold.verify(ans, docs)
        t_cold = time.perf_counter() - t0
        print(
            f"\nverify() per response: {best / len(rows) * 1e6:.0f} us with a warm context "
            f"cache (best of 3), {t_cold / len(pairs) * 1e6:.0f} us uncached"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
