r"""LaTeX to plain text, in one linear pass, with the document's own macros expanded.

Accents and special letters become Unicode (``{\"u}`` -> ü), ``~`` a space, ``--`` an en dash,
``\`\`quotes''`` typographic quotes, logos their names (``\LaTeX`` -> LaTeX); commands are
dropped and their braced text kept (``\emph{x}`` -> x); ``\url{}``'s argument is kept as
written; labels, references, graphics, Sweave's ``\Sexpr{}`` and the like are dropped with their
arguments; definitions (``\newcommand``, ``\def``...) are skipped whole. With a
:class:`~citeverify_core.references.document.latex_macros.MacroTable`, a command the document
defines is replaced by its definition before it is read (``{\RR}`` -> R).

The scan is written here, not pylatexenc's ``LatexNodes2Text``: pylatexenc read 27 KB a second
on the project's machine (96 s for a 3.4 MB body) and raised on some input (``\href`` with a
brace inside), where a document must be read in bounded time.
"""

from __future__ import annotations

import re
import unicodedata

from citeverify_core.references.document.latex_macros import MAX_DEPTH, Macro, MacroTable
from citeverify_core.references.document.latex_scan import (
    bracket_end,
    group_end,
    skip_options,
    skip_space,
)

__all__ = ["is_builtin", "latex_to_text", "new_macro_table"]

# "\\unskip" (as in "\\providecommand\\Dash{\\unskip\\textemdash}") removes the space before it:
# marked where it stands (perhaps inside a macro's text) and applied when the text is whole.
_UNSKIP = "\ue001"
_UNSKIPPED = re.compile("[ \t\n]*\ue001")

_ACCENTS = {
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331", "t": "\u0361",
}  # fmt: skip
_SYMBOLS = {
    "ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å",
    "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "dh": "ð", "DH": "Ð", "th": "þ",
    "TH": "Þ", "ng": "ŋ", "NG": "Ŋ", "dj": "đ", "DJ": "Đ", "&": "&", "%": "%", "$": "$",
    "#": "#", "_": "_", "{": "{", "}": "}", " ": " ", ",": " ", ";": " ", ":": " ", "!": "",
    "/": "", "-": "", "\\": " ", "@": "", "textendash": "–", "textemdash": "—",
    "textquoteleft": "‘", "textquoteright": "’", "textquotedblleft": "“",
    "textquotedblright": "”", "textbackslash": "\\", "textasciitilde": "~", "textregistered": "®",
    "texttrademark": "™", "textcopyright": "©", "S": "§", "P": "¶", "dag": "†", "ddag": "‡",
    "ldots": "…", "dots": "…", "textellipsis": "…", "textbullet": "•", "textdegree": "°",
    "euro": "€", "pounds": "£", "copyright": "©", "newblock": " ", "newline": " ",
    "linebreak": " ", "par": " ", "quad": " ", "qquad": " ", "enspace": " ", "bibrangedash": "–",
    "bibdatedash": "–", "bibinitperiod": ".", "bibinitdelim": " ", "bibnamedelima": " ",
    "bibnamedelimb": " ", "bibnamedelimc": " ", "bibnamedelimd": " ", "bibnamedelimi": " ",
    "bibinithyphendelim": "-", "bibdaterangesep": "–", "urlprefix": "URL ", "doiprefix": "doi:",
    "LaTeX": "LaTeX", "TeX": "TeX", "BibTeX": "BibTeX", "ensuremath": "", "textunderscore": "_",
    "LyX": "LyX", "MiKTeX": "MiKTeX", "METAFONT": "METAFONT", "METAPOST": "METAPOST",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "lambda": "λ",
    "mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "phi": "φ", "chi": "χ", "omega": "ω",
    "LaTeXe": "LaTeX 2ε", "mdash": "—", "ndash": "–", "textlangle": "〈",
    "textrangle": "〉", "langle": "⟨", "rangle": "⟩", "XeTeX": "XeTeX", "XeLaTeX": "XeLaTeX",
    "LuaTeX": "LuaTeX",
    "LuaLaTeX": "LuaLaTeX", "pdfTeX": "pdfTeX", "pdfLaTeX": "pdfLaTeX", "ConTeXt": "ConTeXt",
    "AmS": "AMS", "AmSTeX": "AMS-TeX", "AMSTeX": "AMS-TeX", "BibLaTeX": "BibLaTeX",
    "MF": "Metafont",
    "MP": "MetaPost", "slash": "/", "textslash": "/", "textbar": "|", "textless": "<",
    "textgreater": ">", "textasciicircum": "^", "guillemotleft": "«", "guillemotright": "»",
    "guillemetleft": "«", "guillemetright": "»", "quotedblbase": "„", "quotesinglbase": "‚",
    "textperiodcentered": "·", "textsection": "§", "textparagraph": "¶", "textdollar": "$",
    "textonehalf": "½", "texttimes": "×", "times": "×", "pm": "±", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "infty": "∞", "cdot": "·", "cdots": "⋯",
    "nobreakspace": " ", "thinspace": " ", "space": " ", "hfill": " ",
    "hfil": " ", "noindent": "", "relax": "", "protect": "", "unskip": _UNSKIP, "ignorespaces": "",
    "smallskip": " ", "medskip": " ", "bigskip": " ", "xspace": "", "sc": "", "bf": "",
    "it": "", "em": "", "rm": "", "sf": "", "tt": "", "sl": "", "normalfont": "",
}  # fmt: skip
# Text macros that are no LaTeX command but that packages and documents commonly define (with
# ``\xspace``): read when the document does not define them itself.
_TEXT_MACROS = {
    "eg": "e.g.", "ie": "i.e.", "etal": "et al.", "etc": "etc.", "cf": "cf.", "vs": "vs.",
    "Eg": "E.g.", "Ie": "I.e.", "wrt": "w.r.t.", "aka": "a.k.a.", "viz": "viz.",
}  # fmt: skip
# The AAS journal macros (aastex, emulateapj, mn2e, and every .bib that ADS exports:
# "journal = {\apj}"), as the classes print them (``\apjl`` "ApJ", as emulateapj, mn2e and
# aastex before version 6 print it; aastex 6 prints "ApJL").
_JOURNALS = {
    "aj": "AJ", "actaa": "AcA", "araa": "ARA&A", "apj": "ApJ", "apjl": "ApJ", "apjs": "ApJS",
    "ao": "ApOpt", "apss": "Ap&SS", "aap": "A&A", "aapr": "A&A Rv", "aaps": "A&AS",
    "azh": "AZh", "baas": "BAAS", "icarus": "Icarus", "jcap": "JCAP", "jrasc": "JRASC",
    "memras": "MmRAS", "mnras": "MNRAS", "na": "NewA", "nar": "NewAR", "pra": "PhRvA",
    "prb": "PhRvB", "prc": "PhRvC", "prd": "PhRvD", "pre": "PhRvE", "prl": "PhRvL",
    "pasa": "PASA", "pasp": "PASP", "pasj": "PASJ", "qjras": "QJRAS", "skytel": "S&T",
    "solphys": "SoPh", "sovast": "Soviet Ast.", "ssr": "SSRv", "zap": "ZA", "nat": "Nature",
    "iaucirc": "IAUC", "aplett": "Astrophys. Lett.", "apspr": "Astrophys. Space Phys. Res.",
    "bain": "BAN", "fcp": "FCPh", "gca": "GeoCoA", "grl": "Geophys. Res. Lett.",
    "jcp": "JChPh", "jgr": "J. Geophys. Res.", "jqsrt": "JQSRT", "memsai": "MmSAI",
    "nphysa": "NuPhA", "physrep": "PhR", "physscr": "PhyS", "planss": "Planet. Space Sci.",
    "procspie": "Proc. SPIE",
}  # fmt: skip
# Glue and dimension primitives: the specification after them is no text ("\hskip 1em plus 1fil").
_GLUE = {
    "hskip", "vskip", "kern", "mkern", "mskip", "penalty", "hglue", "vglue", "raise", "lower",
    "moveleft", "moveright",
}  # fmt: skip
# The AMS documentation's logos, written with a closing slash ("\\latex/", "\\tex/").
_SLASH_LOGOS = {
    "latex": "LaTeX",
    "tex": "TeX",
    "amslatex": "AMS-LaTeX",
    "amstex": "AMS-TeX",
    "bibtex": "BibTeX",
}
_GLUE_SPEC = re.compile(
    r"\s*=?\s*[-+]?(?:\d{1,6}(?:\.\d{0,6})?|\.\d{1,6})\s*(?:pt|em|ex|mu|cm|mm|in|bp|pc|dd|cc|sp|fil{1,3})?"
    r"(?:\s+plus\s+[-+]?[\d.]{1,12}\s*(?:pt|em|ex|mu|fil{1,3}|cm|mm|in)?)?"
    r"(?:\s+minus\s+[-+]?[\d.]{1,12}\s*(?:pt|em|ex|mu|fil{1,3}|cm|mm|in)?)?"
)

# Commands whose arguments are not text: dropped with them (name -> how many {} arguments).
_DROP = {
    "label": 1, "ref": 1, "eqref": 1, "cref": 1, "Cref": 1, "autoref": 1, "pageref": 1,
    "vspace": 1, "hspace": 1, "includegraphics": 1, "bibliographystyle": 1, "bibliography": 1,
    "addbibresource": 1, "usepackage": 1, "documentclass": 1, "RequirePackage": 1,
    "setlength": 2, "setcounter": 2, "addtolength": 2,
    "DeclareMathOperator": 2, "newenvironment": 3, "renewenvironment": 3,
    "thispagestyle": 1, "pagestyle": 1, "nocite": 1, "index": 1, "input": 1, "include": 1,
    "bibinfo": 1, "BibitemShut": 1, "bibfield": 1, "begin": 1, "end": 1,
    "BibitemOpen": 0, "bibitem": 1, "keywords": 1, "ORCID": 1, "orcid": 1, "thanks": 1,
    "affiliation": 1,
    "email": 1, "address": 1, "institute": 1, "doibase": 0, "Eprint": 1, "selectlanguage": 1,
    "foreignlanguage": 1, "hyphenation": 1, "color": 1, "textcolor": 1, "fontsize": 2,
    "Sexpr": 1, "SweaveOpts": 1, "SweaveInput": 1, "subfile": 1, "includeonly": 1,
    "citestyle": 1, "bibpunct": 1, "setcitestyle": 1, "graphicspath": 1,
    "DeclareGraphicsExtensions": 1,
    "newtheorem": 2, "newcounter": 1, "setkeys": 2, "hypersetup": 1, "geometry": 1,
    "definecolor": 3, "newlength": 1, "settowidth": 2, "addcontentsline": 3, "markboth": 2,
    "markright": 1, "pdfbookmark": 2, "phantomsection": 0, "footnotemark": 0,
    "VignetteIndexEntry": 1, "VignetteEngine": 1, "VignetteDepends": 1, "VignetteKeyword": 1,
    "VignettePackage": 1, "VignetteEncoding": 1, "setbeamertemplate": 1, "setbeamercolor": 2,
    "setbeamerfont": 2, "usetheme": 1, "usecolortheme": 1, "usefonttheme": 1,
    "useinnertheme": 1, "useoutertheme": 1, "fontseries": 1, "fontshape": 1, "fontfamily": 1,
    "fontencoding": 1, "usefont": 4,
}  # fmt: skip
_QUOTED = {"enquote", "mkbibquote", "textquote"}
_TRAILING_OPTIONS = frozenset(
    {"begin", "bibitem", "setbeamertemplate", "usetheme", "usecolortheme"}
)
# Environments whose \begin takes arguments that are no text (a column spec, a width).
_ENV_ARGS = {
    "tabular": 1, "tabular*": 2, "tabularx": 2, "tabulary": 2, "array": 1, "longtable": 1,
    "supertabular": 1, "xtabular": 1, "tabu": 1, "minipage": 1, "multicols": 1,
    "multicols*": 1, "wrapfigure": 2, "wraptable": 2, "column": 1, "list": 2, "adjustbox": 1,
}  # fmt: skip
# Every citation command of natbib, biblatex, apacite, harvard and the like ("\citeauthor",
# "\Citet", "\parencites", "\citeNP", "\shortciteA", "\footcitetext"...): kept as written for the
# consistency check, which reads their keys.
_CITE = re.compile(r"[A-Za-z]{0,12}[Cc]ite[A-Za-z]{0,10}\*?")
#: A whole citation command in LaTeX source: its ``name``, an apacite prenote ("<see>"), up to
#: two options and its ``keys`` (``\\nocite`` too: a caller that wants citations only skips the
#: names of ``NOT_CITING``).
CITE_COMMAND = re.compile(
    r"\\(?P<name>[A-Za-z]{0,12}[Cc]ite[A-Za-z]{0,10})\*?\s*(?:<[^<>]{0,300}>\s*)?"
    r"(?:\[[^\]]{0,300}\]\s*){0,2}\{(?P<keys>[^{}]{0,2000})\}"
)
NOT_CITING = frozenset({"nocite", "citestyle", "setcitestyle", "citeindextrue", "citeindexfalse"})
_DEFINITIONS = frozenset(
    {"newcommand", "renewcommand", "providecommand", "DeclareRobustCommand", "def", "gdef",
     "edef", "xdef", "let"}
)  # fmt: skip
_SPECIAL = frozenset({"url", "path", "nolinkurl", "doi", "href"}) | _QUOTED | _DEFINITIONS
# A lone ' and ` are typeset as ’ and ‘ (TeX's fonts have no straight quote there).
_TOKEN = re.compile(r"\\(?:[A-Za-z@]+\*?|.)|[{}~$%]|-{2,3}|``|''|['`]|\n", re.S)
_MAX_CITE_CHARS = 600
_APA_PRENOTE = re.compile(r"^(\\[A-Za-z]+\*?) ?<([^<>{}\[\]]*)>")
_RULE = "———"
#: The longest URL read as one (an unclosed one ends there).
_MAX_URL = 5_000
_PLAIN = re.compile(r"[^\\{}~$%'`\-\n#^_&]*")
_BOX_SPEC = re.compile(r"\s*(?:to|spread)\s*-?[\d.]{1,12}\s*(?:pt|em|ex|cm|mm|in|bp|pc)")
_SIZE = re.compile(r"\s*(-?\d{0,6}(?:\.\d{0,6})?)\s*(pt|em|ex|cm|mm|in|bp|pc)\s*")
#: A unit in em (a 10 pt font's em; close enough to decide a rule's width).
_EM = {"pt": 0.1, "bp": 0.1, "pc": 1.2, "em": 1.0, "ex": 0.43, "cm": 2.85, "mm": 0.285, "in": 7.2}
_URL_ESCAPE = re.compile(r"\\([#%&_~$])")
_PUNCTUATION = frozenset(".,;:!?)]}'\"-/")


def is_builtin(name: str) -> bool:
    r"""Whether the converter reads ``\name`` itself (a document's definition never replaces it)."""
    bare = name.rstrip("*")
    return (
        name in _ACCENTS
        or name in _SYMBOLS
        or bare in _DROP
        or bare in _SPECIAL
        or bare in _GLUE
        or bool(_CITE.fullmatch(name))
        or bare in {"newblock", "bibitem", "item", "section", "begin", "end", "par"}
    )


def _em(size: str) -> float | None:
    """A TeX dimension ("3em", ".4pt") in em, or None when it is not one."""
    m = _SIZE.fullmatch(size)
    if m is None or m.group(1) in {"", "-", ".", "-."}:
        return None
    return float(m.group(1)) * _EM[m.group(2)]


def new_macro_table() -> MacroTable:
    """An empty table of document macros, which never redefines a name read here."""
    return MacroTable(builtin=is_builtin)


def latex_to_text(
    source: str,
    *,
    keep_citations: bool = False,
    macros: MacroTable | None = None,
    depth: int = 0,
) -> str:
    r"""LaTeX as plain text, in one linear pass.

    Accents and special letters become Unicode (``{\"u}`` -> ü), ``~`` a space, ``--`` an en
    dash; commands are dropped and their braced text kept (``\emph{x}`` -> x); ``\url{}``'s
    argument is kept as written; labels, references, graphics and the like are dropped with
    their arguments. With ``keep_citations``, citation commands stay as written; with
    ``macros``, the commands the document defines are expanded (``depth`` is how deep inside
    other expansions this text is).

    >>> latex_to_text(r"J.~M{\"u}ller, \emph{A Study}, pp. 1--10, \url{https://x.org/a_b}")
    'J. Müller, A Study, pp. 1–10, https://x.org/a_b'
    """
    out: list[str] = []
    s = source
    n = len(s)
    i = 0
    command = _Command(s, out, keep_citations, macros, depth)
    while i < n:
        m = _TOKEN.search(s, i)
        if m is None:
            out.append(s[i:])
            break
        out.append(s[i : m.start()])
        token = m.group(0)
        i = m.end()
        if token == "{":
            command.braces += 1
            continue
        if token == "}":
            if command.closers and command.closers[-1] == command.braces:
                command.closers.pop()
                out.append("”")
            command.braces -= 1
            continue
        if token == "$":
            continue
        if token == "~":
            out.append(" ")
        elif token == "%":
            newline = s.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif token == "--":
            out.append("–")
        elif token == "---":
            out.append("—")
        elif token == "``":
            out.append("“")
        elif token == "''":
            out.append("”")
        elif token == "'":
            out.append("’")
        elif token == "`":
            out.append("‘")
        elif token == "\n":
            out.append("\n")
        else:
            i = command.read(i, token[1:], m.start())
    text = "".join(out)
    if depth == 0 and _UNSKIP in text:
        # "\\unskip" takes back the space before it, wherever a macro put it.
        text = _UNSKIPPED.sub("", text)
    return text


class _Command:
    """Reads one command of ``s`` into ``out`` (a class only to share its context)."""

    __slots__ = ("braces", "closers", "depth", "keep_citations", "macros", "n", "out", "s")

    def __init__(
        self,
        s: str,
        out: list[str],
        keep_citations: bool,
        macros: MacroTable | None,
        depth: int,
    ) -> None:
        self.s, self.out, self.n = s, out, len(s)
        self.keep_citations, self.macros, self.depth = keep_citations, macros, depth
        # The braces open, and the depths where an open quotation closes (read in the same
        # pass: "\\enquote{...}" nested a million deep costs no recursion and no rescan).
        self.braces = 0
        self.closers: list[int] = []

    def text(self, source: str) -> str:
        """``source`` read one level deeper (bounded: past :data:`MAX_DEPTH` it is dropped)."""
        if self.depth >= MAX_DEPTH:
            # A quote in a quote... 10,000 deep must not exhaust Python's stack.
            return ""
        return latex_to_text(
            source,
            keep_citations=self.keep_citations,
            macros=self.macros,
            depth=self.depth + 1,
        )

    def read(self, i: int, name: str, start: int) -> int:
        r"""Handles the command ``\\name`` ending at ``i``; returns where the scan goes on."""
        s, n, out = self.s, self.n, self.out
        if self.macros is not None and name in self.macros.aliases:
            name = self.macros.resolve(name)
        bare = name.rstrip("*")
        if name in _ACCENTS:
            return self.accent(i, name)
        if name == "\\":
            out.append(" ")
            # "\\*[2pt]": a line break's star and its space are no text.
            j = i + 1 if s.startswith("*", i) else i
            k = skip_space(s, j)
            if k < n and s[k] == "[":
                close = bracket_end(s, k, 40)
                return close if close > 0 else j
            return j
        if bare == "verb" and i < n:
            # "\verb+x+" / "\verb|x|": the text between the delimiters, on one line.
            j = i  # after "\verb" or "\verb*" (the token takes the star)
            close = s.find(s[j], j + 1, j + 500) if j < n and not s[j].isalpha() else -1
            if close > 0 and "\n" not in s[j + 1 : close]:
                out.append(s[j + 1 : close])
                return close + 1
            return i
        if name in _SYMBOLS:
            out.append(_SYMBOLS[name])
            if name.isalpha():
                # As in TeX, a word command ends at the spaces after it ("\ss x", "1\bibrangedash
                # 10"), or at an empty group ("\ss{}").
                if s.startswith("{}", i):
                    return i + 2
                return skip_space(s, i)
            return i
        if self.keep_citations and bare not in NOT_CITING and _CITE.fullmatch(name):
            return self.citation(i, name, start)
        if bare in _DEFINITIONS and self.macros is not None:
            # Read (again) where it stands: a definition in the body counts from there on.
            return max(i, self.macros.define(s, bare, i))
        if bare in _DEFINITIONS:
            # Skipped whole, as a scratch table reads it.
            return max(i, new_macro_table().define(s, bare, i))
        if bare in {"url", "path", "nolinkurl", "doi"}:
            j = skip_space(s, i)
            if j < n and s[j] == "{":
                end = group_end(s, j, _MAX_URL)
                prefix = "https://doi.org/" if bare == "doi" else ""
                # "\\#", "\\%", "\\&", "\\_", "\\~" in a URL print the character; the url
                # package ignores spaces and line ends in it.
                url = "".join(_URL_ESCAPE.sub(r"\1", s[j + 1 : end - 1]).split())
                out.append(prefix + url)
                return end
            return i
        if name in _SLASH_LOGOS and s.startswith("/", i):
            out.append(_SLASH_LOGOS[name])
            return i + 1
        if bare == "href":
            j = skip_space(s, i)
            if j < n and s[j] == "{":
                return group_end(s, j, _MAX_URL)  # the URL goes; the text (next group) stays
            return i
        if bare in _QUOTED:
            j = skip_space(s, i)
            if j < n and s[j] == "{":
                out.append("“")
                self.braces += 1
                self.closers.append(self.braces)
                return j + 1
            return i
        if name in _DROP or bare in _DROP:
            return self.drop(i, name, bare)
        if bare in _GLUE:
            g = _GLUE_SPEC.match(s, i)
            return g.end() if g else i
        if bare in {"hbox", "vbox", "vtop"}:
            # "\\hbox to3em{...}": the box's size is no text; its contents are.
            g = _BOX_SPEC.match(s, i)
            return g.end() if g else i
        if bare == "rule":
            return self.rule(i)
        if bare == "hrulefill":
            # The line drawn for a repeated author ("\\hbox to3em{\\hrulefill}").
            out.append(_RULE)
            return skip_space(s, i)
        if self.macros is not None:
            macro = self.macros.get(name) or (self.macros.get(bare) if bare != name else None)
            if macro is not None:
                return self.expand(i, name, bare, macro)
        if bare in _TEXT_MACROS:
            out.append(_TEXT_MACROS[bare])
            return self.after_word(i, xspace=True)
        if name in _JOURNALS:
            out.append(_JOURNALS[name])
            return self.after_word(i, xspace=False)
        # Any other command: dropped; its options too, its braced arguments read as text. The
        # spaces after it go, as in TeX, unless text follows them ("\small text" keeps one).
        j = skip_options(s, i)
        if j == i and name.isalpha() and i < n and s[i] == " ":
            k = skip_space(s, i)
            return k - 1 if k < n and s[k] not in "{[" else k
        return j

    def rule(self, i: int) -> int:
        r"""``\\rule[lift]{width}{height}``: a thin rule 1.5 em wide or more reads as "———".

        amsplain's ``\\bysame`` and many bibliographies draw the repeated authors of an entry
        so; other rules (struts, lines) are no text.
        """
        s, n = self.s, self.n
        j = skip_options(s, i)
        sizes: list[str] = []
        for _ in range(2):
            j = skip_space(s, j)
            if j >= n or s[j] != "{":
                return j
            end = group_end(s, j, 100)
            sizes.append(s[j + 1 : end - 1])
            j = end
        width, height = (_em(x) for x in sizes)
        if width is not None and height is not None and width >= 1.5 and height <= 0.2:
            self.out.append(_RULE)
        return j

    def accent(self, i: int, name: str) -> int:
        r"""An accent command (``\"u``, ``\'{e}``, ``\c c``) as the accented letter."""
        s, n = self.s, self.n
        j = skip_space(s, i) if name.isalpha() else i
        if j < n and s[j] == "{":
            end = group_end(s, j, 12)
            inner = s[j + 1 : end - 1].strip()
            i = end
        elif j < n and s[j] == "\\":
            k = j + 1
            while k < n and s[k].isalpha() and k - j < 4:
                k += 1
            inner, i = s[j:k], k
        elif j < n:
            inner, i = s[j], j + 1
        else:
            return n
        letter = {"\\i": "i", "\\j": "j", "\\l": "ł", "\\o": "ø"}.get(inner, inner)
        # Over a command ("\\'{\\relax}", "\\'{}") the accent has no letter: nothing is read.
        letter = "" if letter.startswith("\\") else letter.strip("{}")[:1]
        if letter:
            self.out.append(unicodedata.normalize("NFC", letter + _ACCENTS[name]))
        return i

    def citation(self, i: int, name: str, start: int) -> int:
        r"""A citation command kept as written, with its options and key groups.

        ``\cites``-like commands (biblatex's multicite) take several ``[..]{..}`` groups,
        ``(..)`` notes too; apacite's ``\cite<see>[p. 3]{key}`` a ``<..>`` prenote.
        """
        s, n = self.s, self.n
        multi = name.rstrip("*").endswith("s")
        j = i
        groups = 0
        for _ in range(16):
            k = skip_space(s, j)
            if k >= n:
                break
            c = s[k]
            if c == "[":
                close = bracket_end(s, k, 300)
                if close < 0:
                    break
                j = close
            elif c == "<" and groups == 0:
                close = s.find(">", k, k + 300)
                if close < 0:
                    break
                j = close + 1
            elif c == "(" and multi:
                close = s.find(")", k, k + 300)
                if close < 0:
                    break
                j = close + 1
            elif c == "{":
                end = group_end(s, k, _MAX_CITE_CHARS)
                if s[end - 1] != "}":
                    break
                j = end
                groups += 1
                if not multi:
                    break
            else:
                break
        if groups and j - start <= _MAX_CITE_CHARS * 4:
            kept = " ".join(s[start:j].split())
            if "<" in kept:
                # apacite's prenote "\cite<see>[p. 3]{k}" written as natbib's
                # "\cite[see][p. 3]{k}", the form the citation reader takes options in.
                kept = _APA_PRENOTE.sub(r"\1[\2]", kept, count=1)
            self.out.append(kept)
            return j
        return skip_space(s, skip_options(s, i))

    def drop(self, i: int, name: str, bare: str) -> int:
        """A command dropped with its options and its first arguments."""
        s, n = self.s, self.n
        count = _DROP.get(name, _DROP.get(bare, 0))
        j = skip_options(s, i)
        first = True
        while count > 0:
            count -= 1
            j = skip_space(s, j)
            if j < n and s[j] == "{":
                start, j = j, group_end(s, j)
                if bare == "begin" and first:
                    # "\\begin{tabular}[t]{ll}", "\\begin{minipage}[b]{3cm}": no text either.
                    count += _ENV_ARGS.get(s[start + 1 : j - 1].strip(), 0)
                    j = skip_options(s, j)
                if self.keep_citations and bare == "thanks":
                    # A title's note cites too ("\author{M. Shell\thanks{... \cite{ctan:x}.}}"):
                    # its text is no body text, its citations are.
                    self.out.extend(
                        " " + m.group(0)
                        for m in CITE_COMMAND.finditer(s, start, j)
                        if m.group("name") not in NOT_CITING
                    )
            first = False
        # Options after the arguments ("\begin{figure}[h]", "\setbeamertemplate{x}[y]"), only
        # where they belong: after "\ref{x}" a "[3]" is a citation.
        return skip_options(s, j) if bare in _TRAILING_OPTIONS else j

    def expand(self, i: int, name: str, bare: str, macro: Macro) -> int:
        """A document macro replaced by its definition, read one level deeper."""
        assert self.macros is not None
        if name != bare and self.macros.get(name) is None:
            i -= 1  # "\RR*": the star is text after \RR
        text, j = self.macros.expand(macro, self.s, i)
        if text is None:
            return j  # the budget is spent: dropped, as an unknown command
        # Plain text ("R", "Bioconductor") needs no reading: most macros' bodies are such.
        self.out.append(text if _PLAIN.fullmatch(text) else self.text(text))
        if macro.params == 0 and bare.replace("@", "a").isalpha():
            return self.after_word(j, xspace=macro.xspace)
        return j

    def after_word(self, i: int, *, xspace: bool) -> int:
        r"""After a word macro: TeX drops the spaces after it; ``\xspace`` puts one back."""
        s = self.s
        k = skip_space(s, i)
        if xspace and k > i and k < self.n and s[k] not in _PUNCTUATION:
            self.out.append(" ")
        return k
