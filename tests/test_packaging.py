"""`import citeverify` works from a built wheel, not only from the editable install."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("citeverify-*.whl")
    return path


def test_wheel_holds_the_three_packages_and_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "citeverify/__init__.py",
        "citeverify/py.typed",
        "citeverify/_demo/rag_example.json",
        "langchain_citeverify/__init__.py",
        "llamaindex_citeverify/__init__.py",
    ):
        assert required in names
    assert not any(n.startswith(("core/", "tests/")) for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)  # Apache-2.0 text
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "citeverify = citeverify.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_import_and_demo_from_the_wheel(wheel):
    # A pure wheel is importable as a zip: put it first on the path, ahead of the editable install.
    env = {**os.environ, "PYTHONPATH": str(wheel)}
    code = "import citeverify; print(citeverify.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().startswith(str(wheel))
    demo = subprocess.run(
        [sys.executable, "-m", "citeverify", "demo"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert "Verdict: BLOCK" in demo.stdout
