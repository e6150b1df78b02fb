r"""Citations by label: ``\cite`` keys, numbers ("[3-5]"), alphabetic labels ("[Smi20]").

A thing that looks like a citation is taken only when it is very likely one: see
:func:`numeric` for the rules that keep equations, intervals and quantities out.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from citeverify_core.references.document.citations_base import (
    _BRACKET,
    _DASHES,
    _PARENS,
    MAX_CITATION_SITES,
    MAX_RANGE,
    _Body,
    _Cite,
    _Entry,
)

_CITE_COMMAND = re.compile(
    r"\\(?P<cmd>[A-Za-z]{0,12}[Cc]ite[A-Za-z]{0,8}|nocite)\*?"  # \Citet, \Parencite too
    r"(?P<args>(?:\s{0,3}\[[^\[\]{}\n]{0,300}\]|\s{0,3}\([^(){}\n]{0,300}\)"
    r"|\s{0,3}\{[^{}\n]{0,2000}\}){1,8})"
)
# Commands with "cite" in their name that cite nothing: IEEEtran's control entry.
_NOT_CITING = frozenset({"bstctlcite"})
_BRACE = re.compile(r"\{([^{}]*)\}")
_COMMENT = re.compile(r"(?<!\\)%")

_NUM_ITEM = rf"\d{{1,4}}(?:\s?[{_DASHES}]\s?\d{{1,4}})?"
# Case-insensitive in a scoped group: a pattern compiled with re.I loses the engine's fast
# search for its first character ("["), and costs microseconds at every character of the text.
_LOCATOR_WORDS = (
    r"(?i:pp?\.|p|ch\.|chap\.|chapter|sec\.|section|§|thm\.|theorem|lemma|prop\.|fig\.|"
    r"figure|eq\.|table|tab\.|app\.|appendix|def\.|definition|cor\.|corollary|para\.|vol\.|"
    # German, French, Spanish, Italian: "[GMS94, Abs. 3.3.4]", "[12, S. 40]", "[3, chap. 2]"
    r"abs\.|abschn\.|s\.|kap\.|bd\.|abb\.|satz|bsp\.|anm\.|cap\.|pág\.|ch\.|no\.|n\.|art\.)"
)
# Brackets are found first (a cheap pattern), then their insides are read (bounded).
_RANGE_TO = re.compile(rf"\s?[{_DASHES}]\s?\[(\d{{1,4}})\]")
_NUMERIC = re.compile(
    r"(?:(?i:see(?:\s+also)?|e\.\s?g\.,?|cf\.|i\.\s?e\.,?)\s+)?"
    rf"(?P<items>{_NUM_ITEM}(?:\s?[,;]\s?{_NUM_ITEM}){{0,60}})"
    rf"(?P<loc>,\s?{_LOCATOR_WORDS}\s?~?[\w.{_DASHES}]{{1,12}})?"
    r",?"  # "[37, 36, 39, ]": an empty page argument (biblatex's \cite[]{a,b}) leaves a comma
)
_ALPHA_ITEM = r"[A-Za-z][A-Za-z+'.\-]{0,10}\d{2,4}[a-z]?"
_ALPHA = re.compile(
    rf"(?P<items>{_ALPHA_ITEM}(?:\s?[,;]\s?{_ALPHA_ITEM}){{0,30}})"
    rf"(?P<loc>,\s?{_LOCATOR_WORDS}\s?~?[\w.{_DASHES}]{{1,12}})?"
)


def _key_citations(body: _Body, entries: list[_Entry]) -> tuple[list[_Cite], bool, bool]:
    r"""``\cite``-like commands: (citations, ``\nocite{*}`` seen, the site limit reached)."""
    by_key: dict[str, int] = {}
    by_folded: dict[str, int] = {}
    for e in entries:
        if e.ref.key:
            by_key.setdefault(e.ref.key.strip(), e.number)
            by_folded.setdefault(e.ref.key.strip().casefold(), e.number)
    cites: list[_Cite] = []
    cite_all = False
    comments: dict[int, int] = {}
    for n, m in enumerate(_CITE_COMMAND.finditer(body.text)):
        if n >= MAX_CITATION_SITES:
            return cites, cite_all, True
        if _commented(body, m.start(), comments):
            continue
        keys: list[str] = []
        for group in _BRACE.findall(m.group("args")):
            keys.extend(k.strip() for k in group.split(",") if k.strip())
        if "*" in keys and m.group("cmd") == "nocite":
            cite_all = True
            continue
        if m.group("cmd") in _NOT_CITING:
            continue
        # mciteplus's "*key" merges an entry into the one before: it cites "key".
        keys = [k.lstrip("*") for k in keys]
        keys = [k for k in keys if re.fullmatch(r"[^\s\\{}%#~]{1,120}", k)]
        if not keys:
            continue
        found = [by_key.get(k, by_folded.get(k.casefold())) for k in keys]
        cites.append(_Cite(m.start(), m.group(0), "key", keys, found))
    return cites, cite_all, False


def _commented(body: _Body, offset: int, comments: dict[int, int]) -> bool:
    r"""Whether a LaTeX comment (``%`` not escaped) on the same line comes before ``offset``.

    ``comments`` keeps each line's first comment (its end; past the line when there is none),
    so a line is scanned once however many ``\cite`` it holds: scanning from the line's start
    for every citation was quadratic on a long line (a 1 MB line of citations took minutes).
    """
    i = bisect.bisect_right(body.starts, offset) - 1
    first = comments.get(i)
    if first is None:
        line_start = body.starts[i] if i >= 0 else 0
        line_end = body.starts[i + 1] if i + 1 < len(body.starts) else len(body.text)
        m = _COMMENT.search(body.text, line_start, line_end)
        first = comments[i] = m.end() if m else line_end + 1
    return first <= offset


_MATH_WORDS = frozenset(
    {"interval", "intervals", "range", "ranges", "domain", "matrix", "vector", "array", "arrays",
     "segment", "window", "bounds", "bounded", "support", "index", "indices", "shape", "size",
     "sizes", "dimension", "dimensions", "between", "values", "value", "coordinates", "point",
     "points", "tensor", "layers", "units", "set", "sets", "list", "tuple", "entries", "weights",
     "seeds", "kernel", "stride", "padding", "grid", "box", "boxes", "mean", "median", "ci"}
)  # fmt: skip
_UNIT = re.compile(
    r"\s?(?:%|°|‰|(?:[kMGTmµnp]?(?:m|g|s|Hz|W|V|A|J|eV|B|b|L|l|Pa)|mm|cm|km|nm|µm|ms|min|h|"
    r"hours?|days?|weeks?|months?|years?|px|pixels?|dB|K|°C|kg|mg|ml|mL|bp|kb|Mb|fps|ppm)\b)"
)
_LAST_WORDS = re.compile(r"([A-Za-z]+)\W{0,3}(?:([A-Za-z]+)\W{0,3})?(?:([A-Za-z]+)\W{0,3})?$")


def _math_context(text: str, start: int, end: int, *, loose: bool) -> bool:
    r"""Whether a bracket ``text[start:end]`` is mathematics or a quantity.

    After "=", "∈", "≤", "\\in"; before "^", "_", "="; inside or around another bracket
    ("[[1, 2], [3, 4]]"). When ``loose`` (a bracket that would name no entry): also before a
    unit ("[10, 30] mm") and within three words after "interval", "range", "matrix", "shape",
    "between", ... ("the range is [10, 30]"); not always, as "between [3] and [5]" cites.
    """
    before = text[max(0, start - 40) : start].rstrip()
    after = text[end : end + 3].lstrip(" ,")
    if before and before[-1] in "=∈∉⊂⊆⊃≤≥<>×·*^_+−/|\\[":
        return True
    if after and after[0] in "^_×=→∪∩⊂⊆]":
        return True
    if not loose:
        return False
    if _UNIT.match(text, end, end + 12):
        return True
    words = _LAST_WORDS.search(before)
    return words is not None and any(
        w is not None and w.lower() in _MATH_WORDS for w in words.groups()
    )


def _expand(item: str) -> list[int] | None:
    """The numbers of "12" or "3-5"; ``None`` for what is no citation (a leading zero)."""
    parts = re.split(rf"\s?[{_DASHES}]\s?", item)
    if any(p.startswith("0") for p in parts):
        return None
    numbers = [int(p) for p in parts]
    if len(numbers) == 1:
        return numbers
    low, high = numbers
    if low < high <= low + MAX_RANGE:
        return list(range(low, high + 1))
    return [low, high]


def _brackets(
    text: str, inside: re.Pattern[str], *, ranges: bool, spans: re.Pattern[str] = _BRACKET
) -> Iterator[tuple[int, int, re.Match[str], str | None]]:
    """Brackets whose inside ``inside`` reads whole: (start, end, the reading, "5" of "[3]-[5]")."""
    skip = 0
    for m in spans.finditer(text):
        if m.start() < skip:
            continue  # the "[5]" of "[3]-[5]"
        if m.group(1).endswith(","):
            continue  # R's matrix row "[2,]"; biblatex's empty page argument is "[6, ]"
        read = inside.fullmatch(m.group(1).strip())  # pdfminer's "[ 12 ]"
        if read is None:
            continue
        end, to_label = m.end(), None
        if ranges and (to := _RANGE_TO.match(text, end)) is not None:
            end, to_label = to.end(), to.group(1)
            skip = end
        yield m.start(), end, read, to_label


def _numeric(
    body: _Body, entries: list[_Entry], *, parens: bool = False
) -> tuple[list[_Cite], bool]:
    """Brackets of numbers against a numbered list (``parens``: numbers in parentheses).

    A bracket is a citation when: no number in it starts with 0 ("[0, 1]"); none is beyond
    ``max(2 × the highest label, highest label + 20)`` (a year, a quantity: "[2020]", "[100,
    500]"); it is not mathematics (see :func:`_math_context`); and, when one of its numbers
    names no entry, it does not stick to the word before it ("x[14]").

    In parentheses (read only when no bracket cites, see :func:`check_consistency`), also not
    after "Eq.", "Fig.", "Table", "Step", ...; and a number naming no entry is taken only alone,
    not after "and"/"or"/"to", and not at the end of a line (where equations are numbered).
    """
    labels: dict[str, int] = {}
    for e in entries:
        if e.ref.label is not None:
            labels.setdefault(e.ref.label.strip(), e.number)
    numbers = [int(k) for k in labels if k.isdecimal()]
    top = max(numbers, default=0)
    bound = max(2 * top, top + 20)
    text = body.text
    cites: list[_Cite] = []
    found_in = _brackets(text, _NUMERIC, ranges=not parens, spans=_PARENS if parens else _BRACKET)
    for n, (start, end, m, to_label) in enumerate(found_in):
        if n >= MAX_CITATION_SITES:
            return cites, True
        items = re.split(r"\s?[,;]\s?", m.group("items"))
        expanded: list[int] = []
        for item in items:
            got = _expand(item)
            if got is None:
                expanded = []
                break
            expanded.extend(got)
        if to_label and expanded:
            to = int(to_label)
            low = expanded[-1]
            if low < to <= low + MAX_RANGE:
                expanded.extend(range(low + 1, to + 1))
            else:
                expanded.append(to)
        if not expanded or any(x == 0 or x > bound for x in expanded):
            continue
        found = [labels.get(str(x)) for x in expanded]
        if _math_context(text, start, end, loose=None in found):
            continue
        glued = start > 0 and (text[start - 1].isalnum() or text[start - 1] in ")]")
        if glued and None in found:
            continue
        if parens and _not_cited_in_parentheses(body, start, end, len(expanded), None in found):
            continue
        targets = [str(x) for x in dict.fromkeys(expanded)]
        cites.append(
            _Cite(start, text[start:end], "numeric", targets, [labels.get(t) for t in targets])
        )
    return cites, False


_NOT_CITING_WORDS = frozenset(
    {"eq", "eqs", "equation", "equations", "fig", "figs", "figure", "figures", "table",
     "tables", "step", "steps", "section", "sections", "chapter", "theorem", "lemma",
     "proposition", "corollary", "definition", "condition", "conditions", "constraint",
     "constraints", "problem", "rule", "item", "items", "case", "cases", "stage", "phase",
     "formula", "inequality", "assumption", "hypothesis", "study", "experiment", "model"}
)  # fmt: skip


def _not_cited_in_parentheses(body: _Body, start: int, end: int, count: int, unknown: bool) -> bool:
    """Whether numbers in parentheses are an equation's, a step's, a list item's: no citation."""
    text = body.text
    words = _LAST_WORDS.search(text[max(0, start - 40) : start].rstrip())
    last = (words.group(words.lastindex or 1) or "").lower() if words else ""
    if last in _NOT_CITING_WORDS:
        return True
    if not unknown:
        return False
    i = bisect.bisect_right(body.starts, end)
    next_line = body.starts[i] if i < len(body.starts) else len(text)
    at_line_end = not text[end:next_line].strip(" .,;")
    return count > 1 or last in {"and", "or", "to", "through"} or at_line_end


def _alpha(body: _Body, entries: list[_Entry]) -> tuple[list[_Cite], bool]:
    """Brackets of alphabetic labels ("[Smi20, KLM+19]") against a list labelled so."""
    labels: dict[str, int] = {}
    for e in entries:
        if e.ref.label is not None:
            labels.setdefault(e.ref.label.strip(), e.number)
    text = body.text
    cites: list[_Cite] = []
    for n, m in enumerate(_BRACKET.finditer(text)):
        if n >= MAX_CITATION_SITES:
            return cites, True
        start, end = m.start(), m.end()
        inside = " ".join(m.group(1).split())
        parts = [p for p in re.split(r"\s?[,;]\s?", inside) if p]
        if parts and all(p in labels for p in parts):
            # The list's own labels, whatever their shape: "[Wig]", "[DH 00]", "[R Core]".
            targets = list(dict.fromkeys(parts))
            cites.append(_Cite(start, text[start:end], "numeric", targets,
                               [labels[t] for t in targets]))  # fmt: skip
            continue
        read = _ALPHA.fullmatch(m.group(1).strip())
        if read is None:
            continue
        targets = list(dict.fromkeys(re.split(r"\s?[,;]\s?", read.group("items"))))
        found = [labels.get(t) for t in targets]
        if None in found and (
            _math_context(text, start, end, loose=True) or (start > 0 and text[start - 1].isalnum())
        ):
            continue
        cites.append(_Cite(start, text[start:end], "numeric", targets, found))
    return cites, False
