"""The public surface is deliberate: adding or removing a name must be a visible change."""

import citeverify_core

EXPECTED = {
    "AuthenticationError",
    "Citation",
    "CitationUnverifiedError",
    "CitationVerifier",
    "CiteVerifyError",
    "ClaimResult",
    "ContextCache",
    "DocumentError",
    "InputError",
    "InsufficientTokensError",
    "LookupCache",
    "LookupRecord",
    "MissingExtraError",
    "PolicyConfig",
    "PermissionDeniedError",
    "PolicyError",
    "PolicySettings",
    "QuoteResult",
    "RateLimitError",
    "SemanticScorer",
    "ServiceError",
    "ServiceUnavailableError",
    "VerificationDetails",
    "VerificationReport",
    "VerificationResult",
    "__version__",
    "load_policy_pack",
}


def test_all_is_pinned():
    assert set(citeverify_core.__all__) == EXPECTED


def test_every_exported_name_exists_and_is_public_module():
    for name in citeverify_core.__all__:
        obj = getattr(citeverify_core, name)
        module = getattr(obj, "__module__", "citeverify")
        assert module.startswith("citeverify"), name


def test_errors_form_one_tree():
    for cls in (
        citeverify_core.PolicyError,
        citeverify_core.InputError,
        citeverify_core.CitationUnverifiedError,
    ):
        assert issubclass(cls, citeverify_core.CiteVerifyError)


ADAPTERS = {
    "citeverify_core.batch": {
        "CITATION_STATUSES", "COLUMNS", "BatchInterruptedError", "BatchSummary", "Fields",
        "default_workers", "errors_path", "run_batch", "verify_records", "verify_table",
    },
    "citeverify_core.engine": {
        "BlockedResponse",
        "DEFAULT_BLOCKED_RESPONSE",
        "MAX_DOCUMENTS",
        "blocked_answer",
        "check_blocked_response",
        "coerce_documents",
        "WITHHELD_TEXT",
        "FieldSpan",
        "field_values",
        "public_reason",
        "shown_result",
    },
    "citeverify_core.policy": {
        "BUNDLED_POLICIES", "CREDENTIALS", "DEFAULT_EXTRACT_PATTERNS",
        "DEFAULT_MIN_CONTEXT_OVERLAP", "MASKED", "mask_credentials", "restore_credentials",
        "Extensions", "LookupSettings", "OutputAction", "PolicyConfig",
        "PolicySettings", "RagContext", "ResponseOptions", "SemanticSettings",
        "bundled_policy_path", "collect_policy_options", "load_policy", "load_policy_pack",
        "merge_policy", "parse_policy_yaml", "safe_yaml", "with_check_options",
    },
    "citeverify_core.engine.exchange": {
        "CONTROL_NAME", "GatewayDecision", "extract_answer", "extract_answers", "extract_context",
        "verify_exchange",
    },
    "citeverify_core.references": {
        "Author", "LocalIndex", "ParsedReference", "Record", "ReferenceResult",
        "ReferenceVerifier", "apa7", "parse_bibtex", "parse_reference", "record_from_work",
    },
    "langchain_citeverify": {
        "CheckAgainstSourcesInput", "CheckReferencesInput", "CitationBlockedError",
        "CiteVerifyGuard", "CiteVerifyMiddleware", "CiteVerifyOutputParser",
        "CiteVerifyReferenceTool", "CiteVerifyState", "CiteVerifyTool",
    },
    "llama_index.postprocessor.citeverify": {
        "CiteVerifyChatEngine", "CiteVerifyEvent", "CiteVerifyPostprocessor",
        "CiteVerifyQueryEngine", "averify_response", "verify_response",
    },
    "llama_index.evaluation.citeverify": {"CiteVerifyEvaluator"},
}  # fmt: skip


def test_subpackage_surfaces_are_pinned_and_documented():
    import importlib

    missing: list[str] = []
    for name, expected in ADAPTERS.items():
        module = importlib.import_module(name)
        assert set(module.__all__) == expected, name
        for member in module.__all__:
            try:
                obj = getattr(module, member)
            except ModuleNotFoundError as exc:
                # A member of an extra that is not installed (the lowest versions run without
                # LangChain 1.x): it must name what to install.
                missing.append(f"{name}.{member}: {exc}")
                continue
            assert obj.__doc__, f"{name}.{member} has no docstring"
    assert all("pip install" in why for why in missing), missing
