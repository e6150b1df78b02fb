"""The service's wire models are the client's, and the service's storage is one database.

``citeverify_core.service.schema`` defines each body of the REST API once: the routes answer with
it (and ``/openapi.json`` documents it), the client reads answers into it.
"""

import dataclasses
import json
import subprocess
import sys

import pytest
import sqlalchemy as sa
from pydantic import TypeAdapter

from citeverify_core import client
from citeverify_core.references import ReferenceResult, ReferenceVerifier
from citeverify_core.service import create_app, schema, store
from citeverify_core.service.jobs import JobStore


def test_the_schema_and_the_client_import_neither_fastapi_nor_sqlalchemy():
    code = (
        "import sys, citeverify_core.client, citeverify_core.service.schema; "
        "print(sorted(m for m in ('fastapi', 'starlette', 'sqlalchemy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_the_client_s_submission_and_job_are_the_schema_s():
    assert client.Submission is schema.Submission
    assert client.Job is schema.Job
    assert client.JobState is schema.JobState


def test_a_submission_reads_the_wire_names_and_keeps_the_client_s():
    answer = {"jobIds": ["1", "2"], "documentId": "d", "message": "queued", "tokensAvailable": 7}
    submission = TypeAdapter(client.Submission).validate_python(answer)
    assert submission == client.Submission(("1", "2"), "d", "queued", 7)
    assert (submission.job_ids, submission.tokens_available) == (("1", "2"), 7)
    assert (
        TypeAdapter(client.Submission).dump_python(submission, by_alias=True, mode="json") == answer
    )
    # Without tokensAvailable (a service of another version): None, as before.
    assert client.Submission(("1",), "d", "m").tokens_available is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        submission.message = "changed"  # type: ignore[misc]


def test_a_job_keeps_what_the_service_sent_and_types_its_result():
    progress = {"step": "matching", "message": "3 candidates", "extra": 1}
    active = client.Job("1", "active", None, progress)  # type: ignore[arg-type]
    assert active.progress is progress and not active.done
    result = ReferenceResult.model_construct(status="verified")
    done = client.Job("2", "completed", None, None, result)
    assert done.done and done.result is result
    assert client.Job("3", "not-found").done


def test_the_openapi_document_describes_what_the_service_sends(tmp_path):
    app = create_app(JobStore(tmp_path / "jobs.sqlite", ReferenceVerifier()), workers=False)
    schemas = app.openapi()["components"]["schemas"]
    submission, job = schemas["Submission"], schemas["Job"]
    assert submission["required"] == ["jobIds", "documentId", "message", "tokensAvailable"]
    assert submission["properties"]["tokensAvailable"] == {
        "type": "integer",
        "title": "Tokensavailable",
    }
    assert job["required"] == ["id", "state", "error", "progress"]
    assert job["properties"]["progress"]["anyOf"][0] == {"$ref": "#/components/schemas/Progress"}
    assert "ReferenceResult" not in schemas  # the result is documented as the object it is
    assert schemas["Progress"]["required"] == ["step", "message"]


def test_one_store_holds_every_table_in_one_database(tmp_path):
    jobs = JobStore(tmp_path / "jobs.sqlite", ReferenceVerifier())
    try:
        tables = set(sa.inspect(jobs.engine).get_table_names())
    finally:
        jobs.close()
    expected = {
        table.name
        for table in (
            store.DOCUMENTS,
            store.JOBS,
            store.API_KEYS,
            store.RATE_HITS,
            store.IDEMPOTENCY,
            store.DECISIONS,
        )
    }
    assert expected | {"citeverify_schema"} <= tables
