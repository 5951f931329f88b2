"""The peer engines of benchmarks/bench_sim.py (sim_peers.py and its modules): every
installed engine builds every peer scene and reports its physics; our re-checks of
their poses and forces (peer_checks.py) are right on known cases; a missing or failing
peer is a row status. Nothing is timed; an engine whose package is missing is skipped."""

import importlib
import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

sim_peers = pytest.importorskip("sim_peers")
import peer_checks  # noqa: E402
import peer_scenes  # noqa: E402


def _scene(name):
    try:
        return peer_scenes.load(name)
    except FileNotFoundError as e:  # Talos and Go1 need the optional example-robot-data
        pytest.skip(str(e))


@pytest.mark.parametrize("scene", sim_peers.SCENES)
@pytest.mark.parametrize("engine", sorted(sim_peers.PEERS))
def test_engine_runs_scene(engine, scene):
    """A few steps: the run is 'ok', the engine reports ground contacts carrying weight,
    and both depths (the engine's and ours from its poses) are measured."""
    if not sim_peers.installed(engine):
        pytest.skip(f"{engine} not installed")
    if scene not in sim_peers.ONLY.get(engine, (scene,)):
        pytest.skip(f"{engine} runs {sim_peers.ONLY[engine]} only")
    _scene(scene)
    (run,) = sim_peers.run_peers([engine], [scene], duration=0.03, settle=0.0, chunks=1)
    assert run.status == "ok", run
    assert run.engine == engine and run.scene == scene and run.steps >= 1
    assert run.num_contacts > 0 and run.force_ratio > 0, run
    assert np.isfinite(run.penetration_check) and run.penetration_check >= 0, run
    assert run.stands and run.check, run


@pytest.mark.parametrize("engine", sorted(sim_peers.PEERS))
def test_missing_engine_says_not_installed(engine, monkeypatch):
    real = importlib.import_module

    def without(name, *a, **k):
        if name == sim_peers.MODULES[engine]:
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", without)
    (run,) = sim_peers.run_peers([engine], ["tower"], duration=0.01, settle=0.0, chunks=1)
    assert (run.engine, run.scene, run.status) == (engine, "tower", "not installed")


def test_failing_engine_is_a_status_row(monkeypatch):
    def broken(scene, **options):
        raise RuntimeError("solver diverged")

    monkeypatch.setitem(sim_peers.PEERS, "mujoco", broken)
    runs = sim_peers.run_peers(["mujoco", "mujoco"], ["tower"], duration=0.01, settle=0.0, chunks=1)
    assert [r.status for r in runs] == ["failed: RuntimeError: solver diverged"] * 2


def test_failing_peer_still_writes_the_csv(monkeypatch, tmp_path):
    bench_sim = pytest.importorskip("bench_sim")

    def broken(scene, **options):
        raise RuntimeError("no license")

    monkeypatch.setitem(sim_peers.PEERS, "dart", broken)
    peers, ours, scaling = bench_sim.main(["--quick", "--peers", "dart", "--peer-scenes", "tower", "--scenes", "",
                                           "--points", "", "--results-dir", str(tmp_path)])
    assert [p.status for p in peers] == ["failed: RuntimeError: no license"] and ours == [] and scaling == []
    (csv_path,) = tmp_path.glob("bench_sim_*.csv")
    (row,) = sys.modules["common"].read_csv(csv_path)
    assert (row["section"], row["engine"], row["scene"]) == ("peers", "dart", "tower")
    assert row["status"] == "failed: RuntimeError: no license" and row["revision"]


def test_each_scene_runs_ours_and_its_peers_chunk_by_chunk_in_turn(monkeypatch):
    # A ratio compares two engines on one scene: their chunks alternate, seconds apart,
    # and the next scene starts after both have finished.
    bench_sim = pytest.importorskip("bench_sim")
    order = []

    def runs(engine, name, value):
        order.append((engine, name, "build"))
        for c in range(2):
            yield "settled" if c == 0 else 0.001
            order.append((engine, name, c))
        return value

    def ours(name, *args, **options):
        return runs("ours", name, dict(name=name, status="failed: not measured here"))

    def peer(scene, **options):
        return runs("dart", scene.name, PeerRun("dart", scene.name, "failed: not measured here"))

    from peer_harness import PeerRun
    monkeypatch.setattr(sys.modules["bench_sim_ours"], "measuring_ours", ours)
    monkeypatch.setitem(sim_peers.PEERS, "dart", peer)
    peers, mine, _ = bench_sim.main(["--quick", "--peers", "dart", "--peer-scenes", "tower",
                                     "--scenes", "tower,humanoid", "--points", "", "--results-dir", ""])
    assert order == [("ours", "tower", "build"), ("dart", "tower", "build"), ("ours", "tower", 0),
                     ("dart", "tower", 0), ("ours", "tower", 1), ("dart", "tower", 1),
                     ("ours", "humanoid", "build"), ("ours", "humanoid", 0), ("ours", "humanoid", 1)]
    assert [r["name"] for r in mine] == ["tower", "humanoid"] and [p.engine for p in peers] == ["dart"]


def test_an_engine_that_fails_in_its_turn_is_a_row_and_the_others_go_on(monkeypatch):
    from peer_harness import in_turn

    def good():
        yield "settled"
        yield 0.001
        return "good"

    def bad():
        yield "settled"
        raise RuntimeError("diverged")

    out = in_turn([(bad(), lambda e: f"failed: {e}"), (good(), None), ("a row", None)])
    assert out == ["failed: diverged", "good", "a row"]


def test_x_columns_divide_our_rtf_by_the_peer_on_the_same_scene():
    bench_sim = pytest.importorskip("bench_sim")
    from peer_harness import PeerRun

    peers = [PeerRun("mujoco", "go1", "ok", rtf=20.0), PeerRun("mujoco", "tower", "ok", rtf=100.0),
             PeerRun("dart", "go1", "failed: x")]
    ours = [dict(name="go1", status="ok", rtf=5.0)]
    side = bench_sim.side_by_side(peers, ours)
    assert ours[0]["x_mujoco"] == 0.25 and ours[0]["x_dart"] is None and ours[0]["x_pybullet"] is None
    assert [(r["engine"], r["scene"]) for r in side] == [("contact_lcp", "go1"), ("mujoco", "go1"), ("dart", "go1"),
                                                          ("mujoco", "tower")]


def test_x_is_the_median_of_the_ratios_of_chunks_run_in_turn():
    # The machine slows down 2x from the third turn on, after our third chunk and before
    # the peer's: each turn's ratio is 1/4 but one; the whole runs' medians give 1/2.
    bench_sim = pytest.importorskip("bench_sim")
    from peer_harness import PeerRun

    peer = PeerRun("mujoco", "go1", "ok", rtf=5.0, chunk_times=(1e-4, 1e-4, 2e-4, 2e-4, 2e-4))
    ours = [dict(name="go1", status="ok", rtf=2.5, chunk_times=(4e-4, 4e-4, 4e-4, 8e-4, 8e-4))]
    bench_sim.side_by_side([peer], ours)
    assert ours[0]["x_mujoco"] == pytest.approx(0.25)
    unpaired = [dict(name="go1", status="ok", rtf=5.0, chunk_times=(1e-4,))]
    bench_sim.side_by_side([peer], unpaired)
    assert unpaired[0]["x_mujoco"] == 1.0  # the runs' rates: 5 / 5


def test_go1_scene_puts_the_feet_on_the_floor():
    """config/go1_stand.yaml: the SRDF 'standing' joints and a base height that sets the
    lowest foot point at z = 0 (the SRDF's own 0.26 m sinks them 13.8 mm)."""
    scene = _scene("go1")
    assert scene.joints["FL_calf_joint"] == -1.853 and scene.joints["RR_thigh_joint"] == 0.8
    geometry = peer_checks.RobotGeometry(scene)
    assert geometry.penetration(scene.base, scene.joints) < 1e-5
    sunk = scene.base.copy()
    sunk[2] = 0.26
    assert geometry.penetration(sunk, scene.joints) == pytest.approx(0.0138, abs=1e-4)
    assert scene.mass == pytest.approx(13.1005, abs=1e-3)  # the root link's mass included


def test_go1_scene_is_a_valid_scene():
    _scene("go1")
    from contact_lcp.sim import scene_loader

    scene = scene_loader.load_scene(os.path.join(peer_scenes.ROOT, "config", "go1_stand.yaml"))
    assert [r.robot.name for r in scene.robots] == ["go1"] and scene.time_step == 1e-3


def test_peer_urdf_changes_are_said():
    """Only Go1's unphysical root inertia is repaired; every joint <dynamics> is dropped
    (ours models none), and the notes say both."""
    go1, talos = _scene("go1"), _scene("talos")
    assert go1.notes == ["diagonal inertia on base (not physical in the URDF)",
                         "12 joint <dynamics> (damping, friction) dropped, as ours has none"]
    assert talos.notes == ["34 joint <dynamics> (damping, friction) dropped, as ours has none"]
    assert not any(tag in s.urdf_text for tag in ("<dynamics", "<visual") for s in (go1, talos))


def test_tower_penetration_from_poses():
    """Our depth of box poses: touching boxes 0; box 2 lowered 1 mm into box 1: 1 mm;
    box 0 lowered 2 mm into the ground: 2 mm."""
    scene = peer_scenes.load_tower()
    geometry = peer_checks.TowerGeometry(scene)
    poses = np.array([b.pose for b in scene.boxes])
    assert geometry.penetration(poses) == pytest.approx(0.0, abs=1e-9)
    poses[2:, 2] -= 1e-3
    assert geometry.penetration(poses) == pytest.approx(1e-3, rel=1e-6)
    poses[0, 2] -= 2e-3
    assert geometry.penetration(poses) == pytest.approx(2e-3, rel=1e-6)


def test_cone_ratio_and_verdict():
    F = np.array([[3.0, 4.0, 10.0], [0.0, 0.0, 5.0], [1.0, 0.0, -1.0]])  # the last pulls: ignored
    assert peer_checks.cone_ratio(F) == pytest.approx(0.5)
    assert np.isnan(peer_checks.cone_ratio(np.zeros((0, 3))))
    assert peer_checks.verdict(1.01, 1e-3, 1.1e-3, 0.5, 0.8) == "ok"
    bad = peer_checks.verdict(0.9, 1e-3, 3e-3, 1.0, 0.8)
    assert "sum Fz / mg = 0.900" in bad and "penetration 1 mm (engine) vs 3 mm (ours)" in bad and "> mu" in bad
    assert peer_checks.verdict(float("nan"), float("nan"), 0.0, float("nan"), 0.8) == "no contact force reported"


def test_targets_of_our_rows():
    bench_sim = pytest.importorskip("bench_sim")
    go1 = dict(name="go1", x_mujoco=0.6, x_drake=1.2, x_dart=0.9, x_pybullet=None)
    assert bench_sim.targets(go1) == [(">= 0.5x MuJoCo", "MET"), ("ahead of drake", "MET"),
                                      ("ahead of dart", "NOT MET"), ("ahead of pybullet", "no peer row")]
    tower = dict(name="tower", x_mujoco=0.2, x_dart=1.5, x_pybullet=1.1, drift_mm=0.02)
    assert bench_sim.targets(tower) == [(">= 0.25x MuJoCo", "NOT MET"), ("ahead of dart", "MET"),
                                        ("ahead of pybullet", "MET"), ("drift <= 0.01 mm", "NOT MET")]
    assert bench_sim.targets(dict(name="humanoid", x_mujoco=None)) == []


class _FakeTower:
    """An engine whose boxes slide +x by 1 um a step and sink 0.5 mm into the ground from
    the start, with a ground force alternating 0.9 and 1.1 m g: every number known."""

    version, notes = "0", "fake"

    def __init__(self, scene, nan_at=None):
        self.scene, self.k, self.nan_at = scene, 0, nan_at
        self.poses = np.array([b.pose for b in scene.boxes])
        self.poses[:, 2] -= 5e-4

    def step(self):
        self.k += 1
        self.poses[:, 0] += 1e-6

    def pose(self):
        return self.poses.copy()

    def contacts(self):
        mg = self.scene.mass * self.scene.gravity
        fz = (0.9 if self.k % 2 else 1.1) * mg
        F = np.array([[0.1 * fz, 0.0, fz]]) if self.k != self.nan_at else np.array([[np.nan, 0.0, fz]])
        return F, 4e-4, 1


def test_measure_reports_what_the_engine_did():
    from peer_harness import measure

    scene = peer_scenes.load_tower()
    run = measure(_FakeTower(scene), scene, duration=0.2, settle=0.1, chunks=2, name="fake")
    assert (run.status, run.engine, run.scene, run.steps, run.time_step) == ("ok", "fake", "tower", 20, 0.01)
    assert run.force_ratio == pytest.approx(1.0) and run.cone_ratio == pytest.approx(0.1)
    assert run.max_penetration == 4e-4 and run.penetration_check == pytest.approx(5e-4)
    assert run.drift_mm == pytest.approx(30 * 1e-3)  # 10 settle + 20 timed steps of 1 um
    assert run.stands and run.check == "ok" and run.notes == "fake"
    assert run.rtf == pytest.approx(0.01 / run.step_time) and run.step_time > 0
    assert len(run.chunk_times) == 2 and run.step_time == pytest.approx(np.median(run.chunk_times))


def test_measure_stops_at_a_non_finite_force():
    from peer_harness import measure

    scene = peer_scenes.load_tower()
    with pytest.raises(FloatingPointError, match="non-finite contact force"):
        measure(_FakeTower(scene, nan_at=13), scene, duration=0.2, settle=0.1, chunks=2, name="fake")


def test_drake_servos_every_joint_of_talos():
    """Talos' torso, head and wrists use transmission types Drake's parser ignores: the
    peer adds their servos, so Drake holds all 32 joints like every other engine."""
    if not sim_peers.installed("drake"):
        pytest.skip("drake not installed")
    import peers_drake

    scene = _scene("talos")
    engine = peers_drake.build_robot(scene)
    assert len(scene.effort) == 32 and engine.plant.num_actuators() == 32
    names = {engine.plant.get_joint_actuator(i).joint().name() for i in engine.plant.GetJointActuatorIndices()}
    assert names == set(scene.effort)
