"""A learned line labeller for reference lists read without layout (issue 34).

Where a list comes with nothing but its text (a ``.txt`` file, a PDF list whose indents and
vertical gaps say nothing), the splitter's text rules decide where an unlabelled reference starts
from the line alone ("Surname, X." after a line that ended a reference, a year close by). They
are precise but miss many starts: on GROBID's 118 real annotated reference zones they found
65.2% of unlabelled references exactly. A linear-chain CRF over the same kind of text features,
trained on those zones, labels each line ``B`` (starts a reference), ``I`` (continues one) or
``O`` (outside: a page header, a footnote), and finds 83.4% (five-fold by file,
``bench/bench_line_labels_crf.py``).

The model is trained offline with python-crfsuite (a development dependency, never needed at run
time) and shipped as plain weights, ``segment_labels.json``: every (feature, label) weight and the
label-to-label transitions. Labelling is Viterbi decoding over those weights, in pure Python,
which gives the labels crfsuite's tagger gives (``tests/references/test_document_line_labels.py``
checks it). The weights are derived from GROBID's reference-segmenter corpus (Apache-2.0,
https://github.com/kermitt2/grobid, ``grobid-trainer/resources/dataset/reference-segmenter``);
the file says so in its ``source`` field.

Features are text only and closed: the shape of a line's first token, its last character, its
length against the zone's and its neighbours', where a year is, "et al.", "In:", "pp.", a URL,
whether a printed number follows the previous one, and the same for the two lines before and
after. No surname or title word is a feature (a closed list of function words is), so the model
learns layouts, not the training papers' authors.

``use_line_labeller`` sets another model for a block of code, or none (the rules alone: the
bench's cross-validation folds, tests); :func:`line_labeller` is the one in use.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from citeverify_core.references.document.segment_patterns import LABEL

__all__ = [
    "LABELS",
    "LineLabeller",
    "crf_items",
    "line_features",
    "line_labeller",
    "use_line_labeller",
]

#: B starts a reference, I continues one, O is outside any.
LABELS = ("B", "I", "O")
FORMAT = "citeverify-line-labels/1"
#: Lines read per list at most: a list is never longer, and labelling stays bounded.
MAX_LINES = 20_000

Features = dict[str, str | bool | float]

_YEAR = re.compile(r"(?<![\d/.])(?:1[6-9]|20)\d\d[a-z]?(?!\d)")
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("lab_bracket", re.compile(r"^\[[^\[\]]{1,20}\]")),
    ("lab_paren", re.compile(r"^\(\d{1,4}\)")),
    ("lab_dot", re.compile(r"^\d{1,4}\.(?!\d)")),
    ("lab_close", re.compile(r"^\d{1,4}[)\]]")),
    ("lab_bare", re.compile(r"^\d{1,4}\s+[^\W\d_]")),
    ("rule", re.compile(r"^[-‐‑‒–—―_]{2,}|^[—―]")),
    ("surname_comma", re.compile(r"^[^\W\d_][\w'’\-]{0,40}(?:\s[\w'’\-]{1,40})?,")),
    ("surname_initial", re.compile(r"^[^\W\d_][\w'’\-]{1,40}\s+(?:[^\W\d_]\.\s?){1,6}")),
    ("initials", re.compile(r"^(?:[^\W\d_]\.\s?-?){1,3}\s*[^\W\d_]")),
    ("caps_word", re.compile(r"^[^\W\d_]{2,}[\s,]")),
    ("digits", re.compile(r"^\d")),
    ("open_punct", re.compile(r"^[\"“‘'(\[]")),
)
# A closed list: surnames as features would only learn the training files' authors.
_FUNCTION_WORDS = frozenset(
    (
        *("In", "in", "and", "And", "&", "of", "the", "The", "pp", "pp.", "Vol.", "vol."),
        *("In:", "Proceedings", "Proc.", "Journal", "editors", "eds.", "ed.", "Available"),
        *("Retrieved", "URL", "doi:", "DOI:", "http"),
    )
)
_LABEL_NUMBER = re.compile(r"^\s*[\[(]?(\d{1,4})[.)\]]?(?:\s|$)")
_PAREN_YEAR = re.compile(r"\((?:1[6-9]|20)\d\d[a-z]?\)")
_IN = re.compile(r"(?:^|[.,]\s)In[:\s]")
_PAGES = re.compile(r"\bpp?\.\s?\d")
_VOLUME = re.compile(r"\b(?:vol|no)\.\s?\d", re.IGNORECASE)
_URL = re.compile(r"https?://|www\.|doi[:.]|10\.\d{4,}/", re.IGNORECASE)
_INITIAL = re.compile(r"(?:^|[\s,])[^\W\d_]\.")
_AND_START = re.compile(r"(?:and|&)\s")
#: Characters of a line that features read: a longer line says nothing more.
_LINE_CHARS = 400


def _first_shape(line: str) -> str:
    for name, pattern in _SHAPES:
        if pattern.match(line):
            if name in {"surname_comma", "surname_initial", "caps_word"} and not line[0].isupper():
                return "lower_" + name
            return name
    if line[:1].islower():
        return "lower"
    if line[:1].isupper():
        return "upper"
    return "other"


def _bucket(value: float, edges: Sequence[float]) -> str:
    return str(sum(value >= e for e in edges))


def _end(line: str) -> str:
    last = line.rstrip()[-1:]
    if last.isdigit():
        return "digit"
    if last in ".,;:-)]":
        return last
    if last.isalpha():
        return "lower" if last.islower() else "upper"
    return "other"


def _alone(line: str, length: int, median: float) -> Features:
    """Features of one line by itself (``line`` cut to ``_LINE_CHARS``; ``length`` its own)."""
    words = line.split()
    years = [m.start() for m in _YEAR.finditer(line)]
    first = words[0] if words else ""
    letters = sum(c.isalpha() for c in line)
    return {
        "shape": _first_shape(line),
        "end": _end(line),
        "len": _bucket(length, (15, 30, 50, 70, 90)),
        "rel_len": _bucket(length / median if median else 1.0, (0.3, 0.6, 0.85, 1.1)),
        "words": _bucket(len(words), (2, 4, 8, 12)),
        "year": "none"
        if not years
        else _bucket(years[0] / max(len(line), 1), (0.25, 0.6)) + ("+" if len(years) > 1 else ""),
        "paren_year": bool(_PAREN_YEAR.search(line)),
        "et_al": "et al" in line,
        "in": bool(_IN.search(line)),
        "pp": bool(_PAGES.search(line)),
        "vol": bool(_VOLUME.search(line)),
        "url": bool(_URL.search(line)),
        "initials": len(_INITIAL.findall(line)) >= 2,
        "and_start": bool(_AND_START.match(line)),
        "upper_ratio": _bucket(sum(c.isupper() for c in line) / max(letters, 1), (0.2, 0.5)),
        "first_word": first.lower() if first in _FUNCTION_WORDS else "",
    }


def line_features(lines: Sequence[str]) -> list[Features]:
    """Every line's features with its two neighbours' on each side (text only).

    ``lines`` are a list's lines in reading order, stripped. A line's own features, plus one
    feature of the whole run (the share of lines that start with a label, bucketed) and whether
    a printed number continues the last one seen.
    """
    cut = [x[:_LINE_CHARS] for x in lines]
    n = len(cut)
    median = statistics.median(len(x) for x in lines) if lines else 1.0
    alone = [_alone(c, len(x), median) for c, x in zip(cut, lines, strict=True)]
    label_share = sum(bool(LABEL.match(x[:40])) for x in cut) / max(n, 1)
    zone_bucket = _bucket(label_share, (0.1, 0.25, 0.45))
    last_number: int | None = None
    out: list[Features] = []
    for i, line in enumerate(cut):
        f: Features = {"bias": 1.0, "zone_labels": zone_bucket}
        f.update(alone[i])
        m = _LABEL_NUMBER.match(line)
        number = int(m.group(1)) if m else None
        if number is not None:
            f["num_next"] = last_number is not None and number == last_number + 1
            f["num_first"] = last_number is None and number in {0, 1}
        if number is not None and (last_number is None or number == last_number + 1):
            last_number = number
        f["shape*zone"] = f"{f['shape']}|{zone_bucket}"
        for d in (-2, -1, 1, 2):
            j = i + d
            if not 0 <= j < n:
                f[f"{d:+d}:edge"] = True
                continue
            g = alone[j]
            for k in ("shape", "end", "len", "rel_len", "year", "url", "et_al", "initials"):
                f[f"{d:+d}:{k}"] = g[k]
        length = len(lines[i])
        if i > 0:
            f["vs_prev"] = _bucket(length / max(len(lines[i - 1]), 1), (0.5, 0.9, 1.1, 1.5))
            f["prev_end*shape"] = f"{alone[i - 1]['end']}|{f['shape']}"
            f["prev_rel*shape"] = f"{alone[i - 1]['rel_len']}|{f['shape']}"
        if i + 1 < n:
            f["vs_next"] = _bucket(length / max(len(lines[i + 1]), 1), (0.5, 0.9, 1.1, 1.5))
        out.append(f)
    return out


def crf_items(features: Sequence[Features]) -> list[dict[str, float]]:
    """Features as crfsuite attributes: ``name=value`` for strings, ``name`` for true booleans.

    The same attributes train the model (python-crfsuite's ``ItemSequence``) and label with it.
    """
    items: list[dict[str, float]] = []
    for f in features:
        item: dict[str, float] = {}
        for k, v in f.items():
            if isinstance(v, bool):
                if v:
                    item[k] = 1.0
            elif isinstance(v, float):
                item[k] = v
            elif v != "":
                item[f"{k}={v}"] = 1.0
        items.append(item)
    return items


@dataclass(frozen=True, slots=True)
class LineLabeller:
    """A linear-chain CRF's weights, and Viterbi decoding over them.

    Attributes:
        state: For each attribute, its weight for each label (``LABELS`` order).
        transitions: ``transitions[a][b]``: the weight of label ``b`` after label ``a``.
        source: Where the weights come from (data and licence).
    """

    state: Mapping[str, tuple[float, float, float]]
    transitions: tuple[tuple[float, float, float], ...]
    source: str = ""

    @classmethod
    def from_weights(
        cls,
        state_features: Mapping[tuple[str, str], float],
        transitions: Mapping[tuple[str, str], float],
        source: str = "",
    ) -> LineLabeller:
        """From crfsuite's weights (``Tagger.info()``'s ``state_features``, ``transitions``)."""
        index = {label: k for k, label in enumerate(LABELS)}
        state: dict[str, list[float]] = {}
        for (attribute, label), weight in state_features.items():
            state.setdefault(attribute, [0.0, 0.0, 0.0])[index[label]] = weight
        trans = [[0.0] * 3 for _ in LABELS]
        for (a, b), weight in transitions.items():
            trans[index[a]][index[b]] = weight
        return cls(
            {k: (v[0], v[1], v[2]) for k, v in state.items()},
            tuple((r[0], r[1], r[2]) for r in trans),
            source,
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LineLabeller:
        """From the JSON this class writes (:meth:`to_json`); a wrong shape raises ValueError."""
        if data.get("format") != FORMAT or list(data.get("labels", ())) != list(LABELS):
            raise ValueError(f"not a {FORMAT} model with labels {LABELS}")
        state = {str(k): (float(v[0]), float(v[1]), float(v[2])) for k, v in data["state"].items()}
        rows = data["transitions"]
        trans = tuple((float(r[0]), float(r[1]), float(r[2])) for r in rows)
        if len(trans) != len(LABELS):
            raise ValueError("transitions must be a 3 x 3 matrix")
        return cls(state, trans, str(data.get("source", "")))

    def to_json(self) -> dict[str, Any]:
        """The weights as JSON (rounded to 4 decimals: the labels they give do not change)."""
        return {
            "format": FORMAT,
            "source": self.source,
            "labels": list(LABELS),
            "transitions": [[round(w, 4) for w in row] for row in self.transitions],
            "state": {
                k: [round(w, 4) for w in v]
                for k, v in sorted(self.state.items())
                if any(round(w, 4) for w in v)
            },
        }

    def label_items(self, items: Sequence[Mapping[str, float]]) -> list[str]:
        """The most likely labels of a sequence of crfsuite items (Viterbi)."""
        if not items:
            return []
        state = self.state
        trans = self.transitions
        k = range(len(LABELS))
        scores: list[list[float]] = []
        for item in items:
            s = [0.0, 0.0, 0.0]
            for attribute, value in item.items():
                w = state.get(attribute)
                if w is not None:
                    s[0] += value * w[0]
                    s[1] += value * w[1]
                    s[2] += value * w[2]
            scores.append(s)
        best = list(scores[0])
        back: list[list[int]] = []
        for s in scores[1:]:
            pointers = [_argmax([best[a] + trans[a][b] for a in k]) for b in k]
            best = [best[pointers[b]] + trans[pointers[b]][b] + s[b] for b in k]
            back.append(pointers)
        last = _argmax(best)
        path = [last]
        for pointers in reversed(back):
            last = pointers[last]
            path.append(last)
        return [LABELS[b] for b in reversed(path)]

    def label(self, lines: Sequence[str]) -> list[str]:
        """``B``, ``I`` or ``O`` for each line of a list (at most ``MAX_LINES`` are read)."""
        head = [x.strip() for x in lines[:MAX_LINES]]
        labels = self.label_items(crf_items(line_features(head)))
        return labels + ["I"] * (len(lines) - len(head))


def _argmax(values: Sequence[float]) -> int:
    """The index of the largest value (the first of equal ones, as crfsuite's Viterbi)."""
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best


_MODEL = Path(__file__).with_name("segment_labels.json")
_SHIPPED = "shipped"
_override: ContextVar[LineLabeller | str | None] = ContextVar(
    "citeverify_line_labeller", default=_SHIPPED
)


@lru_cache(maxsize=1)
def _shipped() -> LineLabeller:
    return LineLabeller.from_json(json.loads(_MODEL.read_text(encoding="utf-8")))


def line_labeller() -> LineLabeller | None:
    """The labeller in use: the shipped model, or what :func:`use_line_labeller` set."""
    current = _override.get()
    if current == _SHIPPED:
        return _shipped()
    return current if isinstance(current, LineLabeller) else None


@contextmanager
def use_line_labeller(labeller: LineLabeller | None) -> Iterator[None]:
    """Label lines with ``labeller`` inside the block; ``None``: the rules alone, no model.

    For this thread or task only (a context variable): the bench's cross-validation folds give
    each held-out file a model that never saw it, and compare with the rules alone.
    """
    token = _override.set(labeller)
    try:
        yield
    finally:
        _override.reset(token)
