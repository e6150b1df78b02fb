"""Field labels and statuses that a user can trust (issue 10): author order, elisions, venue
abbreviations, titles shared by several works, and the accuracy floors on the multistyle dev set.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from citeverify_core import InputError
from citeverify_core.references import (
    Author,
    LocalIndex,
    Record,
    ReferenceVerifier,
    parse_reference,
)
from citeverify_core.references.compare import _abbreviates, compare, decide

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DEV_SET = SHARED / "datasets" / "crossref-multistyle-dev-1000.jsonl"

NAMES = [("LeCun", "Y."), ("Bengio", "Y."), ("Hinton", "G.")]
RECORD = Record(
    source="LOCAL",
    title="Deep learning",
    authors=tuple(Author(f, g) for f, g in NAMES),
    year=2015,
    venue="Nature",
    doi="10.1038/nature14539",
)


def label(text, record=RECORD, name="authors"):
    return compare(parse_reference(text), record).label(name)


AUTHORS = [
    pytest.param("LeCun, Y., Bengio, Y., & Hinton, G.", "MATCH", id="same"),
    pytest.param("Bengio, Y., LeCun, Y., & Hinton, G.", "CONTRADICTION", id="swapped"),
    pytest.param("LeCun, Y., & Bengio, Y.", "CONTAINS", id="last-dropped"),
    pytest.param("LeCun, Y., & Hinton, G.", "CONTAINS", id="middle-dropped"),
    pytest.param("LeCun, Y., et al.", "MATCH", id="et-al"),
    pytest.param("LeCun, Y., ... Hinton, G.", "MATCH", id="elision"),
    pytest.param("LeCun, Y., Bengio, Y., Hinton, G., & Smith, J.", "CONTRADICTION", id="added"),
    pytest.param("LeCun, Y., Bengoi, Y., & Hinton, G.", "MATCH_WITH_TYPO", id="typo"),
    pytest.param("Y. LeCun, Y. Bengio, and G. Hinton", "MATCH", id="ieee-order"),
    pytest.param("LeCun Y, Bengio Y, Hinton G", "MATCH", id="vancouver"),
]


@pytest.mark.parametrize(("names", "expected"), AUTHORS)
def test_author_labels(names, expected):
    assert label(f"{names} (2015). Deep learning. Nature, 521, 436–444.") == expected


def test_apa_elision_of_a_long_list():
    record = Record(
        source="LOCAL",
        title="A big collaboration",
        authors=tuple(Author(f"Name{i:02d}", "A.") for i in range(30)),
        year=2020,
        venue="Nature",
    )
    first = ", ".join(f"Name{i:02d}, A." for i in range(19))
    text = f"{first}, ... Name29, A. (2020). A big collaboration. Nature, 1, 1–2."
    assert label(text, record) == "MATCH"
    # After the ellipsis: a later author (CSL renderers differ on which one), never another name
    # nor one from before the ellipsis.
    assert label(text.replace("Name29", "Name25"), record) == "MATCH"
    assert label(text.replace("Name29", "Other"), record) == "CONTRADICTION"
    assert label(text.replace("Name29", "Name03"), record) == "CONTRADICTION"


VENUES = [
    ("Proc. IEEE Conf. Comput. Vis. Pattern Recognit. (CVPR)",
     "2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)", True),
    ("Anal Biochem", "Analytical Biochemistry", True),
    ("J. Phys. Chem. A", "The Journal of Physical Chemistry A", True),
    ("Proc. Natl. Acad. Sci. U.S.A.", "Proceedings of the National Academy of Sciences of the United States of America", True),
    ("JAMA", "Journal of the American Medical Association", True),
    ("Phys. Rev. Lett.", "Physical Review Letters", True),
    ("J. Chem. Phys.", "The Journal of Physical Chemistry", False),
    ("Energy Policy", "Energy", False),
    ("Nature", "Science", False),
]  # fmt: skip


@pytest.mark.parametrize(("short", "long", "expected"), VENUES)
def test_venue_abbreviations(short, long, expected):
    from citeverify_core.references.folding import fold

    assert _abbreviates(fold(short), fold(long)) is expected


def test_abbreviated_proceedings_are_not_an_error():
    record = Record(
        source="LOCAL",
        title="Deep residual learning for image recognition",
        authors=(
            Author("He", "K."),
            Author("Zhang", "X."),
            Author("Ren", "S."),
            Author("Sun", "J."),
        ),
        year=2016,
        venue="2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
    )
    ref = parse_reference(
        "[1] K. He, X. Zhang, S. Ren, and J. Sun, “Deep residual learning for image recognition,” "
        "in Proc. IEEE Conf. Comput. Vis. Pattern Recognit. (CVPR), 2016, pp. 770–778."
    )
    status, best, _ = decide(ref, [compare(ref, record)])
    assert status == "verified"
    assert best is not None and best.label("venue") == "CONTAINS"


def test_a_title_shared_by_other_works_is_not_enough(tmp_path):
    index = LocalIndex(tmp_path / "w.sqlite")
    index.add(
        Record(
            source="LOCAL",
            title="Editorial",
            authors=(Author(f"Editor{i}", "A."),),
            year=2000 + i,
            venue=f"Journal {i}",
            doi=f"10.1/ed.{i}",
        )
        for i in range(8)
    )
    result = ReferenceVerifier(index).verify(
        "Smith, J. (1990). Editorial. Journal of Nothing, 3, 1–2."
    )
    assert result.status in {"needs-human", "unverified"}, result.message
    right = ReferenceVerifier(index).verify("Editor3, A. (2003). Editorial. Journal 3, 1, 1–2.")
    assert right.status == "verified", right.message


# --- the multistyle dev set: a floor under every figure of bench/bench_reference_accuracy.py -----


def _load_bench():
    spec = importlib.util.spec_from_file_location(
        "bench_reference_accuracy", ROOT / "bench" / "bench_reference_accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


#: The bench holds issue 10's targets (one source for both); loading it runs nothing.
BENCH = _load_bench()
#: The floors are the targets. Where the engine falls short of one, lower its floor here to what
#: it holds now (with the date measured), and raise it when the figure improves.
FLOORS = dict(BENCH.TARGETS)


@pytest.fixture(scope="module")
def accuracy():
    if not DEV_SET.is_file():
        pytest.skip(f"the multistyle dev set is not at {DEV_SET} (../shared is outside the repo)")
    return BENCH, BENCH.measure(BENCH.load_rows())


def test_dev_set_correct_references_are_verified(accuracy):
    bench, report = accuracy
    for style in bench.TITLED:
        rate = report.rate("correct", [style])
        assert rate is not None and rate >= FLOORS["verified"], (style, rate, bench.table(report))


def test_dev_set_precision_and_absent_works(accuracy):
    _, report = accuracy
    assert report.precision >= FLOORS["precision"], report.precision
    assert report.absent_verified == 0


def test_dev_set_titleless_references_are_matched(accuracy):
    # ACS, AIP and Elsevier give no title: first author, year, venue, volume and first page.
    bench, report = accuracy
    rate = report.rate("correct", bench.TITLELESS)
    assert rate is not None and rate >= FLOORS["titleless"], (rate, bench.table(report))
    right, matched = report.style_precision(bench.TITLELESS)
    assert right / matched >= FLOORS["precision"], (right, matched)
    absent = [ok for s in bench.TITLELESS for ok in report.outcomes[(s, "absent")]]
    assert absent and all(absent)  # a titleless reference to a work not indexed: never verified


@pytest.mark.parametrize("kind", BENCH.ERRORS)
def test_dev_set_injected_errors_are_caught(accuracy, kind):
    bench, report = accuracy
    rate = report.rate(kind, bench.TITLED)
    assert rate is not None and rate >= FLOORS[kind], (kind, rate, bench.table(report))


def test_dev_set_strings_never_raise():
    if not DEV_SET.is_file():
        pytest.skip(f"the multistyle dev set is not at {DEV_SET}")
    for line in DEV_SET.read_text(encoding="utf-8").splitlines():
        for text in json.loads(line)["strings"].values():
            if len(text) > 1200:  # the seed's limit: a documented InputError
                with pytest.raises(InputError, match="at most 1,200"):
                    parse_reference(text)
            else:
                parse_reference(text)


@pytest.mark.parametrize(
    "name", ["crossref-real-2000-unstructured-sbmv.json", "crossref-generated-2500-apa.json"]
)
def test_no_exception_over_the_shared_sets(name):
    path = SHARED / "datasets" / name
    if not path.is_file():
        pytest.skip(f"{path} is not there (../shared is outside the repo)")
    for item in json.loads(path.read_text(encoding="utf-8"))["dataset"]:
        text = item["ref_string"]
        if text.strip() and len(text) <= 1200:
            parse_reference(text)


def test_a_huge_record_is_shown_cut(tmp_path):
    # Records are untrusted: the message and the graph show at most 1,000 characters of a value
    # and 50 items of a list.
    index = LocalIndex(tmp_path / "w.sqlite")
    title = "Deep learning " + "x" * 20_000
    index.add(
        [
            Record(
                source="LOCAL",
                title=title,
                authors=tuple(Author(f"Name{i}", "A.") for i in range(5000)),
                year=2015,
                venue="Nature",
                doi="10.1/huge",
            )
        ]
    )
    result = ReferenceVerifier(index).verify("Name0, A. (2015). Deep learning. Nature, 1, 1–2.")
    assert len(result.model_dump_json()) < 60_000
    candidate = next(n for n in result.verificationGraph["nodes"] if n["type"] == "CANDIDATE")
    authors = candidate["candidateFields"]["authors"]
    assert len(authors) == 51 and authors[-1].startswith("… ") and authors[-1].endswith(" more")


def test_a_titleless_reference_matches_on_its_numbers():
    record = Record(
        source="LOCAL",
        title="Gas-phase chemistry of silver(1+) with alkyl chlorides",
        authors=(Author("Jones", "R. W."), Author("Staley", "R. H.")),
        year=1982,
        venue="The Journal of Physical Chemistry",
        volume="86",
        pages="1669-1674",
        doi="10.1021/j100206a036",
    )
    good = parse_reference("[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 86 (1982) 1669.")
    status, best, _ = decide(good, [compare(good, record)])
    assert (status, best is not None and best.label("venue")) == ("verified", "CONTAINS")
    for wrong in (
        "[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 86 (1982) 1700.",  # another page
        "[1] R.W. Jones, R.H. Staley, J. Phys. Chem. 87 (1982) 1669.",  # another volume
        "[1] A. Smith, J. Phys. Chem. 86 (1982) 1669.",  # another author
    ):
        ref = parse_reference(wrong)
        assert decide(ref, [compare(ref, record)])[0] == "unverified", wrong
