"""Policy files: the seed's pack loads unchanged; bad policies name the key path."""

import pytest

from citeverify_core import CitationVerifier, PolicyConfig, PolicyError, load_policy_pack


def test_defaults_are_the_seeds():
    p = PolicyConfig()
    assert p.require_sources is True
    assert p.require_source_match is True
    assert p.min_confidence == 0.8
    assert p.min_groundedness == 0.8
    assert p.extract_patterns == ("case_law", "academic", "url", "quote", "statistic", "regulatory")
    assert p.rag_context.verify_against_context is True
    assert p.effective_min_context_overlap == 0.7
    assert p.output_action.unverified_action == "flag"
    assert p.response.include_verification_report is True


def test_seed_pack_loads_unchanged(seed_policy_path):
    policy, notes = load_policy_pack(seed_policy_path)
    assert policy.extract_patterns == ("quote",)
    assert policy.output_action.unverified_action == "block"
    assert policy.rag_context.min_context_overlap == 0.7
    assert notes == []
    assert PolicyConfig.from_yaml(seed_policy_path) == policy


def test_seed_walkthrough(seed_policy_path):
    # Seed 000's example: the quoted sentence is verified against its source, and the same answer
    # is unverified (and blocked) once the context is an unrelated sentence.
    verifier = CitationVerifier(seed_policy_path)
    answer = '"The museum opens at nine."'
    ok = verifier.verify(answer, [{"content": "The museum opens at nine."}])
    assert (ok.verdict, ok.reason_code) == ("allow", "citation.verified")
    bad = verifier.verify(answer, [{"content": "Penguins live in the southern hemisphere."}])
    assert (bad.verdict, bad.reason_code) == ("block", "citation.unverified")


@pytest.mark.parametrize(
    ("options", "path", "fragment"),
    [
        pytest.param(
            {"min_confidence": 1.5}, "min_confidence", "less than or equal to 1", id="range-high"
        ),
        pytest.param(
            {"min_groundedness": -0.1}, "min_groundedness", "greater than or equal", id="range-low"
        ),
        pytest.param(
            {"rag_context": {"min_context_overlap": 2}},
            "rag_context.min_context_overlap",
            "less than",
            id="nested-range",
        ),
        pytest.param({"bogus": 1}, "bogus", "unknown key", id="unknown-top"),
        pytest.param(
            {"rag_context": {"verify": True}},
            "rag_context.verify",
            "unknown key",
            id="unknown-nested",
        ),
        pytest.param(
            {"extract_patterns": ["quote", "dois"]},
            "extract_patterns[1]",
            "'dois'",
            id="bad-pattern",
        ),
        pytest.param(
            {"output_action": {"unverified_action": "warn"}},
            "output_action.unverified_action",
            "'warn'",
            id="bad-action",
        ),
        pytest.param(
            {"require_sources": "yes"}, "require_sources", "valid boolean", id="string-for-bool"
        ),
        pytest.param(
            {"min_confidence": "high"}, "min_confidence", "valid number", id="string-for-number"
        ),
        pytest.param(
            {"extensions": {"redaction_marker": ""}},
            "extensions.redaction_marker",
            "at least 1",
            id="empty-marker",
        ),
    ],
)
def test_invalid_options_name_the_key_path(options, path, fragment):
    with pytest.raises(PolicyError) as info:
        PolicyConfig.model_validate(options)
    assert info.value.path == path
    assert path in str(info.value)
    assert fragment in str(info.value)


def test_keyword_construction_raises_policy_error_too():
    with pytest.raises(PolicyError, match="min_confidence"):
        PolicyConfig(min_confidence=3)


def test_every_problem_is_listed():
    with pytest.raises(PolicyError) as info:
        PolicyConfig.model_validate({"min_confidence": 2, "bogus": 1})
    assert [p for p, _ in info.value.problems] == ["min_confidence", "bogus"]


def test_pack_errors_carry_the_full_path(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("policy:\n  citation-verifier:\n    rag_context:\n      min_context_overlap: 7\n")
    with pytest.raises(PolicyError) as info:
        load_policy_pack(f)
    assert info.value.path == "policy.citation-verifier.rag_context.min_context_overlap"
    assert str(f) in str(info.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("policy: [unclosed", "not valid YAML (line 1", id="malformed-yaml"),
        pytest.param("- a\n- b\n", "must be a mapping", id="not-a-mapping"),
        pytest.param("", "must be a mapping", id="empty-file"),
        pytest.param(
            "pack: {name: x}\n", "policy.citation-verifier: missing", id="no-citation-verifier"
        ),
        pytest.param(
            "packs: {}\npolicy: {citation-verifier: {}}\n",
            "packs: unknown key",
            id="unknown-top-key",
        ),
        pytest.param(
            "policy:\n  citation-verifier: 3\n", "expected a mapping", id="policy-not-mapping"
        ),
        pytest.param(
            "policies: {chain: citation-verifier}\npolicy: {citation-verifier: {}}\n",
            "policies.chain",
            id="chain-not-list",
        ),
    ],
)
def test_bad_pack_files(tmp_path, text, fragment):
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(PolicyError, match=fragment.replace("[", r"\[").replace("(", r"\(")):
        load_policy_pack(f)


def test_missing_file_and_binary_file(tmp_path):
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy_pack(tmp_path / "nope.yaml")
    f = tmp_path / "bin.yaml"
    f.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(PolicyError, match="not UTF-8"):
        load_policy_pack(f)


def test_pack_notes(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(
        "pack: {name: x, enabled: false}\n"
        "policies: {chain: [quality-scorer]}\n"
        "policy:\n"
        "  quality-scorer: {min: 1}\n"
        "  citation-verifier:\n"
        "    external_resolver: {url: https://example.org}\n"
    )
    policy, notes = load_policy_pack(f)
    assert policy.ignored_options == ["external_resolver"]
    assert notes == [
        "pack.enabled is false: a gateway would not run this pack",
        "citation-verifier is not in policies.chain: a gateway would not run it",
        "policy.quality-scorer: not a citation-verifier option, skipped",
        "external_resolver is accepted but ignored at runtime",
    ]


def test_empty_citation_verifier_block_gives_defaults(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("policy:\n  citation-verifier:\n")
    assert load_policy_pack(f)[0] == PolicyConfig()


def test_policy_is_immutable():
    p = PolicyConfig()
    with pytest.raises(Exception, match="frozen"):
        p.min_confidence = 0.1  # type: ignore[misc]


def test_verifier_rejects_a_policy_of_the_wrong_type():
    with pytest.raises(PolicyError, match="got int"):
        CitationVerifier(42)  # type: ignore[arg-type]


# --- hostile policy files and mappings (issue 9) ------------------------------------------------

_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)
HOSTILE_FILES = [
    pytest.param(
        _LAUGHS + "policy:\n  citation-verifier:\n    extensions: *i\n",
        "expands to more than",
        id="billion-laughs",
    ),
    pytest.param(
        "policy:\n  citation-verifier:\n    extensions: " + "[" * 600 + "]" * 600 + "\n",
        "nested more than",
        id="nested-600-deep",
    ),
    pytest.param(
        "policy:\n  citation-verifier:\n    1: 2\n", "citation-verifier.1: keys must be strings",
        id="integer-key",
    ),
    pytest.param("", "must be a mapping", id="empty-file"),
    pytest.param("x" * 1_000_001, "larger than", id="too-large"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "fragment"), HOSTILE_FILES)
def test_hostile_policy_files_are_policy_errors(tmp_path, text, fragment):
    path = tmp_path / "pack.yaml"
    path.write_text(text)
    with pytest.raises(PolicyError, match=fragment):
        PolicyConfig.from_yaml(path)


def test_aliases_that_stay_small_are_fine(tmp_path):
    path = tmp_path / "pack.yaml"
    path.write_text(
        "pack: &p {name: p}\npolicy:\n  citation-verifier:\n"
        "    min_groundedness: &g 0.6\n    rag_context: {min_context_overlap: *g}\n"
    )
    policy = PolicyConfig.from_yaml(path)
    assert policy.rag_context.min_context_overlap == 0.6


@pytest.mark.parametrize("path", [None, 5, b"pack.yaml"], ids=["none", "int", "bytes"])
def test_a_policy_path_of_the_wrong_type_is_a_policy_error(path):
    with pytest.raises(PolicyError, match="must be a string or a Path"):
        PolicyConfig.from_yaml(path)


@pytest.mark.parametrize(
    ("mapping", "fragment"),
    [
        pytest.param({1: 2}, "1: keys must be strings", id="integer-key"),
        pytest.param({"extensions": {(1, 2): 2}}, "extensions.(1, 2)", id="tuple-key"),
        pytest.param({"min_groundedness": 10**5000}, "too large to print", id="huge-int"),
        pytest.param({"min_groundedness": float("nan")}, "min_groundedness", id="nan"),
    ],
)
def test_hostile_mappings_are_policy_errors(mapping, fragment):
    with pytest.raises(PolicyError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        PolicyConfig.model_validate(mapping)


def test_check_options_change_only_what_they_name() -> None:
    from citeverify_core.policy import with_check_options

    base = PolicyConfig.model_validate(
        {"min_groundedness": 0.6, "extensions": {"lookups": {"timeout": 2.0, "max_lookups": 3}}}
    )
    assert with_check_options(base) is base
    changed = with_check_options(base, action="block", lookups=False)
    assert changed.output_action.unverified_action == "block"
    assert not changed.extensions.lookups.enabled
    assert (changed.extensions.lookups.timeout, changed.extensions.lookups.max_lookups) == (2.0, 3)
    assert changed.effective_min_context_overlap == 0.6  # min_groundedness stays given
    with pytest.raises(PolicyError, match="unverified_action"):
        with_check_options(base, action="shout")


# --- errors that name the fix (issue 32) --------------------------------------------------------


def _suggested_mapping(message: str) -> dict:
    """The mapping that an unknown key's message tells a Python caller to pass."""
    import ast

    start = message.index("Pass ") + len("Pass ")
    end = message.index(", or the keyword option", start)
    return ast.literal_eval(message[start:end])


def test_a_misplaced_key_names_its_path_and_both_ways_to_pass_it():
    with pytest.raises(PolicyError) as info:
        CitationVerifier({"unverified_action": "block"})
    message = str(info.value)
    assert info.value.path == "unverified_action"
    assert "did you mean 'output_action.unverified_action'?" in message
    # Both fixes the message names work, and mean the same policy.
    nested = CitationVerifier(_suggested_mapping(message))
    assert "keyword option unverified_action='block' of CitationVerifier" in message
    keyword = CitationVerifier(unverified_action="block")
    assert nested.policy == keyword.policy
    assert keyword.policy.output_action.unverified_action == "block"
    docs = ["The museum opens at nine."]
    assert keyword.verify("Dragons guard the entrance.", docs).verdict == "block"


@pytest.mark.parametrize(
    ("mapping", "path", "suggestion"),
    [
        pytest.param(
            {"min_groundednes": 0.7}, "min_groundednes", "'min_groundedness'", id="top-typo"
        ),
        pytest.param(
            {"extensions": {"strict_quote": True}},
            "extensions.strict_quote",
            "'strict_quotes'",
            id="nested-typo",
        ),
        pytest.param(
            {"strict_quote": True},
            "strict_quote",
            "'extensions.strict_quotes'",
            id="typo-elsewhere",
        ),
        pytest.param(
            {"rag_context": {"min_groundedness": 0.7}},
            "rag_context.min_groundedness",
            "'min_groundedness'",
            id="wrong-section",
        ),
        pytest.param(
            {"timeout": 3},
            "timeout",
            "'extensions.lookups.timeout' or 'extensions.semantic.timeout'",
            id="ambiguous",
        ),
    ],
)
def test_an_unknown_key_gets_the_nearest_valid_key(mapping, path, suggestion):
    with pytest.raises(PolicyError) as info:
        PolicyConfig.model_validate(mapping)
    assert info.value.path == path
    assert f"{path}: unknown key (did you mean {suggestion}?" in str(info.value)


def test_a_key_nothing_resembles_gets_no_suggestion():
    with pytest.raises(PolicyError) as info:
        PolicyConfig.model_validate({"bogus": 1})
    assert str(info.value) == "invalid policy: bogus: unknown key"


def test_keyword_options_are_the_adapters_and_their_typos_get_a_suggestion(seed_policy_path):
    from citeverify_core.policy import merge_policy

    options = {"min_groundedness": 0.7, "strict_quotes": True, "unverified_action": "redact"}
    verifier = CitationVerifier(seed_policy_path, **options)
    assert verifier.policy == merge_policy(seed_policy_path, options).to_settings()
    assert verifier.policy.extract_patterns == ("quote",)  # the pack's, kept
    assert verifier.policy.extensions.strict_quotes
    assert (
        CitationVerifier(**{"extensions.lookups.enabled": False}).policy.extensions.lookups.enabled
        is False
    )
    with pytest.raises(
        PolicyError, match=r"min_groundednes: unknown key \(did you mean 'min_groundedness'\?\)"
    ):
        CitationVerifier(min_groundednes=0.7)


def test_a_policy_files_misplaced_key_says_where_it_goes(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("policy:\n  citation-verifier:\n    unverified_action: block\n")
    with pytest.raises(PolicyError) as info:
        load_policy_pack(f)
    assert info.value.path == "policy.citation-verifier.unverified_action"
    assert (
        "did you mean 'output_action.unverified_action'? Put unverified_action under output_action"
        in str(info.value)
    )
    f.write_text(
        "policy:\n  citation-verifier:\n    output_action:\n      unverified_action: block\n"
    )
    assert load_policy_pack(f)[0].output_action.unverified_action == "block"


def test_a_packs_top_level_typo_and_a_bare_option_say_where_they_go(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("policy:\n  citation-verifier: {}\npolices: {chain: [citation-verifier]}\n")
    with pytest.raises(PolicyError, match="polices: unknown key \\(did you mean 'policies'\\?"):
        load_policy_pack(f)
    f.write_text("min_groundedness: 0.7\n")
    with pytest.raises(PolicyError, match="go under policy: citation-verifier:"):
        load_policy_pack(f)


def test_a_misspelt_bundled_pack_gets_the_nearest_and_the_list():
    from citeverify_core.policy import BUNDLED_POLICIES

    with pytest.raises(PolicyError) as info:
        CitationVerifier("recomended")
    message = str(info.value)
    assert "cannot read policy file recomended" in message
    assert "did you mean 'recommended'?" in message
    assert f"bundled packs: {', '.join(BUNDLED_POLICIES)}" in message
    with pytest.raises(PolicyError) as info:
        CitationVerifier("strict")  # nothing near: the list alone
    assert "did you mean" not in str(info.value)
    assert f"bundled packs: {', '.join(BUNDLED_POLICIES)}" in str(info.value)


def test_a_missing_policy_path_is_not_taken_for_a_pack_name(tmp_path):
    with pytest.raises(PolicyError) as info:
        CitationVerifier(str(tmp_path / "recomended.yaml"))
    assert "cannot read policy file" in str(info.value)
    assert "bundled" not in str(info.value)


def test_strict_attribution_is_off_by_default_and_set_like_the_other_strict_options(tmp_path):
    assert PolicyConfig().extensions.strict_attribution is False
    f = tmp_path / "p.yaml"
    f.write_text("policy:\n  citation-verifier:\n    extensions: {strict_attribution: true}\n")
    assert load_policy_pack(f)[0].to_settings().extensions.strict_attribution is True
    assert CitationVerifier(strict_attribution=True).policy.extensions.strict_attribution
    with pytest.raises(PolicyError, match="did you mean 'strict_attribution'"):
        PolicyConfig.model_validate({"extensions": {"strict_atribution": True}})


SECRET = "ncbi-7f3a-secret"


@pytest.mark.parametrize(
    "policy",
    [
        {"ncbi_api_key": SECRET},  # at the wrong place
        {"extensions": {"lookups": SECRET}},  # a section given as the key
        {"extensions": {"lookups": {"ncbi_api_key": [SECRET]}}},  # of the wrong type
    ],
)
def test_a_credential_is_never_written_in_a_policy_error(policy):
    with pytest.raises(PolicyError) as caught:
        CitationVerifier(policy)
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value.problems)


def test_the_credentials_are_keyword_options_like_the_adapters_take():
    verifier = CitationVerifier(ncbi_api_key=SECRET, courtlistener_token="t")
    lookups = verifier.policy.extensions.lookups
    assert (lookups.ncbi_api_key, lookups.courtlistener_token) == (SECRET, "t")
    assert SECRET not in repr(verifier.policy)


def test_credentials_are_masked_for_writing_and_restored_from_the_environment(monkeypatch):
    from citeverify_core.policy import MASKED, mask_credentials, merge_policy, restore_credentials

    policy = merge_policy(None, {"ncbi_api_key": SECRET, "courtlistener_token": "t"})
    masked = mask_credentials(policy)
    assert masked.extensions.lookups.ncbi_api_key == MASKED
    assert SECRET not in masked.model_dump_json()
    assert policy.extensions.lookups.ncbi_api_key == SECRET  # the original is untouched
    monkeypatch.setenv("NCBI_API_KEY", "from-env")
    monkeypatch.delenv("COURTLISTENER_TOKEN", raising=False)
    restored = restore_credentials(masked)
    assert restored.extensions.lookups.ncbi_api_key == "from-env"
    assert restored.extensions.lookups.courtlistener_token is None  # its variable is unset
    data = restore_credentials(masked.model_dump())  # a serialised mapping, as loaded
    assert data["extensions"]["lookups"]["ncbi_api_key"] == "from-env"
