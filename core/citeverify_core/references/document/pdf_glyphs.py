"""Glyph names: the text of a glyph that a font without a Unicode map names only.

A font with no ToUnicode map and codes that its encoding does not name in Unicode (a Type 3
font of bitmaps from pdfTeX or dvips, a font whose /Encoding /Differences names glyphs by
TeX's names) still names its glyphs. :func:`recover_text` reads them:

- Adobe Glyph List names, "uniXXXX" and "uXXXX" (pdfminer's ``name2unicode``) and TeX's names
  the list lacks ("visiblespace", "compwordmark", "Germandbls");
- a font whose every glyph is named "a" + its own code (pdfTeX's and dvips's bitmap fonts) is
  a TeX font: the codes pdfminer could not read (it reads such a font as Adobe's
  StandardEncoding, which has nothing at OT1's ligatures or T1's accented letters) are read in
  TeX's text encoding, T1 ("ec": accented letters from 128, ligatures at 27-31, dashes at
  21-22) or OT1 ("cmr": ligatures ff fi fl ffi ffl at 11-15), whichever its codes show, and
  only for a text font. What pdfminer read is kept: OT1's en dash at 123 still reads "{".

A glyph whose name says nothing ("g17", "glyph3", "a5" in a font numbered otherwise) is not
guessed: it stays unrecovered and its line is marked unreliable. A font whose glyphs are
numbered in the order they were met ("a0", "a1", ... : Ghostscript's Type 3 fonts made from
dvips' bitmap fonts) is not read at all (:func:`renumbered`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["LOST", "glyph_names", "recover_text", "renumbered", "tex_table"]

#: What a glyph that could not be read stands as in a word's text until its line is made: the
#: line drops it and is marked unreliable (text is never invented for it).
LOST = "\ufffd"

#: TeX glyph names the Adobe Glyph List does not have.
_TEX_NAMES = {
    "visiblespace": "\u2423",
    "compwordmark": "",
    "Germandbls": "SS",
    "dotlessj": "\u0237",
    "perthousandzero": "",
}
# OT1 (Knuth's cmr text fonts) where it is not ASCII. The accents are the spacing accents the
# reader combines with their letter (pdf_words.ACCENTS).
_OT1 = {
    **dict(enumerate("ΓΔΘΛΞΠΣΥΦΨΩ")),
    11: "ff",
    12: "fi",
    13: "fl",
    14: "ffi",
    15: "ffl",
    16: "\u0131",
    17: "\u0237",
    18: "`",
    19: "\u00b4",
    20: "\u02c7",
    21: "\u02d8",
    22: "\u00af",
    23: "\u02da",
    24: "\u00b8",
    25: "ß",
    26: "æ",
    27: "œ",
    28: "ø",
    29: "Æ",
    30: "Œ",
    31: "Ø",
    32: "",
    34: "\u201d",
    39: "\u2019",
    60: "¡",
    62: "¿",
    92: "\u201c",
    94: "\u02c6",
    95: "\u02d9",
    96: "\u2018",
    123: "\u2013",
    124: "\u2014",
    125: "\u02dd",
    126: "\u02dc",
    127: "\u00a8",
}
# T1 (Cork, the "ec" fonts) where it is not ASCII.
_T1 = {
    **dict(enumerate("`\u00b4\u02c6\u02dc\u00a8\u02dd\u02da\u02c7\u02d8\u00af\u02d9\u00b8\u02db")),
    13: "\u201a",
    14: "\u2039",
    15: "\u203a",
    16: "\u201c",
    17: "\u201d",
    18: "\u201e",
    19: "«",
    20: "»",
    21: "\u2013",
    22: "\u2014",
    23: "",
    24: "",
    25: "\u0131",
    26: "\u0237",
    27: "ff",
    28: "fi",
    29: "fl",
    30: "ffi",
    31: "ffl",
    32: "\u2423",
    39: "\u2019",
    96: "\u2018",
    127: "-",
    **dict(
        enumerate(
            "ĂĄĆČĎĚĘĞĹĽŁŃŇŊŐŔŘŚŠŞŤŢŰŮŸŹŽŻĲİđ§ăąćčďěęğĺľłńňŋőŕřśšşťţűůÿźžżĳ¡¿£",
            start=128,
        )
    ),
    **{code: chr(code) for code in range(192, 256)},
    215: "Œ",
    223: "SS",
    247: "œ",
    255: "ß",
}
_TEX_CODE = re.compile(r"a([0-9]{1,3})")
_OT1_SIGNS = frozenset({11, 12, 13, 14, 15, 123, 124})
_T1_SIGNS = frozenset({16, 17, 21, 22, 27, 28, 29, 30, 31})


def glyph_names(font: Any) -> dict[int, str]:
    """The glyph names a simple font's /Encoding /Differences gives its codes (0-255)."""
    from pdfminer.pdftypes import resolve1  # noqa: PLC0415 - the extra, in the child only
    from pdfminer.psparser import PSLiteral  # noqa: PLC0415 - the extra, in the child only

    spec = getattr(font, "spec", None)
    if not isinstance(spec, dict):
        return {}
    try:
        encoding = resolve1(spec.get("Encoding"))
        differences = resolve1(encoding.get("Differences")) if isinstance(encoding, dict) else None
    except Exception:  # a malformed encoding: no names
        return {}
    names: dict[int, str] = {}
    if not isinstance(differences, list):
        return names
    code = 0
    for item in differences[:600]:  # at most 256 names and their codes
        if isinstance(item, int):
            code = item
        elif isinstance(item, PSLiteral) and 0 <= code <= 255:
            name = item.name.decode("latin-1") if isinstance(item.name, bytes) else str(item.name)
            names[code] = name
            code += 1
    return names


def renumbered(names: dict[int, str]) -> bool:
    """Whether the font names its codes "a0", "a1", "a2", ... in a run from 0 (numbered in use).

    Glyphs numbered in the order a program met them (Ghostscript's Type 3 fonts from dvips'
    bitmap fonts): such a code says nothing of its glyph: what pdfminer reads there (Adobe's
    StandardEncoding) is invented text, and the font's text is not read at all. pdfTeX names a
    bitmap font's glyphs by their TeX code, and only the codes a document uses: never a run of
    eight from 0.
    """
    return all(names.get(code) == f"a{code}" for code in range(8))


def tex_table(names: dict[int, str]) -> dict[int, str] | None:
    """The codes' text when every named glyph is "a" + its code (a TeX font), else ``None``."""
    codes = {c for c, n in names.items() if n != ".notdef"}
    if not codes or renumbered(names):
        return None
    for code in codes:
        match = _TEX_CODE.fullmatch(names[code])
        if match is None or int(match.group(1)) != code:
            return None
    if any(c >= 128 for c in codes):
        table = _T1  # only T1 of TeX's 128- and 256-glyph text and math fonts goes past 127
    elif codes & {44, 46} and codes & {40, 41, 45}:
        # A text font: a comma or period and a parenthesis or hyphen. A math italic font (cmmi)
        # has Greek letters where OT1 has its ligatures and no parenthesis or hyphen: it is
        # not decoded (its gaps stay unread).
        table = _T1 if codes & _T1_SIGNS and not codes & _OT1_SIGNS else _OT1
    elif (table_of_words := _words_table(codes)) is not None:
        table = table_of_words
    else:
        return None
    return {code: table.get(code, chr(code) if 33 <= code <= 126 else "") for code in codes}


# Letters and the signs a text sets (digits, quotes, parentheses, ",", "-", ".", "/", ":",
# ";", "?", "!"): no math italic font's Greek (0-40) or arrows.
_LETTERS = frozenset(range(65, 91)) | frozenset(range(97, 123))
_TEXT_SIGNS = frozenset({33, 39, 40, 41, 44, 45, 46, 47, 58, 59, 63, 96}) | frozenset(range(48, 58))


def _words_table(codes: set[int]) -> dict[int, str] | None:
    """T1 or OT1 for a font that set only words: a ligature, eight lowercase letters, signs.

    A title in its own italic bitmap font ("A{ff}ymetrix Microarray Suite", "di{ff}erential
    ... pro{fi}ling") may show no parenthesis or hyphen. A math italic font has Greek where
    the ligatures are and sets a few letters as symbols: one whose every code is a ligature,
    a letter or a text sign is read as text (a math font so used would read "ff" for σ).
    """
    if sum(97 <= c <= 122 for c in codes) < 8:
        return None
    t1 = codes & set(range(27, 32))
    ot1 = codes & set(range(11, 16))
    if t1 and not ot1 and codes <= _LETTERS | _TEXT_SIGNS | t1 | {16, 17, 21, 22}:
        return _T1
    if ot1 and not t1 and codes <= _LETTERS | _TEXT_SIGNS | ot1 | {123, 124}:
        return _OT1
    return None


def recover_text(name: str) -> str | None:
    """The text a glyph name stands for, or ``None`` when the name does not say."""
    if name in _TEX_NAMES:
        return _TEX_NAMES[name]
    from pdfminer.encodingdb import name2unicode  # noqa: PLC0415 - the extra, in the child only

    try:
        text = name2unicode(name)
    except Exception:  # an unknown name (pdfminer raises its own KeyError) or a bad number
        return None
    # A private-use code point ("dotlessj" in Adobe's list) is no text either.
    if not text or any("\ue000" <= ch <= "\uf8ff" for ch in text):
        return None
    return text
