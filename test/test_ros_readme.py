"""The README's ROS section lists every topic and service the node makes, with its type.

Its tables are read as patterns (``~`` is the node's name, ``<ns>`` an optional robot
namespace, ``<link>`` one name) and every topic and service the running node has is
looked up in them; the node's own graph (no discovery needed) is the truth.
(Parameters: test_ros_config.py checks them against the README.)
"""

import re
from pathlib import Path

import pytest

pytest.importorskip("rclpy")

from ros_harness import Harness  # noqa: E402

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_table(heading):
    """``[(pattern, type)]`` of the first two columns of the table under ``heading``."""
    text = README.read_text()
    section = text.split(f"\n{heading}\n", 1)[1].split("\n### ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            for name in re.findall(r"`([^`]+)`", cells[0]):
                rows.append((name, cells[1]))
    return rows


def to_regex(name):
    pattern = re.escape(name).replace("~", "/contact_lcp")
    pattern = pattern.replace(re.escape("<ns>"), "(/[^/]+)?").replace(
        re.escape("<link>"), "[^/]+")
    return re.compile(pattern.replace(r"\.\.\.", ".*") + "$")


def documented(rows, name, types):
    """The README type of ``name`` (first matching row) agrees with ``types``."""
    for pattern, kind in rows:
        if to_regex(pattern).match(name):
            return kind in types or kind.endswith("/*") and any(
                t.startswith(kind[:-1]) for t in types)
    return False


def test_every_topic_and_service_of_the_node_is_in_the_readme_with_its_type():
    topics, services = readme_table("### Topics"), readme_table("### Services")
    assert len(topics) >= 12 and len(services) >= 4  # the tables were found
    h = Harness({"scene": "humanoid_stand.yaml", "real_time_factor": 0.0,
                 "marker_rate": 5.0}, start_client=False)
    try:
        node = h.node
        graph = (node.get_publisher_names_and_types_by_node("contact_lcp", "/")
                 + node.get_subscriber_names_and_types_by_node("contact_lcp", "/"))
        missing = [(name, types) for name, types in graph
                   if name != "/parameter_events" and name != "/rosout"
                   and not documented(topics, name, types)]
        assert not missing, f"topics missing from the README, or of another type: {missing}"
        names = [name for name, _ in graph]
        for expected in ["/joint_states", "/clock", "/odom", "/imu",
                         "/contact_lcp/contact_wrenches/l_foot", "/contact_lcp/commands"]:
            assert expected in names
        served = node.get_service_names_and_types_by_node("contact_lcp", "/")
        missing = [(name, types) for name, types in served
                   if not documented(services, name, types)]
        assert not missing, f"services missing from the README, or of another type: {missing}"
    finally:
        h.close()
