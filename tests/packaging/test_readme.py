"""The README's Python examples run and their assertions hold."""

import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


#: Modules an example may need that an environment lacks on purpose: LangChain 1.x's agents and
#: LangGraph (the ``agents`` extra), absent where the lowest versions run langchain-core 0.3.
OPTIONAL = ("langchain.agents", "langgraph")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package is absent
        return False


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example(code, monkeypatch, capsys):
    for module in OPTIONAL:
        if f"from {module}" in code and not _installed(module):
            pytest.skip(f"needs {module} (pip install 'langchain-citeverify[agents]')")
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert os.getcwd() == str(ROOT)
