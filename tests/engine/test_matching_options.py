"""Matching options under ``extensions`` (issue 16): ``words: stem``, ``stopwords: ignore``,
``numbers: value`` and ``language``. The seed's exact mode stays the default (its semantics are
tested in test_grounding.py, test_claims.py and test_verdict.py, unchanged).
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citeverify_core import CitationVerifier, ContextCache, PolicyConfig, PolicyError
from citeverify_core.engine.context import ContextDocument
from citeverify_core.policy import merge_policy
from citeverify_core.text import STOPWORDS, WordMatcher, number_value, value_words, words

OFFLINE = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}


def verifier(cache=False, **ext):
    policy = {**OFFLINE, "extensions": {**OFFLINE["extensions"], **ext}}
    return CitationVerifier(policy, context_cache=cache)


def claim(answer, docs, **ext):
    result = verifier(**ext).verify(answer, docs)
    return result, result.details.claims[0]


# --- defaults -----------------------------------------------------------------------------------


def test_the_seeds_exact_mode_is_the_default():
    ext = PolicyConfig().extensions
    assert (ext.words, ext.stopwords, ext.numbers, ext.language) == (
        "exact",
        "count",
        "words",
        "english",
    )
    assert ext.matcher().exact
    result, c = claim("The museum opened at nine.", ["The museum opens at nine."])
    assert (result.details.groundedness, c.missing_words) == (0.8, ["opened"])


def test_explicit_exact_options_change_nothing():
    answer = "He was born in 1932. It has 4,000 members, and the museum opened at nine."
    docs = ["He was born in 1933.", "The museum opens at nine; it has 4000 members."]
    plain = verifier().verify(answer, docs)
    explicit = verifier(words="exact", stopwords="count", numbers="words").verify(answer, docs)
    assert plain.to_dict() == explicit.to_dict()


# --- words: stem --------------------------------------------------------------------------------


def test_stems_match_inflections():
    result, c = claim("The museum opened at nine.", ["The museum opens at nine."], words="stem")
    assert (result.details.groundedness, c.verified, c.missing_words) == (1.0, True, [])


def test_missing_words_are_shown_as_written():
    _, c = claim("The museum visited opened.", ["The museum opens."], words="stem")
    assert c.missing_words == ["visited"]  # not its stem "visit"


def test_two_inflections_in_one_claim_count_once():
    _, c = claim("Opens opened open doors.", ["They open the doors."], words="stem")
    assert (c.word_count, c.groundedness) == (2, 1.0)


def test_numbers_are_not_stemmed():
    _, c = claim("In the 1990s.", ["In the 1990."], words="stem")
    assert c.missing_words == ["1990s"]


@pytest.mark.parametrize(
    ("language", "answer", "doc"),
    [
        ("german", "Die Häuser", "Das Haus"),
        ("french", "Les musées", "Le musée"),
        ("spanish", "Las casas", "La casa"),
    ],
)
def test_languages(language, answer, doc):
    _, exact = claim(answer, [doc], language=language)
    _, stem = claim(answer, [doc], words="stem", language=language)
    assert stem.groundedness > exact.groundedness
    noun = words(answer)[1]
    assert noun in exact.missing_words and noun not in stem.missing_words


# --- stopwords: ignore --------------------------------------------------------------------------


def test_function_words_count_neither_for_nor_against():
    answer = "He was born in Texas."
    _, exact = claim(answer, ["Born in Texas."])
    _, ignored = claim(answer, ["Born in Texas."], stopwords="ignore")
    assert (exact.groundedness, exact.missing_words) == (0.6, ["he", "was"])
    assert (ignored.word_count, ignored.groundedness) == (2, 1.0)  # born, texas


def test_negations_and_first_person_still_count():
    _, c = claim("It is not open. I think so.", ["It is open."], stopwords="ignore")
    assert c.missing_words == ["not"]
    result = verifier(stopwords="ignore").verify("It is not open. I think so.", ["It is open."])
    assert result.details.claims[1].missing_words == ["i", "think"]
    assert {"not", "no", "nor", "never", "t", "i", "you", "we"}.isdisjoint(STOPWORDS["english"])


def test_a_claim_of_only_function_words_keeps_them():
    result = verifier(stopwords="ignore").verify("It was. The museum opens.", ["The museum opens."])
    first = result.details.claims[0]
    assert (first.word_count, first.groundedness, first.missing_words) == (2, 0.0, ["it", "was"])


def test_stopwords_and_stems_together():
    answer = "They were opening the museums."
    _, c = claim(answer, ["The museum opens."], words="stem", stopwords="ignore")
    assert (c.word_count, c.groundedness) == (2, 1.0)


# --- numbers: value -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "value"),
    [
        ("4,000", "4000"),
        ("1,234,567.50", "1234567.5"),
        ("4.50", "4.5"),
        ("12.0", "12"),
        ("0.05", "0.05"),
        ("4,5", None),
        ("1.2.3", None),
        ("12,34", None),
    ],
)
def test_number_value(token, value):
    assert number_value(token) == value


def test_value_words():
    expected = ["it", "has", "4000", "members", "4.5", "grew"]
    assert value_words("It has 4,000 members; 4.5 % grew.") == expected
    assert value_words("Release 1.2.3 and 4,5") == ["release", "1", "2", "3", "and", "4", "5"]
    assert value_words("v1.2 x3.5y") == words("v1.2 x3.5y")  # not numbers of their own
    assert value_words("Ｔｈｅ ４，０００") == ["the", "4000"]  # NFKC first


@given(st.text(alphabet=st.sampled_from("ab9 8.,x-Ü%\n"), max_size=40))
def test_value_words_equal_words_without_separated_numbers(text):
    if not any(
        text[i].isdigit() and text[i + 1] in ".," and text[i + 2].isdigit()
        for i in range(len(text) - 2)
    ):
        assert value_words(text) == words(text)


def test_numbers_by_value_match_thousands_separators():
    _, exact = claim("It has 4,000 members.", ["It has 4000 members."])
    _, value = claim("It has 4,000 members.", ["It has 4000 members."], numbers="value")
    assert (exact.groundedness, exact.missing_words) == (0.6, ["4", "000"])
    assert (value.groundedness, value.verified) == (1.0, True)


def test_a_changed_decimal_is_one_missing_word():
    _, c = claim("Growth is around 4.5 %.", ["Growth is around 4%."], numbers="value")
    assert c.missing_words == ["4.5"]


def test_strict_statistics_fails_a_claim_with_a_changed_number():
    docs = ["He was born in 1933 in Texas."]
    result, c = claim("He was born in 1932 in Texas.", docs, numbers="value")
    assert (result.details.verified, c.problems) == (True, [])  # 6 of 7 words: passes
    result, c = claim(
        "He was born in 1932 in Texas.", docs, numbers="value", strict_statistics=True
    )
    assert result.details.verified is False
    assert c.problems == [
        "strict_statistics: the number 1932 in the claim at 0-29 is not in the context"
    ]
    assert any("1932" in r for r in result.reasons)


def test_strict_statistics_says_a_failed_statistic_once():
    _, c = claim(
        "Growth is around 4.5 %.", ["Growth is around 4%."], numbers="value", strict_statistics=True
    )
    assert len(c.problems) == 1 and "percent" in c.problems[0]


def test_numbers_found_in_another_document_pass():
    result, c = claim(
        "It has 4,000 members.",
        ["Membership grew.", "It has 4000 members."],
        numbers="value",
        strict_statistics=True,
    )
    assert (result.details.verified, c.problems) == (True, [])


# --- policy -------------------------------------------------------------------------------------


def test_unknown_values_are_policy_errors():
    with pytest.raises(PolicyError, match=r"extensions\.language") as info:
        PolicyConfig.model_validate({"extensions": {"language": "klingon"}})
    assert "english" in str(info.value)
    with pytest.raises(PolicyError, match="no stop word list for 'russian'"):
        PolicyConfig.model_validate({"extensions": {"stopwords": "ignore", "language": "russian"}})
    with pytest.raises(PolicyError, match=r"extensions\.words"):
        PolicyConfig.model_validate({"extensions": {"words": "lemma"}})
    # Stemming without stop words works in any Snowball language.
    PolicyConfig.model_validate({"extensions": {"words": "stem", "language": "russian"}})


def test_a_language_the_installed_stemmer_lacks_is_a_policy_error():
    from citeverify_core.text.matching import _Stems

    with pytest.raises(PolicyError, match="no 'klingon' stemmer"):
        _Stems("klingon")


def test_adapter_keywords_reach_the_extensions():
    policy = merge_policy(None, {"words": "stem", "stopwords": "ignore"})
    assert policy.extensions.matcher() == WordMatcher(stem=True, stopwords=True)


def test_a_policy_pack_with_the_options(tmp_path):
    pack = tmp_path / "pack.yaml"
    pack.write_text(
        "policy:\n  citation-verifier:\n    extensions:\n"
        "      words: stem\n      stopwords: ignore\n      numbers: value\n      language: english\n"
    )
    matcher = PolicyConfig.from_yaml(pack).extensions.matcher()
    assert (matcher.stem, matcher.stopwords, matcher.numbers) == (True, True, True)


# --- the context cache --------------------------------------------------------------------------


OPTIONS = [
    {"words": "stem"},
    {"stopwords": "ignore"},
    {"numbers": "value", "strict_statistics": True},
    {"words": "stem", "stopwords": "ignore", "numbers": "value"},
]


@pytest.mark.parametrize("ext", OPTIONS)
@pytest.mark.parametrize("documents", [3, 40])  # 40: past the many-documents path
def test_the_cache_gives_the_same_results(ext, documents):
    docs = [
        f"Document {i} says the museum opens at {i % 12} and has {1000 * i:,} visitors."
        for i in range(documents)
    ] + ["Die Häuser öffnen um neun. Das Museum hat 4.000 Besucher."]
    answers = [
        "The museums opened at 7. They have 7,000 visitors!",
        "It was opening with 12,000 visitors.\nThe museum opens at nine [2].",
        "Das Museum hat 4.000 Besucher.",
    ]
    cache = ContextCache()
    cached, plain = verifier(cache=cache, **ext), verifier(**ext)
    for _ in range(2):  # the second round reads the cache
        for answer in answers:
            assert cached.verify(answer, docs).to_dict() == plain.verify(answer, docs).to_dict()
    assert cache.hits


def test_cached_documents_keep_their_compared_words_per_matcher():
    doc = ContextDocument("The museum opens; it has 4,000 visitors.", index=True)
    stem = WordMatcher(stem=True)
    value = WordMatcher(stem=True, numbers=True)
    assert doc.key_hits({"open", "museum", "4000"}, stem) == {"open", "museum"}
    assert doc.key_hits({"open", "museum", "4000"}, value) == {"open", "museum", "4000"}
    assert doc._keys is not None and set(doc._keys) == {stem, value}
    uncached = ContextDocument(doc.text)
    assert uncached.key_hits({"open", "4000"}, value) == {"open", "4000"}
    assert uncached._keys is None


@given(st.text(alphabet=st.sampled_from("ab9 80.,x-_Ü%\n"), max_size=40))
def test_the_fast_value_word_set_is_value_words(text):
    from citeverify_core.text import value_word_set

    assert value_word_set(text) == set(value_words(text, keep_words=True))
    ascii_text = text.replace("Ü", "u")
    assert value_word_set(ascii_text) == set(value_words(ascii_text, keep_words=True))


# --- numbers written in words (numbers: value) -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It has four thousand members.", ["it", "has", "4000", "members"]),
        ("a twelve bar blues", ["a", "12", "bar", "blues"]),
        ("Twenty-five years", ["25", "years"]),
        ("one hundred and five", ["105"]),
        ("nineteen hundred", ["1900"]),
        ("two million three hundred thousand", ["2300000"]),
        ("a hundred days", ["a", "100", "days"]),
        ("one of them", ["one", "of", "them"]),  # a single word below ten stays a word
        ("one two three", ["one", "two", "three"]),  # a list, not a number
        ("thousand million", ["thousand", "million"]),
        ("twenty twelve", ["twenty", "twelve"]),
        ("Ünïcode twenty one", ["ünïcode", "21"]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_numbers_written_in_words_are_read(text, expected):
    assert value_words(text) == expected


def test_documents_keep_the_words_beside_the_value():
    from citeverify_core.text import value_word_set

    assert value_words("four thousand", keep_words=True) == ["four", "thousand", "4000"]
    assert value_word_set("About four thousand.") == {"about", "four", "thousand", "4000"}
    assert value_word_set("Über four thousand.") == {"über", "four", "thousand", "4000"}


@pytest.mark.parametrize(
    ("answer", "doc"),
    [
        ("It has 4,000 members.", "It has four thousand members."),
        ("It has four thousand members.", "It has 4,000 members."),
        ("A 12 bar blues.", "A twelve-bar blues."),
    ],
)
def test_numbers_match_across_digits_and_words(answer, doc):
    _, exact = claim(answer, [doc])
    assert exact.groundedness < 1.0
    result, by_value = claim(answer, [doc], numbers="value", strict_statistics=True)
    assert by_value.groundedness == 1.0 and not by_value.problems
    assert result.verified


def test_a_changed_number_in_words_fails_under_strict_statistics():
    result, c = claim(
        "It has five thousand members.",
        ["It has four thousand members."],
        numbers="value",
        strict_statistics=True,
    )
    assert c.problems == [
        "strict_statistics: the number 5000 in the claim at 0-29 is not in the context"
    ]
    assert not result.verified
    # "one" as a word is not a figure: no strict failure for it.
    result, c = claim(
        "It is one of the oldest museums.",
        ["It is among the oldest museums."],
        numbers="value",
        strict_statistics=True,
    )
    assert c.problems == []


# --- the recommended policy pack (issue 16) ------------------------------------------------------


def test_the_recommended_pack_loads_by_name_and_by_path(tmp_path, monkeypatch):
    from pathlib import Path

    from citeverify_core import load_policy_pack
    from citeverify_core.policy import BUNDLED_POLICIES, bundled_policy_path

    assert "recommended" in BUNDLED_POLICIES
    by_name, notes = load_policy_pack("recommended")
    by_path = PolicyConfig.from_yaml(bundled_policy_path("recommended"))
    assert by_name == by_path and notes == []
    ext = by_name.extensions
    assert (ext.words, ext.stopwords, ext.numbers) == ("stem", "ignore", "value")
    assert (by_name.min_groundedness, by_name.min_confidence) == (0.35, 0.7)
    assert by_name.effective_min_context_overlap == 0.8
    assert CitationVerifier("recommended").policy == by_name.to_settings()
    assert load_policy_pack(Path("recommended"))[0] == by_name  # the CLI passes a Path
    # A paraphrase with inflections and function words that the seed's defaults block passes.
    docs = ["The museum opens at nine."]
    answer = "The museums were opened at nine."
    assert not CitationVerifier({}).verify(answer, docs).verified  # 3 of 6 words
    assert CitationVerifier("recommended").verify(answer, docs).verified
    # A file of that name in the working directory is read instead (paths come first).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "recommended").write_text(
        "policy:\n  citation-verifier:\n    min_confidence: 0.1\n"
    )
    assert load_policy_pack("recommended")[0].min_confidence == 0.1
    with pytest.raises(PolicyError, match="no bundled policy named 'strict'"):
        bundled_policy_path("strict")


def test_the_recommended_pack_keeps_its_measured_figures():
    """The figures written in recommended.yaml, on begin-wow-test (skipped without ../shared)."""
    import importlib.util
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "bench" / "bench_accuracy.py"
    spec = importlib.util.spec_from_file_location("bench_accuracy", bench)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    if not module.DATA.is_file():
        pytest.skip(f"BEGIN is not at {module.DATA}")
    from citeverify_core import load_policy_pack

    config, _ = load_policy_pack("recommended")
    policy = config.model_dump(exclude_unset=True)
    policy["extensions"]["lookups"] = {"enabled": False}
    test = [r for r in module.load(module.DATA) if r["subset"] == module.TEST]
    items = module.score(test, policy)
    c = module.Confusion.of([s.verified for s in items], [s.label for s in items])
    assert (c.pos, c.neg) == (1392, 2209)
    # The file says 299 blocked and 157 let through (PyStemmer 3.x). The lowest PyStemmer the
    # package accepts (2.2) stems a word or two differently: 300 blocked there. A drift of more
    # than that is a change of the matching, and the file's figures must be measured again.
    assert abs(c.blocked_pos - 299) <= 2 and abs(c.passed_neg - 157) <= 2
    assert abs(c.balanced_accuracy - 0.857) <= 0.0015


# --- words after NFKC, in claims too (a hypothesis find of tests/engine/test_properties.py) -------------


@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        ("⒜", ["⒜"]),  # NFKC: "(a)"
        ("Acme™. ™. Next one.", ["Acme™.", "™.", "Next one."]),  # "™" is "TM"
        ("→ → →. Fine.", ["Fine."]),  # arrows stay no word
    ],
)
def test_a_claim_of_symbols_that_nfkc_makes_words_is_a_claim(answer, claims):
    result = CitationVerifier(OFFLINE).verify(answer, [""])
    assert [c.text for c in result.details.claims] == claims
    assert result.details.groundedness == 0.0  # its words are counted, as the design says


def test_splitting_symbols_stays_linear():
    import time

    from citeverify_core.text import split_claims

    for text in ("⒜." * 500_000 + "word", "→." * 500_000 + "⒜", "→ → ⒜. " * 100_000):
        start = time.perf_counter()
        split_claims(text, limit=10_001)
        assert time.perf_counter() - start < 5  # seconds on a loaded machine; quadratic: minutes
