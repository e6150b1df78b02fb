r"""A LaTeX document (``.tex``, Sweave/knitr ``.Rnw``) as lines, its list and its title.

* The body's lines as text (``latex_text``), with every citation command kept as written
  (``\cite{a,b}``, ``\citep[p.~5]{a}``, ``\parencite{a}``...) for the consistency check;
  ``\section{...}`` and ``\appendix`` lines are headings; the title from ``\title{}``.
* The document's macros (``\newcommand``, ``\def``, ``\let``...) are read first, over the whole
  source, and expanded wherever they are used: body, title, ``\bibitem`` entries and the
  ``.bbl`` beside the file (``latex_macros``).
* ``\input{x}``/``\include{x}`` splice the sibling file in (when the caller's sibling reader
  gives it: the CLI's gives ``.bbl`` and ``.bib`` files), its lines located at the command's.
* Sweave/knitr code chunks (``<<...>>=`` to ``@``) and verbatim environments (``verbatim``,
  ``Sinput``, ``Soutput``, ``lstlisting``...) are code, not text: left out of the lines.
* The bibliography is the ``thebibliography`` environment's ``\bibitem`` entries (key and
  label kept); without one, the ``.bbl`` with the same stem next to the file (bibtex's
  ``\bibitem`` or biblatex's ``\entry``), else the entries of the ``.bib`` files that
  ``\bibliography{}``/``\addbibresource{}`` name, narrowed to the keys the text cites (all of
  them with ``\nocite{*}``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from citeverify_core.references.document.latex_bib import (
    THEBIB_BEGIN,
    THEBIB_END,
    bbl_entries,
    bib_entries,
    bibitems,
)
from citeverify_core.references.document.latex_macros import MacroTable
from citeverify_core.references.document.latex_scan import group_end, strip_comment
from citeverify_core.references.document.latex_text import (
    CITE_COMMAND,
    NOT_CITING,
    latex_to_text,
    new_macro_table,
)
from citeverify_core.references.document.markup_common import decode, line_of, line_starts, nfc
from citeverify_core.references.document.model import (
    DocumentLine,
    DocumentText,
    ExtractedReference,
    Location,
)

__all__ = ["SiblingReader", "read_tex"]

#: Reads a file next to the document by its relative name (None: there is none).
SiblingReader = Callable[[str], bytes | None]

_SECTION = re.compile(
    r"^\s*\\(?:part|chapter|section|subsection|subsubsection|paragraph)\*?\s*(?:\[[^\]]{0,300}\])?\s*\{"
)
_APPENDIX = re.compile(r"^\s*\\(?:appendix\b|begin\{appendices\})")
_BIB_FILES = re.compile(
    r"\\(?:bibliography|addbibresource|addglobalbib)\s*(?:\[[^\]]{0,200}\])?\s*\{([^{}]{1,500})\}"
)
_INPUT = re.compile(r"\\(?:input|include|subfile|SweaveInput)\s*\{([^{}\\]{1,300})\}")
_CHUNK_START = re.compile(r"^\s*<<[^<>]{0,2000}>>=\s*$")
_CHUNK_END = re.compile(r"^\s*@(?:\s|$)")
_VERBATIM = re.compile(
    r"\\begin\s*\{(verbatim|Verbatim|BVerbatim|LVerbatim|lstlisting|minted|Sinput|Soutput|Scode"
    r"|Schunk|Rcode|Routput|Rinput|comment|alltt|CodeInput|CodeOutput|CodeChunk|knitrout)\*?\}"
)
#: How deep ``\input`` files may nest, and how many a document may read in all.
_MAX_INPUT_DEPTH = 4
_MAX_INPUTS = 100
_MAX_INPUT_CHARS = 20_000_000


def read_tex(text: str, name: str, sibling: SiblingReader | None) -> DocumentText:
    """A LaTeX document's lines, title and entries (see the module's docstring)."""
    numbered = _source_lines(text, name, sibling)
    if "ShortVerb" in text:
        numbered = _short_verb(numbered, text)
    if "\\catcode" in text:
        numbered = _without_verbatim_macros(numbered, text)
    numbers = [number for number, _ in numbered]
    clean = "\n".join(line for _, line in numbered)
    starts = line_starts(clean)
    macros = new_macro_table()
    macros.read(clean)
    title = _tex_title(clean, macros)
    begin = clean.find("\\begin{document}")
    first = 0 if begin < 0 else line_of(starts, begin)
    bib_begin = list(THEBIB_BEGIN.finditer(clean))
    notes: list[str] = []
    entries: list[ExtractedReference] | None = None
    skip: tuple[int, int] | None = None
    if bib_begin:
        b = bib_begin[-1]
        e = THEBIB_END.search(clean, b.end())
        stop = e.start() if e else len(clean)
        entries = _renumbered(bibitems(clean, b.end(), stop, starts, macros), numbers)
        skip = (line_of(starts, b.start()) - 1, line_of(starts, e.end() if e else len(clean)) - 1)
    lines = _title_citations(clean, begin, starts, numbers) + _tex_body(
        numbered, first, skip, macros
    )
    if entries is None and sibling is not None:
        entries, found_in = _tex_sibling_entries(clean, name, sibling, macros)
        if found_in:
            notes.append(f"the reference list is read from {found_in}")
    if entries is None and _BIB_FILES.search(clean) and sibling is None:
        notes.append(
            "the bibliography is in a .bib or .bbl file beside the .tex; give the .bbl (or the "
            ".tex as a path with its .bbl or .bib next to it)"
        )
    if macros.exhausted:
        notes.append("the document's macros are expanded up to the reader's limit")
    return DocumentText(format="tex", lines=lines, title=title, entries=entries, notes=notes)


def _source_lines(text: str, name: str, sibling: SiblingReader | None) -> list[tuple[int, str]]:
    """The file's lines without comments, with their numbers; inputs spliced, code blanked."""
    numbered = [(n, strip_comment(line)) for n, line in enumerate(text.splitlines(), 1)]
    if sibling is not None and "\\" in text:
        budget = [_MAX_INPUTS, _MAX_INPUT_CHARS]
        numbered = _spliced(numbered, sibling, {PurePosixPath(name).name}, 1, budget)
    return _without_code(numbered)


def _spliced(
    numbered: list[tuple[int, str]],
    sibling: SiblingReader,
    chain: set[str],
    depth: int,
    budget: list[int],
) -> list[tuple[int, str]]:
    r"""``\input{x}`` lines replaced by the lines of ``x`` (bounded in depth, count and size)."""
    out: list[tuple[int, str]] = []
    for number, line in numbered:
        # Every \input of the line in turn ("\input{a}\input{b}"), left to right; searched
        # from a position (not by slicing) so a line of many costs one pass.
        kept = 0  # the line's text from here on is not yet in ``out``
        pos = 0 if "\\" in line else len(line)
        while depth <= _MAX_INPUT_DEPTH and budget[0] > 0 and pos < len(line):
            m = _INPUT.search(line, pos)
            if m is None:
                break
            pos = m.end()
            relative = m.group(1).strip()
            data = None
            if relative and ".." not in relative and not relative.startswith(("/", "~")):
                candidates = [relative] if PurePosixPath(relative).suffix else [f"{relative}.tex"]
                for candidate in candidates:
                    if candidate in chain:
                        continue  # a file that inputs itself (or its parent): read once
                    data = sibling(candidate)
                    if data is not None:
                        relative = candidate
                        break
            if data is None or len(data) > budget[1]:
                continue  # kept as written
            budget[0] -= 1
            budget[1] -= len(data)
            inner = [(number, strip_comment(x)) for x in decode(data, relative).splitlines()]
            out.append((number, line[kept : m.start()]))
            out.extend(_spliced(inner, sibling, chain | {relative}, depth + 1, budget))
            kept = m.end()
        out.append((number, line[kept:]))
    return out


_SHORT_VERB = re.compile(r"\\(?:MakeShortVerb|DefineShortVerb)\s*\*?\s*\{\\(.)\}")


def _short_verb(numbered: list[tuple[int, str]], text: str) -> list[tuple[int, str]]:
    r"""``|x|`` as ``\verb|x|`` where ``\MakeShortVerb{\|}`` made ``|`` a verbatim delimiter."""
    chars = {m.group(1) for m in _SHORT_VERB.finditer(text)} - set("\\{}%")
    if not chars or len(chars) > 4:
        return numbered
    pattern = re.compile(
        "|".join(
            f"(?<!\\\\){re.escape(c)}[^{re.escape(c)}\\n]{{1,200}}{re.escape(c)}" for c in chars
        )
    )
    return [
        (n, pattern.sub(lambda m: "\\verb" + m.group(0), line) if "ShortVerb" not in line else line)
        for n, line in numbered
    ]


_DEFINITION = re.compile(
    r"\\(?:[gex]?def\s*\\([A-Za-z@]{1,60})[^{]{0,40}"
    r"|(?:re)?newcommand\*?\s*\{?\\([A-Za-z@]{1,60})\}?(?:\s*\[[^\]]{0,20}\]){0,2}\s*)(?=\{)"
)
_CATCODES = re.compile(r"\\(?:catcode|dospecials|obeyspaces|obeylines|@makeother|verbatim@)")
_MAX_DEFINITIONS = 5000


_CONTROL_WORD = re.compile(r"\\([A-Za-z@]{1,60})")


def _verbatim_macros(text: str) -> frozenset[str]:
    r"""The document's macros that change catcodes: what follows them is code, read verbatim.

    A macro whose definition (or that of a macro it calls, a few levels deep) sets
    ``\catcode`` or ``\dospecials`` ("\MYlongcmd" → "\ZAXlong" → "\ZAXstartLong" in
    mciteplus's manual, whose examples "\cite{Glashow,*Salam}|end" cite nothing). Linear in
    the definitions read (at most 5,000 of 5,000 characters): each body's control words are
    read once, and the calls are followed as sets.
    """
    calls: dict[str, set[str]] = {}
    found: set[str] = set()
    for m in _DEFINITION.finditer(text):
        if len(calls) >= _MAX_DEFINITIONS:
            break
        name = m.group(1) or m.group(2)
        body = text[m.end() : group_end(text, m.end(), 5000)]
        calls[name] = set(_CONTROL_WORD.findall(body))
        if _CATCODES.search(body):
            found.add(name)
    for _ in range(6 if found else 0):
        more = {name for name, words in calls.items() if name not in found and words & found}
        if not more:
            break
        found |= more
    return frozenset(found)


def _without_verbatim_macros(numbered: list[tuple[int, str]], text: str) -> list[tuple[int, str]]:
    r"""The body's text read verbatim by a catcode-changing macro blanked (numbers kept).

    A macro alone at a line's end starts a block that runs to the paragraph's end or an
    ``\end{...}``; one inside a line takes that line's rest.
    """
    names = _verbatim_macros(text)
    begin = next((k for k, (_, line) in enumerate(numbered) if "\\begin{document}" in line), None)
    if not names or begin is None:
        return numbered
    out = numbered[: begin + 1]
    block = False
    for number, line in numbered[begin + 1 :]:
        if block:
            if not line.strip() or "\\end{" in line:
                block = False
                out.append((number, line[line.find("\\end{") :] if line.strip() else line))
            else:
                out.append((number, ""))
            continue
        m = next((w for w in _CONTROL_WORD.finditer(line) if w.group(1) in names), None)
        if m is None:
            out.append((number, line))
            continue
        block = not line[m.end() :].strip()
        out.append((number, line[: m.start()]))
    return out


def _without_code(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Sweave/knitr chunks and verbatim environments blanked (their numbers kept)."""
    out: list[tuple[int, str]] = []
    chunk = False
    verbatim: str | None = None
    for number, line in numbered:
        if verbatim is not None:
            if f"\\end{{{verbatim}" in line:
                verbatim = None
            out.append((number, ""))
            continue
        if chunk:
            chunk = not _CHUNK_END.match(line)
            out.append((number, ""))
            continue
        if line.startswith("<<") and _CHUNK_START.match(line):
            chunk = True
            out.append((number, ""))
            continue
        v = _VERBATIM.search(line) if "\\begin" in line else None
        if v is not None and f"\\end{{{v.group(1)}" not in line[v.end() :]:
            verbatim = v.group(1)
            out.append((number, line[: v.start()]))
            continue
        out.append((number, line))
    return out


def _renumbered(entries: list[ExtractedReference], numbers: list[int]) -> list[ExtractedReference]:
    """Entries located at their file lines (the joined text's lines may come from inputs)."""

    def at(location: Location | None) -> Location | None:
        if location is None:
            return None
        return Location(line=numbers[min(location.line, len(numbers)) - 1])

    out = []
    for e in entries:
        first = at(e.location)
        end = at(e.end)
        assert first is not None
        out.append(
            ExtractedReference(
                e.text,
                e.number,
                first,
                e.label,
                e.key,
                end if end is not None and end.line > first.line else None,
            )
        )
    return out


def _tex_title(clean: str, macros: MacroTable) -> str | None:
    m = re.search(r"\\title\s*(?:\[[^\]]{0,300}\])?\s*\{", clean)
    if not m:
        return None
    end = group_end(clean, m.end() - 1, 2000)
    title = " ".join(latex_to_text(clean[m.end() : end - 1], macros=macros).split())
    return nfc(title) or None


_TITLE_BLOCK = re.compile(r"\\(?:title|author|date|thanks)\s*(?:\[[^\]]{0,300}\]\s*)?(?=\{)")


def _title_citations(
    clean: str, begin: int, starts: list[int], numbers: list[int]
) -> list[DocumentLine]:
    r"""Citations in a title block set in the preamble (``\author{...\thanks{... \cite{x}}}``).

    The block is typeset with ``\maketitle`` in the body, so what it cites is cited; only the
    citation commands are kept (its text is no body text).
    """
    out: list[DocumentLine] = []
    end = 0
    for m in _TITLE_BLOCK.finditer(clean, 0, max(begin, 0)):
        if m.start() < end:
            continue  # a "\thanks" inside the "\author" read already
        end = group_end(clean, m.end(), 20_000)
        for c in CITE_COMMAND.finditer(clean, m.end(), end):
            if c.group("name") in NOT_CITING:
                continue
            number = numbers[min(line_of(starts, c.start()), len(numbers)) - 1]
            text = " ".join(latex_to_text(c.group(0), keep_citations=True).split())
            out.append(
                DocumentLine(text=text, location=Location(line=number), starts_paragraph=True)
            )
    return out


def _tex_body(
    numbered: list[tuple[int, str]],
    first: int,
    skip: tuple[int, int] | None,
    macros: MacroTable,
) -> list[DocumentLine]:
    """The body's lines from index ``first``, without the list's (``skip``, indexes)."""
    out: list[DocumentLine] = []
    blank = True
    for index in range(first, len(numbered)):
        if skip and skip[0] <= index <= skip[1]:
            continue
        number, raw = numbered[index]
        if "\\end{document}" in raw:
            break
        if not raw.strip():
            blank = True
            continue
        if _APPENDIX.match(raw):
            out.append(DocumentLine("Appendix", Location(line=number), heading=True))
            blank = True
            continue
        heading = bool(_SECTION.match(raw))
        converted = " ".join(latex_to_text(raw, keep_citations=True, macros=macros).split())
        if not converted:
            continue
        out.append(
            DocumentLine(
                text=nfc(converted),
                location=Location(line=number),
                heading=heading,
                starts_paragraph=blank or heading,
            )
        )
        blank = heading
    return out


def _tex_sibling_entries(
    clean: str, name: str, sibling: SiblingReader, macros: MacroTable
) -> tuple[list[ExtractedReference] | None, str | None]:
    """The list from the ``.bbl`` beside the ``.tex``, else from the ``.bib`` files it names."""
    stem = PurePosixPath(name).stem
    data = sibling(f"{stem}.bbl")
    if data is not None:
        bbl = decode(data, f"{stem}.bbl")
        entries = bbl_entries(bbl, macros)
        if entries:
            return entries, f"{stem}.bbl"
    files = [f.strip() for m in _BIB_FILES.finditer(clean) for f in m.group(1).split(",")]
    collected: list[ExtractedReference] = []
    read: list[str] = []
    for file in files:
        if not file:
            continue
        bib_name = file if file.endswith(".bib") else f"{file}.bib"
        data = sibling(bib_name)
        if data is None:
            continue
        read.append(bib_name)
        collected.extend(bib_entries(decode(data, bib_name), bib_name))
    if not read:
        return None, None
    cited = {
        key.strip() for m in CITE_COMMAND.finditer(clean) for key in m.group("keys").split(",")
    }
    cited |= {
        key.strip()
        for m in re.finditer(r"\\nocite\s*\{([^{}]{0,2000})\}", clean)
        for key in m.group(1).split(",")
    }
    if "*" not in cited:
        collected = [e for e in collected if e.key in cited]
    entries = [
        ExtractedReference(e.text, n, e.location, e.label, e.key, e.end)
        for n, e in enumerate(collected, 1)
    ]
    return entries, ", ".join(read) + (" (the entries the text cites)" if "*" not in cited else "")
