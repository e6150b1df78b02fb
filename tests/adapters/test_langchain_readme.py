"""The adapter README's Python examples run here too (.ci/wheel_smoke.py runs them from wheels)."""

import importlib.util
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "langchain_citeverify" / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
#: LangChain 1.x's agents and LangGraph: the ``agents`` extra, absent on the lowest versions.
OPTIONAL = ("langchain.agents", "langgraph")


def installed(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package is absent
        return False


def test_the_readme_shows_the_middleware_and_a_langgraph_node():
    assert any("create_agent(" in code and "CiteVerifyMiddleware(" in code for code in BLOCKS)
    assert any("StateGraph(" in code for code in BLOCKS)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example(code, capsys):
    for module in OPTIONAL:
        if f"from {module}" in code and not installed(module):
            pytest.skip(f"needs {module} (pip install 'langchain-citeverify[agents]')")
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out
    # The comments after print() say what it prints: hold the examples to them.
    for expected in re.findall(r"print\(.*\)  # (.+)", code):
        assert expected in printed
