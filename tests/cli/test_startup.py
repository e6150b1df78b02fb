"""Startup stays lazy: what a process imports is paid on every ``citeverify`` run.

Each case runs in a fresh interpreter and lists the modules that the statement under test added
to ``sys.modules`` (so that whatever the interpreter or a ``.pth`` file loads first does not
count). The figures are bench/bench_startup.py's; these tests keep the heavy imports out of the
paths that do not need them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

#: Third-party packages that cost tens to hundreds of milliseconds at import, and our own
#: modules that pull them in.
HEAVY = {
    "httpx",  # ~280 ms: it imports its optional command line (click, rich, pygments)
    "idutils",  # ~300 ms: compiles a few hundred regular expressions
    "eyecite",  # ~250 ms: builds its reporter tokenizer
    "bibtexparser",
    "sqlalchemy",
    "rapidfuzz",
    "yaml",
    "rich",
    "click",
    "pygments",
    "asyncio",
    "sqlite3",
}
ENGINE = {
    "pydantic",
    "citeverify_core.engine.verifier",
    "citeverify_core.policy.loading",
    "citeverify_core.engine.results",
}
#: What validating a policy costs; the default policy, the settings and the results need none.
VALIDATION = {"pydantic", "pydantic_core", "citeverify_core.policy.loading", "yaml"}


def imported_by(statement: str, setup: str = "") -> set[str]:
    """Top-level packages (and citeverify modules) that ``statement`` newly imports."""
    code = textwrap.dedent(
        f"""
        import json, sys
        {setup}
        before = set(sys.modules)
        {statement}
        new = set(sys.modules) - before
        print(json.dumps(sorted(new)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    names = json.loads(done.stdout.splitlines()[-1])
    return {n for n in names if n.startswith("citeverify")} | {n.split(".")[0] for n in names}


def test_import_citeverify_imports_nothing_heavy() -> None:
    new = imported_by("import citeverify_core")
    assert not new & (HEAVY | ENGINE | {"typer"}), sorted(new & (HEAVY | ENGINE | {"typer"}))


def test_public_names_still_resolve_lazily() -> None:
    new = imported_by(
        "import citeverify_core\n"
        "        names = [getattr(citeverify_core, n) for n in citeverify_core.__all__]\n"
        "        assert set(citeverify_core.__all__) <= set(dir(citeverify_core))\n"
        "        assert isinstance(citeverify_core.__version__, str)"
    )
    # Every name is there; still no network stack or extractor until something is verified.
    assert "citeverify_core.engine.verifier" in new
    assert not new & {"httpx", "idutils", "eyecite", "yaml", "asyncio", "sqlalchemy"}


def test_verify_without_identifiers_imports_no_extractor_or_network_stack() -> None:
    new = imported_by(
        "CitationVerifier().verify('The museum opens at nine. Entry is free.', "
        "['The museum opens at nine.'])",
        setup="from citeverify_core import CitationVerifier",
    )
    assert not new & HEAVY, sorted(new & HEAVY)


def test_default_policy_and_results_need_no_validation() -> None:
    new = imported_by(
        "r = CitationVerifier().verify('The museum opens at nine [1].', ['The museum opens.'])\n"
        "        r.to_dict(), str(r), r._repr_html_()\n"
        "        import citeverify_core.policy, citeverify_core.engine.results\n"
        "        citeverify_core.policy.PolicySettings()",
        setup="from citeverify_core import CitationVerifier",
    )
    assert not new & VALIDATION, sorted(new & VALIDATION)


def test_check_fast_path_imports_no_pydantic(tmp_path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("The museum opens at nine.", encoding="utf-8")
    context = tmp_path / "context.txt"
    context.write_text("The museum opens at nine.", encoding="utf-8")
    new = imported_by(
        "from citeverify_core.cli.fast import fast_main\n"
        f"        assert fast_main(['check', '-a', {str(answer)!r}, '-c', {str(context)!r}, "
        "'--action', 'block', '--no-lookups', '--json']) == 0"
    )
    assert not new & (VALIDATION | {"typer", "click"}), sorted(new & VALIDATION)


def test_check_of_an_answer_without_identifiers_leaves_lookups_and_renderers_out(tmp_path) -> None:
    # Issue 32: the lookups' modules (HTTP, cache), the HTML renderer and the helpers that only
    # some answers need cost a check of a plain answer about a third of its start-up.
    answer = tmp_path / "answer.txt"
    answer.write_text("The museum opens at nine. Entry is free.", encoding="utf-8")
    context = tmp_path / "context.txt"
    context.write_text("The museum opens at nine.", encoding="utf-8")
    new = imported_by(
        "from citeverify_core.cli.fast import fast_main\n"
        f"        assert fast_main(['check', '-a', {str(answer)!r}, '-c', {str(context)!r}]) == 0"
    )
    assert "citeverify_core.engine.verifier" in new  # it did verify
    unneeded = {
        "citeverify_core.lookups.resolve",
        "citeverify_core.lookups.cache",
        "citeverify_core.lookups.http",
        "html",
        "textwrap",
        "logging",
        "datetime",
    }
    assert not new & unneeded, sorted(new & unneeded)


def test_citation_marker_patterns_compile_on_first_use() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from citeverify_core.engine.extract import markers\n"
            "assert markers._pattern.cache_info().currsize == 0\n"
            "assert markers.citation_markers('The museum opens at nine.') == []\n"
            "assert markers._pattern.cache_info().currsize == 0\n"
            "assert markers.citation_markers('It opens at nine (Smith, 2020).') == [(17, 30)]\n"
            "assert markers._pattern.cache_info().currsize == 2",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_verify_with_a_doi_offline_imports_idutils_only() -> None:
    new = imported_by(
        "r = CitationVerifier(POLICY).verify('Shown in doi:10.1038/nature12373.', ['Shown.'])\n"
        "        assert [c.kind for c in r.details.citations] == ['doi'], r.details.citations",
        setup=(
            "from citeverify_core import CitationVerifier\n"
            "        POLICY = {'extensions': {'lookups': {'enabled': False}}}"
        ),
    )
    assert "idutils" in new
    assert not new & (HEAVY - {"idutils"}), sorted(new & HEAVY)


def test_verify_with_a_case_citation_imports_eyecite_not_the_network_stack() -> None:
    new = imported_by(
        "r = CitationVerifier().verify(TEXT, ['The museum opens at nine.'])\n"
        "        assert [c.type for c in r.details.citations] == ['case_law']",
        setup=(
            "from citeverify_core import CitationVerifier\n"
            "        TEXT = 'See Brown v. Board of Education, 347 U.S. 483 (1954).'"
        ),
    )
    assert "eyecite" in new
    assert not new & {"httpx", "idutils", "asyncio", "sqlite3", "yaml"}, sorted(new & HEAVY)


def test_cli_module_leaves_the_engine_to_the_commands() -> None:
    # `citeverify --version` and `--help` import the command line only. What typer itself imports
    # is typer's business (before 0.26 it imports click and rich): imported first, not counted.
    new = imported_by("import citeverify_core.cli.app", setup="import typer")
    assert not new & (HEAVY | ENGINE), sorted(new & (HEAVY | ENGINE))


def test_references_package_imports_parts_on_demand() -> None:
    new = imported_by(
        "from citeverify_core.references import parse_reference\n"
        "        assert parse_reference('Kuhn, T. S. (1962). The Structure of Scientific "
        "Revolutions. University of Chicago Press.').year == 1962"
    )
    assert not new & {"httpx", "sqlalchemy", "eyecite", "asyncio"}, sorted(new & HEAVY)


def test_lookup_errors_are_built_on_first_use() -> None:
    import httpx

    import citeverify_core.lookups.http as lookup
    from citeverify_core.lookups.http import LOOKUP_ERRORS

    assert httpx.HTTPError in LOOKUP_ERRORS
    assert httpx.InvalidURL in LOOKUP_ERRORS
    with pytest.raises(AttributeError, match="no attribute 'NO_SUCH_NAME'"):
        _ = lookup.NO_SUCH_NAME


def test_unknown_attribute_is_an_attribute_error() -> None:
    import citeverify_core
    import citeverify_core.references

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = citeverify_core.nope
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = citeverify_core.references.nope
