#!/usr/bin/env python3
"""Opens `regionprof report --format html` and `regionprof diff --html` pages in headless Chromium.

The pages come from the shared torch.profiler traces (REGIONPROF_TRACES_DIR, two ranks of one job) when
present, else from tests/data/import/basic.json. Checks that each page's script ran without an error (it writes `regionprof-render-ok` into the
report's p.rp-status, which --dump-dom shows), that Chromium logged no console error, and saves a screenshot of each page:
OUT_DIR/report.png and OUT_DIR/diff.png. A third page, the report of tests/data/import/torch2_memory.json (a real
torch.profiler trace with memory events), must also show its memory over time as a step chart: OUT_DIR/memory.png. Exits 77 (ctest: skipped) when no Chromium is installed
(Debian package `chromium`).

usage: check_pages.py REGIONPROF_CLI DATA_DIR OUT_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args):
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(args), result.returncode, result.stderr))
    return result


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def load(chromium, page, screenshot, must_show=()):
    url = "file://" + os.path.abspath(page)
    common = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
              "--disable-extensions", "--enable-logging=stderr", "--v=0", "--window-size=1200,1800",
              "--user-data-dir=" + os.path.join(os.path.dirname(screenshot), "chromium-profile")]
    dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    if dom.returncode != 0:
        fail("chromium --dump-dom %s exited %d: %s" % (page, dom.returncode, dom.stderr[-2000:]))
    # The status element as the script left it (the script's own text names both markers too).
    status = re.search(r'<p class="rp-status">([^<]*)</p>', dom.stdout)
    if status is None or status.group(1) != "regionprof-render-ok":
        fail("%s: the page's script did not finish without an error (status %r):\n%s"
             % (page, status.group(1) if status else None, dom.stdout[-2000:]))
    if 'data-rendered="' not in dom.stdout:
        fail("%s: the report's div[data-rendered] is missing" % page)
    for text in must_show:
        if text not in dom.stdout:
            fail("%s: %r is not in the rendered page" % (page, text))
    console_errors = [line for line in dom.stderr.splitlines()
                      if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)]
    if console_errors:
        fail("%s: console errors:\n%s" % (page, "\n".join(console_errors)))
    shot = subprocess.run(common + ["--screenshot=" + screenshot, url], capture_output=True, text=True,
                          timeout=120)
    if shot.returncode != 0 or not os.path.exists(screenshot) or os.path.getsize(screenshot) == 0:
        fail("chromium --screenshot %s failed: %s" % (page, shot.stderr[-2000:]))
    print("ok: %s (%d bytes of DOM), screenshot %s" % (page, len(dom.stdout), screenshot))


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    cli, data_dir, out_dir = sys.argv[1:]
    chromium = chromium_binary()
    if chromium is None:
        print("SKIP: no chromium in PATH (apt-get install chromium); the HTML pages were not opened")
        return 77
    os.makedirs(out_dir, exist_ok=True)
    profile = os.path.join(out_dir, "html_check_profile.json")
    candidate = os.path.join(out_dir, "html_check_candidate.json")
    traces = os.environ.get("REGIONPROF_TRACES_DIR", "")
    rank0 = os.path.join(traces, "sampled_rank0_kineto.json.gz")
    rank1 = os.path.join(traces, "sampled_rank1_kineto.json.gz")
    rules = ["--run-marker", r"ProfilerStep#\d+"]
    if traces and os.path.exists(rank0) and os.path.exists(rank1):
        # The shared torch.profiler traces: two ranks of one training job, A = rank 0, B = rank 1.
        rules += ["--region", "## (.*) ##=phase"]
        run([cli, "analyze"] + rules + ["-o", profile, rank0])
        run([cli, "analyze"] + rules + ["-o", candidate, rank1])
    else:
        # tests/data only: B is A with every region's CPU time 1.5 x and the run totals grown to match.
        rules += ["--region", "aten::(.*)=op"]
        run([cli, "analyze"] + rules + ["-o", profile, os.path.join(data_dir, "import", "basic.json")])
        with open(profile) as f:
            doc = json.load(f)
        for r in doc["runs"]:
            added = 0.0
            for region in r["regions"]:
                added += region["cpu_time_us"] * 0.5
                region["cpu_time_us"] *= 1.5
            r["timing"]["cpu_time_us"] += added
            r["timing"]["wall_time_us"] += added
        with open(candidate, "w") as f:
            json.dump(doc, f)
    report = os.path.join(out_dir, "report.html")
    run([cli, "report", "--format", "html", "-o", report, profile])
    diff = os.path.join(out_dir, "diff.html")
    result = subprocess.run([cli, "diff", "--html", diff, profile, candidate], capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        fail("regionprof diff exited %d: %s" % (result.returncode, result.stderr))

    load(chromium, report, os.path.join(out_dir, "report.png"))
    load(chromium, diff, os.path.join(out_dir, "diff.png"))

    memory_profile = os.path.join(out_dir, "html_check_memory.json")
    run([cli, "analyze", "--region", "linear", "-o", memory_profile,
         os.path.join(data_dir, "import", "torch2_memory.json")])
    memory_report = os.path.join(out_dir, "memory.html")
    run([cli, "report", "--format", "html", "-o", memory_report, memory_profile])
    load(chromium, memory_report, os.path.join(out_dir, "memory.png"),
         must_show=("<h2>Memory over time</h2>", '<svg class="chart step"', "region:linear: 0.000 to"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
