"""``citeverify keys``: the service's API keys (create, list, revoke, add tokens)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    pass
from citeverify_core.cli.shared import _one_line_errors
from citeverify_core.errors import require_extra

__all__ = ["keys_app"]

keys_app = typer.Typer(
    help="API keys of the reference service (citeverify serve).", no_args_is_help=True
)

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
    import platformdirs  # noqa: PLC0415 - the server extra

    folder = Path(platformdirs.user_data_dir("citeverify"))
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / "service.sqlite")


def _key_store(db: str | None) -> Any:
    require_extra("server", "citeverify keys")
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
