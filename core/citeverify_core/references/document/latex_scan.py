r"""Low-level LaTeX scanning shared by the LaTeX modules: groups, options, spaces, comments.

Every helper here is linear in what it reads and bounded where it may be given a whole document
(an unclosed ``{`` or ``[`` must not make each later call rescan to the end).
"""

from __future__ import annotations

import re

__all__ = ["bracket_end", "group_end", "skip_options", "skip_space", "strip_comment"]

_BRACE = re.compile(r"\\.|[{}]", re.S)
_BRACKET = re.compile(r"\\.|[{}\]]", re.S)


def group_end(s: str, i: int, limit: int | None = None) -> int:
    """The index after the ``}`` closing the group opened at ``s[i] == "{"``.

    The end of ``s`` (or ``i + limit``) when the group is not closed.
    """
    depth = 0
    n = len(s) if limit is None else min(len(s), i + limit)
    j = i
    while True:
        m = _BRACE.search(s, j, n)
        if m is None:
            return n
        c = m.group(0)
        j = m.end()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j
        # "\{", "\}", "\\" are skipped whole by the pattern


def bracket_end(s: str, i: int, limit: int = 2000) -> int:
    """The index after the ``]`` closing the option opened at ``s[i] == "["``, or -1.

    A ``]`` inside braces does not close it (``[{a]b}]``); -1 when none closes it within
    ``limit`` characters.
    """
    depth = 0
    n = min(len(s), i + limit)
    j = i + 1
    while True:
        m = _BRACKET.search(s, j, n)
        if m is None:
            return -1
        c = m.group(0)
        j = m.end()
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == "]" and depth == 0:
            return j


def skip_space(s: str, i: int, newlines: bool = False) -> int:
    """After the spaces and tabs at ``s[i:]`` (and newlines, with ``newlines``)."""
    blank = " \t\n\r" if newlines else " \t"
    n = len(s)
    while i < n and s[i] in blank:
        i += 1
    return i


def skip_options(s: str, i: int) -> int:
    """After ``[...]`` options (at most two, each at most 300 characters), if any."""
    for _ in range(2):
        j = skip_space(s, i)
        if j < len(s) and s[j] == "[":
            close = s.find("]", j, j + 300)
            if close < 0:
                return i
            i = close + 1
        else:
            break
    return i


def strip_comment(line: str) -> str:
    r"""The line without its ``%`` comment (an escaped ``\\%`` stays)."""
    start = 0
    while True:
        k = line.find("%", start)
        if k < 0:
            return line
        slashes = 0
        j = k - 1
        while j >= 0 and line[j] == "\\":
            slashes += 1
            j -= 1
        if slashes % 2 == 0:
            return line[:k]
        start = k + 1
