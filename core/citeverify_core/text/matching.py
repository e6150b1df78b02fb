"""How the words of a claim are compared with the context: stems, stop words, numbers by value."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from citeverify_core.errors import PolicyError
from citeverify_core.text.numbers import value_word_set, value_words
from citeverify_core.text.tokens import iter_text_chunks, words

__all__ = ["STEM_LANGUAGES", "STOPWORDS", "WordMatcher"]

# --- matching options -------------------------------------------------------------------------

#: Languages that ``extensions.language`` accepts: the Snowball stemmers (PyStemmer's names).
STEM_LANGUAGES = (
    "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "finnish", "french",
    "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian",
    "nepali", "norwegian", "portuguese", "romanian", "russian", "serbian", "spanish", "swedish",
    "tamil", "turkish", "yiddish",
)  # fmt: skip


def _word_list(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Function words that ``stopwords: ignore`` takes out of a claim, per language: articles,
#: personal pronouns of the third person, auxiliaries, plain prepositions, conjunctions,
#: demonstratives and question words. Chosen from the Snowball project's stop word lists
#: (https://snowballstem.org/algorithms/<language>/stop.txt, BSD-3-Clause), kept small on
#: purpose. Never in them: negations ("not", "no", "nor", "never", "n't" pieces), quantifiers
#: ("all", "most", "only"), modal verbs, and first- and second-person pronouns, which say who
#: speaks rather than what the source says (on BEGIN's dev subsets, stems and these stop words
#: reach a balanced accuracy of 0.888 with tuned thresholds; ignoring those pronouns too, 0.866).
STOPWORDS: dict[str, frozenset[str]] = {
    "english": _word_list(
        """
        he him his himself she her hers herself it its itself they them their theirs themselves
        what which who whom whose this that these those
        am is are was were be been being have has had having do does did doing
        a an the and but if or because as until while than so then
        of at by for with about into through during to from in on
        here there when where why how s d ll re ve
        """
    ),
    "german": _word_list(
        """
        der die das den dem des ein eine einen einem einer eines er sie es ihn ihm ihr ihre
        ihren ihrem ihrer sein seine seinen seinem seiner dieser diese dieses diesen diesem
        ist sind war waren sein gewesen hat haben hatte hatten wird werden wurde wurden
        und oder aber wenn weil als wie dass so dann
        von zu mit bei aus nach für auf an in im am vom zum zur um über durch
        was wer wo wann warum da hier dort
        """
    ),
    "french": _word_list(
        """
        le la les l un une des du de d au aux il elle ils elles lui leur leurs son sa ses se
        ce cet cette ces c qui que qu quoi dont où
        est sont était étaient être été a ont avait avaient avoir eu
        et ou mais si car comme donc puis
        à en dans par pour sur avec chez
        """
    ),
    "spanish": _word_list(
        """
        el la lo los las un una unos unas del al él ella ellos ellas le les su sus se
        este esta esto estos estas ese esa eso esos esas que quien quienes cual cuales donde
        es son era eran fue fueron ser sido ha han había habían haber está están estaba
        y e o u pero si porque como pues entonces
        de a en por para con sobre entre desde hasta
        """
    ),
}


class _Stems:
    """Memoized Snowball stems for one language (PyStemmer), shared by every matcher.

    One per language and process: pickled, it is the other process's stems of that language
    (the PyStemmer object, its lock and the memo do not travel).
    """

    #: Words kept at most; past it the memo starts again (a corpus has a few 100,000 words).
    MAX_WORDS = 200_000

    def __init__(self, language: str) -> None:
        try:
            import Stemmer  # noqa: PLC0415 - optional: the `stem` extra
        except ImportError:  # pragma: no cover - the extra is installed in tests
            msg = (
                "extensions.words: stem needs PyStemmer: the stem extra (from a clone, "
                "python -m pip install '.[stem]')"
            )
            raise PolicyError(msg, path="extensions.words") from None
        try:
            self._stemmer = Stemmer.Stemmer(language)
        except KeyError:  # an older PyStemmer without this language
            msg = f"extensions.language: the installed PyStemmer has no {language!r} stemmer"
            raise PolicyError(msg, path="extensions.language") from None
        self.language = language
        self._memo: dict[str, str] = {}
        self._lock = threading.Lock()  # a PyStemmer object is not thread-safe

    def __reduce__(self) -> tuple[Any, ...]:
        return _stems, (self.language,)

    def map(self, words: list[str]) -> list[str]:
        """The stem of each word (hot path: one dict lookup a word once the memo holds it)."""
        try:
            return list(map(self._memo.__getitem__, words))
        except KeyError:
            pass
        memo = self._memo
        new = [w for w in dict.fromkeys(words) if w not in memo]
        with self._lock:
            stems = self._stemmer.stemWords(new)
        # Numbers are not stemmed ("1990s" stays).
        fresh = {w: w if w[:1].isdigit() else s for w, s in zip(new, stems, strict=True)}
        if len(memo) > self.MAX_WORDS:
            memo.clear()  # another thread may be reading: it falls back to _one
        memo.update(fresh)
        return [fresh.get(w) or memo.get(w) or self._one(w) for w in words]

    def _one(self, word: str) -> str:  # the memo was cleared by another thread meanwhile
        if word[:1].isdigit():
            return word
        with self._lock:
            return str(self._stemmer.stemWord(word))


_STEMS: dict[str, _Stems] = {}
_STEMS_LOCK = threading.Lock()


def _stems(language: str) -> _Stems:
    with _STEMS_LOCK:
        if language not in _STEMS:
            _STEMS[language] = _Stems(language)
        return _STEMS[language]


@dataclass(frozen=True, slots=True)
class WordMatcher:
    """How the words of a claim are compared with the context (``extensions``).

    The default, exact mode (the product's grounding rules) compares the normalized words
    themselves (``exact`` is then True and nothing here is used on the hot path). Options:

    - ``stem``: words are compared by their Snowball stem in ``language`` ("opens", "opened",
      "open" match); ``missing_words`` still shows the words as written;
    - ``stopwords``: the language's function words (:data:`STOPWORDS`) are taken out of each
      claim, so they count neither for nor against it; a claim made only of them keeps them;
    - ``numbers``: a written number is one word, compared by value (``4,000`` = ``4000``,
      ``4.5`` is not ``4``).
    """

    stem: bool = False
    stopwords: bool = False
    numbers: bool = False
    language: str = "english"

    @classmethod
    def of(cls, options: Any) -> WordMatcher:
        """The matcher of a policy's ``extensions``: ``Extensions`` or its plain twin.

        Reads ``words``, ``stopwords``, ``numbers`` and ``language``.
        """
        return cls(
            stem=options.words == "stem",
            stopwords=options.stopwords == "ignore",
            numbers=options.numbers == "value",
            language=options.language,
        )

    @property
    def exact(self) -> bool:
        """Whether words are compared as written (no stemming, stopwords or number forms)."""
        return not (self.stem or self.stopwords or self.numbers)

    def prepare(self) -> None:
        """Load the stemmer now (a missing PyStemmer is a PolicyError when the verifier is made)."""
        if self.stem:
            _stems(self.language)

    def tokens(self, text: str) -> list[str]:
        """The words of ``text`` as written (normalized), numbers by value when asked."""
        return value_words(text) if self.numbers else words(text)

    def keys(self, surface: list[str]) -> list[str]:
        """The compared form of each word."""
        return _stems(self.language).map(surface) if self.stem else surface

    def claim(self, text: str) -> tuple[list[str], dict[str, str] | None]:
        """A claim's compared words, each once, and for each the first word written so.

        The second item is None when the compared words are the words as written (no stems).
        """
        surface = list(dict.fromkeys(self.tokens(text)))
        if self.stopwords:
            stop = STOPWORDS.get(self.language, frozenset())
            kept = [w for w in surface if w not in stop]
            surface = kept or surface
        if not self.stem:
            return surface, None
        written: dict[str, str] = {}
        for key, word in zip(self.keys(surface), surface, strict=True):
            if key not in written:
                written[key] = word
        return list(written), written

    def document_keys(self, text: str) -> set[str]:
        """Every compared word of a document (one pass, in chunks)."""
        found: set[str] = set()
        for _, chunk in iter_text_chunks(text):
            found |= self.token_set(chunk)
        return set(self.keys(list(found))) if self.stem else found

    def token_set(self, text: str) -> set[str]:
        """``set(self.tokens(text))``, the fast way."""
        return value_word_set(text) if self.numbers else set(words(text))
