"""Smoke test of ``bench_lcp.py --scenes`` (benchmarks/lcp_scenes.py) on a short recording
of the 5-box tower: every recorded LCP is solved and certified, the scale sweep keeps the
verdicts, and the CSVs and the per-size figure are written. Nothing here is timed."""

import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

lcp_scenes = pytest.importorskip("lcp_scenes")

from contact_lcp.sim import Simulator  # noqa: E402
from contact_lcp.sim.recording import save_problems  # noqa: E402

SCENE = os.path.join(os.path.dirname(BENCH), "config", "tower_5.yaml")


def test_recorded_lcps_are_solved_swept_and_plotted(tmp_path):
    sim = Simulator.from_file(SCENE)
    sim.record_problems = True
    for _ in range(10):
        sim.step()
    save_problems(str(tmp_path / "tower_5.npz"), sim.recorded_problems)
    rows, sweep = lcp_scenes.main(str(tmp_path), per_scene=2, sweep_per_scene=1,
                                  results_dir=str(tmp_path), methods=["robust"])
    robust = [r for r in rows if r["variant"] == "robust"]
    assert len(robust) == 2 and all(r["certified"] for r in robust)
    assert {r["scene"] for r in rows} == {"tower_5"}  # the other scenes are not recorded
    assert sweep and all(r["same_verdict"] and not r["false_success"] for r in sweep)
    for pattern in ("lcp-scenes_*.csv", "lcp-sweep_*.csv", "lcp-scenes_*.png"):
        (path,) = tmp_path.glob(pattern)
        assert path.stat().st_size > 0
