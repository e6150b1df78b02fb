"""LangChain integration of citeverify (install with ``pip install citeverify[langchain]``).

The guard Runnable, output parser and tools arrive with the LangChain issue; this package exists
so that the distribution's layout is fixed from the start.
"""

__all__: list[str] = []
