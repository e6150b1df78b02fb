"""``citeverify serve``: run the reference-verification service (or its gateway)."""

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    pass
from citeverify_core.cli.index_commands import _NO_INDEX, DEFAULT_INDEX, SourceOption
from citeverify_core.cli.keys_commands import DbOption, _service_db
from citeverify_core.cli.shared import _fail, _one_line_errors
from citeverify_core.errors import missing_extra_message

__all__ = ["serve"]


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
    max_document_mb: Annotated[
        float,
        typer.Option(
            help="The largest paper POST /api/verify-document accepts, in MB (at most 50); "
            "larger uploads get 413 before their body is read."
        ),
    ] = 50.0,
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
        Path | None,
        typer.Option(help="The gateway's policy pack (YAML)."),
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
    document_retention_days: Annotated[
        float,
        typer.Option(
            help="Days an uploaded document and its results are kept (purged every hour)."
        ),
    ] = 30.0,
    body_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds a request's body may take to arrive (408 after; uploads included)."
        ),
    ] = 60.0,
) -> None:
    """Run the reference-verification REST API (its documented wire format).

    Create a key first: citeverify keys create --name me --tokens 100. --workers N processes
    share the port and the database; several machines may share one PostgreSQL database
    (--db postgresql://...). Needs the server extra.
    """
    try:
        import uvicorn  # noqa: PLC0415 - the server extra

        from citeverify_core.service.serve import (  # noqa: PLC0415 - start-up time
            ServeOptions,
            build_app,
            default_workers,
            run_processes,
        )
    except ImportError as exc:
        _fail(f"{missing_extra_message('citeverify serve', 'server')} ({exc})")
    from citeverify_core.references import ReferenceVerifier  # noqa: PLC0415 - start-up time
    from citeverify_core.service.jobs import JobStore  # noqa: PLC0415 - SQLAlchemy on demand

    if no_workers:
        typer.echo("citeverify serve: --no-workers is now --no-jobs", err=True)
        jobs = False
    if not 1 <= max_verifications_per_caller <= max_verifications <= 10_000:
        _fail("--max-verifications-per-caller must be 1 to --max-verifications (at most 10000)")
    if not 0 < max_document_mb <= 50:
        _fail("--max-document-mb must be more than 0 and at most 50")
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
    if not 0 < document_retention_days < 100_000:
        _fail("--document-retention-days must be a positive number of days")
    if not 0 < body_timeout <= 3600:
        _fail("--body-timeout must be more than 0 and at most 3600 seconds")
    from citeverify_core.service.policies import PolicyPacks  # noqa: PLC0415 - start-up time

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
        max_document_bytes=max(1, int(max_document_mb * 1024 * 1024)),
        lease=lease,
        upstream=upstream,
        policy=str(policy) if policy else None,
        policy_dir=str(policy_dir) if policy_dir else None,
        stream=stream,
        log_content=log_content,
        log_retention_days=log_retention_days,
        document_retention_days=document_retention_days,
        body_timeout=body_timeout,
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
