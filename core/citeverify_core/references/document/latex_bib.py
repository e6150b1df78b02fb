r"""Bibliography files and lists: ``.bbl``, ``thebibliography``, BibTeX ``.bib``.

A ``.bbl`` holds bibtex's ``\bibitem`` list or biblatex's ``\entry`` blocks; a
``thebibliography`` list its ``\bibitem`` entries; a ``.bib`` file BibTeX entries.

biblatex's ``.bbl`` holds fields, not the printed text: an APA-like reference string is made
from them (authors, year, title, container, pages, publisher, DOI or URL).
"""

from __future__ import annotations

import re
from itertools import islice

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.latex_macros import MacroTable
from citeverify_core.references.document.latex_scan import group_end
from citeverify_core.references.document.latex_text import latex_to_text, new_macro_table
from citeverify_core.references.document.markup_common import line_of, line_starts, nfc
from citeverify_core.references.document.model import ExtractedReference, Location

__all__ = ["THEBIB_BEGIN", "THEBIB_END", "bbl_entries", "bib_entries", "bibitems"]

THEBIB_BEGIN = re.compile(r"\\begin\s*\{thebibliography\}")
THEBIB_END = re.compile(r"\\end\s*\{thebibliography\}")
_BIBITEM = re.compile(
    r"\\bibitem\s*(?:\[(?P<label>(?:[^\[\]{}]|\{[^{}]{0,200}\}){0,300})\])?\s*\{(?P<key>[^{}]{0,300})\}"
)


# A heading inside the list ("\bibsubhead{Online resources}", "\subsection*{Software}"): it
# ends the entry before it, as the page prints it on a line of its own.
_SUBHEAD = re.compile(
    r"\\(?:bib[A-Za-z]{0,10}head(?:ing)?|(?:sub){0,2}section|paragraph|chapter|part)\*?"
    r"\s*(?:\[[^\]]{0,200}\])?\s*\{"
)
_CROSS_CITE = re.compile(r"\\cite\s*(?:\[(?P<note>[^\]{}]{0,200})\])?\s*\{(?P<keys>[^{}]{1,500})\}")


def bibitems(
    clean: str, start: int, stop: int, starts: list[int], macros: MacroTable | None = None
) -> list[ExtractedReference]:
    r"""The ``\bibitem`` entries between ``start`` and ``stop``, read with ``macros``."""
    entries: list[ExtractedReference] = []
    items = list(_BIBITEM.finditer(clean, start, stop))
    numbers: dict[str, str] | None = None
    if items and not any(m.group("label") for m in items):
        # A numbered list: an entry citing another ("In Guenther \cite{proc}") prints its number.
        numbers = {m.group("key").strip(): str(k) for k, m in enumerate(items, 1)}
    for k, m in enumerate(items):
        end = items[k + 1].start() if k + 1 < len(items) else stop
        head = _SUBHEAD.search(clean, m.end(), end)
        chunk = clean[m.end() : head.start() if head else end]
        if numbers and "\\cite" in chunk:
            chunk = _CROSS_CITE.sub(lambda c: _cross_cite(c, numbers), chunk)
        body = " ".join(latex_to_text(chunk, macros=macros).split())
        if not body:
            continue
        number = len(entries) + 1
        label = m.group("label")
        label = " ".join(latex_to_text(label, macros=macros).split()) if label else str(number)
        end_line = line_of(starts, max(m.end(), m.end() + len(chunk.rstrip()) - 1))
        first = line_of(starts, m.start())
        entries.append(
            ExtractedReference(
                text=nfc(body),
                number=number,
                location=Location(line=first),
                label=label,
                key=m.group("key").strip() or None,
                end=Location(line=end_line) if end_line > first else None,
            )
        )
    return entries


def _cross_cite(m: re.Match[str], numbers: dict[str, str]) -> str:
    r"""``\cite{a,b}`` in an entry of a numbered list as printed: ``[3, 5]``.

    As written when a key is not in the list.
    """
    keys = [k.strip() for k in m.group("keys").split(",")]
    if not all(k in numbers for k in keys):
        return m.group(0)
    note = f", {m.group('note').strip()}" if m.group("note") else ""
    return "[" + ", ".join(numbers[k] for k in keys) + note + "]"


_ENTRY = re.compile(r"\\entry\s*\{(?P<key>[^{}]{0,300})\}\s*\{(?P<type>[^{}]{0,40})\}")
_FIELD = re.compile(r"\\field\s*\{(?P<name>[A-Za-z]{1,40})\}\s*\{")
_NAME_LIST = re.compile(
    r"\\name\s*\{(?P<role>[A-Za-z]{1,40})\}\s*\{\d{1,5}\}\s*\{[^{}]{0,300}\}\s*\{"
)
_LIST = re.compile(r"\\list\s*\{(?P<name>[A-Za-z]{1,40})\}\s*\{\d{1,5}\}\s*\{")
_VERB = re.compile(r"\\verb\s*\{(?P<name>[A-Za-z]{1,40})\}\s*\\verb\s(?P<value>[^\n]{0,2000})")
_NAME_PART = re.compile(r"\b(?P<part>family|given|prefix|suffix)=\{")


def bbl_entries(text: str, macros: MacroTable | None = None) -> list[ExtractedReference]:
    r"""A ``.bbl``'s entries: biblatex's ``\\entry`` blocks, else bibtex's ``\\bibitem`` list.

    Its own ``\\providecommand``s (``\\noopsort``, ``\\natexlab``) are read into ``macros``
    (a new table when None) without replacing the document's.
    """
    if macros is None:
        macros = new_macro_table()
    macros.read_provided(text)
    starts = line_starts(text)
    if _ENTRY.search(text) and "\\endentry" in text:
        return _biblatex_entries(text, starts)
    b = THEBIB_BEGIN.search(text)
    begin = b.end() if b else 0
    e = THEBIB_END.search(text, begin)
    return bibitems(text, begin, e.start() if e else len(text), starts, macros)


def _braced(text: str, open_brace: int) -> str:
    end = group_end(text, open_brace, 5_000)
    return text[open_brace + 1 : end - 1]


def _biblatex_entries(text: str, starts: list[int]) -> list[ExtractedReference]:
    entries: list[ExtractedReference] = []
    for m in _ENTRY.finditer(text):
        stop = text.find("\\endentry", m.end())
        stop = len(text) if stop < 0 else stop
        # An entry is a few hundred characters: what is past 50,000 is not read, and at most
        # 200 fields of each kind (a hostile .bbl must not cost quadratic time).
        chunk = text[m.end() : min(stop, m.end() + 50_000)]
        fields: dict[str, str] = {}
        for f in islice(_FIELD.finditer(chunk), 100):
            fields.setdefault(f.group("name").lower(), _clean(_braced(chunk, f.end() - 1)))
        for v in islice(_VERB.finditer(chunk), 200):
            fields.setdefault(v.group("name").lower(), v.group("value").strip())
        for lst in islice(_LIST.finditer(chunk), 200):
            items = _braced(chunk, lst.end() - 1)
            values = [_clean(x) for x in re.findall(r"\{([^{}]{0,500})\}", items)]
            fields.setdefault(lst.group("name").lower(), "; ".join(v for v in values if v))
        names: dict[str, list[str]] = {}
        for nl in islice(_NAME_LIST.finditer(chunk), 20):
            names.setdefault(
                nl.group("role").lower(), _biblatex_names(_braced(chunk, nl.end() - 1))
            )
        reference = _biblatex_reference(m.group("type").lower(), fields, names)
        if not reference:
            continue
        first = line_of(starts, m.start())
        last = line_of(starts, m.end() + len(chunk))
        entries.append(
            ExtractedReference(
                text=nfc(reference),
                number=len(entries) + 1,
                location=Location(line=first),
                label=fields.get("labelnumber") or str(len(entries) + 1),
                key=m.group("key").strip() or None,
                end=Location(line=last) if last > first else None,
            )
        )
    return entries


def _clean(value: str) -> str:
    return " ".join(latex_to_text(value).split())


def _biblatex_names(block: str) -> list[str]:
    """'Family, G.' for each name of a biblatex name list."""
    out: list[str] = []
    for person in re.split(r"\}\}%?\s*\{\{", block, maxsplit=2000):
        parts: dict[str, str] = {}
        for p in islice(_NAME_PART.finditer(person), 8):
            parts.setdefault(p.group("part"), _clean(_braced(person, p.end() - 1)))
        family = parts.get("family")
        if not family:
            continue
        if parts.get("prefix"):
            family = f"{parts['prefix']} {family}"
        given = parts.get("given", "")
        initials = " ".join(
            w[0] + "." if not w.endswith(".") else w for w in re.split(r"[\s]+", given) if w
        )
        name = f"{family}, {initials}" if initials else family
        if parts.get("suffix"):
            name += f", {parts['suffix']}"
        out.append(name)
    return out


def _join_names(names: list[str]) -> str:
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + ", & " + names[-1]


def _biblatex_reference(kind: str, fields: dict[str, str], names: dict[str, list[str]]) -> str:
    """An APA-like reference string from a biblatex entry's fields."""
    authors = _join_names(names.get("author") or names.get("editor") or [])
    year = fields.get("year") or (fields.get("date") or "")[:4]
    title = fields.get("title", "").rstrip(".")
    parts: list[str] = []
    if authors:
        parts.append(authors if authors.endswith(".") else authors + ".")
    if year:
        parts.append(f"({year}).")
    if title:
        parts.append(title + ".")
    container = fields.get("journaltitle") or fields.get("journal")
    if container:
        tail = container
        if fields.get("volume"):
            tail += f", {fields['volume']}"
            if fields.get("number"):
                tail += f"({fields['number']})"
        if fields.get("pages"):
            tail += f", {fields['pages']}"
        parts.append(tail + ".")
    elif fields.get("booktitle"):
        editors = _join_names(names.get("editor") or []) if names.get("author") else ""
        tail = "In " + (f"{editors} (Eds.), " if editors else "") + fields["booktitle"]
        if fields.get("pages"):
            tail += f" (pp. {fields['pages']})"
        parts.append(tail + ".")
    publisher = fields.get("publisher") or fields.get("institution") or fields.get("school")
    if publisher and kind not in {"article"}:
        parts.append(publisher + ".")
    if fields.get("doi"):
        parts.append("https://doi.org/" + fields["doi"].removeprefix("https://doi.org/"))
    elif fields.get("url"):
        parts.append(fields["url"])
    return " ".join(parts).strip()


# ---------------------------------------------------------------------------------------------
# BibTeX

_BIB_KEY = re.compile(r"^@\s*(?P<type>\w{1,40})\s*\{\s*(?P<key>[^,\s{}]{1,300})\s*,")


def bib_entries(text: str, name: str) -> list[ExtractedReference]:
    """A BibTeX file's entries, each its BibTeX text with its key and line."""
    # Deferred: bibtexparser is an optional extra, imported only when a .bib is read.
    from citeverify_core.references.parse.bibtex import bibtex_entries  # noqa: PLC0415 - extra

    try:
        found = bibtex_entries(text)
    except Exception as exc:  # bibtexparser's own errors on malformed input
        msg = f"{name}: not a readable BibTeX file ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from exc
    starts = line_starts(text)
    entries: list[ExtractedReference] = []
    position = 0
    for entry in found:
        m = _BIB_KEY.match(entry)
        key = m.group("key") if m else None
        line = 1
        if m:
            at = re.compile(
                r"@\s*" + re.escape(m.group("type")) + r"\s*\{\s*" + re.escape(key or ""), re.I
            ).search(text, position)
            if at:
                line = line_of(starts, at.start())
                position = at.end()
        entries.append(
            ExtractedReference(
                text=nfc(" ".join(entry.split())),
                number=len(entries) + 1,
                location=Location(line=line),
                key=key,
            )
        )
    return entries
