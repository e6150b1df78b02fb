"""The README's Python examples run and their assertions hold."""

import asyncio
import importlib.util
import os
import re
import warnings
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
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        _close_implicit_loop()
    assert os.getcwd() == str(ROOT)


def _close_implicit_loop() -> None:
    """Close the event loop a synchronous LlamaIndex call left as this thread's current loop.

    llama-index-core's ``asyncio_run`` (used by the sync methods of its default chat ``Memory``)
    calls ``asyncio.get_event_loop()``, which creates a loop, sets it as the thread's current one
    and never closes it. The next ``asyncio.run`` replaces it and its self-pipe socket is then
    garbage collected unclosed: a ResourceWarning in whichever later test happens to run then.
    A README example runs in this process, so it cleans up after the library here.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "no current event loop" (3.12+)
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # none and none can be made here
            return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)
