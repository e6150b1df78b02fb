"""The policy: the settings the engine reads, and the one way to load and merge them.

- :class:`PolicySettings` and its sections (:mod:`citeverify_core.policy.settings`): frozen
  dataclasses with the one set of defaults; ``PolicySettings()`` is the default policy.
- :class:`PolicyConfig` (:mod:`citeverify_core.policy.loading`): the validating model of the
  ``policy.citation-verifier`` block; :func:`load_policy` reads any form a policy is given in
  (a mapping, a policy pack file, a bundled pack's name, settings), :func:`load_policy_pack` a
  pack file with its notes, :func:`parse_policy_yaml` YAML text.
- :func:`merge_policy` (:mod:`citeverify_core.policy.merge`): a policy plus options, validated
  once; :func:`collect_policy_options` splits an adapter's keywords.
- :data:`CREDENTIALS` (:mod:`citeverify_core.policy.credentials`): the options that are secrets;
  :func:`mask_credentials` and :func:`restore_credentials`, for adapters that serialise.

Importing this package imports no pydantic: the names of the loading and merging modules are
imported on first access (PEP 562).
"""

from typing import TYPE_CHECKING, Any

from citeverify_core.policy.settings import (
    DEFAULT_EXTRACT_PATTERNS,
    DEFAULT_MIN_CONTEXT_OVERLAP,
    Extensions,
    LookupSettings,
    OutputAction,
    PolicySettings,
    RagContext,
    ResponseOptions,
    SemanticSettings,
)

if TYPE_CHECKING:
    from citeverify_core.policy.credentials import (
        CREDENTIALS,
        MASKED,
        mask_credentials,
        restore_credentials,
    )
    from citeverify_core.policy.loading import (
        BUNDLED_POLICIES,
        PolicyConfig,
        bundled_policy_path,
        load_policy,
        load_policy_pack,
        parse_policy_yaml,
        safe_yaml,
    )
    from citeverify_core.policy.merge import (
        collect_policy_options,
        merge_policy,
        with_check_options,
    )

_LAZY = {
    "BUNDLED_POLICIES": "citeverify_core.policy.loading",
    "PolicyConfig": "citeverify_core.policy.loading",
    "bundled_policy_path": "citeverify_core.policy.loading",
    "load_policy": "citeverify_core.policy.loading",
    "load_policy_pack": "citeverify_core.policy.loading",
    "parse_policy_yaml": "citeverify_core.policy.loading",
    "safe_yaml": "citeverify_core.policy.loading",
    "CREDENTIALS": "citeverify_core.policy.credentials",
    "MASKED": "citeverify_core.policy.credentials",
    "mask_credentials": "citeverify_core.policy.credentials",
    "restore_credentials": "citeverify_core.policy.credentials",
    "collect_policy_options": "citeverify_core.policy.merge",
    "merge_policy": "citeverify_core.policy.merge",
    "with_check_options": "citeverify_core.policy.merge",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        msg = f"module 'citeverify_core.policy' has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module  # noqa: PLC0415 - start-up time: pydantic on first use

    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "BUNDLED_POLICIES",
    "CREDENTIALS",
    "DEFAULT_EXTRACT_PATTERNS",
    "DEFAULT_MIN_CONTEXT_OVERLAP",
    "MASKED",
    "Extensions",
    "LookupSettings",
    "OutputAction",
    "PolicyConfig",
    "PolicySettings",
    "RagContext",
    "ResponseOptions",
    "SemanticSettings",
    "bundled_policy_path",
    "collect_policy_options",
    "load_policy",
    "load_policy_pack",
    "mask_credentials",
    "merge_policy",
    "parse_policy_yaml",
    "restore_credentials",
    "safe_yaml",
    "with_check_options",
]
