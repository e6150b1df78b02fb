"""A light install: what works without each extra, and how a missing extra is named.

The core's required dependencies are what ``CitationVerifier().verify()`` needs; references,
case law, the command line, the service and batch are extras. Each test runs a subprocess in
which an import hook (a finder first in ``sys.meta_path``) makes the extra's modules fail to
import as they would when not installed, so this test process keeps its modules. Installing the
built wheel alone in a fresh venv is ``.ci/wheel_smoke.py``.
"""

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from citeverify_core.errors import EXTRA_MODULES, MissingExtraError, install_hint

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

BLOCKER = """
import sys

class _NotInstalled:
    # What the import system does for a module that is not installed, for these names only.
    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError("No module named " + repr(name), name=name)
        return None

sys.meta_path.insert(0, _NotInstalled(NAMES))
"""


def run(code: str, missing: list[str], *, cwd: Path | None = None) -> subprocess.CompletedProcess:
    program = BLOCKER.replace("NAMES", repr(missing)) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
        cwd=cwd,
    )


def _requirement_names(extra: str, seen: set[str] | None = None) -> set[str]:
    """The distributions an extra brings, its references to other extras followed."""
    seen = seen if seen is not None else set()
    names: set[str] = set()
    for requirement in PYPROJECT["optional-dependencies"][extra]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group().lower().replace("_", "-")
        if name == "citeverify-core":
            for inner in re.search(r"\[(.*?)\]", requirement).group(1).split(","):
                if inner not in seen:
                    seen.add(inner)
                    names |= _requirement_names(inner, seen)
        else:
            names.add(name)
    return names


#: Modules whose distribution has another name.
_DISTRIBUTION = {"pdfminer": "pdfminer.six", "docx": "python-docx"}


@pytest.mark.parametrize("extra", sorted(EXTRA_MODULES))
def test_each_extra_brings_the_modules_the_code_checks_for(extra):
    brought = _requirement_names(extra)
    needed = {_DISTRIBUTION.get(m, m.replace("_", "-")) for m in EXTRA_MODULES[extra]}
    assert needed <= brought, brought


def test_the_required_dependencies_hold_no_extra():
    required = {re.match(r"[A-Za-z0-9_.-]+", r).group().lower() for r in PYPROJECT["dependencies"]}
    optional = {
        _DISTRIBUTION.get(m, m.replace("_", "-"))
        for modules in EXTRA_MODULES.values()
        for m in modules
    }
    assert not required & optional
    assert {"pydantic", "httpx", "pyyaml", "idutils", "pystemmer"} == required


def test_the_server_extra_brings_everything_the_service_imports():
    # The service verifies references and answers (case law included) and is started by the CLI.
    assert _requirement_names("server") >= {"typer", "rapidfuzz", "bibtexparser", "eyecite"}


def test_missing_extra_error_is_an_import_error_that_names_the_extra():
    error = MissingExtraError("reference verification", "references", "rapidfuzz")
    assert isinstance(error, ModuleNotFoundError)
    assert error.name == "rapidfuzz"
    assert str(error) == (
        "reference verification needs the references extra: " + install_hint("references")
    )
    assert "pip install 'citeverify-core[references]'" in str(error)
    assert "pip install citeverify " not in str(error) + " "  # another project's name


# --- without the references extra ------------------------------------------------------------


@pytest.mark.parametrize("module", ["rapidfuzz", "bibtexparser"])
def test_references_without_the_extra_names_it(module):
    done = run(
        """
        try:
            import citeverify_core.references
        except ImportError as exc:
            print(type(exc).__name__, exc.name, exc)
        """,
        [module],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"MissingExtraError {module} reference verification needs the")
    assert "'citeverify-core[references]'" in done.stdout


def test_the_client_without_the_references_extra_names_it():
    done = run("import citeverify_core.client", ["rapidfuzz"])
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith(
        "citeverify_core.errors.MissingExtraError: reference verification needs the references"
    )


def test_verify_and_the_recommended_policy_need_no_extra():
    every = sorted({m for modules in EXTRA_MODULES.values() for m in modules})
    done = run(
        """
        import json
        from citeverify_core import CitationVerifier

        docs = ["The museum opens at nine. Entry is free on Sundays."]
        result = CitationVerifier("recommended").verify("The museum opened at nine.", docs)
        offline = {"extensions": {"lookups": {"enabled": False}}}
        cited = CitationVerifier(offline).verify(
            "The museum opens at nine (doi:10.1038/nature14539), see https://louvre.fr.", docs
        )
        print(json.dumps([result.verified, [c.kind for c in cited.details.citations]]))
        """,
        every,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, ["doi", "url"]]


def test_the_langchain_guard_works_without_the_references_extra():
    done = run(
        """
        from langchain_citeverify import CiteVerifyGuard, CiteVerifyReferenceTool

        out = CiteVerifyGuard().invoke({"answer": "It opens at nine.", "context": ["It opens at nine."]})
        print(out["verification"].verdict)
        try:
            CiteVerifyReferenceTool(verifier=object())
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """,
        ["rapidfuzz", "bibtexparser"],
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == "allow"
    assert second.startswith("MissingExtraError reference verification needs the references extra")


# --- case law without eyecite ----------------------------------------------------------------


def test_case_law_without_eyecite_is_found_reported_unchecked_and_noted():
    done = run(
        """
        import json, warnings
        from citeverify_core import CitationVerifier

        offline = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}
        verifier = CitationVerifier(offline)
        docs = ["The court held that the policy was lawful.", "See Roe v. Wade, 410 U.S. 113."]
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for answer in (
                "The court held that the policy was lawful. Smith v. Jones, 999 Fake Rptr. 12 (2020).",
                "The court held that the policy was lawful in Roe v. Wade, 410 U.S. 113.",
            ):
                r = verifier.verify(answer, docs)
                out.append([r.verdict, r.notes, [(c.kind, c.status, c.reason) for c in r.details.citations]])
        print(json.dumps([out, [(w.category.__name__, str(w.message)) for w in caught]]))
        """,
        ["eyecite"],
    )
    assert done.returncode == 0, done.stderr
    (invented, in_context), caught = json.loads(done.stdout)
    verdict, notes, citations = invented
    assert verdict == "allow"  # case law never decided the verdict; the claims do
    assert [(kind, status) for kind, status, _ in citations] == [("case", "unchecked")]
    assert "needs the caselaw extra" in citations[0][2]
    assert any(
        "case-law citations were found by a plain pattern and not checked" in n for n in notes
    )
    assert any("'citeverify-core[caselaw]'" in n for n in notes)
    assert [(kind, status) for kind, status, _ in in_context[2]] == [("case", "in_context")]
    assert not in_context[1]  # nothing left unchecked: no note
    assert [category for category, _ in caught] == ["MissingExtraWarning"]  # once a process


def test_case_law_with_eyecite_checks_the_reporter():
    from citeverify_core import CitationVerifier

    offline = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}
    result = CitationVerifier(offline).verify("Smith v. Jones, 999 Fake Rptr. 12 (2020).", [])
    assert [c.status for c in result.details.citations] == ["format_invalid"]
    assert not any("caselaw" in n for n in result.notes)


# --- the command line without typer, the references or the server extra -----------------------


@pytest.fixture
def files(tmp_path):
    (tmp_path / "answer.txt").write_text("The museum opens at nine.\n", encoding="utf-8")
    (tmp_path / "context.txt").write_text("The museum opens at nine.\n", encoding="utf-8")
    (tmp_path / "refs.txt").write_text("Kuhn, T. S. (1962). The Structure.\n", encoding="utf-8")
    return tmp_path


def cli(args, missing, cwd):
    return run(f"sys.argv = ['citeverify', *{args!r}]\nfrom citeverify_core.cli import main\nmain()", missing, cwd=cwd)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["check", "-a", "answer.txt", "-c", "context.txt", "--no-lookups"], "Verdict: ALLOW"),
        (["demo"], "Question: "),
        (["demo", "--json"], '[\n  {\n    "label"'),
        (["--version"], "citeverify "),
    ],
)
def test_plain_commands_run_without_typer(files, args, expected):
    done = cli(args, ["typer", "click", "rich"], files)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(expected)


@pytest.mark.parametrize("args", [["refs", "refs.txt"], ["--help"], [], ["check", "-a", "answer.txt", "--policy", "recommended"]])  # fmt: skip
def test_other_commands_without_typer_name_the_cli_extra(files, args):
    done = cli(args, ["typer", "click", "rich"], files)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("citeverify: error: citeverify")
    assert "needs the cli extra: python -m pip install 'citeverify-core[cli]'" in done.stderr


_SERVER = ["fastapi", "uvicorn", "sqlalchemy", "prometheus_client", "aiohttp", "platformdirs"]


@pytest.mark.parametrize(
    ("args", "missing", "extras"),
    [
        pytest.param(["serve", "--port", "0"], ["typer", "click", "rich", *_SERVER], "server", id="serve"),
        pytest.param(["keys", "list"], ["typer", "click", "rich", *_SERVER], "server", id="keys"),
        pytest.param(["refs", "refs.txt"], ["typer", "click", "rich", "rapidfuzz"], "cli,references", id="refs"),
    ],
)  # fmt: skip
def test_a_command_without_the_cli_extra_asks_once_for_all_it_needs(files, args, missing, extras):
    # Installing what the one line names runs the command: serve's server extra brings cli, so
    # it is not asked for first and server after (issue 32); refs needs both of its extras.
    done = cli(args, missing, files)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert f"python -m pip install 'citeverify-core[{extras}]'" in done.stderr
    installs = re.findall(r"pip install '(?:citeverify-core|\.)\[([^\]]*)\]'", done.stderr)
    assert installs == [extras, extras]  # from the index, from a clone: nothing else
    brought = set().union(*(_requirement_names(e) for e in extras.split(",")))
    assert {"typer"} | {_DISTRIBUTION.get(m, m.replace("_", "-")) for m in missing} - {
        "click",
        "rich",
    } <= brought


def test_the_extras_said_to_bring_cli_are_the_ones_that_do():
    from citeverify_core.cli.fast import COMMAND_EXTRAS, EXTRAS_WITH_CLI

    for extra in set(COMMAND_EXTRAS.values()) | EXTRAS_WITH_CLI:
        assert ("typer" in _requirement_names(extra)) == (extra in EXTRAS_WITH_CLI), extra


@pytest.mark.parametrize(
    ("args", "missing", "extra"),
    [
        (["refs", "refs.txt"], ["rapidfuzz"], "references"),
        (["serve", "--port", "0"], ["fastapi", "uvicorn"], "server"),
        (["keys", "list"], ["sqlalchemy"], "server"),
    ],
)
def test_commands_without_their_extra_name_it(files, args, missing, extra):
    done = cli(args, missing, files)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert f"needs the {extra} extra: python -m pip install 'citeverify-core[{extra}]'" in (
        done.stderr
    )


def test_the_service_without_the_server_extra_names_it():
    done = run(
        """
        try:
            from citeverify_core.service import create_app
        except ImportError as exc:
            print(exc)
        """,
        ["fastapi"],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("the reference-verification service needs the server extra")
