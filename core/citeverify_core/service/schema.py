"""The reference service's wire contract, shared by the service and its client.

Imports neither FastAPI nor SQLAlchemy, so that :mod:`citeverify_core.client` can use it.
"""

from __future__ import annotations

__all__ = ["MAX_HISTORY", "MAX_POLL_IDS", "MAX_REFERENCES", "MAX_TITLE_CHARS"]

#: References per submission and job ids per poll, as the reference-verification API limits them.
MAX_REFERENCES = 20
MAX_POLL_IDS = 50
#: Entries per history page.
MAX_HISTORY = 50
#: A document title is a label, not a document.
MAX_TITLE_CHARS = 500
