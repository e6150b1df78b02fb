"""The ``citeverify`` command line: check answers, lint policy packs, run the demo.

Exit codes: 0 allowed, 1 blocked (or unverified with ``--strict``), 2 bad input. Errors print
one line on stderr, never a traceback.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations each time
# it builds the command line, and as strings each costs an eval (236 of them). Importing this
# module and building the command line took 13 ms with it, 8 ms without.

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from citeverify_core.cli.batch_command import batch
from citeverify_core.cli.fast import (
    EXIT_ALLOWED,
    EXIT_BAD_INPUT,
    EXIT_BLOCKED,
    run_check,
    run_demo,
)
from citeverify_core.cli.index_commands import index_app
from citeverify_core.cli.keys_commands import keys_app
from citeverify_core.cli.refs_command import refs
from citeverify_core.cli.serve_command import serve
from citeverify_core.cli.shared import (
    _fail,
    _one_line_errors,
    _read_documents,
    _read_json,
    _read_text,
)
from citeverify_core.errors import InputError

if TYPE_CHECKING:
    from citeverify_core.policy import PolicyConfig, PolicySettings

# The engine (pydantic, the extractors) is imported inside the commands that use it:
# `citeverify --version`, `--help` and the reference commands do not pay for it, and
# tests/cli/test_startup.py keeps it that way. The console script itself starts in
# citeverify_core.cli.fast, which runs the plain form of `check` without typer and comes here for
# the
# rest; what `check` prints, how files are read and how errors become one line live there, once.

__all__ = ["EXIT_ALLOWED", "EXIT_BAD_INPUT", "EXIT_BLOCKED", "app", "main"]

app = typer.Typer(
    name="citeverify",
    help="Check LLM answers against their source documents: groundedness, claims, quotes, "
    "citations; allow, flag, redact or block.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from citeverify_core import __version__  # noqa: PLC0415 - start-up time

        typer.echo(f"citeverify {__version__}")
        raise typer.Exit


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Check LLM answers against their source documents."""


def _load_policy(
    path: Path | None, action: str | None, *, lookups: bool = True
) -> tuple["PolicyConfig | PolicySettings", list[str]]:
    """The policy of ``check``: a pack (or the defaults) with ``--action`` and ``--no-lookups``.

    Raises:
        PolicyError: the pack or the action is invalid.
    """
    from citeverify_core.policy import (  # noqa: PLC0415 - start-up time: only check reads a policy
        PolicySettings,
        load_policy_pack,
        with_check_options,
    )

    notes: list[str] = []
    policy: PolicyConfig | PolicySettings = PolicySettings()
    if path is not None:
        policy, notes = load_policy_pack(path)
    return with_check_options(policy, action=action, lookups=lookups), notes


@app.command()
@_one_line_errors
def check(
    answer: Annotated[
        Path | None,
        typer.Option("--answer", "-a", help="File with the answer text, or - for stdin."),
    ] = None,
    context: Annotated[
        list[Path] | None,
        typer.Option(
            "--context",
            "-c",
            help="A context document: a text file, or a .json file with one document or a list "
            "(strings or objects with 'content'). Repeat for several.",
        ),
    ] = None,
    request: Annotated[
        Path | None,
        typer.Option(help="Gateway shape: request JSON with verdictan.context_documents."),
    ] = None,
    response: Annotated[
        Path | None,
        typer.Option(help="Gateway shape: Chat Completions or Responses API response JSON."),
    ] = None,
    policy: Annotated[
        Path | None, typer.Option("--policy", "-p", help="Policy pack YAML file.")
    ] = None,
    action: Annotated[
        str | None,
        typer.Option(help="Override output_action.unverified_action: flag, redact or block."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
    strict: Annotated[
        bool, typer.Option(help="Exit 1 for any unverified answer, also under flag or redact.")
    ] = False,
    lookups: Annotated[
        bool,
        typer.Option(help="Look DOIs, PubMed IDs and URLs up (--no-lookups: stay offline)."),
    ] = True,
) -> None:
    """Verify an answer against context documents (or a gateway request/response pair)."""
    # Library errors become one line and exit 2 in _one_line_errors. The policy first: a bad
    # --action is reported before any file is read (citeverify_core.cli.fast.fast_main leaves it
    # here).
    config, notes = _load_policy(policy, action, lookups=lookups)
    if request is None and response is None:
        if answer is None:
            _fail("give --answer FILE (or - for stdin), or --request and --response")
        # The console script runs the plain form (no --policy) without typer, through the same
        # run_check.
        code = run_check(
            _read_text(answer),
            _read_documents(context or []),
            as_json=as_json,
            strict=strict,
            config=config,
            notes=notes,
            echo=typer.echo,
        )
        if code != EXIT_ALLOWED:
            raise typer.Exit(code)
        return
    from citeverify_core.engine.exchange import verify_exchange  # noqa: PLC0415 - start-up time
    from citeverify_core.engine.results import render_text  # noqa: PLC0415 - start-up time
    from citeverify_core.engine.verifier import CitationVerifier  # noqa: PLC0415 - start-up time

    if request is None or response is None or answer is not None or context:
        _fail("use --request with --response, or --answer with --context, not both")
    decision = verify_exchange(
        _read_json(request), _read_json(response), verifier=CitationVerifier(config)
    )
    status, body = decision.to_http()
    if as_json:
        typer.echo(json.dumps({"status": status, "body": body}, indent=2, ensure_ascii=False))
    elif decision.result is not None:
        typer.echo(render_text(decision.result))
        typer.echo(f"\nHTTP {status}")
    else:
        typer.echo(f"Verdict: ALLOW (not enforced)\nNote: {'; '.join(decision.notes)}")
    for note in notes:
        typer.echo(f"Note: {note}", err=True)
    verified = decision.result is None or decision.result.verified
    if decision.verdict == "block" or (strict and not verified):
        raise typer.Exit(EXIT_BLOCKED)


@app.command()
@_one_line_errors
def lint(
    file: Annotated[
        Path | None, typer.Argument(help="Policy pack YAML file (optional with --suggest).")
    ] = None,
    strict: Annotated[
        bool, typer.Option(help="Treat warnings (e.g. gateway-lint incompatibilities) as errors.")
    ] = False,
    suggest: Annotated[
        bool,
        typer.Option(
            help="Without FILE: print the recommended policy pack (redirect it to a file). With "
            "FILE: also list the settings where FILE differs from it."
        ),
    ] = False,
) -> None:
    """Validate a policy pack; print what is ignored and what the gateway's lint would reject."""
    from citeverify_core.policy.loading import (  # noqa: PLC0415 - start-up time
        bundled_policy_path,
        load_policy_pack,
    )

    if file is None:
        if not suggest:
            _fail("give a policy pack FILE to check, or --suggest for the recommended pack")
        # The pack as shipped, comments (its measured figures) included: `> policy-config.yaml`.
        typer.echo(bundled_policy_path(SUGGESTED_POLICY).read_text("utf-8"), nl=False)
        return
    config: PolicyConfig
    config, notes = load_policy_pack(file)
    warnings = []
    if "extract_patterns" in config.model_fields_set and "regulatory" in config.extract_patterns:
        warnings.append(
            "policy.citation-verifier.extract_patterns: 'regulatory' is used at runtime, but the "
            "gateway's lint rejects it (leave extract_patterns out to keep the runtime "
            "default)"
        )
    for note in notes:
        typer.echo(f"note: {note}")
    for warning in warnings:
        typer.echo(f"warning: {warning}")
    if strict and warnings:
        raise typer.Exit(EXIT_BAD_INPUT)
    overlap = config.effective_min_context_overlap
    typer.echo(
        f"{file}: OK (unverified_action={config.output_action.unverified_action}, "
        f"min_confidence={config.min_confidence}, min_groundedness={config.min_groundedness}, "
        f"min_context_overlap={overlap})"
    )
    if suggest:
        current = config.model_dump(mode="json")
        current["rag_context"]["min_context_overlap"] = overlap  # as applied, not as written
        changes = _suggestions(current)
        if not changes:
            typer.echo(f"suggest: none, {file} has the settings of the recommended pack")
        for key, yours, recommended in changes:
            typer.echo(f"suggest: {key}: {yours} -> {recommended}")
        if changes:
            typer.echo(
                f"suggest: the recommended pack is `citeverify lint --suggest`, or "
                f"--policy {SUGGESTED_POLICY} (its figures: docs/semantics.md)"
            )


#: The bundled pack that ``lint --suggest`` recommends (``citeverify_core/policies/``).
SUGGESTED_POLICY = "recommended"


def _suggestions(current: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The settings of the recommended pack that ``current`` (a dumped policy) does not share.

    Each is ``(key path, current value, recommended value)``, values as JSON. Only the settings
    the pack writes are compared: a user's other choices (the action, the citation types, the
    lookups) are never "corrected".
    """
    import yaml  # noqa: PLC0415 - start-up time

    from citeverify_core.policy.loading import bundled_policy_path  # noqa: PLC0415 - start-up time

    pack = yaml.safe_load(bundled_policy_path(SUGGESTED_POLICY).read_text("utf-8"))
    changes: list[tuple[str, str, str]] = []

    def walk(recommended: dict[str, Any], mine: dict[str, Any] | None, prefix: str) -> None:
        for key, value in recommended.items():
            have = (mine or {}).get(key)
            if isinstance(value, dict):
                walk(value, have if isinstance(have, dict) else None, f"{prefix}{key}.")
            elif have != value:
                changes.append((f"{prefix}{key}", json.dumps(have), json.dumps(value)))

    walk(pack["policy"]["citation-verifier"], current, "")
    return changes


@app.command()
@_one_line_errors
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Verify a bundled RAG example offline: one grounded answer, two that drifted."""
    run_demo(as_json=as_json, echo=typer.echo)


# The other commands, each in its module, in the order `citeverify --help` lists them.
app.add_typer(index_app, name="index")
app.command()(refs)
app.add_typer(keys_app, name="keys")
app.command()(serve)
app.command()(batch)


def main() -> None:
    """Entry point of the ``citeverify`` script."""
    try:
        app()
    except InputError as exc:  # pragma: no cover - commands catch their own errors
        typer.echo(f"citeverify: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
