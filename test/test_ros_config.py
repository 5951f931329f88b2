"""Parameter rules of the node (contact_lcp/ros/config.py); no ROS needed."""

import math
import re

import pytest

from contact_lcp.exceptions import SceneError
from contact_lcp.ros import config
from contact_lcp.ros.config import NodeConfig, check, check_names


def test_every_parameter_has_a_config_field_and_a_valid_default():
    fields = set(NodeConfig.__dataclass_fields__)
    for spec in config.PARAMETERS:
        assert spec.name in fields
        if spec.name != "scene":  # '' = the default scene, resolved against the tree
            assert check(spec.name, spec.default) is None, spec.name
    assert {p.name for p in config.PARAMETERS} == fields


@pytest.mark.parametrize("name, value, words", [
    ("time_step", -1.0, "time_step must be in"),
    ("time_step", 0.5, "time_step must be in"),
    ("time_step", math.nan, "finite"),
    ("time_step", "fast", "must be a number"),
    ("time_step", True, "must be a number"),
    ("publish_rate", 0.0, "publish_rate must be in"),
    ("marker_rate", -1.0, "marker_rate must be in"),
    ("kp", -3.0, "kp must be >= 0"),
    ("command_mode", "banana", "effort, position, velocity"),
    ("paused", "yes", "must be a bool"),
    ("joints", ["a", "a"], "more than once"),
    ("joints", [1, 2], "list of strings"),
    ("scene", "/no/such/scene.yaml", "is not a contact_lcp scene file"),
])
def test_bad_values_are_rejected_with_a_reason(name, value, words):
    reason = check(name, value)
    assert reason is not None and words in reason, reason


@pytest.mark.parametrize("name, value", [
    ("time_step", 0.0), ("time_step", 0.002), ("publish_rate", 100),  # int for a double
    ("real_time_factor", -1.0), ("real_time_factor", 0.0), ("marker_rate", 0.0),
    ("command_mode", "effort"), ("joints", None), ("joints", ["a", "b"]),
    ("wrench_links", []), ("use_sim_time", True),  # not ours: left to rclpy
])
def test_good_values_pass(name, value):
    assert check(name, value) is None


def test_with_values_normalizes_and_gains_map_zero_to_scene():
    cfg = NodeConfig().with_values({"publish_rate": 50, "joints": None, "kp": 0.0, "kd": 2})
    assert cfg.publish_rate == 50.0 and isinstance(cfg.publish_rate, float)
    assert cfg.joints == () and cfg.gains() == (None, 2.0)


def test_check_names_lists_the_valid_ones():
    assert check_names("joints", ["a"], ["a", "b"]) is None
    reason = check_names("joints", ["a", "zz"], ["a", "b"])
    assert "zz" in reason and "a, b" in reason


def test_resolve_scene_relative_to_cwd_then_package_config(tmp_path, monkeypatch):
    scene = tmp_path / "mine.yaml"
    scene.write_text("time_step: 0.001\n")
    monkeypatch.chdir(tmp_path)
    assert config.resolve_scene("mine.yaml") == str(scene.resolve())
    with pytest.raises(SceneError, match="'other.yaml' is not a contact_lcp scene file"):
        config.resolve_scene("other.yaml")


def test_the_params_file_and_docs_list_every_parameter():
    """config/contact_lcp.params.yaml sets every scalar parameter (lists, which ROS
    cannot type empty, are commented out) and the docs' parameter table (generated from
    PARAMETERS into docs/ros.md) describes every one."""
    from pathlib import Path

    from contact_lcp.sim.scene_file import parse_yaml

    root = Path(__file__).resolve().parents[1]
    params = parse_yaml((root / "config" / "contact_lcp.params.yaml").read_text())
    values = params["contact_lcp"]["ros__parameters"]
    scalar = {p.name for p in config.PARAMETERS if p.kind is not list}
    assert set(values) == scalar
    for name, value in values.items():
        assert config.check(name, value) is None, name
    import sys

    sys.path.insert(0, str(root / "scripts"))
    from docs_tables import node_parameters_markdown

    page = (root / "docs" / "ros.md").read_text()
    assert "<!-- gen: node_parameters -->" in page  # where the table is generated
    table = node_parameters_markdown()
    missing = [p.name for p in config.PARAMETERS
               if not re.search(rf"^\| `{p.name}` \|[^\n]*\| \S[^|\n]* \|$", table, re.M)]
    assert not missing, f"docs/ros.md's parameter table does not describe {missing}"
