"""LangChain integration of citeverify (``pip install citeverify[langchain]``).

- :class:`CiteVerifyGuard`: a Runnable to chain after retrieval and generation in LCEL.
- :class:`CiteVerifyOutputParser`: for chains that end at the model.
- :class:`CiteVerifyTool`: an agent tool that checks a text against source passages.
- :class:`CiteVerifyReferenceTool`: an agent tool that verifies reference strings.
- :class:`CitationBlockedError`: raised on block; both ``citeverify.CitationUnverifiedError`` and
  LangChain's ``OutputParserException``.
"""

try:
    import langchain_core  # noqa: F401  (only to fail early, with the fix in the message)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    msg = (
        "langchain_citeverify needs LangChain's core package, which is not installed: "
        "pip install langchain-core"
    )
    raise ImportError(msg, name=exc.name) from exc

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
