"""Test-wide settings.

Hypothesis explores new random examples on every local run; under CI (``CI`` set) it is
derandomized, so a CI run is reproducible and fails only for a change in the code.
Examples it once found are pinned with ``@example`` in the tests themselves.
"""

import os
import sys

# One BLAS thread, as contact_lcp sets it for its own processes (before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _collect_closed_ros():
    harness = sys.modules.get("ros_harness")
    if harness is not None:
        harness.collect_closed()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Once a test and its fixtures closed ROS contexts, collect their reference cycles
    here, in the main thread, before the next test's executor threads start (see
    ros_harness.close_ros; not at the closing test's teardown: pytest still holds its
    fixture values then)."""
    _collect_closed_ros()


def pytest_sessionfinish(session):
    _collect_closed_ros()
