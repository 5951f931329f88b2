"""Smoke test of benchmarks/bench_pile_alternatives.py on the 21-sphere pile: it captures
the next step's contact problem without solving it, solves the compliant LCPs and walks the
relaxed fixed point, writing one CSV row each. Nothing here is timed."""

import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

bench = pytest.importorskip("bench_pile_alternatives")
common = pytest.importorskip("common")

SCENE = os.path.join(os.path.dirname(BENCH), "config", "spheres_21.yaml")


def test_the_captured_problem_is_the_next_steps_and_the_model_is_left_intact():
    t, problem, model = bench.next_problem(SCENE, steps=40)
    assert t == pytest.approx(0.4)  # h = 10 ms: the step from t = 0.4 s
    assert problem.num_contacts > 20  # the pile has landed
    assert "solve" not in vars(model)  # the capturing stand-in is gone
    angle, d = model.edge_angles(problem), model.settings.friction_directions
    hard = bench.pyramid_lcp(problem, angle, d)
    assert hard.q.shape == ((d + 2) * problem.num_contacts,)
    soft = bench.pyramid_lcp(problem, angle, d, 1e-3)
    normals = np.arange(problem.num_contacts)  # the compliance is on the diagonal only
    assert np.all(np.diag(soft.M)[normals] > np.diag(hard.M)[normals])
    assert np.array_equal(soft.q, hard.q)


def test_rows_for_every_compliance_and_fixed_point_iteration(tmp_path):
    assert bench.main(["--scene", "spheres_21.yaml", "--steps", "40", "--compliance",
                       "0,1e-3", "--budget", "5000", "--continuation", "1e-3:1e-10",
                       "--iterations", "2", "--results-dir", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("pile_alternatives_*.csv")
    rows = common.read_csv(path)
    cont = [r for r in rows if r["variant"] == "compliance-continuation"]
    assert [(r["variant"], r["parameter"]) for r in rows if r not in cont] == [
        ("compliance", "0.0"), ("compliance", "0.001"),
        ("relaxed-fixed-point", ""), ("relaxed-fixed-point", "")]
    # down from 1e-3 the compliant answers come closer to the hard LCP's until one
    # certifies on it (the 21-sphere pile: at eps ~ 1e-9, measured)
    solved = [r for r in cont if r["certified"] == "True"]
    assert float(solved[0]["parameter"]) == 1e-3
    assert float(solved[-1]["hard_error_over_tol"]) <= 1.0
    residuals = [float(r["hard_error_over_tol"]) for r in solved]
    assert residuals[-1] < 1e-3 * residuals[0]
    hard, soft = rows[0], rows[1]
    # the hard LCP's own answer certifies on it; the compliant answer is certified on the
    # compliant LCP, and its residual on the hard one is far above the hard tolerance
    assert hard["certified"] == "True" and float(hard["hard_error_over_tol"]) <= 1.0
    assert soft["certified"] == "True" and float(soft["hard_error_over_tol"]) > 1.0
    gaps = [float(r["fixed_point_gap"]) for r in rows if r["variant"] == "relaxed-fixed-point"]
    assert all(g > 0.0 for g in gaps)
