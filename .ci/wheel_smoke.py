"""Install the built wheels into fresh venvs with plain pip and run the READMEs' examples there.

What a user gets from ``pip install``: no editable install, no tests/ folder, no dev
dependencies. Two venvs, one per framework, because a user of one framework never installs the
other: ``citeverify-core`` + ``langchain-citeverify``, and ``citeverify-core`` +
``llama-index-postprocessor-citeverify``. Each README example runs (from an empty folder) in the
venv of the framework it imports. Run by ``.ci/run`` (it needs the package index, so it is not
part of the pytest suite, whose sockets are loopback-only). Usage: ``python .ci/wheel_smoke.py``.
"""

from __future__ import annotations

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
    # numpy: the README's LangChain example uses LangChain's in-memory vector store; langchain
    # (1.x, with langgraph): the agent examples (CiteVerifyMiddleware, the `agents` extra).
    "langchain": ("langchain_citeverify-", ["numpy", "langchain>=1.0"], "llama_index"),
    "llamaindex": ("llama_index_postprocessor_citeverify-", [], "langchain_core"),
}


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
        pythons: dict[str, Path] = {}
        for name, (prefix, extra, absent) in VENVS.items():
            (adapter,) = dist.glob(f"{prefix}*.whl")
            venv.create(work / name, with_pip=True)
            python = pythons[name] = work / name / "bin" / "python"
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", str(core), str(adapter), *extra],
                check=True,
            )
            total += 1
            check = f"import importlib.util as u; assert not u.find_spec({absent!r})"
            isolated = _run(python, check, work)
            status = "ok" if isolated.returncode == 0 else "FAILED"
            print(f"{name} venv without {absent}: {status}")
            failed += bool(isolated.returncode)
        for readme in READMES:
            blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.DOTALL)
            for i, code in enumerate(blocks):
                name = "llamaindex" if "llama_index" in code else "langchain"
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
