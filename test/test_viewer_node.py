"""The node's 3-D page (parameter ``viewer_port``): served while the node steps, seen in
headless Chromium; a start-up-only parameter that a running node refuses to change."""

import re
import socket
import time

import pytest

from contact_lcp.viewer.headless import Chromium, find_chromium

rclpy = pytest.importorskip("rclpy")

from ros_harness import Harness  # noqa: E402
from test_viewer_browser import MIN_ROBOT_PIXELS, robot_pixels  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium executable: install "
                    "Debian's chromium (scripts/bootstrap.sh does as root)")
def test_the_node_serves_its_world_to_the_browser():
    port = free_port()
    h = Harness({"scene": "humanoid_stand.yaml", "real_time_factor": 1.0, "marker_rate": 0.0,
                 "viewer_port": port})
    try:
        with Chromium() as browser:
            browser.open(f"http://127.0.0.1:{port}", settle=3.0)
            deadline = time.monotonic() + 120
            times = []
            while time.monotonic() < deadline:
                m = re.search(r"sim time t = (\d+\.\d+) s", browser.text())
                if m:
                    times.append(float(m.group(1)))
                if len(set(times)) >= 3 and robot_pixels(browser.screenshot()) >= MIN_ROBOT_PIXELS:
                    break
                time.sleep(1.0)
            assert len(set(times)) >= 3, f"the page's sim time did not move: {times}"
            assert times == sorted(times)
            text = browser.text()
            assert "solver: method" in text
            assert "Pause" not in text and "Reset" not in text  # the node keeps its clock
            assert robot_pixels(browser.screenshot()) >= MIN_ROBOT_PIXELS
        result = h.set_parameter("viewer_port", port + 1)
        assert not result.successful and "start-up only" in result.reason
        assert not h.errors
    finally:
        h.close()


def test_a_start_up_viewer_port_that_is_not_a_port_is_named():
    with pytest.raises(ValueError, match=r"viewer_port must be an integer port in \[0, 65535\]"):
        Harness({"scene": "humanoid_stand.yaml", "viewer_port": 70000})
