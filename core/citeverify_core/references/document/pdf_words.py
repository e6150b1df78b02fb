"""PDF step 1, words: pdfminer's interpreter runs each page into a device that keeps words.

:class:`WordDevice` keeps *words*: runs of glyphs with their left and right edges, the baseline,
the font size and whether the font is bold. pdfminer's own layout analysis builds an object per
glyph and groups boxes; that costs about 8x more than the content stream itself and its box
order is not a reading order we could rely on, so it is not used (benchmark if changing:
``bench/`` and the figures in docs/documents.md, "Reading PDF and Word").

pdfminer is an extra and runs only in the sandbox's child process: it is imported inside the
functions that need it, never with this module.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from collections.abc import Iterable
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.pdf_glyphs import (
    LOST,
    glyph_names,
    recover_text,
    renumbered,
    tex_table,
)

if TYPE_CHECKING:
    from pdfminer.pdffont import PDFFont
    from pdfminer.pdfinterp import PDFResourceManager

__all__ = ["ACCENTS", "DOTLESS", "Page", "Word", "read_words"]

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
ACCENTS = {
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
DOTLESS = {"\u0131": "i", "\u0237": "j"}


class Word:
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


class Page:
    """One page's words and what else it holds."""

    __slots__ = (
        "height",
        "images",
        "number",
        "rules",
        "sideways",
        "skipped",
        "undefined",
        "width",
        "words",
    )

    def __init__(self, number: int, width: float, height: float) -> None:
        self.number, self.width, self.height = number, width, height
        self.words: list[Word] = []
        #: Words of text turned a quarter (a landscape table, its caption, a y axis's label),
        #: in the turned frame, where they read upright: x along the text, y across it.
        self.sideways: list[Word] = []
        self.images = 0
        self.skipped = 0  # figures too large to read for text
        self.undefined = 0
        #: Short thin horizontal rules (left x, right x, y): a footnote rule is one.
        self.rules: list[tuple[float, float, float]] = []


def read_words(data: bytes, *, max_pages: int, max_chars: int) -> tuple[list[Page], dict[str, Any]]:
    """Every page's words, and the document's Info dictionary."""
    from pdfminer.pdfdocument import (  # noqa: PLC0415 - an extra, in the child
        PDFDocument,
        PDFEncryptionError,
        PDFPasswordIncorrect,
    )
    from pdfminer.pdfinterp import PDFPageInterpreter  # noqa: PLC0415 - the extra, in the child
    from pdfminer.pdfpage import PDFPage  # noqa: PLC0415 - the extra, in the child
    from pdfminer.pdfparser import PDFParser  # noqa: PLC0415 - the extra, in the child
    from pdfminer.pdftypes import resolve1  # noqa: PLC0415 - the extra, in the child

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
    resources = _FontSpecs(caching=True)
    device = _WordDevice(resources, max_chars=max_chars)
    interpreter = _interpreter_class(PDFPageInterpreter)(resources, device)
    pages: list[Page] = []
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
            device.page = Page(number, width, height)
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


def _font_specs_class() -> type:
    """A resource manager that leaves each font its dictionary (``font.spec``).

    pdfminer keeps no glyph names on a font: the names of /Encoding /Differences are needed
    for the codes it cannot read (:mod:`.pdf_glyphs`).
    """
    from pdfminer.pdfinterp import PDFResourceManager  # noqa: PLC0415 - the extra, in the child

    class FontSpecs(PDFResourceManager):
        def get_font(self, objid: object, spec: Any) -> Any:
            font = super().get_font(objid, spec)
            if getattr(font, "spec", None) is None:
                # A font class without a __dict__ cannot keep it: its names are not read.
                with contextlib.suppress(AttributeError):
                    setattr(font, "spec", spec)  # noqa: B010 - an attribute pdfminer's type lacks
            return font

    return FontSpecs


def _FontSpecs(*, caching: bool) -> Any:
    global _specs_class  # noqa: PLW0603 - made once per process
    if _specs_class is None:
        _specs_class = _font_specs_class()
    return _specs_class(caching=caching)


_specs_class: type | None = None


#: Bytes of drawing operators a form XObject (a figure) may have to be read for text: a vector
#: plot of 100,000 points costs pdfminer seconds to parse and its text is axis labels. A page
#: of text is under 100 KB of operators, even one wrapped in a form (pdfpages).
MAX_FIGURE_BYTES = 1_000_000
#: Form XObjects a document may draw, nested draws included, and the bytes of their operators
#: read in all. A form that draws another form 8 times, 6 deep, is a 3 KB file that costs
#: 262,144 draws (minutes); a real paper draws a few hundred. Past either budget the remaining
#: forms are skipped as figures are (counted in the page's note), and the text read so far kept.
MAX_FORM_DRAWS = 10_000
MAX_FORM_BYTES = 20_000_000


def _interpreter_class(base: type) -> type:
    """Pdfminer's page interpreter that leaves out figures over :data:`MAX_FIGURE_BYTES`.

    One class per document: its draw budget (:data:`MAX_FORM_DRAWS`, :data:`MAX_FORM_BYTES`)
    is shared by the interpreters pdfminer makes for nested forms (``dup()``).
    """
    from pdfminer.pdftypes import stream_value  # noqa: PLC0415 - the extra, in the child
    from pdfminer.psparser import LIT, literal_name  # noqa: PLC0415 - the extra, in the child

    form = LIT("Form")
    spent = [0, 0]  # form draws, form bytes

    class Interpreter(base):  # type: ignore[misc]
        def do_Do(self, xobjid_arg: Any) -> None:
            try:
                xobj = stream_value(self.xobjmap[literal_name(xobjid_arg)])
                big = False
                if xobj.get("Subtype") is form:
                    size = len(xobj.get_data())
                    spent[0] += 1
                    spent[1] += size
                    big = (
                        size > MAX_FIGURE_BYTES
                        or spent[0] > MAX_FORM_DRAWS
                        or spent[1] > MAX_FORM_BYTES
                    )
            except Exception:  # pdfminer says what is wrong with it, below
                big = False
            if big:
                self.device.page.images += 1
                self.device.page.skipped += 1
                return
            super().do_Do(xobjid_arg)

    return Interpreter


def _declared_pages(document: Any, resolve1: Any) -> int:
    """The page count the catalog declares (0 when it does not say)."""
    try:
        count = resolve1(resolve1(document.catalog["Pages"])["Count"])
        return int(count) if isinstance(count, int) else 0
    except Exception:  # only a hint: the page loop counts for real
        return 0


def _make_device_class() -> type:
    """The device class, made on first use (pdfminer is an extra: not imported with this module)."""
    from pdfminer.pdfdevice import PDFDevice  # noqa: PLC0415 - the extra, in the child
    from pdfminer.pdffont import PDFUnicodeNotDefined  # noqa: PLC0415 - the extra, in the child
    from pdfminer.utils import mult_matrix  # noqa: PLC0415 - the extra, in the child

    class WordDevice(PDFDevice):
        """A pdfminer device that keeps words (no object per glyph: benchmark if changing)."""

        def __init__(self, rsrcmgr: PDFResourceManager, *, max_chars: int) -> None:
            super().__init__(rsrcmgr)
            self.page = Page(0, 612, 792)
            self.max_chars = max_chars
            self.chars = 0
            self.seq = 0
            self.broken: list[str] = []
            self._tables: dict[Any, _FontTable] = {}
            self._bold: dict[Any, bool] = {}

        def render_image(self, name: str, stream: object) -> None:
            self.page.images += 1

        def paint_path(
            self, graphicstate: Any, stroke: bool, fill: bool, evenodd: bool, path: Any
        ) -> None:
            """Keep a path that is one thin horizontal rule (a footnote rule); ignore others.

            TeX draws its rules as filled rectangles ("re f"), others as a stroked line.
            Bounded: at most 200 rules a page are kept (a table draws many).
            """
            if self.ctm is None or not 2 <= len(path) <= 5 or len(self.page.rules) >= 200:
                return
            first, last = path[0], path[-1 if len(path) == 2 else 2]
            if len(first) < 3 or len(last) < 3 or self.ctm[1] or self.ctm[2]:
                return  # no rule, or a rotated one
            try:
                if abs(float(first[2]) - float(last[2])) * abs(self.ctm[3]) > 1.5:
                    return  # taller than a rule (most paths of a plot end here, cheaply)
            except (TypeError, ValueError):
                return
            points = [seg[-2:] for seg in path if len(seg) >= 3 and seg[0] in "ml"]
            if len(points) < 2:
                return
            a, b, c, d, e, f = self.ctm
            try:
                xs = [a * float(x) + c * float(y) + e for x, y in points]
                ys = [b * float(x) + d * float(y) + f for x, y in points]
            except (TypeError, ValueError):
                return
            width, height = max(xs) - min(xs), max(ys) - min(ys)
            if not (math.isfinite(width) and math.isfinite(height)):
                return
            thick = height if fill else height + float(getattr(graphicstate, "linewidth", 0) or 0)
            if 20 <= width <= 400 and thick <= 1.5:
                self.page.rules.append((min(xs), max(xs), (min(ys) + max(ys)) / 2))

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
            ty = textstate.linematrix[1]
            upright = a > 0 and d > 0 and abs(b) <= 1e-3 * a and abs(c) <= 1e-3 * d
            # Text turned a quarter either way reads upright in a turned frame: x' along the
            # text, y' across it ("x' = y, y' = -x" for a turn to the left).
            turned = (
                not upright and abs(a) <= 1e-3 * abs(b) and abs(d) <= 1e-3 * abs(c) and b * c < 0
            )
            if turned and b > 0:
                along, origin, base, target = b, f, -c * ty - e, self.page.sideways
            elif turned:
                along, origin, base, target = -b, -f, c * ty + e, self.page.sideways
            else:
                along, origin, base, target = a, e, d * ty + f, self.page.words
            run = _Run(
                self,
                self._table(font),
                scale=textstate.fontsize * scaling,
                charspace=textstate.charspace * scaling,
                wordspace=0 if font.is_multibyte() else textstate.wordspace * scaling,
                # Upright or turned a quarter only: other angles (a stamp across the page)
                # are not read.
                keep=not font.is_vertical() and (upright or turned),
                a=along,
                e=origin,
                baseline=base,
                size=abs((d if upright else c) * textstate.fontsize),
                target=target,
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
            names = glyph_names(font)
            tex = tex_table(names) if names else None
            unknown = bool(names) and renumbered(names)
            mapped = getattr(font, "unicode_map", None) is not None
            for code in range(256):
                text, width = self.get(code)
                if unknown and code in names:
                    text = None  # a code numbered in order of use: its glyph is not known
                elif tex is not None and (code >= 128 or code < 32) and code in tex and not mapped:
                    # pdfminer reads a TeX font's codes in Adobe's StandardEncoding, where 197
                    # is a macron ("¯strand" for "Åstrand") and 0-31 are nothing (T1's "ff").
                    text = tex[code]
                if text is None and code in names:
                    # No Unicode for the code: its glyph name may say (a TeX font's code).
                    text = tex.get(code) if tex is not None and code in tex else None
                    if text is None:
                        text = recover_text(names[code])
                    if text is not None:
                        text = "".join(_GLYPH_TEXT.get(ch, ch) for ch in text)
                self.widths.append(width)
                self.undefined_flags.append(text is None)
                is_space = text is not None and text != "" and (text in _SPACES or text.isspace())
                self.space_flags.append(int(is_space))
                # An unread glyph stands as LOST: its line drops it and is marked unreliable;
                # one without width (a TeX font's invisible marks) held no text.
                lost = text is None and abs(width) >= 0.05
                self.trans[code] = LOST if lost else (text or "")
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
        "target",
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
        target: list[Word],
    ) -> None:
        self.device, self.table, self.target = device, table, target
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
                    self.add(x, x + adv, LOST, adv, adv)
                elif text in _SPACES or text.isspace():
                    self.flush()
                    self.space = True
                elif text:
                    self.add(x, x + adv, text, adv, adv)
            x += adv
        return x

    def _accent_pending(self) -> bool:
        """The pending word ends with a spacing accent (TeX then moves back to its letter)."""
        return self.pending is not None and self.pending[2][-1][-1:] in ACCENTS

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
        if text[:1] in ACCENTS and before[-1:].isalpha() and start < pending[1] - 0.3 * first_w:
            # An accent drawn back over the letter before it (TeX's cedilla: "Franc" + "¸").
            letter = DOTLESS.get(before[-1], before[-1])
            pending[2][-1] = before[:-1] + letter + ACCENTS[text[0]]
            text = text[1:]
            if not text:
                return
            before = pending[2][-1]
        accent = before[-1:]
        if accent in ACCENTS and start < pending[1] - 0.3 * pending[4]:
            letter = DOTLESS.get(text[0], text[0])
            if letter.isalpha():
                pending[2][-1] = before[:-1]
                text = letter + ACCENTS[accent] + text[1:]
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
        self.target.append(
            Word(
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
