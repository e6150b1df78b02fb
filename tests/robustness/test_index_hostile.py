"""Untrusted bibliographic data (issue 9): record parsers, index dumps and index files.

Records come from API answers and dumps that anyone can write: the parsers return a Record or None
for any JSON value, a dump line that is not a work is skipped and counted, a file that is not a
dump or not an index is an InputError that names it.
"""

import gzip
import json
import math
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citeverify_core.references.snapshots as _snapshots
from citeverify_core import InputError
from citeverify_core.lookups.pubmed import record_from_esummary
from citeverify_core.references import LocalIndex, Record, record_from_work
from citeverify_core.references.model import Author

# --- the record parsers never raise --------------------------------------------------------------

# The keys the parsers read, so that generated objects reach the deep branches, plus any text.
_KEYS = st.sampled_from(
    [
        "message", "authorships", "author", "display_name", "raw_author_name",
        "primary_location", "source", "host_organization_name", "biblio", "first_page",
        "last_page", "volume", "issue", "publication_year", "title", "doi", "type", "DOI",
        "container-title", "issued", "published", "published-print", "published-online",
        "date-parts", "family", "given", "name", "page", "publisher", "authors", "pubdate",
        "articleids", "idtype", "value", "fulljournalname", "pages",
    ]
) | st.text(max_size=5)  # fmt: skip
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**4000), max_value=10**4000)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)  # lone surrogates included: JSON escapes can encode them
    | st.sampled_from(["doi", "1962", "²", "10.1/x", "https://doi.org/10.1/X", " ", "9" * 30])
)
JSON = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=6),
    max_leaves=40,
)


def _well_typed(record: Record) -> None:
    """What every later step relies on: text fields are encodable text, the year a sane int."""
    for name in ("title", "venue", "doi", "url", "volume", "issue", "pages", "kind"):
        value = getattr(record, name)
        assert value is None or (isinstance(value, str) and value.strip()), name
        if value is not None:
            value.encode("utf-8")
    assert record.year is None or (type(record.year) is int and 1 <= record.year <= 9999)
    assert isinstance(record.authors, tuple)
    for author in record.authors:
        assert isinstance(author, Author)
        assert isinstance(author.family, str) and author.family.strip()
        assert isinstance(author.given, str)
        (author.family + author.given).encode("utf-8")


@settings(max_examples=400)
@given(value=JSON)
def test_record_parsers_take_any_json_value(value):
    work = record_from_work(value)
    assert work is None or isinstance(work, Record)
    if work is not None:
        _well_typed(work)
    summary = record_from_esummary(value)
    assert isinstance(summary, Record)
    _well_typed(summary)


@settings(max_examples=300)
@given(fields=st.dictionaries(_KEYS, JSON, max_size=10), wrap=st.booleans())
def test_works_of_any_shape_are_read_or_refused_and_index_cleanly(fields, wrap):
    # Objects that look like works (some key of each format), optionally wrapped in "message".
    for marker in ("DOI", "display_name"):
        work = {marker: "10.1/x", **fields}
        record = record_from_work({"message": work} if wrap else work)
        if record is not None:
            _well_typed(record)
            index = LocalIndex(":memory:")
            assert index.add([record]) == 1  # SQLite takes whatever the parser kept
            if record.title:
                index.search(record.title)


def _crossref(**fields):
    return {"DOI": "10.1/X", "title": ["A title"], **fields}


def _openalex(**fields):
    return {"display_name": "A title", **fields}


@pytest.mark.parametrize(
    ("work", "field", "expected"),
    [
        pytest.param(
            _crossref(issued={"date-parts": [[1e400]]}), "year", None, id="date-parts-1e400"
        ),
        pytest.param(
            _crossref(issued={"date-parts": [[math.nan]]}), "year", None, id="date-parts-nan"
        ),
        pytest.param(
            _crossref(issued={"date-parts": [[10**4000]]}), "year", None, id="date-parts-huge-int"
        ),
        pytest.param(
            _crossref(issued={"date-parts": [["²"]]}), "year", None, id="date-parts-superscript"
        ),
        pytest.param(
            _crossref(issued={"date-parts": [[True]]}), "year", None, id="date-parts-bool"
        ),
        pytest.param(
            _crossref(issued={"date-parts": [[]]}, published={"date-parts": [[1999, 2]]}),
            "year",
            1999,
            id="date-parts-empty-then-next-key",
        ),
        pytest.param(_crossref(volume={"v": 1}), "volume", None, id="dict-volume"),
        pytest.param(_crossref(volume=12), "volume", "12", id="int-volume"),
        pytest.param(_crossref(page=["1", "2"]), "pages", None, id="list-pages"),
        pytest.param(_crossref(title="A bare string"), "title", "A bare string", id="str-title"),
        pytest.param(_crossref(title={"0": "x"}), "title", None, id="dict-title"),
        pytest.param(_crossref(title=[5]), "title", None, id="number-in-title-list"),
        pytest.param(_crossref(DOI=["10.1/x"]), "doi", None, id="list-doi"),
        pytest.param(_crossref(**{"container-title": [{}]}), "venue", None, id="dict-venue"),
        pytest.param(_crossref(title=["A\ud800B"]), "title", "A\ufffdB", id="lone-surrogate"),
        pytest.param(_openalex(publication_year=math.inf), "year", None, id="openalex-inf-year"),
        pytest.param(_openalex(publication_year="1962"), "year", 1962, id="openalex-str-year"),
        pytest.param(
            _openalex(authorships=[{"raw_author_name": "   "}]),
            "authors",
            (),
            id="openalex-blank-author-name",
        ),
        pytest.param(
            _openalex(authorships=[{"author": "x", "raw_author_name": "Ada Lovelace"}]),
            "authors",
            (Author("Lovelace", "Ada"),),
            id="openalex-author-not-object",
        ),
        pytest.param(
            _openalex(biblio={"first_page": {"a": 1}, "last_page": "9"}),
            "pages",
            "9",
            id="openalex-dict-page",
        ),
        pytest.param(_openalex(primary_location=["x"]), "venue", None, id="openalex-location-list"),
    ],
)
def test_a_bad_field_is_dropped_and_the_rest_kept(work, field, expected):
    record = record_from_work(work)
    assert record is not None
    assert getattr(record, field) == expected
    assert record.doi == "10.1/x" or record.title == "A title"  # the others are still there


@pytest.mark.parametrize(
    "work",
    [
        pytest.param(_crossref(author=["x"]), id="crossref-author-strings"),
        pytest.param(_crossref(author={"family": "X"}), id="crossref-author-object"),
        pytest.param(_crossref(issued={"date-parts": "soon"}), id="crossref-date-parts-string"),
        pytest.param(_openalex(authorships=[1, 2]), id="openalex-authorships-numbers"),
        pytest.param(_openalex(authorships="Ada"), id="openalex-authorships-string"),
    ],
)
def test_a_payload_not_in_the_format_is_no_record(work):
    # Half an author list would be compared as the whole one: no candidate rather than a wrong one.
    assert record_from_work(work) is None


@pytest.mark.parametrize(
    ("entry", "check"),
    [
        pytest.param(
            {"title": "T", "authors": ["x"]}, lambda r: r.authors == (), id="authors-strings"
        ),
        pytest.param(
            {"title": "T", "authors": [{"name": 5}, {"name": "Kuhn TS"}]},
            lambda r: r.authors == (Author("Kuhn", "TS"),),
            id="author-name-number",
        ),
        pytest.param({"title": "T", "volume": {"x": 1}}, lambda r: r.volume is None, id="dict"),
        pytest.param({"title": "T", "pubdate": 1962}, lambda r: r.year is None, id="int-pubdate"),
        pytest.param({"title": "T", "pubdate": "1962 Mar"}, lambda r: r.year == 1962, id="pubdate"),
        pytest.param(
            {"title": "T", "articleids": ["doi", {"idtype": "doi", "value": ["10.1/x"]}]},
            lambda r: r.doi is None,
            id="articleids-odd",
        ),
        pytest.param(
            {"title": "T", "articleids": [{"idtype": "doi", "value": "10.1/X"}]},
            lambda r: r.doi == "10.1/x",
            id="articleids-doi",
        ),
        pytest.param(["not", "an", "entry"], lambda r: r.title is None, id="not-an-object"),
    ],
)
def test_esummary_entries_of_any_shape(entry, check):
    record = record_from_esummary(entry)
    assert check(record)


# --- dumps ----------------------------------------------------------------------------------------

GOOD = json.dumps({"DOI": "10.1/good", "title": ["A good work"]})


def _dump(tmp_path, name, body: bytes):
    path = tmp_path / name
    path.write_bytes(body)
    return path


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        pytest.param(b"[1, 2]", "not a JSON object", id="list"),
        pytest.param(b'"a string"', "not a JSON object", id="string"),
        pytest.param(b"null", "not a JSON object", id="null"),
        pytest.param(b'{"foo": 1}', "not an OpenAlex or Crossref work", id="not-a-work"),
        pytest.param(b'{"DOI": "10.1/x", "author": "nobody"}', "not an OpenAlex", id="bad-shape"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "nested too deeply", id="deeply-nested"),
        pytest.param(
            b'{"DOI": "10.1/x", "volume": ' + b"9" * 5000 + b"}", "too long", id="5000-digits"
        ),
    ],
)
def test_dump_lines_that_are_not_works_are_skipped_and_counted(tmp_path, line, reason):
    dump = _dump(tmp_path, "w.jsonl", b"\n".join([GOOD.encode(), line, b"", GOOD.encode()]))
    index = LocalIndex(":memory:")
    assert index.build(dump) == 2
    report = index.last_build
    assert (report.records, report.skipped) == (2, 1)
    assert report.examples[0].startswith("line 2: ")
    assert reason in report.examples[0]
    assert index.by_doi("10.1/good") is not None


def test_dump_fields_of_the_wrong_type_are_dropped_not_the_line(tmp_path):
    line = json.dumps(
        {
            "DOI": "10.1/v",
            "title": ["Kept"],
            "volume": {"a": 1},
            "issued": {"date-parts": [[1e400]]},
        }
    )
    index = LocalIndex(":memory:")
    assert index.build(_dump(tmp_path, "w.jsonl", line.encode())) == 1
    assert index.last_build.skipped == 0
    record = index.by_doi("10.1/v")
    assert (record.title, record.volume, record.year) == ("Kept", None, None)


def test_an_overlong_line_is_skipped_without_reading_it_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(_snapshots, "MAX_LINE_BYTES", 64)
    long_line = json.dumps({"DOI": "10.1/long", "title": ["x" * 500]}).encode()
    dump = _dump(tmp_path, "w.jsonl", GOOD.encode() + b"\n" + long_line + b"\n" + GOOD.encode())
    index = LocalIndex(":memory:")
    assert index.build(dump) == 2
    assert index.last_build.examples == ["line 2: longer than 64 bytes"]
    assert index.by_doi("10.1/long") is None


def _truncated_gzip(tmp_path):
    full = gzip.compress((GOOD + "\n").encode() * 1000)
    return _dump(tmp_path, "w.jsonl.gz", full[: len(full) // 2])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda p: _dump(p, "w.jsonl.gz", GOOD.encode()),
            r"w\.jsonl\.gz: cannot read the dump \(Not a gzipped file",
            id="not-gzip",
        ),
        pytest.param(_truncated_gzip, r"w\.jsonl\.gz:\d+: cannot read the dump", id="truncated"),
        pytest.param(
            lambda p: _dump(p, "w.jsonl", GOOD.encode() + b"\n" + b'{"DOI": "\xff"}\n'),
            r"w\.jsonl:2: not UTF-8",
            id="not-utf8",
        ),
        pytest.param(
            lambda p: _dump(p, "w.jsonl", GOOD.encode() + b"\n{not json\n"),
            r"w\.jsonl:2: not JSON",
            id="not-json",
        ),
        pytest.param(lambda p: p / "missing.jsonl", r"no such dump file", id="missing"),
        pytest.param(lambda p: p, r"no such dump file", id="a-folder"),
    ],
)
def test_a_broken_dump_is_an_input_error_naming_file_and_line_and_adds_nothing(
    tmp_path, make, message
):
    dump = make(tmp_path)
    index = LocalIndex(tmp_path / "index.sqlite")
    with pytest.raises(InputError, match=message):
        index.build(dump)
    assert index.stats()["records"] == 0  # not half a file


def test_a_bom_and_a_gzip_dump_are_read(tmp_path):
    plain = _dump(tmp_path, "bom.jsonl", b"\xef\xbb\xbf" + GOOD.encode() + b"\n")
    zipped = _dump(tmp_path, "w.jsonl.gz", gzip.compress(GOOD.replace("good", "gz").encode()))
    index = LocalIndex(":memory:")
    assert (index.build(plain), index.build(zipped)) == (1, 1)


# --- index files ----------------------------------------------------------------------------------


def foreign_sqlite(folder, table):
    """A SQLite file with a table of ours by name (``works``, ``jobs``) but not our columns."""
    path = folder / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT)")
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda p: _dump(p, "notes.txt", b"just some text, not a database" * 100),
            r"notes\.txt is not a SQLite database",
            id="text-file",
        ),
        pytest.param(
            lambda p: _dump(p, "empty.jsonl.gz", gzip.compress(b"x")),
            r"is not a SQLite database",
            id="gzip-file",
        ),
        pytest.param(lambda p: p / "no" / "such" / "x.sqlite", r"no such folder", id="no-folder"),
        pytest.param(lambda p: p, r"it is a folder", id="a-folder"),
        pytest.param(
            lambda p: foreign_sqlite(p, "works"),
            r"not a citeverify index .*no authors",
            id="foreign-db",
        ),
        pytest.param(lambda p: 42, r"must be a string or a Path", id="not-a-path"),
    ],
)
def test_opening_something_that_is_not_an_index_is_one_clear_input_error(tmp_path, make, message):
    with pytest.raises(InputError, match=message) as caught:
        LocalIndex(make(tmp_path))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "query", [pytest.param("\ud800", id="surrogate"), pytest.param(None, id="none")]
)
def test_queries_that_cannot_match_find_nothing(query):
    index = LocalIndex(":memory:")
    index.add([Record(source="LOCAL", title="Deep learning", doi="10.1/dl")])
    assert index.by_doi(query) is None
    assert index.search(query) == []
