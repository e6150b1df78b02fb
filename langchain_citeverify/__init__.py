"""LangChain integration of citeverify (distribution ``langchain-citeverify``).

- :class:`CiteVerifyGuard`: a Runnable to chain after retrieval and generation in LCEL.
- :class:`CiteVerifyOutputParser`: for chains that end at the model.
- :class:`CiteVerifyTool`: an agent tool that checks a text against source passages.
- :class:`CiteVerifyReferenceTool`: an agent tool that verifies reference strings.
- :class:`CiteVerifyMiddleware`: agent middleware for LangChain 1.x's ``create_agent`` (needs the
  ``agents`` extra; imported on first use, so this package imports without ``langchain``).
- :class:`CitationBlockedError`: raised on block; both ``citeverify_core.CitationUnverifiedError``
  and LangChain's ``OutputParserException``.
"""

from typing import TYPE_CHECKING, Any

try:
    import langchain_core  # noqa: F401  (only to say what is missing)
except ImportError as exc:
    # Still a ModuleNotFoundError (code catching that keeps working), now with the fix in it.
    msg = (
        "langchain_citeverify needs LangChain: install the langchain-core distribution "
        f"(pip install langchain-core). The import failed with: {exc}"
    )
    raise ModuleNotFoundError(msg, name="langchain_core") from exc

from langchain_citeverify._common import CitationBlockedError
from langchain_citeverify.output_parsers import CiteVerifyOutputParser
from langchain_citeverify.runnables import CiteVerifyGuard
from langchain_citeverify.tools import (
    CheckAgainstSourcesInput,
    CheckReferencesInput,
    CiteVerifyReferenceTool,
    CiteVerifyTool,
)

if TYPE_CHECKING:
    from langchain_citeverify.middleware import CiteVerifyMiddleware, CiteVerifyState

#: Names imported on first use: they need ``langchain`` (the ``agents`` extra).
_LAZY = {"CiteVerifyMiddleware", "CiteVerifyState"}

__all__ = [
    "CheckAgainstSourcesInput",
    "CheckReferencesInput",
    "CitationBlockedError",
    "CiteVerifyGuard",
    "CiteVerifyMiddleware",
    "CiteVerifyOutputParser",
    "CiteVerifyReferenceTool",
    "CiteVerifyState",
    "CiteVerifyTool",
]


def __getattr__(name: str) -> Any:
    """Import the middleware on first use (it raises, naming the extra, without langchain 1.x)."""
    if name in _LAZY:
        from langchain_citeverify import middleware  # noqa: PLC0415 - needs langchain

        return getattr(middleware, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
