"""Every LCP method on every reference problem (contact_lcp.contact.reference)."""

from fractions import Fraction

import numpy as np
import pytest

from contact_lcp.lcp import METHODS, LCPStatus, solve, solve_with_retries
from contact_lcp.contact.reference import (
    ReferenceProblem, cycling_example, legged_frame, murty_exponential, reference_problems,
)

PROBLEMS = {p.name: p for p in reference_problems()}
FAILURES = frozenset(LCPStatus) - {LCPStatus.SOLVED}
DEGENERATE_CONTACT = ("box_landing_friction", "box_sliding_friction", "box_spinning_friction")

#: (method, problem) -> the status it must end with, when that is not SOLVED.
EXPECTED = {
    ("lemke", "cycling_example"): LCPStatus.CYCLE,
    ("lemke", "lexicographic_ray_example"): LCPStatus.CYCLE,
    ("lexicographic", "lexicographic_ray_example"): LCPStatus.NO_SOLUTION,
    ("revised", "lexicographic_ray_example"): LCPStatus.NO_SOLUTION,  # the same path
    ("murty", "lexicographic_ray_example"): LCPStatus.CYCLE,
    ("pgs", "lexicographic_ray_example"): LCPStatus.NUMERICAL_FAILURE,  # M[2, 2] < 0
    ("pgs", "cycling_example"): LCPStatus.NUMERICAL_FAILURE,  # M[1, 1] = 0
    ("robust", "murty_exponential_16"): LCPStatus.MAX_PIVOTS,  # 2^16 pivots > max_nodes
    ("lemke", "murty_exponential_16"): LCPStatus.MAX_PIVOTS,
    ("lexicographic", "murty_exponential_16"): LCPStatus.MAX_PIVOTS,
    ("revised", "murty_exponential_16"): LCPStatus.MAX_PIVOTS,
    ("murty", "murty_exponential_16"): LCPStatus.MAX_PIVOTS,
    ("robust", "infeasible"): LCPStatus.NO_SOLUTION,
    ("lemke", "infeasible"): LCPStatus.NO_SOLUTION,
    ("lexicographic", "infeasible"): LCPStatus.NO_SOLUTION,
    ("revised", "infeasible"): LCPStatus.NO_SOLUTION,
    ("murty", "infeasible"): LCPStatus.CYCLE,  # alpha = {} -> {0} -> {}
    ("pgs", "infeasible"): LCPStatus.NUMERICAL_FAILURE,  # negative diagonal
    # the PPM alone (solve() runs one method; its robust fallback is an attempt of
    # solve_with_retries) on matrices that are not positive semidefinite
    ("ppm", "infeasible"): LCPStatus.NUMERICAL_FAILURE,  # M[0, 0] <= 0
    ("ppm", "copositive_plus"): LCPStatus.NUMERICAL_FAILURE,
    ("ppm", "lexicographic_ray_example"): LCPStatus.NUMERICAL_FAILURE,
}
EXPECTED.update({("pgs", name): LCPStatus.NUMERICAL_FAILURE for name in DEGENERATE_CONTACT})
EXPECTED.update({("ppm", name): LCPStatus.NUMERICAL_FAILURE
                 for name in ("box_sliding_friction", "box_spinning_friction")})

#: (method, problem) pairs where round-off decides between a certified answer and an
#: honest failure: single-path Lemke variants on the rank-deficient frictional boxes.
ROUND_OFF_DECIDES = {
    (m, name) for m in ("lemke", "lexicographic", "revised", "murty") for name in DEGENERATE_CONTACT
}


def assert_solved(res, z_expected=None, atol=1e-8):
    """Fail with status, pivots, error and info unless ``res`` is a certified solution."""
    detail = (f"status={res.status.name} pivots={res.pivots} error={res.error:.3g} "
              f"info={dict(res.info)}")
    assert res.status is LCPStatus.SOLVED, detail
    assert res.error <= res.info["tol"], detail
    if z_expected is not None:
        np.testing.assert_allclose(res.z, z_expected, atol=atol, err_msg=detail)


def assert_honest_failure(res):
    """A non-SOLVED result names a failure status and says why."""
    assert res.status in FAILURES, res.status
    assert res.info.get("reason"), dict(res.info)


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_method_on_reference_problem(method, name):
    problem = PROBLEMS[name]
    res = solve(problem.M, problem.q, method=method)
    expected = EXPECTED.get((method, name))
    if expected is not None:
        assert res.status is expected, (res.status, res.pivots, dict(res.info))
        assert_honest_failure(res)
    elif (method, name) in ROUND_OFF_DECIDES and not res.success:
        assert_honest_failure(res)
    else:
        assert problem.solvable
        assert_solved(res, problem.z_expected)


def test_the_ppm_with_its_standard_fallback_solves_what_robust_solves():
    for (method, name), status in EXPECTED.items():
        if method == "ppm" and EXPECTED.get(("robust", name)) is None:
            problem = PROBLEMS[name]
            res = solve_with_retries(problem.M, problem.q, method="ppm")
            assert_solved(res, problem.z_expected)
            assert res.info["fallback"] == "robust"


def test_expected_failures_name_existing_methods_and_problems():
    for method, name in set(EXPECTED) | ROUND_OFF_DECIDES:
        assert method in METHODS and name in PROBLEMS, (method, name)


def test_unsolvable_problem_is_never_solved():
    for problem in PROBLEMS.values():
        if not problem.solvable:
            for method in METHODS:
                assert not solve(problem.M, problem.q, method=method).success


def test_reference_problems_are_well_formed():
    names = [p.name for p in reference_problems()]
    assert len(names) == len(set(names))
    for p in reference_problems():
        assert isinstance(p, ReferenceProblem) and p.source
        n = p.q.shape[0]
        assert p.M.shape == (n, n)
        if p.z_expected is not None:
            w = p.M @ p.z_expected + p.q
            assert np.all(p.z_expected >= 0) and np.all(w >= -1e-12)
            assert abs(p.z_expected @ w) <= 1e-9


@pytest.mark.parametrize("legs", range(4, 9))
def test_legged_frame_w_is_unique_across_methods(legs):
    """Impulses are not unique on a frame with more than 3 legs, the velocities w are."""
    p = legged_frame(legs)
    assert np.linalg.matrix_rank(p.M) == 3
    results = [solve(p.M, p.q, method=m) for m in sorted(METHODS)]
    for res in results:
        assert_solved(res)
    w_ref = results[0].w
    for res in results[1:]:
        np.testing.assert_allclose(res.w, w_ref, atol=1e-9, err_msg=res.method)
    # at most 3 legs are needed: some method finds a basic answer with <= 3 loaded legs
    assert min(np.sum(r.z > 1e-12) for r in results) <= 3


@pytest.mark.parametrize("n", range(1, 9))
def test_lemke_needs_2_to_the_n_pivots_on_murty_example(n):
    p = murty_exponential(n)
    res = solve(p.M, p.q, method="lemke", max_pivots=10**6)
    assert_solved(res, p.z_expected)
    assert res.pivots == 2 ** n


def test_lemke_on_murty_16_is_right_or_honestly_out_of_pivots():
    p = murty_exponential(16)
    res = solve(p.M, p.q, method="lemke")
    assert res.status is LCPStatus.MAX_PIVOTS and res.pivots == res.info["max_pivots"]
    res = solve(p.M, p.q, method="lemke", max_pivots=2**16)
    assert_solved(res, p.z_expected)


def _exact_min_index_lemke(M, q, max_pivots=100):
    """Dense-tableau Lemke in rational arithmetic: ('solved'|'ray'|'cycle', pivots)."""
    n = len(q)
    T = [[Fraction(int(i == j)) for j in range(n)] + [Fraction(-M[i][j]) for j in range(n)]
         + [Fraction(-1), Fraction(q[i])] for i in range(n)]
    basis = list(range(n))
    entering, r = 2 * n, min(range(n), key=lambda i: (q[i], i))
    seen = set()
    for pivots in range(1, max_pivots):
        p = T[r][entering]
        T[r] = [x / p for x in T[r]]
        for i in range(n):
            if i != r and T[i][entering] != 0:
                f = T[i][entering]
                T[i] = [a - f * b for a, b in zip(T[i], T[r])]
        leaving, basis[r] = basis[r], entering
        if leaving == 2 * n:
            return "solved", pivots
        if frozenset(basis) in seen:
            return "cycle", pivots
        seen.add(frozenset(basis))
        entering = leaving + n if leaving < n else leaving - n
        rows = [(T[i][-1] / T[i][entering], i) for i in range(n) if T[i][entering] > 0]
        if not rows:
            return "ray", pivots
        r = min(rows)[1]
    return "max", max_pivots


def test_cycling_example_cycles_in_exact_arithmetic_too():
    p = cycling_example()
    M = [[int(x) for x in row] for row in p.M]
    assert _exact_min_index_lemke(M, [int(x) for x in p.q]) == ("cycle", 6)
    res = solve(p.M, p.q, method="lemke")
    assert res.status is LCPStatus.CYCLE and res.pivots == 6


def test_exact_reference_agrees_on_murty_example():
    p = murty_exponential(5)
    M = [[int(x) for x in row] for row in p.M]
    assert _exact_min_index_lemke(M, [int(x) for x in p.q]) == ("solved", 32)
