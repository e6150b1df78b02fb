"""Reference verification (seed 004): is each reference a real work, and which fields are wrong.

Parse -> search sources -> compare fields -> status, corrected APA 7 reference, graph.

>>> from citeverify.references import parse_reference
>>> parse_reference("Kuhn, T. S. (1962). The Structure of Scientific Revolutions. "
...                 "University of Chicago Press.").year
1962
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeverify.references._index import LocalIndex, record_from_work
    from citeverify.references._jobs import JobStore
    from citeverify.references._model import Author, ParsedReference, Record
    from citeverify.references._parse import parse_bibtex, parse_reference
    from citeverify.references._result import ReferenceResult, apa7
    from citeverify.references._verify import ReferenceVerifier

# Imported on first access (issue 14): parsing a reference needs neither SQLAlchemy (the job
# store) nor httpx (the sources).
_LAZY = {
    "Author": "citeverify.references._model",
    "JobStore": "citeverify.references._jobs",
    "LocalIndex": "citeverify.references._index",
    "ParsedReference": "citeverify.references._model",
    "Record": "citeverify.references._model",
    "ReferenceResult": "citeverify.references._result",
    "ReferenceVerifier": "citeverify.references._verify",
    "apa7": "citeverify.references._result",
    "parse_bibtex": "citeverify.references._parse",
    "parse_reference": "citeverify.references._parse",
    "record_from_work": "citeverify.references._index",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        msg = f"module 'citeverify.references' has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module  # noqa: PLC0415

    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Author",
    "JobStore",
    "LocalIndex",
    "ParsedReference",
    "Record",
    "ReferenceResult",
    "ReferenceVerifier",
    "apa7",
    "parse_bibtex",
    "parse_reference",
    "record_from_work",
]
