"""Smoke test of benchmarks/bench_glue.py: it records one step's kernel and Pinocchio
calls, replays them, and writes its CSV. Nothing is timed against a speed."""

import os
import sys

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_glue  # noqa: E402
import common  # noqa: E402
import pinocchio as pin  # noqa: E402

from contact_lcp.contact import pyramid  # noqa: E402


def test_a_short_run_records_the_steps_calls_and_puts_every_module_back(tmp_path, capsys):
    first_rung, minverse = pyramid.first_rung, pin.computeMinverse
    bench_glue.main(["--scenes", "humanoid_stand", "--steps", "5", "--chunks", "2",
                     "--settle", "20", "--results-dir", str(tmp_path)])
    assert "glue_us" in capsys.readouterr().out
    (csv,) = tmp_path.glob("bench_glue_*.csv")
    (row,) = common.read_csv(csv)
    # a standing robot's step: the contact model's kernel and the free motion's
    # Pinocchio calls are among those replayed, and the recorder took its wrappers off
    assert int(row["kernels"]) >= 10 and int(row["pinocchio"]) >= 3
    assert float(row["step_us"]) > 0 and 0 < float(row["pinocchio_us"]) < float(row["floor_us"])
    assert float(row["python_calls"]) > int(row["kernels"])
    assert pyramid.first_rung is first_rung and pin.computeMinverse is minverse
