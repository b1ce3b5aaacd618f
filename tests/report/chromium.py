"""A small headless-Chromium driver over the DevTools protocol, for the report's browser test.

Chromium is started with ``--remote-debugging-pipe``: it reads protocol
commands from file descriptor 3 and writes replies and events to descriptor
4, each message JSON terminated by a NUL byte. That needs no websocket client
and no open port, only the standard library. The browser runs with every
background service off and a fresh profile; :meth:`Browser.open` turns the
network off (``Network.emulateNetworkConditions``) before loading a page and
records every request, console message and exception the page produces.

Also a script: ``python tests/report/chromium.py report.html shot.png [WIDTH [HEIGHT]]``
writes a screenshot of the whole page, or of its top HEIGHT pixels (used for
docs/report.png).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--disable-dev-shm-usage",
    "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class ProtocolError(RuntimeError):
    """Chromium answered a command with an error, or did not answer in time."""


@dataclass
class PageLog:
    """What a page did: requests it tried, console messages and uncaught exceptions."""

    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)  # (level, text)
    exceptions: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [text for level, text in self.console if level == "error"] + self.exceptions


class Browser:
    """One headless Chromium with one page, driven over the pipe; use as a context manager."""

    def __init__(self, executable: str, timeout: float = 30.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="pairbench-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_fds():  # in the child: the protocol pipes become fds 3 and 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=wire_fds, start_new_session=True,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._replies: dict[int, queue.Queue] = {}
        self._events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = self._attach()

    # ----------------------------------------------------------------- protocol plumbing

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._events.put(None)
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message and message["id"] in self._replies:
                    self._replies[message["id"]].put(message)
                else:
                    self._events.put(message)

    def send(self, method: str, params: dict | None = None, *, session: str | None = None) -> dict:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            self._replies[ident] = queue.Queue()
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        try:
            reply = self._replies[ident].get(timeout=self.timeout)
        except queue.Empty:
            raise ProtocolError(f"{method}: no reply within {self.timeout} s") from None
        finally:
            self._replies.pop(ident, None)
        if "error" in reply:
            raise ProtocolError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def page(self, method: str, params: dict | None = None) -> dict:
        return self.send(method, params, session=self.session)

    def _attach(self) -> str:
        targets = self.send("Target.getTargets")["targetInfos"]
        pages = [t for t in targets if t["type"] == "page"]
        target = pages[0]["targetId"] if pages else self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        return self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def _drain(self, log: PageLog, until: float, *, stop_on: str | None = None) -> bool:
        """Record events until ``stop_on`` arrives (True) or the deadline passes (False)."""
        while True:
            remaining = until - time.monotonic()
            if remaining <= 0:
                return False
            try:
                event = self._events.get(timeout=min(remaining, 0.1))
            except queue.Empty:
                continue
            if event is None:
                raise ProtocolError("chromium exited")
            self._record(event, log)
            if stop_on and event.get("method") == stop_on:
                return True

    @staticmethod
    def _record(event: dict, log: PageLog) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            log.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            log.console.append((params.get("type", ""), text))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            log.console.append((entry.get("level", ""), entry.get("text", "")))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            log.exceptions.append(details.get("exception", {}).get("description") or details.get("text", ""))

    # ----------------------------------------------------------------- what tests use

    def open(self, path: Path, *, width: int = 1280, height: int = 900, wait_for: str | None = None) -> PageLog:
        """Load ``path`` with the network off; wait for the load event and, if given, a JS condition."""
        log = PageLog()
        while not self._events.empty():  # forget what earlier pages did
            if self._events.get_nowait() is None:
                raise ProtocolError("chromium exited")
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.page(f"{domain}.enable")
        self.page("Network.emulateNetworkConditions", {
            "offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        self.page("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.page("Page.navigate", {"url": Path(path).resolve().as_uri()})
        deadline = time.monotonic() + self.timeout
        if not self._drain(log, deadline, stop_on="Page.loadEventFired"):
            raise ProtocolError(f"{path}: the page did not finish loading in {self.timeout} s")
        while wait_for and not self.evaluate(wait_for):
            if time.monotonic() > deadline:
                raise ProtocolError(f"{path}: {wait_for} never became true")
            self._drain(log, time.monotonic() + 0.05)
        self._drain(log, time.monotonic() + 0.2)  # late console messages
        return log

    def evaluate(self, expression: str):
        result = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise ProtocolError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, height: int | None = None) -> None:
        """A PNG of the page's top ``height`` CSS pixels, or of the whole page."""
        size = self.page("Page.getLayoutMetrics")["cssContentSize"]
        params = {"format": "png", "captureBeyondViewport": True, "clip": {
            "x": 0, "y": 0, "width": size["width"], "scale": 1,
            "height": min(height, size["height"]) if height else size["height"]}}
        data = self.page("Page.captureScreenshot", params)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(ProtocolError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, 9)
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    width = int(argv[2]) if len(argv) > 2 else 1280
    height = int(argv[3]) if len(argv) > 3 else None
    executable = find_chromium()
    if executable is None:
        print("chromium not found; run scripts/install-test-deps.sh", file=sys.stderr)
        return 1
    with Browser(executable) as browser:
        log = browser.open(Path(argv[0]), width=width,
                           wait_for="document.documentElement.getAttribute('data-charts') !== null")
        browser.screenshot(Path(argv[1]), height=height)
    for error in log.errors:
        print(f"page error: {error}", file=sys.stderr)
    return 1 if log.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
