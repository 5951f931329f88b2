"""Smoke test of benchmarks/bench_lcp.py: it runs, tabulates, writes its CSV. Times nothing."""

import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_lcp  # noqa: E402
import common  # noqa: E402
import lcp_peers  # noqa: E402
import lcp_problems  # noqa: E402
from contact_lcp.lcp import LCPStatus  # noqa: E402


def tiny_problems():
    """A planted 4x4 SPD LCP, one box on 4 sole points (n = 40), a 4-legged frame (n = 40)."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(4, 4))
    M = A @ A.T + np.eye(4)
    z = np.array([1.0, 0.0, 2.0, 0.0])
    q = np.array([0.0, 1.0, 0.0, 1.0]) - M @ z
    spd = lcp_problems.BenchProblem("spd4", "planted", M, q, z_expected=z)
    box = lcp_problems.random_contact_problem(0, family="boxes", num_contacts=4)
    frame = lcp_problems.legged_frame_problem(4, "sliding")
    return [spd, box, frame]


def assert_psd(G):
    assert np.allclose(G, G.T, rtol=0, atol=1e-12 * np.abs(G).max())
    assert np.linalg.eigvalsh(G).min() >= -1e-10 * np.abs(G).max()


def test_table_and_csv(tmp_path, capsys):
    variants, _ = bench_lcp.our_variants(names={"pgs", "robust"})
    assert "pgs" in [v.name for v in variants]
    runs, summaries = bench_lcp.run_benchmark({"tiny": tiny_problems()}, variants)
    assert [s["variant"] for s in summaries] == [v.name for v in variants]
    assert all(s["total"] == 3 for s in summaries)
    assert len(runs) == 3 * len(variants)
    pgs = next(s for s in summaries if s["variant"] == "pgs")
    # PGS solves the SPD problem and cannot start on the zero-diagonal frictional ones.
    assert pgs["success"] == 1 and pgs["numerical_failure"] == 2
    bench_lcp.print_table("tiny", summaries)
    lines = capsys.readouterr().out.splitlines()
    for v in variants:
        assert any(line.startswith(v.name + " ") for line in lines)

    paths = bench_lcp.write_results(runs, summaries, "lcp-smoke", str(tmp_path))
    rev = common.git_revision(bench_lcp.ROOT)
    for path in paths:
        assert os.path.dirname(path) == str(tmp_path) and rev in os.path.basename(path)
        rows = common.read_csv(path)
        assert rows and all(r["revision"] == rev and r["date"] for r in rows)
    assert {r["variant"] for r in common.read_csv(paths[0])} == {v.name for v in variants}


def fake_peer(name, answer, claimed):
    """A peer variant that returns ``answer(M, q)`` and claims success or a secondary ray."""
    def run(state):
        return lcp_peers.PeerOutput(answer(*state), claimed, LCPStatus.NO_SOLUTION)

    peer = lcp_peers.Peer(name, lambda M, q: (M, q), run)
    return bench_lcp.Variant(name, name, kind="peer", peer=peer)


def test_peer_flags_are_rechecked():
    spd = tiny_problems()[0]
    row = bench_lcp.run_once(fake_peer("liar", lambda M, q: np.ones(4), True), spd)
    assert row["lied"] and row["status"] == LCPStatus.ERROR.value
    row = bench_lcp.run_once(fake_peer("shy", lambda M, q: spd.z_expected, False), spd)
    assert row["false_fail"] and row["status"] == LCPStatus.NO_SOLUTION.value


def test_rigid_sole_is_rank_deficient():
    box = lcp_problems.random_contact_problem(3, family="boxes", num_contacts=4)
    assert box.G.shape == (12, 12) and box.n == 40
    assert_psd(box.G)
    assert box.rank_G <= 6 < 12
    frame = lcp_problems.legged_frame_problem(8, "resting")
    assert_psd(frame.G)
    assert frame.rank_G == 6 and frame.G.shape == (24, 24)


@pytest.mark.parametrize("family", lcp_problems.FAMILIES)
def test_scenes_are_symmetric_psd_and_redundant(family):
    p = lcp_problems.random_contact_problem(7, family=family, num_contacts=16)
    assert p.n == 160 and p.G.shape == (48, 48)
    assert_psd(p.G)
    assert p.rank_G < 48
