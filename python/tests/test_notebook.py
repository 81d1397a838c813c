"""A Profile in a notebook: `_repr_html_` is a fragment (styles scoped under `.regionprof`, one id of its
own, a script that reaches only its own elements), so two profiles and a pandas table share a page
without touching each other: checked on the fragments' text, in headless Chromium on a page holding
them, and on a notebook executed by `jupyter nbconvert --execute --to html` (its export opened in
Chromium, a screenshot left in REGIONPROF_BUILD_DIR/python-notebook/notebook.png)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import regionprof
from command_support import SOURCE_DIR, clean_environment


def alpha_beta() -> None:
    with regionprof.region("alpha"):
        sum(range(4000))
    with regionprof.region("beta"):
        sum(range(1000))


def gamma_delta() -> None:
    with regionprof.region("gamma"):
        sum(range(1000))
    with regionprof.region("delta"):
        sum(range(4000))


@pytest.fixture(scope="module")
def two() -> List[regionprof.Profile]:
    return [regionprof.profile(alpha_beta, warmup_runs=0, measured_runs=3),
            regionprof.profile(gamma_delta, warmup_runs=0, measured_runs=3)]


def root_id(fragment: str) -> str:
    match = re.match(r'<div class="regionprof" id="(regionprof-[0-9a-f]{32})">', fragment)
    assert match, fragment[:200]
    return match.group(1)


def selectors(fragment: str) -> List[str]:
    styles = re.findall(r"<style>(.*?)</style>", fragment, re.S)
    assert len(styles) == 1
    return [s.strip() for rule in re.findall(r"([^{}]+)\{", styles[0]) for s in rule.split(",")]


def test_the_notebook_view_is_a_fragment_scoped_to_one_root(two: List[regionprof.Profile]) -> None:
    a, b = two
    first, again, other = a._repr_html_(), a._repr_html_(), b._repr_html_()
    ids = [root_id(f) for f in (first, again, other)]
    assert len(set(ids)) == 3, "every output its own id, also two of one profile"
    for fragment, id_ in zip((first, again, other), ids):
        assert fragment.rstrip().endswith("</div>")
        for page_only in ("<!DOCTYPE", "<html", "<head", "<body", "<meta"):
            assert page_only not in fragment
        assert re.findall(r'\bid="([^"]*)"', fragment) == [id_]
        assert re.findall(r"document\.[A-Za-z]+\([^)]*\)", fragment) == [f"document.getElementById('{id_}')"]
        assert "window." not in fragment and "document.body" not in fragment
        found = selectors(fragment)
        assert len(found) >= 10
        assert [s for s in found if not (s == ".regionprof" or s.startswith(".regionprof "))] == []
    # The same report but for the id; the page is the same report under the fixed id.
    assert first.replace(ids[0], ids[1]) == again
    assert a._native.html_fragment("regionprof-report") in a.html()
    assert "region:alpha" in first and "region:gamma" in other


CHROMIUM_CHECK = """<script>
(function () {
  var out = {};
  var roots = Array.prototype.slice.call(document.querySelectorAll('div.regionprof'));
  function summary(root) { return root.querySelector('table.sortable'); }
  function order(root) {
    return Array.prototype.map.call(summary(root).tBodies[0].rows, function (r) { return r.cells[0].textContent; });
  }
  function sorted(root) { return summary(root).tHead.rows[0].cells[0].getAttribute('data-sorted'); }
  function snapshot() { return {orders: roots.map(order), sorted: roots.map(sorted)}; }
  function pandas_styles() {
    return Array.prototype.map.call(document.querySelectorAll('table.dataframe, table.dataframe *'), function (e) {
      var c = getComputedStyle(e);
      return [e.tagName, c.borderTopWidth, c.borderTopStyle, c.borderTopColor, c.borderCollapse, c.backgroundColor,
              c.paddingLeft, c.marginTop, c.fontSize, c.fontFamily, c.color, c.cursor, c.textAlign].join('|');
    });
  }
  out.ids = roots.map(function (r) { return r.id; });
  out.status = roots.map(function (r) { return r.querySelector('p.rp-status').textContent; });
  out.rendered = roots.map(function (r) { return r.getAttribute('data-rendered'); });
  out.before = snapshot();
  summary(roots[0]).tHead.rows[0].cells[0].click();
  out.after_first_click = snapshot();
  summary(roots[1]).tHead.rows[0].cells[0].click();
  summary(roots[1]).tHead.rows[0].cells[0].click();
  out.after_second_two = snapshot();
  var with_regionprof = pandas_styles();
  roots.forEach(function (r) { r.remove(); });
  out.pandas_elements = with_regionprof.length;
  out.pandas_unchanged = JSON.stringify(with_regionprof) === JSON.stringify(pandas_styles());
  var pre = document.createElement('pre');
  pre.id = 'rp-test-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium in PATH (apt-get install chromium): the page was not opened")


def chromium_args(profile_dir: Path) -> List[str]:
    return [chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
            f"--user-data-dir={profile_dir}"]


def run_in_chromium(page: str, work: Path) -> Dict[str, Any]:
    """Opens `page` with CHROMIUM_CHECK appended to its body; returns what the check recorded."""
    path = work / "checked.html"
    path.write_text(page.replace("</body>", CHROMIUM_CHECK + "</body>") if "</body>" in page else page + CHROMIUM_CHECK)
    dom = subprocess.run(chromium_args(work / "chromium-profile") + ["--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    result = re.search(r'<pre id="rp-test-result">(.*?)</pre>', dom.stdout, re.S)
    assert result, dom.stdout[-2000:]
    return json.loads(html.unescape(result.group(1)))


def check_two_profiles_and_pandas(seen: Dict[str, Any]) -> None:
    assert len(seen["ids"]) == 2 and len(set(seen["ids"])) == 2
    assert seen["status"] == ["regionprof-render-ok"] * 2
    assert all(int(r) >= 2 for r in seen["rendered"])
    a_before, b_before = seen["before"]["orders"]
    assert sorted(a_before) == ["region:alpha", "region:beta"]
    assert sorted(b_before) == ["region:delta", "region:gamma"]
    assert seen["before"]["sorted"] == [None, None]
    # One click on A's header sorts A once (descending), and B not at all.
    assert seen["after_first_click"] == {"orders": [["region:beta", "region:alpha"], b_before],
                                         "sorted": ["desc", None]}
    # Two clicks on B's header: descending, then ascending; A as it was.
    assert seen["after_second_two"] == {"orders": [["region:beta", "region:alpha"], ["region:delta", "region:gamma"]],
                                        "sorted": ["desc", "asc"]}
    assert seen["pandas_elements"] >= 10
    assert seen["pandas_unchanged"], "the pandas table looks the same without the two profiles"


def test_two_profiles_and_a_pandas_table_in_one_page(two: List[regionprof.Profile], tmp_path: Path) -> None:
    import pandas

    table = pandas.DataFrame({"x": [1, 2, 3], "y": ["p", "q", "r"]})._repr_html_()
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>\n" + two[0]._repr_html_() + table +
            two[1]._repr_html_() + "</body></html>\n")
    check_two_profiles_and_pandas(run_in_chromium(page, tmp_path))


NOTEBOOK_CELLS = [
    "import sys\nimport regionprof\nimport pandas\nprint(sys.prefix)",
    "def alpha_beta():\n    with regionprof.region('alpha'):\n        sum(range(4000))\n"
    "    with regionprof.region('beta'):\n        sum(range(1000))\n\n"
    "def gamma_delta():\n    with regionprof.region('gamma'):\n        sum(range(1000))\n"
    "    with regionprof.region('delta'):\n        sum(range(4000))",
    "a = regionprof.profile(alpha_beta, warmup_runs=0, measured_runs=3)\na",
    "pandas.DataFrame({'x': [1, 2, 3], 'y': ['p', 'q', 'r']})",
    "b = regionprof.profile(gamma_delta, warmup_runs=0, measured_runs=3)\nb",
]


def test_a_notebook_executed_by_nbconvert(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source = tmp_path / "two_profiles.ipynb"
    nbformat.write(notebook, str(source))
    env = clean_environment({"JUPYTER_PLATFORM_DIRS": "1", "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")})
    # Executed once (the kernel: this environment's Python), then exported as it is.
    for args in (["--execute", "--to", "notebook", "--ExecutePreprocessor.kernel_name=python3",
                  "--ExecutePreprocessor.timeout=120", "--output", "executed.ipynb", str(source)],
                 ["--to", "html", "--output", "executed.html", str(tmp_path / "executed.ipynb")]):
        result = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", *args], capture_output=True, text=True,
                                timeout=300, env=env, cwd=tmp_path)
        assert result.returncode == 0, result.stderr[-3000:]
    executed = nbformat.read(str(tmp_path / "executed.ipynb"), as_version=4)
    outputs = [cell.outputs for cell in executed.cells]
    assert outputs[0][0]["text"].strip() == sys.prefix
    fragments = [outputs[i][0]["data"]["text/html"] for i in (2, 4)]
    assert len({root_id(f) for f in fragments}) == 2
    assert "region:alpha" in fragments[0] and "region:gamma" in fragments[1]
    assert 'class="dataframe"' in outputs[3][0]["data"]["text/html"]

    export = (tmp_path / "executed.html").read_text()
    assert all(f'id="{root_id(f)}"' in export for f in fragments)  # nbconvert writes the markup anew
    check_two_profiles_and_pandas(run_in_chromium(export, tmp_path))

    shots = Path(os.environ.get("REGIONPROF_BUILD_DIR", SOURCE_DIR / "build")) / "python-notebook"
    shots.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tmp_path / "executed.html", shots / "notebook.html")
    shot = subprocess.run(chromium_args(tmp_path / "chromium-profile") +
                          ["--window-size=1100,5200", "--hide-scrollbars", f"--screenshot={shots / 'notebook.png'}",
                           (shots / "notebook.html").as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0 and (shots / "notebook.png").stat().st_size > 0, shot.stderr[-2000:]
