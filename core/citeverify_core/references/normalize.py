"""Text normalization shared by the index and the comparisons."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["TAGS", "norm"]

#: JATS and HTML markup in titles and strings ("<italic>", "<title>"), from deposits and from
#: reference strings.
TAGS = re.compile(r"</?[A-Za-z][\w:-]{0,20}(?:\s[^<>]{0,80})?>")


def norm(text: str) -> str:
    """Casefolded, accents and punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(re.findall(r"[^\W_]+", text))
