"""The public surface is deliberate: adding or removing a name must be a visible change."""

import citeverify

EXPECTED = {
    "Citation",
    "CitationUnverifiedError",
    "CitationVerifier",
    "CiteVerifyError",
    "ClaimResult",
    "ContextCache",
    "InputError",
    "LookupCache",
    "LookupRecord",
    "PolicyConfig",
    "PolicyError",
    "QuoteResult",
    "VerificationDetails",
    "VerificationReport",
    "VerificationResult",
    "__version__",
    "load_policy_pack",
}


def test_all_is_pinned():
    assert set(citeverify.__all__) == EXPECTED


def test_every_exported_name_exists_and_is_public_module():
    for name in citeverify.__all__:
        obj = getattr(citeverify, name)
        module = getattr(obj, "__module__", "citeverify")
        assert module.startswith("citeverify"), name


def test_errors_form_one_tree():
    for cls in (citeverify.PolicyError, citeverify.InputError, citeverify.CitationUnverifiedError):
        assert issubclass(cls, citeverify.CiteVerifyError)
