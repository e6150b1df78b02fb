"""The review page of ``citeverify serve`` in a real browser (Debian's Chromium, Playwright).

The service runs on a loopback socket with the reference workers, a decision log that keeps
content, and two policy packs; Chromium drives the page as a reviewer would. No browser is ever
downloaded: without /usr/bin/chromium the browser tests skip (and fail under ``CI=true``).

``CITEVERIFY_SCREENSHOTS=docs/img`` also writes the three views' screenshots there (the ones in
docs/web.md); every run writes them under the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from citeverify_core import CitationVerifier
from citeverify_core.service.gateway import FixtureUpstream, GatewayConfig
from citeverify_core.service.policies import PolicyPacks
from citeverify_core.service.web import CONTENT_SECURITY_POLICY
from tests.support.service import FAKE, KUHN, LECUN_WRONG_YEAR, Service, bearer, build_index

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
UNAVAILABLE = "Chromium not available at /usr/bin/chromium (apt-get install chromium)"
SEED_POLICY = Path(__file__).parents[1] / "data" / "seed-policy-config.yaml"
# A second pack: unsupported claims are redacted instead of blocking; no lookups.
LENIENT = {
    "pack": {"name": "lenient", "version": "1.0.0", "enabled": True},
    "policies": {"chain": ["citation-verifier"]},
    "policy": {
        "citation-verifier": {
            "require_sources": False,
            "extract_patterns": ["quote"],
            "output_action": {"unverified_action": "redact"},
            "extensions": {"lookups": {"enabled": False}},
        }
    },
}
MUSEUM = "The museum opens at nine. Entry is free on Sundays."
SUPPORTED = "The museum opens at nine."
UNSUPPORTED = "Dragons guard the entrance at night."
WIDTH, HEIGHT = 1280, 900
TIMEOUT_MS = 30_000


# --- the service ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("web")
    packs = folder / "packs"
    packs.mkdir()
    shutil.copy(SEED_POLICY, packs / "default.yaml")
    (packs / "lenient.json").write_text(json.dumps(LENIENT))
    answers = folder / "answers.json"
    answers.write_text(json.dumps({"answer": f'"{SUPPORTED}"'}))
    gateway = GatewayConfig(FixtureUpstream(answers), CitationVerifier(SEED_POLICY))
    with Service(
        folder / "jobs.sqlite",
        build_index(folder),
        gateway=gateway,
        policies=PolicyPacks(folder=packs),
        log_content=True,
        unauthenticated_per_minute=1000,  # the wrong-key tests share 127.0.0.1
        poll_interval=0.05,
    ) as running:
        yield running


# --- the page over plain HTTP: headers, allow-list, caching --------------------------------------


def test_page_and_static_files_have_the_security_headers(service: Service) -> None:
    # create_app includes web_router(): the page is served without anything added here
    with httpx.Client(base_url=service.url, timeout=10) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "default-src 'self'" in CONTENT_SECURITY_POLICY
        assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "no-referrer"
        assert page.headers["cache-control"] == "no-cache"
        assert "<script>" not in page.text  # no inline script
        assert 'src="static/app.js?v=' in page.text

        for name, kind in [("app.js", "text/javascript"), ("app.css", "text/css")]:
            version = page.text.split(f"static/{name}?v=")[1].split('"')[0]
            current = client.get(f"/static/{name}", params={"v": version})
            assert current.status_code == 200
            assert current.headers["content-type"].startswith(kind)
            assert current.headers["cache-control"] == "public, max-age=31536000, immutable"
            assert current.headers["x-content-type-options"] == "nosniff"
            assert current.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            unversioned = client.get(f"/static/{name}")
            assert unversioned.headers["cache-control"] == "no-cache"
            again = client.get(
                f"/static/{name}", headers={"If-None-Match": current.headers["etag"]}
            )
            assert again.status_code == 304
            assert again.content == b""
        assert client.head("/").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/static/index.html",
        "/static/../_web.py",
        "/static/%2e%2e%2f_web.py",
        "/static/__init__.py",
        "/static/app.js.map",
        "/static/",
        "/static",
        "/index.html",
    ],
)
def test_only_the_allow_listed_files_are_served(service: Service, path: str) -> None:
    with httpx.Client(base_url=service.url, timeout=10) as client:
        response = client.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_script_never_parses_markup() -> None:
    web = Path(__file__).parents[2] / "core" / "citeverify_core" / "service" / "web"
    script = (web / "app.js").read_text()
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "Function(",
    ]:
        assert sink not in script
    page = (web / "index.html").read_text()
    assert re.findall(r"<script[^>]*>", page) == ['<script src="static/app.js" defer>']
    assert not re.search(r"\son[a-z]+\s*=", page)  # no inline handlers
    assert "style=" not in page and "<style" not in page


def test_the_page_is_not_in_the_api_schema(service: Service) -> None:
    with httpx.Client(base_url=service.url, timeout=10) as client:
        paths = client.get("/openapi.json").json()["paths"]
    assert "/" not in paths
    assert not any(p.startswith("/static") for p in paths)


def test_the_page_needs_no_key_and_holds_no_data(service: Service) -> None:
    with httpx.Client(base_url=service.url, timeout=10) as client:
        key = service.key()
        client.post(
            "/api/check",
            json={"answer": "secret answer 12345", "context_documents": ["x"]},
            headers=bearer(key),
        ).raise_for_status()
        assert "secret answer 12345" not in client.get("/").text
        assert client.get("/api/decisions").status_code == 401


# --- the browser -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(UNAVAILABLE, pytrace=False)
        pytest.skip(UNAVAILABLE)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Page:
    """A fresh browser context on the service's page; console errors are collected."""

    def __init__(self, browser: Any, service: Service, shots: Path) -> None:
        self.service = service
        self.shots = shots
        self.context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=service.url)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.errors: list[str] = []
        # HTTP errors a test provokes (the browser logs each failed fetch): refused keys.
        self.expected = {401, 403}
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("dialog", lambda dialog: self.errors.append(f"dialog: {dialog.message}"))

    def _console(self, message: Any) -> None:
        expected = any(f"status of {status} " in message.text for status in self.expected)
        if message.type == "error" and not expected:
            self.errors.append(message.text)

    def open(self, key: str | None = None) -> Any:
        self.page.goto(self.service.url + "/")
        if key is not None:
            self.page.fill("#key-input", key)
            self.page.click("#key-submit")
            self.page.wait_for_selector("#app", state="visible")
        return self.page

    def shot(self, name: str, *, publish: bool = True) -> None:
        """A full-page screenshot under tmp_path (and $CITEVERIFY_SCREENSHOTS if published)."""
        path = self.shots / f"web-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        if publish and (folder := os.environ.get("CITEVERIFY_SCREENSHOTS")):
            Path(folder).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(folder) / path.name)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def web(browser: Any, service: Service, tmp_path: Path) -> Iterator[Page]:
    page = Page(browser, service, tmp_path)
    try:
        yield page
        assert page.errors == [], page.errors  # no script error, no CSP violation
    finally:
        page.close()


def test_the_page_asks_for_a_key_and_remembers_it_per_tab(web: Page) -> None:
    page = web.open()
    assert page.is_visible("#key-section")
    assert page.is_hidden("#app")
    assert page.get_attribute("#key-input", "type") == "password"
    assert page.locator("label[for=key-input]").inner_text() == "API key"

    key = web.service.key()
    page.fill("#key-input", key)
    page.click("#key-submit")
    page.wait_for_selector("#app", state="visible")
    assert page.is_hidden("#key-section")
    assert key[:12] in page.inner_text("#key-label")
    assert "100 tokens" in page.inner_text("#key-label")
    assert page.evaluate("sessionStorage.getItem('citeverify.apiKey')") == key
    assert page.evaluate("localStorage.getItem('citeverify.apiKey')") is None

    page.reload()  # the same tab: no question
    page.wait_for_selector("#app", state="visible")
    page.click("#forget-key")
    assert page.is_visible("#key-section")
    assert page.evaluate("sessionStorage.getItem('citeverify.apiKey')") is None

    page.fill("#key-input", key)  # remembered on the device: a new tab needs no key
    page.check("#key-remember")
    page.click("#key-submit")
    page.wait_for_selector("#app", state="visible")
    assert page.evaluate("localStorage.getItem('citeverify.apiKey')") == key
    other = web.context.new_page()
    other.goto(web.service.url + "/")
    other.wait_for_selector("#app", state="visible")
    other.click("#forget-key")
    assert other.evaluate("localStorage.getItem('citeverify.apiKey')") is None
    other.close()


def test_a_wrong_key_shows_the_error_and_asks_again(web: Page) -> None:
    page = web.open()
    page.fill("#key-input", "cvk_" + "x" * 43)
    page.click("#key-submit")
    error = page.wait_for_selector("#key-error", state="visible")
    assert "401" in error.inner_text()
    assert "invalid_api_key" in error.inner_text()
    assert page.is_hidden("#app")
    assert page.evaluate("sessionStorage.getItem('citeverify.apiKey')") is None


def test_a_key_revoked_while_the_page_is_open_asks_again(web: Page) -> None:
    key = web.service.key()
    page = web.open(key)
    # The page's own first requests (the balance, the document limits) finish before the key is
    # revoked: on a loaded machine one of them answered 403 first, the page asked for the key
    # before the click, and the hidden tab could not be clicked.
    page.wait_for_load_state("networkidle")
    web.service.store.revoke_key(key[:12])
    page.click("#tab-decisions")
    error = page.wait_for_selector("#key-error", state="visible")
    assert "403" in error.inner_text()
    assert page.is_hidden("#app")


def _wait_for_references(page: Any) -> None:
    expect(page.locator("#refs-status")).to_contain_text("Done", timeout=60_000)


def test_a_reference_list_is_verified_with_live_results(web: Page) -> None:
    page = web.open(web.service.key())
    page.click("#tab-references")
    page.fill("#refs-input", "\n".join([KUHN, LECUN_WRONG_YEAR, "", FAKE, "References"]))
    page.fill("#refs-title", "chapter 2")
    page.click("#refs-submit")
    _wait_for_references(page)

    items = page.locator("#refs-results > li")
    assert items.count() == 3
    statuses = [items.nth(i).locator(".ref-status .badge").inner_text() for i in range(3)]
    assert statuses == ["verified", "verified-with-error", "unverified"]
    assert "Kuhn, T. S. (1962)" in items.nth(0).locator(".corrected").inner_text()
    # the labels, coloured by class: LeCun's year is contradicted
    year = items.nth(1).locator("ul.labels li", has_text="year")
    assert "label-contradiction" in (year.get_attribute("class") or "")
    assert items.nth(0).locator("ul.labels li.label-match").count() >= 3
    # the graph: citation, candidates, comparisons, result
    for i in range(3):
        graph = items.nth(i).locator("svg.graph")
        assert graph.count() == 1
        assert graph.locator("g.node").count() >= 2
        assert graph.locator("g.node-citation").count() == 1
        assert graph.locator("g.node-result").count() == 1
    assert items.nth(0).locator("svg.graph g.node-comparison").count() >= 5
    assert items.nth(0).locator("svg.graph line.edge").count() >= 6
    # a heading of the pasted list is skipped, and said so
    assert "References" in page.inner_text("#refs-skipped")

    items.nth(0).locator("button.copy").click()
    expect(items.nth(0).locator("button.copy")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == items.nth(0).locator(".corrected").inner_text()
    assert "tokens" in page.inner_text("#key-label")
    web.shot("references")


def test_a_retracted_work_is_said_so_with_its_notice(web: Page) -> None:
    # Issue 35: the index keeps notices per DOI; a verified reference to the work shows them.
    from citeverify_core.lookups.bibliographic import Notice

    index = web.service.store.verifier.index
    suresh = "10.1016/0003-2697(85)90071-5"
    with index._lock:
        index.store_notices(
            [(suresh, Notice("retraction", "2021-03-15", "10.1016/retraction.1", "crossref"))]
        )
        index._db.commit()
    try:
        page = web.open(web.service.key())
        page.click("#tab-references")
        page.fill(
            "#refs-input",
            "Suresh, M. R., & Milstein, C. (1985). A direct antigen-binding assay to screen "
            "hybridoma supernatants. Analytical Biochemistry, 151(1), 192-195.\n" + KUHN,
        )
        page.click("#refs-submit")
        _wait_for_references(page)
        items = page.locator("#refs-results > li")
        notice = items.nth(0).locator("p.notice")
        expect(notice).to_have_text(
            "retraction (2021-03-15) notice https://doi.org/10.1016/retraction.1 source: crossref"
        )
        assert "notice-retraction" in (notice.get_attribute("class") or "")
        assert items.nth(1).locator("p.notice").count() == 0  # Kuhn's work has none
    finally:
        with index._lock:
            index._db.execute("DELETE FROM notices WHERE doi = ?", (suresh,))
            index._db.commit()


def test_progress_is_shown_while_jobs_run(web: Page) -> None:
    # A local index answers in milliseconds: the service's answers to the polls are replaced
    # by "active" with a progress step until the test has seen it, then pass through.
    seen = {"polls": 0, "release": False}

    def results(route: Any) -> None:
        if seen["release"]:
            route.continue_()
            return
        seen["polls"] += 1
        ids = json.loads(route.request.post_data or "{}")["jobIds"]
        jobs = [
            {
                "id": i,
                "state": "active",
                "error": None,
                "progress": {"step": "searching", "message": "Querying LOCAL"},
            }
            for i in ids
        ]
        route.fulfill(json={"jobs": jobs})

    page = web.open(web.service.key())
    page.route("**/api/verify-reference/results", results)
    page.click("#tab-references")
    page.fill("#refs-input", KUHN)
    page.click("#refs-submit")
    item = page.locator("#refs-results > li").first
    expect(item.locator(".progress")).to_have_text("searching: Querying LOCAL")
    expect(item.locator(".badge.state-active")).to_have_text("active")
    expect(page.locator("#refs-status")).to_contain_text("Verifying: 0 of 1 done")
    assert seen["polls"] >= 1
    seen["release"] = True
    _wait_for_references(page)
    assert item.locator(".state-completed").inner_text() == "completed"
    assert item.locator(".progress").inner_text() == ""
    assert item.locator(".ref-status .badge").inner_text() == "verified"


def test_more_than_twenty_references_go_in_batches(web: Page) -> None:
    page = web.open(web.service.key(tokens=100))
    page.click("#tab-references")
    page.fill("#refs-input", "\n".join([KUHN] * 23))
    page.click("#refs-submit")
    _wait_for_references(page)
    assert page.locator("#refs-results > li").count() == 23
    assert page.locator("#refs-results .ref-status .badge").count() == 23


def test_a_bib_file_is_uploaded(web: Page, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@comment{exported}\n"
        "@book{kuhn1962,\n  author = {Kuhn, Thomas S.},\n"
        "  title = {The Structure of Scientific Revolutions},\n  year = {1962},\n"
        "  publisher = {University of Chicago Press}\n}\n"
        "@article{doe2020,\n  author = {Doe, Jane},\n"
        "  title = {Quantum sponges of the deep sea},\n  journal = {Journal of Nothing},\n"
        "  year = {2020}\n}\n"
        "@article{long2021,\n  author = {Long, Lee},\n  title = {A paper with a long abstract},\n"
        f"  year = {{2021}},\n  abstract = {{{'words ' * 250}}}\n}}\n"
    )
    page = web.open(web.service.key())
    page.click("#tab-references")
    page.set_input_files("#bib-input", str(bib))
    page.wait_for_selector("#bib-info", state="visible")
    assert "refs.bib" in page.inner_text("#bib-name")
    assert page.is_disabled("#refs-input")
    page.click("#refs-submit")
    _wait_for_references(page)
    items = page.locator("#refs-results > li")
    assert items.count() == 3
    # the abstract is left out by the split endpoint: the entry fits the 1,200 characters
    assert "words words" not in items.nth(2).locator(".ref-raw").inner_text()
    assert "@book{kuhn1962" in items.nth(0).locator(".ref-raw").inner_text()
    assert items.nth(0).locator(".ref-status .badge").inner_text() == "verified"
    assert items.nth(1).locator(".ref-status .badge").inner_text() == "unverified"
    page.click("#bib-clear")
    assert page.is_enabled("#refs-input")


def _check(page: Any, answer: str, documents: list[str], policy: str | None = None) -> None:
    page.click("#tab-answers")
    page.wait_for_selector("#policy-select option", state="attached")
    page.fill("#answer-input", answer)
    page.fill("#documents textarea", "\n---\n".join(documents))
    if policy:
        page.select_option("#policy-select", policy)
    page.click("#check-button")
    expect(page.locator("#check-status")).to_contain_text("logged")


def test_an_answer_is_checked_and_its_claims_marked(web: Page) -> None:
    key = web.service.key()
    page = web.open(key)
    options = page.locator("#policy-select option")
    expect(options).to_have_count(2)
    assert [options.nth(i).get_attribute("value") for i in range(options.count())] == [
        "default",
        "lenient",
    ]
    assert page.input_value("#policy-select") == "default"
    answer = f'{SUPPORTED} {UNSUPPORTED} The guide said "entry is free on Sundays".'
    _check(page, answer, [MUSEUM, "Tickets are sold at the door."])

    assert page.inner_text("#check-summary .verdict-block") == "block"
    supported = page.locator("#check-result .claim.supported[data-claim]")
    unsupported = page.locator("#check-result .claim.unsupported[data-claim]")
    assert supported.first.inner_text() == SUPPORTED
    assert UNSUPPORTED in [unsupported.nth(i).inner_text() for i in range(unsupported.count())]
    title = supported.first.get_attribute("title") or ""
    assert title.startswith("Supported claim 1: groundedness 1.00")
    assert "groundedness 0." in (unsupported.first.get_attribute("title") or "")
    quote = page.locator("#check-result .answer-text .mark.quote-matched")
    assert quote.inner_text() == '"entry is free on Sundays"'
    assert page.locator("#check-result ul.reasons li").count() >= 1
    assert page.locator("#check-result table.claims tbody tr").count() == 3
    # one box with a line of --- held two documents
    decision = page.locator("#check-summary code").nth(1).inner_text()
    with httpx.Client(base_url=web.service.url, timeout=10) as client:
        logged = client.get(f"/api/decisions/{decision}", headers=bearer(key)).json()
    assert logged["content"]["context_documents"] == [MUSEUM, "Tickets are sold at the door."]
    web.shot("answers-block", publish=False)

    # the lenient pack redacts: the redacted text is shown as well
    _check(
        page, f'{SUPPORTED} {UNSUPPORTED} He said "entry is free on Mondays".', [MUSEUM], "lenient"
    )
    assert page.inner_text("#check-summary .action-redact") == "redact"
    assert "[unverified claim removed]" in page.inner_text("#redacted-answer")
    assert page.locator("#check-result .answer-text .mark.quote-altered").count() == 1
    # the original answer is marked, not the redacted one
    assert UNSUPPORTED in page.inner_text("#check-result .claim.unsupported[data-claim]")
    web.shot("answers")


def test_markup_in_data_is_shown_as_text(web: Page) -> None:
    page = web.open(web.service.key())
    payload = '<img src=x onerror="window.__xss=1"> <b>bold</b> [1]'
    document = "<script>window.__xss=2</script><img src=y onerror=window.__xss=3>"
    _check(page, payload, [document])
    result = page.locator("#check-result")
    assert payload in result.locator(".answer-text").inner_text()
    assert result.locator("img, b, script").count() == 0
    assert page.evaluate("window.__xss") is None
    # the same from the log: the document goes back into a textarea, as text
    page.click("#tab-decisions")
    page.wait_for_selector("#decisions-body tr[data-decision]")
    page.locator("#decisions-body tr[data-decision] button").first.click()
    expect(page.locator("#logged-status")).to_contain_text("opened")
    assert page.input_value("#answer-input") == payload
    assert page.input_value("#documents textarea") == document
    assert page.locator("#check-result img, #check-result script").count() == 0
    assert page.evaluate("window.__xss") is None


def test_the_decision_log_lists_checks_and_filters(web: Page) -> None:
    page = web.open(web.service.key())
    _check(page, f"{SUPPORTED} {UNSUPPORTED}", [MUSEUM])
    blocked_id = page.inner_text("#check-summary code >> nth=1")
    _check(page, SUPPORTED, [MUSEUM])
    allowed_id = page.inner_text("#check-summary code >> nth=1")
    _check(page, f"{SUPPORTED} {UNSUPPORTED}", [MUSEUM], "lenient")

    page.click("#tab-decisions")
    page.wait_for_selector(f"#decisions-body tr[data-decision='{blocked_id}']")
    rows = page.locator("#decisions-body tr[data-decision]")
    assert rows.count() == 3
    assert page.inner_text("#page-info") == "1–3 of 3"
    assert rows.first.locator(".action-redact").count() == 1  # newest first
    blocked = page.locator(f"#decisions-body tr[data-decision='{blocked_id}']")
    assert blocked.locator(".verdict-block").inner_text() == "block"
    assert "1 / 2" in blocked.inner_text()  # unsupported / claims

    page.select_option("#filter-verdict", "block")
    expect(page.locator("#page-info")).to_have_text("1–1 of 1")
    assert rows.count() == 1
    assert rows.first.get_attribute("data-decision") == blocked_id

    page.select_option("#filter-verdict", "")
    expect(page.locator("#page-info")).to_have_text("1–3 of 3")
    page.select_option("#filter-policy", "lenient")
    expect(page.locator("#page-info")).to_have_text("1–1 of 1")
    assert rows.first.locator(".action-redact").count() == 1

    page.select_option("#filter-policy", "default")
    expect(page.locator("#page-info")).to_have_text("1–2 of 2")
    page.select_option("#filter-policy", "")
    expect(page.locator("#page-info")).to_have_text("1–3 of 3")

    # counts per day: today's bar holds the three decisions
    bars = page.locator("#daily-chart svg.daily g.day")
    expect(bars.last.locator("title")).to_contain_text(": 3 (")
    assert bars.count() >= 1
    assert page.locator("#daily-chart svg.daily rect.bar").count() >= 3

    # a logged decision opens in the Answers view
    page.locator(f"#decisions-body tr[data-decision='{allowed_id}'] button").click()
    page.wait_for_selector("#view-answers", state="visible")
    expect(page.locator("#logged-status")).to_contain_text("opened")
    assert page.input_value("#answer-input") == SUPPORTED
    assert page.inner_text("#check-summary .verdict-allow") == "allow"
    assert allowed_id in page.inner_text("#check-result .note")
    # The service logs content here, so the decision shows as it was decided, not checked again.
    assert "Shown as it was decided." in page.inner_text("#check-result .note")

    page.click("#tab-decisions")
    page.wait_for_selector("#decisions-body tr[data-decision]")
    web.shot("decisions")


def test_the_logged_decision_picker(web: Page) -> None:
    page = web.open(web.service.key())
    _check(page, SUPPORTED, [MUSEUM])
    page.click("#logged-refresh")
    page.wait_for_selector("#logged-select option[value]:not([value=''])", state="attached")
    page.fill("#answer-input", "")
    page.click("#logged-open")
    expect(page.locator("#logged-status")).to_contain_text("opened")
    assert page.input_value("#answer-input") == SUPPORTED


def test_decisions_are_paginated(web: Page) -> None:
    key = web.service.key()
    with httpx.Client(base_url=web.service.url, timeout=30) as client:
        for i in range(53):
            client.post(
                "/api/check",
                json={"answer": f"{SUPPORTED} {i}", "context_documents": [MUSEUM]},
                headers=bearer(key),
            ).raise_for_status()
    page = web.open(key)
    page.click("#tab-decisions")
    expect(page.locator("#page-info")).to_have_text("1–50 of 53")
    assert page.is_disabled("#page-prev")
    page.click("#page-next")
    expect(page.locator("#page-info")).to_have_text("51–53 of 53")
    assert page.locator("#decisions-body tr[data-decision]").count() == 3
    assert page.is_disabled("#page-next")
    page.click("#page-prev")
    expect(page.locator("#page-info")).to_have_text("1–50 of 53")


def test_the_page_shows_only_its_own_keys_decisions(web: Page) -> None:
    other = web.service.key(name="other")
    with httpx.Client(base_url=web.service.url, timeout=30) as client:
        client.post(
            "/api/check",
            json={"answer": "Another team's answer.", "context_documents": [MUSEUM]},
            headers=bearer(other),
        ).raise_for_status()
    page = web.open(other)  # the other team's reviewer was here before, in this tab
    _check(page, "Another team's second answer.", [MUSEUM])
    page.click("#tab-references")
    page.fill("#refs-input", KUHN)
    page.click("#refs-submit")
    _wait_for_references(page)
    page.click("#forget-key")
    page.fill("#key-input", web.service.key(name="mine"))
    page.click("#key-submit")
    page.wait_for_selector("#app", state="visible")
    assert page.locator("#refs-results > li").count() == 0
    page.click("#tab-answers")
    assert page.inner_text("#check-result") == ""
    assert page.input_value("#answer-input") == ""
    page.click("#tab-decisions")
    expect(page.locator("#page-info")).to_have_text("0–0 of 0")
    assert page.inner_text("#decisions-body") == "No decision matches."
    expect(page.locator("#daily-chart")).to_contain_text("No decision in the last 30 days")
    expect(page.locator("#logged-select option")).to_have_count(1)
    assert "Another team" not in page.content()


def test_a_short_balance_is_explained(web: Page) -> None:
    web.expected.add(402)
    page = web.open(web.service.key(tokens=1))
    page.click("#tab-references")
    page.fill("#refs-input", f"{KUHN}\n{FAKE}")
    page.click("#refs-submit")
    expect(page.locator("#refs-status")).to_contain_text("402")
    assert "insufficient_tokens" in page.inner_text("#refs-status")
    assert page.is_enabled("#refs-submit")
