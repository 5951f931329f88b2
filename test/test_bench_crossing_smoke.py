"""Smoke test of benchmarks/bench_crossing.py: it finds the step's kernels, replays one
step's calls of each from Python and from a compiled loop, and writes its CSV. Nothing is
timed against a bound."""

import os
import sys

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_crossing  # noqa: E402
import common  # noqa: E402


def test_the_humanoids_step_kernels_are_found_and_replayed(tmp_path, capsys):
    assert bench_crossing.main(["--scenes", "humanoid", "--settle", "20", "--steps", "5",
                                "--number", "3", "--results-dir", str(tmp_path)]) == 0
    assert "kernel calls a step" in capsys.readouterr().out
    (csv,) = tmp_path.glob("bench_crossing_*.csv")
    rows = common.read_csv(csv)
    calls, total = rows[:-1], rows[-1]
    # the stages of a standing robot's step: collision (placements and closed forms in
    # one call), contact rows, assembly, the contact model's first rung, integration
    names = {r["kernel"] for r in calls}
    assert {"collide", "_rows_and_active", "assemble", "first_rung",
            "_integrate_vector"} <= names
    assert total["kernel"] == "(all)" and int(total["calls"]) == len(calls)
    for r in calls:
        assert float(r["python_us"]) > 0.0 and float(r["compiled_us"]) > 0.0
    assert float(total["step_us"]) > 0.0
