"""Wide tables on the docs site: at 1400 px no verdict hides in a table's scroll box, and a table that scrolls keeps
its first column in view. Read from the stylesheet and the pages' Markdown, and (where Chromium is installed) measured
in a headless browser on a site built with the docs' theme, stylesheet and Markdown extensions from a report made
here and the results pages."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.report_markdown import VERDICT_COLUMNS, late_verdicts
from helpers.report_runs import REPS, curve, write_run

from td3x.analysis import Settings, build_report, write_report

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
STYLESHEET = DOCS / "stylesheets" / "extra.css"
RESULTS_PAGES = sorted((DOCS / "results").glob("**/index.md"))
WIDTH, HEIGHT = 1400, 1000  # a laptop's browser window
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PEER_ROW = "SB3 TD3"  # the published reports' peer row (td3x-report --peer)
# run in the page once the theme has wrapped its tables in scroll boxes: per table, the box's left and right edges,
# its scroll and client widths, each header's text and right edge, and the left and right edges of each line's first
# cell once the box is scrolled to its end
MEASURE = """
window.addEventListener("load", () => setTimeout(() => {
  const edges = (element) => { const r = element.getBoundingClientRect(); return [r.left, r.right]; };
  const found = [...document.querySelectorAll("article table")].map((table) => {
    const box = table.closest(".md-typeset__scrollwrap") || table.parentElement;
    const headers = [...table.querySelectorAll("thead th")].map((th) => [th.textContent.trim(), edges(th)[1]]);
    box.scrollLeft = box.scrollWidth;
    const first = [...table.querySelectorAll("tr > :first-child")].map(edges);
    box.scrollLeft = 0;
    return {box: edges(box), widths: [box.scrollWidth, box.clientWidth], headers, first};
  });
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
}, 100));
"""


def css_rules(text: str) -> dict[str, dict[str, str]]:
    """A stylesheet's rules: selector → property → value (comments dropped; a later rule adds to an earlier one)."""
    rules: dict[str, dict[str, str]] = {}
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)):
        declarations = (part.split(":", 1) for part in body.split(";") if ":" in part)
        rules.setdefault(" ".join(selector.split()), {}).update((k.strip(), v.strip()) for k, v in declarations)
    return rules


# ---------------------------------------------------------------------------------------------------- read
def test_a_table_that_scrolls_pins_each_line_s_first_cell() -> None:
    """The theme wraps a wide table in a scroll box; the first cell of every line (its row, key or option) sticks to
    the box's left edge over an opaque background, and the table itself is not a second scroll box inside it (a
    sticky cell sticks to its nearest scrolling ancestor)."""
    rules = css_rules(STYLESHEET.read_text())
    first = rules[".md-typeset table:not([class]) tr > :first-child"]
    assert (first["position"], first["left"]) == ("sticky", "0")
    assert first["background-color"] == "var(--md-default-bg-color)"
    assert rules[".md-typeset__table table:not([class])"]["overflow"] == "visible"


@pytest.mark.results
@pytest.mark.parametrize("page", RESULTS_PAGES, ids=[str(p.relative_to(DOCS)) for p in RESULTS_PAGES])
def test_a_results_page_shows_its_verdicts_before_its_numbers(page: Path) -> None:
    """A table too wide to show whole has its verdicts within its first columns, before the numbers that scroll."""
    assert late_verdicts(page.read_text()) == []


# ---------------------------------------------------------------------------------------------------- measured
def browser() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def wide_report(root: Path) -> str:
    """A report whose fidelity and peer tables are as wide as the published ones: two TD3 variants, AHE and the
    peer row on Hopper-v5 and Walker2d-v5, 3 seeds each."""
    for env_id in ("Hopper-v5", "Walker2d-v5"):
        variants = (("TD3", {"tau": 0.005}), ("TD3", {"tau": 0.01}), ("AHE", {}), (PEER_ROW, {}))
        for k, (row, agent) in enumerate(variants):
            for seed in range(3):
                returns = curve(1000 + 100 * k, seed)
                write_run(root / f"{env_id}/{k}/{seed}", env_id, row, seed, returns, agent={"tau": 0.005, **agent})
    report = build_report([root], Settings(reps=REPS, peer=PEER_ROW))
    return write_report(report, root.parent / "report", "none").markdown


def build_site(docs: Path, site: Path) -> None:
    """The docs' theme, stylesheet and Markdown extensions (mkdocs.yml) over the pages in ``docs``."""
    shutil.copytree(STYLESHEET.parent, docs / "stylesheets")
    ours = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config = {key: ours[key] for key in ("site_name", "theme", "extra_css", "markdown_extensions")}
    (docs.parent / "mkdocs.yml").write_text(yaml.safe_dump({**config, "docs_dir": str(docs)}))
    command = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(docs.parent / "mkdocs.yml"), "-d", str(site)]
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def measure(chromium: str, page: Path) -> list[dict[str, Any]]:
    """Every table of a built page as Chromium lays it out at ``WIDTH`` px (``MEASURE``)."""
    measured = page.with_name("measured.html")
    measured.write_text(page.read_text().replace("</body>", f"<script>{MEASURE}</script></body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    flags += ["--disable-component-update", "--disable-sync", "--no-first-run", f"--window-size={WIDTH},{HEIGHT}"]
    command = [chromium, *flags, "--virtual-time-budget=5000", "--dump-dom", measured.as_uri()]
    dom = subprocess.run(command, check=True, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="measured">([^<]*)</pre>', dom)
    assert found, f"{page}: the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.slow
def test_at_1400_px_every_verdict_shows_and_a_scrolled_table_keeps_its_first_column(tmp_path: Path) -> None:
    chromium = browser()
    if chromium is None:
        pytest.skip(f"no headless browser ({', '.join(BROWSERS)}) on PATH: the stylesheet and Markdown tests stand in")
    docs = tmp_path / "docs"
    (docs / "results" / "report").mkdir(parents=True)
    (docs / "results" / "report" / "report.md").write_text(wide_report(tmp_path / "runs"))
    for page in RESULTS_PAGES:
        (docs / page.relative_to(DOCS)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page, docs / page.relative_to(DOCS))
    build_site(docs, tmp_path / "site")
    scrolled = 0
    for page in sorted((tmp_path / "site" / "results").glob("**/index.html")):
        for table in measure(chromium, page):
            (left, right), (scroll_width, client_width) = table["box"], table["widths"]
            hidden = [name for name, end in table["headers"] if name in VERDICT_COLUMNS and end > right + 1]
            assert hidden == [], f"{page}: {hidden} behind the scroll box's edge"
            if scroll_width > client_width:
                scrolled += 1
                assert all(left - 1 <= start and end <= right + 1 for start, end in table["first"]), page
    assert scrolled, "no table scrolls: the first column's check checked nothing"
