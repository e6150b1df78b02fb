"""The one merge: a policy plus option overrides gives a new policy, validated once.

Used wherever options are laid over a policy: the framework adapters' keyword options
(``min_groundedness=0.7``, ``unverified_action="block"``, ``strict_quotes=True``),
``citeverify check``'s ``--action`` and ``--no-lookups``, the batch runner's lookup switch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from citeverify_core.errors import PolicyError
from citeverify_core.policy.settings import PolicySettings

if TYPE_CHECKING:
    from citeverify_core.policy.loading import PolicyConfig

__all__ = ["collect_policy_options", "merge_policy", "with_check_options"]

#: ``output_action.unverified_action``'s values, known without validating.
_ACTIONS = frozenset({"flag", "redact", "block"})


def merge_policy(
    policy: Any = None,
    options: Mapping[str, Any] | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> PolicyConfig:
    """``policy`` with ``options`` laid over it, validated once.

    ``policy`` is anything :func:`~citeverify_core.policy.load_policy` takes (a PolicyConfig,
    PolicySettings, the inner mapping, a policy pack path or bundled pack name, or None).
    ``options`` keys are top-level policy fields (``min_groundedness``), ``unverified_action``,
    extension options (``strict_quotes``, ``lookups``), or dotted paths to one nested option
    (``"extensions.lookups.enabled"``), which keep the rest of their section. A top-level key
    replaces its whole value. ``defaults`` (top-level fields) apply where neither ``policy`` nor
    ``options`` set the field: a component's own defaults under what its caller asks for.

    Raises:
        PolicyError: the policy or an option is invalid (unknown keys name their path).
    """
    from citeverify_core.policy.loading import (  # noqa: PLC0415 - pydantic: only when merging
        PACK_PREFIX,
        PolicyConfig,
        _pack_file,
        load_policy,
        option_path,
        pack_policy,
        read_policy_pack,
        settings_mapping,
    )

    if not options and not defaults:
        return load_policy(policy)
    where = ""
    if isinstance(policy, PolicyConfig):
        base = policy.model_dump(exclude_unset=True)
    elif isinstance(policy, PolicySettings):
        base = settings_mapping(policy)
    elif isinstance(policy, Mapping):
        base = _copy(policy)
    elif policy is None:
        base = {}
    elif isinstance(policy, str) or hasattr(policy, "__fspath__"):
        inner, _notes = pack_policy(read_policy_pack(policy))
        base = _copy(inner) if isinstance(inner, Mapping) else inner
        where = f"{_pack_file(policy)}: "
    else:
        load_policy(policy)  # raises the error for a value of another type
        raise AssertionError  # pragma: no cover
    if isinstance(base, dict):
        for key, value in (options or {}).items():
            _put(base, option_path(key).split("."), value)
        for key, value in (defaults or {}).items():
            base.setdefault(key, value)
    if not where:
        return PolicyConfig.model_validate(base)
    try:
        return PolicyConfig._from_mapping(base, prefix=PACK_PREFIX)
    except PolicyError as exc:
        raise PolicyError(f"{where}{exc}", path=exc.path, problems=exc.problems) from None


def _copy(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of nested mappings, as far as :func:`_put` may change them."""
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in mapping.items()}


def _put(base: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``base[path[0]][path[1]]... = value``; a section that is no mapping stays (invalid)."""
    for part in path[:-1]:
        section = base.setdefault(part, {})
        if not isinstance(section, dict):
            return  # validation reports the section itself
        base = section
    base[path[-1]] = value


def with_check_options(policy: Any, *, action: str | None = None, lookups: bool = True) -> Any:
    """``policy`` with ``citeverify check``'s ``--action`` and ``--no-lookups`` applied.

    The other lookup settings of ``policy`` are kept (``lookups=False`` sets only ``enabled``).
    A :class:`PolicySettings` (the default policy of the fast path) stays one, without pydantic,
    unless ``action`` is not a known action; anything else becomes a PolicyConfig.

    Raises:
        PolicyError: ``action`` is not flag, redact or block.
    """
    if isinstance(policy, PolicySettings) and (action is None or action in _ACTIONS):
        if action is not None:
            output = dataclasses.replace(policy.output_action, unverified_action=action)  # type: ignore[arg-type]
            policy = dataclasses.replace(policy, output_action=output)
        if not lookups:
            ext = policy.extensions
            off = dataclasses.replace(ext.lookups, enabled=False)
            policy = dataclasses.replace(policy, extensions=dataclasses.replace(ext, lookups=off))
        return policy
    options: dict[str, Any] = {}
    if action is not None:
        options["output_action.unverified_action"] = action
    if not lookups:
        options["extensions.lookups.enabled"] = False
    return merge_policy(policy, options)


def collect_policy_options(
    data: Mapping[str, Any],
    own_fields: Iterable[str],
    *,
    defaults: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Split an adapter's constructor keywords: its own fields stay, the rest configure the policy.

    Returns the keywords to build the adapter with, ``policy`` replaced by the PolicyConfig that
    ``policy`` plus the other keywords describe (:func:`merge_policy` with ``defaults``: one
    validation). Options may be dotted paths (``"extensions.lookups.ncbi_api_key"``).

    Raises:
        PolicyError: the policy or an option is invalid.
    """
    own = set(own_fields)
    kept = {k: v for k, v in data.items() if k in own}
    options = {k: v for k, v in data.items() if k not in own}
    kept["policy"] = merge_policy(data.get("policy"), options, defaults=defaults)
    return kept
