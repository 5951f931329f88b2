"""Smoke test of benchmarks/bench_scenes.py: it runs named bundled scenes, counts what the
run summary counts, finds the slowest step and writes its CSV. Nothing is timed or
compared against a speed."""

import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_scenes  # noqa: E402
import common  # noqa: E402


def test_two_short_scenes_and_their_rows(tmp_path, capsys):
    assert bench_scenes.main(["box_stack", "tower_5", "--duration", "0.1",
                              "--results-dir", str(tmp_path)]) == 0
    assert "slowest" in capsys.readouterr().out
    (csv,) = tmp_path.glob("bench_scenes_*.csv")
    rows = {r["scene"]: r for r in common.read_csv(csv)}
    assert set(rows) == {"box_stack", "tower_5"}
    for r in rows.values():
        h = float(r["h"])
        assert int(r["steps"]) == round(0.1 / h) and r["stopped"] == ""
        assert int(r["failures"]) == int(r["safe_stops"]) == int(r["uncertified"]) == 0
        # the slowest step after the first: a time within the run, and its rungs
        assert h < float(r["slowest_t"]) <= 0.1 + 1e-9
        assert float(r["slowest_ms"]) >= float(r["step_ms"]) > 0.0
        assert r["slowest_rungs"].split(" ")[-1].endswith(":solved")


def test_the_scene_list_and_an_unknown_name():
    names = bench_scenes.bundled()
    assert "humanoid_stand" in names and "hoist" in names
    assert not set(bench_scenes.LONG) & set(names)  # minutes: only with --all
    assert set(bench_scenes.LONG) <= set(bench_scenes.bundled(True))
    assert "contact_lcp.params" not in bench_scenes.bundled(True)
    with pytest.raises(SystemExit):
        bench_scenes.main(["humanoid_stnad"])


def test_a_run_whose_step_stops_ends_its_own_row(monkeypatch):
    from contact_lcp.sim import SimulationError, Simulator

    real, calls = Simulator.step, []

    def step(sim):
        calls.append(sim.t)
        if len(calls) == 3:
            raise SimulationError("the step from t = 0.0200 s stopped: too many contacts")
        return real(sim)

    monkeypatch.setattr(Simulator, "step", step)
    row = bench_scenes.run("tower_5", 0.1)
    assert row["steps"] == 2 and "too many contacts" in row["stopped"]
