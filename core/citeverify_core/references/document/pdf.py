"""PDF: the visual lines of a paper in reading order, with their page, line and look (pdfminer.six).

Reading happens in two steps, both in a child process bounded in time and memory
(:mod:`~citeverify_core.references.document.sandbox`):

1. **Words.** pdfminer's interpreter runs each page's content stream into a small device of ours
   (:class:`_WordDevice`) that keeps *words*: runs of glyphs with their left and right edges, the
   baseline, the font size and whether the font is bold. pdfminer's own layout analysis builds an
   object per glyph and groups boxes; that costs about 8x more than the content stream itself
   and its box order is not a reading order we could rely on, so it is not used (benchmark if
   changing: ``bench/`` and the figures in docs/documents.md, "Reading PDF and Word").
2. **Layout** (:func:`_layout`, pure Python on the words): words into rows by baseline;
   review-copy line numbers removed (a stack of bare sequential numbers in a margin); running
   headers and footers removed (the same text, digits aside, at the same height on many pages)
   and page numbers; two columns found per page from a vertical white gutter, the left column
   read before the right one, full-width rows (a title, an abstract) kept in their place; each
   row of a column becomes one :class:`DocumentLine` with ``x0``, ``size`` and
   ``starts_paragraph`` (vertical space above it larger than the line spacing).

A label drawn in a margin column ("[12]" left of a hanging-indented reference) sits on its
reference's baseline, so it lands at the start of that line. Hyphenated line ends are kept as
they are: the segmenter joins lines and needs to see the breaks.
"""

from __future__ import annotations

import bisect
import io
import math
import re
import statistics
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, Any

from citeverify_core.errors import DocumentError, require_extra
from citeverify_core.references.document.model import DocumentLine, DocumentText, Location
from citeverify_core.references.document.sandbox import (
    DEFAULT_MEMORY_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    run_isolated,
)
from citeverify_core.references.document.segment import running_text

if TYPE_CHECKING:
    from pdfminer.pdffont import PDFFont
    from pdfminer.pdfinterp import PDFResourceManager

__all__ = ["MAX_PDF_CHARACTERS", "MAX_PDF_PAGES", "read_pdf"]

#: Pages read at most; a document with more is refused (``too-large``).
MAX_PDF_PAGES = 2000
#: Characters read at most (a 40-page paper has about 200,000).
MAX_PDF_CHARACTERS = 20_000_000

_PRELOAD = (
    "pdfminer.pdfinterp",
    "pdfminer.pdfpage",
    "pdfminer.pdfdevice",
    "pdfminer.pdfdocument",
    "citeverify_core.references.document.pdf",
)

# Ligatures and presentation forms a font may map a glyph to (Unicode's "compatibility"
# decompositions of U+FB00-FB06), and characters that are not there on paper.
_GLYPH_TEXT = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
    "\u200b": "",
    "\u200c": "",
    "\u200d": "",
    "\u2060": "",
    "\ufeff": "",
    "\x00": "",
}
_SPACES = frozenset(" \t\n\r\xa0\u2002\u2003\u2009\u202f\u3000")
# Spacing accents that TeX (and others) draw over a letter as a glyph of their own, and the
# combining mark each stands for: "Scho¨lkopf" is read as "Schölkopf".
_ACCENTS = {
    "\u00a8": "\u0308",
    "\u00b4": "\u0301",
    "\u0060": "\u0300",
    "\u02c6": "\u0302",
    "\u02dc": "\u0303",
    "\u00b8": "\u0327",
    "\u02c7": "\u030c",
    "\u02d8": "\u0306",
    "\u00af": "\u0304",
    "\u02d9": "\u0307",
    "\u02da": "\u030a",
    "\u02dd": "\u030b",
    "\u02db": "\u0328",
}
_DOTLESS = {"\u0131": "i", "\u0237": "j"}
_PAGE_NUMBER = re.compile(
    r"^(?:page|p\.|seite|pág\.?|página|pagina)?\s*[-–—(]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—)]?"
    r"(?:\s*(?:of|/|de|von|sur|di)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_FILE_TITLE = re.compile(
    r"(?:\.(?:pdf|docx?|tex|dvi|ps|rtf|odt|indd|txt)$|^microsoft word|^title$|^none$"
    r"|^\(?(?:anonymous|unspecified|untitled)\b)",
    re.IGNORECASE,
)


def read_pdf(
    data: bytes,
    *,
    name: str,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    memory: int | None = DEFAULT_MEMORY_BYTES,
) -> DocumentText:
    """The lines of a PDF in reading order, headers, footers and line numbers removed.

    Args:
        data: The file's bytes.
        name: The file's name (for messages).
        timeout: Seconds the reading may take before it is stopped.
        memory: Bytes of address space the reading may use (``None``: no limit).

    Raises:
        DocumentError: ``corrupt`` (not a PDF, truncated, unreadable), ``encrypted`` (needs a
            password), ``no-text-layer`` (scanned: "no text layer: run OCR first"),
            ``too-large`` (too many pages or characters, or over ``memory``), ``timeout``.
    """
    require_extra("documents", "reading PDF documents")
    head = data[:1024]
    if b"%PDF-" not in head:
        what = "an empty file" if not data.strip() else "not a PDF (no %PDF- header)"
        msg = f"{name}: {what}"
        raise DocumentError(msg, code="corrupt")
    try:
        found = run_isolated(
            "citeverify_core.references.document.pdf:extract_pdf",
            data,
            preload=_PRELOAD,
            timeout=timeout,
            memory=memory,
        )
    except DocumentError as exc:
        msg = f"{name}: {exc}"
        raise DocumentError(msg, code=exc.code) from None
    lines = [
        DocumentLine(
            text=text,
            location=Location(line=line, page=page),
            x0=x0,
            size=size,
            heading=heading,
            starts_paragraph=starts,
        )
        for text, page, line, x0, size, heading, starts in found["lines"]
    ]
    return DocumentText(
        format="pdf",
        lines=lines,
        title=found["title"],
        pages=found["pages"],
        notes=list(found["notes"]),
    )


def extract_pdf(data: bytes, options: dict[str, Any]) -> dict[str, Any]:
    """Read ``data`` in this process: the JSON-able lines, title, pages and notes.

    The target :func:`read_pdf` runs in its child process; unbounded when called directly.

    Raises:
        DocumentError: as :func:`read_pdf`.
    """
    import logging  # noqa: PLC0415 - only where pdfminer runs

    # pdfminer logs every oddity of a malformed file as a warning: not the user's concern.
    logging.getLogger("pdfminer").setLevel(logging.CRITICAL)
    if options.get("sandboxed"):
        _quiet_pdfminer()
    max_pages = int(options.get("max_pages", MAX_PDF_PAGES))
    max_chars = int(options.get("max_chars", MAX_PDF_CHARACTERS))
    pages, info = _read_words(data, max_pages=max_pages, max_chars=max_chars)
    lines, notes = _layout(pages)
    broken = info.pop("__broken__", [])
    if broken:
        notes.append(f"unreadable and left out: {', '.join(broken[:10])}")
    if not lines:
        images = sum(p.images for p in pages)
        undefined = sum(p.undefined for p in pages)
        if undefined:
            why = "its fonts do not say which letters they draw"
        elif images:
            why = f"{len(pages)} page{'s' if len(pages) != 1 else ''} of images"
        else:
            why = "the pages hold no text"
        msg = f"no text layer: run OCR first ({why})"
        raise DocumentError(msg, code="no-text-layer")
    return {
        "lines": [
            [ln.text, ln.page, ln.number, round(ln.x0, 2), round(ln.size, 2), ln.heading, ln.starts]
            for ln in lines
        ],
        "title": _title(info, pages, lines),
        "pages": len(pages),
        "notes": notes,
    }


class _Quiet:
    """A logger that does nothing, as cheaply as possible."""

    def _nothing(self, *args: object, **kwargs: object) -> None:
        return None

    debug = info = warning = error = exception = critical = _nothing


def _quiet_pdfminer() -> None:
    """Replace pdfminer's module loggers by :class:`_Quiet` (in the parsing child only).

    pdfminer calls ``log.debug`` for every token and operator: with logging off, the calls
    alone are 7% of the reading (a disabled logger still costs a call and a level check).
    Only the child process does this: it reads one document and exits. Benchmark if changing.
    """
    import sys  # noqa: PLC0415

    import pdfminer.pdfinterp  # noqa: PLC0415 - imported first, so that its log is set
    import pdfminer.pdfpage  # noqa: PLC0415, F401

    for name, module in list(sys.modules.items()):
        if name.startswith("pdfminer.") and hasattr(module, "log"):
            setattr(module, "log", _Quiet())  # noqa: B010 - a module attribute mypy cannot see


# --- step 1: words ---------------------------------------------------------------------------


class _Word:
    """A run of glyphs without a space: edges, baseline, size, text (device space, points)."""

    __slots__ = ("bold", "first_w", "last_w", "seq", "size", "space", "text", "x0", "x1", "y")

    def __init__(
        self,
        x0: float,
        x1: float,
        y: float,
        size: float,
        text: str,
        *,
        bold: bool,
        seq: int,
        space: bool,
        first_w: float,
        last_w: float,
    ) -> None:
        self.x0, self.x1, self.y, self.size, self.text = x0, x1, y, size, text
        self.bold, self.seq, self.space = bold, seq, space
        self.first_w, self.last_w = first_w, last_w


class _Page:
    """One page's words and what else it holds."""

    __slots__ = ("height", "images", "number", "undefined", "width", "words")

    def __init__(self, number: int, width: float, height: float) -> None:
        self.number, self.width, self.height = number, width, height
        self.words: list[_Word] = []
        self.images = 0
        self.undefined = 0


def _read_words(
    data: bytes, *, max_pages: int, max_chars: int
) -> tuple[list[_Page], dict[str, Any]]:
    """Every page's words, and the document's Info dictionary."""
    from pdfminer.pdfdocument import (  # noqa: PLC0415 - an extra, in the child
        PDFDocument,
        PDFEncryptionError,
        PDFPasswordIncorrect,
    )
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager  # noqa: PLC0415
    from pdfminer.pdfpage import PDFPage  # noqa: PLC0415
    from pdfminer.pdfparser import PDFParser  # noqa: PLC0415
    from pdfminer.pdftypes import resolve1  # noqa: PLC0415

    try:
        document = PDFDocument(PDFParser(io.BytesIO(data)), password="")
    except PDFPasswordIncorrect:
        msg = "encrypted: it needs a password to be read"
        raise DocumentError(msg, code="encrypted") from None
    except PDFEncryptionError as exc:
        msg = f"encrypted in a way that cannot be read ({exc})"
        raise DocumentError(msg, code="encrypted") from None
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # pdfminer's parser raises anything on garbage
        msg = f"not a readable PDF ({type(exc).__name__})"
        raise DocumentError(msg, code="corrupt") from None
    declared = _declared_pages(document, resolve1)
    if declared > max_pages:
        msg = f"{declared} pages is over the {max_pages} a document may have"
        raise DocumentError(msg, code="too-large")
    info: dict[str, Any] = {}
    for entry in document.info:
        info.update({str(k): resolve1(v) for k, v in entry.items()})
    resources = PDFResourceManager(caching=True)
    device = _WordDevice(resources, max_chars=max_chars)
    interpreter = PDFPageInterpreter(resources, device)
    pages: list[_Page] = []
    too_many = False
    try:
        for number, page in enumerate(PDFPage.create_pages(document), 1):
            if number > max_pages:
                too_many = True
                break
            x0, y0, x1, y1 = page.cropbox if page.cropbox else page.mediabox
            width, height = abs(x1 - x0), abs(y1 - y0)
            if page.rotate in (90, 270):
                width, height = height, width
            device.page = _Page(number, width, height)
            try:
                interpreter.process_page(page)
            except (DocumentError, MemoryError, RecursionError):
                raise
            except Exception as exc:  # one broken page does not lose the others
                device.page.words.clear()
                device.broken.append(f"page {number} ({type(exc).__name__})")
            pages.append(device.page)
    except (DocumentError, MemoryError, RecursionError):
        raise
    except Exception as exc:  # a broken page tree: keep the pages read
        if not pages:
            msg = f"not a readable PDF ({type(exc).__name__})"
            raise DocumentError(msg, code="corrupt") from None
    if too_many:
        msg = f"more than the {max_pages} pages a document may have"
        raise DocumentError(msg, code="too-large")
    if not pages:
        msg = "not a readable PDF (no pages)"
        raise DocumentError(msg, code="corrupt")
    if device.broken:
        info["__broken__"] = device.broken
    return pages, info


def _declared_pages(document: Any, resolve1: Any) -> int:
    """The page count the catalog declares (0 when it does not say)."""
    try:
        count = resolve1(resolve1(document.catalog["Pages"])["Count"])
        return int(count) if isinstance(count, int) else 0
    except Exception:  # only a hint: the page loop counts for real
        return 0


def _make_device_class() -> type:
    """The device class, made on first use (pdfminer is an extra: not imported with this module)."""
    from pdfminer.pdfdevice import PDFDevice  # noqa: PLC0415
    from pdfminer.pdffont import PDFUnicodeNotDefined  # noqa: PLC0415
    from pdfminer.utils import mult_matrix  # noqa: PLC0415

    class WordDevice(PDFDevice):
        """A pdfminer device that keeps words (no object per glyph: benchmark if changing)."""

        def __init__(self, rsrcmgr: PDFResourceManager, *, max_chars: int) -> None:
            super().__init__(rsrcmgr)
            self.page = _Page(0, 612, 792)
            self.max_chars = max_chars
            self.chars = 0
            self.seq = 0
            self.broken: list[str] = []
            self._tables: dict[Any, _FontTable] = {}
            self._bold: dict[Any, bool] = {}

        def render_image(self, name: str, stream: object) -> None:
            self.page.images += 1

        def _glyph(self, font: PDFFont, cid: int) -> tuple[str | None, float]:
            try:
                text: str | None = font.to_unichr(cid)
            except (PDFUnicodeNotDefined, KeyError, IndexError, TypeError, ValueError):
                text = None
            if text is not None:
                text = "".join(_GLYPH_TEXT.get(ch, ch) for ch in text if ch >= " " or ch == "\t")
            try:
                width = float(font.char_width(cid))
            except Exception:  # a malformed width table
                width = 0.5
            if not math.isfinite(width) or abs(width) > 10:
                width = 0.5
            return text, width

        def _is_bold(self, font: PDFFont) -> bool:
            bold = self._bold.get(font)
            if bold is None:
                name = str(getattr(font, "fontname", "")).lower()
                flags = getattr(font, "flags", 0)
                weight = font.descriptor.get("FontWeight", 0) if font.descriptor else 0
                bold = (
                    any(k in name for k in ("bold", "black", "heavy", "semibold", "demi"))
                    or name.endswith((",b", "-b", "-bd", "bd"))
                    or (isinstance(flags, int) and bool(flags & (1 << 18)))
                    or (isinstance(weight, int | float) and weight >= 600)
                )
                self._bold[font] = bold
            return bold

        def _table(self, font: PDFFont) -> _FontTable:
            table = self._tables.get(font)
            if table is None:
                table = self._tables[font] = _FontTable(font, self._glyph, bold=self._is_bold(font))
            return table

        def render_string(
            self, textstate: Any, seq: Iterable[Any], ncs: Any, graphicstate: Any
        ) -> None:
            """Keep the words of a text-showing operator and advance the text position."""
            font = textstate.font
            if font is None or self.ctm is None:
                return
            a, b, c, d, e, f = mult_matrix(textstate.matrix, self.ctm)
            scaling = textstate.scaling * 0.01
            run = _Run(
                self,
                self._table(font),
                scale=textstate.fontsize * scaling,
                charspace=textstate.charspace * scaling,
                wordspace=0 if font.is_multibyte() else textstate.wordspace * scaling,
                # Upright, unrotated text only: a rotated arXiv stamp or a sideways table
                # would interleave with the lines.
                keep=not font.is_vertical()
                and a > 0
                and d > 0
                and abs(b) <= 1e-3 * a
                and abs(c) <= 1e-3 * d,
                a=a,
                e=e,
                baseline=d * textstate.linematrix[1] + f,
                size=abs(d * textstate.fontsize),
            )
            x = run.show(seq, textstate.linematrix[0])
            textstate.linematrix = (x, textstate.linematrix[1])
            if self.chars > self.max_chars:
                msg = f"more than the {self.max_chars:,} characters a document may have"
                raise DocumentError(msg, code="too-large")

    return WordDevice


class _FontTable:
    """What a font's codes mean, computed once per font: text, width (ems), spaces, words."""

    __slots__ = (
        "bold",
        "font",
        "glyph",
        "glyphs",
        "simple",
        "space_flags",
        "trans",
        "undefined_flags",
        "widths",
        "word_re",
    )

    def __init__(self, font: Any, glyph: Any, *, bold: bool) -> None:
        self.font, self.glyph, self.bold = font, glyph, bold
        self.glyphs: dict[int, tuple[str | None, float]] = {}
        self.simple = not font.is_multibyte()
        self.widths: list[float] = []
        self.trans: dict[int, str] = {}
        self.space_flags: list[int] = []
        self.undefined_flags: list[int] = []
        self.word_re: re.Pattern[bytes] | None = None
        if self.simple:
            # A one-byte font: 256 codes, looked up by C loops (map, translate, a regex)
            # instead of one Python step per glyph. Benchmark if changing.
            spaces = bytearray()
            for code in range(256):
                text, width = self.get(code)
                self.widths.append(width)
                self.undefined_flags.append(text is None)
                is_space = text is not None and text != "" and (text in _SPACES or text.isspace())
                self.space_flags.append(int(is_space))
                self.trans[code] = text or ""
                if is_space:
                    spaces.append(code)
            self.word_re = re.compile(
                b"[^" + re.escape(bytes(spaces)) + b"]+" if spaces else b".+", re.S
            )

    def get(self, cid: int) -> tuple[str | None, float]:
        """The text and width (ems) of a code."""
        glyph = self.glyphs.get(cid)
        if glyph is None:
            glyph = self.glyphs[cid] = self.glyph(self.font, cid)
        return glyph


class _Run:
    """One text-showing operator's glyphs turned into words (the device's hot loop)."""

    __slots__ = (
        "a",
        "baseline",
        "charspace",
        "device",
        "e",
        "keep",
        "pending",
        "scale",
        "size",
        "space",
        "table",
        "wordspace",
    )

    def __init__(
        self,
        device: Any,
        table: _FontTable,
        *,
        scale: float,
        charspace: float,
        wordspace: float,
        keep: bool,
        a: float,
        e: float,
        baseline: float,
        size: float,
    ) -> None:
        self.device, self.table = device, table
        self.scale, self.charspace, self.wordspace, self.keep = scale, charspace, wordspace, keep
        self.a, self.e, self.baseline, self.size = a, e, baseline, size
        #: The word being built: start x, end x (text space), its texts, first and last widths.
        self.pending: list[Any] | None = None
        self.space = False

    def show(self, seq: Iterable[Any], x: float) -> float:
        """Walk a TJ array from ``x``; the text position after it."""
        em = abs(self.scale) or 1.0
        needcharspace = False
        for obj in seq:
            if isinstance(obj, int | float):
                shift = -obj * 0.001 * self.scale
                x += shift
                needcharspace = True
                if shift > 0.1 * em or (shift < -0.5 * em and not self._accent_pending()):
                    self.flush()  # a space, or a jump back (not onto an accent's letter)
                continue
            if not isinstance(obj, bytes) or not obj:
                continue
            if needcharspace:
                x += self.charspace
            x = self._simple(obj, x) if self.table.simple else self._multibyte(obj, x)
            needcharspace = True
        self.flush()
        return x

    def _simple(self, obj: bytes, base: float) -> float:
        table, scale, cs, ws = self.table, self.scale, self.charspace, self.wordspace
        n = len(obj)
        widths = [0.0, *accumulate(map(table.widths.__getitem__, obj))]
        spaces = [0, *accumulate(map(table.space_flags.__getitem__, obj))] if ws else None
        end_x = base + scale * widths[n] + cs * (n - 1) + (ws * spaces[n] if spaces else 0.0)
        if not self.keep:
            return end_x
        device = self.device
        device.chars += n
        if table.word_re is None:  # pragma: no cover - set for every simple font
            return end_x
        for match in table.word_re.finditer(obj):
            i, j = match.span()
            text = match.group().decode("latin-1").translate(table.trans)
            if any(map(table.undefined_flags.__getitem__, match.group())):
                device.page.undefined += sum(map(table.undefined_flags.__getitem__, match.group()))
            if i > 0:
                self.flush()
                self.space = True
            start = base + scale * widths[i] + cs * i + (ws * spaces[i] if spaces else 0.0)
            stop = base + scale * widths[j] + cs * (j - 1) + (ws * spaces[j] if spaces else 0.0)
            first_w = scale * table.widths[obj[i]]
            last_w = scale * table.widths[obj[j - 1]]
            if text:
                self.add(start, stop, text, first_w, last_w)
            if j < n:
                self.flush()
                self.space = True
        if n and not table.word_re.match(obj, n - 1):  # ends with a space
            self.flush()
            self.space = True
        return end_x

    def _multibyte(self, obj: bytes, x: float) -> float:
        table, scale, cs = self.table, self.scale, self.charspace
        first = True
        for cid in table.font.decode(obj):
            if not first:
                x += cs
            first = False
            text, width = table.get(cid)
            adv = width * scale
            if self.keep:
                self.device.chars += 1
                if text is None:
                    self.device.page.undefined += 1
                elif text in _SPACES or text.isspace():
                    self.flush()
                    self.space = True
                elif text:
                    self.add(x, x + adv, text, adv, adv)
            x += adv
        return x

    def _accent_pending(self) -> bool:
        """The pending word ends with a spacing accent (TeX then moves back to its letter)."""
        return self.pending is not None and self.pending[2][-1][-1:] in _ACCENTS

    def add(self, start: float, stop: float, text: str, first_w: float, last_w: float) -> None:
        """Extend the pending word (glyphs of one word across kerning) or start one.

        A spacing accent that the next glyph is drawn back over (TeX's accent command: the dieresis,
        a kern back, the "o"), or that is drawn back over the letter before it (TeX's cedilla),
        becomes that letter's combining mark. An accent the text only follows ("AÃ¯ssa" as a
        file spells it, "O´Brien") stays as written.
        """
        pending = self.pending
        if pending is None:
            self.pending = [start, stop, [text], first_w, last_w]
            return
        before = pending[2][-1]
        if text[:1] in _ACCENTS and before[-1:].isalpha() and start < pending[1] - 0.3 * first_w:
            # An accent drawn back over the letter before it (TeX's cedilla: "Franc" + "¸").
            letter = _DOTLESS.get(before[-1], before[-1])
            pending[2][-1] = before[:-1] + letter + _ACCENTS[text[0]]
            text = text[1:]
            if not text:
                return
            before = pending[2][-1]
        accent = before[-1:]
        if accent in _ACCENTS and start < pending[1] - 0.3 * pending[4]:
            letter = _DOTLESS.get(text[0], text[0])
            if letter.isalpha():
                pending[2][-1] = before[:-1]
                text = letter + _ACCENTS[accent] + text[1:]
                if not "".join(pending[2]):  # the accent began the word: the letter does
                    pending[0], pending[3] = start, first_w
        pending[1] = stop
        pending[2].append(text)
        pending[4] = last_w

    def flush(self) -> None:
        """Keep the pending word."""
        pending = self.pending
        if pending is None:
            return
        self.pending = None
        device, a = self.device, self.a
        device.page.words.append(
            _Word(
                a * pending[0] + self.e,
                a * pending[1] + self.e,
                self.baseline,
                self.size,
                "".join(pending[2]),
                bold=self.table.bold,
                seq=device.seq,
                space=self.space,
                first_w=a * pending[3],
                last_w=a * pending[4],
            )
        )
        device.seq += 1
        self.space = False


_device_class: type | None = None


def _WordDevice(rsrcmgr: PDFResourceManager, *, max_chars: int) -> Any:
    global _device_class  # noqa: PLW0603 - made once per process
    if _device_class is None:
        _device_class = _make_device_class()
    return _device_class(rsrcmgr, max_chars=max_chars)


# --- step 2: layout --------------------------------------------------------------------------


class _Line:
    """A line as laid out: text, page, number on the page, left edge, size, flags, baseline."""

    __slots__ = ("heading", "number", "page", "size", "starts", "text", "x0", "y")

    def __init__(self, text: str, page: int, x0: float, size: float, y: float) -> None:
        self.text, self.page, self.x0, self.size, self.y = text, page, x0, size, y
        self.number = 0
        self.heading = False
        self.starts = False


_Row = list[_Word]


def _layout(pages: list[_Page]) -> tuple[list[_Line], list[str]]:
    """The lines of every page in reading order, and notes on what was removed or missing."""
    notes: list[str] = []
    rows_by_page: list[list[_Row]] = []
    numbered = 0
    kept_words: list[list[_Word]] = []
    margins: set[tuple[str, int, float]] = set()
    for page in pages:
        words = _dedupe(page.words)
        words, removed = _drop_line_numbers(words, margins)
        numbered += removed > 0
        kept_words.append(words)
    if margins:
        # A page with only a few lines (the end of a list) has too short a stack to be told
        # from labels: it loses the numbers that stand where other pages' line numbers stand.
        for i, words in enumerate(kept_words):
            kept_words[i] = _drop_numbers_at(words, margins)
    rows_by_page.extend(_rows(words) for words in kept_words)
    if numbered:
        notes.append(f"line numbers of a review copy removed on {numbered} pages")
    removed_edges = _drop_running_text(pages, rows_by_page)
    if removed_edges:
        notes.append(f"running headers, footers and page numbers removed ({removed_edges} lines)")
    lines: list[_Line] = []
    empty: list[int] = []
    for page, rows in zip(pages, rows_by_page, strict=True):
        page_lines = _page_lines(page, rows)
        if not page_lines:
            empty.append(page.number)
        for number, line in enumerate(page_lines, 1):
            line.number = number
        lines.extend(page_lines)
    _mark_paragraphs_and_headings(lines)
    if empty and len(empty) < len(pages):
        notes.append(
            f"{_pages_text(empty)} {'has' if len(empty) == 1 else 'have'} no text "
            "(scanned? run OCR on them)"
        )
    undefined = sum(p.undefined for p in pages)
    if lines and undefined:
        notes.append(f"{undefined} characters of fonts without a Unicode map were left out")
    return lines, notes


def _pages_text(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10])
    more = f" and {len(numbers) - 10} more" if len(numbers) > 10 else ""
    return f"page{'s' if len(numbers) > 1 else ''} {shown}{more}"


def _dedupe(words: list[_Word]) -> list[_Word]:
    """Without the second copy of a word drawn twice (a fake bold, a shadow)."""
    seen: set[tuple[str, int, int]] = set()
    kept: list[_Word] = []
    for word in words:
        key = (word.text, round(word.x0), round(word.y))
        if key in seen:
            continue
        seen.add(key)
        kept.append(word)
    return kept


def _rows(words: list[_Word]) -> list[_Row]:
    """Words grouped by baseline, top to bottom, each row left to right.

    A word joins a row when its baseline is within 45% of the font size of the row's first
    word: a superscript or a label in another size stays on its line, the next line does not.
    """
    rows: list[_Row] = []
    row_y = row_size = 0.0
    for word in sorted(words, key=lambda w: -w.y):
        if rows and abs(row_y - word.y) <= 0.45 * max(row_size, word.size):
            rows[-1].append(word)
        else:
            rows.append([word])
            row_y, row_size = word.y, word.size
    for row in rows:
        row.sort(key=lambda w: w.x0)
    return rows


def _baseline(row: _Row) -> float:
    """The row's baseline: that of its most characters."""
    return max(row, key=lambda w: len(w.text)).y


def _row_size(row: Iterable[_Word]) -> float:
    """The font size of most of the row's characters."""
    sizes: Counter[float] = Counter()
    for word in row:
        sizes[round(word.size, 1)] += len(word.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _drop_line_numbers(
    words: list[_Word], margins: set[tuple[str, int, float]]
) -> tuple[list[_Word], int]:
    """Without the line numbers of a review copy, and how many were removed.

    Line numbers are bare numbers (no bracket, no dot) stacked in a margin: aligned on one edge,
    growing downwards, at least 5 on the page, left or right of all the other text of their
    rows, and either smaller than the text or counting every row (a numbered reference list's
    bare labels count references, not rows, and have the text's size).
    """
    numbers = [w for w in words if w.text.isdigit() and len(w.text) <= 4]
    if len(numbers) < 5:
        return words, 0
    body = [w for w in words if not (w.text.isdigit() and len(w.text) <= 4)]
    body_size = statistics.median(w.size for w in body) if body else 0.0
    stacks: dict[tuple[str, int], list[_Word]] = defaultdict(list)
    for word in numbers:
        stacks["right", round(word.x1 / 2)].append(word)
        stacks["left", round(word.x0 / 2)].append(word)
    drop: set[int] = set()
    for stack in stacks.values():
        if len(stack) < 5:
            continue
        stack.sort(key=lambda w: -w.y)
        values = [int(w.text) for w in stack]
        steps = [b - a for a, b in pairwise(values)]
        if sum(s > 0 for s in steps) < 0.9 * len(steps):
            continue
        in_margin = all(_outside_text(w, body) for w in stack)
        if not in_margin:
            continue
        # Smaller than the text of the numbers' own rows: a reference list set in a smaller
        # font than the page's body has labels smaller than the body, not than their rows.
        row_size = _rows_size(stack, body) or body_size
        smaller = row_size and statistics.median(w.size for w in stack) < 0.9 * row_size
        gaps = [a.y - b.y for a, b in pairwise(stack)]
        pitch = min(gaps) if gaps else 0.0
        per_row = pitch > 0 and all(
            abs(g / pitch - s) < 0.35 for g, s in zip(gaps, steps, strict=False)
        )
        if smaller or (per_row and len(stack) >= 10):
            drop.update(id(w) for w in stack)
            edge = (
                "right"
                if len({round(w.x1) for w in stack}) <= len({round(w.x0) for w in stack})
                else "left"
            )
            at = statistics.median(w.x1 if edge == "right" else w.x0 for w in stack)
            margins.add((edge, round(at), round(statistics.median(w.size for w in stack), 1)))
    if not drop:
        return words, 0
    return [w for w in words if id(w) not in drop], len(drop)


def _rows_size(stack: list[_Word], body: list[_Word]) -> float:
    """The median size of the words on the rows of ``stack`` (0.0 when there are none)."""
    ys = sorted(w.y for w in stack)
    sizes = [
        w.size
        for w in body
        if (k := bisect.bisect_left(ys, w.y - 0.5 * w.size)) < len(ys)
        and ys[k] <= w.y + 0.5 * w.size
    ]
    return statistics.median(sizes) if sizes else 0.0


def _drop_numbers_at(words: list[_Word], margins: set[tuple[str, int, float]]) -> list[_Word]:
    """Without the bare numbers standing where line numbers stand on other pages."""
    body = [w for w in words if not w.text.isdigit()]

    def line_number(word: _Word) -> bool:
        if not word.text.isdigit() or len(word.text) > 4:
            return False
        for edge, at, size in margins:
            x = word.x1 if edge == "right" else word.x0
            if abs(x - at) <= 2 and abs(word.size - size) <= 0.5:
                return _outside_text(word, body)
        return False

    return [w for w in words if not line_number(w)]


def _outside_text(number: _Word, body: list[_Word]) -> bool:
    """Whether no text of the number's row starts within 3 points after it or ends just before.

    A margin's number is apart from its row's text; a label is the text's first word and sits
    a space before it ("12 Smith, J."): such a number is not a line number.
    """
    for word in body:
        if abs(word.y - number.y) > 0.5 * max(word.size, number.size):
            continue
        if number.x1 <= word.x0 < number.x1 + 0.6 * word.size:
            return False
        if number.x0 - 0.6 * word.size < word.x1 <= number.x0:
            return False
    return True


def _edge_fragments(row: _Row) -> list[_Row]:
    """A row cut where words are more than two font sizes apart (header left, page right)."""
    fragments: list[_Row] = [[row[0]]]
    for word in row[1:]:
        last = fragments[-1][-1]
        if word.x0 - last.x1 > 2 * max(word.size, last.size):
            fragments.append([word])
        else:
            fragments[-1].append(word)
    return fragments


def _apart(rows: list[_Row], r: int) -> bool:
    """Whether row ``r`` (of the top or bottom three) is set off from the page's text by space.

    Running text is: a space wider than 1.5 font sizes separates it (or the block of edge rows
    it belongs to) from the body; the body's own first or last lines are not.
    """
    ys = [_baseline(row) for row in rows]
    if r < 3:
        pairs = range(r, min(3, len(rows) - 1))
        return any(ys[k] - ys[k + 1] > 1.5 * _row_size(rows[k]) for k in pairs)
    pairs = range(max(len(rows) - 3, 1), r + 1)
    return any(ys[k - 1] - ys[k] > 1.5 * _row_size(rows[k]) for k in pairs)


def _drop_running_text(pages: list[_Page], rows_by_page: list[list[_Row]]) -> int:
    """Remove running headers, footers and page numbers from the rows; how many were removed.

    Candidates are the fragments of the top three and bottom three rows of a page. A fragment
    is running text when the same text (digits aside, case aside) stands at the same height
    (within 4 points) on many pages: at least 2 pages of a short document, otherwise at least
    3 and a fifth of the pages; and it is apart from the text (more than 1.5 font sizes of
    space between it, or the block it opens or closes, and the text). A page number is a
    fragment that is only a number ("12", "Page 3 of 9", "- iv -"), alone on its page's first
    or last row, apart from the text.
    """
    keyed: dict[tuple[str, str], list[tuple[int, float, int, int, str]]] = defaultdict(list)
    for p, rows in enumerate(rows_by_page):
        for r in (*range(min(3, len(rows))), *range(max(3, len(rows) - 3), len(rows))):
            if not _apart(rows, r):
                continue
            for f, fragment in enumerate(_edge_fragments(rows[r])):
                text = " ".join(w.text for w in fragment)
                key = _DIGITS.sub("#", re.sub(r"\s+", " ", text.lower()).strip())
                side = "top" if r < 3 else "bottom"
                keyed[side, key].append((p, fragment[0].y, r, f, text))
    need = 2 if len(pages) <= 4 else max(3, math.ceil(len(pages) / 5))
    drop: dict[int, set[int]] = defaultdict(set)
    for places in keyed.values():
        heights = Counter(round(pl[1] / 4) for pl in places)
        for height, _ in heights.most_common(2):
            near = [(pl[0], pl[4], pl) for pl in places if abs(round(pl[1] / 4) - height) <= 1]
            for p, _, r, f, _ in running_text(near, need):
                for word in _edge_fragments(rows_by_page[p][r])[f]:
                    drop[p].add(id(word))
    for p, rows in enumerate(rows_by_page):
        for r in (0, len(rows) - 1) if rows else ():
            row = rows[r]
            text = " ".join(w.text for w in row)
            if not _PAGE_NUMBER.match(text):
                continue
            neighbour = rows[1] if r == 0 else rows[r - 1] if r > 0 else None
            size = _row_size(row)
            if neighbour is None or abs(_baseline(neighbour) - _baseline(row)) > 1.6 * max(
                size, _row_size(neighbour)
            ):
                drop[p].update(id(w) for w in row)
    removed = 0
    for p, ids in drop.items():
        kept_rows = []
        for row in rows_by_page[p]:
            kept = [w for w in row if id(w) not in ids]
            if len(kept) < len(row):
                removed += 1
            if kept:
                kept_rows.append(kept)
        rows_by_page[p] = kept_rows
    return removed


def _gutter(rows: list[_Row]) -> tuple[float, float, float] | None:
    """The white strip between two columns (left x, right x, its middle), or ``None``.

    Words are merged into fragments where they are less than half a font size apart (words of
    a justified line, not two columns). The gutter is the x in the middle 40% of the text's
    width that the fewest rows cover, widened while as few rows cover it. Two columns need a
    strip at least 5 points wide that at most half the rows cross, and text right of it on at
    least two rows.
    """
    if len(rows) < 6:
        return None
    left = min(row[0].x0 for row in rows)
    right = max(max(w.x1 for w in row) for row in rows)
    width = right - left
    if width < 100:
        return None
    bins = int(width) + 1
    cover = [0] * (bins + 1)
    for row in rows:
        start, end = row[0].x0, row[0].x1
        for word in row[1:]:
            if word.x0 - end < 0.5 * word.size:
                end = max(end, word.x1)
                continue
            cover[int(start - left)] += 1
            cover[int(end - left) + 1] -= 1
            start, end = word.x0, word.x1
        cover[int(start - left)] += 1
        cover[int(end - left) + 1] -= 1
    running = 0
    for i in range(bins + 1):
        running += cover[i]
        cover[i] = running
    lo, hi = int(0.3 * width), int(0.7 * width)
    low = min(cover[lo:hi])
    if low > 0.5 * len(rows):
        return None
    best = min(range(lo, hi), key=lambda i: (cover[i], abs(i - width / 2)))
    limit = low + max(1, len(rows) // 20)
    g0 = g1 = best
    while g0 > 0 and cover[g0 - 1] <= limit:
        g0 -= 1
    while g1 < bins - 1 and cover[g1 + 1] <= limit:
        g1 += 1
    if g1 - g0 < 5:
        return None
    gl, gr = left + g0, left + g1 + 1
    # The middle of the strip's emptiest part: the widened strip may start left of where a few
    # overfull left lines end, and the middle of that would fall on them.
    c0 = c1 = best
    while c0 > g0 and cover[c0 - 1] == cover[best]:
        c0 -= 1
    while c1 < g1 and cover[c1 + 1] == cover[best]:
        c1 += 1
    middle = left + (c0 + c1 + 1) / 2
    # The right column starts at the leftmost x where several rows' right part starts: with
    # hanging indents the strip above also spans the indent (only first lines start left of
    # it); one over-long left line reaching into the strip does not count.
    starts = Counter(
        round(next(w.x0 for w in row if w.x0 > gl + 1))
        for row in rows
        if any(w.x0 > gl + 1 for w in row)
    )
    if not _aligned(starts):
        return None
    frequent = [x for x, n in starts.items() if n >= 2 and x < gr]
    if frequent:
        gr = max(min(frequent), gl + 5)
    both = sum(
        1
        for row in rows
        if any(w.x1 <= gl + 1 for w in row)
        and any(w.x0 >= gr - 1 for w in row)
        and not _spans(row, middle)
    )
    sides = sum(1 for row in rows if not _spans(row, middle) and any(w.x0 >= gr - 1 for w in row))
    # Text right of a clean strip on a few rows is a second column, even a short one (the
    # last lines of a reference list) or one whose baselines are not the left one's.
    if sides < 2 or sides + both < 3:
        return None
    return gl, gr, middle


def _aligned(starts: Counter[int]) -> bool:
    """Whether the text right of a white strip starts where a column does.

    A second column's lines start at its left edge (or at one indent from it): at least 60% of
    the rows with text right of the strip start within 2 points of its most common start, or
    of that and a second one that at least two rows share. A strip that the words of one
    justified column leave open by chance on a short page (the last lines of a reference list)
    has its right-hand words starting anywhere.
    """
    total = sum(starts.values())
    clusters = sorted((sum(n for x, n in starts.items() if abs(x - c) <= 2), c) for c in starts)[
        ::-1
    ]
    if not clusters or clusters[0][0] < 2:
        return False
    first, centre = clusters[0]
    second = next((n for n, c in clusters if abs(c - centre) > 4 and n >= 2), 0)
    return first + second >= 0.6 * total


def _split_at_gutter(row: _Row, gl: float, gr: float, middle: float) -> int:
    """Where ``row`` (left to right) passes from the left column to the right one.

    At the widest space before a word that starts in the gutter, or before the first word that
    starts where the right column does (the last candidate): a left line that runs over into
    the gutter, even past the right column's start (an overfull justified line), stays left; a
    hanging reference's first line, which starts left of its column's other lines, goes right;
    a section number ("6" + a quad + "Conclusion") goes with its heading.
    """
    if row[0].x0 >= middle:
        return 0
    best, widest = len(row), -1.0
    for k in range(1, len(row)):
        word = row[k]
        if word.x0 <= gl:
            continue
        gap = word.x0 - row[k - 1].x1
        if gap > widest:
            best, widest = k, gap
        if word.x0 >= gr - 1:
            break
    return best


def _spans(row: _Row, middle: float) -> bool:
    """Whether ``row`` runs across the gutter whose middle is ``middle`` (full width).

    It does when a word lies over the gutter's middle, or when the words either side of the
    middle are closer than half a font size (the spaces of one line, as :func:`_gutter` merges
    fragments). Not when a word merely reaches into the gutter: the widened strip can start
    left of where an overfull justified left line ends (fpdf2, LaTeX's overfull boxes).
    """
    before: _Word | None = None
    after: _Word | None = None
    for word in row:
        if word.x0 <= middle <= word.x1:
            return True
        if word.x1 < middle:
            before = word
        elif after is None:
            after = word
    if before is None or after is None:
        return False
    return after.x0 - before.x1 < 0.5 * max(before.size, after.size)


def _page_lines(page: _Page, rows: list[_Row]) -> list[_Line]:
    """The page's lines in reading order: bands of full-width rows and of two columns."""
    gutter = _gutter(rows)
    if gutter is None:
        return [_line(page, row) for row in rows]
    gl, gr, middle = gutter
    spanning = [_spans(row, middle) for row in rows]
    # A lone crossing row between column rows (an over-long URL running into the gutter) is a
    # column row: only a band of full-width rows, or one apart from the columns, spans.
    for i, row in enumerate(rows):
        if not spanning[i] or i == 0 or i == len(rows) - 1:
            continue
        if spanning[i - 1] or spanning[i + 1]:
            continue
        size = _row_size(row)
        above = _baseline(rows[i - 1]) - _baseline(row)
        below = _baseline(row) - _baseline(rows[i + 1])
        if above < 2 * size and below < 2 * size:
            spanning[i] = False
    lines: list[_Line] = []
    band: list[_Row] = []

    def flush() -> None:
        parts = [_split_at_gutter(row, gl, gr, middle) for row in band]
        lefts = [row[:k] for row, k in zip(band, parts, strict=True)]
        rights = [row[k:] for row, k in zip(band, parts, strict=True)]
        lines.extend(_line(page, part) for part in lefts if part)
        lines.extend(_line(page, part) for part in rights if part)
        band.clear()

    for row, spans in zip(rows, spanning, strict=True):
        if spans:
            flush()
            lines.append(_line(page, row))
        else:
            band.append(row)
    flush()
    return lines


def _line(page: _Page, words: _Row) -> _Line:
    """One line from its words (left to right): spaces where words are apart, accents placed."""
    words = _place_accents(words)
    parts: list[str] = []
    previous: _Word | None = None
    for word in words:
        if previous is not None:
            gap = word.x0 - previous.x1
            consecutive = word.seq == previous.seq + 1 and word.space
            if gap > 0.13 * max(word.size, previous.size) or (
                consecutive and gap > -0.5 * word.size
            ):
                parts.append(" ")
        parts.append(word.text)
        previous = word
    text = _clean("".join(parts))
    size = _row_size(words)
    return _Line(text, page.number, words[0].x0, size, _baseline(words))


def _place_accents(words: _Row) -> _Row:
    """Accents drawn as glyphs of their own, combined with the letter they stand over.

    TeX draws "ö" as a dieresis moved over an "o". When the accent is a word of its own, the
    letter under its middle gets it as a combining mark ("Scho¨lkopf" -> "Schölkopf"); one
    glued before a letter in a word is handled by :func:`_clean`.
    """
    accents = [
        w for w in words if len(w.text) == 1 and w.text in _ACCENTS and w.x1 - w.x0 < 0.6 * w.size
    ]
    if not accents:
        return words
    placed: set[int] = set()
    for accent in accents:
        middle = (accent.x0 + accent.x1) / 2
        hosts = [
            w
            for w in words
            if w is not accent and id(w) not in placed and w.x0 - 0.5 <= middle <= w.x1 + 0.5
        ]
        if not hosts or not hosts[0].text:
            continue
        host = hosts[0]
        n = len(host.text)
        if middle <= host.x0 + host.first_w:
            at = 0
        elif middle >= host.x1 - host.last_w:
            at = n - 1
        else:
            at = min(n - 1, max(0, int((middle - host.x0) / max(host.x1 - host.x0, 1e-6) * n)))
        base = _DOTLESS.get(host.text[at], host.text[at])
        host.text = host.text[:at] + base + _ACCENTS[accent.text] + host.text[at + 1 :]
        placed.add(id(accent))
    return [w for w in words if id(w) not in placed]


def _clean(text: str) -> str:
    """NFC, soft hyphens made visible at the line end and dropped inside, spaces squeezed.

    (Accents glued before their letter are combined where the glyphs are drawn: see ``add``.)
    """
    text = text.strip()
    if text.endswith("\u00ad"):
        text = text[:-1] + "-"
    text = text.replace("\u00ad", "")
    text = re.sub(r"\s+", " ", text)
    return unicodedata.normalize("NFC", text)


def _mark_paragraphs_and_headings(lines: list[_Line]) -> None:
    """``starts_paragraph`` from vertical space, ``heading`` from size and shortness.

    The line spacing is estimated per document as the common ratio of baseline distance to
    font size (its lower fifth: most lines follow one at the normal spacing), and per run of
    lines of one column. A line starts a paragraph when the space above it is larger than
    that spacing by a fifth of a line or more; a line at the top of a column or page is not
    marked (what is above it is elsewhere).
    """
    ratios: list[float] = []
    for prev, line in pairwise(lines):
        step = prev.y - line.y
        size = max(prev.size, line.size)
        if prev.page == line.page and size > 0 and 0.8 * size < step < 3 * size:
            ratios.append(step / size)
    ratios.sort()
    ratio = ratios[len(ratios) // 5] if ratios else 1.2
    sizes = sorted(ln.size for ln in lines if ln.text)
    body = sizes[len(sizes) // 2] if sizes else 0.0
    if lines:
        lines[0].starts = True
    for prev, line in pairwise(lines):
        step = prev.y - line.y
        size = max(prev.size, line.size)
        same_run = prev.page == line.page and step > 0.5 * size
        if same_run and step > ratio * size + max(1.0, 0.2 * size):
            line.starts = True
    for line in lines:
        if body and line.size >= 1.15 * body and len(line.text.split()) <= 15:
            line.heading = line.starts = True


def _title(info: dict[str, Any], pages: list[_Page], lines: list[_Line]) -> str | None:
    """The metadata's Title when it looks like one, else the largest text on page 1."""
    raw = info.get("Title")
    title = _decode_pdf_string(raw)
    if title:
        title = re.sub(r"\s+", " ", title).strip()
        letters = sum(ch.isalpha() for ch in title)
        if letters >= 4 and not _FILE_TITLE.search(title) and len(title) <= 400:
            return title
    first = [ln for ln in lines if ln.page == 1 and ln.text]
    if not first or not pages:
        return None
    largest = max(ln.size for ln in first)
    body = statistics.median(ln.size for ln in first)
    if largest < 1.15 * body:
        return None
    parts: list[str] = []
    for line in first:
        if abs(line.size - largest) <= 0.5:
            parts.append(line.text)
        elif parts:
            break
    text = " ".join(parts).strip()
    return text or None


def _decode_pdf_string(value: object) -> str | None:
    """A PDF text string (PDFDocEncoding or UTF-16 with a BOM) as ``str``."""
    if isinstance(value, str):
        return value
    if not isinstance(value, bytes):
        return None
    if value.startswith((b"\xfe\xff", b"\xff\xfe")):
        return value.decode("utf-16", errors="replace")
    if value.startswith(b"\xef\xbb\xbf"):
        return value[3:].decode("utf-8", errors="replace")
    from pdfminer.utils import decode_text  # noqa: PLC0415 - PDFDocEncoding

    return decode_text(value)
