"""The metrics of bench/bench_accuracy.py (issue 16) on hand-made inputs with known answers, and
the seed's figures on BEGIN when ../shared holds the data.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_bench():
    spec = importlib.util.spec_from_file_location(
        "bench_accuracy", ROOT / "bench" / "bench_accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


BENCH = _load_bench()  # loading it runs nothing


# --- ROC AUC --------------------------------------------------------------------------------------


def test_auc_perfect_reversed_and_constant():
    labels = [0, 0, 1, 1]
    assert BENCH.roc_auc([0.1, 0.2, 0.8, 0.9], labels) == 1.0
    assert BENCH.roc_auc([0.9, 0.8, 0.2, 0.1], labels) == 0.0
    assert BENCH.roc_auc([0.5, 0.5, 0.5, 0.5], labels) == 0.5  # every pair a tie


def test_auc_counts_pairs_and_half_ties():
    # positives 0.4, 0.7; negatives 0.1, 0.4, 0.8. Pairs won: 0.4>0.1, 0.7>0.1, 0.7>0.4 = 3;
    # tied: 0.4=0.4 = 1/2; lost: 0.4<0.8, 0.7<0.8. AUC = 3.5 / 6.
    scores = [0.1, 0.4, 0.8, 0.4, 0.7]
    labels = [0, 0, 0, 1, 1]
    assert BENCH.roc_auc(scores, labels) == pytest.approx(3.5 / 6)


def test_auc_by_brute_force():
    scores = [0.3, 0.3, 0.9, 0.1, 0.5, 0.5, 0.5, 0.0, 1.0, 0.7]
    labels = [1, 0, 1, 0, 1, 0, 0, 1, 1, 0]
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
    assert BENCH.roc_auc(scores, labels) == pytest.approx(sum(pairs) / len(pairs))


def test_auc_needs_both_classes():
    with pytest.raises(ValueError, match="both classes"):
        BENCH.roc_auc([0.1, 0.2], [1, 1])
    with pytest.raises(ValueError, match="length"):
        BENCH.roc_auc([0.1], [1, 0])


# --- the verdict's figures -----------------------------------------------------------------------


def test_balanced_accuracy_and_rates():
    # 4 attributable (3 passed), 6 not (2 passed): TPR 3/4, TNR 4/6.
    passed = [True, True, True, False, True, True, False, False, False, False]
    labels = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    c = BENCH.Confusion.of(passed, labels)
    assert (c.passed_pos, c.pos, c.passed_neg, c.neg, c.blocked_pos) == (3, 4, 2, 6, 1)
    assert c.balanced_accuracy == pytest.approx((3 / 4 + 4 / 6) / 2)
    assert BENCH.balanced_accuracy(passed, labels) == pytest.approx((3 / 4 + 4 / 6) / 2)
    assert c.faithful_blocked == pytest.approx(1 / 4)
    assert c.unattributable_passed == pytest.approx(2 / 6)
    assert BENCH.balanced_accuracy([True, False], [1, 0]) == 1.0
    assert BENCH.balanced_accuracy([True, True], [1, 0]) == 0.5  # passing everything


def test_rouge1_recall_counts_repeats_clipped():
    assert BENCH.rouge1_recall("The cat sat", "the CAT sat down") == 1.0
    # "the" twice in the response, once in the reference: 1 of 2 counts; "dog" missing.
    assert BENCH.rouge1_recall("the the dog", "the cat") == pytest.approx(1 / 3)
    assert BENCH.rouge1_recall("", "anything") == 1.0


def test_offline_verdict_follows_the_thresholds():
    s = BENCH.Scored(
        subset="x",
        label=1,
        groundedness=0.75,
        confidence=0.5,
        lowest_claim=0.5,
        claim_scores=(1.0, 0.5),
        claim_problems=False,
        verified=False,
        rouge1=0.75,
    )
    assert not BENCH.offline_verdict(s, 0.7, 0.8, 0.8)  # 1 of 2 claims at 0.8
    assert BENCH.offline_verdict(s, 0.7, 0.5, 0.8)  # both claims at 0.5
    assert BENCH.offline_verdict(s, 0.7, 0.8, 0.5)
    assert not BENCH.offline_verdict(s, 0.8, 0.5, 0.5)  # the answer overlap
    assert not BENCH.offline_verdict(
        BENCH.Scored(**{**s.__dict__, "claim_problems": True}), 0.0, 0.0, 0.0
    )


# --- BEGIN (skipped without ../shared) ----------------------------------------------------------


def test_seed_defaults_on_begin_match_issue_16():
    if not BENCH.DATA.is_file():
        pytest.skip(f"BEGIN is not at {BENCH.DATA} (../shared is outside the repo)")
    rows = BENCH.load(BENCH.DATA)
    items = BENCH.score(rows, BENCH.make_policy())
    labels = [s.label for s in items]
    c = BENCH.Confusion.of([s.verified for s in items], labels)
    assert (c.blocked_pos, c.pos, c.passed_neg, c.neg) == (531, 1705, 145, 3044)
    assert BENCH.roc_auc([s.groundedness for s in items], labels) == pytest.approx(0.940, abs=5e-4)
    assert all(BENCH.offline_verdict(s, 0.7, 0.8, 0.8) == s.verified for s in items)


# --- the semantic tier (--scorer) ----------------------------------------------------------------


def test_char_trigram_scorer_is_a_bounded_similarity():
    assert BENCH.char_trigram_scorer("The museum opens.", ["the MUSEUM opens"]) == pytest.approx(1)
    near = BENCH.char_trigram_scorer("The museum opened.", ["The museum opens."])
    far = BENCH.char_trigram_scorer("Dragons fly.", ["The museum opens."])
    assert 0.0 <= far < near < 1.0
    assert BENCH.char_trigram_scorer("x y", []) == 0.0


def test_memo_scorers_ask_each_question_once():
    calls = []
    memo = BENCH.memoized(lambda claim, passages: calls.append(claim) or 0.5)
    assert memo("a", ["p"]) == memo("a", ["p"]) == 0.5
    memo("a", ["q"])
    assert (memo.calls, calls) == (2, ["a", "a"])

    from langchain_core.embeddings import DeterministicFakeEmbedding

    emb = BENCH.memoized(DeterministicFakeEmbedding(size=4))
    first = emb.embed_documents(["x", "y"])
    assert emb.embed_documents(["y", "x", "y"]) == [first[1], first[0], first[1]]
    assert emb.calls == 1


def test_memo_takes_a_sentence_transformers_shaped_encoder():
    # bench/scorers.py:minilm returns a SentenceTransformer: an nn.Module whose __call__ is not a
    # (claim, passages) scorer, so the memo must embed through encode, as the core does.
    class Encoder:
        def __init__(self):
            self.asked = []

        def __call__(self, *args):
            raise AssertionError("an encoder is not a per-claim scorer")

        def encode(self, texts):
            self.asked.append(list(texts))
            return [[float(len(t)), 1.0] for t in texts]

    enc = Encoder()
    memo = BENCH.memoized(enc)
    assert isinstance(memo, BENCH.MemoEmbeddings)
    assert memo.embed_documents(["ab", "c", "ab"]) == [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    memo.embed_documents(["c", "def"])
    assert enc.asked == [["ab", "c"], ["def"]]
    assert memo.calls == 2


def _write_rows(path: Path) -> Path:
    doc = "The museum opens at nine. Entry costs nothing on Sundays."
    rows = [
        ("begin-wow-dev", "The museum opens at nine.", 1),
        ("begin-wow-dev", "Entry is costless on Sundays.", 1),
        ("begin-wow-dev", "Dragons guard the museum at night.", 0),
        ("begin-wow-test", "Museum opened at nine.", 1),
        ("begin-wow-test", "Wizards sell the tickets.", 0),
    ]
    with path.open("w", encoding="utf-8") as f:
        for subset, response, label in rows:
            f.write(
                json.dumps({"subset": subset, "response": response, "context": doc, "label": label})
                + "\n"
            )
    return path


def test_scorer_option_measures_the_tier_without_a_model(tmp_path, capsys):
    data = _write_rows(tmp_path / "rows.jsonl")
    spec = f"{ROOT / 'bench' / 'bench_accuracy.py'}:char_trigram_scorer"
    assert BENCH.main(["--data", str(data), "--scorer", spec]) == 0
    out = capsys.readouterr().out
    assert "min_score" in out and "chosen on dev" in out
    # Without the tier the inflected test response is blocked (2 of 4 words); with it, it passes,
    # while the invented one stays blocked: BA goes from 0.5 to 1.0.
    assert "begin-wow-test without the tier : BA 0.500" in out
    assert "begin-wow-test with the tier    : BA 1.000" in out


def test_load_scorer_refuses_a_bad_spec():
    with pytest.raises(SystemExit, match="MODULE:NAME"):
        BENCH.load_scorer("no-colon")
    assert BENCH.load_scorer("json:dumps") is json.dumps


def broken_scorer(claim: str, passages: list[str]) -> float:
    raise RuntimeError("model not loaded")


def test_a_scorer_that_fails_everywhere_stops_the_bench(tmp_path):
    # A broken scorer leaves every word verdict as it was; the bench must say so, not print an
    # unchanged "measurement" of the tier.
    data = _write_rows(tmp_path / "rows.jsonl")
    spec = f"{Path(__file__)}:broken_scorer"
    with pytest.raises(SystemExit, match=r"failed on every response.*model not loaded"):
        BENCH.main(["--data", str(data), "--scorer", spec])
