"""BibTeX entries, and a pasted reference list split into references."""

from __future__ import annotations

import re

from citeverify_core.errors import InputError
from citeverify_core.references.model import Author
from citeverify_core.references.parse.authors import _one_name
from citeverify_core.references.parse.clues import (
    _NON_BIBLIOGRAPHIC,
    MAX_BIBTEX_CHARS,
    MAX_REFERENCE_CHARS,
    ParsedCitation,
    junk_line,
)
from citeverify_core.references.parse.layout import _clean_title

__all__ = ["bibtex_entries", "parse_bibtex", "split_reference_list"]

# --- BibTeX -----------------------------------------------------------------------------------


def bibtex_entries(text: str, *, bibliographic_only: bool = False) -> list[str]:
    """The entries of a .bib file, each as a standalone BibTeX string.

    Read by bibtexparser: ``@string`` macros are expanded, ``@comment`` and ``@preamble`` are
    not entries, and an "@" inside a field (an e-mail address) is just text. With
    ``bibliographic_only``, fields that do not describe the work (abstract, note, file, ...) are
    left out.
    """
    import bibtexparser  # noqa: PLC0415 - only BibTeX input needs it
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry  # noqa: PLC0415 - start-up time

    library = bibtexparser.parse_string(text)  # type: ignore[attr-defined]
    out = []
    for block in library.blocks:
        if isinstance(block, Entry):
            entry, values = block, [(f.key, str(f.value)) for f in block.fields]
        elif isinstance(block, DuplicateBlockKeyBlock) and isinstance(
            block.ignore_error_block, Entry
        ):
            # A second entry with a key already used is still a reference of the list; the
            # parser left its values raw (braces or quotes around them, macros unexpanded).
            entry = block.ignore_error_block
            values = [(f.key, _unbraced(str(f.value))) for f in entry.fields]
        else:
            continue
        if bibliographic_only:
            values = [(k, v) for k, v in values if k.lower() not in _NON_BIBLIOGRAPHIC]
        fields = ",\n".join(f"  {key} = {{{value}}}" for key, value in values)
        out.append(f"@{entry.entry_type}{{{entry.key},\n{fields}\n}}")
    return out


def _unbraced(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and (value[0], value[-1]) in {("{", "}"), ('"', '"')}:
        return value[1:-1]
    return value


def split_reference_list(
    text: str, *, bibtex: bool = False, bibliographic_only: bool = False
) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """The references of a list with their numbers, and the lines skipped (number, reason, text).

    BibTeX (``bibtex=True``) is read by bibtexparser (``@string``, ``@comment``, ``@preamble`` and
    an "@" inside a field are not entries); other text has one reference a line, and headings,
    rules and page footers are skipped with the reason. ``bibliographic_only`` drops
    the fields that do not describe the work (abstract, keywords, file, note, ...).
    """
    if bibtex:
        entries = bibtex_entries(text, bibliographic_only=bibliographic_only)
        return list(enumerate(entries, 1)), []
    references: list[tuple[int, str]] = []
    skipped: list[tuple[int, str, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if (reason := junk_line(line)) is not None:
            skipped.append((number, reason, line))
        else:
            references.append((number, line))
    return references, skipped


def parse_bibtex(text: str) -> ParsedCitation:
    """Parse one BibTeX entry (with bibtexparser).

    Raises:
        InputError: the text holds no BibTeX entry, or its bibliographic fields are longer than
            1,200 characters.
    """
    if len(text) > MAX_BIBTEX_CHARS:
        msg = f"a BibTeX entry is at most {MAX_BIBTEX_CHARS:,} characters, got {len(text):,}"
        raise InputError(msg, path="reference")
    import bibtexparser  # noqa: PLC0415 - only BibTeX input needs it

    library = bibtexparser.parse_string(text)  # type: ignore[attr-defined]
    if not library.entries:
        msg = "no BibTeX entry could be read from the reference"
        raise InputError(msg, path="reference")
    entry = library.entries[0]
    fields = {f.key.lower(): str(f.value) for f in entry.fields}
    size = sum(len(k) + len(v) for k, v in fields.items() if k not in _NON_BIBLIOGRAPHIC)
    if size > MAX_REFERENCE_CHARS:
        msg = (
            f"a reference is at most {MAX_REFERENCE_CHARS:,} characters, got {size:,} "
            "(bibliographic fields of the BibTeX entry)"
        )
        raise InputError(msg, path="reference")

    def clean(value: str | None) -> str | None:
        if not value:
            return None
        return " ".join(re.sub(r"[{}]", "", value).split()) or None

    authors: list[Author] = []
    for name in _bibtex_names(fields.get("author") or ""):
        if name.startswith("{") and name.endswith("}"):
            # "{World Health Organization}": braces keep a corporate name whole.
            corporate = clean(name)
            if corporate:
                authors.append(Author(corporate))
            continue
        plain = clean(name) or ""
        if not plain or plain.lower() == "others":
            continue
        if "," in plain:
            family, _, given = plain.partition(",")
            # "von Last, Jr, First": the given names are after the last comma.
            given = given.rpartition(",")[2] if given.count(",") else given
            if family.strip():
                authors.append(Author(family.strip(), given.strip()))
            continue
        one = _one_name(plain.split())
        if one is not None:
            authors.append(one)
    year_match = re.search(r"(?:1[5-9]|20)\d{2}", fields.get("year", "") or fields.get("date", ""))
    doi = clean(fields.get("doi"))
    return ParsedCitation(
        raw=text,
        title=_clean_title(clean(fields.get("title"))),
        authors=tuple(authors),
        et_al="others" in (fields.get("author") or "").split(),
        year=int(year_match.group()) if year_match else None,
        venue=clean(fields.get("journal") or fields.get("booktitle") or fields.get("publisher")),
        doi=doi.lower() if doi else None,
        url=clean(fields.get("url")),
        style="bibtex",
        volume=clean(fields.get("volume")),
        issue=clean(fields.get("number") or fields.get("issue")),
        pages=(clean(fields.get("pages")) or "").replace("--", "-") or None,
    )


def _bibtex_names(value: str) -> list[str]:
    """Split a BibTeX author field on " and " outside braces."""
    names: list[str] = []
    depth = start = 0
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif depth == 0 and value.startswith(" and ", i):
            names.append(value[start:i].strip())
            start = i + 5
            i += 5
            continue
        i += 1
    names.append(value[start:].strip())
    return [n for n in names if n]
