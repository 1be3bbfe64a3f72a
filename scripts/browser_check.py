#!/usr/bin/env python3
"""Opens report.html files in headless Chromium and checks that they render cleanly.

For each report: every figure's inline SVG chart has a size on the page, every bitmap
embedded in a chart and every chart file the report links to (PNG, SVG) loads as an image,
the page holds no script, and nothing went wrong while loading: no console error, no
uncaught exception, no failed request. The checks run from outside the page, through the
DevTools protocol over a pipe (--remote-debugging-pipe): report.html itself stays free of
JavaScript.

Python standard library only. Usage:

    browser_check.py [--chromium PATH] [--screenshot DIR] REPORT.html...

Exit status 0 when every report passes, 1 otherwise (the problems are printed), 2 when the
browser cannot be driven.
"""

import argparse
import base64
import fcntl
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 60

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
]

# Runs in the page through Runtime.evaluate (the page itself has no script).
CHECK = r"""
(async () => {
  const problems = [];
  const load = (src) => new Promise((resolve) => {
    const img = new Image();
    img.onload = () => resolve(img.naturalWidth > 0 && img.naturalHeight > 0);
    img.onerror = () => resolve(false);
    img.src = src;
  });
  const figures = [...document.querySelectorAll('figure')];
  for (const f of figures) {
    const svg = f.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : null;
    if (!box || box.width < 100 || box.height < 100) {
      problems.push(`${f.id}: the inline chart has no size`);
    }
  }
  const embedded = [...document.querySelectorAll('svg image')];
  for (const [i, im] of embedded.entries()) {
    const href = im.getAttribute('href') || im.getAttribute('xlink:href');
    if (!(await load(href))) problems.push(`bitmap ${i} embedded in a chart does not load`);
  }
  const files = [...new Set([...document.querySelectorAll('figure a[href]')]
    .map((a) => a.getAttribute('href'))
    .filter((h) => /\.(png|svg)$/.test(h)))];
  for (const href of files) {
    if (!(await load(new URL(href, document.baseURI).href))) {
      problems.push(`${href} does not load`);
    }
  }
  if (document.scripts.length > 0) problems.push('the report holds a script');
  return JSON.stringify({figures: figures.length, embedded: embedded.length,
                         files: files.length, problems});
})()
"""


class Browser:
    """Chromium driven over --remote-debugging-pipe: fd 3 reads commands, fd 4 writes
    answers and events, each a JSON message ended by a NUL byte."""

    def __init__(self, chromium, profile):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # Keep the child's ends away from 3 and 4 until they are moved there.
        child_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def wire():
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        self.proc = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=wire,
        )
        os.close(child_r)
        os.close(child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        return self.next_id

    def read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from the browser")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise ConnectionError("the browser closed the pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=TIMEOUT_S):
        wanted = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method, session, timeout=TIMEOUT_S):
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            message = self.read(deadline)
            if message.get("method") == method and message.get("sessionId") == session:
                return message
            self.events.append(message)

    def close(self):
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)


def errors_in(events, session):
    """Console errors, uncaught exceptions and failed loads among `events`."""
    out = []
    urls = {
        e["params"].get("requestId"): e["params"].get("request", {}).get("url")
        for e in events
        if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session
    }
    for e in events:
        if e.get("sessionId") != session:
            continue
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            out.append(f"console error: {text}")
        elif method == "Runtime.exceptionThrown":
            out.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(f"console error: {p['entry'].get('text')} ({p['entry'].get('url', '')})")
        elif method == "Network.loadingFailed" and not p.get("canceled"):
            out.append(f"failed to load: {urls.get(p.get('requestId'), '?')}: {p.get('errorText')}")
    return out


def check(browser, report, screenshot_dir):
    url = report.resolve().as_uri()
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
        "sessionId"
    ]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.call(f"{domain}.enable", session=session)
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                 session=session)
    browser.call("Page.navigate", {"url": url}, session=session)
    browser.wait_for("Page.loadEventFired", session)
    result = browser.call(
        "Runtime.evaluate",
        {"expression": CHECK, "awaitPromise": True, "returnByValue": True},
        session=session,
    )
    if "exceptionDetails" in result:
        raise RuntimeError(f"the check failed to run: {result['exceptionDetails']}")
    found = json.loads(result["result"]["value"])
    # Events that arrived while the check ran.
    browser.call("Runtime.evaluate", {"expression": "0"}, session=session)
    problems = found["problems"] + errors_in(browser.events, session)
    if screenshot_dir:
        shot = browser.call("Page.captureScreenshot",
                            {"format": "png", "captureBeyondViewport": True}, session=session)
        name = f"{report.parent.name}-{report.stem}.png"
        (screenshot_dir / name).write_bytes(base64.b64decode(shot["data"]))
    browser.call("Target.closeTarget", {"targetId": target})
    return found, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=pathlib.Path)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--screenshot", type=pathlib.Path,
                        help="save a full-page screenshot of each report in this folder")
    args = parser.parse_args()
    if args.screenshot:
        args.screenshot.mkdir(parents=True, exist_ok=True)
    failed = False
    with tempfile.TemporaryDirectory(prefix="herdsim-chromium-") as profile:
        try:
            browser = Browser(args.chromium, profile)
        except OSError as e:
            print(f"browser-check: cannot start {args.chromium}: {e}", file=sys.stderr)
            return 2
        try:
            browser.call("Browser.getVersion")
            for report in args.reports:
                found, problems = check(browser, report, args.screenshot)
                status = "ok" if not problems else "FAILED"
                print(f"{report}: {status} ({found['figures']} charts inline, "
                      f"{found['embedded']} embedded bitmaps, {found['files']} chart files "
                      f"checked)")
                for p in problems:
                    print(f"  {p}")
                failed |= bool(problems)
        except (TimeoutError, ConnectionError, RuntimeError) as e:
            print(f"browser-check: {e}", file=sys.stderr)
            return 2
        finally:
            browser.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
