"""The learned line labeller for reference lists read without layout (issue 34).

A list that is nothing but text (a paper saved as ``.txt``, a PDF list set flush with no gaps)
gives the splitter no indent, label or blank line to split at. The shipped CRF weights
(``segment_labels.json``, trained on GROBID's annotated reference zones) label each line; these
tests check what a user relies on: such lists are split into their references, a list with one
reference a line keeps each line whole, the decoding gives crfsuite's own labels, and the model
can be switched off or replaced.
"""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest

from citeverify_core.references.document import extract_document
from citeverify_core.references.document.segment_labels import (
    LABELS,
    LineLabeller,
    crf_items,
    line_features,
    line_labeller,
    use_line_labeller,
)

# Vancouver-style entries as journals print them: no full stop after the pages, so the rules'
# "a finished entry, then an author" never fires.
REFS = [
    "Anderson HR, Atkinson RW, Peacock JL, Sweeting MJ, Marston L. Ambient particulate matter "
    "and health effects: publication bias in studies of short-term associations. Epidemiology "
    "2005;16:155-63",
    "Bell ML, Dominici F, Samet JM. A meta-analysis of time-series studies of ozone and mortality "
    "with comparison to the national morbidity, mortality, and air pollution study. Epidemiology "
    "2005;16:436-45",
    "Chen R, Yin P, Meng X, Liu C, Wang L, Xu X, et al. Fine particulate air pollution and daily "
    "mortality: a nationwide analysis in 272 Chinese cities. Am J Respir Crit Care Med "
    "2017;196:73-81",
    "Dominici F, McDermott A, Zeger SL, Samet JM. On the use of generalized additive models in "
    "time-series studies of air pollution and health. Am J Epidemiol 2002;156:193-203",
    "Katsouyanni K, Touloumi G, Spix C, Schwartz J, Balducci F, Medina S, et al. Short-term "
    "effects of ambient sulphur dioxide and particulate matter on mortality in 12 European "
    "cities: results from time series data from the APHEA project. BMJ 1997;314:1658-63",
    "Peng RD, Dominici F, Pastor-Barriuso R, Zeger SL, Samet JM. Seasonal analyses of air "
    "pollution and mortality in 100 US cities. Am J Epidemiol 2005;161:585-94",
    "Samoli E, Peng R, Ramsay T, Pipikou M, Touloumi G, Dominici F, et al. Acute effects of "
    "ambient particulate matter on mortality in Europe and North America: results from the "
    "APHENA study. Environ Health Perspect 2008;116:1480-6",
    "Zanobetti A, Schwartz J. The effect of fine and coarse particulate air pollution on "
    "mortality: a national analysis. Environ Health Perspect 2009;117:898-903",
]


def _texts(text: str) -> list[str]:
    return [r.text for r in extract_document(text.encode(), name="paper.txt").references]


def test_a_wrapped_list_without_layout_is_split_into_its_references() -> None:
    lines = [line for ref in REFS for line in textwrap.wrap(ref, 78)]
    text = "Air pollution and mortality\n\nSome text.\n\nReferences\n" + "\n".join(lines) + "\n"
    assert _texts(text) == REFS
    with use_line_labeller(None):  # the rules alone: one entry of every line
        assert len(_texts(text)) < len(REFS)


def test_a_list_with_one_reference_a_line_keeps_each_line_whole() -> None:
    text = "References\n" + "\n".join(REFS) + "\n"
    assert _texts(text) == REFS


def test_short_entries_that_fit_on_one_printed_line_are_still_read_as_wrapped() -> None:
    # An astronomy list: most entries fit on a line of a column, a few go on to the next line
    # ("ApJ, 552," + "L23"), which must stay in its entry.
    refs = [
        "Burkert A., 1995, ApJ, 447, L25",
        "Chabrier G., 2003, PASP, 115, 763",
        "de Blok W. J. G., McGaugh S. S., Bosma A., Rubin V. C., 2001, ApJ, 552, L23",
        "Dehnen W., 1993, MNRAS, 265, 250",
        "Di Cintio A., Brook C. B., Dutton A. A., Maccio A. V., Stinson G. S., Knebe A., 2014, "
        "MNRAS, 441, 2986",
        "Navarro J. F., Frenk C. S., White S. D. M., 1996, ApJ, 462, 563",
        "Oh S.-H., de Blok W. J. G., Brinks E., Walter F., Kennicutt R. C., 2011, AJ, 141, 193",
        "Pontzen A., Governato F., 2012, MNRAS, 421, 3464",
    ]
    lines = [line for ref in refs for line in textwrap.wrap(ref, 72)]
    assert any(line == "L23" or line.startswith("A., 2014") for line in lines)
    assert _texts("References\n" + "\n".join(lines) + "\n") == refs


def test_lists_with_blank_lines_or_labels_do_not_use_the_model() -> None:
    blank = "References\n\n" + "\n\n".join(REFS) + "\n"
    numbered = "References\n" + "\n".join(f"[{k}] {r}" for k, r in enumerate(REFS, 1)) + "\n"
    for text in (blank, numbered):
        with_model = _texts(text)
        with use_line_labeller(None):
            assert _texts(text) == with_model == REFS


def test_the_shipped_model_names_its_source_and_round_trips() -> None:
    labeller = line_labeller()
    assert labeller is not None
    assert "GROBID" in labeller.source and "Apache-2.0" in labeller.source
    again = LineLabeller.from_json(json.loads(json.dumps(labeller.to_json())))
    lines = [line for ref in REFS for line in textwrap.wrap(ref, 60)]
    assert again.label(lines) == labeller.label(lines)
    assert set(labeller.label(lines)) <= set(LABELS)


def test_a_model_of_another_shape_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="citeverify-line-labels/1"):
        LineLabeller.from_json({"format": "other", "labels": ["B", "I", "O"]})


def test_another_model_can_be_used_for_a_block_only() -> None:
    # Every line "I" (a strong I weight on the bias): one entry, inside the block only.
    only_i = LineLabeller({"bias": (0.0, 5.0, 0.0)}, ((0.0,) * 3,) * 3)
    lines = [line for ref in REFS for line in textwrap.wrap(ref, 78)]
    text = "References\n" + "\n".join(lines) + "\n"
    with use_line_labeller(only_i):
        assert len(_texts(text)) == 1
    assert _texts(text) == REFS


def test_decoding_gives_crfsuite_s_own_labels(tmp_path: Path) -> None:
    pycrfsuite = pytest.importorskip("pycrfsuite", reason="python-crfsuite (test group) missing")
    rng = random.Random(5)
    # Training data: wrapped lists of the references above and shuffled ones, gold B/I labels.
    seqs: list[tuple[list[dict[str, float]], list[str]]] = []
    for width in (50, 60, 70, 80, 90):
        refs = REFS[:]
        rng.shuffle(refs)
        lines: list[str] = []
        gold: list[str] = []
        for ref in refs:
            wrapped = textwrap.wrap(ref, width)
            lines += wrapped
            gold += ["B"] + ["I"] * (len(wrapped) - 1)
        lines.append("Page 12")
        gold.append("O")
        seqs.append((crf_items(line_features(lines)), gold))
    trainer = pycrfsuite.Trainer(verbose=False)
    for items, gold in seqs:
        trainer.append(pycrfsuite.ItemSequence(items), gold)
    trainer.set_params({"c1": 0.01, "c2": 0.01, "max_iterations": 40})
    model = str(tmp_path / "lines.crfsuite")
    trainer.train(model)
    tagger = pycrfsuite.Tagger()
    tagger.open(model)
    info = tagger.info()
    ours = LineLabeller.from_weights(info.state_features, info.transitions)
    for width in (45, 65, 85):
        lines = [line for ref in REFS for line in textwrap.wrap(ref, width)]
        items = crf_items(line_features(lines))
        assert ours.label_items(items) == list(tagger.tag(pycrfsuite.ItemSequence(items)))
    tagger.close()


def test_a_huge_list_is_labelled_in_bounded_work() -> None:
    lines = [line for _ in range(7500) for line in textwrap.wrap(REFS[1], 78)]
    labels = line_labeller().label(lines)  # type: ignore[union-attr]
    assert len(labels) == len(lines) > 20_000
    assert labels[20_000:] == ["I"] * (len(lines) - 20_000)  # past MAX_LINES: not read
