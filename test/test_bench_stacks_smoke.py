"""Smoke test of benchmarks/bench_stacks.py: it runs, counts and writes its CSV, perturbed
starts included. Nothing is timed or compared against a speed."""

import os
import sys

import numpy as np

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_stacks  # noqa: E402
import common  # noqa: E402


def test_a_short_tower_run_with_a_perturbed_start(tmp_path, capsys):
    assert bench_stacks.main(["--scenes", "tower_5", "--duration", "0.2", "--steps", "0.05",
                              "--perturb", "1", "--results-dir", str(tmp_path)]) == 0
    assert "from the last basis" in capsys.readouterr().out
    (csv,) = tmp_path.glob("bench_stacks_*.csv")
    rows = common.read_csv(csv)
    assert [int(r["perturbation"]) for r in rows] == [0, 1]
    for r in rows:
        assert int(r["steps"]) == 4 and int(r["failures"]) == int(r["safe_stops"]) == 0
        assert 0 <= int(r["last_basis_steps"]) <= 4
        assert float(r["median_step_ms"]) <= float(r["worst_step_ms"])
        assert r["stopped"] == ""


def test_a_run_whose_step_stops_ends_its_own_row(monkeypatch):
    # (the 200-sphere pour at h = 50 ms meets more contacts than its max_contacts; here
    # the third step of the tower stands in for it)
    from contact_lcp.sim import SimulationError, Simulator

    real, calls = Simulator.step, []

    def step(sim):
        calls.append(sim.t)
        if len(calls) == 3:
            raise SimulationError("the step from t = 0.1000 s stopped: too many contacts")
        return real(sim)

    monkeypatch.setattr(Simulator, "step", step)
    row = bench_stacks.run("tower_5", 0.05, 0.5)
    assert row["steps"] == 2 and row["stopped"].endswith("stopped: too many contacts")
    assert row["solves"] >= 2 and row["failures"] == 0


def test_perturb_moves_every_free_body_by_at_most_a_micrometre():
    from contact_lcp.sim import Simulator

    path = os.path.join(os.path.dirname(BENCH), "config", "tower_5.yaml")
    sim = Simulator.from_file(path)
    q0 = sim.q
    bench_stacks.perturb(sim, 3)
    dq = sim.q - q0
    idx = (np.asarray(sim.stepper.free_motion.flyers.idx_q)[:, None] + np.arange(3)).ravel()
    assert np.all(np.abs(dq[idx]) <= bench_stacks.PERTURBATION) and np.all(dq[idx] != 0.0)
    dq[idx] = 0.0
    np.testing.assert_array_equal(dq, 0.0)  # orientations untouched
