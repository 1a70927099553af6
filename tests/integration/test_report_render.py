"""The HTML cost report in a real browser (headless Chromium): it renders, and no two labels overlap.

Chromium comes from Debian (`make test` installs it when missing). The page itself has no scripts;
the test adds one that measures every SVG label with getBoundingClientRect and writes the overlaps
into the DOM, which `--dump-dom` returns. Run this file directly to refresh docs/cost-report.png.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from chalicelib.config import get_settings
from chalicelib.meter.catalog import load_catalog
from chalicelib.meter.charts import daily_chart_data, legend_rows
from chalicelib.meter.render import render_html
from chalicelib.meter.report import build_report

CATALOG = load_catalog(get_settings().meter.price_catalog_path)
TODAY = date(2026, 12, 3)
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

MEASURE = """<script>
addEventListener('load', () => {
  const boxes = [...document.querySelectorAll('svg text')].map(t => ({svg: t.ownerSVGElement.id, text: t.textContent,
      r: t.getBoundingClientRect(), frame: t.ownerSVGElement.getBoundingClientRect()}));
  const overlaps = [], outside = [];
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i];
    if (a.r.left < a.frame.left - 0.5 || a.r.right > a.frame.right + 0.5 || a.r.top < a.frame.top - 0.5 || a.r.bottom > a.frame.bottom + 0.5)
      outside.push(a.text);
    for (let j = i + 1; j < boxes.length; j++) {
      const b = boxes[j];
      if (a.svg !== b.svg) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 0.5 && h > 0.5) overlaps.push([a.text, b.text]);
    }
  }
  const out = document.createElement('pre');
  out.id = 'measured';
  out.textContent = JSON.stringify({labels: boxes.length, overlaps, outside});
  document.body.appendChild(out);
});
</script>"""


def rows_for(models: int, days: int = 14, spend: bool = True) -> list[dict]:
    rows = []
    for offset in range(days):
        day = (TODAY - timedelta(days=offset)).isoformat()
        for index in range(models):
            model = "anthropic.claude-haiku-4-5-20251001-v1:0" if index == 0 else f"vendor.a-rather-long-model-name-number-{index:02d}-v1:0"
            for backend in (("bedrock", "self_hosted") if index == 0 else ("bedrock",)):
                rows.append({"day": day, "tenant": f"tenant-{index % 3}", "backend": backend, "model": model, "calls": 100,
                             "input_tokens": 120_000, "output_tokens": 40_000, "cache_read_tokens": 300_000, "cache_write_tokens": 20_000,
                             "cost_usd": Decimal("1.25") * (index + 1) if spend else Decimal(0), "unpriced_calls": 2 if index == 3 else 0})
    return rows


def report_html(models: int, spend: bool = True) -> str:
    rows = rows_for(models, spend=spend) if models else []
    budgets = ({"tenant-0": Decimal(100), "tenant-1": Decimal(5000)}, {"tenant-0": Decimal(80), "tenant-1": Decimal(10)})
    report = build_report(lambda window: [r for r in rows if r["day"] in window], 14, TODAY, CATALOG, ops_ready=True, budgets=budgets)
    return render_html(report)


def chromium(*args: str) -> subprocess.CompletedProcess:
    assert BROWSER, "headless Chromium is required: `make test` installs the Debian package (apt-get install chromium)"
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage",
                           *args], capture_output=True, text=True, timeout=120)


def measure(page: str) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        path.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
        result = chromium("--virtual-time-budget=5000", "--window-size=1100,1400", "--dump-dom", path.as_uri())
    found = re.search(r'<pre id="measured">(.*?)</pre>', result.stdout, re.S)
    assert found, f"the page did not finish rendering in Chromium: {result.stderr[-500:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def screenshot(page: str, target: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        path.write_text(page, encoding="utf-8")
        result = chromium(f"--screenshot={target}", "--window-size=1100,1500", path.as_uri())
    assert target.exists(), result.stderr[-500:]


@pytest.mark.parametrize(("models", "spend"), [(0, False), (1, False), (1, True), (40, True)], ids=["no-calls", "zero-spend", "one-model", "forty-models"])
def test_report_labels_never_overlap_in_a_browser(models, spend):
    measured = measure(report_html(models, spend))
    assert measured["labels"] > 10
    assert measured["overlaps"] == [], measured["overlaps"][:5]
    assert measured["outside"] == [], measured["outside"][:5]


def test_a_screenshot_renders(tmp_path):
    target = tmp_path / "report.png"
    screenshot(report_html(3), target)
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real picture, not a blank frame


def test_zero_spend_says_so_instead_of_an_empty_chart():
    page = report_html(1, spend=False)
    assert 'id="no-spend"' in page and "No spend recorded" in page


def test_forty_models_fold_into_top_series_and_a_wrapped_legend():
    report_days = {f"2026-12-{d:02d}": {f"bedrock:model-{m:02d}": str(m + 1) for m in range(40)} for d in range(1, 8)}
    data = daily_chart_data(report_days)
    assert len(data["series"]) == 9 and data["series"][-1] == "other (32 series)" and data["series"][0] == "bedrock:model-39"
    assert data["total"] == sum(Decimal(m + 1) for m in range(40)) * 7  # folding loses nothing
    rows = legend_rows(data["series"], 760)
    assert sum(len(row) for row in rows) == 9 and all(len(row) <= 3 for row in rows)


def test_a_split_model_shows_both_backends():
    rows = rows_for(1, days=1)
    report = build_report(lambda window: rows, 1, TODAY, CATALOG, ops_ready=True)
    assert {(r["backend"], r["model"]) for r in report["by_series"]} == {
        ("bedrock", "anthropic.claude-haiku-4-5-20251001-v1:0"), ("self_hosted", "anthropic.claude-haiku-4-5-20251001-v1:0")}


if __name__ == "__main__":  # refresh the README picture
    out = Path(__file__).resolve().parents[2] / "docs" / "cost-report.png"
    out.parent.mkdir(exist_ok=True)
    screenshot(report_html(int(sys.argv[1]) if len(sys.argv) > 1 else 4), out)
    print(out)


def test_the_overlap_check_can_fail():
    page = ('<!doctype html><html><body><svg id="s" width="300" height="60"><text x="10" y="20">first label</text>'
            '<text x="14" y="22">second label</text><text x="280" y="40">falls off the edge</text></svg></body></html>')
    measured = measure(page)
    assert measured["overlaps"] == [["first label", "second label"]] and measured["outside"] == ["falls off the edge"]
