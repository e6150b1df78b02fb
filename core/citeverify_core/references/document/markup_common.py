"""What the text formats share: decoding a file's bytes, NFC, plain-text lines, line offsets."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right

from citeverify_core.errors import DocumentError
from citeverify_core.references.document.model import DocumentLine, Location

__all__ = ["MAX_DOCUMENT_LINES", "decode", "line_of", "line_starts", "nfc", "plain_lines"]

_CONTROL = re.compile(r"[\x01-\x08\x0b\x0e-\x1f\x7f]")


#: The most lines a text document may have. The longest real papers (a 300-page thesis with its
#: appendices) have tens of thousands; this is ten times more.
MAX_DOCUMENT_LINES = 500_000


def decode(data: bytes, name: str) -> str:
    """The file's text (UTF-8, else cp1252), or ``corrupt`` for a binary file."""
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


def nfc(text: str) -> str:
    """``text`` in Unicode's composed form (NFC)."""
    return unicodedata.normalize("NFC", text) if not text.isascii() else text


def plain_lines(text: str) -> list[DocumentLine]:
    """A text file's non-blank lines; one after a blank line starts a paragraph."""
    lines: list[DocumentLine] = []
    blank = True
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            blank = True
            continue
        lines.append(
            DocumentLine(text=nfc(line), location=Location(line=number), starts_paragraph=blank)
        )
        blank = False
    return lines


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts."""
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    return starts


def line_of(starts: list[int], offset: int) -> int:
    """The 1-based line holding ``offset``, from :func:`line_starts`."""
    return bisect_right(starts, offset)
