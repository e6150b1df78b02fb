"""Install the built wheels into fresh venvs with plain pip and run the READMEs' examples there.

What a user gets from ``pip install``: no editable install, no tests/ folder, no dev
dependencies. Three venvs: the core alone (no extra), and one per framework, because a user of one
framework never installs the other: ``citeverify-core`` + ``langchain-citeverify``, and
``citeverify-core`` + ``llama-index-postprocessor-citeverify``.

- The core alone: ``CitationVerifier("recommended")`` verifies, ``citeverify check``, ``demo`` and
  ``--version`` run, and reference verification, the other commands and the service say which
  extra they need. Then the ``references`` extra is added there, for the examples that use it.
- The installed size of each venv (its site-packages, less a bare venv's) is printed and held
  under a ceiling (bench/README.md, "Install sizes").
- Each README example runs (from an empty folder) in the venv of the framework it imports.

Run by ``.ci/run`` (it needs the package index, so it is not part of the pytest suite, whose
sockets are loopback-only). Usage: ``python .ci/wheel_smoke.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Every ```python block of these runs (docs/ too: an example there must run as well).
READMES = [
    ROOT / "README.md",
    ROOT / "langchain_citeverify" / "README.md",
    ROOT / "llamaindex_citeverify" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
# venv name -> (adapter wheel prefix, extra packages its examples need, module it must NOT have)
VENVS = {
    # numpy: the README's LangChain example searches LangChain's InMemoryVectorStore, whose
    # cosine similarity needs numpy; langchain-core does not install it. langchain (1.x, with
    # langgraph): the agent examples (CiteVerifyMiddleware, the `agents` extra).
    "langchain": ("langchain_citeverify-", ["numpy", "langchain>=1.0"], "llama_index"),
    "llamaindex": ("llama_index_postprocessor_citeverify-", [], "langchain_core"),
}
#: Installed size ceilings in MB (10**6 bytes of files in site-packages, less a bare venv's):
#: measured (bench/README.md, "Install sizes") plus a margin for the dependencies' growth.
CEILINGS_MB = {"core": 28, "langchain": 90, "llamaindex": 290}
#: Examples that need an extra run in the core venv once the extra is installed there.
NEEDS_REFERENCES = re.compile(r"citeverify_core\.(references|client)")

# The core alone: what works, and what names its extra (exit code 0 when every check holds).
LIGHT_CHECKS = r"""
import subprocess, sys
from pathlib import Path
from citeverify_core import CitationVerifier
from citeverify_core.errors import MissingExtraError

docs = ["The museum opens at nine. Entry is free on Sundays."]
assert CitationVerifier("recommended").verify("The museum opened at nine.", docs).verified
offline = {"require_sources": False, "extensions": {"lookups": {"enabled": False}}}
import warnings
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    case = CitationVerifier(offline).verify("Smith v. Jones, 999 Fake Rptr. 12 (2020).", docs)
assert [c.status for c in case.details.citations] == ["unchecked"], case.details.citations
assert any("caselaw extra" in note for note in case.notes), case.notes
for statement, extra in [
    ("import citeverify_core.references", "references"),
    ("from citeverify_core.service import create_app", "server"),
]:
    try:
        exec(statement)
    except MissingExtraError as exc:
        assert f"needs the {extra} extra" in str(exc), exc
    else:
        raise AssertionError(f"{statement}: no MissingExtraError")
script = Path(sys.executable).with_name("citeverify")
Path("answer.txt").write_text("The museum opens at nine.")
for args, code, out in [
    (["check", "-a", "answer.txt", "-c", "answer.txt", "--no-lookups"], 0, "Verdict: ALLOW"),
    (["demo"], 0, "Question: "),
    (["--version"], 0, "citeverify "),
    (["refs", "answer.txt"], 2, ""),
]:
    done = subprocess.run([script, *args], capture_output=True, text=True, check=False)
    assert done.returncode == code and done.stdout.startswith(out), (args, done)
    assert "Traceback" not in done.stderr, done.stderr
    if code:  # one hint naming every extra refs needs (not cli, then references)
        hint = "python -m pip install 'citeverify-core[cli,references]'"
        assert f"needs the cli and references extras: {hint}" in done.stderr, done.stderr
print("ok")
"""


def _site_bytes(python: Path) -> int:
    """The bytes of the files in the site-packages of the venv of ``python``."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    return sum(
        os.path.getsize(os.path.join(folder, name))
        for folder, _, names in os.walk(site)
        for name in names
        if not os.path.islink(os.path.join(folder, name))
    )


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "install", "-q", *args], check=True)


def _run(python: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )


def main() -> int:
    """Build, install, run; 0 when every example, --version, check and the isolation hold."""
    failed = total = 0
    with tempfile.TemporaryDirectory(prefix="citeverify-smoke-") as tmp:
        work = Path(tmp)
        dist = work / "dist"
        subprocess.run(
            [sys.executable, "-m", "uv", "build", "--all-packages", "--wheel",
             "--out-dir", str(dist), str(ROOT)],
            check=True,
        )  # fmt: skip
        (core,) = dist.glob("citeverify_core-*.whl")
        venv.create(work / "bare", with_pip=True)
        bare = _site_bytes(work / "bare" / "bin" / "python")
        pythons: dict[str, Path] = {}
        sizes: dict[str, float] = {}
        venv.create(work / "core", with_pip=True)
        python = pythons["core"] = work / "core" / "bin" / "python"
        _pip(python, str(core))
        sizes["core"] = (_site_bytes(python) - bare) / 1e6
        (work / "light").mkdir()
        light = _run(python, LIGHT_CHECKS, work / "light")
        total += 1
        print(f"core alone (no extra): {'ok' if light.returncode == 0 else 'FAILED'}")
        if light.returncode:
            failed += 1
            print(light.stdout[-1000:], light.stderr[-3000:])
        for name, (prefix, extra, absent) in VENVS.items():
            (adapter,) = dist.glob(f"{prefix}*.whl")
            venv.create(work / name, with_pip=True)
            python = pythons[name] = work / name / "bin" / "python"
            _pip(python, str(core), str(adapter))
            sizes[name] = (_site_bytes(python) - bare) / 1e6
            if extra:
                _pip(python, *extra)
            total += 1
            check = f"import importlib.util as u; assert not u.find_spec({absent!r})"
            isolated = _run(python, check, work)
            status = "ok" if isolated.returncode == 0 else "FAILED"
            print(f"{name} venv without {absent}: {status}")
            failed += bool(isolated.returncode)
        for name, size in sizes.items():
            total += 1
            ok = size <= CEILINGS_MB[name]
            failed += not ok
            what = "core alone" if name == "core" else f"core + {name} adapter"
            print(f"installed size, {what}: {size:.1f} MB (ceiling {CEILINGS_MB[name]} MB)"
                  f"{'' if ok else ': FAILED'}")  # fmt: skip
        _pip(pythons["core"], f"{core}[references]")  # for the examples that verify references
        for readme in READMES:
            blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.DOTALL)
            for i, code in enumerate(blocks):
                name = "llamaindex" if "llama_index" in code else "langchain"
                if NEEDS_REFERENCES.search(code):
                    name = "core"
                run = _run(pythons[name], code, work)  # an empty folder: no repository files
                total += 1
                status = "ok" if run.returncode == 0 else "FAILED"
                print(f"{readme.relative_to(ROOT)} example {i} ({name} venv): {status}")
                if run.returncode:
                    failed += 1
                    print(run.stderr[-2000:])
        version = subprocess.run(
            [str(work / "langchain" / "bin" / "citeverify"), "--version"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        print(version.stdout.strip() or version.stderr.strip())
        total += 1
        failed += bool(version.returncode)
        # The plain `check` runs without typer (citeverify_core.cli.fast) from the installed wheel.
        (work / "answer.txt").write_text("The museum opens at nine.\n", encoding="utf-8")
        (work / "context.txt").write_text("The museum opens at nine.\n", encoding="utf-8")
        check = subprocess.run(
            [str(work / "langchain" / "bin" / "citeverify"), "check", "-a", "answer.txt",
             "-c", "context.txt", "--no-lookups"],
            capture_output=True, text=True, check=False, cwd=work,
        )  # fmt: skip
        ok = check.returncode == 0 and check.stdout.startswith("Verdict: ALLOW")
        print(f"citeverify check from the wheel: {'ok' if ok else 'FAILED'}")
        if not ok:
            print(check.stdout[-1000:], check.stderr[-2000:])
        total += 1
        failed += not ok
        print(f"{total - failed} passed, {failed} failed")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
