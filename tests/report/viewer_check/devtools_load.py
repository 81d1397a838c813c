#!/usr/bin/env python3
"""Loads a Chrome trace into Chromium's DevTools trace engine (the Performance panel's importer), headless.

A manual check, not part of ctest: it needs Debian `chromium` and PyPI `websocket-client`, which the build
does not install. chrome://tracing (Catapult) is no longer served by current Chromium, and Perfetto's UI
and trace_processor need the network, so this is the importer that can run offline.

    python3 tests/report/viewer_check/devtools_load.py trace.json [--expect-slices N]

Prints, per track (pid, tid), its name and the number of slices DevTools built, and exits 1 when the
engine throws or (with --expect-slices) the slice total differs. DevTools binds a flow event only to a
slice with the same `cat`, so Kineto's `ac2g` flows (ours and torch.profiler's alike) show 0 flows here;
Perfetto binds them by enclosing slice.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # PyPI websocket-client

PARSE_JS = """
(async () => {
  const T = await import('./models/trace/trace.js');
  const file = JSON.parse(%s);
  const events = Array.isArray(file) ? file : file.traceEvents;
  const model = T.TraceModel.Model.createWithAllHandlers();
  await model.parse(events, {metadata: {}, isFreshRecording: false});
  const parsed = model.parsedTrace(0);
  const data = parsed.data || parsed;
  const tracks = [];
  for (const [pid, process] of data.Renderer.processes) {
    for (const [tid, thread] of process.threads) {
      tracks.push({pid, tid, name: thread.name, slices: thread.entries.length});
    }
  }
  return JSON.stringify({tracks, flows: data.Flows.flows.length, bounds: data.Meta.traceBounds});
})()
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--expect-slices", type=int)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--port", type=int, default=9339)
    args = parser.parse_args()
    with open(args.trace, encoding="utf-8") as f:
        text = f.read()

    profile = tempfile.mkdtemp(prefix="regionprof_devtools_")
    browser = subprocess.Popen(
        [args.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", f"--remote-debugging-port={args.port}",
         f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{args.port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/json/version", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        tab = json.load(urllib.request.urlopen(urllib.request.Request(base + "/json/new?about:blank", method="PUT")))
        ws = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=300, suppress_origin=True)
        ids = iter(range(1, 1 << 30))

        def call(method, **params):
            request_id = next(ids)
            ws.send(json.dumps({"id": request_id, "method": method, "params": params}))
            while True:
                message = json.loads(ws.recv())
                if message.get("id") == request_id:
                    return message

        call("Page.navigate", url="devtools://devtools/bundled/devtools_app.html")
        time.sleep(5)
        reply = call("Runtime.evaluate", expression=PARSE_JS % json.dumps(text), awaitPromise=True,
                     returnByValue=True)
        result = reply.get("result", {})
        if "exceptionDetails" in result or result.get("result", {}).get("type") != "string":
            print("DevTools failed to load the trace:", json.dumps(reply)[:2000])
            return 1
        summary = json.loads(result["result"]["value"])
    finally:
        browser.terminate()
        browser.wait()
        shutil.rmtree(profile, ignore_errors=True)

    total = 0
    for track in summary["tracks"]:
        total += track["slices"]
        print(f"pid {track['pid']} tid {track['tid']} {track['name']!r}: {track['slices']} slices")
    print(f"{total} slices on {len(summary['tracks'])} tracks, {summary['flows']} flows bound by DevTools, "
          f"bounds {summary['bounds']}")
    if args.expect_slices is not None and total != args.expect_slices:
        print(f"expected {args.expect_slices} slices")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
