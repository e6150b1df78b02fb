"""field_values: the text a structured answer claims, whichever shape a framework gives it in."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Literal

from pydantic import BaseModel

from citeverify_core.engine.structured import field_values


class Mood(Enum):
    GOOD = "good"


class Answer(BaseModel):
    summary: str
    sentiment: Literal["positive", "negative"] = "positive"  # a label, not a claim
    sources: list[str] = []
    count: int = 3


@dataclasses.dataclass
class Report:
    title: str
    mood: Mood
    answer: Answer


def test_the_values_are_the_text_one_a_line_with_where_each_sits() -> None:
    report = Report("Bridges", Mood.GOOD, Answer(summary="37 were deficient.", sources=["audit"]))
    text, spans = field_values(report)
    assert text == "Bridges\n37 were deficient.\naudit"
    assert [(path, text[start:end]) for path, start, end in spans] == [
        (("title",), "Bridges"),
        (("answer", "summary"), "37 were deficient."),
        (("answer", "sources", 0), "audit"),
    ]


def test_a_mapping_as_a_provider_strategy_gives_it_and_nothing_is_empty() -> None:
    assert field_values({"answer": "Opens at nine.", "n": 2, "tags": [" ", "x"]})[0] == (
        "Opens at nine.\nx"
    )
    assert field_values(None) == ("", [])


def test_a_nesting_too_deep_is_not_walked_to_its_end() -> None:
    deep: object = "bottom"
    for _ in range(1000):
        deep = [deep]
    assert field_values(deep) == ("", [])
