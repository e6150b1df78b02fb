"""Word (.docx): paragraphs in document order, with Word's automatic numbering (python-docx).

Each paragraph of the body is a :class:`DocumentLine` (``location.line`` is its number, from 1,
in document order; ``page`` is ``None``: Word makes pages when it shows the document). The body
is walked in order, into tables, content controls (``w:sdt``: Mendeley's and others'
bibliographies), fields' results (Zotero's and EndNote's bibliographies) and text boxes;
``document.paragraphs`` alone misses all of those. A table row whose cells hold one paragraph
each is one line ("[3]" in one cell and the reference in the next).

A numbered-list paragraph's text does not hold its number: Word draws it from numbering.xml.
The number is computed as Word shows it ("[3]", "3.") and given as ``label``.

The zip is checked before anything is inflated: a member larger than
:data:`MAX_DOCX_MEMBER_BYTES`, a total over :data:`MAX_DOCX_TOTAL_BYTES` or a compression ratio
no real document has is refused (``too-large``). Reading never inflates more than a member's
declared size (``zipfile`` stops there), so the declared sizes bound the memory.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from citeverify_core.errors import DocumentError, require_extra
from citeverify_core.references.document.model import DocumentLine, DocumentText, Location

__all__ = ["MAX_DOCX_MEMBER_BYTES", "MAX_DOCX_TOTAL_BYTES", "read_docx"]

#: The largest member (uncompressed) of a .docx read; a 300-page thesis's document.xml has 20 MB.
MAX_DOCX_MEMBER_BYTES = 64 * 1024 * 1024
#: The largest total (uncompressed) of a .docx's members.
MAX_DOCX_TOTAL_BYTES = 256 * 1024 * 1024
#: Members read at most.
MAX_DOCX_MEMBERS = 5000
#: A member over 1 MB that inflates more than this many times is a bomb (Word's XML: 5-20x).
MAX_DOCX_RATIO = 200

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_P, _TBL, _TR, _TC, _SDT, _SDT_CONTENT = (
    f"{{{_W}}}{t}" for t in ("p", "tbl", "tr", "tc", "sdt", "sdtContent")
)
_R, _T, _TAB, _BR, _CR = (f"{{{_W}}}{t}" for t in ("r", "t", "tab", "br", "cr"))
_NO_BREAK_HYPHEN, _SOFT_HYPHEN, _SYM = (
    f"{{{_W}}}{t}" for t in ("noBreakHyphen", "softHyphen", "sym")
)
_TXBX, _FALLBACK, _ALTERNATE = (
    f"{{{_W}}}txbxContent",
    f"{{{_MC}}}Fallback",
    f"{{{_MC}}}AlternateContent",
)
_DEL, _MOVE_FROM, _VANISH = f"{{{_W}}}del", f"{{{_W}}}moveFrom", f"{{{_W}}}vanish"
_CUSTOM_XML, _SMART_TAG = f"{{{_W}}}customXml", f"{{{_W}}}smartTag"
_VAL = f"{{{_W}}}val"
# Elements whose text is not shown: deleted (tracked) text, field codes, and the fallback
# copy of a drawing (its text box is read from the drawing itself).
_SKIP = frozenset((_DEL, _MOVE_FROM, _FALLBACK, f"{{{_W}}}instrText", f"{{{_W}}}delText"))


def read_docx(data: bytes, *, name: str) -> DocumentText:
    """The paragraphs of a Word document in order, each a line, numbered lists labelled.

    Raises:
        DocumentError: ``corrupt`` (not a .docx, a broken zip or XML), ``encrypted`` (a
            password-protected document), ``unsupported-format`` (a Word 97-2003 .doc),
            ``too-large`` (a zip bomb, members over the limits).
    """
    require_extra("documents", "reading Word documents")
    _check_container(data, name)
    import docx  # noqa: PLC0415 - an extra

    try:
        document = docx.Document(io.BytesIO(data))
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # python-docx and lxml raise many kinds on a broken package
        msg = f"{name}: not a readable Word document ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from None
    styles = _Styles(document)
    numbering = _Numbering(document)
    lines: list[DocumentLine] = []
    title_style: str | None = None
    for number, (texts, paragraph) in enumerate(_paragraphs(document.element.body), 1):
        style = styles.of(paragraph)
        label = numbering.label(paragraph, styles)
        text = _clean("".join(texts))
        if not text:
            continue
        heading = style.heading
        if style.title and title_style is None:
            title_style = text
        lines.append(
            DocumentLine(
                text=text,
                location=Location(line=number),
                label=label,
                heading=heading,
                starts_paragraph=True,
            )
        )
    title = (document.core_properties.title or "").strip() or title_style
    return DocumentText(format="docx", lines=lines, title=title or None)


def _check_container(data: bytes, name: str) -> None:
    """Refuse what is not a .docx, is encrypted, or would inflate past the limits."""
    if data.startswith(b"\xd0\xcf\x11\xe0"):
        # An OLE compound file: an encrypted Office document (its package is inside, as
        # "EncryptedPackage") or a Word 97-2003 .doc.
        if "EncryptedPackage".encode("utf-16-le") in data:
            msg = f"{name}: encrypted: the document needs a password to be read"
            raise DocumentError(msg, code="encrypted")
        msg = f"{name}: a Word 97-2003 document (.doc): save it as .docx to read it"
        raise DocumentError(msg, code="unsupported-format")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        what = "an empty file" if not data else f"not a .docx (a broken zip: {exc})"
        msg = f"{name}: {what}"
        raise DocumentError(msg, code="corrupt") from None
    if len(members) > MAX_DOCX_MEMBERS:
        msg = f"{name}: {len(members)} parts is over the {MAX_DOCX_MEMBERS} a document may have"
        raise DocumentError(msg, code="too-large")
    total = 0
    for member in members:
        total += member.file_size
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > MAX_DOCX_MEMBER_BYTES or (
            member.file_size > 1024 * 1024 and ratio > MAX_DOCX_RATIO
        ):
            msg = (
                f"{name}: {member.filename} inflates to {member.file_size / 1e6:,.0f} MB "
                f"({ratio:,.0f}x): refused as a zip bomb"
            )
            raise DocumentError(msg, code="too-large")
    if total > MAX_DOCX_TOTAL_BYTES:
        msg = f"{name}: its parts inflate to {total / 1e6:,.0f} MB: refused as a zip bomb"
        raise DocumentError(msg, code="too-large")
    if not any(m.filename == "[Content_Types].xml" for m in members):
        msg = f"{name}: not a Word document (a zip without [Content_Types].xml)"
        raise DocumentError(msg, code="corrupt")


def _paragraphs(body: Any) -> Iterator[tuple[list[str], Any]]:
    """Every paragraph in document order with its visible text pieces.

    Walks tables (a row of one-paragraph cells is one paragraph, its cells' texts joined by a
    space), content controls, custom XML and text boxes.
    """
    for child in body:
        tag = child.tag
        if tag == _P:
            yield _text(child), child
            for box in _text_boxes(child):
                yield from _paragraphs(box)
        elif tag == _TBL:
            for row in child.iter(_TR):
                if row.getparent() is not child:
                    continue
                cells = [c for c in row if c.tag == _TC]
                simple = all(
                    sum(1 for p in c if p.tag == _P) <= 1 and all(e.tag != _TBL for e in c.iter())
                    for c in cells
                )
                if simple:
                    texts: list[str] = []
                    first: Any = None
                    for cell in cells:
                        for paragraph in cell:
                            if paragraph.tag == _P:
                                piece = "".join(_text(paragraph)).strip()
                                if piece:
                                    texts.append((" " if texts else "") + piece)
                                    first = paragraph if first is None else first
                    if first is not None:
                        yield texts, first
                else:
                    for cell in cells:
                        yield from _paragraphs(cell)
        elif tag == _SDT:
            for content in child:
                if content.tag == _SDT_CONTENT:
                    yield from _paragraphs(content)
        elif tag in (_CUSTOM_XML, _ALTERNATE) or tag.endswith("}Choice"):
            yield from _paragraphs(child)


def _text(paragraph: Any) -> list[str]:
    """The visible text of a paragraph, in order (runs in hyperlinks, fields, inline controls)."""
    pieces: list[str] = []
    stack = list(reversed(paragraph))
    while stack:
        element = stack.pop()
        tag = element.tag
        if not isinstance(tag, str) or tag in _SKIP or tag == _TXBX:
            continue
        if tag == _R:
            properties = element.find(f"{{{_W}}}rPr")
            if properties is not None and properties.find(_VANISH) is not None:
                vanish = properties.find(_VANISH)
                if vanish.get(_VAL, "true") not in ("0", "false", "off"):
                    continue
        if tag == _T:
            pieces.append(element.text or "")
        elif tag == _TAB:
            pieces.append("\t")
        elif tag in (_BR, _CR):
            pieces.append(" ")
        elif tag == _NO_BREAK_HYPHEN:
            pieces.append("-")
        elif tag == _SOFT_HYPHEN:
            continue
        elif tag == _SYM:
            char = element.get(f"{{{_W}}}char", "")
            if re.fullmatch(r"[0-9A-Fa-f]{4}", char) and int(char, 16) < 0xF000:
                pieces.append(chr(int(char, 16)))
        else:
            stack.extend(reversed(element))
    return pieces


def _text_boxes(paragraph: Any) -> Iterator[Any]:
    """The text boxes drawn in a paragraph (not their fallback copies)."""
    for box in paragraph.iter(_TXBX):
        ancestor = box.getparent()
        fallback = False
        while ancestor is not None and ancestor is not paragraph:
            if ancestor.tag == _FALLBACK:
                fallback = True
                break
            ancestor = ancestor.getparent()
        if not fallback:
            yield box


def _clean(text: str) -> str:
    """NFC, spaces squeezed, invisible characters dropped."""
    text = re.sub(r"[\u00ad\u200b\u200c\u200d\u2060\ufeff]", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return unicodedata.normalize("NFC", text)


@dataclass(slots=True)
class _Style:
    heading: bool = False
    title: bool = False
    num_id: int | None = None
    ilvl: int = 0


class _Styles:
    """Paragraph styles by id: heading or title, and the numbering a style carries."""

    def __init__(self, document: Any) -> None:
        self.by_id: dict[str, _Style] = {}
        self.default = _Style()
        try:
            element = document.styles.element
        except (KeyError, ValueError, AttributeError):  # no styles part
            return
        raw: dict[str, tuple[str, str | None, Any, int | None]] = {}
        for style in element.iter(f"{{{_W}}}style"):
            if style.get(f"{{{_W}}}type") not in (None, "paragraph"):
                continue
            style_id = style.get(f"{{{_W}}}styleId") or ""
            name_el = style.find(f"{{{_W}}}name")
            based = style.find(f"{{{_W}}}basedOn")
            ppr = style.find(f"{{{_W}}}pPr")
            outline = ppr.find(f"{{{_W}}}outlineLvl") if ppr is not None else None
            raw[style_id] = (
                (name_el.get(_VAL) if name_el is not None else style_id) or style_id,
                based.get(_VAL) if based is not None else None,
                ppr.find(f"{{{_W}}}numPr") if ppr is not None else None,
                _int(outline.get(_VAL)) if outline is not None else None,
            )
        for style_id in raw:
            self.by_id[style_id] = self._resolve(style_id, raw)

    @staticmethod
    def _resolve(style_id: str, raw: dict[str, tuple[str, str | None, Any, int | None]]) -> _Style:
        resolved = _Style()
        seen: set[str] = set()
        current: str | None = style_id
        first = True
        while current in raw and current not in seen:
            seen.add(current)
            name, based, num_pr, outline = raw[current]
            lowered = name.lower()
            if first:
                resolved.title = lowered in ("title", "titel", "titre", "título")
                resolved.heading = (
                    lowered.startswith(("heading", "überschrift", "titre ", "título "))
                    or resolved.title
                    or (outline is not None and outline < 9)
                )
            if resolved.num_id is None and num_pr is not None:
                num_id = num_pr.find(f"{{{_W}}}numId")
                ilvl = num_pr.find(f"{{{_W}}}ilvl")
                if num_id is not None:
                    resolved.num_id = _int(num_id.get(_VAL))
                    resolved.ilvl = _int(ilvl.get(_VAL)) or 0 if ilvl is not None else 0
            first = False
            current = based
        return resolved

    def of(self, paragraph: Any) -> _Style:
        """The resolved style of a paragraph."""
        ppr = paragraph.find(f"{{{_W}}}pPr")
        style_el = ppr.find(f"{{{_W}}}pStyle") if ppr is not None else None
        style_id = style_el.get(_VAL) if style_el is not None else None
        style = self.by_id.get(style_id or "", self.default) if style_id else self.default
        if ppr is not None:
            outline = ppr.find(f"{{{_W}}}outlineLvl")
            level = _int(outline.get(_VAL)) if outline is not None else None
            if level is not None and level < 9 and not style.heading:
                return _Style(heading=True, num_id=style.num_id, ilvl=style.ilvl)
        return style


@dataclass(slots=True)
class _Level:
    start: int = 1
    fmt: str = "decimal"
    text: str = "%1."
    legal: bool = False


class _Numbering:
    """Word's list numbering: the number each numbered paragraph shows, counted in order."""

    def __init__(self, document: Any) -> None:
        self.abstract_of: dict[int, int] = {}
        self.levels: dict[int, dict[int, _Level]] = {}
        self.overrides: dict[int, dict[int, int]] = {}
        self.counters: dict[tuple[str, int], list[int | None]] = {}
        try:
            part = document.part.numbering_part
        except (KeyError, NotImplementedError, ValueError, AttributeError):
            return
        element = part.element
        for abstract in element.iter(f"{{{_W}}}abstractNum"):
            abstract_id = _int(abstract.get(f"{{{_W}}}abstractNumId"))
            if abstract_id is None:
                continue
            levels: dict[int, _Level] = {}
            for lvl in abstract.iter(f"{{{_W}}}lvl"):
                ilvl = _int(lvl.get(f"{{{_W}}}ilvl"))
                if ilvl is None:
                    continue
                level = _Level()
                start = lvl.find(f"{{{_W}}}start")
                fmt = lvl.find(f"{{{_W}}}numFmt")
                text = lvl.find(f"{{{_W}}}lvlText")
                first = _int(start.get(_VAL)) if start is not None else None
                level.start = 1 if first is None else first
                level.fmt = (fmt.get(_VAL) if fmt is not None else None) or "decimal"
                level.text = text.get(_VAL, "") if text is not None else f"%{ilvl + 1}."
                level.legal = lvl.find(f"{{{_W}}}isLgl") is not None
                levels[ilvl] = level
            self.levels[abstract_id] = levels
        for num in element.iter(f"{{{_W}}}num"):
            num_id = _int(num.get(f"{{{_W}}}numId"))
            abstract_el = num.find(f"{{{_W}}}abstractNumId")
            if num_id is None or abstract_el is None:
                continue
            abstract_id = _int(abstract_el.get(_VAL))
            if abstract_id is None:
                continue
            self.abstract_of[num_id] = abstract_id
            for override in num.iter(f"{{{_W}}}lvlOverride"):
                ilvl = _int(override.get(f"{{{_W}}}ilvl"))
                start = override.find(f"{{{_W}}}startOverride")
                value = _int(start.get(_VAL)) if start is not None else None
                if ilvl is not None and value is not None:
                    self.overrides.setdefault(num_id, {})[ilvl] = value

    def label(self, paragraph: Any, styles: _Styles) -> str | None:
        """The number Word shows before ``paragraph`` ("[3]", "3."), counting it; or ``None``."""
        num_id, ilvl = self._num_pr(paragraph, styles)
        if not num_id or num_id not in self.abstract_of:
            return None
        abstract_id = self.abstract_of[num_id]
        levels = self.levels.get(abstract_id, {})
        if ilvl not in levels:
            return None
        # Lists that share an abstract list continue one another unless one restarts it
        # (a startOverride): Word's "continue numbering" and "restart at 1".
        overrides = self.overrides.get(num_id, {})
        key = ("num", num_id) if overrides else ("abstract", abstract_id)
        counters = self.counters.setdefault(key, [None] * 9)
        for upper in range(ilvl):
            if counters[upper] is None and upper in levels:
                counters[upper] = overrides.get(upper, levels[upper].start)
        current = counters[ilvl]
        counters[ilvl] = overrides.get(ilvl, levels[ilvl].start) if current is None else current + 1
        for deeper in range(ilvl + 1, 9):
            counters[deeper] = None
        level = levels[ilvl]
        if level.fmt in ("bullet", "none"):
            return None

        def number(match: re.Match[str]) -> str:
            at = int(match.group(1)) - 1
            value = counters[at] if 0 <= at < 9 else None
            if value is None:
                return ""
            fmt = "decimal" if level.legal or at not in levels else levels[at].fmt
            return _format_number(value, fmt)

        label = re.sub(r"%([1-9])", number, level.text).strip()
        return label or None

    @staticmethod
    def _num_pr(paragraph: Any, styles: _Styles) -> tuple[int | None, int]:
        ppr = paragraph.find(f"{{{_W}}}pPr")
        num_pr = ppr.find(f"{{{_W}}}numPr") if ppr is not None else None
        style = styles.of(paragraph)
        if num_pr is None:
            return style.num_id, style.ilvl
        num_id_el = num_pr.find(f"{{{_W}}}numId")
        ilvl_el = num_pr.find(f"{{{_W}}}ilvl")
        num_id = _int(num_id_el.get(_VAL)) if num_id_el is not None else style.num_id
        ilvl = _int(ilvl_el.get(_VAL)) if ilvl_el is not None else style.ilvl
        return num_id, min(max(ilvl or 0, 0), 8)


def _format_number(value: int, fmt: str) -> str:
    """``value`` in a numFmt of Word (decimal, letters, roman; others as decimal)."""
    if fmt in ("lowerLetter", "upperLetter") and value > 0:
        # Word's letters: a..z, then aa..zz, then aaa..
        letter = chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman") and 0 < value < 4000:
        roman = _roman(value)
        return roman if fmt == "upperRoman" else roman.lower()
    if fmt == "decimalZero":
        return f"{value:02d}"
    return str(value)


def _roman(value: int) -> str:
    out = []
    for number, letters in (
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ):
        while value >= number:
            out.append(letters)
            value -= number
    return "".join(out)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
