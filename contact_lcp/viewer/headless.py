"""Look at a viewer page in headless Chromium over the DevTools protocol: screenshots, the
page's text, button clicks and every URL the page requested (the offline check).

Used by the viewer's tests, ``benchmarks/bench_viewer.py`` and to make the
documentation's screenshot. Chromium runs with a fresh profile, no network services of its own and
WebGL through SwiftShader (no GPU); the DevTools connection uses the ``websockets``
package viser depends on.
"""

import io
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import numpy as np

#: names the Chromium executable goes by
EXECUTABLES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--hide-scrollbars",
         "--mute-audio", "--remote-debugging-port=0")


def find_chromium():
    """The path of a Chromium executable, or None."""
    for name in EXECUTABLES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """A headless Chromium with one page; a context manager that ends the process.

    Parameters
    ----------
    size : (int, int)
        Window width and height [px].
    timeout : float
        Seconds to wait for Chromium and for each DevTools answer.
    """

    def __init__(self, size=(1280, 800), timeout=60.0):
        from websockets.sync.client import connect

        exe = find_chromium()
        if exe is None:
            raise FileNotFoundError(f"no Chromium found (looked for {', '.join(EXECUTABLES)})")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="contact_lcp_chromium_")
        self.events = []
        self._id = 0
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self.profile}",
             f"--window-size={size[0]},{size[1]}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            port = self._devtools_port()
            deadline = time.monotonic() + timeout
            while True:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as f:
                    pages = [t for t in json.load(f) if t.get("type") == "page"]
                if pages or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            self.ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=None,
                              open_timeout=timeout)
            self.call("Page.enable")
            self.call("Network.enable")
        except BaseException:
            self.close()
            raise

    def _devtools_port(self):
        deadline = time.monotonic() + self.timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            seen.append(line)
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                return int(m.group(1))
        raise RuntimeError("Chromium did not open its DevTools port; it said: "
                           + "".join(seen[-20:]))

    def call(self, method, **params):
        """Send a DevTools command; its ``result`` (events met on the way are kept in
        :attr:`events`)."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def open(self, url, settle=5.0):
        """Load ``url`` and wait ``settle`` seconds for its scripts to draw."""
        self.call("Page.navigate", url=url)
        time.sleep(settle)

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return res.get("result", {}).get("value")

    def text(self):
        """The page's visible text (``document.body.innerText``)."""
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def click(self, label):
        """Click the first button whose text is ``label``; whether there was one."""
        return bool(self.evaluate(
            "(() => { const b = [...document.querySelectorAll('button')].find("
            f"x => x.innerText.trim() === {json.dumps(label)}); if (b) b.click(); "
            "return !!b; })()"))

    def screenshot(self, path=None):
        """The page as an (H, W, 3) uint8 array (and written to ``path`` as PNG)."""
        from PIL import Image
        import base64

        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    def requested_urls(self):
        """Every URL the page asked for since it was opened."""
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def close(self):
        """End Chromium and remove its profile."""
        ws = getattr(self, "ws", None)
        if ws is not None:
            try:
                ws.close()
            except Exception:  # the process may be gone already
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def external(urls, port):
    """The URLs not served by the local viewer on ``port`` (nor inline data/blob)."""
    local = (f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}",
             f"http://localhost:{port}", f"ws://localhost:{port}")
    return [u for u in urls if not u.startswith(local + ("data:", "blob:", "about:"))]
