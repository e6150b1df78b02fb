"""Text normalization shared by the index and the comparisons."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["norm"]


def norm(text: str) -> str:
    """Casefolded, accents and punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(re.findall(r"[^\W_]+", text))
