"""The interface packages PyPI has no wheel of, as the install step builds them
(contact_lcp.ros.interfaces): the same types as the ROS 2 kilted releases, and a clear
reason when they cannot be built."""

import importlib
import json
import os
from pathlib import Path

import pytest

from contact_lcp.ros import interfaces

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = json.loads((ROOT / "test" / "data" / "upstream_type_hashes.json").read_text())


def _installed_hashes():
    """{type name: RIHS01 hash} of every type described under share/<package>/."""
    out = {}
    for package in interfaces.PACKAGES:
        # <prefix>/lib/pythonX.Y/site-packages/<package>/__init__.py -> <prefix>/share/<package>
        module = Path(importlib.import_module(package).__file__)
        share = module.parents[4] / "share" / package
        for path in share.glob("*/*.json"):
            for entry in json.loads(path.read_text()).get("type_hashes", []):
                if entry["type_name"].startswith(package + "/"):
                    out[entry["type_name"]] = entry["hash_string"]
    return out


def _built_here():
    missing = [p for p in interfaces.PACKAGES if interfaces.origin(p) is None]
    if missing and not os.environ.get("CI"):
        pytest.skip(f"{', '.join(missing)} not built in this environment "
                    "(python -m contact_lcp.ros.interfaces build)")
    assert not missing, f"the install step did not build {missing}: " + "; ".join(
        str(interfaces.missing(p)) for p in missing)


def test_the_built_types_hash_as_upstream_so_stock_ros_peers_talk_to_us():
    _built_here()
    ours = _installed_hashes()
    expected = UPSTREAM["hashes"]
    assert len(expected) == 150
    wrong = {name: (ours.get(name), h) for name, h in expected.items() if ours.get(name) != h}
    assert not wrong, f"type hashes differ from upstream (ours, theirs): {wrong}"


def test_the_built_packages_import_with_the_fields_the_node_uses():
    _built_here()
    from control_msgs.action import FollowJointTrajectory
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import StepSimulation
    from tf2_msgs.msg import TFMessage

    assert TFMessage().transforms == []
    assert FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED == -5
    assert FollowJointTrajectory.Feedback().index == 0
    assert StepSimulation.Request().steps == 1  # the interface's own default
    assert Result.RESULT_INCORRECT_STATE == 3


def test_a_build_that_cannot_run_says_why_and_the_node_can_tell(tmp_path, monkeypatch):
    monkeypatch.setattr(interfaces, "PACKAGES", {"no_such_msgs": "no_such_msgs.msg"})
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no compiler
    outcome = interfaces.build(prefix=tmp_path, echo=lambda s: None)["no_such_msgs"]
    assert outcome.startswith("skipped: no cmake on PATH")
    assert "no rosidl_default_generators in" in outcome
    why = interfaces.missing("no_such_msgs", prefix=tmp_path)
    assert why.startswith("no_such_msgs is not installed: its build skipped: no cmake")
    assert "python -m contact_lcp.ros.interfaces build" in why


def test_a_package_from_a_ros_installation_is_left_alone(tmp_path, monkeypatch):
    # importable and not built here (no stamp under the prefix): a ROS installation's own
    monkeypatch.setattr(interfaces, "PACKAGES", {"json_pkg": "json"})
    assert interfaces.origin("json_pkg", prefix=tmp_path) == "ros"
    assert interfaces.build(prefix=tmp_path, echo=lambda s: None) == {"json_pkg": "ros"}


def test_changed_definitions_make_a_built_package_stale(tmp_path, monkeypatch):
    monkeypatch.setattr(interfaces, "PACKAGES", {"tf2_msgs": "json"})
    stamp = tmp_path / "share" / "tf2_msgs" / interfaces.STAMP
    stamp.parent.mkdir(parents=True)
    stamp.write_text(interfaces.digest("tf2_msgs"))
    assert interfaces.origin("tf2_msgs", prefix=tmp_path) == "built"
    stamp.write_text("0123456789abcdef")
    assert interfaces.origin("tf2_msgs", prefix=tmp_path) == "stale"
    importlib.invalidate_caches()
