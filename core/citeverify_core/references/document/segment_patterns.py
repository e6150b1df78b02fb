"""The patterns the reference list's finder and splitter apply to one line (issue 26, 34).

Every pattern is applied to one line (cut to a bounded length where it could be long) and has
no nested unbounded repetition, so a hostile line costs linear time.
"""

from __future__ import annotations

import re

__all__ = [
    "APPENDIX",
    "AUTHOR_START",
    "CAPTION",
    "CODE_LINE",
    "END_HEADING",
    "HEADING",
    "INDEX_LINE",
    "LABEL",
    "LABEL_ONLY",
    "LETTER_SECTION",
    "LOOKAHEAD",
    "MAX_HEADING_CHARS",
    "MAX_REFERENCE_LINES",
    "MODE_KIND",
    "NOTE_START",
    "PAGE_NUMBER",
    "QUALIFIED_HEADING",
    "REPEATED_AUTHOR",
    "ROLE_END",
    "RULE",
    "SECTION",
    "SPLIT_CAPS",
    "SUBHEADING",
    "TRAILING_GIVEN_NAME",
    "TRAILING_INITIAL",
    "UNRELIABLE_TEXT",
    "URL_TAIL",
    "YEAR",
    "YEAR_START",
]


_REF_WORDS = (
    r"references?(?:\s+(?:cited|list|and\s+notes|and\s+further\s+reading))?|list\s+of\s+references"
    r"|cited\s+references|reference\s+list|bibliography(?:\s+and\s+references)?"
    r"|bibliographical\s+references|select(?:ed)?\s+bibliography|works\s+(?:cited|consulted)"
    r"|sources\s+(?:cited|consulted)"
    r"|literature(?:\s+cited)?|cited\s+literature|literature\s+references|sources"
    r"|literatur(?:verzeichnis|liste|angaben|hinweise)?|quellen(?:verzeichnis)?"
    r"|quellen-\s*und\s+literaturverzeichnis"
    r"|r[ée]f[ée]rences(?:\s+bibliographiques)?|bibliographie"
    r"|referencias(?:\s+bibliogr[áa]ficas)?|bibliograf[íi]a|fuentes"
    r"|riferimenti(?:\s+bibliografici)?|refer[êe]ncias(?:\s+bibliogr[áa]ficas)?"
    r"|literatuur(?:lijst)?|referenties|bronnen|bibliografie"
    r"|litteratur(?:liste|förteckning)?|referenser|kilder|k[äa]llor|l[äa]hteet|kirjallisuus"
    r"|pi[śs]miennictwo|literatura|bibliografia|kaynak[çc]a|kaynaklar"
    r"|список\s+(?:использованной\s+)?литературы|литература|библиография"
    r"|βιβλιογραφία|αναφορές|参考文献|参考资料|引用文献|참고\s?문헌"
)


_NUMBERING = r"(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVXLC]{1,6}\.?|[A-Z]\.|§\s?\d{1,2})"


# A running head names the list with the page's number before or after it ("180 Bibliography",
# "Bibliography 181"): three or four digits are a page's number, never a section's.
_PAGE_BEFORE = r"(?:\d{3,4}\s+)"
_PAGE_AFTER = r"(?:\s+\d{1,4})"


HEADING = re.compile(
    rf"^[\W_]{{0,4}}(?:{_NUMBERING}\s*|{_PAGE_BEFORE})?(?P<word>{_REF_WORDS})"
    rf"(?:[\s:.\W_]{{0,4}}|{_PAGE_AFTER})$",
    re.I,
)


# A list's heading with a qualifier before its last word: "Example References", "Annotated
# Bibliography", "Secondary Literature", "Further Reading", or a title ending in the word after a
# colon ("Basics and Theories: Bibliography"). Weaker than HEADING (a section may be called
# "Tabular Bibliographies"): only taken when no plain heading is, and followed by references.
# A qualifier ending in "-ing" or "cross" names what the section does with references ("Citing
# References", "Cross References"), not a list.
_LIST_WORDS = (
    r"references?(?:\s+cited)?|bibliograph(?:y|ies)|works\s+cited"
    r"|literature(?:\s+cited)?|sources(?:\s+(?:cited|consulted))?|readings?"
)
QUALIFIED_HEADING = re.compile(
    rf"^[\W_]{{0,4}}(?:{_NUMBERING}\s+)?"
    r"(?:[^:\n]{1,60}:\s*|(?:(?![\w'’\-]+ing\s|cross\s)[^\W\d_][\w'’\-]{0,20}\s+){1,2})"
    rf"(?P<word>{_LIST_WORDS})[\s:.\W_]{{0,4}}$",
    re.I,
)


# Small capitals read as "R EFERENCES": one capital, a space, the rest in capitals.
SPLIT_CAPS = re.compile(r"\b([A-ZÀ-Þ])\s(?=[A-ZÀ-Þ]{2,}\b)")


# Headings that close a reference list: a whole short line ("Acknowledgements", "7 Notes").
_END_WORDS = (
    r"acknowledge?ments?|danksagung|remerciements|agradecimientos|ringraziamenti|agradecimentos"
    r"|dankwoord|funding(?:\s+(?:sources|information|statement))?|author\s+contributions?"
    r"|contributions|about\s+the\s+authors?|affiliations?|authors?['’]?\s+address(?:es)?"
    r"|addresses|correspondence|corresponding\s+author|authors?['’]?\s+biograph(?:y|ies)"
    r"|biograph(?:y|ies)|biographical\s+notes?|vitae?|curriculum\s+vitae|author\s+information"
    r"|(?:conflicts?|declarations?)\s+of\s+interests?|competing\s+interests|declarations?"
    r"|data\s+(?:and\s+code\s+)?availability(?:\s+statement)?|code\s+availability"
    r"|ethics(?:\s+statement)?|ethical\s+(?:approval|statement)|(?:neurips\s+paper\s+)?checklist"
    r"|glossary|index|(?:subject|author|name|general|scripture\s+reference)\s+index|notation|abbreviations|list\s+of\s+(?:figures|tables|abbreviations)"
    r"|figures|tables|footnotes|endnotes|notes|erklärung|eidesstattliche\s+erklärung"
    r"|supplement(?:ary|al)?(?:\s+(?:materials?|information|data|notes|results|figures|tables))?"
)


END_HEADING = re.compile(
    rf"^[\W_]{{0,4}}(?:{_NUMBERING}\s*)?(?:{_END_WORDS})(?:\s+[A-Z0-9](?:\.\d+)?)?[\s:.]{{0,3}}$",
    re.I,
)


# Headings that close it and may carry a title: "Appendix A: Proofs", "Supplementary Material
# for ...", "Anhang", "Annexe 2".
APPENDIX = re.compile(
    rf"^[\W_]{{0,4}}(?:{_NUMBERING}\s*)?(?:appendix|appendices|appendixes|annex(?:e|es)?|anhang"
    r"|anh[äa]nge|ap[ée]ndices?|allegati?|online\s+(?:appendix|supplement)"
    r"|supplement(?:ary|al)\s+(?:materials?|information))\b[^,]{0,80}$",
    re.I,
)


# "Appendix A: Proofs", "A Proof of Theorem 2", "A.1 Setup", "8 Discussion", "VII. CONCLUSION".
SECTION = re.compile(
    r"^(?:[A-H](?:\.\d{1,2}){1,3}|\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+"
    r"[A-Z][A-Za-z\u00C0-\u024F'’\-]*(?:\s+[\w'’\-:&]+){0,8}$"
)


# "A Proofs" (an appendix in the NeurIPS style): only with a heading's look, as a title's line
# may start "A Survey of ...".
LETTER_SECTION = re.compile(r"^[A-H]\s+[A-Z][A-Za-z\u00C0-\u024F'’\-]+(?:\s+[\w'’\-:&]+){0,8}$")


CAPTION = re.compile(
    r"^(?:figure|fig\.|table|tab\.|abbildung|abb\.|tabelle|tableau|tabla|tabella|algorithm|"
    r"listing)\s*[A-Z]?\d{1,3}(?:\.\d{1,2})?\s*[.:|\-–—]",
    re.I,
)


YEAR = re.compile(r"(?<![\d/.])(?:1[6-9]|20)\d\d[a-z]?(?!\d)|\b(?:n\.d\.|in press|forthcoming)")


# A label at the start of a line: "[12]", "[Smi20]", "(12)", "12.", "12)", or "12" before a word.
LABEL = re.compile(
    r"^\s*(?:\[(?P<b>[^\[\]\s]{1,14})\]|\((?P<p>\d{1,3})\)|(?P<n>\d{1,3})[.)](?![\d.])"
    r"|(?P<bare>\d{1,3})(?=\s+[^\W\d_]))\s*"
)


LABEL_ONLY = re.compile(r"^\s*(?:\[[^\[\]\s]{1,14}\]|\(\d{1,3}\)|\d{1,3}[.)]?)\s*$")


_PARTICLE = (
    r"(?:(?:van|von|der|den|de|del|della|di|da|du|le|la|dos|das|ten|ter|al|el|bin|st\.?|mc"
    r"|d['’])\s?)"
)


# "Smith, J." / "Smith, John" / "van der Berg, A." / "Smith J," / "Smith JA." / "SMITH, J." /
# "Smith-Jones, A." / "O'Neil, B." / "World Health Organization." (corporate: first words only).
AUTHOR_START = re.compile(
    rf"^{_PARTICLE}{{0,3}}[^\W\d_a-z][\w'’\-]{{0,30}}(?:\s[^\W\d_a-z][\w'’\-]{{0,30}}){{0,2}}"
    r"(?:,\s?[^\W\d_]|\s[^\W\d_a-z]{1,3}[,.](?:\s|$)|\s(?:[^\W\d_a-z]\.\s?){1,3}[,\s(]"
    # "Cole L (2003)", "Smith AB (2001a)": JSS and other author-year styles without commas.
    r"|\s[^\W\d_a-z]{1,3}\s\((?:1[6-9]|20)\d\d)"
    # "S.G. Zhirov," / "A. Tarantino and" / "J.-P. Smith,": initials first.
    r"|^(?:[^\W\d_a-z]\.\s?-?){1,3}\s?[^\W\d_a-z][\w'’\-]{1,30}(?:,|\s(?:and|&|et)\s)"
)


URL_TAIL = re.compile(r"(?:https?://|www\.|doi:\s?|\b10\.\d{4,9}/)\S*$", re.I)


PAGE_NUMBER = re.compile(
    r"^[\s\-–—|]*(?:page|p\.|pg\.?|seite|página|pagina)?\s*\d{1,4}"
    r"(?:\s*(?:of|/|von|de|di)\s*\d{1,4})?[\s\-–—|]*$",
    re.I,
)


# A line ending in a first name's initial after a comma or another initial ("Bergsagel, G.",
# "P. L."): a list of authors cut by the line end ("Series A." may end a reference).
TRAILING_INITIAL = re.compile(r"(?:,|\b[A-Z]\.)\s[A-Z]\.$")


# A given name and its middle initial after a comma or "and" ("..., Scott P. Carroll, Jose A." +
# "Andres, and David R. Angelini. 2011."), but not a journal's part ("Proc. R. Soc., Series A.").
TRAILING_GIVEN_NAME = re.compile(
    r"(?:,|\band|&)\s(?!(?:Series|Ser|Part|Section|Sect|Vol|Volume|Supplement|Suppl|Appendix|"
    r"Annex|Phase|Type|Group|Class|Division|Chapter|Plate|Model|Version|Issue|Book)\b)"
    r"[A-Z][a-z][\w'’\-]{0,20}\s[A-Z]\.$"
)


# Words that end an author's or editor's part, never a reference ("... Spectroscopy.” Ed." +
# "Harold I. Schiff and Ulrich Platt. Optical Methods ...").
ROLE_END = re.compile(
    r"(?:\b(?:[Ee]ds?|[Tt]rans|Hrsg|[Cc]omp)\.|\b(?:[Ee]dited|[Tt]ranslated)\sby)$"
)


RULE = re.compile(r"^[\s\-–—_=*~#.·•]{3,}$")


# A repeated author printed as a rule at an entry's start: "———. 1990.", "—— (2004)",
# "--- 2004", "— (1907)" (not "–145", a page range's end: an en dash needs a second one).
REPEATED_AUTHOR = re.compile(r"^(?:[—―]+|[–-]{2,}|_{3,})\s?(?=[.,:;(\s]|\d{4})")
# A line that starts with the year: after a repeated author's rule drawn as a line, not as text
# ("(2010), Roman Art, ..." set right of the rule's place).
YEAR_START = re.compile(r"^(?:\(?(?:1[6-9]|20)\d\d[a-z]?\)?[.,:]?|[.,])\s")
# A line of a back-of-book index: "appendixes, 4", "transliterated, 3, 12-14".
# Page numbers under 1000: "Cambridge University Press, 1990" is no index line.
INDEX_LINE = re.compile(r"^\S.{0,40}?,\s\d{1,3}(?:[-–]\d{1,3})?(?:,\s\d{1,3}(?:[-–]\d{1,3})?)*$")
# A footnote's first line: its number, then its text ("7 http://...", "4Brox Rn. 170.").
NOTE_START = re.compile(r"^\d{1,3}\s?[^\W\d_]|^\d{1,3}\s(?:https?://|www\.)")
# Source code shown after a list (a .bib file, LaTeX): never an entry.
CODE_LINE = re.compile(
    r"^(?:@\s?[A-Za-z](?:\s?[A-Za-z]){2,30}\s?\{"
    r"|\\(?:begin|end|documentclass|usepackage|bibitem|bibliography|printbibliography)\b)"
)


SUBHEADING = re.compile(
    r"^(?:primary|secondary|archival|unpublished|published|online|web|other|further|cited|"
    r"additional|software|data(?:sets?)?|books?|articles?|journal\s+articles|reports?|"
    r"conference\s+papers|theses|patents|standards|legal|government|news(?:paper)?s?|"
    r"interviews|manuscripts?|printed|electronic|internet|audio-?visual|and|sources?|"
    r"materials?|resources?|documents?|works|literature|references?|"
    r"(?:film|disc|vide|ludo)ograph(?:y|ie|ies)|films|recordings|packages?|documentation|"
    r"manuals?|\s)+:?$",
    re.I,
)


#: The label group of :data:`LABEL` that each labelled list mode reads.
MODE_KIND = {"bracket": "b", "paren": "p", "dot": "n", "bare": "bare"}


#: Why an entry read from a damaged line is not to be trusted (ExtractedReference.unreliable).
UNRELIABLE_TEXT = "read from a font without a Unicode map: dashes or ligatures may be lost"


MAX_HEADING_CHARS = 90


MAX_REFERENCE_LINES = 40


LOOKAHEAD = 8
