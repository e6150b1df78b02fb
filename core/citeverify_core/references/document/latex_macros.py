r"""Document macros: the definitions a LaTeX source makes, and their expansion where used.

Read: ``\newcommand``, ``\renewcommand``, ``\providecommand``, ``\DeclareRobustCommand`` (each
with ``*``, the name braced or not, ``[n]`` arguments and ``[default]`` for the first), ``\def``
(with ``\gdef``, ``\edef``, ``\xdef``; undelimited parameters ``#1#2...`` only) and
``\let\a\b`` / ``\let\a=\b``. A definition whose parameter text is delimited (``\def\x#1.{}``)
is skipped, not guessed: its uses are then read as an unknown command (dropped, arguments kept).

Expansion is bounded, since every source read is untrusted: a macro expands at most
:data:`MAX_DEPTH` levels inside another (``\def\a{\a}`` stops there), a document spends at most
:data:`MAX_EXPANSIONS` expansions (and one per 20 characters of it) and a character budget that
grows with its size
(``\def\a{\a\a}`` would otherwise double 2^n times); past a limit, a macro is dropped as an
unknown command is, and :attr:`MacroTable.exhausted` says so.

The conversion to text (``latex_text``) decides which names are its own: a name it reads itself
(``\cite``, ``\bibitem``, accents, ``\newblock``...) is never redefined here, as hyperref or a
``.bbl``'s ``\providecommand{\url}`` would otherwise replace what the reader relies on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from citeverify_core.references.document.latex_scan import (
    bracket_end,
    group_end,
    skip_space,
)

__all__ = ["MAX_DEPTH", "MAX_EXPANSIONS", "Macro", "MacroTable"]

#: How deep a macro may expand inside others. Real documents nest a few levels.
MAX_DEPTH = 16
#: How many expansions a document may make in all: this plus one per 20 characters of it.
MAX_EXPANSIONS = 50_000
#: The characters a document's expansions may make in all: this plus four times its size.
BASE_CHARS = 2_000_000
#: The longest macro body kept (a longer one is skipped: it is no text macro).
MAX_BODY = 20_000
#: The longest argument read (an unclosed one ends there).
MAX_ARGUMENT = 20_000

_DEFINE = re.compile(
    r"\\(?P<cmd>newcommand|renewcommand|providecommand|DeclareRobustCommand|[gex]?def|let)"
    r"(?![A-Za-z@])(?P<star>\*?)"
)
_NAME = re.compile(r"\\(?:[A-Za-z@]+|.)", re.S)
_PARAMS = re.compile(r"(?:#[1-9])*")
_PARAM_USE = re.compile(r"#(#|[1-9])")
_PROGRAM = re.compile(
    r"\\(?:[x]?spaceskip|fontdimen|skip|dimen|count|toks|advance|multiply|divide|global|[gex]?def"
    r"|let|futurelet|expandafter|noexpand|csname|if[a-z@]{0,12}|else|fi|or|catcode|lccode"
    r"|uccode|sfcode|mathcode|setbox|hsize|vsize|parindent|parskip|baselineskip|tolerance"
    r"|makeatletter|makeatother|begingroup|endgroup|aftergroup|afterassignment|string|number"
    r"|romannumeral|the|newcount|newdimen|newskip|newtoks|newbox|newif|setlength|addtolength"
    r"|setcounter|addtocounter|stepcounter|refstepcounter|@ifnextchar|@ifstar|@namedef"
    r"|@nameuse|@gobble|@firstofone|hyphenpenalty|exhyphenpenalty|interlinepenalty"
    r"|clubpenalty|widowpenalty|emergencystretch|hbadness|vbadness|everypar|lastskip)"
    r"(?![A-Za-z@])|\\[A-Za-z@]{1,40}\s{0,3}=\s{0,3}[-\d.\\]"
)
_XSPACE = re.compile(r"\\xspace\s*\}*\s*$")


@dataclass(frozen=True, slots=True)
class Macro:
    r"""A macro a document defines.

    Attributes:
        params: How many arguments it takes (0-9).
        default: The default of its first argument when that one is optional (``[x]``).
        body: Its replacement text, ``#1``... where its arguments go.
        xspace: Its body ends in ``\xspace``: a space after it in the source is kept.
    """

    params: int
    default: str | None
    body: str
    xspace: bool


@dataclass(slots=True)
class MacroTable:
    """The macros of one document, and what their expansion has spent.

    Args:
        builtin: Whether a name is one the converter reads itself (never redefined).
        budget: The characters the document's expansions may make in all.
    """

    builtin: Callable[[str], bool]
    budget: int = BASE_CHARS
    macros: dict[str, Macro] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    expansions: int = 0
    max_expansions: int = MAX_EXPANSIONS
    exhausted: bool = False
    only_new: bool = False

    def read(self, source: str) -> None:
        r"""Takes in the definitions ``source`` makes, in order (a later one replaces)."""
        self.budget += 4 * len(source)
        self.max_expansions += len(source) // 20
        i = 0
        while True:
            m = _DEFINE.search(source, i)
            if m is None:
                return
            i = max(m.end(), self.define(source, m.group("cmd"), m.end()))

    def read_provided(self, source: str) -> None:
        r"""Takes in the definitions of ``source`` that add a name, never replacing one.

        For a ``.bbl``: its ``\\providecommand``s (``\\noopsort``) stand in for what the
        document did not define.
        """
        self.only_new = True
        try:
            self.read(source)
        finally:
            self.only_new = False

    def define(self, s: str, cmd: str, i: int) -> int:
        r"""Reads the definition ``\cmd`` whose name ends at ``s[i]``; returns where it ends."""
        if cmd == "let":
            return self._let(s, i)
        if cmd.endswith("def"):
            return self._def(s, i)
        return self._newcommand(s, i, provide=cmd == "providecommand")

    def _store(self, name: str, macro: Macro, *, provide: bool = False) -> None:
        if self.builtin(name) or len(macro.body) > MAX_BODY:
            return
        if _PROGRAM.search(macro.body):
            # TeX programming ("\\spaceskip=\\fontdimen2\\font plus ...", "\\ifx#1\\empty"): no
            # text macro. Its uses are read as an unknown command's, its arguments as text;
            # expanded, the assignments' numbers and keywords would read as text.
            self.macros.pop(name, None)
            self.aliases.pop(name, None)
            return
        if (provide or self.only_new) and (name in self.macros or name in self.aliases):
            return
        self.aliases.pop(name, None)
        self.macros[name] = macro

    def _newcommand(self, s: str, i: int, *, provide: bool) -> int:
        n = len(s)
        j = skip_space(s, i, newlines=True)
        braced = j < n and s[j] == "{"
        if braced:
            j = skip_space(s, j + 1, newlines=True)
        name_m = _NAME.match(s, j)
        if name_m is None:
            return j
        name = name_m.group(0)[1:]
        j = name_m.end()
        if braced:
            j = skip_space(s, j, newlines=True)
            if j >= n or s[j] != "}":
                return j
            j += 1
        params, default = 0, None
        j = skip_space(s, j, newlines=True)
        if j < n and s[j] == "[":
            close = bracket_end(s, j, 20)
            count = s[j + 1 : close - 1].strip() if close > 0 else ""
            if not count.isdecimal() or not 0 <= int(count) <= 9:
                return j
            params, j = int(count), close
            j = skip_space(s, j, newlines=True)
            if j < n and s[j] == "[":
                close = bracket_end(s, j)
                if close < 0:
                    return j
                default, j = s[j + 1 : close - 1], close
        body, j = self._body(s, j)
        if body is not None:
            self._store(name, _macro(params, default, body), provide=provide)
        return j

    def _def(self, s: str, i: int) -> int:
        j = skip_space(s, i, newlines=True)
        name_m = _NAME.match(s, j)
        if name_m is None:
            return j
        name = name_m.group(0)[1:]
        j = name_m.end()
        brace = s.find("{", j, j + 200)
        if brace < 0:
            return j
        params = s[j:brace].replace(" ", "")
        body, end = self._body(s, brace)
        p = _PARAMS.fullmatch(params)
        numbered = p is not None and all(
            params[k + 1] == str(k // 2 + 1) for k in range(0, len(params), 2)
        )
        if body is not None and numbered:
            self._store(name, _macro(len(params) // 2, None, body))
        # A delimited parameter text ("#1.", "#1\par"): skipped whole, not guessed.
        return end

    def _let(self, s: str, i: int) -> int:
        j = skip_space(s, i)
        name_m = _NAME.match(s, j)
        if name_m is None:
            return j
        name = name_m.group(0)[1:]
        j = skip_space(s, name_m.end())
        if j < len(s) and s[j] == "=":
            j = skip_space(s, j + 1)
        if j >= len(s):
            return j
        if s[j] != "\\":
            self._store(name, Macro(0, None, s[j], xspace=False))
            return j + 1
        target_m = _NAME.match(s, j)
        if target_m is None or self.builtin(name):
            return j + 1
        target = target_m.group(0)[1:]
        if target in self.macros:
            self._store(name, self.macros[target])
        elif target != name:
            self.macros.pop(name, None)
            self.aliases[name] = target
        return target_m.end()

    @staticmethod
    def _body(s: str, j: int) -> tuple[str | None, int]:
        """The body at ``s[j]`` (a braced group, or one token) and the index after it."""
        j = skip_space(s, j, newlines=True)
        if j >= len(s):
            return None, j
        if s[j] == "{":
            end = group_end(s, j, MAX_BODY + 2)
            if s[end - 1 : end] != "}" or end - j > MAX_BODY + 1:
                return None, end
            return s[j + 1 : end - 1], end
        token = _NAME.match(s, j)
        end = token.end() if token else j + 1
        return s[j:end], end

    def resolve(self, name: str) -> str:
        r"""The name ``\let`` made ``name`` an alias of (through at most 8 aliases), or itself."""
        for _ in range(8):
            target = self.aliases.get(name)
            if target is None:
                return name
            name = target
        return name

    def get(self, name: str) -> Macro | None:
        """The macro ``name`` names, if the document defines it."""
        return self.macros.get(name)

    def expand(self, macro: Macro, s: str, i: int) -> tuple[str | None, int]:
        r"""The macro's text with its arguments read from ``s[i:]``, and where they end.

        None (and ``i``) when the document's expansion budget is spent.
        """
        args: list[str] = []
        j = i
        n = len(s)
        for k in range(macro.params):
            if k == 0 and macro.default is not None:
                t = skip_space(s, j)
                close = bracket_end(s, t) if t < n and s[t] == "[" else -1
                if close > 0:
                    args.append(s[t + 1 : close - 1])
                    j = close
                else:
                    args.append(macro.default)
                continue
            j = skip_space(s, j, newlines=True)
            if j >= n:
                args.append("")
            elif s[j] == "{":
                # Bounded: an unclosed argument must not be rescanned to the end at each use.
                end = group_end(s, j, MAX_ARGUMENT)
                args.append(s[j + 1 : end - 1] if s[end - 1] == "}" else s[j + 1 : end])
                j = end
            else:
                token = _NAME.match(s, j)
                end = token.end() if token else j + 1
                args.append(s[j:end])
                j = end
        size = len(macro.body) + sum(
            len(a) * macro.body.count(f"#{k}") for k, a in enumerate(args, 1)
        )
        if self.expansions >= self.max_expansions or size > self.budget:
            self.exhausted = True
            return None, j
        self.expansions += 1
        self.budget -= size
        if not args and "#" not in macro.body:
            return macro.body, j

        def arg(m: re.Match[str]) -> str:
            c = m.group(1)
            if c == "#":
                return "#"
            return args[int(c) - 1] if int(c) <= len(args) else ""

        return _PARAM_USE.sub(arg, macro.body), j


def _macro(params: int, default: str | None, body: str) -> Macro:
    return Macro(params, default, body, xspace=bool(_XSPACE.search(body)))
