"""What the viewer reads and draws, without a browser: the recorded contacts of a run,
old and foreign files, the scene a replay rebuilds, the parts' placements, the friction
pyramids, the node's viewer_port rule and the CLI's errors."""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.cli import main
from contact_lcp.exceptions import SceneError
from contact_lcp.ros import config
from contact_lcp.sim import Simulator
from contact_lcp.sim.recording import RunRecorder
from contact_lcp.viewer.frames import RecordedRun
from contact_lcp.viewer.geometry import WorldParts
from contact_lcp.viewer.replay import MAX_FRAME_ADVANCE, playback_time, replay_world
from contact_lcp.viewer.scene_view import pyramid_segments

ROOT = Path(__file__).resolve().parents[1]
SQUAT = str(ROOT / "config" / "humanoid_squat.yaml")


@pytest.fixture(scope="module")
def squat_run(tmp_path_factory):
    """The squat's first 30 steps, recorded as ``simulate --output`` does."""
    sim = Simulator.from_file(SQUAT)
    rec = RunRecorder(sim.scene.output.wrench_links, sim.joint_names, scene_path=SQUAT)
    infos = []
    for _ in range(30):
        infos.append(sim.step())
        rec.add(sim, infos[-1])
    path = tmp_path_factory.mktemp("run") / "run.npz"
    rec.save(path)
    return sim, infos, rec.arrays(), path


def test_a_run_records_each_steps_contacts(squat_run):
    sim, infos, arrays, path = squat_run
    run = RecordedRun(path)
    assert run.has_contacts and run.scene_path == SQUAT and len(run) == 30
    for i, info in enumerate(infos):
        f = run.frame(i)
        assert len(f.p_W) == info.num_contacts == arrays["num_contacts"][i]
        assert f.pivots == info.pivots and f.method == info.lcp_method
        assert f.failures == info.report.failures and f.fallbacks == info.fallbacks
        # every contact is a sole on the ground: the recorded forces add up to the
        # recorded total on the robot (on B, the robot, or on A with the sign turned)
        assert abs(abs(f.force_W[:, 2].sum()) - abs(f.force_total)) < 1e-9 * abs(f.force_total)
    last = run.frame(29)
    p, n, F, d, mu = sim.contact_arrays()  # the simulator's last step, as recorded
    assert np.array_equal(last.p_W, p) and np.array_equal(last.force_W, F)
    assert np.allclose(np.linalg.norm(last.n_W, axis=1), 1.0) and np.all(last.mu == 0.8)
    assert run.index_at(run.t[12] + 1e-9) == 12 and run.index_at(-1.0) == 0


def test_a_run_recorded_before_the_contacts_replays_without_them(squat_run, tmp_path):
    _, _, arrays, _ = squat_run
    old = {k: v for k, v in arrays.items() if not k.startswith("contact_")
           and k not in ("scene_path", "lcp_failures", "lcp_fallbacks")}
    old["contact_force_total"] = arrays["contact_force_total"]
    np.savez(tmp_path / "old.npz", **old)
    run = RecordedRun(tmp_path / "old.npz")
    assert not run.has_contacts
    f = run.frame(5)
    assert len(f.p_W) == 0 and f.failures is None and "failures n/a" in f.report()
    with pytest.raises(SceneError, match="names no scene file.*--scene"):
        replay_world(run)
    world, _ = replay_world(run, SQUAT)
    assert world.model.nq == run.q.shape[1]


def test_files_that_are_not_runs_are_refused_naming_what_they_lack(tmp_path):
    np.savez(tmp_path / "lcps.npz", count=np.array(3))
    with pytest.raises(SceneError, match=r"lacks \['t', 'q'"):
        RecordedRun(tmp_path / "lcps.npz")
    with pytest.raises(SceneError, match="does not exist"):
        RecordedRun(tmp_path / "missing.npz")
    (tmp_path / "text.npz").write_text("not a zip")
    with pytest.raises(SceneError, match="expected a run .npz"):
        RecordedRun(tmp_path / "text.npz")


def test_a_replay_refuses_a_scene_of_another_world(squat_run):
    _, _, _, path = squat_run
    with pytest.raises(SceneError, match="nq ="):
        replay_world(RecordedRun(path), str(ROOT / "config" / "box_on_plane.yaml"))


def test_visual_parts_sit_where_the_world_puts_the_collision_geometry():
    # The humanoid's visual and collision elements share origins and names, so the
    # viewer's robot-local placements must equal the world's at any configuration.
    sim = Simulator.from_file(SQUAT)
    parts = WorldParts(sim.world, [r.robot for r in sim.scene.robots])
    model = sim.world.model
    pin.seed(3)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    sim.world.forward(q)
    X_col = sim.world.geometry_placements()
    names = [o.name for o in sim.world.collision_model.geometryObjects]
    X_vis = parts.visual_placements(q)
    matched = 0
    for part, X in zip(parts.visual, X_vis):
        name = part.name.split("/", 1)[1]
        if name in names:
            assert np.allclose(X, X_col[names.index(name)], atol=1e-12), name
            matched += 1
    # every collision geometry but the ground's halfspace has its visual twin
    assert matched == len(parts.collision) == len(names) - 1
    assert all(len(p.faces) > 0 for p in parts.visual if p is not None)


def test_talos_visual_meshes_load_from_stl():
    from contact_lcp.dynamics.robot_data import robot_data_installed

    if not robot_data_installed():
        pytest.skip("Talos needs the example-robot-data wheel (pip install example-robot-data)")
    sim = Simulator.from_file(str(ROOT / "config" / "talos_stand.yaml"))
    parts = WorldParts(sim.world, [r.robot for r in sim.scene.robots])
    big = [p for p in parts.visual if p is not None and len(p.faces) > 1000]
    assert len(big) >= 20  # the STL shells of the torso, arms, legs and head


def test_pyramid_edges_lean_by_the_friction_angle():
    p = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    n = np.array([[0.0, 0.0, 1.0], [0.6, 0.0, 0.8]])
    mu = np.array([0.8, 0.3])
    seg = pyramid_segments(p, n, mu, height=0.1).reshape(2, 4, 2, 3)
    for i in range(2):
        for e in seg[i]:
            assert np.array_equal(e[0], p[i])
            d = e[1] - e[0]
            along = d @ n[i]
            assert np.isclose(along, 0.1)
            assert np.isclose(np.linalg.norm(d - along * n[i]) / along, mu[i])


@pytest.mark.parametrize("value", [0, 8080, 65535])
def test_viewer_port_takes_ports(value):
    assert config.check("viewer_port", value) is None


@pytest.mark.parametrize("value", [-1, 65536, True, "8080", 80.0])
def test_viewer_port_refuses_what_is_not_a_port(value):
    reason = config.check("viewer_port", value)
    assert reason and "viewer_port" in reason and "[0, 65535]" in reason


def test_the_cli_says_what_is_wrong(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "none.npz"), "--no-browser"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["view", SQUAT, "--port", "70000", "--no-browser"]) == 2
    assert "--port: expected an integer in [0, 65535], got 70000" in capsys.readouterr().err
    assert main(["view", SQUAT, "--duration", "-1", "--no-browser"]) == 2
    assert "--duration" in capsys.readouterr().err


def test_a_replay_advances_by_wall_time_and_a_stall_does_not_jump_it():
    # at rtf 2 a frame 30 ms after t = 1.0 s shows 1.06 s; a frame drawn after a 5 s
    # stall advances MAX_FRAME_ADVANCE, not past the end of a 3 s run (which would start
    # it again on every such frame); past the end it starts again
    assert playback_time(1.0, 0.03, 2.0, 3.0) == pytest.approx(1.06)
    assert playback_time(1.0, 5.0, 1.0, 3.0) == pytest.approx(1.0 + MAX_FRAME_ADVANCE)
    assert playback_time(2.9, 0.2, 1.0, 3.0) is None
