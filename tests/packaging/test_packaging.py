"""The three distributions, built from the repository: what each wheel holds and declares.

``citeverify-core`` (import ``citeverify``), ``langchain-citeverify`` and
``llama-index-postprocessor-citeverify`` are released together with one version. Installing them
into a fresh venv with plain pip and running the READMEs is ``.ci/wheel_smoke.py`` (it needs the
package index, which this suite does not reach).
"""

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = {
    "citeverify-core": ROOT,
    "langchain-citeverify": ROOT / "langchain_citeverify",
    "llama-index-postprocessor-citeverify": ROOT / "llamaindex_citeverify",
}
REPOSITORY = "https://github.com/citeverify/citeverify"


def _pyproject(name):
    return tomllib.loads((PROJECTS[name] / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    for project in PROJECTS.values():
        subprocess.run(
            [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
            cwd=project,
            check=True,
            capture_output=True,
        )
    built = {}
    for name in PROJECTS:
        (built[name],) = out.glob(name.replace("-", "_") + "-*.whl")
    return built


def _metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(archive.read(name).decode())


def test_core_wheel_holds_the_engine_and_its_data_and_no_adapter(wheels):
    names = set(zipfile.ZipFile(wheels["citeverify-core"]).namelist())
    for required in (
        "citeverify_core/__init__.py",
        "citeverify_core/py.typed",
        "citeverify_core/_demo/rag_example.json",
        "citeverify_core/policy/packs/recommended.yaml",
        "citeverify_core/service/web/index.html",
    ):
        assert required in names
    # One import package of our own: nothing named `citeverify`, the import package of the
    # unrelated project of that name on the package index (installing both must not clash).
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"citeverify_core"}, top
    assert not any(n.startswith(("core/", "tests/", "langchain_", "llamaindex_")) for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheels["citeverify-core"]).read(entry_points).decode()
    assert "citeverify = citeverify_core.cli:main" in text  # typer-free start (issue 14)


@pytest.mark.parametrize(
    ("name", "packages", "framework", "other"),
    [
        ("langchain-citeverify", ["langchain_citeverify"], "langchain-core", "llama-index"),
        (
            "llama-index-postprocessor-citeverify",
            ["llama_index/postprocessor/citeverify", "llama_index/evaluation/citeverify"],
            "llama-index-core",
            "langchain",
        ),
    ],
)
def test_adapter_wheel_is_its_package_and_needs_the_core_at_the_same_version(
    wheels, name, packages, framework, other
):
    names = set(zipfile.ZipFile(wheels[name]).namelist())
    for package in packages:
        assert {f"{package}/__init__.py", f"{package}/py.typed"} <= names
    prefixes = (*(f"{p}/" for p in packages), f"{name.replace('-', '_')}-")
    assert all(n.startswith(prefixes) for n in names), names
    # Namespace portions: no __init__.py above the packages (llama-index-core ships none either),
    # or this wheel would shadow every other llama_index distribution.
    above = [n for n in names if n.startswith("llama_index/") and n.count("/") < 3]
    assert not [n for n in above if n.endswith("__init__.py")], above
    assert not any(n.endswith(("pyproject.toml", "README.md")) for n in names)
    requires = _metadata(wheels[name]).get_all("Requires-Dist")
    version = _pyproject("citeverify-core")["version"]
    assert f"citeverify-core=={version}" in requires
    assert any(r.startswith(framework) for r in requires)
    assert not any(
        r.startswith(other) for r in requires
    )  # one framework's users never get the other


@pytest.mark.parametrize("name", list(PROJECTS))
def test_every_distribution_has_the_license_urls_classifiers_and_one_version(wheels, name):
    meta = _metadata(wheels[name])
    assert meta["Name"] == name
    assert meta["Version"] == _pyproject("citeverify-core")["version"]  # one number for the three
    assert meta["License-Expression"] == "Apache-2.0"
    license_path = next(
        n for n in zipfile.ZipFile(wheels[name]).namelist() if n.endswith("licenses/LICENSE")
    )
    assert zipfile.ZipFile(wheels[name]).read(license_path) == (ROOT / "LICENSE").read_bytes()
    classifiers = meta.get_all("Classifier")
    for required in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {required}" in classifiers
    assert "Typing :: Typed" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Repository", "Documentation", "Issues"} <= set(urls)


@pytest.mark.parametrize("name", list(PROJECTS))
def test_readme_links_work_on_the_package_index_page(wheels, name):
    # The package index renders the long description away from the repository: a relative link
    # is dead there. Every link is absolute, and each one into the repository names a real file.
    description = _metadata(wheels[name]).get_payload()
    links = re.findall(r"\]\(([^)\s]+)\)", description)
    assert links
    for link in links:
        assert link.startswith(("https://", "#")), f"relative link {link!r} in {name}'s README"
        if link.startswith(tuple(f"{REPOSITORY}/{kind}/main/" for kind in ("blob", "tree", "raw"))):
            path = link.removeprefix(REPOSITORY + "/").split("/", 2)[2].split("#")[0]
            assert (ROOT / path).exists(), link


def test_import_and_demo_from_the_wheel(wheels):
    # A pure wheel is importable as a zip: put it first on the path, ahead of the editable install.
    env = {**os.environ, "PYTHONPATH": str(wheels["citeverify-core"])}
    code = "import citeverify_core; print(citeverify_core.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().startswith(str(wheels["citeverify-core"]))
    demo = subprocess.run(
        [sys.executable, "-m", "citeverify_core", "demo"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert "Verdict: BLOCK" in demo.stdout
