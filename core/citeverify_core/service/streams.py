"""A held SSE stream assembled into the response it stands for, and when it may be replayed.

A buffered stream is decided by :func:`citeverify_core.engine.exchange.verify_exchange` on the
non-stream
response the stream assembles into (:func:`assemble_stream`), so that a stream and a JSON answer
go through one field table. The stream's own bytes are replayed only when they show nothing that
the JSON decision would not show (:func:`replayable`).

Everything here is bounded by the stream (at most ``max_stream_bytes``) and iterative: an event
may nest deeper than Python recurses.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from citeverify_core.engine.exchange import (
    FINISH_REASONS,
    ITEM_STATUSES,
    MAX_CHOICES,
    ONE_TOKEN,
    RESPONSES_KEPT,
    GatewayDecision,
    extract_answers,
)
from citeverify_core.errors import InputError

__all__ = ["UNKNOWN_FIELD", "Assembled", "assemble_stream", "replayable"]

#: The top-level field of an assembled response that holds the strings of events, or event
#: fields, the assembler does not know. No policy keeps it: under redact and block it is removed
#: like any unknown field, and its presence stops a replay.
UNKNOWN_FIELD = "x_citeverify_stream_unknown"
#: Most tool calls of one choice, and most output items, content parts or summary parts, a
#: stream may index; an index past it is a 502 (as more than ``MAX_CHOICES`` choices is).
MAX_STREAM_INDEX = 256
#: Keys whose value is an identifier or a tag, not text, while it is one token.
_IDENTIFIER_KEYS = frozenset(
    {
        "id", "object", "model", "system_fingerprint", "service_tier", "role", "finish_reason",
        "type", "name", "call_id", "item_id", "status", "obfuscation",
    }
)  # fmt: skip
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")
_LINE = re.compile(r"\r\n|\r|\n")
#: A line's end followed by blank lines: where events end.
_BLANK = re.compile(r"(?:\r\n|\r(?!\n)|\n){2,}")
_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
_START_EVENTS = ("response.created", "response.in_progress", "response.queued")


@dataclass
class Assembled:
    """A stream as the non-stream response it stands for.

    Attributes:
        response: The Chat Completions or Responses body, with ``UNKNOWN_FIELD`` when some
            event or field was not understood.
        answer_only: The stream carries the answer's content and nothing else: no refusal, tool
            call, reasoning, logprobs, annotation, other output item, or unknown field.
        shown: The texts a client reads in the stream's bytes that a replay must find in the
            decision's response: the answers of a chat stream (its assembler marks every other
            field), every text of a Responses stream's events besides identifiers (the deltas
            of one field joined).
    """

    response: dict[str, Any]
    answer_only: bool
    shown: list[str] = field(default_factory=list)


def sse_events(raw: bytes) -> Iterator[tuple[str, str, list[str]]]:
    """``(event name, data, other texts)`` of each event of an SSE body, as a client reads them.

    Lines end at CR, LF or CRLF only (not at the other line breaks ``str.splitlines`` knows,
    which a JSON string may hold as they are); the ``data`` lines of one event are joined with
    LF; an event not closed by a blank line at the end is still read. The other texts are what
    SSE clients skip but the bytes still show: comments, ``id`` and unknown fields. Lazily, a
    block of lines between blank lines at a time: the stream may hold millions of lines.
    """
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    start = 0
    for blank in itertools.chain(_BLANK.finditer(text), [None]):
        block = text[start : blank.start() if blank else len(text)]
        start = blank.end() if blank else len(text)
        name, data, other = "", list[str](), list[str]()
        for line in _LINE.split(block):
            if not line:  # a blank line inside the block (at its start): the event ends
                if data or other:
                    yield name, "\n".join(data), other
                name, data, other = "", [], []
                continue
            key, colon, value = line.partition(":")
            if colon and value.startswith(" "):
                value = value[1:]
            if key == "data":
                data.append(value)
            elif key == "event":
                name = value
            else:
                other.append(value if colon else key)
        if data or other:
            yield name, "\n".join(data), other


def _index(value: Any, limit: int, what: str) -> int | None:
    """A non-negative integer index below ``limit``; None when it is not one.

    Raises:
        InputError: an index past ``limit`` (the upstream's fault: a 502).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    if value >= limit:
        msg = f"the upstream stream holds more than {limit} {what}"
        raise InputError(msg, path=f"response.{what}")
    return value


def _strings(node: Any) -> list[str]:
    """Every string in ``node`` (values, and keys that are not identifiers), iteratively."""
    out: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            for key, value in item.items():
                if isinstance(key, str) and not _KEY.fullmatch(key):
                    out.append(key)
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return out


class _Shown:
    """The texts a client reads in the events: each delta field joined, other strings one by one.

    Identifiers and tags (one token under an identifier key) are left out: the JSON decision
    keeps or drops them by the field table, and the assemblers already mark a tag they do not
    know as unknown.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.joined: dict[tuple[Any, ...], list[str]] = {}
        self.single: list[str] = []

    def feed(self, event: Any) -> None:
        """Take the texts of one event (iteratively: it may nest deeper than Python recurses)."""
        scope: tuple[Any, ...] = ()
        if self.kind == "responses" and isinstance(event, Mapping):
            scope = tuple(
                event.get(k) for k in ("type", "output_index", "content_index", "summary_index")
            )
        stack: list[tuple[tuple[Any, ...], Any, bool]] = [(scope, event, False)]
        while stack:
            path, node, in_delta = stack.pop()
            if isinstance(node, str):
                if in_delta:
                    self.joined.setdefault(path, []).append(node)
                elif node:
                    self.single.append(node)
            elif isinstance(node, Mapping):
                for key, value in node.items():
                    if not isinstance(key, str):
                        continue
                    if not _KEY.fullmatch(key):
                        self.single.append(key)
                    if (
                        key in _IDENTIFIER_KEYS
                        and isinstance(value, str)
                        and ONE_TOKEN.fullmatch(value) is not None
                    ):
                        continue
                    # Chat: every field under a choice's ``delta``; Responses: an event's
                    # ``delta``. Their pieces are read joined, by the field they extend.
                    stack.append((_deeper(path, key), value, in_delta or key == "delta"))
            elif isinstance(node, list):
                for position, value in enumerate(node):
                    index = value.get("index") if isinstance(value, Mapping) else None
                    place = index if isinstance(index, int) else position
                    stack.append((_deeper(path, place), value, in_delta))

    def texts(self) -> list[str]:
        """Everything taken, the deltas of one field joined."""
        return self.single + ["".join(parts) for parts in self.joined.values() if any(parts)]


#: A path deeper than this names its field by its first steps only. The fields the assemblers
#: know are shallower; what nests deeper is unknown (no replay) whatever its path, and a path as
#: long as the nesting would make an event of depth n cost n * n.
_MAX_PATH = 12


def _deeper(path: tuple[Any, ...], step: Any) -> tuple[Any, ...]:
    return (*path, step) if len(path) < _MAX_PATH else path


def _parse(raw: bytes) -> Iterator[tuple[bool, Any]]:
    """``(True, event)`` for each JSON event, ``(False, value)`` for what is not one.

    What is not a JSON event (data that is not JSON; an event name, comment, id or other SSE
    field that is not one token) is text the stream shows that no field holds: it is kept as
    unknown. So is every value of a duplicate key but the last: the event is read as JSON
    readers read it (the last value wins), and the values before it are in the bytes only.
    """
    shadowed: list[dict[str, Any]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            shadowed.extend(_shadowed(items))
        return obj

    # One decoder for the stream's events (``json.loads`` with an option builds one per call);
    # its hook sees the duplicates, which a dict does not keep.
    decoder = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=pairs)
    for name, data, other in sse_events(raw):
        for tag in (name, *other):
            if tag and not ONE_TOKEN.fullmatch(tag):
                yield False, tag
        if not data.strip() or data.strip() == "[DONE]":
            continue
        try:
            event = decoder.decode(data)
        except (ValueError, RecursionError):
            shadowed.clear()
            yield False, data
            continue
        if shadowed:
            yield False, list(shadowed)
            shadowed.clear()
        yield True, event


def _shadowed(items: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The pairs of an object that a later pair with the same key overrides."""
    last = {key: i for i, (key, _) in enumerate(items)}
    return [{key: value} for i, (key, value) in enumerate(items) if last[key] != i]


def _no_constant(name: str) -> Any:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def assemble_stream(kind: str, raw: bytes, model: str) -> Assembled:
    """The response a Chat Completions or Responses stream stands for.

    Args:
        kind: ``chat`` or ``responses``.
        raw: The whole SSE body, decompressed.
        model: The request's model, for a stream whose events name none.

    Raises:
        InputError: the stream indexes more choices, tool calls or items than are checked.
    """
    # The chat assembler reads every field of a chunk and marks each it does not know, so the
    # answers are all an answer-only chat stream shows. Responses streams repeat their texts
    # (deltas, done events, parts, items, the final response): what a client reads there is
    # taken as well, while the stream can still be replayed.
    assembler: _ChatAssembler | _ResponsesAssembler
    assembler = _ChatAssembler(model) if kind == "chat" else _ResponsesAssembler(model)
    shown = _Shown(kind)
    for is_event, value in _parse(raw):
        if not is_event:
            assembler.unknown.append(value)
            continue
        assembler.feed(value)
        if kind == "responses" and not assembler.extras and not assembler.unknown:
            shown.feed(value)
    return assembler.result(shown.texts())


class _ChatAssembler:
    """Chat Completions chunks joined into one ``chat.completion``, by choice ``index``."""

    def __init__(self, model: str) -> None:
        self.top: dict[str, Any] = {"object": "chat.completion"}
        self.model = model
        self.choices: dict[int, dict[str, Any]] = {}
        self.unknown: list[Any] = []
        self.extras = False

    def feed(self, event: Any) -> None:
        """Take one event."""
        if isinstance(event, dict):
            self._chunk(event)
        else:
            self.unknown.append(event)

    def result(self, shown: list[str]) -> Assembled:
        """The assembled ``chat.completion``."""
        response = dict(self.top)
        response.setdefault("model", self.model)
        order = sorted(self.choices) or [0]
        response["choices"] = [self._choice(i, self.choices.get(i, {})) for i in order]
        strings = _strings(self.unknown)
        if strings:
            response[UNKNOWN_FIELD] = strings
        answers = [c["message"]["content"] for c in response["choices"]]
        shown = shown + [text for text in answers if text]
        return Assembled(response, not self.extras and not self.unknown, shown)

    def _chunk(self, event: dict[str, Any]) -> None:
        for key, value in event.items():
            if key == "choices" and isinstance(value, list):
                for choice in value:
                    self._choice_delta(choice)
            elif key == "object" and value == "chat.completion.chunk":
                pass
            elif key in ("id", "model", "system_fingerprint", "service_tier") and (
                value is None or (isinstance(value, str) and ONE_TOKEN.fullmatch(value))
            ):
                # One value for the whole stream: a chunk that names another one shows text
                # that the assembled response does not hold.
                if value is not None and self.top.setdefault(key, value) != value:
                    self.unknown.append(value)
            elif key == "created" and isinstance(value, int):
                self.top.setdefault("created", value)
            elif key == "usage" and (value is None or isinstance(value, dict)):
                if value is not None:
                    self.top["usage"] = value
            elif key == "obfuscation" and isinstance(value, str) and ONE_TOKEN.fullmatch(value):
                pass  # padding against length side channels, not text
            else:
                self.unknown.append({key: value})

    def _choice_delta(self, choice: Any) -> None:
        index = (
            _index(choice.get("index"), MAX_CHOICES, "choices")
            if isinstance(choice, dict)
            else None
        )
        if index is None:
            self.unknown.append(choice)
            return
        state = self.choices.setdefault(index, {})
        for key, value in choice.items():
            if key == "index":
                continue
            if key == "delta" and isinstance(value, dict):
                self._delta(state, value)
            elif key == "finish_reason" and (value is None or isinstance(value, str)):
                if value is not None:
                    state["finish_reason"] = value
                    if value not in FINISH_REASONS:
                        self.unknown.append(value)
            elif key == "logprobs" and (value is None or isinstance(value, dict)):
                if value:
                    self._logprobs(state, value)
            elif value is not None:
                self.unknown.append({key: value})

    def _logprobs(self, state: dict[str, Any], value: dict[str, Any]) -> None:
        logprobs = state.setdefault("logprobs", {"content": None, "refusal": None})
        for key, tokens in value.items():
            if key in ("content", "refusal") and isinstance(tokens, list):
                if logprobs[key] is None:
                    logprobs[key] = []
                logprobs[key].extend(tokens)
                self.extras = self.extras or bool(tokens)
            elif tokens is not None:
                self.unknown.append({key: tokens})

    def _delta(self, state: dict[str, Any], delta: dict[str, Any]) -> None:
        for key, value in delta.items():
            if value is None:
                continue
            if key == "role" and value == "assistant":
                continue
            if key == "content" and isinstance(value, str):
                state.setdefault("content", []).append(value)
            elif key in ("refusal", "reasoning_content", "reasoning") and isinstance(value, str):
                state.setdefault(key, []).append(value)
                self.extras = True
            elif key == "tool_calls" and isinstance(value, list):
                for call in value:
                    self._tool_call(state, call)
            elif key == "function_call" and isinstance(value, dict):
                self.extras = True
                legacy = state.setdefault("function_call", {})
                self._function(legacy, value)
            else:
                self.unknown.append({key: value})

    def _tool_call(self, state: dict[str, Any], call: Any) -> None:
        index = (
            _index(call.get("index"), MAX_STREAM_INDEX, "tool_calls")
            if isinstance(call, dict)
            else None
        )
        if index is None:
            self.unknown.append(call)
            return
        self.extras = True
        merged = state.setdefault("tool_calls", {}).setdefault(index, {})
        for key, value in call.items():
            if key == "index" or value is None:
                continue
            if key == "id" and isinstance(value, str):
                # Joined, as the openai package accumulates a streamed tool call.
                merged["id"] = merged.get("id", "") + value
            elif key == "type" and isinstance(value, str):
                merged["type"] = value
            elif key == "function" and isinstance(value, dict):
                self._function(merged.setdefault("function", {}), value)
            else:
                self.unknown.append({key: value})

    def _function(self, merged: dict[str, Any], function: dict[str, Any]) -> None:
        for key, value in function.items():
            if value is None:
                continue
            if key in ("name", "arguments") and isinstance(value, str):
                merged[key] = merged.get(key, "") + value
            else:
                self.unknown.append({key: value})

    def _choice(self, index: int, state: dict[str, Any]) -> dict[str, Any]:
        content = state.get("content")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if content is None else "".join(content),
        }
        for key in ("refusal", "reasoning_content", "reasoning"):
            if key in state:
                message[key] = "".join(state[key])
        calls = state.get("tool_calls")
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "type": call.get("type", "function"),
                    "function": {
                        "name": call.get("function", {}).get("name"),
                        "arguments": call.get("function", {}).get("arguments", ""),
                    },
                }
                for _, call in sorted(calls.items())
            ]
        if "function_call" in state:
            legacy = state["function_call"]
            message["function_call"] = {
                "name": legacy.get("name"),
                "arguments": legacy.get("arguments", ""),
            }
        choice: dict[str, Any] = {
            "index": index,
            "message": message,
            "finish_reason": state.get("finish_reason"),
        }
        if "logprobs" in state:
            choice["logprobs"] = state["logprobs"]
        return choice


#: The Responses events an answer-only stream is made of (besides the start and final events).
_ANSWER_EVENTS = frozenset(
    {
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.delta",
        "response.output_text.done",
    }
)
#: Delta and done events of other texts: ``(family, delta type, done type, done's text key)``.
_TEXT_EVENTS = {
    "response.refusal.delta": ("refusal", "delta"),
    "response.refusal.done": ("refusal", "refusal"),
    "response.function_call_arguments.delta": ("arguments", "delta"),
    "response.function_call_arguments.done": ("arguments", "arguments"),
    "response.custom_tool_call_input.delta": ("input", "delta"),
    "response.custom_tool_call_input.done": ("input", "input"),
    "response.reasoning_summary_text.delta": ("summary", "delta"),
    "response.reasoning_summary_text.done": ("summary", "text"),
    "response.reasoning_text.delta": ("reasoning", "delta"),
    "response.reasoning_text.done": ("reasoning", "text"),
}


class _ResponsesAssembler:
    """Responses events as one ``response``: the final event's, else built from the events."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.final: dict[str, Any] | None = None
        self.start: dict[str, Any] | None = None
        self.items: dict[int, dict[str, Any]] = {}
        self.parts: dict[tuple[int, int], dict[str, Any]] = {}
        # (family, output_index, content or summary index) -> pieces, and the done texts.
        self.deltas: dict[tuple[str, int, int], list[str]] = {}
        self.done: dict[tuple[str, int, int], str] = {}
        self.annotations: dict[tuple[int, int], list[Any]] = {}
        self.logprobs: dict[tuple[int, int], list[Any]] = {}
        self.unknown: list[Any] = []
        self.extras = False

    def feed(self, event: Any) -> None:
        """Take one event."""
        if isinstance(event, dict):
            self._event(event)
        else:
            self.unknown.append(event)

    def result(self, shown: list[str]) -> Assembled:
        """The final event's ``response``, else one built from the events."""
        if self.final is not None:
            response = dict(self.final)
        else:
            response = {k: v for k, v in (self.start or {}).items() if k != "output"}
            response.setdefault("object", "response")
            response.setdefault("model", self.model)
            response["output"] = self._output()
        strings = _strings(self.unknown)
        if strings:
            response[UNKNOWN_FIELD] = strings
        answer_only = not self.extras and not self.unknown and _answer_only(response)
        return Assembled(response, answer_only, shown)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        known = {"type", "sequence_number", "item_id", "output_index", "content_index"}
        if kind in _FINAL_EVENTS and isinstance(event.get("response"), dict):
            self.final = event["response"]
            known = {"type", "sequence_number", "response"}
        elif kind in _START_EVENTS and isinstance(event.get("response"), dict):
            start = event["response"]
            if start.get("output"):  # an answer before it began: not part of the response
                self.unknown.append(start["output"])
            self.start = start
            known = {"type", "sequence_number", "response"}
        elif kind in _ANSWER_EVENTS or kind in _TEXT_EVENTS:
            known = self._item_event(kind, event, known)
        elif kind == "response.output_text.annotation.added":
            self.extras = True
            place = self._place(event, "content_index")
            if place is not None:
                self.annotations.setdefault(place, []).append(event.get("annotation"))
            known |= {"annotation", "annotation_index"}
        elif kind in (
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_part.done",
        ):
            self.extras = True
            known |= {"summary_index", "part"}
            self._place(event, "summary_index")
        else:
            known = set()
        for key, value in event.items():
            if key == "obfuscation" and isinstance(value, str) and ONE_TOKEN.fullmatch(value):
                continue  # padding against length side channels, not text
            if key not in known and value is not None:
                self.unknown.append({key: value})

    def _place(self, event: dict[str, Any], inner: str) -> tuple[int, int] | None:
        output = _index(event.get("output_index"), MAX_STREAM_INDEX, "output")
        position = _index(event.get(inner, 0), MAX_STREAM_INDEX, "content")
        if output is None or position is None:
            self.unknown.append(event)
            return None
        return output, position

    def _item_event(self, kind: str, event: dict[str, Any], known: set[str]) -> set[str]:
        if kind in ("response.output_item.added", "response.output_item.done"):
            output = _index(event.get("output_index"), MAX_STREAM_INDEX, "output")
            item = event.get("item")
            if output is None or not isinstance(item, dict):
                return known
            self.items[output] = item
            if item.get("type", "message") != "message":
                self.extras = True
            return known | {"item"}
        if kind in ("response.content_part.added", "response.content_part.done"):
            key = self._place(event, "content_index")
            part = event.get("part")
            if key is None or not isinstance(part, dict):
                return known
            self.parts[key] = part
            return known | {"part"}
        if kind in ("response.output_text.delta", "response.output_text.done"):
            family, text_key = "text", "delta" if kind.endswith("delta") else "text"
            inner = "content_index"
        else:
            family, text_key = _TEXT_EVENTS[kind]
            inner = "summary_index" if family == "summary" else "content_index"
            self.extras = True
        key = self._place(event, inner)
        text = event.get(text_key)
        if key is None or not isinstance(text, str):
            return known
        place = (family, *key)
        if kind.endswith(".delta"):
            self.deltas.setdefault(place, []).append(text)
        else:
            self.done[place] = text
        if family == "text" and isinstance(event.get("logprobs"), list | None):
            if event.get("logprobs"):
                self.extras = True
                self.logprobs.setdefault(key, []).extend(event["logprobs"])
            known = known | {"logprobs"}
        return known | {text_key, "summary_index"}

    def _text(self, family: str, output: int, position: int) -> str | None:
        place = (family, output, position)
        if place in self.done:
            return self.done[place]
        if place in self.deltas:
            return "".join(self.deltas[place])
        return None

    def _output(self) -> list[dict[str, Any]]:
        """``output`` built from the item, part, delta and done events (no final event)."""
        places = {key[1] for key in self.deltas} | {key[1] for key in self.done}
        places |= set(self.items) | {key[0] for key in self.parts}
        output: list[dict[str, Any]] = []
        for i in sorted(places):
            item = dict(self.items.get(i, {}))
            families = {key[0] for key in (*self.deltas, *self.done) if key[1] == i}
            kind = item.get("type") or (
                "function_call"
                if "arguments" in families
                else "custom_tool_call"
                if "input" in families
                else "reasoning"
                if families & {"summary", "reasoning"}
                else "message"
            )
            item["type"] = kind
            if kind == "message":
                item.setdefault("role", "assistant")
                item["content"] = self._parts(i, item.get("content"))
            elif kind == "function_call":
                arguments = self._text("arguments", i, 0)
                if arguments is not None:
                    item["arguments"] = arguments
            elif kind == "custom_tool_call":
                text = self._text("input", i, 0)
                if text is not None:
                    item["input"] = text
            elif kind == "reasoning":
                summary = [
                    {"type": "summary_text", "text": text}
                    for j in range(MAX_STREAM_INDEX)
                    if (text := self._text("summary", i, j)) is not None
                ]
                if summary:
                    item["summary"] = summary
            output.append(item)
        return output

    def _parts(self, output: int, content: Any) -> list[Any]:
        """A message item's parts: the item's, else the part events', with the streamed texts."""
        parts: dict[int, Any] = dict(enumerate(content)) if isinstance(content, list) else {}
        for (i, j), part in self.parts.items():
            if i == output:
                parts.setdefault(j, part)
        positions = {key[2] for key in (*self.deltas, *self.done) if key[1] == output}
        for j in positions:
            part = dict(parts[j]) if isinstance(parts.get(j), dict) else {}
            if (text := self._text("text", output, j)) is not None:
                part.setdefault("type", "output_text")
                part["text"] = text
                part.setdefault("annotations", [])
            if (refusal := self._text("refusal", output, j)) is not None:
                part["type"] = "refusal"
                part["refusal"] = refusal
            parts[j] = part
        for (i, j), added in self.annotations.items():
            if i == output and isinstance(parts.get(j), dict):
                parts[j] = {**parts[j], "annotations": added}
        for (i, j), logprobs in self.logprobs.items():
            if i == output and isinstance(parts.get(j), dict):
                parts[j] = {**parts[j], "logprobs": logprobs}
        return [parts[j] for j in sorted(parts)]


#: The fields of an answer-only Responses ``output_text`` part (empty lists carry nothing).
_PART_FIELDS = frozenset({"type", "text", "annotations", "logprobs"})
_ITEM_FIELDS = frozenset({"type", "id", "role", "status", "content"})


def _answer_only(response: Mapping[str, Any]) -> bool:
    """A Responses body holding message items of ``output_text`` parts and known fields only."""
    if any(k not in RESPONSES_KEPT and k not in ("output", "reasoning") for k in response):
        return False
    output = response.get("output")
    if not isinstance(output, list):
        return False
    for item in output:
        if not isinstance(item, Mapping) or item.get("type", "message") != "message":
            return False
        if set(item) - _ITEM_FIELDS or item.get("role", "assistant") != "assistant":
            return False
        if item.get("status") not in (None, *ITEM_STATUSES):
            return False
        content = item.get("content")
        for part in content if isinstance(content, list) else [content]:
            if not isinstance(part, Mapping) or part.get("type") != "output_text":
                return False
            if set(part) - _PART_FIELDS or part.get("annotations") or part.get("logprobs"):
                return False
    return True


def replayable(assembled: Assembled, decision: GatewayDecision) -> bool:
    """Whether the stream's bytes may be sent as they came under a redact or block policy.

    Only an allowed stream that carries the answer alone, whose every text the client would
    read is also in the JSON decision's response (so the decision removed nothing and redacted
    nothing), is replayed.
    """
    status, _ = decision.to_http()
    if status != 200 or not assembled.answer_only or UNKNOWN_FIELD in assembled.response:
        return False
    try:
        answers = extract_answers(assembled.response)
    except InputError:
        return False
    if decision.result is None or decision.result.answer not in answers:
        return False
    kept = set(_strings(decision.response))
    kept.update(_walk_keys(decision.response))
    return all(text in kept for text in assembled.shown if text)


def _walk_keys(node: Any) -> Iterator[str]:
    """Every key of ``node``'s objects, iteratively."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, value in item.items():
                if isinstance(key, str):
                    yield key
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
