"""What one line of a document is, read alone (issue 26, 34).

A reference list's heading, a section or appendix heading, a caption, a label, the end of a
reference, a reference's look; and the sizes and edges a list's lines share.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from citeverify_core.references.document.model import (
    DocumentLine,
)
from citeverify_core.references.document.segment_patterns import (
    APPENDIX,
    AUTHOR_START,
    CAPTION,
    CODE_LINE,
    END_HEADING,
    HEADING,
    LABEL,
    MAX_HEADING_CHARS,
    ROLE_END,
    SECTION,
    SPLIT_CAPS,
    TRAILING_GIVEN_NAME,
    TRAILING_INITIAL,
    URL_TAIL,
    YEAR,
)

__all__ = [
    "body_text_size",
    "capitals_heading",
    "clusters",
    "ends_list",
    "ends_reference",
    "label_number",
    "label_text",
    "line_number",
    "looks_like_reference",
    "main_size",
    "reference_heading",
    "section_heading",
    "sort_key",
]


def reference_heading(text: str) -> str | None:
    """The heading word(s) when ``text`` is a heading that names a reference list, else None.

    >>> reference_heading("VII. REFERENCES"), reference_heading("Literaturverzeichnis")
    ('REFERENCES', 'Literaturverzeichnis')
    >>> reference_heading("see the references below") is None
    True
    """
    line = text.strip()
    if not line or len(line) > MAX_HEADING_CHARS:
        return None
    first = next((c for c in line if c.isalpha()), "")
    if first.islower():
        return None  # "literature." ending a sentence or a reference, not a heading
    if m := HEADING.match(line):
        return m.group("word")
    if line.upper() == line and (m := HEADING.match(SPLIT_CAPS.sub(r"\1", line))):
        return m.group("word")
    return None


def looks_like_reference(text: str) -> bool:
    """A cheap test: a label, a year, or an author at the start."""
    head = text[:300]
    return bool(LABEL.match(head) or YEAR.search(head) or AUTHOR_START.match(head))


def label_number(text: str) -> int | None:
    """The number of the label ``text`` starts with ("[12]", "12.", "(12)", "12 "), or None."""
    m = LABEL.match(text[:40])
    if not m:
        return None
    value = m.group("b") or m.group("p") or m.group("n") or m.group("bare")
    return int(value) if value and value.isdecimal() else None


def line_number(line: DocumentLine) -> int | None:
    """The number a line is labelled with (Word's or Markdown's, or its text's)."""
    if line.label:
        label = label_text(line.label)
        return int(label) if label.isdecimal() and len(label) < 6 else None
    return label_number(line.text)


def ends_list(text: str, size: float | None) -> bool:
    """``text`` is a heading or caption that comes after a reference list."""
    line = text.strip()
    if not line or len(line) > MAX_HEADING_CHARS + 30:
        return False
    if CAPTION.match(line) or CODE_LINE.match(line):
        return True
    if len(line) > MAX_HEADING_CHARS or YEAR.search(line):
        return False
    if END_HEADING.match(line):
        return True
    # "Appendix A: Proofs" (a reference's line running "Appendix to ..." has a comma, a year,
    # more words or a full stop).
    return bool(APPENDIX.match(line)) and len(line.split()) <= 10 and not line.endswith(".")


def capitals_heading(text: str) -> bool:
    """``text`` is a heading set in capitals: "A RESEARCH METHODS", "B PROOFS".

    Two to eight words, no year, no full stop or comma at its end.
    """
    words = text.split()
    return (
        2 <= len(words) <= 8
        and text.upper() == text
        and not text.endswith((".", ","))
        and not YEAR.search(text)
        and sum(c.isalpha() for c in text) >= 6
    )


def section_heading(line: DocumentLine, body_size: float | None) -> bool:
    """A new section starts here: a format's heading, a bigger font, or "8 Discussion"."""
    text = line.text.strip()
    if not text or len(text) > MAX_HEADING_CHARS or reference_heading(text):
        return False
    if line.heading:
        return True
    if YEAR.search(text) or "," in text or text.endswith("."):
        return False
    bigger = (
        line.size is not None
        and body_size is not None
        and line.size >= body_size + 1.5
        and len(text) < 70
    )
    if bigger:
        return True
    return bool(SECTION.match(text))


def body_text_size(lines: Iterable[tuple[float | None, str]]) -> float | None:
    """The size of a document's body text from its lines' ``(size, text)``, weighted by characters.

    The size that holds the most characters is the body's unless a larger size holds at least
    a quarter as many characters in lines that read as running text (more than 40 characters
    on average; headings are short): then the largest such size is. Pages full of 10-point
    footnotes, or a long reference list set smaller, must not make 12-point body lines look
    like headings. The one estimate of the PDF reader's headings and the segmenter's.
    """
    chars: Counter[float] = Counter()
    count: Counter[float] = Counter()
    for size, text in lines:
        if text and size:
            key = round(size, 1)
            chars[key] += len(text)
            count[key] += 1
    if not chars:
        return None
    common, most = chars.most_common(1)[0]
    larger = [
        s
        for s, n in chars.items()
        if common < s <= 1.6 * common and n >= 0.25 * most and n / count[s] > 40
    ]
    return max(larger, default=common)


def main_size(lines: Sequence[DocumentLine], share: float | None = None) -> float | None:
    """The font size most of the characters of ``lines`` are set in (None: no sizes).

    With ``share``: the largest size that holds at least that share of the characters (a
    list's entries, beside URLs in a smaller typewriter font and notes).
    """
    weights: Counter[float] = Counter()
    for line in lines:
        if line.size:
            weights[round(line.size, 1)] += len(line.text.strip()[:500])
    if not weights:
        return None
    if share is not None:
        total = sum(weights.values())
        held = [size for size, chars in weights.items() if chars >= total * share]
        if held:
            return max(held)
    return weights.most_common(1)[0][0]


def sort_key(text: str) -> str:
    """The letter an author-date entry sorts under: its first letter, accents and case aside."""
    for char in unicodedata.normalize("NFKD", text[:200]):
        if char.isalpha():
            return char.casefold()
    return ""


def clusters(xs: list[float]) -> list[float]:
    """The left edges of the columns among sorted ``xs`` (a gap over 40 points starts one)."""
    bases: list[float] = []
    for x in xs:
        if not bases or x - bases[-1] > 40:
            bases.append(x)
    return bases


def label_text(raw: str) -> str:
    """A label without its brackets or punctuation ("[12]" -> "12")."""
    return raw.strip().strip("[]().:").strip()


def ends_reference(text: str) -> bool:
    """``text`` (a line) ends a reference: a full stop, a closing bracket, a URL or DOI."""
    t = text.rstrip()
    if not t:
        return True
    tail = t[-40:]
    if TRAILING_INITIAL.search(tail) or TRAILING_GIVEN_NAME.search(tail):
        return False  # "..., P. L. Bergsagel, G." + "Matthews, R. W.": the author list goes on
    if ROLE_END.search(tail):
        return False  # "Ed." + the editors' names
    if t.endswith((".", ")", "]", "”", '"')):
        return True
    return bool(URL_TAIL.search(t[-200:]))
