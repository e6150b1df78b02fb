"""PubMed through NCBI E-utilities: esummary for PMIDs, esearch then esummary for a title.

NCBI blocks a client that sends more than 3 requests a second (10 with an API key). Every call
here waits on the host's limiter in the core (:func:`~citeverify_core.lookups.http.host_limiter`),
shared by every verifier of the process, the answer verifier's lookups and the reference
sources alike.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from citeverify_core.lookups.bibliographic import (
    Author,
    Record,
    as_dict,
    as_list,
    clean_doi,
    text_field,
    year_field,
)
from citeverify_core.lookups.http import (
    LookupFailure,
    Outbound,
    decode_json,
    http_error,
    parse_payload,
    text_or_none,
)
from citeverify_core.lookups.outcome import Outcome, Target, work_metadata

if TYPE_CHECKING:
    from citeverify_core.policy.settings import LookupSettings

__all__ = ["PUBMED", "PubMed", "ncbi_rate", "record_from_esummary"]

#: The cache's namespace for E-utilities answers of the reference sources.
PUBMED = "PUBMED"


def ncbi_rate(settings: LookupSettings) -> float:
    """Requests per second NCBI allows: 3 without an API key, 10 with one."""
    return 10.0 if settings.ncbi_api_key else 3.0


def record_from_esummary(entry: Any) -> Record:
    """A Record from one NCBI E-utilities esummary entry (``result[uid]``).

    Never raises: a field of the wrong type (``authors: ["x"]``, a dict ``volume``) is dropped;
    an entry that is not an object gives a record without fields. (Unlike the works of the
    other services, always a Record: the entry was asked for by its PubMed id.)
    """
    entry = as_dict(entry)
    authors = []
    for a in as_list(entry.get("authors")):
        name = text_field(as_dict(a).get("name"))
        if name is None:
            continue
        family, _, initials = name.strip().rpartition(" ")
        authors.append(Author(family or name.strip(), initials if family else ""))
    pubdate = text_field(entry.get("pubdate")) or ""
    doi = next(
        (
            i.get("value")
            for i in map(as_dict, as_list(entry.get("articleids")))
            if i.get("idtype") == "doi"
        ),
        None,
    )
    return Record(
        source="PUBMED",
        title=text_field(entry.get("title")),
        authors=tuple(authors),
        year=year_field(pubdate[:4]),
        venue=text_field(entry.get("fulljournalname")) or text_field(entry.get("source")),
        doi=clean_doi(doi),
        volume=entry.get("volume"),
        issue=entry.get("issue"),
        pages=entry.get("pages"),
    )


def _is_pmid(value: Any) -> bool:
    return isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 12


class PubMed:
    """NCBI E-utilities, through the core's :class:`Outbound`, at NCBI's rate."""

    def __init__(self, http: Outbound) -> None:
        self.http = http

    def _common(self) -> tuple[str, dict[str, str]]:
        s = self.http.settings
        params = {"db": "pubmed", "retmode": "json", "tool": s.ncbi_tool}
        if s.mailto:
            params["email"] = s.mailto
        if s.ncbi_api_key:
            params["api_key"] = s.ncbi_api_key
        return s.ncbi_base_url.rstrip("/"), params

    async def lookup(self, pmids: list[str]) -> list[Outcome]:
        """What each PMID is, in one esummary call (NCBI's rate limit is per request).

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        s = self.http.settings
        base, params = self._common()
        start = time.perf_counter()
        response, body = await self.http.request(
            "GET",
            f"{base}/esummary.fcgi",
            params={**params, "id": ",".join(pmids)},
            headers={"User-Agent": s.user_agent},
            rate=ncbi_rate(s),
        )
        elapsed = (time.perf_counter() - start) * 1000
        targets = [Target("pubmed", p) for p in pmids]
        if response.status_code != 200:
            err = http_error(response)
            return [Outcome.of(t, False, response.status_code, elapsed, err) for t in targets]
        data = decode_json(body)
        if not isinstance(data, dict):
            msg = "unexpected E-utilities response (not an object)"
            raise LookupFailure(msg)
        result = data.get("result")
        outcomes = []
        for t in targets:
            entry = result.get(t.key) if isinstance(result, dict) else None
            if isinstance(entry, dict) and "error" not in entry and entry.get("uid") == t.key:
                meta = parse_payload(_metadata, entry, "E-utilities")
                outcomes.append(Outcome.of(t, True, 200, elapsed, None, meta, True))
            else:
                why = text_or_none(
                    entry.get("error") if isinstance(entry, dict) else data.get("error")
                )
                error = f"PMID not found at PubMed ({why})" if why else "PMID not found at PubMed"
                outcomes.append(Outcome.of(t, False, 200, elapsed, error, definitive=True))
        return outcomes

    async def search(self, title: str, limit: int) -> list[Record]:
        """Works whose title matches: esearch on ``title[Title]``, then esummary (cached).

        Raises:
            One of :data:`~citeverify_core.lookups.http.LOOKUP_ERRORS`.
        """
        base, common = self._common()
        rate = ncbi_rate(self.http.settings)
        params = {**common, "term": f"{title}[Title]", "retmax": str(limit)}
        search = await self.http.get_cached_json(PUBMED, f"{base}/esearch.fcgi", params, rate=rate)
        # A hostile esearch could list a million ids, or text, for the esummary query.
        listed = as_list(as_dict(as_dict(search).get("esearchresult")).get("idlist"))
        ids = [i for i in listed if _is_pmid(i)][:limit]
        if not ids:
            return []
        summary = await self.http.get_cached_json(
            PUBMED, f"{base}/esummary.fcgi", {**common, "id": ",".join(ids)}, rate=rate
        )
        result = as_dict(summary).get("result")
        records = []
        for uid in ids:
            entry = result.get(uid) if isinstance(result, dict) else None
            if isinstance(entry, dict) and "error" not in entry:
                records.append(parse_payload(record_from_esummary, entry, "E-utilities"))
        return records


def _metadata(entry: dict[str, Any]) -> dict[str, Any]:
    return work_metadata(record_from_esummary(entry))
