"""The ``citeverify`` command line: check answers, lint policy packs, run the demo.

Exit codes: 0 allowed, 1 blocked (or unverified with ``--strict``), 2 bad input. Errors print
one line on stderr, never a traceback.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations each time
# it builds the command line, and as strings each costs an eval (236 of them). Importing this
# module and building the command line took 13 ms with it, 8 ms without (issue 14).

import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer

from citeverify_core.cli.fast import (
    EXIT_ALLOWED,
    EXIT_BAD_INPUT,
    EXIT_BLOCKED,
    UsageError,
    error_line,
    error_message,
    read_documents,
    read_json,
    read_text,
    reconfigure_output,
    run_check,
)
from citeverify_core.errors import CiteVerifyError, InputError

if TYPE_CHECKING:
    from citeverify_core.policy import PolicyConfig, PolicySettings

# The engine (pydantic, the extractors) is imported inside the commands that use it (issue 14):
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
        from citeverify_core import __version__  # noqa: PLC0415

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


def _fail(message: str) -> NoReturn:
    typer.echo(error_line(message), err=True)  # one line, whatever the message holds
    raise typer.Exit(EXIT_BAD_INPUT)


_P = ParamSpec("_P")
_R = TypeVar("_R")


# Typer's own exceptions pass through untouched. Typer 0.2x vendors click (`typer._click`) and
# no longer installs it; older versions use click itself. Take ClickException from whichever
# click typer uses, never `import click` (a fresh install may not have it).
_CLICK_EXCEPTION: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


def _one_line_errors(command: Callable[_P, _R]) -> Callable[_P, _R]:
    """Every failure of a command is one line on stderr and exit 2, never a traceback.

    Library errors carry their own message; anything else is a bug of ours, named as such (set
    ``CITEVERIFY_DEBUG=1`` to see the traceback). Output that cannot be encoded (a lone
    surrogate in an answer) is escaped instead of crashing the print.
    """

    @functools.wraps(command)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        reconfigure_output()
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, _CLICK_EXCEPTION, BrokenPipeError):
            raise  # a closed pipe: click exits 1 quietly
        except Exception as exc:  # the message is citeverify_core.cli.fast's, as on the fast path
            message = error_message(exc)
            if message is None:  # CITEVERIFY_DEBUG: the traceback
                raise
            _fail(message)

    return run


def _read_text(path: Path) -> str:
    try:
        return read_text(path)
    except UsageError as exc:
        _fail(str(exc))


def _read_json(path: Path) -> Any:
    try:
        return read_json(path)
    except UsageError as exc:
        _fail(str(exc))


def _read_documents(paths: list[Path]) -> list[Any]:
    """A ``.json`` file holds one document or a list of them; any other file is one document."""
    try:
        return read_documents(paths)
    except UsageError as exc:
        _fail(str(exc))


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
    from citeverify_core.engine.exchange import verify_exchange  # noqa: PLC0415
    from citeverify_core.engine.results import render_text  # noqa: PLC0415
    from citeverify_core.engine.verifier import CitationVerifier  # noqa: PLC0415

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
        bool, typer.Option(help="Treat warnings (e.g. seed-lint incompatibilities) as errors.")
    ] = False,
    suggest: Annotated[
        bool,
        typer.Option(
            help="Without FILE: print the recommended policy pack (redirect it to a file). With "
            "FILE: also list the settings where FILE differs from it."
        ),
    ] = False,
) -> None:
    """Validate a policy pack; print what is ignored and what the seed's lint would reject."""
    from citeverify_core.policy.loading import bundled_policy_path, load_policy_pack  # noqa: PLC0415

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
            "seed gateway's lint rejects it (leave extract_patterns out to keep the runtime "
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


#: The bundled pack that ``lint --suggest`` recommends (``citeverify/policies/``, issue 16).
SUGGESTED_POLICY = "recommended"


def _suggestions(current: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The settings of the recommended pack that ``current`` (a dumped policy) does not share.

    Each is ``(key path, current value, recommended value)``, values as JSON. Only the settings
    the pack writes are compared: a user's other choices (the action, the citation types, the
    lookups) are never "corrected".
    """
    import yaml  # noqa: PLC0415

    from citeverify_core.policy.loading import bundled_policy_path  # noqa: PLC0415

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
    from importlib import resources  # noqa: PLC0415

    from citeverify_core.engine.results import render_text  # noqa: PLC0415
    from citeverify_core.engine.verifier import CitationVerifier  # noqa: PLC0415

    data = json.loads(
        resources.files("citeverify_core").joinpath("_demo/rag_example.json").read_text("utf-8")
    )
    docs = data["context_documents"]
    results = []
    if not as_json:
        typer.echo(f"Question: {data['question']}\n")
        for i, doc in enumerate(docs):
            typer.echo(f"Context document #{i}: {doc['title']}")
    for item in data["answers"]:
        verifier = CitationVerifier({"output_action": {"unverified_action": item["policy"]}})
        result = verifier.verify(item["text"], docs)
        results.append({"label": item["label"], **result.to_dict()})
        if not as_json:
            rule = "=" * 100
            typer.echo(f"\n{rule}\n{item['label']}  (unverified_action: {item['policy']})\n{rule}")
            typer.echo(render_text(result))
    if as_json:
        typer.echo(json.dumps(results, indent=2, ensure_ascii=False))


index_app = typer.Typer(
    help="Build and inspect the local bibliographic index.", no_args_is_help=True
)
app.add_typer(index_app, name="index")

DEFAULT_INDEX = Path("citeverify-index.sqlite")
#: ``--source``, as ``refs`` and ``serve`` take it.
SourceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        help="A source to ask: local, openalex, crossref, pubmed, semanticscholar. "
        "Repeat for several. Default: local.",
    ),
]


@index_app.command("build")
@_one_line_errors
def index_build(
    dumps: Annotated[
        list[Path],
        typer.Argument(help="OpenAlex or Crossref works JSONL files (.jsonl, .jsonl.gz)."),
    ],
    index: Annotated[
        Path, typer.Option(help="The index file (created when missing).")
    ] = DEFAULT_INDEX,
) -> None:
    """Add the works of bibliographic dumps to the local index (streaming, bounded memory).

    A new index is built in a temporary file next to it and moved into place only when every
    dump was read. An existing index gets each dump in one transaction: a broken dump adds
    nothing, and the dumps before it stay added.
    """
    from citeverify_core.references import LocalIndex  # noqa: PLC0415 - only these commands need it

    # The skipped lines are printed below; the index's own warning would repeat them.
    logging.getLogger("citeverify_core.references.index").setLevel(logging.ERROR)
    if not index.parent.is_dir():
        _fail(f"cannot create the index {index}: no such folder {index.parent}")
    if index.is_dir():
        _fail(f"cannot use {index} as the index: it is a folder")
    fresh = not index.exists()
    # Issue 10: a failed build used to leave an empty index behind, and a later `refs` called
    # every reference unverified. A new index appears only complete.
    target = index.with_name(f".{index.name}.building-{os.getpid()}") if fresh else index
    local = LocalIndex(target)
    current = dumps[0]
    try:
        for dump in dumps:
            current = dump
            count = local.build(dump, progress=lambda n: typer.echo(f"  {n:,} lines", err=True))
            report = local.last_build
            skipped = f", {report.skipped:,} lines skipped" if report and report.skipped else ""
            typer.echo(f"{dump}: {count:,} records{skipped}")
            for example in report.examples if report and report.skipped else []:
                typer.echo(f"  skipped {example}", err=True)
        stats = local.stats()
        local.close()
        if fresh:
            os.replace(target, index)
    except BaseException as exc:
        local.close()
        if fresh:
            for leftover in (target, target.with_name(target.name + "-journal")):
                leftover.unlink(missing_ok=True)
        if isinstance(exc, CiteVerifyError):
            kept = (
                "no index was created"
                if fresh
                else f"nothing of {current} was added; {index} keeps the dumps read before it"
            )
            _fail(f"{exc} ({kept})")
        raise
    typer.echo(f"{index}: {stats['records']:,} records ({stats['with_doi']:,} with a DOI)")


_NO_INDEX = "no index at {index}; build one with: citeverify index build DUMP.jsonl"


@index_app.command("stats")
@_one_line_errors
def index_stats(
    index: Annotated[Path, typer.Option(help="The index file.")] = DEFAULT_INDEX,
) -> None:
    """Show how many records the local index holds."""
    from citeverify_core.references import LocalIndex  # noqa: PLC0415

    if not index.is_file():
        _fail(_NO_INDEX.format(index=index))
    local = LocalIndex(index)
    try:
        stats = local.stats()
    finally:
        local.close()
    typer.echo(json.dumps(stats, indent=2))


def _references(file: Path, text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """The references of a file with their numbers, and the lines skipped (number, reason, text).

    A .bib file is BibTeX; any other file has one reference a line (see split_reference_list).
    """
    from citeverify_core.references.parse import split_reference_list  # noqa: PLC0415

    return split_reference_list(text, bibtex=file.suffix.lower() == ".bib")


@app.command()
@_one_line_errors
def refs(
    file: Annotated[
        Path | None,
        typer.Argument(help="References, one per line (or a .bib file); - for stdin."),
    ] = None,
    index: Annotated[Path, typer.Option(help="The local index file.")] = DEFAULT_INDEX,
    batch_input: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help="Many references (a text file, one a line, or JSONL with 'reference'; .gz too) "
            "against the local index, to -o OUTPUT (.jsonl or .parquet), in a process pool.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="With --batch: the rows to write.")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="With --batch: processes (default: the cores).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the full results as JSON.")
    ] = False,
    source: SourceOption = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="Send the references to a reference service (citeverify serve) at this URL "
            "instead of verifying them here; --index and --source are then not used.",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            help="The service's API key (default: $CITEVERIFY_API_KEY).",
            show_default=False,
        ),
    ] = None,
    wait: Annotated[
        float,
        typer.Option("--wait", help="With --server: seconds to wait for the results in all."),
    ] = 600.0,
) -> None:
    """Verify reference strings: which are real, which are wrong, which do not exist.

    Lines that are not references (headings, rules, page numbers) are skipped and listed. Exit 0
    when every reference is verified, 1 otherwise, 2 on bad input.
    """
    if batch_input is not None:
        if file is not None or output is None or server is not None or source:
            _fail("use --batch INPUT -o OUTPUT (with --index), without FILE, --server or --source")
        from citeverify_core.batch import default_workers  # noqa: PLC0415
        from citeverify_core.batch.refs import run_refs_batch  # noqa: PLC0415

        done = run_refs_batch(
            batch_input,
            output,
            index,
            workers=workers or default_workers(),
            note=lambda message: typer.echo(f"note: {message}", err=True),  # "resuming: N parts"
        )
        counts = ", ".join(f"{n:,} {status}" for status, n in sorted(done.statuses.items()))
        typer.echo(f"{done.output}: {done.rows:,} references ({counts}) in {done.seconds:.1f} s")
        return
    if file is None:
        _fail("give FILE (references, one per line), or --batch INPUT -o OUTPUT")
    from citeverify_core.references import LocalIndex, ReferenceVerifier  # noqa: PLC0415

    text = _read_text(file)
    numbered, skipped = _references(file, text)
    if not numbered:
        why = f" ({len(skipped)} lines skipped as not references)" if skipped else ""
        _fail(f"{file} holds no reference{why}")
    if server is not None and source:
        _fail("--source chooses the sources of local verification; the service uses its own")
    sources = source or ["local"]
    local = None
    if server is not None:
        sources = []  # the service verifies
    if "local" in sources:
        if not index.is_file():
            _fail(_NO_INDEX.format(index=index))
        local = LocalIndex(index)
        if local.stats()["records"] == 0:
            local.close()
            _fail(
                f"the index {index} holds no records, so no reference could be verified; "
                "build it with: citeverify index build DUMP.jsonl"
            )
    references = [reference for _, reference in numbered]
    # Built before the progress bar: an unknown --source is one error line, not a bar and a line.
    verifier = ReferenceVerifier(local, sources=sources) if server is None else None
    with typer.progressbar(length=len(references), label="verifying", file=sys.stderr) as bar:
        if verifier is None:
            results = _server_results(server or "", api_key, references, wait, bar.update)
        else:
            results = verifier.verify_references(
                references, progress=lambda done, total: bar.update(1)
            )
    if local is not None:
        local.close()
    if as_json:
        typer.echo(
            json.dumps([r.model_dump(mode="json") for r in results], indent=2, ensure_ascii=False)
        )
        for number, reason, line in skipped:
            typer.echo(f"skipped line {number} ({reason}): {line[:90]}", err=True)
    else:
        rows: list[tuple[int, str]] = []
        for (number, reference), result in zip(numbered, results, strict=True):
            rows.append((number, _result_lines(number, reference, result)))
        for number, reason, line in skipped:
            rows.append((number, f"{number:>3}. {'SKIPPED':<20} {line[:70]}  ({reason})"))
        for _, block in sorted(rows, key=lambda row: row[0]):
            typer.echo(block)
    if any(r.status != "verified" for r in results):
        raise typer.Exit(EXIT_BLOCKED)


def _server_results(
    server: str, api_key: str | None, references: list[str], wait: float, step: Callable[[int], Any]
) -> list[Any]:
    """``refs --server``: the service's results, one per reference, in order.

    A job the service failed (or that was cancelled) becomes a ``needs-human`` result whose
    ``error`` says why, so the table and the JSON have a row for every reference.
    """
    import contextlib  # noqa: PLC0415

    from citeverify_core.client import ReferenceClient  # noqa: PLC0415
    from citeverify_core.references import ReferenceResult  # noqa: PLC0415

    seen = 0

    def progress(done: int, _total: int) -> None:
        nonlocal seen
        step(done - seen)
        seen = done

    with ReferenceClient(server, api_key=api_key) as client:
        submissions = []
        try:
            for start in range(0, len(references), 20):
                submissions.append(client.submit(references[start : start + 20]))
        except CiteVerifyError:
            for submission in submissions:  # nothing half-submitted stays queued (and paid)
                with contextlib.suppress(CiteVerifyError):
                    client.cancel(document_id=submission.document_id)
            raise
        ids = [job_id for submission in submissions for job_id in submission.job_ids]
        jobs = client.wait(ids, timeout=wait, progress=progress)
    results: list[Any] = []
    for job in jobs:
        if job.result is not None:
            results.append(job.result)
            continue
        why = job.error or f"the service answered {job.state} without a result"
        results.append(
            ReferenceResult(
                status="needs-human",
                message=f"The service could not verify this reference: {why}",
                reference="Not checked: the service could not verify it.",
                field_results=dict.fromkeys(
                    ("title", "authors", "year", "venue", "identifier"), "UNCONFIRMED"
                ),
                match_set_size=0,
                contained_set_size=0,
                verificationGraph=None,
                error=f"the service could not verify it: {why}",
            )
        )
    return results


def _result_lines(number: int, reference: str, result: Any) -> str:
    """The table rows of one result: status, corrected reference, differing fields, failures."""
    shown = " ".join(reference.split())  # a BibTeX entry on one line
    lines = [f"{number:>3}. {result.status.upper():<20} {shown[:90]}"]
    if result.error:
        lines.append(f"     {result.error}")
    elif result.status != "unverified":
        lines.append(f"     -> {result.reference}")
    wrong = [
        f
        for f, label in result.field_results.items()
        if label in {"CONTRADICTION", "MATCH_WITH_TYPO", "CONTAINS"}
    ]
    if wrong:
        lines.append(f"     fields that differ: {', '.join(wrong)}")
    failed = ((result.verificationGraph or {}).get("metadata") or {}).get("sourcesFailed")
    if failed:
        lines.append(f"     could not check: {'; '.join(map(str, failed))}")
    return "\n".join(lines)


# --- the reference service (citeverify serve, citeverify keys) ------------------------------------

keys_app = typer.Typer(
    help="API keys of the reference service (citeverify serve).", no_args_is_help=True
)
app.add_typer(keys_app, name="keys")

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="CITEVERIFY_DB",
        help="The service's database: a SQLite file or postgresql://user@host/db. "
        "Default: service.sqlite in the user data folder.",
    ),
]


def _service_db(db: str | None) -> str:
    if db:
        return db
    import platformdirs  # noqa: PLC0415

    folder = Path(platformdirs.user_data_dir("citeverify"))
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / "service.sqlite")


def _key_store(db: str | None) -> Any:
    from citeverify_core.references import ReferenceVerifier  # noqa: PLC0415 - start-up time
    from citeverify_core.service.jobs import JobStore  # noqa: PLC0415 - SQLAlchemy on demand

    # Key commands verify nothing: a verifier without sources.
    return JobStore(_service_db(db), ReferenceVerifier(sources=[]))


def _key_line(record: dict[str, Any]) -> str:
    state = f"revoked {record['revokedAt']}" if record["revokedAt"] else "active"
    return (
        f"{record['id']:>4}  {record['prefix']}...  {record['name'][:30]:<30}  "
        f"{record['tokens']:>10,} tokens  {record['pendingTokens']:>6,} pending  {state}"
    )


@keys_app.command("create")
@_one_line_errors
def keys_create(
    name: Annotated[str, typer.Option("--name", help="Who the key is for.")],
    tokens: Annotated[int, typer.Option("--tokens", help="Tokens to start with.")] = 0,
    db: DbOption = None,
) -> None:
    """Create an API key and print it once (only its hash is stored)."""
    store = _key_store(db)
    try:
        key, record = store.create_key(name, tokens=tokens)
    finally:
        store.close()
    typer.echo(key)
    typer.echo(f"created: {_key_line(record)} (the key above is not shown again)", err=True)


@keys_app.command("list")
@_one_line_errors
def keys_list(db: DbOption = None) -> None:
    """List the keys: id, first characters, name, tokens, state."""
    store = _key_store(db)
    try:
        records = store.list_keys()
    finally:
        store.close()
    for record in records:
        typer.echo(_key_line(record))
    if not records:
        typer.echo("no keys yet: citeverify keys create --name NAME --tokens N", err=True)


@keys_app.command("revoke")
@_one_line_errors
def keys_revoke(
    key: Annotated[str, typer.Argument(help="The key's id, name or first characters.")],
    db: DbOption = None,
) -> None:
    """Revoke a key: its requests get 403 from now on."""
    store = _key_store(db)
    try:
        typer.echo(_key_line(store.revoke_key(key)))
    finally:
        store.close()


@keys_app.command("add-tokens")
@_one_line_errors
def keys_add_tokens(
    key: Annotated[str, typer.Argument(help="The key's id, name or first characters.")],
    tokens: Annotated[int, typer.Argument(help="Tokens to add.")],
    db: DbOption = None,
) -> None:
    """Add tokens to a key's balance."""
    store = _key_store(db)
    try:
        typer.echo(_key_line(store.add_tokens(key, tokens)))
    finally:
        store.close()


@app.command()
@_one_line_errors
def serve(
    host: Annotated[
        str, typer.Option(help="Address to listen on (loopback unless you say otherwise).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    db: DbOption = None,
    index: Annotated[Path, typer.Option(help="The local index file.")] = DEFAULT_INDEX,
    source: SourceOption = None,
    jobs: Annotated[
        bool,
        typer.Option(
            help="Run the reference-verification job workers in each process (--no-jobs: an "
            "API-only instance)."
        ),
    ] = True,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=256,
            help="Processes serving the port, sharing the database (default: the cores).",
        ),
    ] = None,
    no_workers: Annotated[
        bool, typer.Option("--no-workers", hidden=True, help="Deprecated: --no-jobs.")
    ] = False,
    shutdown_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds a shutdown (SIGTERM, Ctrl-C) waits for requests in flight; then they "
            "are cancelled, with their upstream requests, and the process exits."
        ),
    ] = 10.0,
    max_concurrency: Annotated[
        int, typer.Option(help="References verified at once by each process.")
    ] = 15,
    max_verifications: Annotated[
        int,
        typer.Option(
            help="Answers verified at once by each process (the guard and /api/check); "
            "429 with Retry-After beyond."
        ),
    ] = 64,
    max_verifications_per_caller: Annotated[
        int,
        typer.Option(
            help="Of those, at once for one API key, or one client address without a key "
            "(put a key on an application server that sends many requests at once)."
        ),
    ] = 8,
    lease: Annotated[
        float,
        typer.Option(
            help="Seconds a running job stays this instance's without a heartbeat: a killed "
            "instance's jobs run again after this long."
        ),
    ] = 30.0,
    upstream: Annotated[
        str | None,
        typer.Option(
            help="Add the citation-verifier gateway in front of this OpenAI-compatible base URL "
            "(https://.../v1), or fixture:FILE for canned answers."
        ),
    ] = None,
    policy: Annotated[
        Path | None, typer.Option(help="The gateway's policy pack (seed 000's YAML).")
    ] = None,
    stream: Annotated[
        str,
        typer.Option(help="stream: true requests: passthrough (unchecked, marked) or buffer."),
    ] = "passthrough",
    policy_dir: Annotated[
        Path | None,
        typer.Option(
            help="A folder of policy packs (NAME.yaml), chosen per request by verdictan.policy "
            "and reloaded when a file changes."
        ),
    ] = None,
    log_content: Annotated[
        bool,
        typer.Option(help="Log the answers and context documents with the decisions."),
    ] = False,
    log_retention_days: Annotated[
        float, typer.Option(help="Days the decision log keeps a decision.")
    ] = 30.0,
) -> None:
    """Run the reference-verification REST API (seed 004's wire format).

    Create a key first: citeverify keys create --name me --tokens 100. --workers N processes
    share the port and the database; several machines may share one PostgreSQL database
    (--db postgresql://...). Needs the server extra.
    """
    try:
        import uvicorn  # noqa: PLC0415

        from citeverify_core.service.serve import (  # noqa: PLC0415
            ServeOptions,
            build_app,
            default_workers,
            run_processes,
        )
    except ImportError as exc:
        extra = "from a clone, python -m pip install '.[server]'"
        _fail(f"citeverify serve needs the server extra: {extra} ({exc})")
    from citeverify_core.references import ReferenceVerifier  # noqa: PLC0415 - start-up time
    from citeverify_core.service.jobs import JobStore  # noqa: PLC0415 - SQLAlchemy on demand

    if no_workers:
        typer.echo("citeverify serve: --no-workers is now --no-jobs", err=True)
        jobs = False
    if not 1 <= max_verifications_per_caller <= max_verifications <= 10_000:
        _fail("--max-verifications-per-caller must be 1 to --max-verifications (at most 10000)")
    if not 1 <= max_concurrency <= 1000:
        _fail("--max-concurrency must be 1 to 1000")
    if not 0 <= shutdown_timeout < 86_400:
        _fail("--shutdown-timeout must be 0 to 86400 seconds")
    sources = source or ["local"]
    if "local" in sources and not index.is_file():
        if upstream is not None and source is None:
            # A gateway without an index: the reference API is there, its workers are not.
            typer.echo(
                f"citeverify serve: no index at {index}: reference jobs wait until an instance "
                "with an index runs them",
                err=True,
            )
            sources, jobs = [], False
        else:
            _fail(_NO_INDEX.format(index=index))
    if stream not in {"passthrough", "buffer"}:
        _fail("--stream is passthrough or buffer")
    if not 0 < log_retention_days < 100_000:
        _fail("--log-retention-days must be a positive number of days")
    from citeverify_core.service.policies import PolicyPacks  # noqa: PLC0415

    PolicyPacks(policy, policy_dir)  # a broken pack fails here, once, not in every process
    # The schema is created or upgraded here, once, before the processes open the database.
    store = JobStore(_service_db(db), ReferenceVerifier(sources=[]), lease=lease)
    shown = store.engine.url.render_as_string(hide_password=True)
    memory = store.engine.url.database in {None, "", ":memory:"} and store._sqlite
    store.close()
    processes = workers or default_workers()
    if memory and processes > 1:
        typer.echo("citeverify serve: an in-memory database: one process", err=True)
        processes = 1
    options = ServeOptions(
        db=_service_db(db),
        index=str(index),
        sources=list(sources),
        jobs=jobs,
        max_concurrency=max_concurrency,
        max_verifications=max_verifications,
        max_verifications_per_caller=max_verifications_per_caller,
        lease=lease,
        upstream=upstream,
        policy=str(policy) if policy else None,
        policy_dir=str(policy_dir) if policy_dir else None,
        stream=stream,
        log_content=log_content,
        log_retention_days=log_retention_days,
        parent_pid=os.getpid(),
    )
    plural = "es" if processes > 1 else ""
    typer.echo(
        f"citeverify serve: http://{host}:{port} ({processes} process{plural}, jobs in {shown})",
        err=True,
    )
    # No websocket endpoints: ws="none" keeps uvicorn from loading a websockets stack.
    common: dict[str, Any] = {
        "log_level": "info",
        "ws": "none",
        "timeout_graceful_shutdown": shutdown_timeout,
    }
    if processes == 1:
        uvicorn.run(build_app(options), host=host, port=port, **common)
        return
    try:
        status = run_processes(
            options, host=host, port=port, processes=processes, uvicorn_options=common
        )
    except OSError as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    if status:
        raise typer.Exit(status)


@app.command()
@_one_line_errors
def batch(
    source: Annotated[
        Path,
        typer.Argument(
            metavar="INPUT", help="JSONL (.jsonl, .jsonl.gz), CSV or Parquet; or a folder of them."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Rows to write: .jsonl or .parquet.")
    ],
    policy: Annotated[
        Path | None, typer.Option("--policy", "-p", help="Policy pack YAML file.")
    ] = None,
    answer_field: Annotated[str, typer.Option(help="The record's answer.")] = "answer",
    context_field: Annotated[
        str, typer.Option(help="The record's context documents.")
    ] = "context_documents",
    id_field: Annotated[str, typer.Option(help="The record's id.")] = "id",
    engine: Annotated[
        str, typer.Option(help="local (a process pool) or ray (a Ray cluster, the ray extra).")
    ] = "local",
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Worker processes (or Ray actors); default: the local cores."),
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Records per part.")] = 500,
    details: Annotated[bool, typer.Option(help="Add each result's details as JSON.")] = False,
    lookups: Annotated[
        bool, typer.Option(help="Look DOIs, PubMed IDs and URLs up (off by default in batch).")
    ] = False,
    lookup_cache: Annotated[
        Path | None,
        typer.Option(
            help="SQLite lookup cache shared by the workers (default OUTPUT.lookups.sqlite)."
        ),
    ] = None,
    report: Annotated[Path | None, typer.Option(help="Write an HTML report there.")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Verify many logged answers: one row per record, in input order (docs/scale.md).

    Unreadable records go to OUTPUT.errors.jsonl. An interrupted run resumes where it stopped
    when run again with the same OUTPUT.
    """
    from citeverify_core.batch import Fields, run_batch  # noqa: PLC0415

    if engine not in ("local", "ray"):
        _fail(f"unknown engine {engine!r}: use local or ray")
    summary = run_batch(
        source,
        output,
        policy,
        fields=Fields(answer=answer_field, context=context_field, id=id_field),
        engine="ray" if engine == "ray" else "local",
        workers=workers,
        batch_size=batch_size,
        details=details,
        lookups=lookups,
        lookup_cache=lookup_cache,
        report=report,
        progress=not quiet and sys.stderr.isatty(),
        note=lambda message: typer.echo(f"note: {message}", err=True),
    )
    typer.echo(
        f"{summary.output}: {summary.rows:,} rows, {summary.errors:,} errors "
        f"({summary.errors_file.name}) in {summary.seconds:.1f} s "
        f"({summary.records_per_second:,.0f} records/s)"
    )


def main() -> None:
    """Entry point of the ``citeverify`` script."""
    try:
        app()
    except InputError as exc:  # pragma: no cover - commands catch their own errors
        typer.echo(f"citeverify: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
