"""``citeverify batch --report``: one self-contained HTML file, checked in headless Chromium.

No browser is downloaded: Debian's /usr/bin/chromium through Playwright, as tests/service/test_web.py
(skipped without it, failed under ``CI=true``). ``CITEVERIFY_SCREENSHOTS=docs/img`` also writes
docs/img/batch-report.png.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from citeverify_core.batch import run_batch
from citeverify_core.batch.report import report_html
from tests.batch.test_batch import (  # noqa: F401 - _unix_sockets: an autouse fixture
    _unix_sockets,
    allow_unix_sockets,
    make_records,
    write_jsonl,
)
from tests.service.test_web import (
    browser,  # the module's Chromium (skips, or fails under CI, without it)
)

__all__ = ["browser"]


@pytest.fixture(scope="module")
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    allow_unix_sockets(request.config)
    folder = tmp_path_factory.mktemp("report")
    records: list[Any] = make_records(200, seed=3)
    records[7] = "{not json"
    source = write_jsonl(folder / "answers.jsonl", records)
    summary = run_batch(
        source,
        folder / "out.jsonl",
        {"output_action": {"unverified_action": "block"}},
        workers=1,
        report=folder / "report.html",
    )
    assert (summary.rows, summary.errors) == (199, 1)
    return folder / "report.html"


def test_the_report_is_self_contained(report: Path) -> None:
    page = report.read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched
    assert "@import" not in page and "url(" not in page
    for heading in [
        "Verdicts",
        "Groundedness",
        "Claim confidence",
        "Most frequent unsupported claims",
        "Most frequent unmatched quotes",
        "Citations by status",
        "Slowest records",
        "Unreadable records",
    ]:
        assert heading in page
    assert "Dragons guard the entrance at night." in page  # the most frequent unsupported claim
    assert "no such words" in page  # an unmatched quote


def test_report_html_escapes_what_the_answers_hold(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {
                "id": "<b>x</b>",
                "answer": "<script>alert(1)</script> is here.",
                "context_documents": ["Nothing."],
            }
        ],
    )
    summary = run_batch(source, tmp_path / "out.jsonl", workers=1)
    page = report_html(summary)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>x</b>" not in page


def test_the_charts_render_in_chromium(report: Path, browser: Any, tmp_path: Path) -> None:
    context = browser.new_context(
        viewport={"width": 1200, "height": 900}, java_script_enabled=False
    )
    try:
        page = context.new_page()
        failed: list[str] = []
        page.on("requestfailed", lambda request: failed.append(request.url))
        page.goto(report.as_uri())
        charts = page.locator("svg.chart")
        assert charts.count() == 4  # verdicts, citations, groundedness, claim confidence
        for i in range(charts.count()):
            chart = charts.nth(i)
            box = chart.bounding_box()
            assert box is not None and box["width"] > 200 and box["height"] > 30
            bars = chart.locator("rect.bar")
            assert bars.count() >= 2
            heights = [float(bars.nth(j).get_attribute("height") or 0) for j in range(bars.count())]
            assert max(heights) > 10  # drawn, not empty
        verdicts = charts.nth(0).locator("rect.bar title").all_text_contents()
        assert any(t.startswith("block: ") and t != "block: 0" for t in verdicts)
        assert page.locator("table tr").count() > 5
        assert not failed
        shot = tmp_path / "batch-report.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        if folder := os.environ.get("CITEVERIFY_SCREENSHOTS"):
            page.screenshot(path=str(Path(folder) / "batch-report.png"), full_page=True)
    finally:
        context.close()
