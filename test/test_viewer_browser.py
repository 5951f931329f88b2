"""The viewer in a real browser: ``contact-lcp view`` and ``contact-lcp replay`` served,
loaded in headless Chromium (WebGL through SwiftShader), looked at through the
DevTools protocol (:mod:`contact_lcp.viewer.headless`).

Skips, saying why, where Chromium is missing (``scripts/bootstrap.sh`` installs Debian's
``chromium`` when run as root with apt-get, as CI does).
"""

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from contact_lcp.viewer.headless import Chromium, external, find_chromium

ROOT = Path(__file__).resolve().parents[1]
SQUAT = str(ROOT / "config" / "humanoid_squat.yaml")

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="no Chromium executable (chromium, chromium-browser, google-chrome): install "
           "Debian's chromium (scripts/bootstrap.sh does as root) to run the browser tests")

#: the page's 3-D area: the left of the window (the control panel is on the right)
SCENE_COLUMNS = slice(0, 900)
#: pixels of the humanoid's blue links (URDF material "blue", rgb 0.2 0.35 0.7, shaded)
#: that a drawn robot covers at the page's initial camera at least: the legs and arms
#: alone cover thousands; the ground, grid and sky are grey or white (blue - red < 25)
MIN_ROBOT_PIXELS = 300


def robot_pixels(image):
    """Pixels of the 3-D area whose blue exceeds red by more than 60 (the robot's
    blue links; nothing else in the scene is that blue)."""
    a = image[:, SCENE_COLUMNS].astype(int)
    return int(((a[..., 2] - a[..., 0]) > 60).sum())


def sim_time(text):
    m = re.search(r"sim time t = (\d+\.\d+) s", text)
    assert m, f"no sim time in the page's text: {text[:600]!r}"
    return float(m.group(1))


def serve(args, cwd):
    """Start ``contact-lcp <args> --port 0 --no-browser``; (process, port)."""
    proc = subprocess.Popen([sys.executable, "-m", "contact_lcp.cli", *args, "--port", "0",
                             "--no-browser"], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen = []
    deadline = time.monotonic() + 600  # a cold numba cache compiles for minutes
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        m = re.search(r"viewer at http://127\.0\.0\.1:(\d+)", line)
        if m:
            return proc, int(m.group(1))
    stop(proc)
    raise AssertionError("the viewer did not start: " + "".join(seen[-30:]))


def stop(proc):
    """End a served viewer the way a user does (Ctrl-C), and make sure it ended."""
    import signal

    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    proc.stdout.close()


def settled(browser, timeout=300.0):
    """The page once it drew the robot (its meshes arrive after the page loads) and its
    sim time moved off 0 (the first step loads the compiled kernels: seconds, minutes
    on a cold numba cache)."""
    deadline = time.monotonic() + timeout
    while True:
        shot = browser.screenshot()
        m = re.search(r"sim time t = (\d+\.\d+) s", browser.text())
        ready = robot_pixels(shot) >= MIN_ROBOT_PIXELS and m and float(m.group(1)) > 0
        if ready or time.monotonic() > deadline:
            return shot
        time.sleep(1.0)


def check_page(browser, port, tmp_path, name):
    """The checks of the issue on an open page: offline, the robot drawn, moving while
    playing, still while paused, the sim time in its text."""
    shot = settled(browser)
    assert external(browser.requested_urls(), port) == [], "the page fetched from outside"
    assert robot_pixels(shot) >= MIN_ROBOT_PIXELS, (
        f"{robot_pixels(shot)} robot pixels (a blank canvas?); screenshot in {tmp_path}")
    t0 = sim_time(browser.text())
    a = browser.screenshot(tmp_path / f"{name}_playing_a.png")
    time.sleep(2.0)
    b = browser.screenshot(tmp_path / f"{name}_playing_b.png")
    t1 = sim_time(browser.text())
    assert t1 != t0  # (a replay loops from its end to its start)
    assert (a[:, SCENE_COLUMNS] != b[:, SCENE_COLUMNS]).any(axis=2).sum() > 50
    assert browser.click("Pause")
    time.sleep(1.0)
    a = browser.screenshot(tmp_path / f"{name}_paused_a.png")
    t2 = sim_time(browser.text())
    time.sleep(2.0)
    b = browser.screenshot(tmp_path / f"{name}_paused_b.png")
    assert sim_time(browser.text()) == t2
    assert np.array_equal(a, b), f"{(a != b).any(axis=2).sum()} pixels changed while paused"
    assert "paused" in browser.text()


def test_view_draws_the_squat_live(tmp_path):
    proc, port = serve(["view", SQUAT, "--duration", "1000"], ROOT)
    try:
        with Chromium() as browser:
            browser.open(f"http://127.0.0.1:{port}", settle=3.0)
            check_page(browser, port, tmp_path, "view")
            assert "solver: method robust" in browser.text()
            assert browser.click("Step")
            time.sleep(1.0)
            assert sim_time(browser.text()) > 0
    finally:
        stop(proc)


def test_replay_draws_a_recorded_squat(tmp_path):
    run = tmp_path / "run.npz"
    subprocess.run([sys.executable, "-m", "contact_lcp.cli", "simulate", SQUAT, "--duration",
                    "3", "--output", str(run)], cwd=ROOT, check=True, capture_output=True)
    proc, port = serve(["replay", str(run)], ROOT)
    try:
        with Chromium() as browser:
            browser.open(f"http://127.0.0.1:{port}", settle=3.0)
            check_page(browser, port, tmp_path, "replay")
            assert "Time [s]" in browser.text()  # the slider
            assert "contacts 8" in browser.text()  # the recorded contacts, per frame
    finally:
        stop(proc)
