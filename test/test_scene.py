"""Scene files: every key checked, errors name the key, what was expected and what came."""

import pytest

from contact_lcp.exceptions import SceneError
from contact_lcp.sim import load_scene, scene_from_dict

BOX = {"name": "b", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 1.0,
       "pose": [0, 0, 0.05, 0, 0, 0, 1]}


def test_defaults_and_body():
    s = scene_from_dict({"bodies": [BOX]})
    assert s.time_step == 1e-3 and s.contact.friction_directions == 8
    assert s.solver.method == "robust" and s.solver.two_step
    assert s.bodies[0].size == (0.2, 0.2, 0.1)
    # Anitescu-Hart activation: 1 mm by default (collision looks ahead by speed * h).
    assert s.contact.activation(1e-3) == pytest.approx(1e-3)
    # Push-out capped at the speed half a gravity gives in one step.
    assert s.contact.correction_speed(1e-3, (0, 0, -9.81)) == pytest.approx(0.5 * 9.81e-3)


def test_null_turns_a_limit_off():
    # The documented None of two settings, written as YAML's null (it used to give the
    # default: max_points_per_pair 8 instead of no limit).
    s = scene_from_dict({"bodies": [BOX], "contact": {"max_points_per_pair": None,
                                                      "projection_depth": None}})
    assert s.contact.max_points_per_pair is None and s.contact.projection_depth is None
    d = scene_from_dict({"bodies": [BOX]}).contact
    assert d.max_points_per_pair == 8 and d.projection_depth == pytest.approx(1e-3)


@pytest.mark.parametrize("data, words", [
    ({"bodies": [BOX], "tim_step": 0.001}, ["tim_step", "time_step"]),
    ({"bodies": [dict(BOX, colour="red")]}, ["bodies[0]", "colour"]),
    ({"bodies": [dict(BOX, shape="cone")]}, ["shape", "cone", "box"]),
    ({"bodies": [dict(BOX, size=[1, 2])]}, ["size", "3 finite numbers"]),
    ({"bodies": [dict(BOX, mass=-1)]}, ["mass", "> 0", "-1"]),
    ({"bodies": [BOX], "time_step": "fast"}, ["time_step", "finite number", "fast"]),
    ({"bodies": [BOX], "solver": {"method": "simplex"}}, ["solver.method", "robust", "simplex"]),
    ({"bodies": [BOX], "contact": {"stabilization": 2}}, ["stabilization", "[0, 1]"]),
    ({"bodies": [dict(BOX, pose=[0, 0, float("nan"), 0, 0, 0, 1])]}, ["pose"]),
    ({"robots": [{"name": "r"}]}, ["robots[0]", "urdf"]),
])
def test_bad_values_are_named(data, words):
    with pytest.raises(SceneError) as e:
        scene_from_dict(data)
    for w in words:
        assert w in str(e.value)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(SceneError, match="not found"):
        load_scene(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("bodies: [unclosed\n")
    with pytest.raises(SceneError, match="not valid YAML"):
        load_scene(bad)
    lst = tmp_path / "list.yaml"
    lst.write_text("- 1\n- 2\n")
    with pytest.raises(SceneError, match="mapping"):
        load_scene(lst)


def test_relative_paths_resolve_against_the_scene_file(tmp_path):
    (tmp_path / "scenes").mkdir()
    f = tmp_path / "scenes" / "s.yaml"
    f.write_text("robots:\n  - name: r\n    urdf: ../robot.urdf\n    package_dirs: [..]\n")
    s = load_scene(f)
    assert s.robots[0].robot.urdf == str((tmp_path / "robot.urdf").resolve())
    assert s.robots[0].robot.package_dirs == (str(tmp_path.resolve()),)
