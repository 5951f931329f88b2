"""Bad scene files (issue 35, items 3 and 7): every value is judged at load with a message
naming the key, the value and what is allowed; a path from an untrusted peer (the node's
``scene`` parameter) is read only when it is recognisably a scene, and the answer about
any other file quotes nothing from it and is the same as for a missing file."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contact_lcp.exceptions import SceneError
from contact_lcp.ros import config
from contact_lcp.sim import Simulator, load_scene

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "test" / "data" / "two_link_arm.urdf"
BOX = ("bodies:\n  - {name: box, shape: box, size: [0.2, 0.2, 0.1], mass: 2.0,"
       " pose: [0, 0, 0.05, 0, 0, 0, 1]}\n")


def arm_scene(controller):
    return (f"robots:\n  - name: arm\n    urdf: {ARM}\n    floating_base: false\n"
            f"    controller: {controller}\n")


def write(tmp_path, text, name="scene.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(tmp_path, text, *words):
    """Load ``text`` as a scene file: a SceneError whose message holds every word."""
    with pytest.raises(SceneError) as e:
        load_scene(write(tmp_path, text))
    message = str(e.value)
    for w in words:
        assert w in message, (w, message)
    return message


# -- numbers: NaN, inf, fractions for counts, YAML 1.2 floats ---------------------------
@pytest.mark.parametrize("controller, words", [
    ("{kp: {shoulder: .nan}}", ["controller.kp.shoulder", "nan", "finite number >= 0"]),
    ("{kd: {elbow: .inf}}", ["controller.kd.elbow", "inf", "finite number >= 0"]),
])
def test_non_finite_gains_are_refused_naming_the_gain(tmp_path, controller, words):
    """Before: kp NaN loaded, then step 1 failed with "G must be finite"."""
    refused(tmp_path, arm_scene(controller), *words)


@pytest.mark.parametrize("key, value", [
    ("max_contacts", "0.5"), ("friction_directions", "4.7"), ("max_points_per_pair", "2.5"),
])
def test_counts_must_be_integers(tmp_path, key, value):
    """Before: 0.5 and 4.7 were truncated to 0 and 4 without a word."""
    refused(tmp_path, BOX + f"contact: {{{key}: {value}}}\n", f"contact.{key}",
            "expected an integer >=", value)


def test_integral_counts_written_as_floats_are_taken(tmp_path):
    scene = load_scene(write(tmp_path, BOX + "contact: {max_contacts: 1e3, "
                                            "friction_directions: 6.0}\n"))
    assert scene.contact.max_contacts == 1000 and isinstance(scene.contact.max_contacts, int)
    assert scene.contact.friction_directions == 6


def test_exponent_floats_read_as_numbers(tmp_path):
    """YAML 1.1 reads 1e-3 as a string; before, time_step: 1e-3 was refused."""
    scene = load_scene(write(tmp_path, BOX + "time_step: 1e-3\nduration: 2E0\n"
                                            "contact: {activation_distance: 5e-4}\n"))
    assert scene.time_step == 1e-3 and scene.duration == 2.0
    assert scene.contact.activation_distance == 5e-4
    assert load_scene(write(tmp_path, BOX + "gravity: [0, 0, -9.81e0]\n")).gravity[2] == -9.81


@pytest.mark.parametrize("options, words", [
    ("{model: relaxed, options: {qp_tolerance: .nan}}",
     ["contact.options.qp_tolerance", "finite number", "nan"]),
    ("{model: viscous, options: {coefficient: .inf}}",
     ["contact.options.coefficient", "finite number", "inf"]),
    ("{model: relaxed, options: {path: 3}}", ["contact.options.path", "a string", "3"]),
])
def test_non_finite_or_mistyped_contact_options_are_refused(tmp_path, options, words):
    refused(tmp_path, BOX + f"contact: {options}\n", *words)


def test_unknown_solver_options_are_refused_at_load_listing_the_valid_ones(tmp_path):
    """Before: loaded, then a TypeError (a traceback in the CLI) at the first solve."""
    message = refused(tmp_path, BOX + "solver: {options: {bogus: 1}}\n",
                      "solver.options", "'bogus'", "method 'robust'", "max_nodes", "tol")
    assert "valid options" in message
    refused(tmp_path, BOX + "solver: {method: pgs, options: {max_nodes: 5}}\n",
            "'max_nodes'", "method 'pgs'", "max_iterations")


@pytest.mark.parametrize("options, words", [
    ("{method: robust, options: {epsilon: .nan}}", ["solver.options.epsilon", "nan"]),
    ("{method: pgs, options: {max_iterations: 2.5}}",
     ["solver.options.max_iterations", "an integer", "2.5"]),
    ("{method: robust, options: {dive: 1}}", ["solver.options.dive", "true or false"]),
    ("{method: robust, options: {tol: .inf}}", ["solver.options.tol", "inf"]),
])
def test_solver_option_values_are_checked(tmp_path, options, words):
    refused(tmp_path, BOX + f"solver: {options}\n", *words)


def test_a_solver_method_override_checks_the_scene_options_again(tmp_path):
    """The node's solver_method replaces the scene's method: options of the old one that
    the new one does not take are named at load, not at the first solve."""
    path = write(tmp_path, BOX + "solver: {method: robust, options: {max_nodes: 100}}\n")
    assert load_scene(path).solver.options == {"max_nodes": 100}
    with pytest.raises(SceneError, match=r"unknown option\(s\) \['max_nodes'\] for method "
                                         r"'lemke'"):
        Simulator.from_file(path, solver_method="lemke")


def test_zero_quaternions_are_refused(tmp_path):
    refused(tmp_path, BOX.replace("0, 0, 0, 1]", "0, 0, 0, 0]"), "bodies[0].pose",
            "non-zero quaternion")


# -- the CLI: a message, exit 2, no traceback --------------------------------------------
@pytest.mark.parametrize("text, words", [
    (BOX + "solver: {options: {bogus: 1}}\n", ["solver.options", "bogus", "valid options"]),
    (arm_scene("{kp: {shoulder: .nan}}"), ["controller.kp.shoulder", "nan"]),
])
def test_the_cli_reports_a_bad_scene_without_a_traceback(tmp_path, text, words):
    path = write(tmp_path, text, "badscene.yaml")
    run = subprocess.run([sys.executable, "-m", "contact_lcp.cli", "simulate", str(path),
                          "--duration", "0.01"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)


# -- untrusted paths: the node's scene parameter -----------------------------------------
SECRET = "db_password: s3cr3t-value\n"
SYSTEM = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def reason(value):
    """config.check's answer for scene ``value``, with ``value`` itself blanked out."""
    why = config.check("scene", value)
    assert why, f"scene {value!r} was accepted"
    return why.replace(repr(value), "<scene>")


def bad_paths(tmp_path):
    """name -> path of a file a peer might name that is not a scene."""
    paths = {"secret": write(tmp_path, SECRET, "secrets.yaml"),
             "system": write(tmp_path, SYSTEM, "passwd"),
             "system_yaml": write(tmp_path, SYSTEM, "passwd.yaml"),
             "nested_secret": write(tmp_path, BOX + "output: {db_password: s3cr3t-value}\n",
                                    "nested.yaml"),
             "binary": tmp_path / "binary.yaml",
             "directory": tmp_path / "dir.yaml",
             "fifo": tmp_path / "fifo.yaml",
             "device": tmp_path / "zero.yaml",
             "huge": tmp_path / "huge.yaml",
             "missing": tmp_path / "missing.yaml"}
    paths["binary"].write_bytes(b"\xff\xfe\x00s3cr3t-value")
    paths["directory"].mkdir()
    os.mkfifo(paths["fifo"])
    paths["device"].symlink_to("/dev/zero")
    with open(paths["huge"], "wb") as f:  # sparse: 4 GiB of nothing on disk
        f.write(b"time_step: 0.001\n")
        f.truncate(4 << 30)
    return paths


def test_files_that_are_not_scenes_get_one_answer_that_quotes_nothing(tmp_path):
    """Before: the secret's key and value were quoted, a system file's line too, and a
    missing file had its own answer ("not found"), an existence oracle."""
    paths = bad_paths(tmp_path)
    answers = {name: reason(str(p)) for name, p in paths.items()}
    for name, why in answers.items():
        for leak in ("db_password", "s3cr3t", "root:x", "daemon", "/bin/bash"):
            assert leak not in why, (name, why)
    assert len(set(answers.values())) == 1, answers
    assert "not a contact_lcp scene file" in answers["missing"]


def test_a_relative_name_that_is_not_a_scene_gets_the_same_answer(tmp_path, monkeypatch):
    write(tmp_path, SECRET, "secrets.yaml")
    monkeypatch.chdir(tmp_path)
    assert reason("secrets.yaml") == reason("no_such_file.yaml")


def test_real_scenes_still_pass_and_keep_their_helpful_messages(tmp_path):
    """A file that is a scene passes the gate; its invalid values are then named by the
    loader (scene keys and their values only)."""
    good = write(tmp_path, BOX, "good.yml")
    assert config.check("scene", str(good)) is None
    assert config.resolve_scene(str(good)) == str(good.resolve())
    typo = write(tmp_path, BOX + "contact: {max_contacts: 0.5}\n", "typo.yaml")
    assert config.check("scene", str(typo)) is None  # a scene: its loader names the value
    with pytest.raises(SceneError, match=r"contact.max_contacts: expected an integer >= 1, "
                                         r"got 0.5"):
        load_scene(config.resolve_scene(str(typo)))
    for name in ("box_on_plane.yaml", "ball_drop.yaml", ""):
        assert config.check("scene", name) is None, name
