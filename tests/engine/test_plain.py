"""The pydantic-free twins behind ``citeverify check`` (issue 14) equal the models they stand for.

``citeverify_core.engine.plain.verify_default`` verifies under the default policy with :class:`PlainPolicy`
and plain result classes, so that the command does not import pydantic. These tests keep every
field and default of the twins equal to the models', and every verification they decide equal,
field by field, to the one the models give.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from citeverify_core import PolicyError, VerificationResult
from citeverify_core.engine.plain import PLAIN_KINDS, PlainPolicy, model_kinds, verify_default
from citeverify_core.engine.render import render_text
from citeverify_core.policy.config import PolicyConfig
from tests.support.answers import ANSWER_PARTS, DOCS


@pytest.mark.parametrize("i", range(len(PLAIN_KINDS)), ids=list(PLAIN_KINDS._fields))
def test_each_twin_has_the_fields_and_defaults_of_its_model(i: int) -> None:
    plain, model = PLAIN_KINDS[i], model_kinds()[i]
    plain_template, plain_factories = plain._field_plan()  # type: ignore[attr-defined]
    model_template, model_factories = model._field_plan()  # type: ignore[attr-defined]
    assert list(plain_template.items()) == list(model_template.items())
    assert [(n, f()) for n, f in plain_factories] == [(n, f()) for n, f in model_factories]


def _options(model: BaseModel) -> dict[str, Any]:
    """Every option of a policy model, nested models as dicts of their options."""
    return {
        name: _options(value) if isinstance(value, BaseModel) else value
        for name in type(model).model_fields
        for value in [getattr(model, name)]
    }


def _plain_options(obj: Any, like: dict[str, Any]) -> dict[str, Any]:
    """The same options read from a plain twin; a missing one is a KeyError in the comparison."""
    return {
        name: _plain_options(getattr(obj, name), value)
        if isinstance(value, dict)
        else getattr(obj, name, "<missing>")
        for name, value in like.items()
    }


def _public(obj: Any) -> set[str]:
    return {n for n in vars(obj) if not n.startswith("_")} | {
        n for c in type(obj).__mro__[:-1] for n in vars(c) if not n.startswith("_")
    }


@pytest.mark.parametrize("action", [None, "flag", "redact", "block"])
@pytest.mark.parametrize("lookups", [True, False])
def test_the_plain_policy_is_the_default_policy_with_checks_options(
    action: str | None, lookups: bool
) -> None:
    data: dict[str, Any] = {}
    if action is not None:
        data["output_action"] = {"unverified_action": action}
    if not lookups:
        data["extensions"] = {"lookups": {"enabled": False}}
    config = PolicyConfig.model_validate(data)
    plain = PlainPolicy(action or "flag", lookups=lookups)  # type: ignore[arg-type]
    expected = _options(config)
    assert _plain_options(plain, expected) == expected
    # ... and nothing more: an option added to the models must be added to the twin, and back.
    for path in ["", "rag_context", "output_action", "response", "extensions"]:
        model_part, plain_part = config, plain
        for name in filter(None, path.split(".")):
            model_part, plain_part = getattr(model_part, name), getattr(plain_part, name)
        methods = {"matcher", "notes", "effective_min_context_overlap"}
        assert _public(plain_part) - methods == set(type(model_part).model_fields), path
    for name in ["lookups", "semantic"]:
        assert _public(getattr(plain.extensions, name)) == set(
            type(getattr(config.extensions, name)).model_fields
        )
    assert plain.effective_min_context_overlap == config.effective_min_context_overlap
    assert plain.notes() == config.notes()
    assert plain.extensions.matcher() == config.extensions.matcher()


def test_the_twins_are_frozen_as_the_models_are() -> None:
    result = verify_default("The museum opens at nine.", ["The museum opens at nine."])
    assert not isinstance(result, BaseModel)
    with pytest.raises(AttributeError, match="frozen"):
        result.verdict = "allow"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="frozen"):
        del result.details.claims
    copy = result.model_copy(update={"verdict": "block"})
    assert (copy.verdict, result.verdict) == ("block", "allow")
    assert copy.model_fields_set == result.model_fields_set | {"verdict"}


def test_an_unknown_option_of_a_plain_part_is_an_error() -> None:
    with pytest.raises(AttributeError, match="no option 'unverified'"):
        PlainPolicy().output_action.__class__(unverified="block")


def _same_object(plain: Any, model: Any, where: str = "result") -> None:
    """The twin holds the model's values, field by field (nested objects too), and set fields."""
    assert type(plain).__name__ == "Plain" + type(model).__name__, where
    assert list(vars(plain)) == list(vars(model)), where
    assert plain.model_fields_set == model.model_fields_set, where
    for name, value in vars(model).items():
        mine = getattr(plain, name)
        if isinstance(value, BaseModel):
            _same_object(mine, value, f"{where}.{name}")
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            assert len(mine) == len(value), f"{where}.{name}"
            for k, (p, m) in enumerate(zip(mine, value, strict=True)):
                _same_object(p, m, f"{where}.{name}[{k}]")
        else:
            assert mine == value, f"{where}.{name}"
            assert type(mine) is type(value), f"{where}.{name}"


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(ANSWER_PARTS, max_size=12),
    docs=DOCS,
    action=st.sampled_from([None, "flag", "redact", "block"]),
)
def test_the_twins_decide_as_the_models(parts: list[str], docs: list[Any], action: str | None):
    answer = "".join(parts)
    plain = verify_default(answer, list(docs), action=action, lookups=False)
    model = verify_default(answer, list(docs), action=action, lookups=False, plain=False)
    assert isinstance(model, VerificationResult)
    assert not isinstance(plain, BaseModel)
    _same_object(plain, model)
    assert plain.verified is model.verified
    assert render_text(plain) == render_text(model) == str(plain)
    assert plain.to_dict() == model.to_dict()
    assert json.dumps(plain.to_dict()) == json.dumps(model.to_dict())


def test_an_answer_with_something_to_look_up_is_verified_with_the_models() -> None:
    # A loopback URL is a lookup target that is refused without any network (issue 9).
    answer = "The museum opens at nine (http://127.0.0.1/museum)."
    result = verify_default(answer, ["The museum opens at nine."])
    assert isinstance(result, VerificationResult)
    (lookup,) = result.details.external_lookup or []
    assert not lookup.ok and "blocked" in (lookup.error or "")
    # Without lookups the same answer stays with the twins.
    assert not isinstance(verify_default(answer, ["x"], lookups=False), BaseModel)


def test_a_bad_action_is_the_policys_error() -> None:
    with pytest.raises(PolicyError) as plain_error:
        verify_default("The museum opens at nine.", [], action="shout")
    with pytest.raises(PolicyError) as model_error:
        PolicyConfig.model_validate({"output_action": {"unverified_action": "shout"}})
    assert str(plain_error.value) == str(model_error.value)


def test_a_plain_verification_imports_no_pydantic() -> None:
    code = textwrap.dedent(
        """
        import sys
        from citeverify_core.engine.plain import verify_default
        r = verify_default("The museum opens at nine. Entry is 5 dollars [1].",
                           ["The museum opens at nine."], action="redact")
        assert r.verdict == "allow" and r.action == "redact", r
        print(sorted({m.split(".")[0] for m in sys.modules} & {"pydantic", "pydantic_core",
                     "typer", "httpx", "yaml", "idutils", "eyecite"}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
