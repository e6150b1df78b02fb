"""Idempotency keys of submissions: a retried submission replays its first answer.

A client that sends ``Idempotency-Key`` with a submission and retries it (a timeout, a lost
answer) gets the first answer again, and nothing is queued or charged twice. The key is per API
key; the same key with another body is refused. Keys are remembered for
:data:`IDEMPOTENCY_SECONDS`. The rows live in the service's database
(:data:`~citeverify_core.service.store.IDEMPOTENCY`), written in the submission's transaction.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from citeverify_core.errors import InputError, ServiceError
from citeverify_core.service import store
from citeverify_core.service.store import IDEMPOTENCY

__all__ = [
    "IDEMPOTENCY_SECONDS",
    "MAX_IDEMPOTENCY_KEY",
    "SameKeyMeanwhile",
    "body_hash",
    "check_key",
    "forget_expired",
    "remember",
    "replay",
]

#: Seconds an ``Idempotency-Key`` is remembered (a retry within this replays the first answer).
IDEMPOTENCY_SECONDS = 24 * 3600.0
#: The longest ``Idempotency-Key`` accepted.
MAX_IDEMPOTENCY_KEY = 255


class SameKeyMeanwhile(Exception):
    """A concurrent submission with the same idempotency key committed first."""


def check_key(key: object) -> str:
    """The key, checked: 1 to 255 printable ASCII characters.

    Raises:
        InputError: anything else (``path`` is ``Idempotency-Key``).
    """
    if not (
        isinstance(key, str)
        and 0 < len(key) <= MAX_IDEMPOTENCY_KEY
        and key.isascii()
        and key.isprintable()
    ):
        msg = f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters"
        raise InputError(msg, path="Idempotency-Key")
    return key


def body_hash(references: Sequence[str], title: str | None) -> str:
    """The hash of what was submitted: a retry must submit the same."""
    return hashlib.sha256(
        json.dumps([list(references), title], ensure_ascii=True).encode()
    ).hexdigest()


def forget_expired(db: sa.Connection) -> None:
    """Delete the keys older than :data:`IDEMPOTENCY_SECONDS`."""
    db.execute(
        IDEMPOTENCY.delete().where(IDEMPOTENCY.c.created_ts < store.clock() - IDEMPOTENCY_SECONDS)
    )


def replay(db: sa.Connection, tenant: int, key: str, digest: str) -> dict[str, Any] | None:
    """The answer of an earlier submission with this key, or None when there is none.

    Raises:
        ServiceError: 422 ``idempotency_key_reused``, the key came with another body.
    """
    row = db.execute(
        sa.select(IDEMPOTENCY.c.body_hash, IDEMPOTENCY.c.answer, IDEMPOTENCY.c.created_ts).where(
            IDEMPOTENCY.c.api_key_id == tenant, IDEMPOTENCY.c.key == key
        )
    ).first()
    if row is None:
        return None
    if row.created_ts < store.clock() - IDEMPOTENCY_SECONDS:  # expired: forget it, submit anew
        db.execute(
            IDEMPOTENCY.delete().where(IDEMPOTENCY.c.api_key_id == tenant, IDEMPOTENCY.c.key == key)
        )
        return None
    if not hmac.compare_digest(row.body_hash, digest):
        msg = (
            "this Idempotency-Key was used with a different request body; use a new key for a "
            "new submission"
        )
        raise ServiceError(msg, status=422, code="idempotency_key_reused")
    answer: dict[str, Any] = json.loads(row.answer)
    return {**answer, "replayed": True}


def remember(db: sa.Connection, tenant: int, key: str, digest: str, answer: dict[str, Any]) -> None:
    """Keep a submission's answer under its key, in the submission's transaction.

    PostgreSQL: a concurrent request with the same key waits here on the primary key until the
    first commits, then fails and replays that answer. SQLite's ``BEGIN IMMEDIATE`` serialises
    the two before :func:`replay`.

    Raises:
        SameKeyMeanwhile: a concurrent submission with this key committed first.
    """
    try:
        with db.begin_nested():
            db.execute(
                IDEMPOTENCY.insert().values(
                    api_key_id=tenant,
                    key=key,
                    body_hash=digest,
                    answer=json.dumps(answer),
                    created_ts=store.clock(),
                )
            )
    except sa.exc.IntegrityError:
        raise SameKeyMeanwhile from None
