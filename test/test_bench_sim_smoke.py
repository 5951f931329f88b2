"""Smoke test of benchmarks/bench_sim.py: it runs, writes its CSV and reports what it
must. Nothing here is timed or compared against a speed. The peers (sim_peers.py and
its modules) are tested in test_bench_peers.py."""

import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

bench_sim = pytest.importorskip("bench_sim")


def test_resting_boxes_delassus_carries_the_weight():
    """Frictionless LCP of resting boxes: the normal impulses add up to m g h per box."""
    from contact_lcp.contact.lcp_builder import build_frictionless_lcp
    from contact_lcp.lcp import solve

    h, g, boxes = 1e-3, 9.81, 3
    G, u = bench_sim.resting_boxes_delassus(boxes, h=h, g=g)
    assert G.shape == (12 * boxes, 12 * boxes) and np.allclose(G, G.T)
    lcp = build_frictionless_lcp(G, u, num_contacts=4 * boxes)
    res = solve(lcp.M, lcp.q, method="pgs", tol=1e-9)  # impulses ~ 2.5e-3 N.s
    assert res.success, res
    per_box = res.z.reshape(boxes, 4).sum(axis=1)
    np.testing.assert_allclose(per_box, bench_sim.BOX_MASS * g * h, rtol=1e-6)


def test_box_scene_is_a_valid_scene():
    if bench_sim.simulator_class() is None:
        pytest.skip("contact_lcp.sim.Simulator not available yet")
    from contact_lcp.sim import scene_loader as loader

    scene = loader.scene_from_dict(bench_sim.box_scene(4))
    assert len(scene.bodies) == 4 and scene.time_step == 1e-3


def test_quick_run_writes_csv(tmp_path):
    peers, ours, scaling = bench_sim.main(
        ["--quick", "--peers", "", "--scenes", "humanoid", "--points", "8", "--results-dir", str(tmp_path)])
    assert peers == [] and len(ours) == 1 and [r["points"] for r in scaling] == [8]
    assert not ours[0]["status"].startswith("failed"), ours[0]
    (csv_path,) = tmp_path.glob("bench_sim_*.csv")
    rows = sys.modules["common"].read_csv(csv_path)
    assert {r["section"] for r in rows} == {"ours", "scaling"}
    assert all(r["revision"] and r["revision"] != "unknown" for r in rows)


def test_an_unknown_scene_is_named_in_the_error(capsys):
    """A scene name bench_sim does not know is a usage error naming it and the known ones
    (it was a KeyError traceback from deep in main)."""
    with pytest.raises(SystemExit) as exc:
        bench_sim.main(["--scenes", "talos_stand", "--peers", ""])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "talos_stand" in err and "humanoid" in err and "talos" in err


def test_the_command_line_share_is_taken_in_turn_with_the_in_process_rate(monkeypatch):
    # Each turn pairs the command's rate with the in-process rate measured right before
    # it: the machine slowing down 2x after the first turn does not enter the share.
    order, clock, slow = [], [0.0], [1.0]

    class Sim:
        h = 1e-3

        @classmethod
        def from_file(cls, path):
            return cls()

        def step(self):
            if not order or order[-1] != "here":
                order.append("here")
            clock[0] += 1e-3 * slow[0]  # in-process: 1/slow times real time

    def command(path, duration):
        order.append("cli")
        rate = 0.9 / slow[0]  # 0.9x the in-process rate at the same speed
        slow[0] = 2.0
        return rate

    monkeypatch.setattr(bench_sim, "cli_rate", command)
    monkeypatch.setattr(bench_sim.time, "perf_counter", lambda: clock[0])
    rtf, share, lo, hi = bench_sim.cli_share("scene.yaml", 1.0, Sim, rounds=3, steps=10,
                                             settle=0)
    assert order == ["here", "cli"] * 3
    assert share == pytest.approx(0.9) and rtf == pytest.approx(0.45)
    assert lo == pytest.approx(0.9) and hi == pytest.approx(0.9)
