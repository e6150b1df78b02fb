"""The text a structured answer claims: its free-text string values, one a line, in field order.

A framework's structured output (a pydantic model from LlamaIndex's ``output_cls``, the
``structured_response`` of a LangChain agent's ``response_format``: a model, a dataclass or a
mapping) is verified by what it says, not by its JSON: the JSON would verify the field names and
the punctuation too (a ``"name":`` the sources never say). The adapters share this one reading.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum
from typing import Any, Literal, get_args, get_origin

__all__ = ["FieldSpan", "field_values"]

#: Where each verified value of a structured answer sits: its path in the answer (field names
#: and list indices) and its ``[start, end)`` span in the text that is verified.
FieldSpan = tuple[tuple[str | int, ...], int, int]

#: Deeper than this, a structured answer is not walked further (a cycle, a hostile nesting).
_MAX_DEPTH = 64


def field_values(value: Any) -> tuple[str, list[FieldSpan]]:
    """The text of a structured answer, and where each of its values sits in it.

    Pydantic models (by their declared fields), dataclasses, mappings and sequences are walked.
    Numbers, booleans and ``None`` are not text claims, and neither are labels picked from a
    fixed set (an ``Enum`` member, a model field such as ``sentiment: Literal["positive",
    "negative"]``): none of these is verified.
    """
    leaves: list[tuple[tuple[str | int, ...], str]] = []

    def walk(item: Any, path: tuple[str | int, ...], labels: bool) -> None:
        if len(path) > _MAX_DEPTH or isinstance(item, Enum):
            return
        fields = getattr(type(item), "model_fields", None)  # a pydantic model
        if isinstance(fields, Mapping) and not isinstance(item, type):
            for name, info in fields.items():
                annotation = getattr(info, "annotation", None)
                walk(getattr(item, name, None), (*path, name), _has_literal(annotation))
        elif isinstance(item, str):
            if item.strip() and not labels:
                leaves.append((path, item))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            for f in dataclasses.fields(item):
                walk(getattr(item, f.name), (*path, f.name), _has_literal(f.type))
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                walk(inner, (*path, key), labels)  # the key as it is: the path finds it again
        elif isinstance(item, list | tuple):
            for index, inner in enumerate(item):
                walk(inner, (*path, index), labels)

    if value is not None:
        walk(value, (), False)
    spans: list[FieldSpan] = []
    start = 0
    for path, text in leaves:
        spans.append((path, start, start + len(text)))
        start += len(text) + 1  # the newline that ends a value also ends its last claim
    return "\n".join(text for _, text in leaves), spans


def _has_literal(annotation: Any) -> bool:
    if get_origin(annotation) is Literal:
        return True
    return any(_has_literal(arg) for arg in get_args(annotation))
