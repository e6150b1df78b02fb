r"""Citations in the text against the reference list (issue 26).

:func:`check_consistency` reads the body of a document (its lines outside the reference list,
in reading order), finds the in-text citations, matches each to the entries of the list, and
reports where the two disagree: a citation that names no entry (``missing-entry``), an entry no
citation names (``uncited-entry``), a numbered list that is not numbered 1, 2, 3, ...
(``out-of-order``), and an entry listed twice (``duplicate-entry``).

What is read depends on the list (docs/documents.md, "Citation consistency", says it for users):

* Entries with citation keys (``\bibitem{key}``, BibTeX) and a body with ``\cite``-like commands:
  the keys of ``\cite``, ``\citep[p.~3]{a,b}``, ``\citet``, ``\parencite``, ``\textcite``,
  ``\autocite``, ``\citeauthor``, ``\cites{a}{b}``, ``\nocite`` (``\nocite{*}`` cites all).
* Entries labelled with numbers ("[12]", "12."): brackets of numbers, ``[12]``, ``[3-5]``,
  ``[1, 4, 7]``, ``[1,3–5]``, ``[3]–[5]``, ``[12, p. 4]``; when no bracket cites, numbers in
  parentheses, ``(12)``, ``(2, 3)``; superscript numbers (a PDF's raised spans). Author-date
  forms are not read then. A program's output ("[20] 132 139") is no citation.
* Entries with labels of another shape ("[Smi20]", "[Wig]"): brackets of such labels.
* Otherwise (an author-date list): ``(Smith et al., 2020)``, ``(Smith & Jones, 2020; Lee,
  2019a)``, ``(Smith 2020, p. 4)``, ``(see Smith, 2020, 2021)``, ``Smith (2020a)``, ``Smith et
  al. (2020)``, ``Smith and Jones [2020]``, ``[Smith et al. 2020]``, ``(Cytel Inc., 2003)``,
  ``(Henderson Jr. 1982)``, ``Bates and Watts (1988, Chapter 6)``, ``(see Zeileis 2006a, for
  more details)``; and notes, which cite by author and title ("Smith, Title, 23.", "Ibid.").
  Brackets of numbers are not citations then.

Modules: ``citations_base`` (entries, the body), ``citations_numeric``,
``citations_author_date``, ``citations_notes`` (notes, superscripts), ``consistency_findings``.

The rule that matters most: no finding that is not true. So a thing that looks like a
citation is taken only when it is very likely one, and a citation that names no entry is only
reported when its form leaves no doubt (see the comments at ``_numeric`` and ``_author_date``).
Where the reader cannot be sure (the list not read whole, damaged text, a listed author near
its year in a form not read) it makes no finding and counts what it did not check instead:
:func:`read_consistency` returns that coverage, and notes saying it.
Every pattern is linear in the text, the look-back for a name is bounded, and at most
:data:`MAX_CITATION_SITES` places are examined (beyond that no uncited entry is reported).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from citeverify_core.references.document.citations_author_date import (
    _author_date,
    _mla_like,
    _named_in,
    _numbers_are_pages,
)
from citeverify_core.references.document.citations_base import (
    MAX_CITATION_SITES,
    MAX_RANGE,
    _Body,
    _Cite,
    _code_output,
    _entries,
    _Entry,
    _join,
    _ListKind,
)
from citeverify_core.references.document.citations_notes import (
    note_citations,
    superscript_citations,
)
from citeverify_core.references.document.citations_numeric import (
    _CITE_COMMAND,
    _alpha,
    _key_citations,
    _numeric,
)
from citeverify_core.references.document.consistency_findings import (
    DAMAGED,
    FORMS,
    NOT_WHOLE,
    OUTPUT,
    TOO_MANY,
    _duplicate_findings,
    _missing_findings,
    _named_near_year,
    _order_findings,
    _uncited_findings,
    _unresolved_findings,
)
from citeverify_core.references.document.model import (
    CitationCoverage,
    ConsistencyFinding,
    DocumentLine,
    ExtractedReference,
    InTextCitation,
)
from citeverify_core.references.document.segment_patterns import YEAR

__all__ = [
    "MAX_CITATION_SITES",
    "MAX_RANGE",
    "Consistency",
    "check_consistency",
    "read_consistency",
]


# --- the list -----------------------------------------------------------------------------------


def _list_kind(references: Sequence[ExtractedReference], text: str) -> _ListKind:
    n = len(references)
    keyed = sum(1 for r in references if r.key)
    if keyed * 2 >= n and _CITE_COMMAND.search(text):
        return "key"
    labels = [r.label.strip() for r in references if r.label and r.label.strip()]
    digits = sum(1 for label in labels if label.isdecimal())
    if labels and digits * 2 >= n:
        return "numeric"
    if len(labels) * 2 >= n:
        return "alpha"
    return "author-date"


# --- entry point --------------------------------------------------------------------------------


def check_consistency(
    body: Sequence[DocumentLine], references: Sequence[ExtractedReference]
) -> tuple[list[InTextCitation], list[ConsistencyFinding]]:
    """The in-text citations of ``body``, matched to ``references``, and the disagreements.

    Args:
        body: The document's lines outside its reference list, in reading order.
        references: The entries of the list.

    Returns:
        The citations found (in text order) and the findings: citations naming no entry (in
        text order, one per target), entries never cited (in list order), then the list's
        numbering and its duplicates. :func:`read_consistency` also says what was checked.
    """
    checked = read_consistency(body, references)
    return checked.citations, checked.findings


@dataclass(slots=True)
class Consistency:
    """What :func:`read_consistency` found: citations, findings, and how much was checked."""

    citations: list[InTextCitation]
    findings: list[ConsistencyFinding]
    coverage: CitationCoverage | None
    notes: list[str] = field(default_factory=list)


def read_consistency(
    body: Sequence[DocumentLine],
    references: Sequence[ExtractedReference],
    *,
    incomplete: str | None = None,
) -> Consistency:
    """:func:`check_consistency`, with the coverage of the check and notes on what was not.

    Args:
        body: The document's lines outside its reference list, in reading order.
        references: The entries of the list.
        incomplete: Why the list may not have been read whole (segment.py's
            ``FoundReferences.incomplete``), or ``None``. Then no citation is reported as
            naming no entry (its entry may be in the part not read); the entries read are
            still checked. When the citations themselves show the list read does not fit
            them (see :func:`_list_looks_cut`), no entry is reported uncited either.

    Precision first: an entry is reported uncited only when every way it may be cited was
    read; otherwise it is counted in the coverage as not checked, with the reason. The
    reasons: citations in a form not read (fewer than half the entries found cited, or a
    listed author named near the entry's year in a form not known), the list not read whole,
    damaged text (the entry's, or most of the body's), too many citation-like places.
    """
    if not references:
        return Consistency([], [], None)
    joined = _join(body)
    entries = _entries(references)
    kind = _list_kind(references, joined.text)
    cite_all = capped = False
    if kind == "key":
        cites, cite_all, capped = _key_citations(joined, entries)
        cites = _without_shown_keys(cites, joined.text)
    elif kind == "numeric":
        cites, capped = _numeric(joined, entries)
        if not any(x is not None for c in cites for x in c.entries):
            # No bracket cites: the document may cite "(12)", as some Vancouver journals do.
            # Read so only when those name at least half the entries (else they are equations,
            # list items, ...).
            in_parens, capped_parens = _numeric(joined, entries, parens=True)
            named = {x for c in in_parens for x in c.entries if x is not None}
            if len(named) * 2 >= len(entries):
                cites, capped = in_parens, capped_parens
        if not any(x is not None for c in cites for x in c.entries):
            # A paper cites in one numeric form: where brackets cite, a raised number is a
            # note's call ("activate the hook.¹"), not a citation.
            cites += superscript_citations(joined, entries)
    elif kind == "alpha":
        cites, capped = _alpha(joined, entries)
    else:
        mla = _mla_like(entries)
        cites, capped = _author_date(joined, entries, mla=mla)
        if not mla and _numbers_are_pages(cites, entries):
            mla = True  # "(Seitz et al. 1738)" with Seitz 2006 listed: MLA's pages, not years
            cites, capped = _author_date(joined, entries, mla=True)
        if mla:
            # MLA names an author in running text without parentheses ("As Odom and Adams
            # showed"): an entry whose first author's surname the body has is not reported.
            named = _named_in(joined.text, entries) - _dated_elsewhere(cites, entries)
            cites.append(_Cite(0, "", "author-date", [], [], named))
        # Notes cite by author and title ("Smith, Title, 23."), and so does running text
        # ("V. A. Il’inskaja, Nekotorye motivy ..."): they only mark entries cited.
        cites += note_citations(joined, entries)
    damaged = _damaged(body)
    unread = 0
    held: list[str] = []
    cut = _list_looks_cut(cites, entries, kind)
    if incomplete is None:
        incomplete = cut
    cites, dropped = _sure_citations(cites, joined, kind, whole=incomplete is None and not damaged)
    unread += dropped
    if dropped and incomplete is not None:
        held.append(
            f"{dropped} citation{'s' * (dropped != 1)} naming no entry not reported: "
            f"the reference list may not have been read whole ({incomplete})"
        )
    findings = _missing_findings(
        [c for c in cites if not _in_source_note(joined, c.start)], kind, entries, joined
    )
    if not damaged and kind != "key":
        # "[?]" is what a typeset paper prints; a LaTeX source names its unknown keys itself.
        findings += _unresolved_findings(joined)
    unsure: dict[int, str] = {}
    if cut is not None:
        # Citations beyond the list's labels: its numbering may not be the one cited.
        unsure = dict.fromkeys((e.number for e in entries), NOT_WHOLE)
    elif damaged:
        unsure = dict.fromkeys((e.number for e in entries), DAMAGED)
    elif capped:
        unsure = dict.fromkeys((e.number for e in entries), TOO_MANY)
    else:
        unsure = {
            e.number: DAMAGED
            for e in entries
            if e.ref.unreliable or _LOOSE_ACCENT.search(e.ref.text, 0, 300)
        }
        # A "numbered list" read from a program's printed output ("[4] chr2 2000-3000 * |
        # 0.10 7 8"): not a reference anybody cites.
        unsure |= {e.number: OUTPUT for e in entries if _code_output(f"[1] {e.ref.text[:300]}")}
    others = _other_forms(joined, cites)
    uncited = _uncited_findings(
        cites, entries, kind, unsure=unsure, cite_all=cite_all, other_forms=others
    )
    if kind == "author-date" and uncited.findings:
        # A listed author named near the entry's year in a form not read: not sure it is
        # uncited ("Cytel Inc. 2003" in a table, a form the grammar does not know).
        near = _named_near_year(joined, [e for e in entries if e.number in uncited.reported])
        if near:
            unread += sum(near.values())
            uncited = _uncited_findings(
                cites, entries, kind, unsure={**unsure, **dict.fromkeys(near, FORMS)},
                cite_all=cite_all, other_forms=others,
            )  # fmt: skip
    findings += uncited.findings
    cites = [c for c in cites if c.targets]
    findings += _order_findings(references)
    findings += _duplicate_findings(entries)
    citations = [
        InTextCitation(
            text=" ".join(c.text.split()),
            kind=c.kind,
            targets=tuple(c.targets),
            entries=tuple(c.entries),
            location=joined.location(c.start),
        )
        for c in cites
    ]
    coverage = CitationCoverage(
        entries=len(entries),
        checked=len(entries) - sum(uncited.not_checked.values()),
        not_checked=tuple(uncited.not_checked.items()),
        citations=len(citations),
        unread=unread,
    )
    return Consistency(citations, findings, coverage, [*held, *coverage.notes()])


#: The share of the body's lines read from damaged text above which no finding is made.
_DAMAGED_SHARE = 0.2


_SHOWN_BIBITEM = re.compile(r"\\bibitem\s{0,3}(?:\[[^\[\]\n]{0,200}\]\s{0,3})?\{([^{}\s]{1,120})\}")


def _without_shown_keys(cites: list[_Cite], text: str) -> list[_Cite]:
    r"""``cites`` without the unknown keys whose ``\bibitem`` the body itself shows.

    A LaTeX manual prints examples of its markup ("\cite{Glashow,*Salam}" above
    "\bibitem{Glashow} ..."): keys of an example's bibliography are not this document's.
    """
    shown = {m.group(1) for m in itertools.islice(_SHOWN_BIBITEM.finditer(text), 10_000)}
    if not shown:
        return cites
    kept: list[_Cite] = []
    for cite in cites:
        pairs = [
            (t, x) for t, x in zip(cite.targets, cite.entries, strict=True)
            if x is not None or t not in shown
        ]  # fmt: skip
        if pairs:
            kept.append(_Cite(cite.start, cite.text, cite.kind, [t for t, _ in pairs],
                              [x for _, x in pairs], cite.also))  # fmt: skip
    return kept


def _list_looks_cut(cites: list[_Cite], entries: list[_Entry], kind: str) -> str | None:
    """Why the list read seems not whole, judged from the citations: or ``None``.

    A paper whose list and citations disagree has a few citations naming no entry; many
    distinct ones say the list was not read whole (a page of it lost, a second list not
    found): three numbers beyond a numbered list's last label ("[73-75]" against a list read
    up to [55]), or four author-date works naming no entry and more than half as many as the
    entries cited.
    """
    unmatched = {t for c in cites for t, x in zip(c.targets, c.entries, strict=True) if x is None}
    if kind == "numeric":
        top = max((int(e.ref.label) for e in entries if e.ref.label and e.ref.label.isdecimal()),
                  default=0)  # fmt: skip
        beyond = sum(1 for t in unmatched if t.isdecimal() and int(t) > top)
        if beyond >= 3:
            return f"{beyond} numbers cited beyond its last label [{top}]"
        return None
    if kind == "author-date":
        matched = {x for c in cites for x in c.entries if x is not None}
        if len(unmatched) >= 4 and len(unmatched) * 2 > len(matched):
            return f"{len(unmatched)} works cited are not in it, {len(matched)} are"
    return None


# An accent printed apart from its letter ("Magnus ¯strand" for "Åstrand": a font whose
# composed letters have no Unicode): the author's name as read is not the one cited.
_LOOSE_ACCENT = re.compile(r"(?:^|\s)[\u00a8\u00af\u00b4\u00b8\u02c6-\u02dd][^\W\d_]")
# A number set after a word and a punctuation mark, flattened from a superscript the reader
# did not see raised: "shown.12 The", "disease,3,4 and".
_FLAT_SUPERSCRIPT = re.compile(r"[^\W\d_]{2}[.,;:]\d{1,3}(?:[,–-]\d{1,3}){0,5}(?=\s|$)")


# A short note's start: its number, a surname (or two names) and a comma ("4 Kuhn, Structure").
_SHORT_NOTE = re.compile(r"^\W{0,3}\d{0,3}\s?[A-Z][\w'’\-]+(?:\s[A-Z][\w'’\-]+)?,\s")


def _other_forms(body: _Body, cites: list[_Cite]) -> bool:
    """Whether the body shows citations in a form not read: footnotes, unread superscripts.

    Signs: a line of a footnote area; a raised span holding a digit that was not read as a
    citation (a note call); two numbers flattened after a word and a punctuation mark.
    """
    read = {c.start for c in cites if c.kind == "numeric"}
    starts = sorted(read)
    # Where the notes were read (footnote areas found), a note call says nothing more: what
    # the notes cite was read with them.
    notes_read = any(body.lines[index].footnote for index in body.origin)
    for i, index in enumerate(body.origin):
        line = body.lines[index]
        if line.footnote and (YEAR.search(line.text) or _SHORT_NOTE.match(line.text)):
            # A note that may cite a work in full or short ("3 Smith, Title (Chicago 1990),
            # 23.", "4 Kuhn, Structure, 40."); not one whose citations are read ("4 See
            # [Fabre95]."), nor a note of prose ("2Although it is rather small, ...").
            end = body.starts[i + 1] if i + 1 < len(body.starts) else len(body.text)
            k = bisect.bisect_left(starts, body.starts[i])
            if not (k < len(starts) and starts[k] < end):
                return True
        if (
            not notes_read
            and body.starts[i] not in read
            and any(any(ch.isdigit() for ch in line.text[a:b]) for a, b in line.raised[:20])
        ):
            return True
    flat = itertools.islice(_FLAT_SUPERSCRIPT.finditer(body.text), 2)
    return sum(1 for _ in flat) >= 2


def _damaged(body: Sequence[DocumentLine]) -> bool:
    """Whether much of the body was read from damaged text (its citations cannot be trusted)."""
    lines = [line for line in body if line.text.strip()]
    bad = sum(1 for line in lines if line.unreliable)
    return bool(lines) and bad > len(lines) * _DAMAGED_SHARE


def _sure_citations(
    cites: list[_Cite], body: _Body, kind: str, *, whole: bool
) -> tuple[list[_Cite], int]:
    """``cites`` without the targets naming no entry that the reader cannot be sure of.

    Dropped (and counted): every such target when the list or the text is not whole (it may
    name an entry not read); one read from damaged text; an author-date one in a footnote (a
    note's publication details, "(Chicago: University of Chicago Press, 1990)", are no
    citation).
    """
    kept: list[_Cite] = []
    dropped = 0
    for cite in cites:
        if None not in cite.entries or (cite.kind == "key" and whole):
            kept.append(cite)
            continue
        line = body.line_at(cite.start)
        unsure = not whole or (
            line is not None and (line.unreliable or (line.footnote and cite.kind == "author-date"))
        )
        if not unsure:
            kept.append(cite)
            continue
        pairs = [(t, x) for t, x in zip(cite.targets, cite.entries, strict=True) if x is not None]
        dropped += len(cite.targets) - len(pairs)
        kept.append(
            _Cite(cite.start, cite.text, cite.kind, [t for t, _ in pairs], [x for _, x in pairs],
                  cite.also)
        )  # fmt: skip
    return kept, dropped


_CITED_YEAR = re.compile(r"(?<!\d)(1[6-9]\d\d|20\d\d)(?!\d)")


def _dated_elsewhere(cites: list[_Cite], entries: list[_Entry]) -> set[int]:
    """Entries whose first author the body cites with years, none of them the entry's own.

    "(Elo 2008)" and "Elo et al. (2008)" cite Elo's 2008 work: the surname in the text is
    theirs, so Elo's 2009 entry is not taken as named in running text (MLA's rule).
    """
    by_number = {e.number: e for e in entries}
    years: dict[str, set[int]] = {}
    for c in cites:
        found = {int(y) for y in _CITED_YEAR.findall(c.text)}
        for x in c.entries:
            if x is not None and (e := by_number.get(x)) is not None and e.names:
                years.setdefault(e.names[0], set()).update(found)
    return {
        e.number
        for e in entries
        if e.names and years.get(e.names[0]) and not e.years & years[e.names[0]]
    }


# A table's note of its sources ("References. — (1) Barbuy, Spite, & Spite 1985; (2) ..."):
# often typed by hand, in forms the reader mostly does not take, of works the paper's own list
# need not hold. What it cites marks entries cited; it never makes a missing-entry.
_SOURCE_NOTE = re.compile(
    r"^(?:References?|Sources?|Data sources?)\s?[.:]\s?[—–-]{0,2}\s*(?:\(1\)|\w)"
)


def _in_source_note(body: _Body, offset: int) -> bool:
    """Whether ``offset`` lies in a table's source note (its line or the two before start it)."""
    i = bisect.bisect_right(body.starts, offset) - 1
    for k in range(i, max(i - 3, -1), -1):
        if k < 0:
            break
        start = body.starts[k]
        end = body.starts[k + 1] if k + 1 < len(body.starts) else len(body.text)
        if _SOURCE_NOTE.match(body.text[start:end].lstrip()[:40]):
            return True
    return False
