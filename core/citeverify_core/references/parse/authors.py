"""A reference's author list read into names: APA, Vancouver, MLA and their variants."""

from __future__ import annotations

import re

from citeverify_core.references.model import Author
from citeverify_core.references.parse.clues import (
    _ANONYMOUS,
    _CONNECTOR_WORDS,
    _EDITORS,
    _ELISION,
    _ET_AL,
    _INITIAL_WORD,
    _NAME_WORD,
    _PARTICLES,
    _SUFFIXES,
    _VANCOUVER_INITIALS,
)

__all__: list[str] = []  # used by the parser's modules only


# --- authors --------------------------------------------------------------------------------------


def _namey(segment: str) -> bool:
    """Whether a segment reads as a list of names.

    Only capitalized words, initials, particles and connectors, with a comma, an initial or an
    "and" somewhere.
    """
    words = segment.replace(",", " ").replace(";", " ").split()
    if not words or len(words) > 400:
        return False
    for w in words:
        low = w.lower()
        if low in _CONNECTOR_WORDS or low in _PARTICLES or low in _SUFFIXES:
            continue
        if low in {"et", "al", "al.", "...", "…", "(eds.)", "(ed.)", "(eds)", "(ed)"}:
            continue
        if _initial(w) or (len(w) == 1 and _initial(w + ".")):
            continue
        bare = w.strip(".")
        if not bare or not (bare[0].isupper() and bare[0].isalpha()) or not _NAME_WORD.match(bare):
            return False
    if "," not in segment and ";" not in segment and len(words) > 6:
        return False  # "ESTIMATION OF VENTILATION REQUIREMENTS OF A PLASTIC GREENHOUSE"
    if any(len(chunk.split()) > 5 for chunk in re.split(r"[,;&]|\band\b", segment)):
        return False  # "CASE OF DELIVERY BY PERFORATION AND EXTRACTION, IN A CASE OF ..."
    return (
        "," in segment
        or ";" in segment
        or any(_initial(w) or (len(w) == 1 and w.isupper()) for w in words)
        or _vancouver_list(segment)
        or any(w.lower() in {"and", "&"} for w in words)
    )


def _vancouver_list(segment: str) -> bool:
    """Vancouver names, each ending with its initials: "Jones RW, Staley RH", "OWEN WJB"."""
    chunks = [c.split() for c in re.split(r"[,;]", _ET_AL.sub("", segment).rstrip(" ."))]
    return all(len(c) >= 2 and _VANCOUVER_INITIALS.match(c[-1]) for c in chunks if c) and any(
        chunks
    )


def _initial(word: str) -> bool:
    """An initial: "R.", "R.W.", "J.-L.", "Th.", "R" (capitalized: "v." is a particle)."""
    return word[:1].isupper() and bool(_INITIAL_WORD.match(word))


def _is_initials(chunk: str) -> bool:
    """Initials only: "R. W.", "R.W.", "J.-L.", "WAH", also with particles ("W. de", "J. de S.")."""
    words = [w for w in chunk.split() if not (w.islower() and w in _PARTICLES)]
    if len(words) == 1 and _VANCOUVER_INITIALS.match(words[0]) and len(chunk.split()) == 1:
        return True  # "Ellis, WAH, Marples, TG"
    return bool(words) and all(_initial(w) for w in words)


def _is_given(chunk: str) -> bool:
    """A given-names chunk: "Roger W.", "Thomas S.", "Anna", "Jean-Luc" (1-3 words)."""
    words = chunk.split()
    return 0 < len(words) <= 3 and all(
        w[0].isupper() and (_initial(w) or _NAME_WORD.match(w)) for w in words
    )


def _authors(text: str | None) -> tuple[tuple[Author, ...], bool, bool]:
    """Authors, whether the list ends in "et al.", and whether it is elided ("A, B, ... Z")."""
    if not text:
        return (), False, False
    text = text.strip(" ,;:")
    et_al = bool(_ET_AL.search(text))
    if et_al:
        text = _ET_AL.sub("", text)
    elided = bool(_ELISION.search(text))
    if elided:
        text = _ELISION.sub(" & ", text)
    text = _EDITORS.sub(" ", text).strip(" ,;&")
    text = re.sub(r",?\s+eds?\.?$", "", text)
    # "Sayagués, M.., Hutchison, J..": a doubled period after an initial (not an ellipsis).
    text = re.sub(r"(?<=[^\W\d_])\.\.(?!\.)", ".", text)
    if text.endswith(".") and (
        not _initial(text.split()[-1] if text.split() else "") or _short_family_at_end(text)
    ):
        text = text[:-1]
    if not text or text.lower() in _ANONYMOUS:
        return (), et_al, elided
    plain = not re.search(r"[,;&]|\band\b", text)
    words = text.split()
    initials = any(_initial(w) for w in words[:-1]) or any(
        _initial(w) or _VANCOUVER_INITIALS.match(w) for w in words[1:]
    )
    if plain and (len(words) == 1 or not initials):
        # A corporate author ("World Health Organization", "WHO", "ASTM"): one name, whole.
        return (Author(text.strip(" .")),), et_al, elided
    # Chunks between separators; after ";", "&" or "and" a new author starts for sure.
    # Whether the names end with their initials ("Jones RW, Staley RH"): only then is a
    # trailing word in capitals initials; elsewhere it is a family name in capitals, as some
    # deposits write them ("SATO, Takao, and Hideo ODA", "Standiford H. COX").
    vancouver = _vancouver_list(text)
    chunks: list[tuple[str, bool]] = []
    for part, sep in _split_keep(text):
        if part.strip(" .,"):
            chunks.append((part.strip(), sep))
    out: list[Author] = []
    i = 0
    while i < len(chunks):
        chunk, _ = chunks[i]
        nxt = chunks[i + 1] if i + 1 < len(chunks) else None
        if chunk.lower().rstrip(".") + "." in _SUFFIXES or chunk.lower() in _SUFFIXES:
            i += 1
            continue
        words = chunk.split()
        bare_family = not any(_initial(w) for w in words) and not (
            len(words) >= 2 and _VANCOUVER_INITIALS.match(words[-1])
        )
        pairs = nxt is not None and not nxt[1] and bare_family
        if (
            pairs
            and nxt is not None
            and (
                _is_initials(nxt[0])
                or (i == 0 and "&" not in text and _family_like(words) and _is_given(nxt[0]))
                or (i == 0 and "&" not in text and _compound_family(words, nxt[0]))
                or _lowercase_given(nxt[0])
            )
        ):
            # "Jones, R. W." (APA, Harvard), "Jones, Roger W." (first author in MLA, Chicago)
            out.append(Author(chunk, nxt[0]))
            i += 2
            continue
        author = _one_name(words, vancouver=vancouver)
        if author is not None:
            out.append(author)
        i += 1
    return tuple(out), et_al, elided


def _short_family_at_end(text: str) -> bool:
    """Whether the list ends with a two-letter family after a given name ("Dong-Lei Xu.").

    The final period closes the list (MLA, Chicago), it does not make "Xu." an initial like
    "Th." (an initial follows a family and a comma, or another initial).
    """
    words = text.split()
    return (
        len(words) >= 2
        and re.fullmatch(r"[^\W\d_a-z][a-z]\.", words[-1]) is not None
        and words[-1].lower() not in _SUFFIXES  # "Martin Luther King Jr."
        and not _initial(words[-2])
        and not words[-2].endswith(",")
        and _NAME_WORD.match(words[-2]) is not None
    )


def _compound_family(words: list[str], given: str) -> bool:
    """A first author inverted with a family of two words: "Vaz Fragoso, Carlos A".

    Only before a given name that cannot be a whole name itself: one word ("Sonia") or names
    ending with an initial, with or without its period ("Carlos A", "Mary J."). "Jian Pan, Wei
    Li" and "Jongseon Park, Dosik An" (given names first) are two authors.
    """
    if len(words) != 2 or not all(w[:1].isupper() and _NAME_WORD.match(w) for w in words):
        return False
    if any(_initial(w) or _VANCOUVER_INITIALS.match(w) for w in words):
        return False
    parts = given.split()
    if not _is_given(given) and not (
        parts and all(_initial(w) or _initial(w + ".") or _NAME_WORD.match(w) for w in parts)
    ):
        return False
    if len(parts) == 1:
        return not _VANCOUVER_INITIALS.fullmatch(parts[0]) or _initial(parts[0])
    last = parts[-1]
    # An initial with its period, or a capital alone ("Carlos A"); "Dosik An" is a whole name.
    return 1 <= len(parts) <= 3 and (
        _initial(last) or re.fullmatch(r"[^\W\d_a-z]", last) is not None
    )


def _lowercase_given(chunk: str) -> bool:
    """Whether a chunk is a given name deposited in lowercase ("Keshel, tyler").

    One word, not a particle nor a connector: no family name is a lone lowercase word.
    """
    return (
        chunk.isalpha()
        and chunk.islower()
        and len(chunk) >= 2
        and chunk not in _PARTICLES
        and chunk not in _CONNECTOR_WORDS
        and chunk not in _SUFFIXES
    )


def _family_like(words: list[str]) -> bool:
    """One family name, maybe with particles: "Lou", "van der Berg", "Gröschel-Stewart"."""
    core = [w for w in words if w.lower() not in _PARTICLES]
    return len(core) == 1


def _split_keep(text: str) -> list[tuple[str, bool]]:
    """Split on "," ";" "&" "and"; each chunk says whether a hard separator preceded it."""
    out: list[tuple[str, bool]] = []
    hard = False
    pos = 0
    for m in re.finditer(r"\s*(?:(;)|(,)\s*(?:(&|\band\b)\s*)?|\s(&|\band\b)\s*)", text):
        out.append((text[pos : m.start()], hard))
        hard = bool(m.group(1) or m.group(3) or m.group(4))
        pos = m.end()
    out.append((text[pos:], hard))
    return out


def _one_name(words: list[str], *, vancouver: bool = True) -> Author | None:
    """One name without a comma: "R. W. Jones", "Ralph H. Staley", "Jones RW", "Jian Pan".

    ``vancouver``: whether the list is one of "Family INITIALS" names; if not, a last word in
    capitals is a family name ("Hideo ODA"), not initials.
    """
    while words and words[-1].lower() in _SUFFIXES:
        words = words[:-1]
    words = [w for w in words if w.lower() not in _CONNECTOR_WORDS]
    if not words:
        return None
    if len(words) == 1:
        w = words[0].strip(".")
        if not w or _initial(words[0]) or w.lower() in _ANONYMOUS:
            return None
        return Author(w) if w[0].isalpha() else None
    if vancouver and _VANCOUVER_INITIALS.match(words[-1]) and not _initial(words[0]):
        # Vancouver "Jones RW", "OWEN WJB", "de Reuck J"
        return Author(" ".join(words[:-1]), words[-1])
    k = len(words)
    while k > 0 and _initial(words[k - 1]):
        k -= 1
    if 0 < k < len(words) and not _initial(words[0]):
        # "Jones R. W.", "v. Thurzó E." (family first, initials after)
        return Author(" ".join(words[:k]), " ".join(words[k:]))
    # Given names first: the family starts after the last initial, or at the last word with its
    # particles ("R. W. Jones", "Ralph H. Staley", "S. Van Lierde", "Ludwig van Beethoven").
    last_initial = max((k for k, w in enumerate(words) if _initial(w)), default=-1)
    if 0 <= last_initial < len(words) - 1:
        start = last_initial + 1
    else:
        start = len(words) - 1
        while start > 0 and words[start - 1].islower() and words[start - 1] in _PARTICLES:
            start -= 1
    family = " ".join(words[start:]).strip(" .")
    if not family:
        return None
    return Author(family, " ".join(words[:start]))
