"""Named policy packs for the service, chosen per request and reloaded when their files change.

``citeverify serve --policy-dir packs/`` loads every ``*.yaml`` / ``*.yml`` / ``*.json`` file of
the folder as a pack named by its stem (``packs/strict.yaml`` is ``strict``); a request picks one
with ``verdictan.policy`` (the guard endpoints) or ``policy`` (``POST /api/check``). ``--policy
FILE`` is the default pack (named by its stem); without it the default is the folder's
``default`` pack, else the default policy.

The files are looked at again at most every ``check_interval`` seconds, when a request asks for a
pack: a changed file is loaded anew, a new file is added, a deleted one is dropped. A pack that no
longer loads (bad YAML, a wrong field) keeps its previous version, and the log says why; the
service never stops verifying because someone saved a broken file.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from citeverify_core.engine.verifier import CitationVerifier
from citeverify_core.errors import CiteVerifyError, InputError
from citeverify_core.policy.loading import MAX_POLICY_BYTES, load_policy_pack

__all__ = ["DEFAULT_PACK", "PolicyPacks"]

_log = logging.getLogger("citeverify_core.service")

#: The name of the default policy when no pack is given.
DEFAULT_PACK = "default"
_SUFFIXES = (".yaml", ".yml", ".json")
#: What a pack name may look like (in a request, a log row, a metric label).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass
class _Pack:
    verifier: CitationVerifier
    path: Path | None
    stamp: tuple[int, int] | None  # (mtime_ns, size) of the file this version came from


class PolicyPacks:
    """The service's policy packs by name.

    Args:
        default: The default pack: a policy file, a ready verifier, or None for the default policy
            (or the folder's ``default`` pack).
        folder: A folder of packs (``--policy-dir``), or None.
        check_interval: Seconds between looks at the files for changes.

    Raises:
        InputError: the folder is not a folder, or a pack does not load at start (at start
            every pack must be right; later a broken file keeps its previous version).
    """

    def __init__(
        self,
        default: CitationVerifier | str | Path | None = None,
        folder: str | Path | None = None,
        *,
        check_interval: float = 1.0,
    ) -> None:
        self.folder = Path(folder) if folder is not None else None
        if self.folder is not None and not self.folder.is_dir():
            raise InputError(f"--policy-dir {self.folder} is not a folder", path="policy_dir")
        self.check_interval = check_interval
        self._lock = threading.Lock()
        self._checked = time.monotonic()
        self._packs: dict[str, _Pack] = {}
        for name, path in self._files().items():
            self._packs[name] = _Pack(_load(path), path, _stamp(path))
        self._default_path: Path | None = None
        if isinstance(default, CitationVerifier):
            self.default = DEFAULT_PACK
            self._packs[DEFAULT_PACK] = _Pack(default, None, None)
        elif default is not None:
            path = Path(default)
            self.default = path.stem if _NAME.match(path.stem) else DEFAULT_PACK
            self._default_path = path
            self._packs[self.default] = _Pack(_load(path), path, _stamp(path))
        else:
            self.default = DEFAULT_PACK
            if DEFAULT_PACK not in self._packs:
                self._packs[DEFAULT_PACK] = _Pack(CitationVerifier(context_cache=True), None, None)

    def get(self, name: str | None = None) -> tuple[str, CitationVerifier]:
        """The pack called ``name`` (None: the default) and its name.

        Raises:
            InputError: no pack has that name (a 400 for the request that asked).
        """
        self._refresh()
        if name is None:
            name = self.default
        if not isinstance(name, str) or not _NAME.match(name):
            raise InputError(
                "policy must be a pack name (letters, digits, _ . -; at most 64)", path="policy"
            )
        pack = self._packs.get(name)
        if pack is None:
            known = ", ".join(sorted(self._packs))
            raise InputError(f"no policy pack named {name!r} (known: {known})", path="policy")
        return name, pack.verifier

    def names(self) -> list[str]:
        """The pack names, sorted."""
        self._refresh()
        return sorted(self._packs)

    def verifiers(self) -> list[CitationVerifier]:
        """Every pack's verifier (to close them)."""
        return [pack.verifier for pack in self._packs.values()]

    def _files(self) -> dict[str, Path]:
        if self.folder is None:
            return {}
        files: dict[str, Path] = {}
        try:
            entries = sorted(self.folder.iterdir())
        except OSError as exc:
            _log.warning("cannot list the policy folder %s: %s", self.folder, exc)
            return {}
        for path in entries:
            if path.suffix.lower() in _SUFFIXES and _NAME.match(path.stem) and path.is_file():
                files.setdefault(path.stem, path)
        return files

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < self.check_interval:
            return
        with self._lock:
            if now - self._checked < self.check_interval:
                return
            self._checked = now
            files = self._files()
            if self._default_path is not None:
                files[self.default] = self._default_path
            packs = dict(self._packs)
            for name, path in files.items():
                stamp = _stamp(path)
                old = packs.get(name)
                if old is not None and (old.stamp == stamp or stamp is None):
                    continue
                try:
                    verifier = _load(path)
                except CiteVerifyError as exc:
                    if old is None:
                        _log.warning("policy pack %r not loaded: %s", name, exc)
                    else:
                        _log.warning("policy pack %r kept as it was: %s", name, exc)
                        old.stamp = stamp  # said once, not at every look
                    continue
                packs[name] = _Pack(verifier, path, stamp)
                _log.info("policy pack %r %s from %s", name, "reloaded" if old else "added", path)
            for name in [n for n, p in packs.items() if p.path is not None and n not in files]:
                _log.info("policy pack %r removed (its file is gone)", name)
                del packs[name]
            self._packs = packs  # one assignment: readers see the old dict or the new one


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _load(path: Path) -> CitationVerifier:
    """A verifier for the policy file ``path`` (with its own context cache)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read the policy {path}: {exc.strerror}", path=str(path)) from None
    if size > MAX_POLICY_BYTES:
        msg = f"the policy {path} is {size:,} bytes; a policy is at most {MAX_POLICY_BYTES:,}"
        raise InputError(msg, path=str(path))
    policy, _notes = load_policy_pack(path)
    return CitationVerifier(policy.to_settings(), context_cache=True)
