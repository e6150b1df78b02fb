"""bench/bench_citation_words.py on a hand-made BEGIN-shaped file: the comparison it prints."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load_bench():
    spec = importlib.util.spec_from_file_location(
        "bench_citation_words", ROOT / "bench" / "bench_citation_words.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BENCH = _load_bench()  # loading it runs nothing

CONTEXT = "The museum opens at nine and closes at five on weekdays."
ROWS = [
    ("The museum opens at nine.", 1),
    ("The museum closes at five on weekdays (Smith et al., 2020).", 1),
    ("Dragons guard the museum at night.", 0),
    ("The museum opens at nine. (Source: dragons.md)", 1),
]


def test_prints_both_arithmetics_and_no_newly_blocked(tmp_path, capsys):
    data = tmp_path / "begin.jsonl"
    data.write_text(
        "\n".join(
            json.dumps({"context": CONTEXT, "response": r, "label": y, "subset": "begin-wow-test"})
            for r, y in ROWS
        ),
        encoding="utf-8",
    )
    assert BENCH.main(["--data", str(data), "--policy", "default"]) == 0
    out = capsys.readouterr().out
    # As written, two responses carry markers: count blocks them, ignore does not.
    assert "-- as written: groundedness changed for 2 of 4 responses" in out
    assert "faithful verified -> unverified: 0; faithful unverified -> verified: 2;" in out
    assert "ignore: verdicts that differ from the responses as written: 0" in out
    assert out.rstrip().endswith("faithful responses newly blocked by citation_words: ignore: 0")
