"""Bad robots and scenes are refused at load with the link, pair or name in the message."""

import math
import re

import pytest

from contact_lcp.dynamics import RobotSpec, World, talos_paths
from contact_lcp.contact.models import model_names
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict

ARM = open("test/data/two_link_arm.urdf").read()


def arm_with(link, mass=None, ixx=None):
    """The test arm with one link's mass or ixx replaced (strings, as in a URDF)."""
    head, body = ARM.split(f'<link name="{link}">', 1)
    inertial, rest = body.split("</inertial>", 1)
    if mass is not None:
        inertial = re.sub(r'<mass value="[^"]*"/>', f'<mass value="{mass}"/>', inertial)
    if ixx is not None:
        inertial = re.sub(r'ixx="[^"]*"', f'ixx="{ixx}"', inertial)
    return head + f'<link name="{link}">' + inertial + "</inertial>" + rest


@pytest.mark.parametrize("mass", ["-1.0", "nan"])
def test_negative_or_nan_mass_is_refused_naming_the_link(mass):
    with pytest.raises(SceneError, match=r"link 'fore' has mass .*expected a finite mass >= 0 \[kg\]"):
        World([RobotSpec("arm", urdf_string=arm_with("fore", mass=mass), floating_base=False)])


def test_massless_moving_link_is_refused_naming_the_link():
    # The tool rides a prismatic joint: with no mass the mass matrix is singular.
    urdf = arm_with("tool", mass="0")
    with pytest.raises(SceneError, match=r"mass matrix is singular: link\(s\) \['tool'\]"):
        World([RobotSpec("arm", urdf_string=urdf, floating_base=False)])


def test_non_finite_inertia_is_refused():
    with pytest.raises(SceneError, match=r"link 'upper' has inertia ixx 'inf'; expected a finite"):
        World([RobotSpec("arm", urdf_string=arm_with("upper", ixx="inf"), floating_base=False)])


def test_unknown_contact_model_lists_the_known_ones():
    with pytest.raises(SceneError, match=r"contact.model: expected one of \[.*'frictionless'.*"
                       r"'pyramid'.*\], got 'coulomb'"):
        scene_from_dict({"contact": {"model": "coulomb"}, "bodies": []})
    known = r", ".join(f"'{m}'" for m in model_names())
    with pytest.raises(SceneError, match=rf"unknown contact model 'coulomb'; known models: "
                       rf"\[{known}\]"):
        Simulator.from_file("config/box_on_plane.yaml", contact_model="coulomb")
    with pytest.raises(SceneError, match=r"unknown option\(s\) \['stiffness'\]"):
        scene_from_dict({"contact": {"model": "pyramid", "options": {"stiffness": 1}}})
    assert scene_from_dict({"contact": {"model": "stewart_trinkle"}}).contact.model == "stewart_trinkle"


def test_deep_initial_penetration_names_the_bodies_and_depth():
    scene = scene_from_dict({"bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1],
                                         "mass": 1.0, "pose": [0, 0, 0.0, 0, 0, 0, 1]}]})
    with pytest.raises(SceneError, match=r"ground-box 50\.0 mm deep"):
        Simulator(scene)


def _talos():
    try:
        return talos_paths()
    except SceneError as e:
        pytest.skip(str(e))


def talos_scene(**robot):
    urdf, srdf, pkg = _talos()
    spec = {"name": "talos", "urdf": urdf, "srdf": srdf, "package_dirs": [pkg],
            "reference_configuration": "half_sitting"}
    spec.update(robot)
    return scene_from_dict({"robots": [spec]})


def test_talos_at_z_zero_is_a_clear_error_not_a_memory_error():
    with pytest.raises(SceneError, match=r"deep penetration.*ground-.*mm deep"):
        Simulator(talos_scene(base_pose=[0, 0, 0, 0, 0, 0, 1]))


def test_talos_starts_at_the_srdf_base_pose():
    sim = Simulator(talos_scene())
    assert sim.base_state(0).pose[2] == pytest.approx(1.01927, abs=1e-9)
    assert math.isclose(sim.base_state(0).pose[6], 1.0)
