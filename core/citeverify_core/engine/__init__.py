"""The verification engine: claims, quotes, numbers and citations of an answer against its context.

The public entry point is :class:`citeverify_core.CitationVerifier`; the modules here hold its
parts (text matching in :mod:`citeverify_core.text`, the context index, citation extraction and
checks, the semantic tier, the result objects and their renderings).
"""
