"""Academic identifiers (DOIs, PubMed IDs, PMCIDs, arXiv IDs) and URLs in an answer."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from citeverify_core.engine.extract.scan import Found, _has, _Limited, _scan, _Taken, _trim

__all__ = ["extract_academic", "extract_urls"]

# --- academic: DOIs, PubMed IDs, PMCIDs, arXiv IDs -----------------------------------------------

# A DOI is found by its literal "10." start (fast to scan); its prefix is read backwards.
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>“”‘’]+")
_DOI_PREFIX = re.compile(r"(?:doi:\s*|https?://(?:dx\.)?doi\.org/)$", re.IGNORECASE)
_PMID = re.compile(
    r"\bPMID:?\s*(\d{1,9})\b"
    r"|\bhttps?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/(\d{1,9})\b/?",
    re.IGNORECASE,
)
_PMCID = re.compile(
    r"(?:\bhttps?://(?:www\.)?ncbi\.nlm\.nih\.gov/pmc/articles/)?\bPMC\d{4,9}\b/?", re.IGNORECASE
)
_ARXIV = re.compile(
    r"(?:\barXiv:\s*|\bhttps?://(?:www\.)?arxiv\.org/(?:abs|pdf)/)"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z.-]*/\d{7}(?:v\d+)?)(?:\.pdf)?",
    re.IGNORECASE,
)

_DOI_GATE = _has("10.")
_PMID_GATE = _has("pmid", "pubmed", fold=True)
_PMCID_GATE = _has("pmc", fold=True)
_ARXIV_GATE = _has("arxiv", fold=True)


@cache
def _idutils() -> Any:
    # Imported on first use: idutils scans the installed packages' entry points at import
    # (about 0.5 s), which `import citeverify_core`, `citeverify --help` and `lint` need not pay.
    import idutils  # noqa: PLC0415 - start-up time

    return idutils


def extract_academic(text: str, *, limited: _Limited | None = None) -> list[Found]:
    """DOIs (bare, ``doi:``, doi.org links), PubMed IDs, PMCIDs and arXiv IDs.

    idutils is asked only about candidates that the patterns found: text with no identifier never
    imports it (it compiles its regexes at import, about 0.3 s).
    """
    found: list[Found] = []
    for m in _scan(text, _DOI, _DOI_GATE, limited):
        prefix = _DOI_PREFIX.search(text, max(0, m.start() - 24), m.start())
        start = prefix.start() if prefix else m.start()
        if (
            prefix is None
            and m.start()
            and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "/._")
        ):
            continue  # inside another token ("v10.1234/x", a path)
        end = _trim(text, m.start(), m.end())
        doi = text[m.start() : end]
        idutils = _idutils()
        if not idutils.is_doi(doi):
            continue
        normalized = idutils.normalize_doi(doi).lower()
        found.append(Found("academic", "doi", start, end, text[start:end], normalized))
    for m in _scan(text, _PMID, _PMID_GATE, limited):
        pmid = m.group(1) or m.group(2)
        if _idutils().is_pmid(pmid):
            end = _trim(text, m.start(), m.end())
            found.append(Found("academic", "pmid", m.start(), end, text[m.start() : end], pmid))
    for m in _scan(text, _PMCID, _PMCID_GATE, limited):
        end = _trim(text, m.start(), m.end())
        pmc = re.search(r"PMC\d+", m.group(), re.IGNORECASE)
        assert pmc is not None
        pmcid = pmc.group().upper()
        if _idutils().is_pmcid(pmcid):
            found.append(Found("academic", "pmcid", m.start(), end, text[m.start() : end], pmcid))
    for m in _scan(text, _ARXIV, _ARXIV_GATE, limited):
        ident = m.group(1)
        idutils = _idutils()
        if idutils.is_arxiv(f"arXiv:{ident}"):
            normalized = idutils.normalize_arxiv(f"arXiv:{ident}")
            found.append(Found("academic", "arxiv", m.start(), m.end(), m.group(), normalized))
    return found


# --- URLs ----------------------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>\"'`“”‘’{}|\\^]+", re.IGNORECASE)
_URL_GATE = _has("://")


def extract_urls(
    text: str, *, taken: Iterable[tuple[int, int]] = (), limited: _Limited | None = None
) -> list[Found]:
    """http(s) URLs, trailing punctuation and unbalanced brackets trimmed.

    URLs inside ``taken`` spans (already found as DOIs, PubMed or arXiv links) are skipped.
    """
    claimed = _Taken(taken)
    found = []
    for m in _scan(text, _URL, _URL_GATE, limited):
        if m.start() and text[m.start() - 1].isalnum():
            continue  # "xhttp://" is not a URL start
        end = _trim(text, m.start(), m.end())
        if end - m.start() <= len("https://") or claimed.overlaps(m.start(), end):
            continue
        url = text[m.start() : end]
        scheme, rest = url.split("://", 1)
        host, sep, path = rest.partition("/")
        normalized = f"{scheme.lower()}://{host.lower()}{sep}{path}"
        found.append(Found("url", "url", m.start(), end, url, normalized))
    return found
