"""LangChain integration of citeverify (distribution ``langchain-citeverify``).

- :class:`CiteVerifyGuard`: a Runnable to chain after retrieval and generation in LCEL.
- :class:`CiteVerifyOutputParser`: for chains that end at the model.
- :class:`CiteVerifyTool`: an agent tool that checks a text against source passages.
- :class:`CiteVerifyReferenceTool`: an agent tool that verifies reference strings.
- :class:`CitationBlockedError`: raised on block; both ``citeverify_core.CitationUnverifiedError``
  and
  LangChain's ``OutputParserException``.
"""

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

__all__ = [
    "CheckAgainstSourcesInput",
    "CheckReferencesInput",
    "CitationBlockedError",
    "CiteVerifyGuard",
    "CiteVerifyOutputParser",
    "CiteVerifyReferenceTool",
    "CiteVerifyTool",
]
