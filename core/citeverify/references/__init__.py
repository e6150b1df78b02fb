"""Reference verification (seed 004): is each reference a real work, and which fields are wrong.

Parse -> search sources -> compare fields -> status, corrected APA 7 reference, graph.

>>> from citeverify.references import parse_reference
>>> parse_reference("Kuhn, T. S. (1962). The Structure of Scientific Revolutions. "
...                 "University of Chicago Press.").year
1962
"""

from citeverify.references._index import LocalIndex, record_from_work
from citeverify.references._jobs import JobStore
from citeverify.references._model import Author, ParsedReference, Record
from citeverify.references._parse import parse_bibtex, parse_reference
from citeverify.references._result import ReferenceResult, apa7
from citeverify.references._verify import ReferenceVerifier

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
