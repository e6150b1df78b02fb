"""LlamaIndex integration of citeverify (install with ``pip install citeverify[llamaindex]``).

The postprocessor, query engine hook and evaluator arrive with the LlamaIndex issue; this package
exists so that the distribution's layout is fixed from the start.
"""

__all__: list[str] = []
