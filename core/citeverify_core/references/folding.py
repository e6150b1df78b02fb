"""Folding bibliographic strings (titles, names, venues) for comparison, and markup in them.

Not :func:`citeverify_core.text.normalize`: that is the grounding form of words (NFKC, casefold,
accents kept, as the answer and its documents are compared). Reference metadata is compared
accent-insensitively ("Müller" is "Muller" in an index that lost its accents), with punctuation
dropped, so it has its own fold here, next to the parser, index and comparisons that use it.
"""

from __future__ import annotations

import html
import re
import unicodedata

__all__ = ["TAGS", "fold"]

#: JATS and HTML markup in titles and strings ("<italic>", "<title>"), from deposits and from
#: reference strings.
TAGS = re.compile(r"</?[A-Za-z][\w:-]{0,20}(?:\s[^<>]{0,80})?>")


#: Control characters (C0 and C1, but not whitespace): dropped, not word separators. A UTF-8
#: en dash read as Latin-1 leaves "Carbonâ\x80\x93Hydrogen" in a deposit, and the same title
#: in a reference string that lost the controls reads "CarbonâHydrogen".
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x84\x86-\x9f]")


def fold(text: str) -> str:
    """Casefolded, accents, control characters and punctuation removed, whitespace collapsed.

    Character references are decoded first, as the parser decodes them in reference strings.
    """
    text = _CONTROLS.sub("", text)
    if "&" in text and ";" in text:
        text = html.unescape(text)  # "Soci&#233;t&#233;" in a deposit is "Société"
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(re.findall(r"[^\W_]+", text))
