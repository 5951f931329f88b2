"""The ROS page of the docs (docs/ros.md) lists every topic and service the node makes,
with its type.

Its tables are read as patterns (``~`` is the node's name, ``<ns>`` an optional robot
namespace, ``<link>`` one name) and every topic and service the running node has is
looked up in them; the node's own graph (no discovery needed) is the truth.
(Parameters: the page's table is generated from contact_lcp/ros/config.py; test_ros_config.py
and test_docs.py check it.)
"""

import re
from pathlib import Path

import pytest

pytest.importorskip("rclpy")

from ros_harness import Harness  # noqa: E402

ROS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "ros.md"


def docs_table(heading):
    """``[(pattern, type)]`` of the first two columns of the table under ``heading``."""
    text = ROS_PAGE.read_text()
    section = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            names = re.findall(r"`([^`]+)`", cells[0])
            kinds = [k.strip() for k in cells[1].split(",")]
            for i, name in enumerate(names):  # "`a`, `b` | A, B": a is A, b is B
                rows.append((name, kinds[i] if len(kinds) == len(names) else cells[1]))
    return rows


def action_part(actions, name, types):
    """``name`` is a topic or service of a documented action (``<action>/_action/...``,
    of type ``<Action>_...`` or action_msgs')."""
    base, sep, _ = name.partition("/_action/")
    return bool(sep) and any(
        to_regex(pattern).match(base) and any(
            t.startswith(kind + "_") or t.startswith("action_msgs/") for t in types)
        for pattern, kind in actions)


def to_regex(name):
    pattern = re.escape(name).replace("~", "/contact_lcp")
    pattern = pattern.replace(re.escape("<ns>"), "(/[^/]+)?").replace(
        re.escape("<link>"), "[^/]+")
    return re.compile(pattern.replace(r"\.\.\.", ".*") + "$")


def documented(rows, name, types):
    """The documented type of ``name`` (first matching row) agrees with ``types``."""
    for pattern, kind in rows:
        if to_regex(pattern).match(name):
            return kind in types or kind.endswith("/*") and any(
                t.startswith(kind[:-1]) for t in types)
    return False


def test_every_topic_and_service_of_the_node_is_in_the_docs_with_its_type():
    topics, services = docs_table("## Topics"), docs_table("## Services")
    services += docs_table("## simulation_interfaces")
    actions = docs_table("## Actions")
    assert len(topics) >= 12 and len(services) >= 16 and actions  # the tables were found
    h = Harness({"scene": "humanoid_stand.yaml", "real_time_factor": 0.0,
                 "marker_rate": 5.0})
    try:
        node = h.node

        def graph_of_node():
            return (node.get_publisher_names_and_types_by_node("contact_lcp", "/")
                    + node.get_subscriber_names_and_types_by_node("contact_lcp", "/"))

        # the graph fills as discovery reaches the node's endpoints, which on a loaded
        # machine takes a while after the node starts
        expected = ["/joint_states", "/clock", "/odom", "/imu",
                    "/contact_lcp/contact_wrenches/l_foot", "/contact_lcp/commands"]
        h.wait_for(lambda: set(expected) <= {name for name, _ in graph_of_node()}, 20.0,
                   f"the node's topics {expected} in the ROS graph")
        graph = graph_of_node()
        missing = [(name, types) for name, types in graph
                   if name != "/parameter_events" and name != "/rosout"
                   and not documented(topics, name, types)
                   and not action_part(actions, name, types)]
        assert not missing, f"topics missing from docs/ros.md, or of another type: {missing}"
        served = node.get_service_names_and_types_by_node("contact_lcp", "/")
        missing = [(name, types) for name, types in served
                   if not documented(services, name, types)
                   and not action_part(actions, name, types)]
        assert not missing, f"services missing from docs/ros.md, or of another type: {missing}"
    finally:
        h.close()
