"""Reference verification: is each reference a real work, and which fields are wrong.

Parse -> search sources -> compare fields -> status, corrected APA 7 reference, graph.

>>> from citeverify_core.references import parse_reference
>>> parse_reference("Kuhn, T. S. (1962). The Structure of Scientific Revolutions. "
...                 "University of Chicago Press.").year
1962

Needs the ``references`` extra (rapidfuzz, bibtexparser): without it, importing this package
raises :class:`citeverify_core.errors.MissingExtraError`, which names the extra.
"""

from typing import TYPE_CHECKING, Any

from citeverify_core.errors import require_extra

# Every module here compares titles with rapidfuzz, so the package says what is missing at once
# rather than a submodule failing on its own import.
require_extra("references", "reference verification")

if TYPE_CHECKING:
    from citeverify_core.lookups.works import record_from_work
    from citeverify_core.references.index import LocalIndex
    from citeverify_core.references.model import Author, ParsedReference, Record
    from citeverify_core.references.parse import parse_bibtex, parse_reference
    from citeverify_core.references.result import ReferenceResult, apa7
    from citeverify_core.references.verify import ReferenceVerifier

# Imported on first access: parsing a reference needs neither SQLAlchemy (the job
# store) nor httpx (the sources).
_LAZY = {
    "Author": "citeverify_core.references.model",
    "LocalIndex": "citeverify_core.references.index",
    "ParsedReference": "citeverify_core.references.model",
    "Record": "citeverify_core.references.model",
    "ReferenceResult": "citeverify_core.references.result",
    "ReferenceVerifier": "citeverify_core.references.verify",
    "apa7": "citeverify_core.references.result",
    "parse_bibtex": "citeverify_core.references.parse",
    "parse_reference": "citeverify_core.references.parse",
    "record_from_work": "citeverify_core.lookups.works",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        msg = f"module 'citeverify_core.references' has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module  # noqa: PLC0415 - start-up time

    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Author",
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
