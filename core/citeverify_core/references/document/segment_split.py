"""Splitting a reference list's lines into entries, and where the list ends (issue 26, 34).

Entries start at labels in sequence, hanging indents, paragraph starts, authors (or a repeated
author's rule) at a line's start; a figure or table inside the list, footnotes and figure text
set small are left out of it; a closing or appendix heading, a caption the list does not go on
after, or running text ends it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from citeverify_core.references.document.model import (
    DocumentLine,
    ExtractedReference,
)
from citeverify_core.references.document.segment_hyphens import (
    join_lines,
)
from citeverify_core.references.document.segment_labels import line_labeller
from citeverify_core.references.document.segment_lines import (
    body_text_size,
    capitals_heading,
    clusters,
    ends_list,
    ends_reference,
    label_number,
    label_text,
    line_number,
    looks_like_reference,
    main_size,
    reference_heading,
    section_heading,
    sort_key,
)
from citeverify_core.references.document.segment_patterns import (
    AUTHOR_START,
    CAPTION,
    INDEX_LINE,
    LABEL,
    LABEL_ONLY,
    LETTER_SECTION,
    LOOKAHEAD,
    MAX_REFERENCE_LINES,
    MODE_KIND,
    NOTE_START,
    PAGE_NUMBER,
    REPEATED_AUTHOR,
    ROLE_END,
    RULE,
    SUBHEADING,
    TRAILING_GIVEN_NAME,
    TRAILING_INITIAL,
    UNRELIABLE_TEXT,
    URL_TAIL,
    YEAR,
    YEAR_START,
)
from citeverify_core.references.document.segment_start import (
    ends_a_sentence,
    qualified_heading,
    reference_like_after,
)

__all__ = ["LineGroup", "Splitter"]

#: Lines after a list's start that the line labeller reads (a list is shorter).
_LEARNED_WINDOW = 3000
#: Characters of the longest printed lines (the 90th percentile): longer lines were not wrapped.
_PRINTED_MEASURE = 130


@dataclass(slots=True)
class LineGroup:
    """The lines (indices into the document's lines) of one entry, and its label."""

    indices: list[int]
    label: str | None = None


class Splitter:
    """Splits the lines from ``first`` on into references and finds where the list ends."""

    def __init__(
        self,
        lines: Sequence[DocumentLine],
        furniture: set[int],
        first: int,
        vocabulary: tuple[Counter[str], Counter[str]],
    ) -> None:
        self.lines = lines
        self.furniture = furniture
        self.first = first
        self.words, self.compounds = vocabulary
        self.notes: list[str] = []
        self.dropped = 0
        self.figures = 0
        #: Why the list may not have been read whole (see FoundReferences.incomplete).
        self.incomplete: str | None = None
        window = lines[first : first + 400]
        # Footnotes are skipped inside the list, unless the reader put the list itself in a
        # page's footnote area (a list set smaller than the text, at a page's foot).
        self.skip_footnotes = sum(ln.footnote for ln in window) * 2 < len(window)
        own = [ln for ln in window if not (ln.footnote and self.skip_footnotes)]
        #: The size the list's entries are set in (its first lines, weighted by characters):
        #: what figure text is smaller than. Only the first lines: a short list may be
        #: followed by pages of text in another size.
        self.list_size = main_size([ln for ln in own if ln.text.strip()][:8], share=0.3)
        # What a heading is bigger than: the document's text size weighted by characters,
        # footnotes aside, or the list's when bigger. Not the lines after the list's start
        # counted one by one: pages full of 10-pt notes there made 12-pt entries read as
        # headings, and the list "ended" after its first line.
        body = body_text_size((ln.size, ln.text) for ln in lines[:50_000] if not ln.footnote)
        sizes = [s for s in (body, self.list_size) if s is not None]
        self.body_size = max(sizes) if sizes else None
        self.mode = self._label_mode()
        #: Bracketed labels are words ("[Smi20]", "[KNUTH]"): not numbers in sequence.
        self.word_labels = self.mode == "bracket" and self._first_label_is_a_word()
        self.base = self._column_bases()
        self.start_class = self._start_class()
        #: An unlabelled list without layout whose every line is a reference (not wrapped).
        self.one_a_line = False
        #: The learned line labels of an unlabelled list read without layout (None: not used).
        self.learned = self._learned_labels()

    # -- what kind of list -------------------------------------------------------------------

    def _label_mode(self) -> str:
        """``word`` (Word's numbers), ``bracket``, ``paren``, ``dot``, ``bare`` or ``none``."""
        window = [
            ln
            for i, ln in enumerate(self.lines[self.first : self.first + 300], self.first)
            if ln.text.strip() and i not in self.furniture
        ][:60]
        if not window:
            return "none"
        if sum(1 for ln in window if ln.label) >= min(2, len(window)):
            return "word"
        kinds: Counter[str] = Counter()
        for ln in window:
            if m := LABEL.match(ln.text[:40]):
                kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
                kinds[kind] += 1
        window = [ln for ln in window if not SUBHEADING.match(ln.text.strip()[:120])] or window
        first_text = window[0].text
        if m := LABEL.match(first_text[:40]):
            kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
            # The first line of the list is labelled: that is the list's kind (a bare "1" must
            # be followed by "2" to count, so that "2019 ..." does not make a list numbered).
            if kind != "bare" or kinds["bare"] >= 2:
                return {"b": "bracket", "p": "paren", "n": "dot", "bare": "bare"}[kind]
        if LABEL_ONLY.match(first_text):
            return "margin"
        if kinds:
            kind, count = kinds.most_common(1)[0]
            # Labels after an unlabelled start count when they run in sequence ("(1973):" at a
            # line's start is a year, not a label).
            numbers = {n for ln in window if (n := label_number(ln.text)) is not None}
            if count >= 3 and kind != "bare" and sum(1 for n in numbers if n + 1 in numbers) >= 2:
                return {"b": "bracket", "p": "paren", "n": "dot"}[kind]
        return "none"

    def _first_label_is_a_word(self) -> bool:
        """The list's bracketed labels are words: its first is, or most of its first dozen.

        An alphabetic list sorts labels made of a year first: biblatex's "[08]", "[96]",
        "[97]" (works without an author) come before "[AT00]", "[Bre89]".
        """
        labels: list[str] = []
        for i in range(self.first, min(len(self.lines), self.first + 300)):
            m = LABEL.match(self.lines[i].text[:40])
            if m and m.group("b") is not None and i not in self.furniture:
                labels.append(m.group("b"))
                if len(labels) == 12:
                    break
        if not labels:
            return False
        words = sum(not label.isdecimal() for label in labels)
        return not labels[0].isdecimal() or (
            labels[0] != "1" and words >= 2 and words * 3 >= len(labels)
        )

    def _column_bases(self) -> dict[int, float]:
        """For each line with an ``x0``: the left edge of its column (on its page).

        Only lines in the list's size count: a page's footnotes, captions and headings start
        at edges of their own (notes hung left of the list made every entry line "indented").
        """
        base: dict[int, float] = {}
        stop = min(len(self.lines), self.first + 5000)
        by_page: dict[int | None, list[int]] = {}
        size = self.list_size
        for i in range(self.first, stop):
            line = self.lines[i]
            if line.x0 is None or not line.text.strip():
                continue
            if size is not None and line.size is not None and abs(line.size - size) > 1.0:
                continue
            if line.footnote and self.skip_footnotes:
                continue
            by_page.setdefault(line.location.page, []).append(i)
        all_x = sorted(self.lines[i].x0 or 0.0 for ids in by_page.values() for i in ids)
        global_bases = clusters(all_x)
        for ids in by_page.values():
            xs = sorted(self.lines[i].x0 or 0.0 for i in ids)
            bases = clusters(xs)
            local_of = {
                i: max((b for b in bases if b <= (self.lines[i].x0 or 0.0) + 0.5), default=0.0)
                for i in ids
            }
            members = Counter(local_of.values())
            for i in ids:
                x = self.lines[i].x0 or 0.0
                local = local_of[i]
                if members[local] < 4:
                    # Too few lines of this column on the page to know its edge: the edge of
                    # the column on all pages.
                    local = max((b for b in global_bases if b <= x + 0.5), default=local)
                base[i] = local
        return base

    def _indent(self, i: int) -> bool | None:
        """Whether line ``i`` is indented from its column's edge (None: no ``x0``)."""
        x = self.lines[i].x0
        if x is None or i not in self.base:
            return None
        return x - self.base[i] > 2.0

    def _start_class(self) -> bool | None:
        """Whether a reference's first line is the indented one (None: indents say nothing)."""
        starts: Counter[bool] = Counter()
        others: Counter[bool] = Counter()
        for i in range(self.first, min(len(self.lines), self.first + 120)):
            indent = self._indent(i)
            if indent is None or i in self.furniture or not self.lines[i].text.strip():
                continue
            if self.mode in {"bracket", "paren", "dot", "bare"}:
                (starts if LABEL.match(self.lines[i].text[:40]) else others)[indent] += 1
            else:
                others[indent] += 1
        if self.mode in {"bracket", "paren", "dot", "bare"}:
            if not starts:
                return None
            start = starts.most_common(1)[0][0]
            return start if others[not start] > others[start] else None
        total = others[True] + others[False]
        if not total or min(others[True], others[False]) * 100 < total * 15:
            return None  # (nearly) everything flush, or everything indented: indents say nothing
        # An unlabelled list: its first line is a reference's first line.
        return next(
            (
                self._indent(i)
                for i in range(self.first, min(len(self.lines), self.first + 50))
                if self._indent(i) is not None
                and i not in self.furniture
                and self.lines[i].text.strip()
            ),
            None,
        )

    def _learned_labels(self) -> dict[int, str] | None:
        """The CRF's ``B``/``I``/``O`` per line, where the list has nothing but its text.

        Only for an unlabelled list whose indents say nothing and whose entries are not set
        apart by blank lines or vertical gaps (a ``.txt`` list with one line per printed line,
        a PDF list set flush): there the rules' text heuristics found 65% of GROBID's real
        unlabelled references exactly, the model (``segment_labels``) 83%. The model reads the
        lines from the list's start on, as many as a long list has.
        """
        if self.mode != "none" or self.start_class is not None:
            return None
        labeller = line_labeller()  # loaded on first use only
        if labeller is None:
            return None
        window = [
            i
            for i in range(self.first, min(len(self.lines), self.first + _LEARNED_WINDOW))
            if self.lines[i].text.strip() and i not in self.furniture
        ]
        sample = window[1:200]
        if len(sample) < 2 or any(self.lines[i].label for i in sample):
            return None
        if sum(self.lines[i].starts_paragraph for i in sample) * 10 > len(sample):
            return None  # blank lines or gaps between entries: the paragraphs say where
        texts = [self.lines[i].text.strip() for i in window]
        if not _wrapped(texts[:200]):
            # A reference a line (a list pasted from a web page or a database): every line
            # starts one, whatever it ends on. The model was trained on lines wrapped at a
            # measure.
            self.one_a_line = True
            return dict.fromkeys(window, "B")
        labels = labeller.label(texts)
        return dict(zip(window, labels, strict=True))

    # -- the walk -----------------------------------------------------------------------------

    def split(self) -> tuple[list[LineGroup], int, str | None]:
        """The references' line groups, the index after the list, and a note on its end."""
        lines = self.lines
        groups: list[LineGroup] = []
        pending: list[str] = []  # labels read alone on their line (a margin column)
        expected = 1
        in_notes = False
        in_annotation = False
        blank_before = False
        just_labelled = False
        end = len(lines)
        end_note: str | None = None
        i = self.first
        while i < len(lines):
            line = lines[i]
            text = line.text.strip()
            if not text:
                blank_before = True
                i += 1
                continue
            if i in self.furniture or RULE.match(text):
                self.dropped += 1
                i += 1
                continue
            if line.footnote and self.skip_footnotes:
                # A page's footnote below the list's lines: never part of an entry.
                i += 1
                continue
            if groups and self._figure_text(i):
                # A figure's labels and numbers, set smaller than the list ("0.00 0.05 0.10").
                self.figures += 1
                i += 1
                continue
            in_notes = groups != [] and self._note_line(i, in_notes)
            if in_notes:
                # A footnote the reader did not mark: "7 http://...", smaller than the list.
                i += 1
                continue
            in_annotation = groups != [] and self._annotation_line(i, groups, in_annotation)
            if in_annotation:
                # An annotated bibliography's comment, set smaller under its entry.
                i += 1
                continue
            if reference_heading(text) and not ends_a_sentence(lines, i, self.furniture):
                # A running header repeating the heading, or a sub-list: never an entry.
                i += 1
                blank_before = True
                continue
            if self._is_end(i, expected, groups):
                # A figure or table inside the list (a float on a page of its own, or at a
                # page's top): its caption is not the list's end when the list goes on after.
                resume = self._resumes(i, expected, groups) if CAPTION.match(text) else None
                if CAPTION.match(text):
                    self._drop_float_lines(groups)
                if resume is None:
                    end = i
                    end_note = f"the list ends before {text[:60]!r} ({line.location})"
                    break
                self.figures += resume - i
                i = resume
                blank_before = True
                continue
            if self._session_heading(i):
                i += 1
                blank_before = True
                continue
            if SUBHEADING.match(text[:120]) and (
                line.heading or not groups or ends_reference(self._previous_text(groups))
            ):
                i += 1
                blank_before = True
                continue
            if LABEL_ONLY.match(text) and not line.label:
                number = label_number(text + " x")
                if (number == expected or (number is None and text.startswith("["))) and (
                    self._margin_label(text, groups)
                ):
                    # A label read apart from its text (a margin column).
                    pending.append(label_text(text))
                    if number is not None:
                        expected = number + 1
                    just_labelled = True
                    i += 1
                    continue
                if PAGE_NUMBER.match(text) and not (
                    groups
                    and self._previous_text(groups).rstrip().endswith(_GOING_ON)
                    and self.lines[i - 1].location.page == line.location.page
                ):
                    # Not "198" after "PASP, 96,": the last page of an entry cut by a line end.
                    self.dropped += 1
                    i += 1
                    continue
            start, label = self._starts(i, groups, expected, blank_before, pending)
            if just_labelled:
                start = True
            just_labelled = False
            blank_before = False
            if start or not groups:
                if label is None and pending:
                    label = pending.pop(0)
                groups.append(LineGroup([i], label))
                if label is not None and label.isdecimal():
                    expected = max(expected, int(label) + 1)
            else:
                group = groups[-1]
                if len(group.indices) >= MAX_REFERENCE_LINES and not self._goes_on(
                    i, expected, len(group.indices)
                ):
                    end = i
                    end_note = f"the list ends before running text ({line.location})"
                    self.incomplete = "the list's end is unsure (an entry ran on for 40 lines)"
                    break
                group.indices.append(i)
            i += 1
        if (
            len(groups) > 1
            and self.mode in {"bracket", "paren", "dot"}
            and groups[0].label is None
            and groups[1].label is not None
            and not looks_like_reference(
                " ".join(self.lines[j].text.strip() for j in groups[0].indices)
            )
        ):
            # Lines before a numbered list's first label that are no reference: a column of
            # the page read out of order ("bit_1.1-14 grid_4.0.0", R's session info), a remark.
            self.dropped += len(groups.pop(0).indices)
        end = self._trim_running_text(groups, end)
        if self.figures:
            self.notes.append(
                f"{self.figures} line(s) of figures or tables inside the list left out of it"
            )
        if self.dropped:
            self.notes.append(
                f"{self.dropped} line(s) of page furniture (page numbers, running headers, "
                "rules) left out of the list"
            )
        return groups, end, end_note

    def _figure_text(self, i: int) -> bool:
        """Line ``i`` is a figure's text: set clearly smaller than the list, and no entry's start.

        Plots drawn into the page carry their axis labels and tick numbers as text, in a size
        of their own; a reference's line is set in the list's size (a superscript or a small
        capital does not make the whole line smaller).
        """
        line = self.lines[i]
        if line.size is None or self.list_size is None or line.label:
            return False
        # Well under the list's size: a URL or a code word in a smaller typewriter font (8.8
        # points in a 10.9-point list) is the entry's own.
        if line.size > self.list_size * 0.7:
            return False
        text = line.text.strip()
        if URL_TAIL.search(text[-200:]):
            return False
        return not (LABEL.match(text[:40]) and label_number(text) is not None) and not (
            AUTHOR_START.match(text[:120]) and YEAR.search(text[:400])
        )

    def _index_starts(self, i: int, groups: list[LineGroup]) -> bool:
        """A back-of-book index starts at line ``i``, a page's or column's first after the list.

        Its heading may be read after its first lines ("SUBJECT INDEX" centred above two
        columns): three lines in a row like "appendixes, 4" say it.
        """
        if not self._column_break(i, groups) or not ends_reference(self._previous_text(groups)):
            return False
        following = [
            t
            for j in range(i, min(len(self.lines), i + 8))
            if (t := self.lines[j].text.strip()) and j not in self.furniture
        ][:3]
        return len(following) == 3 and all(INDEX_LINE.match(t[:80]) for t in following)

    def _drop_float_lines(self, groups: list[LineGroup]) -> None:
        """Take from the last entry the lines of the table or figure whose caption follows.

        They come after a page or column break, in a size of their own (a table set 20%
        smaller than the list).
        """
        if not groups or self.list_size is None:
            return
        indices = groups[-1].indices
        while len(indices) > 1:
            line = self.lines[indices[-1]]
            if line.size is None or abs(line.size - self.list_size) <= self.list_size * 0.15:
                break
            indices.pop()
            self.figures += 1

    def _annotation_line(self, i: int, groups: list[LineGroup], going: bool) -> bool:
        """Line ``i`` is an annotation's: a paragraph set smaller under a finished entry.

        biblatex's annotation=true prints a comment a point smaller under each entry; a URL
        in a smaller typewriter font, or an entry's own next line, is not one.
        """
        line = self.lines[i]
        if line.size is None or self.list_size is None or line.label:
            return False
        if self.list_size - line.size < 0.8:
            return False
        text = line.text.strip()
        if URL_TAIL.search(text[-200:]) or (
            looks_like_reference(text[:120]) and YEAR.search(text[:120])
        ):
            return False
        if going:
            return True
        # Its first line starts a sentence after an entry's end (not a URL's, which a line
        # end may cut: "url: http://.../BB-" + "prs310305/CompleteDraft.pdf").
        previous = self._previous_text(groups)
        return (
            text[:1].isupper() and ends_reference(previous) and not URL_TAIL.search(previous[-200:])
        )

    def _note_line(self, i: int, in_notes: bool) -> bool:
        """Line ``i`` is a footnote's that the reader did not mark as one.

        Set smaller than the list, and starting with the note's number ("7 http://...",
        "4Brox Rn. 170."), or going on after such a line.
        """
        line = self.lines[i]
        if line.size is None or self.list_size is None or line.label:
            return False
        if line.size > self.list_size - 1.0:
            return False
        return in_notes or NOTE_START.match(line.text.lstrip()[:12]) is not None

    def _resumes(self, i: int, expected: int, groups: list[LineGroup]) -> int | None:
        """Where the list goes on after a figure or table whose caption is line ``i``, or None.

        The list goes on when, within the caption's page and the next two, before any heading
        but captions, a line starts the entry that comes next: the next number of a numbered
        list; in an author-date list a line in the list's size that starts with an author
        (or a repeated author's rule) and has a year within its first lines, set as the list's
        first lines are, that sorts after the last entry, after a page or paragraph break.
        """
        page = self.lines[i].location.page
        if page is None or not groups:
            return None
        last_key = sort_key(self.lines[groups[-1].indices[0]].text)
        numbered = self.mode in {"bracket", "paren", "dot", "bare", "word"}
        for j in range(i + 1, min(len(self.lines), i + 400)):
            line = self.lines[j]
            text = line.text.strip()
            if line.location.page is None or line.location.page > page + 2:
                return None
            if not text or j in self.furniture or line.footnote:
                continue
            if CAPTION.match(text):
                continue
            if (
                line.heading
                or reference_heading(text)
                or (ends_list(text, line.size) and not CAPTION.match(text))
                or self._bigger(line)
            ):
                return None
            if numbered:
                number = line_number(line)
                if number == expected:
                    return j
                continue
            if (
                self.list_size is not None
                and line.size is not None
                and abs(line.size - self.list_size) > 0.6
            ):
                continue  # a figure's or table's own text
            prev = self.lines[j - 1]
            broke = prev.location.page != line.location.page or line.starts_paragraph
            if (
                broke
                and not ends_reference(self._previous_text(groups))
                and self._layout_start(j) is False
            ):
                return j  # the rest of the entry the float cut: "ogy, 11(2):R14, 2010. ..."
            if (
                broke
                and (AUTHOR_START.match(text[:120]) or REPEATED_AUTHOR.match(text[:12]))
                and any(
                    YEAR.search(self.lines[k].text[:400])
                    for k in range(j, min(j + 3, len(self.lines)))
                )
                and self._layout_start(j) is not False
                and (REPEATED_AUTHOR.match(text[:12]) or sort_key(text) >= last_key)
            ):
                return j
        return None

    def _margin_label(self, text: str, groups: list[LineGroup]) -> bool:
        """A label alone on its line is one (read apart from its text), not a reference's end.

        In a list whose labels stand in a margin column, always; in a list labelled as this
        line is ("[6]" in a list of "[n]"), after a finished reference. Never in an author-date
        list, nor where the text goes on: "...11(01)," + "1." and "...281-" + "6." are the ends
        of references that TeX put on a line of their own.
        """
        if self.mode == "margin":
            return True
        m = LABEL.match(text + " x")
        if m is None or not groups or not ends_reference(self._previous_text(groups)):
            return False
        kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
        return MODE_KIND.get(self.mode) == kind

    def _starts(
        self, i: int, groups: list[LineGroup], expected: int, blank_before: bool, pending: list[str]
    ) -> tuple[bool, str | None]:
        """Whether line ``i`` starts a reference, and its label."""
        line = self.lines[i]
        text = line.text.strip()
        if line.label:
            return True, label_text(line.label)
        if self.mode == "word":
            return line.starts_paragraph, None
        prev = self._previous_text(groups)
        if self.mode in {"bracket", "paren", "dot", "bare"}:
            m = LABEL.match(text[:40])
            if m:
                kind = next(k for k in ("b", "p", "n", "bare") if m.group(k) is not None)
                value = m.group(kind)
                if self.mode == "bracket" and kind == "b" and self.word_labels:
                    return True, value  # "[Smi20]", "[08]": alphabetic labels have no sequence
                if self.mode == "bracket" and kind == "b" and not value.isdecimal():
                    # In a numbered list a bracket at a line's start is the text's
                    # ("[99mTc]TRODAT-1").
                    return False, None
                if value.isdecimal():
                    number = int(value)
                    own_kind = kind == MODE_KIND[self.mode]
                    if number == expected and (own_kind or not LABEL_ONLY.match(text)):
                        return True, value  # not "6." alone in a "[n]" list: a page's end
                    # A gap in the numbering: believed when the layout agrees.
                    if (
                        expected < number <= expected + 3
                        and ends_reference(prev)
                        and self._layout_start(i) is not False
                        and own_kind
                    ):
                        return True, value
            if (
                self.word_labels
                and (end := _END_LABEL.search(text[-60:]))
                and (line.starts_paragraph or ends_reference(prev))
            ):
                # A twoside thesis sets its labels in the outer margin: right of the first
                # line on odd pages ("Hanspeter Schmid. “The ideal amplifier ... [Schmid98a]").
                return True, end.group(1)
            return False, None
        # Unlabelled (author-date) lists, or labels read apart in a margin column. A labelled
        # line after a finished reference still starts one (a reader lost the earlier labels).
        m = LABEL.match(text[:40])
        if (
            m
            and ends_reference(prev)
            and (m.group("b") or m.group("p") or m.group("n"))
            and self._layout_start(i) is not False
        ):
            return True, None  # not "2. Aufl. Boston 2004" set as a continuation
        if REPEATED_AUTHOR.match(text[:12]) and not prev.endswith(("-", "‐")):
            return True, None  # "———. 1990." / "—— (2004)": the author before, again
        if self._drawn_rule(i) and ends_reference(prev):
            return True, None  # the same, with the rule drawn as a line: "(2010), Roman Art"
        layout = self._layout_start(i)
        if layout is not None:
            return layout, None
        if self._column_break(i, groups):
            # A page or column break: the paragraph flag of the new column's first line says
            # nothing, the text does.
            return ends_reference(prev) and bool(AUTHOR_START.match(text[:120])), None
        if line.starts_paragraph or blank_before or (self.one_a_line and i in (self.learned or ())):
            return True, None
        author = bool(AUTHOR_START.match(text[:120]))
        if author and ends_reference(prev) and self._year_follows(i):
            rule = True
        else:
            # An entry that ends on a number or a word, not a full stop ("Katsuda, S., &
            # Tsunemi, H. 2005, PASJ, 57, 621" + "Katsuda, S., ... 2006, ApJ"; "... Neuroimage"
            # + "Cheung SW, ... (2009)"): the author and the year on one line start the next.
            rule = author and _ends_unpunctuated(prev) and bool(YEAR.search(text[:90]))
        if rule or self.learned is None or i not in self.learned:
            return rule, None
        # A list without layout: where the rules see no start, the line labeller decides,
        # unless the line before is cut inside an entry for sure (", Jose A.", "Ed.", "and").
        return self.learned[i] == "B" and not _cut_inside(prev), None

    def _goes_on(self, i: int, expected: int, length: int) -> bool:
        """An entry of 40 lines is still the list's: the next entry starts within a few lines.

        A genome paper's 190 authors run over 41 lines; running text after the list has no
        next label, nor an author and a year on one line. Up to four times the usual cap.
        """
        if length >= 4 * MAX_REFERENCE_LINES:
            return False
        numbered = self.mode in {"bracket", "paren", "dot", "bare"}
        for j in range(i, min(len(self.lines), i + 10)):
            text = self.lines[j].text.strip()
            if numbered:
                if label_number(text) == expected:
                    return True
            elif AUTHOR_START.match(text[:120]) and YEAR.search(text[:90]):
                return True
        return False

    def _year_follows(self, i: int) -> bool:
        """A year comes in line ``i`` or the next two, before another author-like start.

        "Business, Economics, ..., pp.691–698." looks like an author but holds no year before
        the next entry: it is the end of the entry before (an author-date list only).
        """
        if not any(YEAR.search(self.lines[j].text[:400]) for j in self._window(i, 60)):
            return True  # a list without years: the year says nothing
        for j in range(i, min(len(self.lines), i + 3)):
            text = self.lines[j].text.strip()
            if j > i and ends_reference(self.lines[j - 1].text) and AUTHOR_START.match(text[:120]):
                return False  # the next entry starts before any year
            if YEAR.search(text[:400]):
                return True
        return False

    def _window(self, i: int, size: int) -> range:
        return range(max(self.first, i - size // 2), min(len(self.lines), i + size // 2))

    def _drawn_rule(self, i: int) -> bool:
        """Line ``i`` starts with a year, right of where a repeated author's rule was drawn.

        biblatex and others draw the rule as a line, which leaves no text: the line starts
        with the year, at about three ems (the rule's width) from its column's edge, further
        in than a continuation line's indent.
        """
        line = self.lines[i]
        if (
            line.x0 is None
            or i not in self.base
            or not YEAR_START.match(line.text.lstrip()[:12])
            or self.mode not in {"none"}
        ):
            return False
        em = line.size or self.list_size or 10.0
        return line.x0 - self.base[i] >= 2.5 * em

    def _layout_start(self, i: int) -> bool | None:
        """What the indent says: a first line (True), a continuation (False), nothing (None)."""
        if self.start_class is None:
            return None
        indent = self._indent(i)
        if indent is None:
            return None
        return indent == self.start_class

    def _column_break(self, i: int, groups: list[LineGroup]) -> bool:
        if not groups:
            return False
        prev = self.lines[groups[-1].indices[-1]]
        line = self.lines[i]
        if prev.location.page != line.location.page:
            return True
        if prev.x0 is not None and line.x0 is not None and abs(prev.x0 - line.x0) > 100:
            return True
        return line.location.line < prev.location.line

    def _previous_text(self, groups: list[LineGroup]) -> str:
        if not groups:
            return ""
        return self.lines[groups[-1].indices[-1]].text.strip()

    def _is_end(self, i: int, expected: int, groups: list[LineGroup]) -> bool:
        """Line ``i`` ends the list (a closing heading, a caption, a new section)."""
        line = self.lines[i]
        text = line.text.strip()
        if not groups:
            return False
        if self._index_starts(i, groups):
            return True
        if SUBHEADING.match(text[:120]) and reference_like_after(self.lines, i + 1, self.furniture):
            return False  # "Filmographie", "Primary sources": a part of the list, set as a heading
        if self._session_heading(i):
            return False
        if CAPTION.match(text) and not self._previous_text(groups).rstrip().endswith(_GOING_ON):
            # A caption of any length ("Fig. A1.— Derived spectra for 3C138 (see Heiles &
            # Troland 2003). Plots for ..." after an ApJ list): the caller skips the float
            # when the list goes on after it.
            return True
        if not ends_list(text, line.size):
            # A weaker sign ("8 Discussion", a bigger font, "A Proofs" in a bigger font) only
            # counts after a finished reference, not after a line ending in ",".
            section = section_heading(line, self.body_size) or (
                LETTER_SECTION.match(text[:120]) is not None
                and (self._bigger(line) or capitals_heading(text))
            )
            if not section or (
                not line.heading and not ends_reference(self._previous_text(groups))
            ):
                return False
        numbered = self.mode in {"bracket", "paren", "dot", "bare", "margin", "word"}
        if numbered and LABEL.match(text[:40]) and label_number(text) == expected:
            return False  # "8 Smith ..." in a list numbered without dots
        if CAPTION.match(text):
            # "Figure 1: The key driver ..." on a page of its own between [3] and [4]: never an
            # entry's line; the caller skips the float when the list goes on after it.
            return True
        if self.mode in {"bracket", "paren", "dot", "bare"}:
            # refextract's check: a heading-looking line is not the end when the list's next
            # number follows within a few lines.
            for j in range(i + 1, min(len(self.lines), i + 1 + LOOKAHEAD)):
                if label_number(self.lines[j].text) == expected:
                    return False
        return True

    def _session_heading(self, i: int) -> bool:
        """Line ``i`` is a sub-heading of the list, set as the one right above its first line.

        A course bibliography is split by session headings ("1 Introduction ...", "2 Other
        Sciences ..."): the list's first line comes under the first of them (segment_start
        passes over it), and the others, in its size and followed by references, go on with it.
        """
        line = self.lines[i]
        above = self.lines[self.first - 1] if self.first > 0 else None
        if (
            above is None
            or not above.heading
            or not line.heading
            or reference_heading(above.text)
            or qualified_heading(above.text)
        ):
            return False
        if above.size is None or line.size is None or abs(above.size - line.size) > 0.3:
            return False
        return reference_like_after(self.lines, i + 1, self.furniture)

    def _bigger(self, line: DocumentLine) -> bool:
        return (
            line.size is not None and self.body_size is not None and line.size >= self.body_size + 1
        )

    def _trim_running_text(self, groups: list[LineGroup], end: int) -> int:
        """Cut running text that follows the last reference; returns the new end."""
        while groups:
            group = groups[-1]
            texts = [self.lines[j].text.strip() for j in group.indices]
            joined = " ".join(texts)
            if (
                group.label is None
                and not looks_like_reference(joined)
                and (len(joined) > 200 or len(groups) > 1)
                and not _long_authors_entry(joined, len(texts))
            ):
                groups.pop()
                end = min(end, group.indices[0])
                continue
            # A labelled last reference that swallowed paragraphs of text: cut at the first
            # line after it that starts a paragraph with no year before it.
            if len(joined) > 1200:
                for k, j in enumerate(group.indices[1:], 1):
                    head = " ".join(texts[:k])
                    line = self.lines[j]
                    if (line.starts_paragraph or self._layout_start(j)) and YEAR.search(head):
                        del group.indices[k:]
                        end = min(end, j)
                        break
            break
        return end

    # -- the reference -------------------------------------------------------------------------

    def reference(self, group: LineGroup, number: int) -> ExtractedReference:
        """The reference a group of lines makes."""
        first = self.lines[group.indices[0]]
        texts = [self.lines[j].text for j in group.indices]
        label = group.label
        head = texts[0]
        if not first.label and self.mode not in {"word", "none", "margin"}:
            m = LABEL.match(head[:40])
            if m and (label is None or label_text(m.group(0)) == label):
                label = label_text(m.group(0))
                head = head[m.end() :]
        elif self.mode in {"none", "margin"} and label is None and (m := LABEL.match(head[:40])):
            # A list whose labels a reader lost in part: a label is taken when it is bracketed
            # or is this entry's place in the list.
            value = m.group("b") or m.group("p") or m.group("n") or m.group("bare")
            if m.group("b") is not None or value == str(number):
                label = value
                head = head[m.end() :]
        if label is not None and head.rstrip().endswith(f"[{label}]"):
            head = head.rstrip()[: -len(label) - 2]  # a label set right of the first line
        if self._drawn_rule(group.indices[0]):
            # The rule as the list prints it: "——— (2010), ...", "———. “Pottery ...".
            head = head.lstrip()
            head = ("———" if head.startswith((".", ",")) else "——— ") + head
        texts[0] = head
        joined = join_lines(texts, self.words, self.compounds)
        last = self.lines[group.indices[-1]]
        damaged = any(self.lines[j].unreliable for j in group.indices)
        return ExtractedReference(
            text=joined,
            number=number,
            location=first.location,
            label=label,
            end=last.location if len(group.indices) > 1 else None,
            unreliable=UNRELIABLE_TEXT if damaged else None,
        )


#: An alphabetic label at a line's end, as a margin label right of the text reads: letters,
#: then a year of two or four digits and a letter ("[Schmid98a]", "[Knu86]", "[GMS04]").
_END_LABEL = re.compile(r"\s\[([A-Z][A-Za-z\u00C0-\u024F+\-]{0,20}\d{2}(?:\d{2})?[a-z]?)\]$")

#: What a line inside an entry ends with: the entry goes on ("PASP, 96," + "198").
_GOING_ON = (",", ";", ":", "-", "–", "&")

#: A line that ends on a comma and one name, or a name and an initial: a list of names.
_GIVEN_NAME_END = re.compile(r",\s+[^\W\d_][\w'’\-]*(?:\s[^\W\d_]\.?)?$")

#: Words a line ends on inside an entry (the names or the title go on).
_GOES_ON = frozenset({"and", "in", "of", "the", "for", "on", "by", "to", "with", "eds", "ed", "et"})


def _wrapped(texts: Sequence[str]) -> bool:
    """The lines were wrapped at a measure: most are full, their next word would not fit.

    A line followed by another of the same entry is full: its length plus the next line's first
    word passes the measure (taken as the 90th percentile of the lengths). In a list wrapped at
    a measure about half the lines or more are full; in a list with one reference a line only
    those near the longest are (a fifth or fewer). A measure under 130 characters is a printed
    line's (a page set at 9 pt holds about 120): a list of short entries, most on one line
    ("Chabrier G., 2003, PASP, 115, 763"), has few full lines and is still wrapped.
    """
    lengths = sorted(len(t) for t in texts)
    if len(lengths) < 5:
        return True
    measure = lengths[len(lengths) * 9 // 10]
    if measure < _PRINTED_MEASURE:
        return True
    full = sum(len(a) + 1 + len(b.split(maxsplit=1)[0]) > measure for a, b in pairwise(texts) if b)
    return full * 10 >= 3 * (len(texts) - 1)


def _cut_inside(prev: str) -> bool:
    """``prev`` stops inside an entry for sure.

    On a comma, colon, hyphen or "&", a joining word ("and", "in", "eds"), an initial or a given
    name and its initial ("Bergsagel, G.", ", Jose A.": an author list), a role ("Ed.", which
    the editors' names follow).
    """
    t = prev.rstrip()
    if not t:
        return False
    tail = t[-60:]
    return (
        t.endswith(_GOING_ON)
        or bool(TRAILING_INITIAL.search(tail[-40:]) or TRAILING_GIVEN_NAME.search(tail[-40:]))
        or bool(ROLE_END.search(tail[-40:]))
        or t.rsplit(None, 1)[-1].casefold() in _GOES_ON
    )


def _ends_unpunctuated(prev: str) -> bool:
    """``prev`` ends a reference without a full stop: on a number or a word ("621", "Medline").

    Not on a comma, a colon, a hyphen or a joining word: there the entry goes on.
    """
    t = prev.rstrip()
    if not t or not t[-1].isalnum():
        return False
    if _GIVEN_NAME_END.search(t[-60:]):
        return False  # "..., Kinley Taylor, Alison" + "Amos, and ...": an author list goes on
    last = t.rsplit(None, 1)[-1].casefold()
    return last not in _GOES_ON and not TRAILING_INITIAL.search(t[-40:] + ".")


def _long_authors_entry(joined: str, lines: int) -> bool:
    """A last entry whose year comes after 300 characters of names: not running text.

    "Christopher. Workman, Lars. Juhl. Jensen, ... Aug 2002.": a few lines, a year, and a
    reference's end.
    """
    return lines <= 8 and bool(YEAR.search(joined[:700])) and ends_reference(joined)
