"""Joining a reference's lines: line-end hyphens judged, whitespace normalised (issue 26, 34).

A hyphen at a line's end is judged by the document's own vocabulary first, then a compact
English word list (``segment_words.txt``), then the shape of the two parts.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from citeverify_core.references.document.model import (
    DocumentLine,
)
from citeverify_core.references.document.segment_patterns import (
    URL_TAIL,
)

__all__ = ["document_vocabulary", "join_lines"]


_WORD = re.compile(r"[^\W\d_]+(?:[-‐][^\W\d_]+)*")


_FIRST_WORD = re.compile(r"[^\W\d_]+")


_LAST_FRAGMENT = re.compile(r"([^\W\d_]+(?:[-‐][^\W\d_]+)*)[-‐]$")


# Words a real hyphen joins to the next one far more often than a soft hyphen splits them.
_HYPHEN_PREFIXES = frozenset(
    {"self", "non", "cross", "well", "semi", "multi", "real", "high", "low", "large", "small",
     "long", "short", "fine", "zero", "few", "state", "end", "two", "three", "one", "data",
     "open", "closed", "single", "double", "top", "bottom", "user", "task", "object", "sub",
     "pre", "post", "anti", "co", "re", "mid", "intra", "ex", "quasi", "pseudo", "meta"}
)  # fmt: skip


# A prefix of the list above is not a real one when what follows is a word's ending.
_WORD_ENDINGS = frozenset(
    {"ing", "ings", "ness", "ment", "ments", "tion", "tions", "sion", "sions", "ple", "ples",
     "ly", "ally", "ship", "ular", "ity", "ities", "ish", "able", "ible", "ence", "ences",
     "ance", "ances", "al", "als", "ed", "er", "ers", "est", "ous", "ive", "ives", "ic", "ics",
     "ical", "ism", "ist", "ists", "ize", "ise", "ized", "ised", "ation", "ations", "nar", "ar",
     "ory", "ories", "ure", "ures", "ted", "ting", "cal", "tive", "sis", "ses", "vant",
     "ened", "ening"}
)  # fmt: skip


# Fragments that prefixes such as "re", "pre", "co", "sub" only join with a real hyphen when the
# document says so: these prefixes are only trusted before a word of the document (read on
# other lines: the tail of the split word itself is not counted). "anti", "post", "mid", "meta"
# and "intra" are trusted: hyphenation patterns seldom break a word right after them.
_WEAK_PREFIXES = frozenset({"re", "pre", "co", "sub", "ex"})


# Greek letters and chemical prefixes before a long tail name a compound or a term with a
# hyphen ("alpha-difluoromethylornithine", "gamma-aminobutyric"). Not "bio", "photo", "iso",
# "neo", "ultra": "bio-" + "logical", "iso-" + "lation" are soft breaks as often as not.
_LONG_TAIL_PREFIXES = frozenset(
    {"alpha", "beta", "gamma", "delta", "kappa", "omega", "sigma", "theta", "lambda", "tert",
     "cis"}
)  # fmt: skip


# Endings of a whole adjective ("analytical-" + "methodological", "social-" + "ecological"): a
# syllable break leaves a word's first part, which seldom ends so.
_ADJECTIVE_ENDINGS = ("ical", "ial", "ional", "ive", "ous", "ary", "ful", "less", "ic")


_VOWELS = frozenset("aeiouy")


# How a word's ending starts after a vowel ("situ-" + "ational", "individu-" + "ally").
_SUFFIX_STARTS = (
    "ation",
    "ition",
    "ution",
    "ual",
    "ous",
    "enc",
    "anc",
    "abl",
    "ibl",
    "ate",
    "ati",
    "ity",
    "ic",
    "al",
    "ing",
    "ed",
    "er",
    "es",
    "ion",
    "ism",
    "ist",
    "iz",
    "is",
    "olog",  # "bi-" + "ology", "The-" + "ologie": TeX's patterns break Greek words so
    "ograph",
)


_HYPHEN_SUFFIXES = frozenset(
    {"based", "driven", "aware", "free", "level", "scale", "specific", "oriented", "agnostic",
     "invariant", "dependent", "independent", "grained", "shot", "trained", "tuned", "wise",
     "like", "related", "guided", "conditioned", "centric", "centered", "constrained", "enabled",
     "efficient", "sensitive", "order", "dimensional", "valued", "world", "art", "to"}
)  # fmt: skip


# Conjunctions after a suspended hyphen ("gesellschafts- und wissenschaftsgeschichtlich",
# "pre- and post-operative"): never the end of a word a syllable break cut.
_SUSPENDING = frozenset({"und", "oder", "bzw", "sowie", "and"})


# How the document prints a DOI's prefix inside its lines (keys no word can be).
_DOI_SPACED, _DOI_TIGHT = " doi: ", " doi:"
_DOI_SPACE = re.compile(r"\bdoi: 10\.", re.I)
_DOI_NO_SPACE = re.compile(r"\bdoi:10\.", re.I)


def document_vocabulary(lines: Sequence[DocumentLine]) -> tuple[Counter[str], Counter[str]]:
    """The document's words and hyphenated compounds, as written inside its lines.

    A word cut by a line end is not counted: neither the last word of a line ending in a hyphen
    nor the first word of the next line.
    """
    words: Counter[str] = Counter()
    compounds: Counter[str] = Counter()
    after_hyphen = False
    for line in lines[:50_000]:
        text = line.text[:5000]
        if after_hyphen:  # the rest of that word ("Re-" + "actionary"): not a word either
            text = text.lstrip()
            text = text[text.find(" ") + 1 :] if " " in text else ""
        after_hyphen = text.rstrip().endswith(("-", "‐"))
        if after_hyphen:
            text = text.rstrip()
            text = text[: text.rfind(" ") + 1] if " " in text else ""
        if "doi:" in text or "DOI:" in text:
            words[_DOI_SPACED] += len(_DOI_SPACE.findall(text))
            words[_DOI_TIGHT] += len(_DOI_NO_SPACE.findall(text))
        for found in _WORD.findall(text):
            token = found.casefold().replace("‐", "-")
            if "-" in token:
                compounds[token] += 1
                for part in token.split("-"):
                    words[part] += 1
            else:
                words[token] += 1
    return words, compounds


def join_lines(
    texts: Sequence[str],
    words: Counter[str] | None = None,
    compounds: Counter[str] | None = None,
) -> str:
    """Lines of one reference as one string: line-end hyphens judged, whitespace normalised.

    ``words`` and ``compounds`` are the document's vocabulary (how it writes words elsewhere).

    >>> join_lines(["Bio-", "logy of cells."]), join_lines(["Smith-", "Jones, A."])
    ('Biology of cells.', 'Smith-Jones, A.')
    >>> join_lines(["A self-", "assessment of COVID-", "19"])
    'A self-assessment of COVID-19'
    """
    words = words if words is not None else Counter()
    compounds = compounds if compounds is not None else Counter()
    out = ""
    for raw in texts:
        text = raw.replace("\u00ad", "\u00ad ").strip() if raw.endswith("\u00ad") else raw.strip()
        text = " ".join(text.split())
        if not text:
            continue
        if not out:
            out = text
            continue
        out = _join_two(out, text, words, compounds)
    return " ".join(out.replace("\u00ad", "").split())


def _join_two(left: str, right: str, words: Counter[str], compounds: Counter[str]) -> str:
    if left.endswith("\u00ad"):
        return left[:-1] + right
    if left.endswith(("–", "—", "/")) and not left.endswith((" –", " —", " /")):
        return left + right  # "123–" + "145"; "https://x.org/" + "a"
    if left[-4:].casefold() == "doi:" and right[:3] == "10.":
        # "doi:" + "10.1093/...": TeX breaks a line at a space, unless the document prints
        # its DOIs without one ("doi:10.1186/..." inside its lines).
        tight = words.get(_DOI_TIGHT, 0) > words.get(_DOI_SPACED, 0)
        return left + ("" if tight else " ") + right
    if left.endswith(("http:", "https:", "ftp:")) and right.startswith("//"):
        return left + right  # "http:" + "//mirror.ctan.org/..."
    if left.endswith(("-", "‐")) and not left.endswith((" -", " ‐")):
        if _suspended(left, right):
            return left + " " + right
        if URL_TAIL.search(left[-200:]) and _url_goes_on(right):
            return left + right  # url.sty breaks a URL after its own hyphen: "transcript-verlag"
        keep = _real_hyphen(left, right, words, compounds)
        return (left if keep else left[:-1]) + right
    if URL_TAIL.search(left[-200:]) and not left.endswith((".", ",")) and _url_goes_on(right):
        return left + right
    if (
        left.endswith(".")
        and (m := URL_TAIL.search(left[-200:]))
        and "/" not in m.group(0)[-60:].split("//", 1)[-1]
        and re.match(
            r"(?:[a-z0-9][\w\-]*\.[\w.\-]*(?:/\S*)?|[a-z]{2,6}/\S*)$", right.split(" ", 1)[0]
        )
    ):
        # "http://mirrors." + "ctan.org/macros/...": the host goes on; "https://ctan." +
        # "org/pkg/caption": its last label and a path (a path, so "x.org." + "in" is no URL)
        return left + right
    if left.endswith(".") and URL_TAIL.search(left[-200:]) and _FILE_TYPE.match(right):
        return left + right  # ".../help/wiggle." + "html": a file's type after a path
    if _BARE_HOST.search(left[-120:]) and re.match(r"[a-z]{2,6}/[\w./\-~%#?=&:+]*", right):
        return left + right  # "url: darwin-online.org." + "uk/content/frameset?itemID=..."
    return left + " " + right


# A file type that ends a URL cut after its dot; what follows it is the entry's punctuation.
_FILE_TYPE = re.compile(
    r"(?:html?|shtml|php\d?|aspx?|jsp|cgi|pdf|ps|xml|txt|csv|zip|gz|tgz|tar|bib|tex)"
    r"(?:[#?][^\s]*)?[.,;)]*(?:\s|$)"
)
# A host name without a scheme, cut after a dot of its own: "darwin-online.org."
_BARE_HOST = re.compile(r"(?:^|\s)[a-z0-9][a-z0-9\-]*(?:\.[a-z0-9\-]+)+\.$")


_LINKING_WORDS = frozenset(
    [
        "of",
        "the",
        "to",
        "in",
        "on",
        "and",
        "or",
        "for",
        "by",
        "at",
        "up",
        "out",
        "off",
        "over",
        "under",
        "with",
        "a",
        "an",
        "as",
        "is",
        "not",
        "so",
    ]
)


def _suspended(left: str, right: str) -> bool:
    """A suspended hyphen ends ``left``: "Kinder-" + "und Jugendpsychiatrie", "pre-" + "and"."""
    m = _LAST_FRAGMENT.search(left[-120:])
    first, _, rest = right.partition(" ")
    return bool(m and len(m.group(1)) >= 3 and rest and first.casefold() in _SUSPENDING)


def _url_goes_on(right: str) -> bool:
    """The next line continues a URL or DOI cut by the line end (not a new word)."""
    token = right.split(" ", 1)[0]
    if not token or token[0] in "([{\"'“" or token[0].isupper():
        return False
    if token.casefold() in {"accessed", "retrieved", "last", "visited", "and", "in", "pp.", "p."}:
        return False
    if re.match(r"[\w./\-_~%#?=&:+{}]+$", token):
        return True  # "{&}" is how some styles print a URL's "&"
    # The URL's end with the entry's punctuation after it ("erence.com/page/a," + "accessed"):
    # only when what is left holds a URL's own characters, so "x.org/a" + "which," is no URL.
    core = token.rstrip(",;.)")
    return core != token and bool(
        re.match(r"[\w./\-_~%#?=&:+]+$", core) and re.search(r"[./_=?&%#~]|\d", core)
    )


def _real_hyphen(left: str, right: str, words: Counter[str], compounds: Counter[str]) -> bool:
    """Whether the hyphen at the end of ``left`` is a real one (kept) or a soft break."""
    m = _LAST_FRAGMENT.search(left[-120:])
    if right[:1].isdigit() or not m:
        return True  # "COVID-" + "19"; "2019-" + "2020"; a hyphen after a digit
    b_match = _FIRST_WORD.match(right)
    if not b_match:
        return True
    fragment = m.group(1).replace("‐", "-")
    if "-" in fragment:
        return True  # "state-of-the-" + "art": part of a compound already
    a, b = fragment, b_match.group(0)
    if right[b_match.end() : b_match.end() + 1] in {"-", "‐"} and (
        b.casefold() in _LINKING_WORDS or words.get(b.casefold(), 0) or b[:1].isupper()
    ):
        # "state-" + "of-the-art", "time-" + "series-based": the part after the line end is a
        # word of its own; "method-" + "ology-independent" is one word cut, then a compound.
        return True
    compound, joined = f"{a}-{b}".casefold(), f"{a}{b}".casefold()
    seen_compound, seen_joined = compounds.get(compound, 0), words.get(joined, 0)
    if seen_compound or seen_joined:
        return seen_compound >= seen_joined
    if b[0].isupper():
        # "Smith-" + "Jones", "Jean-" + "Pierre", "non-" + "English"; but a word in capitals
        # cut in two ("NET-" + "WORKS", "PsycEX-" + "TRA") is one word.
        return not (a[-2:].isupper() and b.isupper() and len(a) + len(b) >= 6 and len(b) >= 3)
    if a.isupper() and len(a) >= 2:
        return True  # "RNA-" + "seq", "GPU-" + "accelerated"
    low_a, low_b = a.casefold(), b.casefold()
    if low_a not in _HYPHEN_PREFIXES and joined in _split_words():
        return False  # "Cor-" + "related", "Influ-" + "ential": an English word cut in two
    if low_b in _HYPHEN_SUFFIXES and len(low_a) >= 3:
        return True  # "data-" + "driven", "model-" + "based"
    if low_a in _HYPHEN_PREFIXES and len(low_b) >= 4 and low_b not in _WORD_ENDINGS:
        if low_a in _WEAK_PREFIXES:
            return words.get(low_b, 0) > 0  # "re-" + "search" is "research"
        return True  # "self-" + "assessment", "multi-" + "task"
    if (
        low_a in _LONG_TAIL_PREFIXES
        and len(low_b) >= 6
        and low_b not in _WORD_ENDINGS
        and not (low_a == "alpha" and low_b.startswith("bet"))  # "alpha-" + "betical"
    ):
        return True  # "neo-" + "angiogenesis", "alpha-" + "difluoromethylornithine"
    if (
        len(low_a) >= 6
        and low_a.endswith(_ADJECTIVE_ENDINGS)
        and len(low_b) >= 6
        and not _ends_like_a_suffix(low_b)
    ):
        return True  # "analytical-" + "methodological"
    # A syllable break puts a consonant at the start of the next line ("docu-" + "ment"); a
    # vowel meeting a vowel is a joint of two parts ("neo-" + "angiogenesis").
    return (
        len(low_a) >= 3
        and low_a[-1] in _VOWELS
        and low_b[0] in _VOWELS
        and len(low_b) >= 6
        and not _ends_like_a_suffix(low_b)
        and not low_b.startswith(_SUFFIX_STARTS)
    )


@functools.cache
def _split_words() -> frozenset[str]:
    """English words the shape rules below would wrongly keep a line-end hyphen in.

    ``segment_words.txt`` (1,767 words, 22 KB) is derived from SCOWL's word list (its source,
    licence and how it was made are in its header): only the words that the rules get wrong,
    so the list stays small. Read once, when a hyphen first needs it.
    """
    data = (Path(__file__).parent / "segment_words.txt").read_text(encoding="utf-8")
    return frozenset(
        w for line in data.splitlines() if (w := line.strip()).isalpha() and w.islower()
    )


def _ends_like_a_suffix(tail: str) -> bool:
    """``tail`` is a word ending or little more ("ation", "ically"): a word's end, not a word."""
    return any(tail.endswith(e) and len(tail) - len(e) < 3 for e in _WORD_ENDINGS)
