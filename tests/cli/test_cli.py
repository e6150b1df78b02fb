"""The command line: exit codes, human and JSON output, one-line errors."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from citeverify_core import PolicyConfig
from citeverify_core.cli.app import app

runner = CliRunner()


def invoke(*args, input=None):
    return runner.invoke(app, list(args), input=input)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "answer.txt").write_text("The museum opens at nine.")
    (tmp_path / "bad.txt").write_text("Dragons guard the museum at night.")
    (tmp_path / "doc.txt").write_text("The museum opens at nine.")
    (tmp_path / "docs.json").write_text(json.dumps([{"content": "The museum opens at nine."}]))
    (tmp_path / "block.yaml").write_text(
        "policy:\n  citation-verifier:\n    output_action:\n      unverified_action: block\n"
    )
    return tmp_path


def test_check_allowed_exits_0_with_report(files):
    r = invoke("check", "--answer", str(files / "answer.txt"), "--context", str(files / "doc.txt"))
    assert r.exit_code == 0, r.output
    assert "Verdict: ALLOW" in r.output
    assert "citation.verified" in r.output


def test_check_blocked_exits_1(files):
    r = invoke(
        "check",
        "-a",
        str(files / "bad.txt"),
        "-c",
        str(files / "docs.json"),
        "-p",
        str(files / "block.yaml"),
    )
    assert r.exit_code == 1
    assert "Verdict: BLOCK" in r.output


def test_check_flagged_exits_0_unless_strict(files):
    args = ["check", "-a", str(files / "bad.txt"), "-c", str(files / "doc.txt")]
    assert invoke(*args).exit_code == 0
    assert invoke(*args, "--strict").exit_code == 1


def test_check_reads_answer_from_stdin_and_prints_json(files):
    r = invoke(
        "check",
        "--answer",
        "-",
        "-c",
        str(files / "doc.txt"),
        "--json",
        input="The museum opens at nine.",
    )
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert data["reason_code"] == "citation.verified"
    assert data["details"]["groundedness"] == 1.0


def test_check_action_override(files):
    r = invoke(
        "check",
        "-a",
        str(files / "bad.txt"),
        "-c",
        str(files / "doc.txt"),
        "--action",
        "redact",
        "--json",
    )
    assert json.loads(r.output)["answer"] == "[unverified claim removed]"


def test_check_gateway_shape(files):
    (files / "req.json").write_text(
        json.dumps({"verdictan": {"context_documents": [{"content": "Penguins."}]}})
    )
    (files / "resp.json").write_text(
        json.dumps({"choices": [{"message": {"content": "The museum opens at nine."}}]})
    )
    r = invoke(
        "check",
        "--request",
        str(files / "req.json"),
        "--response",
        str(files / "resp.json"),
        "-p",
        str(files / "block.yaml"),
        "--json",
    )
    assert r.exit_code == 1
    out = json.loads(r.output)
    assert out["status"] == 400
    assert out["body"]["error"]["code"] == "content_policy_violation"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(["check"], "give --answer", id="no-answer"),
        pytest.param(
            ["check", "-a", "/nonexistent/answer.txt"], "cannot read", id="missing-answer"
        ),
        pytest.param(
            ["check", "-a", "{answer}", "-c", "{broken}"],
            "not valid JSON (line 1",
            id="broken-json",
        ),
        pytest.param(
            ["check", "-a", "{answer}", "-c", "{nocontent}"],
            "context_documents[0] has no 'content'",
            id="doc-without-content",
        ),
        pytest.param(
            ["check", "-a", "{answer}", "-p", "{badpolicy}"], "min_confidence", id="bad-policy"
        ),
        pytest.param(
            ["check", "-a", "{answer}", "--action", "shout"], "unverified_action", id="bad-action"
        ),
        pytest.param(
            ["check", "--request", "{answer}"], "use --request with --response", id="request-alone"
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(files, args, fragment):
    (files / "broken.json").write_text("[{")
    (files / "nocontent.json").write_text('[{"text": "x"}]')
    (files / "badpolicy.yaml").write_text("policy:\n  citation-verifier:\n    min_confidence: 9\n")
    names = {
        "answer": files / "answer.txt",
        "broken": files / "broken.json",
        "nocontent": files / "nocontent.json",
        "badpolicy": files / "badpolicy.yaml",
    }
    r = invoke(*[a.format(**names) for a in args])
    assert r.exit_code == 2
    assert fragment in r.output
    assert "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_lint(files, seed_policy_path):
    ok = invoke("lint", str(seed_policy_path))
    assert ok.exit_code == 0
    assert "OK" in ok.output
    bad = invoke("lint", str(files / "answer.txt"))
    assert bad.exit_code == 2


def test_lint_warns_about_regulatory(files):
    f = files / "reg.yaml"
    f.write_text(
        "policy:\n  citation-verifier:\n    extract_patterns: [quote, regulatory]\n    external_resolver: {}\n"
    )
    r = invoke("lint", str(f))
    assert r.exit_code == 0
    assert "warning:" in r.output and "regulatory" in r.output
    assert "note: external_resolver is accepted but ignored" in r.output
    assert invoke("lint", "--strict", str(f)).exit_code == 2


def test_lint_suggest_prints_the_recommended_pack_that_loads(files):
    r = invoke("lint", "--suggest")
    assert r.exit_code == 0
    pack = files / "suggested.yaml"
    pack.write_text(r.output)
    # What a user redirects to a file is a pack that lints clean, with the recommended options.
    ok = invoke("lint", "--suggest", str(pack))
    assert ok.exit_code == 0, ok.output
    assert "suggest: none" in ok.output
    config = PolicyConfig.from_yaml(pack)
    assert (config.extensions.words, config.extensions.stopwords) == ("stem", "ignore")


def test_lint_suggest_lists_only_what_differs(files, seed_policy_path):
    r = invoke("lint", "--suggest", str(seed_policy_path))
    assert r.exit_code == 0
    assert "OK" in r.output
    lines = [line for line in r.output.splitlines() if line.startswith("suggest: ")]
    assert 'suggest: extensions.words: "exact" -> "stem"' in lines
    assert "suggest: min_groundedness: 0.8 -> 0.35" in lines
    assert "suggest: rag_context.min_context_overlap: 0.7 -> 0.8" in lines
    # What the recommended pack does not set (the action, the citation types) is the user's.
    assert not any("action" in line or "extract_patterns" in line for line in lines)


def test_lint_without_a_file_needs_suggest():
    r = invoke("lint")
    assert r.exit_code == 2
    assert "--suggest" in r.output


def test_demo_runs_offline_and_shows_all_verdicts():
    r = invoke("demo")
    assert r.exit_code == 0
    assert "Verdict: ALLOW  (citation.verified" in r.output
    assert "Verdict: BLOCK" in r.output
    assert "Redacted answer:" in r.output
    assert "NOT FOUND in the context" in r.output


def test_demo_json():
    data = json.loads(invoke("demo", "--json").output)
    assert [d["action"] for d in data] == ["allow", "block", "redact"]


def test_the_demos_report_numbers_documents_as_its_answers_markers_do():
    # Issue 32: the answers cite [1] and [2]; the report said #0 and #1 for the same documents.
    out = invoke("demo").output
    assert "Context document #1: Municipal infrastructure audit" in out
    assert "Context document #2: Council minutes" in out
    assert "#0" not in out
    grounded = out.split("drifted answer (blocked)")[0]
    assert grounded.count("cites #1: supports it") == 2  # the two claims marked [1]
    assert grounded.count("cites #2: supports it") == 1  # the claim marked [2]
    assert "found in document #1 at" in grounded
    # The JSON keeps 0-based indices into context_documents.
    claims = json.loads(invoke("demo", "--json").output)[0]["details"]["claims"]
    assert [c["cited_documents"] for c in claims] == [[0], [0], [1]]


def test_console_script_help():
    out = subprocess.run(
        [sys.executable, "-m", "citeverify_core", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0
    for command in ("check", "lint", "demo"):
        assert command in out.stdout


def test_check_no_lookups_stays_offline(files):
    (files / "cites.txt").write_text("The museum opens at nine (doi:10.1371/journal.pone.0033693).")
    r = invoke(
        "check",
        "-a",
        str(files / "cites.txt"),
        "-c",
        str(files / "doc.txt"),
        "--no-lookups",
        "--json",
    )
    (citation,) = json.loads(r.output)["details"]["citations"]
    assert citation["status"] == "unchecked"
    assert "lookups are disabled" in citation["reason"]


def test_index_build_stats_and_refs(tmp_path):
    from tests.conftest import DATA

    index = tmp_path / "works.sqlite"
    built = invoke("index", "build", str(DATA / "works-crossref.jsonl"), "--index", str(index))
    assert built.exit_code == 0, built.output
    assert "8 records" in built.output
    stats = invoke("index", "stats", "--index", str(index))
    assert json.loads(stats.output)["records"] == 8
    refs = tmp_path / "refs.txt"
    refs.write_text(
        "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press.\n"
        "LeCun, Y., Bengio, Y., & Hinton, G. (2013). Deep learning. Nature, 521(7553), 436–444.\n"
    )
    r = invoke("refs", str(refs), "--index", str(index))
    assert r.exit_code == 1  # not all verified
    assert "VERIFIED-WITH-ERROR" in r.output
    assert "fields that differ: year" in r.output
    as_json = invoke("refs", str(refs), "--index", str(index), "--json")
    assert [x["status"] for x in json.loads(as_json.output[as_json.output.index("[") :])] == [
        "verified",
        "verified-with-error",
    ]


def test_refs_without_an_index_is_bad_input(tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("Kuhn (1962). The Structure. Press.\n")
    r = invoke("refs", str(refs), "--index", str(tmp_path / "none.sqlite"))
    assert r.exit_code == 2
    assert "citeverify index build" in r.output


# --- hostile input: one line on stderr, exit 2, never a traceback (issue 9) --------------------


def _hostile_files(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "bigint.json").write_text("[" + "9" * 5000 + "]")
    (tmp_path / "answer.txt").write_text("The museum opens at nine.")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00 not text")
    (tmp_path / "notdb.sqlite").write_text("not a database " * 100)
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )
    (tmp_path / "laughs.yaml").write_text(laughs + "policy:\n  citation-verifier: *i\n")
    return tmp_path


HOSTILE_ARGS = [
    pytest.param(["check", "-a", "answer.txt", "-c", "deep.json"], "nested too deeply", id="deep-json"),
    pytest.param(["check", "-a", "answer.txt", "-c", "bigint.json"], "not usable JSON", id="huge-int"),
    pytest.param(["check", "-a", "binary.txt"], "not UTF-8", id="binary-answer"),
    pytest.param(["check", "-a", "."], "cannot read", id="directory"),
    pytest.param(["check", "-a", "answer.txt", "-p", "laughs.yaml"], "expands to more", id="aliases"),
    pytest.param(["lint", "laughs.yaml"], "expands to more", id="lint-aliases"),
    pytest.param(["index", "stats", "--index", "notdb.sqlite"], "not a SQLite", id="index-not-db"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "fragment"), HOSTILE_ARGS)
def test_hostile_input_is_one_line_and_exit_2(tmp_path, monkeypatch, args, fragment):
    monkeypatch.chdir(_hostile_files(tmp_path))
    r = runner.invoke(app, [*args, "--no-lookups"] if args[0] == "check" else args)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("citeverify: error:")
    assert fragment in lines[0]


def test_a_lone_surrogate_in_an_answer_is_printed_escaped(tmp_path):
    request = {"verdictan": {"context_documents": [{"content": "The museum opens."}]}}
    response = {"choices": [{"message": {"content": "The museum \ud800 opens."}}]}
    (tmp_path / "req.json").write_text(json.dumps(request))
    (tmp_path / "resp.json").write_text(json.dumps(response))
    out = subprocess.run(
        [sys.executable, "-m", "citeverify_core", "check", "--no-lookups", "--json",
         "--request", str(tmp_path / "req.json"), "--response", str(tmp_path / "resp.json")],
        capture_output=True, text=True, encoding="utf-8", errors="replace", check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert "\\ud800" in out.stdout


# --- refs and index (issue 10) -------------------------------------------------------------------

KUHN = "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
SURESH = (
    "Suresh, M. R., & Milstein, C. (1985). A direct antigen-binding assay to screen hybridoma "
    "supernatants. Analytical Biochemistry, 151(1), 192–195."
)


@pytest.fixture
def built(tmp_path):
    from tests.conftest import DATA

    index = tmp_path / "works.sqlite"
    r = invoke("index", "build", str(DATA / "works-crossref.jsonl"), "--index", str(index))
    assert r.exit_code == 0, r.output
    return index


def test_refs_skips_junk_lines_and_says_why(tmp_path, built):
    refs = tmp_path / "refs.txt"
    refs.write_text(f"References\n----------\n{KUHN}\n\nPage 2 of 3\n{SURESH}\n")
    r = invoke("refs", str(refs), "--index", str(built))
    assert r.exit_code == 0, r.output  # the skipped lines are not unverified references
    lines = [line for line in r.output.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert [line.split()[:2] for line in lines] == [
        ["1.", "SKIPPED"], ["2.", "SKIPPED"], ["3.", "VERIFIED"], ["5.", "SKIPPED"],
        ["6.", "VERIFIED"],
    ]  # fmt: skip
    assert "(a heading)" in lines[0] and "(a rule)" in lines[1] and "(a page number)" in lines[3]
    as_json = invoke("refs", str(refs), "--index", str(built), "--json")
    results = json.loads(as_json.stdout[as_json.stdout.index("[") :])
    assert [x["status"] for x in results] == ["verified", "verified"]


def test_refs_reads_a_bib_file_by_its_entries(tmp_path, built):
    bib = tmp_path / "refs.bib"
    bib.write_text(
        '@string{anb = "Analytical Biochemistry"}\n'
        "@comment{not an entry}\n"
        '@preamble{"\\newcommand{\\x}{y}"}\n'
        "@article{suresh, author = {Suresh, M. R. and Milstein, C.}, title = {A direct "
        "antigen-binding assay to screen hybridoma supernatants}, journal = anb, year = {1985}, "
        "pages = {192--195}, note = {write to someone@example.org}, abstract = {"
        + "An abstract. "
        * 200
        + "}}\n"
        "@book{kuhn, author = {Kuhn, Thomas S.}, title = {The Structure of Scientific "
        "Revolutions}, publisher = {University of Chicago Press}, year = {1962}}\n"
    )
    r = invoke("refs", str(bib), "--index", str(built), "--json")
    assert r.exit_code == 0, r.output
    results = json.loads(r.stdout[r.stdout.index("[") :])
    assert [x["status"] for x in results] == ["verified", "verified"]  # 2 entries, not 5 "@"s


def test_a_failed_build_leaves_no_index(tmp_path):
    from tests.conftest import DATA

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"DOI": "10.1/x", "title": ["A"]}\nnot json\n')
    index = tmp_path / "new.sqlite"
    r = invoke(
        "index", "build", str(DATA / "works-crossref.jsonl"), str(broken), "--index", str(index)
    )
    assert r.exit_code == 2
    assert "no index was created" in r.output and "broken.jsonl:2: not JSON" in r.output
    # Nothing at the index's path; the files read are kept aside, for the same command to go on.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".new.sqlite.building", "broken.jsonl"]
    refs = tmp_path / "refs.txt"
    refs.write_text(KUHN + "\n")
    later = invoke("refs", str(refs), "--index", str(index))
    assert later.exit_code == 2 and "no index at" in later.output
    broken.write_text('{"DOI": "10.1/x", "title": ["A"]}\n')  # fixed
    again = invoke(
        "index", "build", str(DATA / "works-crossref.jsonl"), str(broken), "--index", str(index)
    )
    assert again.exit_code == 0, again.output
    assert "1 works written" in again.output and "(1 done before)" in again.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.jsonl", "new.sqlite", "refs.txt"]
    assert json.loads(invoke("index", "stats", "--index", str(index)).output)["records"] == 9


def test_a_failed_build_into_an_existing_index_keeps_it(tmp_path, built):
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n")
    r = invoke("index", "build", str(broken), "--index", str(built))
    assert r.exit_code == 2
    assert "nothing of them was added" in r.output and "broken.jsonl:1: not JSON" in r.output
    stats = invoke("index", "stats", "--index", str(built))
    assert json.loads(stats.output)["records"] == 8


def test_building_into_an_existing_index_adds_to_it(tmp_path, built):
    from tests.conftest import DATA

    r = invoke("index", "build", str(DATA / "works-openalex.jsonl"), "--index", str(built))
    assert r.exit_code == 0, r.output
    assert json.loads(invoke("index", "stats", "--index", str(built)).output)["records"] > 8


def test_refs_against_an_empty_index_says_so(tmp_path):
    from citeverify_core.references import LocalIndex

    empty = tmp_path / "empty.sqlite"
    LocalIndex(empty).close()
    refs = tmp_path / "refs.txt"
    refs.write_text(KUHN + "\n")
    r = invoke("refs", str(refs), "--index", str(empty))
    assert r.exit_code == 2
    assert "holds no records" in r.output


def test_refs_of_junk_only_is_bad_input(tmp_path, built):
    refs = tmp_path / "refs.txt"
    refs.write_text("References\n-----\n")
    r = invoke("refs", str(refs), "--index", str(built))
    assert r.exit_code == 2
    assert "holds no reference (2 lines skipped as not references)" in r.output


INDEX_PATHS = [
    pytest.param(["index", "build", "dump.jsonl", "--index", "nofolder/x.sqlite"], "no such folder", id="build-missing-folder"),
    pytest.param(["index", "build", "dump.jsonl", "--index", "notdb.sqlite"], "not a SQLite", id="build-not-db"),
    pytest.param(["index", "build", "dump.jsonl", "--index", "."], "it is a folder", id="build-folder"),
    pytest.param(["refs", "refs.txt", "--index", "notdb.sqlite"], "not a SQLite", id="refs-not-db"),
    pytest.param(["refs", "refs.txt", "--index", "nofolder/x.sqlite"], "no index at", id="refs-missing-folder"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "fragment"), INDEX_PATHS)
def test_a_bad_index_path_is_one_line_and_exit_2(tmp_path, monkeypatch, args, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notdb.sqlite").write_text("not a database " * 100)
    (tmp_path / "dump.jsonl").write_text('{"DOI": "10.1/x", "title": ["A"]}\n')
    (tmp_path / "refs.txt").write_text(KUHN + "\n")
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("citeverify: error:"), r.output
    assert fragment in lines[0]
    assert (tmp_path / "notdb.sqlite").read_text().startswith("not a database")  # untouched


def test_the_table_names_a_source_that_did_not_answer():
    from citeverify_core.cli.refs_command import _result_lines
    from citeverify_core.policy.settings import LookupSettings
    from citeverify_core.references import ReferenceVerifier
    from tests.support.loopback import Loopback, Reply

    with Loopback() as server:
        server.routes[("GET", "/works")] = Reply(500, "boom")
        settings = LookupSettings(crossref_base_url=server.url, retries=0)
        result = ReferenceVerifier(sources=["crossref"], settings=settings).verify(KUHN)
    text = _result_lines(1, KUHN, result)
    assert "NEEDS-HUMAN" in text
    assert "could not check: crossref answered HTTP 500" in text


def test_version_is_the_distributions():
    from importlib.metadata import version

    r = invoke("--version")
    assert r.exit_code == 0
    assert r.output.strip() == f"citeverify {version('citeverify-core')}"
