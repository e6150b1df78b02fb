r"""Citations in notes and superscripts: Chicago notes-bibliography, law reviews, Vancouver.

A note cites a work by its author and its title, not by a year: a full note ("1. John Smith,
*The Title of the Book* (Chicago: University of Chicago Press, 1990), 23."), a short note
("Smith, *Title*, 23.") and "Ibid." (the work of the note before). :func:`note_citations`
reads them as a surname of an entry's first author followed, within a few words, by at least
two of the first significant words of that entry's title (one long word for a one-word title).
What it reads only marks entries cited: a note that names no entry may be commentary, so it
never makes a ``missing-entry``.

:func:`superscript_citations` reads a numbered list's superscript citations ("as shown²,³")
from the raised spans the PDF reader marks on its lines.
"""

from __future__ import annotations

import bisect
import re

from citeverify_core.references.document.citations_base import (
    _DASHES,
    MAX_CITATION_SITES,
    MAX_RANGE,
    _Body,
    _Cite,
    _Entry,
)
from citeverify_core.references.folding import fold

__all__: list[str] = []

#: Characters after a surname in which the title's words are looked for ("Smith, John. *A
#: Title*", "John Smith, ed., *A Title*").
_TITLE_WINDOW = 160
#: Words before a surname in which a title's first word is looked for ("„Title“ (A. Smith)").
_BEFORE = 14
#: Significant words of a title compared (a short note shortens a title to about four words).
_TITLE_WORDS = 4
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "and",
        "or",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "with",
        "by",
        "as",
        "is",
        "are",
        "its",
        "their",
        "his",
        "her",
        "our",
        "into",
        "upon",
        "about",
        "between",
        "under",
        "over",
        "der",
        "die",
        "das",
        "und",
        "von",
        "zu",
        "im",
        "la",
        "le",
        "les",
        "et",
        "du",
        "des",
        "de",
        "el",
        "los",
        "las",
        "y",
        "en",
    ]
)
# A word not inside another; after a digit too: a note's number glued to it ("10Averroes").
_WORD = re.compile(r"(?<![^\W\d_’'-])[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*")
_IBID = re.compile(r"\b(?:[Ii]bid(?:em)?|Id\.|[Ee]bd)\b\.?")
_RAISED_ITEM = rf"\d{{1,4}}(?:\s?[{_DASHES}]\s?\d{{1,4}})?"
_RAISED_NUMBERS = re.compile(rf"^\s*{_RAISED_ITEM}(?:\s?,\s?{_RAISED_ITEM}){{0,30}}\s*,?$")


def _title_words(entry: _Entry) -> tuple[str, ...]:
    """The first significant words of an entry's title (folded)."""
    words = [w for w in entry.title.split() if len(w) >= 3 and w not in _STOP]
    surname = entry.names[0].split()[-1] if entry.names and entry.names[0] else ""
    if surname in words[:6]:
        # A title read from the entry's start when the parser found none: "n n bhattacharyya
        # the king and the dice": the title's words come after the author's.
        words = words[words.index(surname) + 1 :]
    return tuple(words[:_TITLE_WORDS])


def note_citations(body: _Body, entries: list[_Entry]) -> list[_Cite]:
    """Citations by an author's surname and the title's first words, and "Ibid." after them.

    Read everywhere: in the lines of footnote areas (``DocumentLine.footnote``) and in running
    text, where a work is named so too. "Ibid." is read in footnotes only.
    """
    by_surname: dict[str, list[tuple[_Entry, tuple[str, ...]]]] = {}
    for e in entries:
        if e.names and e.names[0]:
            words = _title_words(e)
            if words:
                by_surname.setdefault(e.names[0].split()[-1], []).append((e, words))
    if not by_surname:
        return []
    text = body.text
    cites: list[_Cite] = []
    examined = 0
    for m in _WORD.finditer(text):
        word = m.group(0)
        if not word[0].isupper():
            continue
        # "Il’inskaja" folds to "il inskaja", whose last word the surnames are keyed by.
        key = word.lower() if word.isalpha() and word.isascii() else fold(word).split()[-1:]
        known = by_surname.get(key if isinstance(key, str) else "".join(key))
        if not known:
            continue
        examined += 1
        if examined > MAX_CITATION_SITES:
            break
        after = fold(text[m.end() : m.end() + _TITLE_WINDOW]).split()
        # The title before its author, as a lexicon's article is cited: "RGA VII, S. 501 s. v.
        # „Erik Blutaxt“ (G. Authén-Blom)"; the title's first word within a few words of it.
        before = fold(text[max(0, m.start() - _TITLE_WINDOW) : m.start()]).split()[-_BEFORE:]
        scored = []
        for e, words in known:
            hits = _title_hits(after, words) or _title_hits(before, words)
            if hits:
                scored.append((hits, e))
        if not scored:
            continue
        best = max(hits for hits, _ in scored)
        chosen = sorted(e.number for hits, e in scored if hits == best)
        end = min(len(text), m.end() + _TITLE_WINDOW)
        shown = text[m.start() : end].split(".")[0][:120]
        cites.append(_Cite(m.start(), shown, "note", [word], [chosen[0]], also=set(chosen[1:])))
    cites += _ibid(body, cites)
    return sorted(cites, key=lambda c: c.start)


def _title_hits(after: list[str], words: tuple[str, ...]) -> int:
    """How many of a title's first words follow, in order, from its first one (0: too few).

    The title's first significant word must come within a few words of the surname, and the
    next ones in their order, each within a few words of the one before: "Smith, Model-Based
    Analysis" names "Model-based analysis of arrays"; "Li-Wong MBEI is based upon fitting the
    model" does not (the words are there, not in the title's order). A one-word title needs a
    word of six letters or more.
    """
    try:
        at = after.index(words[0], 0, 12)
    except ValueError:
        return 0
    hits = 1
    for word in words[1:]:
        try:
            at = after.index(word, at + 1, at + 5)
        except ValueError:
            break
        hits += 1
    if hits >= 2 or (len(words) == 1 and len(words[0]) >= 6):
        return hits
    return 0


def _in_footnote(body: _Body, offset: int) -> bool:
    line = body.line_at(offset)
    return line is not None and line.footnote


def _ibid(body: _Body, cites: list[_Cite]) -> list[_Cite]:
    """The "Ibid." of a footnote: the work of the closest note citation before it."""
    if not cites:
        return []
    starts = [c.start for c in cites]
    found: list[_Cite] = []
    for n, m in enumerate(_IBID.finditer(body.text)):
        if n >= MAX_CITATION_SITES:
            break
        if not _in_footnote(body, m.start()):
            continue
        i = _last_before(starts, m.start())
        if i is None:
            continue
        before = cites[i]
        found.append(_Cite(m.start(), m.group(0), "note", ["ibid."], list(before.entries)))
    return found


def _last_before(starts: list[int], offset: int) -> int | None:
    i = bisect.bisect_left(starts, offset) - 1
    return i if i >= 0 else None


def superscript_citations(body: _Body, entries: list[_Entry]) -> list[_Cite]:
    """Numbers set raised in a numbered list's document: "shown²,³", "before.⁴⁻⁶".

    A raised span is read when it holds only numbers, commas and ranges, every number names an
    entry, and it follows a word of two letters or more or a punctuation mark (not a digit or a
    one-letter variable: "10⁵" and "x²" are powers).
    """
    labels: dict[str, int] = {}
    for e in entries:
        if e.ref.label is not None:
            labels.setdefault(e.ref.label.strip(), e.number)
    if not labels:
        return []
    cites: list[_Cite] = []
    for i, index in enumerate(body.origin):
        line = body.lines[index]
        for start, end in line.raised[:50]:
            span = line.text[start:end]
            if not _RAISED_NUMBERS.match(span):
                continue
            before = line.text[max(0, start - 3) : start]
            if not before or before[-1].isdigit() or re.search(r"(?:^|\W)[^\W\d_]$", before):
                continue
            numbers: list[int] = []
            for item in re.split(r"\s?,\s?", span.strip(" ,")):
                parts = [int(p) for p in re.split(rf"\s?[{_DASHES}]\s?", item) if p]
                if len(parts) == 2 and parts[0] < parts[1] <= parts[0] + MAX_RANGE:
                    numbers.extend(range(parts[0], parts[1] + 1))
                else:
                    numbers.extend(parts)
            found = [labels.get(str(x)) for x in numbers]
            if not found or None in found:
                continue  # a note call or a power, not a citation
            targets = [str(x) for x in numbers]
            cites.append(_Cite(body.starts[i], span.strip(), "numeric", targets, list(found)))
    return cites
