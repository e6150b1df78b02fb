"""Install the built wheel into a fresh venv with plain pip and run the README's examples there.

What a user gets from ``pip install``: no editable install, no tests/ folder, no dev
dependencies. Run by ``.ci/run`` (it needs the package index, so it is not part of the pytest
suite, whose sockets are loopback-only). Usage: ``python .ci/wheel_smoke.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Build, install, run; 0 when every example and --version work."""
    with tempfile.TemporaryDirectory(prefix="citeverify-smoke-") as tmp:
        work = Path(tmp)
        dist = work / "dist"
        subprocess.run(
            [sys.executable, "-m", "uv", "build", "--wheel", "--out-dir", str(dist), str(ROOT)],
            check=True,
        )
        (wheel,) = dist.glob("citeverify-*.whl")
        venv.create(work / "venv", with_pip=True)
        python = work / "venv" / "bin" / "python"
        # numpy: the README's LangChain example uses LangChain's in-memory vector store.
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"{wheel}[langchain,llamaindex]", "numpy"],
            check=True,
        )
        blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
        failed = 0
        for i, code in enumerate(blocks):
            # From an empty folder: nothing of the repository is reachable.
            run = subprocess.run(
                [str(python), "-c", code], cwd=work, capture_output=True, text=True, check=False
            )
            status = "ok" if run.returncode == 0 else "FAILED"
            print(f"README example {i}: {status}")
            if run.returncode:
                failed += 1
                print(run.stderr[-2000:])
        version = subprocess.run(
            [str(work / "venv" / "bin" / "citeverify"), "--version"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        print(version.stdout.strip() or version.stderr.strip())
        if version.returncode:
            failed += 1
        print(f"{len(blocks) - failed} passed, {failed} failed")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
