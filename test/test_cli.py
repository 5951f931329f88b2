"""The contact-lcp command: simulate writes the documented arrays, compare and plot read them."""

import numpy as np
import pytest

from contact_lcp.cli import compare_methods, main, parse_method
from contact_lcp.sim.recording import frictional_lcps, load_problems


@pytest.fixture(scope="module")
def box_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    run, lcps, png = d / "run.npz", d / "lcps.npz", d / "f.png"
    rc = main(["simulate", "config/box_on_plane.yaml", "--duration", "0.05", "--output",
               str(run), "--record-lcps", str(lcps), "--plot", str(png)])
    assert rc == 0
    return run, lcps, png


def test_simulate_writes_the_run_arrays(box_run):
    run, _, png = box_run
    with np.load(run, allow_pickle=False) as f:
        keys = set(f.files)
        assert {"t", "q", "v", "contact_force_total", "max_penetration", "num_contacts",
                "num_active", "lcp_status", "lcp_pivots", "lcp_method", "wrench/box"} <= keys
        assert f["q"].shape == (50, 7) and f["v"].shape == (50, 6)
        assert set(f["lcp_status"]) <= {"SOLVED", "NO_CONTACT"}
        # The box rests: total vertical contact force = m g on the box's wrench link.
        assert f["wrench/box"][-1, 2] == pytest.approx(2.0 * 9.81, rel=1e-3)
    assert png.stat().st_size > 1000


def test_recorded_lcps_replay_exactly(box_run):
    _, lcps, _ = box_run
    problems, active = load_problems(lcps)
    assert len(problems) == 50 and all(a == 4 or a >= 2 for a in active)
    recorded = frictional_lcps(problems, active)
    M, q, contacts, active = recorded[-1]
    assert M.shape == (q.size, q.size) and contacts == 4
    rows = compare_methods(recorded, ["robust", "lexicographic:tie_threshold=1e-8", "pgs"])
    assert [r["method"] for r in rows] == ["robust", "lexicographic:tie_threshold=1e-8", "pgs"]
    assert rows[0]["success"] == 50 and rows[0]["failure"] == 0
    # PGS cannot handle the friction-cone rows (zero diagonal): every frame fails, honestly.
    assert rows[2]["numerical"] == 50


def test_parse_method_options():
    assert parse_method("lexicographic:tie_threshold=1e-6") == (
        "lexicographic:tie_threshold=1e-6", "lexicographic", {"tie_threshold": 1e-6})
    assert parse_method("robust:max_nodes=50")[2] == {"max_nodes": 50}


def test_errors_are_reported_not_raised(tmp_path, capsys):
    assert main(["simulate", str(tmp_path / "missing.yaml")]) == 2
    assert "not found" in capsys.readouterr().err
    bad = tmp_path / "x.npz"
    np.savez(bad, a=np.zeros(1))
    assert main(["compare", str(bad)]) == 2
    assert "expected a recording" in capsys.readouterr().err


def test_simulate_takes_another_time_step(tmp_path, capsys):
    # --time-step replaces the scene's h: 0.05 s of the box at 10 ms is 5 steps, and a
    # bad value is an error naming what was expected.
    run = tmp_path / "run.npz"
    assert main(["simulate", "config/box_on_plane.yaml", "--duration", "0.05",
                 "--time-step", "0.01", "--output", str(run)]) == 0
    assert "done: 5 steps" in capsys.readouterr().out
    with np.load(run, allow_pickle=False) as f:
        np.testing.assert_allclose(np.diff(f["t"]), 0.01)
    assert main(["simulate", "config/box_on_plane.yaml", "--time-step", "-1"]) == 2
    assert "time_step: expected a number > 0" in capsys.readouterr().err


def test_simulate_saves_a_state_and_resumes_to_the_same_end(tmp_path, capsys):
    """--save-state then --resume to the same end time: the same final state as one run
    through; a state of another scene is an error that names the difference."""
    from contact_lcp.sim.checkpoint import read_state

    whole, half, end = tmp_path / "whole.state", tmp_path / "half.state", tmp_path / "end.state"
    scene = "config/tower_5.yaml"
    assert main(["simulate", scene, "--duration", "0.3", "--save-state", str(whole)]) == 0
    assert main(["simulate", scene, "--duration", "0.15", "--save-state", str(half)]) == 0
    capsys.readouterr()
    assert main(["simulate", scene, "--duration", "0.3", "--resume", str(half),
                 "--save-state", str(end)]) == 0
    out = capsys.readouterr().out
    assert "resumed" in out and "done: 15 steps, 0.150 s simulated" in out
    a, b = read_state(whole), read_state(end)
    assert a["t"] == pytest.approx(0.3) and b["t"] == pytest.approx(0.3)
    assert np.array_equal(a["q"], b["q"]) and np.array_equal(a["v"], b["v"])
    assert a["stats"] == b["stats"]
    assert main(["simulate", "config/box_on_plane.yaml", "--resume", str(half)]) == 2
    assert "saved from another scene" in capsys.readouterr().err


def _called(run):
    """The (file, first line) of every function the profiler saw ``run`` call (numba's
    dispatchers among them)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    run()
    prof.disable()
    return {(f, line) for f, line, _ in pstats.Stats(prof).stats}


def _kernels_in(calls):
    """The package's compiled kernels (module.name) whose functions are among ``calls``."""
    import sys

    from numba.core.registry import CPUDispatcher

    kernels = {f"{m.__name__}.{k}": (v.py_func.__code__.co_filename,
                                     v.py_func.__code__.co_firstlineno)
               for m in list(sys.modules.values())
               if getattr(m, "__name__", "").startswith("contact_lcp")
               for k, v in list(vars(m).items()) if isinstance(v, CPUDispatcher)}
    return {name for name, code in kernels.items() if code in calls}


@pytest.mark.parametrize("scene", ["config/humanoid_stand.yaml", "config/box_on_plane.yaml"])
def test_warm_up_runs_every_kernel_that_later_steps_and_their_reads_run(scene):
    """warm_up (what the node runs before it publishes and ``contact-lcp warm`` on the
    default scene) calls every compiled kernel that later steps call and the reads after
    them (the node's joint state, contacts and link wrenches, the run recorder's contact
    table): on a cold cache none of them then compiles in the middle of a run (a
    profiler sees numba's dispatchers as calls)."""
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.warm import warm_up

    sim = Simulator.from_file(scene)
    warmed = _kernels_in(_called(lambda: warm_up(sim)))
    links = tuple(sim.scene.output.wrench_links)

    def run():
        for _ in range(3):
            sim.step()
            sim.joint_state()
            sim.contacts()
            sim.link_wrenches(links, "local")
            sim.contact_table(links)

    later = _kernels_in(_called(run))
    assert {"contact_lcp.contact.pyramid_warm.first_rung",
            "contact_lcp.sim.views._world_forces"} <= later
    assert later <= warmed, sorted(later - warmed)


def test_warm_up_runs_the_kernels_of_the_rungs_a_run_reaches_later():
    """warm_up also runs the contact model's later rungs (ContactModel.warm_up): a run
    that later meets contacts that came or went (the last basis mapped onto them), a
    last basis that misses (the search from a basis), a solve retried on the
    powers-of-two scaling or a face that the compiled force distribution leaves to its
    QP then calls no kernel that warm_up did not."""
    import dataclasses

    from contact_lcp.contact.lcp_builder import build_contact_lcp
    from contact_lcp.contact.min_norm import min_norm_impulse
    from contact_lcp.lcp import solve
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.warm import warm_up

    sim = Simulator.from_file("config/box_on_plane.yaml")
    warmed = _kernels_in(_called(lambda: warm_up(sim)))
    for _ in range(3):
        sim.step()
    data, model = sim.stepper.data, sim.model
    problem, guess = data.problem, data.guess
    k = problem.num_contacts
    assert k == 4 and guess.flags is not None
    came_or_went = dataclasses.replace(guess, pair=guess.pair + 1)
    missed = dataclasses.replace(guess, basic_a=np.zeros_like(guess.basic_a))

    def run():
        for g in (came_or_went, missed):
            assert model.solve(problem, g).report.outcome.name == "SOLVED"
        f = model.solve(problem, guess).solved
        assert min_norm_impulse(problem, f, model.settings.friction_directions,
                                compiled=False)[1] == "min_norm"
        lcp = build_contact_lcp(problem.G, problem.u, problem.mu,
                                num_directions=model.settings.friction_directions,
                                normal_bias=problem.bias)
        assert solve(lcp.M, lcp.q, method=model.settings.method,
                     scaling="powers_of_two").status.name == "SOLVED"

    later = _kernels_in(_called(run))
    # and the model's warm-up leaves its next solve as it was
    before = model.solve(problem, guess)
    model.warm_up(problem, guess)
    after = model.solve(problem, guess)
    assert np.array_equal(before.solved, after.solved) and np.array_equal(before.f, after.f)
    assert before.report.rungs == after.report.rungs == ("last_basis:solved",)
    assert {"contact_lcp.contact.pyramid_warm.mapped_flags",
            "contact_lcp.lcp.tableau.extract_z", "contact_lcp.lcp.scaling.q_scale"} <= later
    assert later <= warmed, sorted(later - warmed)


@pytest.mark.parametrize("scene, steps, reached", [
    # a ball that lands after the warm-up's steps (its first contact at step ~450): the
    # contact code stood in for by a resting box
    ("config/ball_drop.yaml", 470, {"contact_lcp.contact.pyramid_warm.first_rung",
                                    "contact_lcp.contact.min_norm_kernel.least_norm_face"}),
    # spheres landing on each other: more active-set rounds, curvature defects measured
    ("config/spheres_21.yaml", 10, {"contact_lcp.contact.problem.active_contacts",
                                    "contact_lcp.sim.curvature._normal_displacements"}),
    # a peg whose faces touch the hole's at step ~7: a pair the boxes' closed form leaves
    # to the general path, its patch reduced from Python
    ("config/peg_in_hole.yaml", 10, {"contact_lcp.collision.ground.reduce_patch"})])
def test_warm_up_covers_a_run_that_touches_later_or_takes_more_rounds(scene, steps, reached):
    """Steps that reach what the warm-up's own two steps did not (the paths named in
    ``reached``) call no kernel that warm_up did not."""
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.warm import warm_up

    sim = Simulator.from_file(scene)
    warmed = _kernels_in(_called(lambda: warm_up(sim)))

    def run():
        for _ in range(steps):
            sim.step()
            sim.contacts()

    later = _kernels_in(_called(run))
    assert reached <= later
    assert later <= warmed, sorted(later - warmed)


def test_warm_up_runs_the_force_distributions_qp_when_the_scene_keeps_one_point_a_pair(
        monkeypatch):
    """A scene that keeps one point a pair (the ring's wires, ``max_points_per_pair: 1``)
    meets faces with freedom once several pairs load a body; warm_up's resting box keeps
    its four corners, so the force distribution's QP (Clarabel) runs there, not first in
    the middle of the run."""
    from contact_lcp.contact import min_norm
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.warm import warm_up

    calls = []
    qp = min_norm._clarabel
    monkeypatch.setattr(min_norm, "_clarabel", lambda *a: calls.append(1) or qp(*a))
    sim = Simulator.from_file("config/ring.yaml")
    assert sim.scene.contact.max_points_per_pair == 1
    assert warm_up(sim) == ""
    assert calls


def test_the_relaxed_models_warm_up_runs_its_other_path_and_a_failing_one_is_warned():
    """The relaxed model's later rung is its other path (the QP's solver, on the LCP
    path): warm_up runs it, and the next solve is as without it. A model whose later
    rungs fail ahead warns and leaves the run to go on (its steps meet that code later
    and report what they meet)."""
    import warnings

    from contact_lcp.sim import Simulator
    from contact_lcp.sim.warm import later_paths, warm_up

    sim = Simulator.from_file("config/box_on_plane.yaml", contact_model="relaxed")
    model = sim.model
    paths = []
    run_path = model._solve_path
    model._solve_path = lambda path, *a: paths.append(path) or run_path(path, *a)
    assert warm_up(sim) == ""
    assert paths.count("qp") == 1 and paths[0] == "lcp"  # (its steps: the LCP path)
    for _ in range(2):
        sim.step()
    problem, guess = sim.stepper.data.problem, sim.stepper.data.guess
    before = model.solve(problem, guess)
    model.warm_up(problem, guess)
    after = model.solve(problem, guess)
    assert np.array_equal(before.solved, after.solved)
    assert before.report.rungs == after.report.rungs == ("lcp:solved",)

    def broken(problem, guess):
        raise ValueError("a later rung's bug")

    model.warm_up = broken
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        later_paths(sim)
    assert any("a later rung's bug" in str(w.message) for w in seen)
    sim.step()


def test_warm_compiles_a_scene_ahead_and_leaves_nothing_to_compile(capsys):
    """``contact-lcp warm SCENE`` (what the set-up commands run on the default scene):
    after it, a new process steps the scene without compiling anything (kernels loaded
    from the cache emit no compile event)."""
    import subprocess
    import sys

    from contact_lcp.cli import main

    assert main(["warm", "config/box_on_plane.yaml"]) == 0
    assert "kernels ready for config/box_on_plane.yaml" in capsys.readouterr().out
    code = ("from numba.core import event\n"
            "seen = []\n"
            "class Seen(event.Listener):\n"
            "    def on_start(self, ev): seen.append(ev.data['dispatcher'])\n"
            "    def on_end(self, ev): pass\n"
            "event.register('numba:compile', Seen())\n"
            "from contact_lcp.sim import Simulator\n"
            "sim = Simulator.from_file('config/box_on_plane.yaml')\n"
            "for _ in range(3): sim.step()\n"
            "print('compiled', len(seen))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("compiled 0"), out.stdout
    assert main(["warm", "config/no_such_scene.yaml"]) == 2
    assert "scene file not found" in capsys.readouterr().err


def test_a_run_that_writes_no_recording_keeps_no_rows_and_says_the_same(tmp_path, capsys):
    # without --output or --plot no step's row is kept (a long run's memory stays flat);
    # the summary's mean vertical force, penetration and ladder rungs are those of a
    # recorded run
    import re

    from contact_lcp.cli_simulate import _Interrupt, _Run
    from contact_lcp.sim import Simulator

    scene = "config/humanoid_stand.yaml"

    def summary(*extra):
        assert main(["simulate", scene, "--duration", "0.05", *extra]) == 0
        line = [s for s in capsys.readouterr().out.splitlines() if s.startswith("done:")][-1]
        return line[line.index("max penetration"):]

    bare = summary()
    assert bare == summary("--output", str(tmp_path / "run.npz"))
    force, mg = (float(x) for x in re.search(r"force ([0-9.]+) N vs m\*g ([0-9.]+) N",
                                              bare).groups())
    assert force == pytest.approx(mg, rel=0.02)  # standing from its first step
    run = _Run(Simulator.from_file(scene), record=False)
    with _Interrupt() as stop:
        run.steps(20, stop)
    assert run.rec is None and run.done == 20 and sum(run.rungs().values()) >= 20
