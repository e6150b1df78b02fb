"""The service's tenants: API keys, their tokens, authentication and the unauthenticated limit.

A job submitted under a key belongs to it and costs one token, reserved (``pending``) while the
job waits or runs. Completing a job spends its token; a failure or a cancellation refunds it.
:func:`reserve` and :func:`settle` run in the transaction of the job's change
(:mod:`citeverify_core.service.jobs`), so the balance always adds up.

Only a key's hash is kept. Requests without a valid key are counted per client address in the
database, so that every process sharing it applies one limit, and so are document uploads in
flight (:meth:`TenantStore.take_upload`): at most a few per key across all processes, each with
its reading's token reserved before a byte of its body is read.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from typing import Any

import sqlalchemy as sa

from citeverify_core.errors import (
    AuthenticationError,
    InputError,
    InsufficientTokensError,
    PermissionDeniedError,
    RateLimitError,
)
from citeverify_core.references.index import encodable
from citeverify_core.service import store
from citeverify_core.service.store import API_KEYS, RATE_HITS, UPLOADS, Store, now_iso

__all__ = ["KEY_PREFIX", "TenantStore", "reserve", "settle"]

#: Every key starts so (a secret scanner can find leaked ones); the next 8 characters are its
#: public prefix, shown by ``keys list`` and used to find it.
KEY_PREFIX = "cvk_"
#: Seconds a client told 429 for too many uploads at once waits before trying again.
RETRY_UPLOAD = 5.0


class TenantStore(Store):
    """API keys and their tokens in the service's database (see :class:`~.store.Store`).

    Raises:
        InputError: ``path`` is not a job store, or the database cannot be reached.
    """

    _rate_pruned = 0.0

    def create_key(self, name: str, *, tokens: int = 0) -> tuple[str, dict[str, Any]]:
        """A new API key with ``tokens``: the key (shown once) and its public record.

        Only the key's hash is kept.

        Raises:
            InputError: an empty name or one over 200 characters, or a negative token count.
        """
        _check_name(name)
        _check_tokens(tokens, allow_zero=True)
        key = f"{KEY_PREFIX}{secrets.token_urlsafe(32)}"
        with self.transaction() as db:
            key_id = db.execute(
                API_KEYS.insert()
                .values(
                    name=name,
                    prefix=_prefix(key),
                    key_hash=_hash(key),
                    tokens=tokens,
                    pending=0,
                    created_at=now_iso(),
                )
                .returning(API_KEYS.c.id)
            ).scalar_one()
        return key, self._key_record(int(key_id))

    def list_keys(self) -> list[dict[str, Any]]:
        """Every key's public record (never the key: only its first characters)."""
        with self.transaction() as db:
            rows = db.execute(sa.select(API_KEYS).order_by(API_KEYS.c.id)).all()
        return [_public(r) for r in rows]

    def _key_record(self, key_id: int) -> dict[str, Any]:
        with self.transaction() as db:
            row = db.execute(sa.select(API_KEYS).where(API_KEYS.c.id == key_id)).first()
        if row is None:
            raise InputError(f"no API key with id {key_id}", path="key")
        return _public(row)

    def _find_key(self, db: sa.Connection, ref: str | int) -> Any:
        """A key by id, by name, or by its public prefix; InputError when none or several."""
        if isinstance(ref, int) or (isinstance(ref, str) and ref.isascii() and ref.isdigit()):
            where = API_KEYS.c.id == int(ref)
        elif isinstance(ref, str) and ref.startswith(KEY_PREFIX):
            where = API_KEYS.c.prefix == _prefix(ref)
        elif isinstance(ref, str) and encodable(ref):
            where = API_KEYS.c.name == ref
        else:
            raise InputError("name a key by its id, its name or its first characters", path="key")
        rows = db.execute(sa.select(API_KEYS).where(where)).all()
        if not rows:
            raise InputError(f"no API key {ref!r}", path="key")
        if len(rows) > 1:
            raise InputError(f"{len(rows)} keys are named {ref!r}: use the id", path="key")
        return rows[0]

    def revoke_key(self, ref: str | int) -> dict[str, Any]:
        """Revoke a key (by id, name or prefix): its requests get 403 from now on.

        Raises:
            InputError: no key, or several keys, answer to ``ref``.
        """
        with self.transaction() as db:
            row = self._find_key(db, ref)
            db.execute(
                API_KEYS.update()
                .where(API_KEYS.c.id == row.id, API_KEYS.c.revoked_at.is_(None))
                .values(revoked_at=now_iso())
            )
        return self._key_record(int(row.id))

    def add_tokens(self, ref: str | int, tokens: int) -> dict[str, Any]:
        """Add ``tokens`` (> 0) to a key's balance.

        Raises:
            InputError: ``tokens`` is not an integer from 1 to 10^12, or no key (or several)
                answers to ``ref``.
        """
        _check_tokens(tokens, allow_zero=False)
        with self.transaction() as db:
            row = self._find_key(db, ref)
            db.execute(
                API_KEYS.update()
                .where(API_KEYS.c.id == row.id)
                .values(tokens=API_KEYS.c.tokens + tokens)
            )
        return self._key_record(int(row.id))

    def authenticate(self, key: str) -> dict[str, Any]:
        """The record of the key a request presents.

        The key is found by its public prefix and checked by comparing hashes in constant time
        (``hmac.compare_digest``), so timing says nothing about how much of a guess was right.

        Raises:
            AuthenticationError: not a key this service issued.
            PermissionDeniedError: a revoked key.
        """
        if (
            not isinstance(key, str)
            or not key.startswith(KEY_PREFIX)
            or len(key) > 200
            or not key.isascii()
        ):
            raise AuthenticationError(
                "missing or invalid API key: send Authorization: Bearer <key>"
            )
        with self.transaction() as db:
            rows = db.execute(sa.select(API_KEYS).where(API_KEYS.c.prefix == _prefix(key))).all()
        digest = _hash(key)
        for row in rows:
            if hmac.compare_digest(row.key_hash, digest):
                if row.revoked_at is not None:
                    raise PermissionDeniedError("this API key was revoked")
                return _public(row)
        raise AuthenticationError("invalid API key")

    def balance(self, tenant: int) -> dict[str, Any]:
        """A key's balance as the reference-verification API answers it.

        Raises:
            InputError: no key has the id ``tenant``.
        """
        record = self._key_record(tenant)
        return {
            "totalAvailable": record["tokens"],
            "subscriptionTokens": 0,
            "purchasedTokens": record["tokens"],
            "pendingTokens": record["pendingTokens"],
            "plan": None,
            "context": "user",
            "name": record["name"],
            "email": None,
        }

    def take_upload(self, tenant: int, *, per_key: int, lease: float, cost: int) -> str:
        """Admit a document upload of ``tenant`` before its body is read; the upload's id.

        Counted in the database, so that the bound holds across every process of the service:
        at most ``per_key`` uploads of one key at once. ``cost`` tokens are reserved (pending)
        for the reading; :meth:`finish_upload` spends or refunds them. Uploads whose ``lease``
        (seconds) ran out, left by a process that died mid-upload, are refunded first.

        Raises:
            RateLimitError: the key has ``per_key`` uploads in flight (429, nothing reserved).
            InsufficientTokensError: fewer than ``cost`` tokens (402, before any byte is read).
            AuthenticationError, PermissionDeniedError: no such key, or a revoked one.
        """
        now = store.clock()
        upload = uuid.uuid4().hex
        with self.transaction() as db:
            # The key's row first (PostgreSQL: FOR UPDATE serialises this key's uploads across
            # processes; SQLite's BEGIN IMMEDIATE already does). Always this order: key, uploads.
            db.execute(sa.select(API_KEYS.c.id).where(API_KEYS.c.id == tenant).with_for_update())
            expired = db.execute(
                UPLOADS.delete()
                .where(UPLOADS.c.api_key_id == tenant, UPLOADS.c.expires_ts <= now)
                .returning(UPLOADS.c.tokens)
            ).all()
            settle(db, tenant, sum(int(row.tokens) for row in expired), spent=False)
            live = db.execute(
                sa.select(sa.func.count()).where(UPLOADS.c.api_key_id == tenant)
            ).scalar_one()
            if live >= per_key:
                msg = f"more than {per_key} document upload(s) at once for this key"
                raise RateLimitError(msg, retry_after=RETRY_UPLOAD)
            if cost:
                reserve(db, tenant, cost, what="reading a document")
            db.execute(
                UPLOADS.insert().values(
                    id=upload, api_key_id=tenant, tokens=cost, expires_ts=now + lease
                )
            )
        return upload

    def finish_upload(self, upload: str, *, spent: bool) -> None:
        """End an upload: its reserved tokens spent (the document was read) or refunded.

        An upload already ended (or expired and refunded) is left alone.
        """
        with self.transaction() as db:
            row = db.execute(
                sa.select(UPLOADS.c.api_key_id, UPLOADS.c.tokens).where(UPLOADS.c.id == upload)
            ).first()
            if row is None:
                return
            # Key row first, as in take_upload.
            db.execute(
                sa.select(API_KEYS.c.id).where(API_KEYS.c.id == row.api_key_id).with_for_update()
            )
            gone = db.execute(
                UPLOADS.delete().where(UPLOADS.c.id == upload).returning(UPLOADS.c.tokens)
            ).first()
            if gone is not None:
                settle(db, int(row.api_key_id), int(gone.tokens), spent=spent)

    def hit_rate_limit(self, address: str, limit: int, *, window: float = 60.0) -> float:
        """Count a request without a valid key from ``address``; 0 when within ``limit``.

        Counted in the database, so that every process sharing it applies one limit. Refused
        requests are not counted. Returns the seconds until the next request is allowed.
        """
        now = store.clock()
        since = now - window
        address = address[:100]
        with self.transaction() as db:
            hits = db.execute(
                sa.select(sa.func.count(), sa.func.min(RATE_HITS.c.ts)).where(
                    RATE_HITS.c.address == address, RATE_HITS.c.ts > since
                )
            ).one()
            if hits[0] >= limit:
                return max(1.0, window - (now - float(hits[1])))
            db.execute(RATE_HITS.insert().values(address=address, ts=now))
            if now - self._rate_pruned > window:
                # Old hits of every address go once a window: the table holds one minute.
                self._rate_pruned = now
                db.execute(RATE_HITS.delete().where(RATE_HITS.c.ts <= since))
        return 0.0


def reserve(db: sa.Connection, tenant: int, count: int, *, what: str = "") -> int:
    """Take ``count`` tokens from the tenant into its pending ones; its balance after.

    ``what`` names what the tokens pay for in the 402's message (default: references).

    Raises:
        AuthenticationError: no such key.
        PermissionDeniedError: the key was revoked.
        InsufficientTokensError: the key has fewer than ``count`` tokens (nothing taken).
    """
    row = db.execute(
        API_KEYS.update()
        .where(
            API_KEYS.c.id == tenant,
            API_KEYS.c.revoked_at.is_(None),
            API_KEYS.c.tokens >= count,
        )
        .values(tokens=API_KEYS.c.tokens - count, pending=API_KEYS.c.pending + count)
        .returning(API_KEYS.c.tokens)
    ).first()
    if row is not None:
        return int(row.tokens)
    key = db.execute(sa.select(API_KEYS).where(API_KEYS.c.id == tenant)).first()
    if key is None:
        raise AuthenticationError("invalid API key")
    if key.revoked_at is not None:
        raise PermissionDeniedError("this API key was revoked")
    # The client reads "need N token(s); the key has M" (client/wire.py): keep that wording.
    what = what or f"{count} reference(s)"
    msg = f"{what}: need {count} token(s); the key has {key.tokens}"
    raise InsufficientTokensError(msg, needed=count, available=int(key.tokens))


def settle(db: sa.Connection, tenant: int | None, tokens: int, *, spent: bool) -> int:
    """Release a job's reserved tokens: spent (completed) or refunded; returns the refund."""
    if tenant is None or not tokens:
        return 0
    values: dict[str, Any] = {"pending": API_KEYS.c.pending - tokens}
    if not spent:
        values["tokens"] = API_KEYS.c.tokens + tokens
    db.execute(API_KEYS.update().where(API_KEYS.c.id == tenant).values(**values))
    return 0 if spent else tokens


def _prefix(key: str) -> str:
    return key[: len(KEY_PREFIX) + 8]


def _hash(key: str) -> str:
    # Keys are 256 random bits: a fast hash is enough (nothing to brute-force), as for any
    # high-entropy API token.
    return hashlib.sha256(key.encode()).hexdigest()


def _public(row: Any) -> dict[str, Any]:
    return {
        "id": int(row.id),
        "name": row.name,
        "prefix": row.prefix,
        "tokens": int(row.tokens),
        "pendingTokens": int(row.pending),
        "createdAt": row.created_at,
        "revokedAt": row.revoked_at,
    }


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip() or len(name) > 200 or not encodable(name):
        raise InputError("a key's name is 1 to 200 characters of text", path="name")


def _check_tokens(tokens: object, *, allow_zero: bool) -> None:
    low = 0 if allow_zero else 1
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not low <= tokens <= 10**12:
        raise InputError(f"tokens must be an integer from {low} to 10^12", path="tokens")
