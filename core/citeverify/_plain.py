"""The default policy and the result objects without pydantic: the CLI's fast path (issue 14).

``citeverify check`` on a tiny input must start in about 150 ms. Importing pydantic costs about
75 ms and building the first model another 50 ms on these machines, so a verification that only
prints its text report builds plain twins of the objects instead (see :func:`verify_default`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeverify._result import VerificationResult

__all__ = ["verify_default"]


def verify_default(
    answer: str,
    documents: list[Any],
    *,
    action: str | None = None,
    lookups: bool = True,
    plain: bool = True,
) -> VerificationResult:
    """Verify ``answer`` under the default policy, as ``citeverify check`` without ``--policy``.

    ``action`` overrides ``output_action.unverified_action``; ``lookups=False`` turns external
    lookups off. With ``plain`` (the text report), the result may be a pydantic-free twin of
    :class:`VerificationResult` with the same attributes (``verified`` included): read it, do not
    serialise it. ``plain=False`` always returns the real model (``--json``).

    Raises:
        InputError, PolicyError: as :meth:`CitationVerifier.verify` and ``PolicyConfig`` do.
    """
    from citeverify._policy import PolicyConfig  # noqa: PLC0415
    from citeverify._verifier import CitationVerifier  # noqa: PLC0415

    data: dict[str, Any] = {}
    if action is not None:
        data["output_action"] = {"unverified_action": action}
    if not lookups:
        data["extensions"] = {"lookups": {"enabled": False}}
    config = PolicyConfig.model_validate(data) if data else PolicyConfig()
    return CitationVerifier(config).verify(answer, documents)
