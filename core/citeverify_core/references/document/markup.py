r"""Text formats: LaTeX (.tex, .bbl), Markdown, HTML, plain text and BibTeX, as document lines.

* ``.tex``: the body's lines as text, LaTeX converted (accents, dashes, quotes, ``~``; commands
  dropped, their text kept), with every citation command kept as written (``\cite{a,b}``,
  ``\citep[p.~5]{a}``, ``\parencite{a}``...) for the consistency check; ``\section{...}`` and
  ``\appendix`` lines are headings; the title from ``\title{}``. The bibliography is the
  ``thebibliography`` environment's ``\bibitem`` entries (key and label kept); without one, the
  ``.bbl`` with the same stem next to the file (bibtex's ``\bibitem`` or biblatex's ``\entry``),
  else the entries of the ``.bib`` files that ``\bibliography{}``/``\addbibresource{}`` name,
  narrowed to the keys the text cites (all of them with ``\nocite{*}``).
* ``.bbl``: the same, on its own.
* ``.bib``: every entry, its text the BibTeX entry (the verifier reads BibTeX), its key kept.
* ``.md``: ``#`` headings, list items start a paragraph (an ordered item's number its label).
* ``.html``/``.htm``: the standard library's parser; ``<h1>``-``<h6>`` headings, ``<li>``
  items (their ``<ol>`` number the label), ``<p>`` paragraphs, ``<title>``; scripts and styles
  dropped, entities decoded, nothing fetched.
* ``.txt``: lines; a line after a blank one starts a paragraph.

The LaTeX conversion is a linear scan written here, not pylatexenc's ``LatexNodes2Text``:
pylatexenc read 27 KB a second on the project's machine (96 s for a 3.4 MB body) and raised
on some input (``\href`` with a brace inside), where a document must be read in bounded time.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from html.parser import HTMLParser
from itertools import islice
from pathlib import PurePosixPath

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.model import (
    DocumentFormat,
    DocumentLine,
    DocumentText,
    ExtractedReference,
    Location,
)

__all__ = ["MAX_DOCUMENT_LINES", "SiblingReader", "latex_to_text", "read_markup"]

#: Reads a file next to the document by its relative name (None: there is none).
SiblingReader = Callable[[str], bytes | None]

_CONTROL = re.compile(r"[\x01-\x08\x0b\x0e-\x1f\x7f]")


#: The most lines a text document may have. The longest real papers (a 300-page thesis with its
#: appendices) have tens of thousands; this is ten times more.
MAX_DOCUMENT_LINES = 500_000


def read_markup(
    data: bytes, fmt: DocumentFormat, *, name: str, sibling: SiblingReader | None = None
) -> DocumentText:
    """A text document's lines (and the entries its format delimits), numbered from 1.

    Args:
        data: The file's bytes.
        fmt: Its format (not ``pdf`` or ``docx``).
        name: Its name, for messages.
        sibling: Reads a file next to it (a ``.tex``'s ``.bbl`` and ``.bib``); None when the
            document came as bytes alone.

    Raises:
        DocumentError: ``corrupt`` (NUL bytes, bytes no text encoding reads, a binary file),
            ``too-large`` (over :data:`MAX_DOCUMENT_LINES` lines).
    """
    line_count = max(data.count(b"\n"), data.count(b"\r"))  # a file may end its lines with CR alone
    if line_count > MAX_DOCUMENT_LINES:
        # Counted in the bytes, before any line object is made: a 20 MB file of "a\n" would
        # otherwise build ten million of them (gigabytes) before it is known to hold no list.
        most = MAX_DOCUMENT_LINES
        msg = f"{name}: {line_count:,} lines is over the {most:,} lines a document may have"
        raise DocumentError(msg, code="too-large")
    text = _decode(data, name)
    if fmt == "tex":
        return _read_tex(text, name, sibling)
    if fmt == "bbl":
        entries = _bbl_entries(text)
        return DocumentText(format="bbl", lines=[], entries=entries, notes=_no_entries(entries))
    if fmt == "bib":
        entries = _bib_entries(text, name)
        return DocumentText(format="bib", lines=[], entries=entries, notes=_no_entries(entries))
    if fmt == "md":
        return _read_markdown(text)
    if fmt == "html":
        return _read_html(text)
    lines = _plain_lines(text)
    return DocumentText(format=fmt, lines=lines)


def _no_entries(entries: list[ExtractedReference]) -> list[str]:
    return [] if entries else ["the file holds no bibliography entries"]


def _decode(data: bytes, name: str) -> str:
    if b"\x00" in data:
        msg = f"{name}: not a text file (it holds NUL bytes)"
        raise DocumentError(msg, code="corrupt")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            # Older LaTeX and BibTeX files are often in Windows-1252 (or Latin-1, its subset).
            text = data.decode("cp1252")
        except UnicodeDecodeError as exc:
            msg = f"{name}: not a text file (its bytes are in no text encoding read: UTF-8, cp1252)"
            raise DocumentError(msg, code="corrupt") from exc
    controls = len(_CONTROL.findall(text, 0, 1_000_000))
    if controls > max(8, min(len(text), 1_000_000) // 200):
        msg = f"{name}: not a text file ({controls} control characters)"
        raise DocumentError(msg, code="corrupt")
    return text


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text) if not text.isascii() else text


def _plain_lines(text: str) -> list[DocumentLine]:
    lines: list[DocumentLine] = []
    blank = True
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            blank = True
            continue
        lines.append(
            DocumentLine(text=_nfc(line), location=Location(line=number), starts_paragraph=blank)
        )
        blank = False
    return lines


# ---------------------------------------------------------------------------------------------
# LaTeX to text

_ACCENTS = {
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331", "t": "\u0361",
}  # fmt: skip
_SYMBOLS = {
    "ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å",
    "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "dh": "ð", "DH": "Ð", "th": "þ",
    "TH": "Þ", "ng": "ŋ", "NG": "Ŋ", "dj": "đ", "DJ": "Đ", "&": "&", "%": "%", "$": "$",
    "#": "#", "_": "_", "{": "{", "}": "}", " ": " ", ",": " ", ";": " ", ":": " ", "!": "",
    "/": "", "-": "", "\\": " ", "@": "", "textendash": "–", "textemdash": "—",
    "textquoteleft": "‘", "textquoteright": "’", "textquotedblleft": "“",
    "textquotedblright": "”", "textbackslash": "\\", "textasciitilde": "~", "textregistered": "®",
    "texttrademark": "™", "textcopyright": "©", "S": "§", "P": "¶", "dag": "†", "ddag": "‡",
    "ldots": "…", "dots": "…", "textellipsis": "…", "textbullet": "•", "textdegree": "°",
    "euro": "€", "pounds": "£", "copyright": "©", "newblock": " ", "newline": " ",
    "linebreak": " ", "par": " ", "quad": " ", "qquad": " ", "enspace": " ", "bibrangedash": "–",
    "bibdatedash": "–", "bibinitperiod": ".", "bibinitdelim": " ", "bibnamedelima": " ",
    "bibnamedelimb": " ", "bibnamedelimc": " ", "bibnamedelimd": " ", "bibnamedelimi": " ",
    "bibinithyphendelim": "-", "bibdaterangesep": "–", "urlprefix": "URL ", "doiprefix": "doi:",
    "LaTeX": "LaTeX", "TeX": "TeX", "BibTeX": "BibTeX", "ensuremath": "", "textunderscore": "_",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "lambda": "λ",
    "mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "phi": "φ", "chi": "χ", "omega": "ω",
}  # fmt: skip
# Commands whose arguments are not text: dropped with them (name -> how many {} arguments).
_DROP = {
    "label": 1, "ref": 1, "eqref": 1, "cref": 1, "Cref": 1, "autoref": 1, "pageref": 1,
    "vspace": 1, "hspace": 1, "includegraphics": 1, "bibliographystyle": 1, "bibliography": 1,
    "addbibresource": 1, "usepackage": 1, "documentclass": 1, "RequirePackage": 1,
    "setlength": 2, "setcounter": 2, "addtolength": 2, "newcommand": 2, "renewcommand": 2,
    "providecommand": 2, "DeclareMathOperator": 2, "newenvironment": 3, "renewenvironment": 3,
    "thispagestyle": 1, "pagestyle": 1, "nocite": 1, "index": 1, "input": 1, "include": 1,
    "bibinfo": 1, "BibitemShut": 1, "bibfield": 1, "verb": 0, "begin": 1, "end": 1,
    "BibitemOpen": 0, "providecommand*": 2, "newcommand*": 2, "renewcommand*": 2,
    "bibitem": 1, "keywords": 1, "ORCID": 1, "orcid": 1, "thanks": 1, "affiliation": 1,
    "email": 1, "address": 1, "institute": 1, "doibase": 0, "Eprint": 1, "selectlanguage": 1,
    "foreignlanguage": 1, "hyphenation": 1, "color": 1, "textcolor": 1, "fontsize": 2,
}  # fmt: skip
_QUOTED = {"enquote", "mkbibquote", "textquote"}
_CITE = re.compile(
    r"(?:[Cc]ite[a-z]*|[Pp]arencite|[Tt]extcite|[Aa]utocite|[Ff]ootcite(?:text)?|[Ss]martcite"
    r"|[Ss]upercite|[Ff]ullcite)\*?"
)
_TOKEN = re.compile(r"\\(?:[A-Za-z@]+\*?|.)|[{}~$%]|-{2,3}|``|''|\n", re.S)
_MAX_CITE_CHARS = 600
_BRACE = re.compile(r"\\.|[{}]", re.S)


def _group_end(s: str, i: int, limit: int | None = None) -> int:
    """The index after the ``}`` closing the group opened at ``s[i] == "{"``.

    The end of ``s`` (or ``i + limit``) when the group is not closed.
    """
    depth = 0
    n = len(s) if limit is None else min(len(s), i + limit)
    j = i
    while True:
        m = _BRACE.search(s, j, n)
        if m is None:
            return n
        c = m.group(0)
        j = m.end()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j
        # "\{", "\}", "\\" are skipped whole by the pattern


def _skip_space(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t":
        i += 1
    return i


def _skip_options(s: str, i: int) -> int:
    """After ``[...]`` options (at most two, each at most 300 characters), if any."""
    for _ in range(2):
        j = _skip_space(s, i)
        if j < len(s) and s[j] == "[":
            close = s.find("]", j, j + 300)
            if close < 0:
                return i
            i = close + 1
        else:
            break
    return i


def latex_to_text(source: str, *, keep_citations: bool = False) -> str:
    r"""LaTeX as plain text, in one linear pass.

    Accents and special letters become Unicode (``{\"u}`` -> ü), ``~`` a space, ``--`` an en
    dash; commands are dropped and their braced text kept (``\emph{x}`` -> x); ``\url{}``'s
    argument is kept as written; labels, references, graphics and the like are dropped with
    their arguments. With ``keep_citations``, citation commands stay as written.

    >>> latex_to_text(r"J.~M{\"u}ller, \emph{A Study}, pp. 1--10, \url{https://x.org/a_b}")
    'J. Müller, A Study, pp. 1–10, https://x.org/a_b'
    """
    out: list[str] = []
    s = source
    n = len(s)
    i = 0
    while i < n:
        m = _TOKEN.search(s, i)
        if m is None:
            out.append(s[i:])
            break
        out.append(s[i : m.start()])
        token = m.group(0)
        i = m.end()
        if token in {"{", "}", "$"}:
            continue
        if token == "~":
            out.append(" ")
        elif token == "%":
            newline = s.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif token == "--":
            out.append("–")
        elif token == "---":
            out.append("—")
        elif token == "``":
            out.append("“")
        elif token == "''":
            out.append("”")
        elif token == "\n":
            out.append("\n")
        else:
            i = _command(s, i, token[1:], out, keep_citations=keep_citations, start=m.start())
    return "".join(out)


def _command(s: str, i: int, name: str, out: list[str], *, keep_citations: bool, start: int) -> int:
    r"""Handles the command ``\\name`` ending at ``i``; returns where the scan goes on."""
    n = len(s)
    bare = name.rstrip("*")
    if name in _ACCENTS:
        j = _skip_space(s, i) if name.isalpha() else i
        if j < n and s[j] == "{":
            end = _group_end(s, j, 12)
            inner = s[j + 1 : end - 1].strip()
            i = end
        elif j < n and s[j] == "\\":
            k = j + 1
            while k < n and s[k].isalpha() and k - j < 4:
                k += 1
            inner, i = s[j:k], k
        elif j < n:
            inner, i = s[j], j + 1
        else:
            return n
        letter = {"\\i": "i", "\\j": "j", "\\l": "ł", "\\o": "ø"}.get(inner, inner)
        letter = letter.strip("{}\\")[:1]
        if letter:
            out.append(unicodedata.normalize("NFC", letter + _ACCENTS[name]))
        return i
    if name in _SYMBOLS:
        out.append(_SYMBOLS[name])
        if name.isalpha():
            # As in TeX, a word command ends at the spaces after it ("\ss x", "1\bibrangedash
            # 10"), or at an empty group ("\ss{}").
            if s.startswith("{}", i):
                return i + 2
            return _skip_space(s, i)
        return i
    if keep_citations and _CITE.fullmatch(name) and not name.startswith("nocite"):
        j = _skip_options(s, i)
        j = _skip_space(s, j)
        if j < n and s[j] == "{":
            end = _group_end(s, j, _MAX_CITE_CHARS)
            if end - start <= _MAX_CITE_CHARS and s[end - 1] == "}":
                out.append(" ".join(s[start:end].split()))
                return end
        return j
    if bare in {"url", "path", "nolinkurl"}:
        j = _skip_space(s, i)
        if j < n and s[j] == "{":
            end = _group_end(s, j)
            out.append(s[j + 1 : end - 1].strip())
            return end
        return i
    if bare == "doi":
        j = _skip_space(s, i)
        if j < n and s[j] == "{":
            end = _group_end(s, j)
            out.append("https://doi.org/" + s[j + 1 : end - 1].strip())
            return end
        return i
    if bare == "href":
        j = _skip_space(s, i)
        if j < n and s[j] == "{":
            return _group_end(s, j)  # the URL goes; the text (next group) stays
        return i
    if bare in _QUOTED:
        j = _skip_space(s, i)
        if j < n and s[j] == "{":
            end = _group_end(s, j)
            out.append("“" + latex_to_text(s[j + 1 : end - 1]) + "”")
            return end
        return i
    if name in _DROP or bare in _DROP:
        count = _DROP.get(name, _DROP.get(bare, 0))
        j = _skip_options(s, i)
        for _ in range(count):
            j = _skip_space(s, j)
            if j < n and s[j] == "{":
                j = _group_end(s, j)
            elif j < n and s[j] == "\\" and bare.startswith(("new", "renew", "provide")):
                k = j + 1
                while k < n and s[k].isalpha():
                    k += 1
                j = k
        return _skip_options(s, j) if bare in {"begin", "bibitem"} else j
    # Any other command: dropped; its options too, its braced arguments read as text. The
    # spaces after it go, as in TeX, unless text follows them ("\small text" keeps one).
    j = _skip_options(s, i)
    if j == i and name.isalpha() and i < n and s[i] == " ":
        k = _skip_space(s, i)
        return k - 1 if k < n and s[k] not in "{[" else k
    return j


# ---------------------------------------------------------------------------------------------
# LaTeX documents


def _strip_comment(line: str) -> str:
    r"""The line without its ``%`` comment (an escaped ``\\%`` stays)."""
    start = 0
    while True:
        k = line.find("%", start)
        if k < 0:
            return line
        slashes = 0
        j = k - 1
        while j >= 0 and line[j] == "\\":
            slashes += 1
            j -= 1
        if slashes % 2 == 0:
            return line[:k]
        start = k + 1


_SECTION = re.compile(
    r"^\s*\\(?:part|chapter|section|subsection|subsubsection|paragraph)\*?\s*(?:\[[^\]]{0,300}\])?\s*\{"
)
_APPENDIX = re.compile(r"^\s*\\(?:appendix\b|begin\{appendices\})")
_THEBIB_BEGIN = re.compile(r"\\begin\s*\{thebibliography\}")
_THEBIB_END = re.compile(r"\\end\s*\{thebibliography\}")
_BIBITEM = re.compile(
    r"\\bibitem\s*(?:\[(?P<label>(?:[^\[\]{}]|\{[^{}]{0,200}\}){0,300})\])?\s*\{(?P<key>[^{}]{0,300})\}"
)
_BIB_FILES = re.compile(
    r"\\(?:bibliography|addbibresource|addglobalbib)\s*(?:\[[^\]]{0,200}\])?\s*\{([^{}]{1,500})\}"
)
_CITED_KEYS = re.compile(
    r"\\(?:[Cc]ite[a-z]*|[Pp]arencite|[Tt]extcite|[Aa]utocite|[Ff]ootcite|[Ss]martcite|nocite"
    r"|[Ss]upercite|[Ff]ullcite)\*?\s*(?:\[[^\]]{0,300}\]\s*){0,2}\{([^{}]{0,2000})\}"
)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    return starts


def _line_of(starts: list[int], offset: int) -> int:
    return bisect_right(starts, offset)


def _read_tex(text: str, name: str, sibling: SiblingReader | None) -> DocumentText:
    raw_lines = text.splitlines()
    lines_no_comments = [_strip_comment(line) for line in raw_lines]
    clean = "\n".join(lines_no_comments)
    starts = _line_starts(clean)
    title = _tex_title(clean)
    begin = clean.find("\\begin{document}")
    first_line = 1 if begin < 0 else _line_of(starts, begin) + 1
    bib_begin = list(_THEBIB_BEGIN.finditer(clean))
    notes: list[str] = []
    entries: list[ExtractedReference] | None = None
    skip: tuple[int, int] | None = None
    if bib_begin:
        b = bib_begin[-1]
        e = _THEBIB_END.search(clean, b.end())
        stop = e.start() if e else len(clean)
        entries = _bibitems(clean, b.end(), stop, starts)
        skip = (_line_of(starts, b.start()), _line_of(starts, e.end() if e else len(clean)))
    lines = _tex_body(lines_no_comments, first_line, skip)
    if entries is None and sibling is not None:
        entries, found_in = _tex_sibling_entries(clean, name, sibling)
        if found_in:
            notes.append(f"the reference list is read from {found_in}")
    if entries is None and _BIB_FILES.search(clean) and sibling is None:
        notes.append(
            "the bibliography is in a .bib or .bbl file beside the .tex; give the .bbl (or the "
            ".tex as a path with its .bbl or .bib next to it)"
        )
    return DocumentText(format="tex", lines=lines, title=title, entries=entries, notes=notes)


def _tex_title(clean: str) -> str | None:
    m = re.search(r"\\title\s*(?:\[[^\]]{0,300}\])?\s*\{", clean)
    if not m:
        return None
    end = _group_end(clean, m.end() - 1, 2000)
    title = " ".join(latex_to_text(clean[m.end() : end - 1]).split())
    return _nfc(title) or None


def _tex_body(
    lines: list[str], first_line: int, skip: tuple[int, int] | None
) -> list[DocumentLine]:
    out: list[DocumentLine] = []
    blank = True
    for number in range(first_line, len(lines) + 1):
        if skip and skip[0] <= number <= skip[1]:
            continue
        raw = lines[number - 1]
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
        converted = " ".join(latex_to_text(raw, keep_citations=True).split())
        if not converted:
            continue
        out.append(
            DocumentLine(
                text=_nfc(converted),
                location=Location(line=number),
                heading=heading,
                starts_paragraph=blank or heading,
            )
        )
        blank = heading
    return out


def _bibitems(clean: str, start: int, stop: int, starts: list[int]) -> list[ExtractedReference]:
    entries: list[ExtractedReference] = []
    items = list(_BIBITEM.finditer(clean, start, stop))
    for k, m in enumerate(items):
        end = items[k + 1].start() if k + 1 < len(items) else stop
        body = " ".join(latex_to_text(clean[m.end() : end]).split())
        if not body:
            continue
        number = len(entries) + 1
        label = m.group("label")
        label = " ".join(latex_to_text(label).split()) if label else str(number)
        end_line = _line_of(starts, max(m.end(), end - 1))
        first = _line_of(starts, m.start())
        entries.append(
            ExtractedReference(
                text=_nfc(body),
                number=number,
                location=Location(line=first),
                label=label,
                key=m.group("key").strip() or None,
                end=Location(line=end_line) if end_line > first else None,
            )
        )
    return entries


def _tex_sibling_entries(
    clean: str, name: str, sibling: SiblingReader
) -> tuple[list[ExtractedReference] | None, str | None]:
    """The list from the ``.bbl`` beside the ``.tex``, else from the ``.bib`` files it names."""
    stem = PurePosixPath(name).stem
    data = sibling(f"{stem}.bbl")
    if data is not None:
        bbl = _decode(data, f"{stem}.bbl")
        entries = _bbl_entries(bbl)
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
        collected.extend(_bib_entries(_decode(data, bib_name), bib_name))
    if not read:
        return None, None
    cited = {key.strip() for m in _CITED_KEYS.finditer(clean) for key in m.group(1).split(",")}
    if "*" not in cited:
        collected = [e for e in collected if e.key in cited]
    entries = [
        ExtractedReference(e.text, n, e.location, e.label, e.key, e.end)
        for n, e in enumerate(collected, 1)
    ]
    return entries, ", ".join(read) + (" (the entries the text cites)" if "*" not in cited else "")


# ---------------------------------------------------------------------------------------------
# .bbl: bibtex's \bibitem, biblatex's \entry ... \endentry

_ENTRY = re.compile(r"\\entry\s*\{(?P<key>[^{}]{0,300})\}\s*\{(?P<type>[^{}]{0,40})\}")
_FIELD = re.compile(r"\\field\s*\{(?P<name>[A-Za-z]{1,40})\}\s*\{")
_NAME_LIST = re.compile(
    r"\\name\s*\{(?P<role>[A-Za-z]{1,40})\}\s*\{\d{1,5}\}\s*\{[^{}]{0,300}\}\s*\{"
)
_LIST = re.compile(r"\\list\s*\{(?P<name>[A-Za-z]{1,40})\}\s*\{\d{1,5}\}\s*\{")
_VERB = re.compile(r"\\verb\s*\{(?P<name>[A-Za-z]{1,40})\}\s*\\verb\s(?P<value>[^\n]{0,2000})")
_NAME_PART = re.compile(r"\b(?P<part>family|given|prefix|suffix)=\{")


def _bbl_entries(text: str) -> list[ExtractedReference]:
    starts = _line_starts(text)
    if _ENTRY.search(text) and "\\endentry" in text:
        return _biblatex_entries(text, starts)
    b = _THEBIB_BEGIN.search(text)
    begin = b.end() if b else 0
    e = _THEBIB_END.search(text, begin)
    return _bibitems(text, begin, e.start() if e else len(text), starts)


def _braced(text: str, open_brace: int) -> str:
    end = _group_end(text, open_brace, 5_000)
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
        first = _line_of(starts, m.start())
        last = _line_of(starts, m.end() + len(chunk))
        entries.append(
            ExtractedReference(
                text=_nfc(reference),
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


def _bib_entries(text: str, name: str) -> list[ExtractedReference]:
    from citeverify_core.references.parse.bibtex import bibtex_entries  # noqa: PLC0415 - extra

    try:
        found = bibtex_entries(text)
    except Exception as exc:  # bibtexparser's own errors on malformed input
        msg = f"{name}: not a readable BibTeX file ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from exc
    starts = _line_starts(text)
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
                line = _line_of(starts, at.start())
                position = at.end()
        entries.append(
            ExtractedReference(
                text=_nfc(" ".join(entry.split())),
                number=len(entries) + 1,
                location=Location(line=line),
                key=key,
            )
        )
    return entries


# ---------------------------------------------------------------------------------------------
# Markdown

_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_SETEXT = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")
_MD_ITEM = re.compile(r"^\s{0,8}(?:(?P<bullet>[-*+])|(?P<number>\d{1,9})[.)])\s+")
_MD_LINK = re.compile(r"!?\[([^\[\]]{0,1000})\]\(([^()\s]{0,2000})(?:\s+\"[^\"]{0,300}\")?\)")
_MD_EMPHASIS = re.compile(r"(\*{1,3}|(?<![\w\\])_{1,3})(?=\S)([^*_\n]{1,2000}?)(?<=\S)\1")
_MD_CODE = re.compile(r"`{1,3}([^`\n]{0,2000})`{1,3}")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_MD_AUTOLINK = re.compile(r"<(https?://[^<>\s]{1,2000})>")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]{0,500}>")


def _markdown_inline(text: str) -> str:
    def link(m: re.Match[str]) -> str:
        label, url = m.group(1), m.group(2)
        if not url or url in label or not url.startswith(("http://", "https://")):
            return label
        return f"{label} {url}" if label else url

    # Functions, not templates: a template is expanded per match, ten times slower.
    if "`" in text:
        text = _MD_CODE.sub(lambda m: m.group(1), text)
    if "](" in text:
        text = _MD_LINK.sub(link, text)
    if "<" in text:
        text = _MD_AUTOLINK.sub(lambda m: m.group(1), text)
        text = _HTML_TAG.sub("", text)
    if "*" in text or "_" in text:
        text = _MD_EMPHASIS.sub(lambda m: m.group(2), text)
    if "\\" in text:
        text = _MD_ESCAPE.sub(lambda m: m.group(1), text)
    return " ".join(text.split())


def _read_markdown(text: str) -> DocumentText:
    lines: list[DocumentLine] = []
    title: str | None = None
    blank = True
    fence = False
    raw = text.splitlines()
    for number, source in enumerate(raw, 1):
        line = source
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence = not fence
            blank = True
            continue
        if fence:
            continue
        if not stripped:
            blank = True
            continue
        if (
            _MD_SETEXT.match(line)
            and lines
            and not blank
            and lines[-1].location.line == number - 1
            and (stripped.startswith("=") or not _MD_ITEM.match(line))
        ):
            previous = lines.pop()
            lines.append(
                DocumentLine(previous.text, previous.location, heading=True, starts_paragraph=True)
            )
            if stripped.startswith("=") and title is None:
                title = previous.text
            blank = True
            continue
        if m := _MD_HEADING.match(line):
            heading = _markdown_inline(m.group(2))
            if title is None and len(m.group(1)) == 1 and heading:
                title = heading
            if heading:
                lines.append(
                    DocumentLine(
                        _nfc(heading), Location(line=number), heading=True, starts_paragraph=True
                    )
                )
            blank = True
            continue
        label = None
        item = False
        if m := _MD_ITEM.match(line):
            item = True
            label = m.group("number")
            line = line[m.end() :]
        elif stripped.startswith(">"):
            line = stripped.lstrip("> ")
        content = _markdown_inline(line)
        if not content:
            continue
        lines.append(
            DocumentLine(
                _nfc(content),
                Location(line=number),
                label=label,
                starts_paragraph=blank or item,
            )
        )
        blank = False
    return DocumentText(format="md", lines=lines, title=title)


# ---------------------------------------------------------------------------------------------
# HTML

_BLOCKS = frozenset(
    {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "br", "tr", "td", "th", "table", "section",
     "article", "header", "footer", "main", "nav", "aside", "blockquote", "pre", "hr", "figure",
     "figcaption", "caption", "address", "form", "fieldset", "details", "summary", "body",
     "h1", "h2", "h3", "h4", "h5", "h6", "tbody", "thead", "tfoot"}
)  # fmt: skip
_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "math", "head", "iframe"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_MAX_DEPTH = 500
_MAX_LINE_CHARS = 20_000


class _HtmlLines(HTMLParser):
    """Collects an HTML document's blocks as lines (bounded: nesting is not recursion here)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[DocumentLine] = []
        self.title_parts: list[str] = []
        self.in_title = False
        self.skipping = 0
        self.parts: list[str] = []
        self.size = 0
        self.line_no = 1
        self.heading = False
        self.paragraph = True
        self.label: str | None = None
        self.lists: list[list[int | None]] = []  # per open list: [next number] or [None] (ul)

    def _flush(self) -> None:
        text = " ".join("".join(self.parts).split())
        self.parts, self.size = [], 0
        if text:
            self.lines.append(
                DocumentLine(
                    _nfc(text),
                    Location(line=self.line_no),
                    label=self.label,
                    heading=self.heading,
                    starts_paragraph=self.paragraph,
                )
            )
            self.paragraph = False
            self.label = None
            self.heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED and tag != "head":
            self.skipping += 1
            return
        if tag == "title":
            self.in_title = True
            return
        if tag not in _BLOCKS:
            return
        self._flush()
        if tag == "br":
            return
        self.line_no = self.getpos()[0]
        if tag in {"ol", "ul"}:
            if len(self.lists) < _MAX_DEPTH:
                start = dict(attrs).get("start") if tag == "ol" else None
                first = int(start) if start and start.strip().lstrip("-").isdigit() else 1
                self.lists.append([first if tag == "ol" else None])
            return
        if tag == "li":
            self.paragraph = True
            self.heading = False
            self.label = None
            if self.lists and self.lists[-1][0] is not None:
                value = dict(attrs).get("value")
                number = int(value) if value and value.strip().isdigit() else self.lists[-1][0]
                self.label = str(number)
                self.lists[-1][0] = number + 1
            return
        if tag in _HEADINGS:
            self.heading = True
        # A <p> straight inside an <li> keeps the item's label (no text came since).
        self.paragraph = True

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED and tag != "head":
            self.skipping = max(0, self.skipping - 1)
            return
        if tag == "title":
            self.in_title = False
            return
        if tag in {"ol", "ul"} and self.lists:
            self._flush()
            self.lists.pop()
            return
        if tag in _BLOCKS:
            self._flush()
            self.heading = False
            self.paragraph = True

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if self.in_title:
            if sum(len(p) for p in self.title_parts) < 2000:
                self.title_parts.append(data.replace(_LT, "<"))
            return
        if not self.parts:
            self.line_no = self.getpos()[0]
        if self.size + len(data) > _MAX_LINE_CHARS:
            self.parts.append(data[: max(0, _MAX_LINE_CHARS - self.size)].replace(_LT, "<"))
            self.size = _MAX_LINE_CHARS
            self._flush()
            return
        self.parts.append(data.replace(_LT, "<"))
        self.size += len(data)


_STRAY_LT = re.compile(r"<(?![A-Za-z/!?])")
_LT = "\ue000"  # a stray "<", put back in the text (an entity would cost a decode each)
_TAG_START = re.compile(r"<[A-Za-z/!?]")
_MAX_TAGS = 200_000
_UNCLOSED_TAG = re.compile(r"<(?=[A-Za-z/!?][^<>]*(?:<|$))")


def _without_comments(text: str) -> str:
    """``text`` without its ``<!-- -->`` comments; an unclosed one hides the rest (as in HTML)."""
    out: list[str] = []
    i = 0
    while True:
        start = text.find("<!--", i)
        if start < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        end = text.find("-->", start + 4)
        if end < 0:
            break
        i = end + 3
    return "".join(out)


def _read_html(text: str) -> DocumentText:
    notes: list[str] = []
    # html.parser spends a Python step on every "<": a "<" that opens no tag is made text in
    # one pass, and a document is read up to its 400,000th tag (a paper has far fewer).
    text = _STRAY_LT.sub(_LT, _without_comments(text))
    # A "<" whose tag never closes (another "<" or the end comes first) is text: html.parser
    # would rescan to the end from each one.
    text = _UNCLOSED_TAG.sub(_LT, text)
    for count, m in enumerate(_TAG_START.finditer(text), 1):
        if count > _MAX_TAGS:
            text = text[: m.start()]
            notes.append(f"the HTML is read up to its {_MAX_TAGS:,}th tag")
            break
    parser = _HtmlLines()
    try:
        # Fed in pieces: html.parser keeps unparsed text between feeds, so an unclosed "<"
        # is not rescanned from the start of the document on every feed.
        parser.feed(text)
        parser.close()
    except (AssertionError, ValueError) as exc:  # older html.parser raised on some markup
        msg = f"not readable HTML ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from exc
    parser._flush()
    title = " ".join("".join(parser.title_parts).split()) or None
    if title is None:
        title = next((ln.text for ln in parser.lines if ln.heading), None)
    return DocumentText(format="html", lines=parser.lines, title=title and _nfc(title), notes=notes)
