"""One fallback ladder, in one place: solve() runs one method, the further attempts are an
explicit list (lcp.attempts), the contact models own their ladders and report the rungs."""

import ast
import os

import numpy as np
import pytest

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_lcp.contact.problem import build_problem
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport
from contact_lcp.exceptions import InvalidProblem
from contact_lcp.lcp import LCPStatus, solve, solve_with_retries, standard_attempts

DATA = os.path.join(os.path.dirname(__file__), "data")
LCP_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "contact_lcp", "lcp")


def _hoist_ray():
    data = np.load(os.path.join(DATA, "hoist_ruiz_ray.npz"))
    return data["M"], data["q"]


def test_solve_runs_one_method_and_the_rescaled_path_is_an_option():
    # The hoist's LCP that Ruiz's factors send to a ray: solve() reports that path's
    # failure as it is, and walks the powers-of-two path only when asked to.
    M, q = _hoist_ray()
    ruiz = solve(M, q, method="lemke", pivot_tol=1e-9)
    assert not ruiz.success and "first_status" not in ruiz.info
    p2 = solve(M, q, method="lemke", pivot_tol=1e-9, scaling="powers_of_two")
    assert p2.success and p2.error <= p2.info["tol"]
    # certified in the same (Ruiz) units as any other answer
    again = solve(M, q, method="lemke", tol=p2.info["tol"])
    assert again.info["scale_sweeps"] == p2.info["scale_sweeps"]
    with pytest.raises(InvalidProblem, match="unknown scaling 'ruis'"):
        solve(M, q, scaling="ruis")


def test_robust_alone_does_not_run_the_ppm_and_the_attempts_do():
    with np.load(os.path.join(DATA, "pyramid4_frictionless_degenerate.npz")) as f:
        M, q = f["M"], f["q"]
    alone = solve(M, q, method="robust", max_nodes=300)
    assert "symmetric_first" not in alone.info and "attempts" not in alone.info
    res = solve_with_retries(M, q, method="robust", max_nodes=300)
    assert res.success and res.method == "robust"
    assert res.info["attempts"] == ["symmetric_ppm:solved"]
    assert res.info["symmetric_first"] == ["ppm:solved"]


def test_the_standard_attempts_in_order():
    M = np.array([[2.0, 1.0], [0.0, 2.0]])  # not symmetric
    names = lambda method, **o: [a.name for a in standard_attempts(M, method, o)]
    assert names("lexicographic") == ["tolerant", "rescaled"]
    assert names("lexicographic", pivot_tol=1e-9, tie_threshold=0.0) == ["rescaled"]
    assert names("revised", initial_basis=[0]) == ["tolerant", "rescaled", "cold",
                                                   "cold_tolerant", "cold_rescaled",
                                                   "exact_ties"]
    assert names("robust", initial_basis=[0]) == ["rescaled", "cold", "cold_rescaled",
                                                  "lexicographic", "exact_ties"]
    # a caller's own tie threshold is kept
    assert names("robust", initial_basis=[0], tie_threshold=0.0) == [
        "rescaled", "cold", "cold_rescaled", "lexicographic"]
    # a caller with a pivot budget plans its own paths: no cold repeat, no other method
    assert names("robust", initial_basis=[0], pivot_budget=50) == ["rescaled"]
    assert names("robust", lemke_fallback=False) == ["rescaled"]
    assert names("ppm") == ["robust"]
    assert names("pgs") == []
    S = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert [a.name for a in standard_attempts(S, "robust", {})] == ["symmetric_ppm",
                                                                    "rescaled",
                                                                    "lexicographic"]
    # the cold attempts drop the warm start
    robust = {a.name: a for a in standard_attempts(M, "robust", {"initial_basis": [1],
                                                                   "max_nodes": 7})}
    assert robust["cold"].options_for({"initial_basis": [1], "max_nodes": 7}) == \
        {"max_nodes": 7}
    assert robust["rescaled"].scaling == "powers_of_two"


def test_a_warm_path_that_misses_is_walked_again_with_exact_ties():
    # The hoist's frictional LCP at t = 2.171 s (n = 40, condition number 1e20): warm and
    # cold, on either scaling, robust ends on bases whose answers miss the per-row verdict
    # (friction rows at w = -3e-11 beside their contact's lam at 0); the warm path with
    # exact ties ends on another basis, whose answer certifies.
    from scipy import sparse

    path = os.path.join(os.path.dirname(LCP_DIR), os.pardir, "benchmarks", "data",
                        "hoist_t2171_uncertified.npz")
    with np.load(path) as f:
        n = f["q"].size
        M = sparse.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=(n, n)).toarray()
        q, basis = f["q"], f["basis"]
    assert not solve(M, q, method="robust", initial_basis=basis).success
    res = solve_with_retries(M, q, method="robust", initial_basis=basis)
    assert res.success and res.error <= res.info["tol"]
    assert res.info["attempts"][-1] == "exact_ties:solved" and res.info["exact_ties_retry"]
    assert all(not a.endswith(":solved") for a in res.info["attempts"][:-1])
    # a complementary answer of the LCP itself
    w = M @ res.z + q
    assert res.z.min() >= 0.0 and w.min() >= -res.info["tol"]
    assert np.abs(res.z * w).max() <= res.info["tol"] * max(1.0, res.z.max())


def test_the_callers_options_are_checked_before_any_attempt_runs():
    # (the symmetric PPM, which takes none of them, would solve this one first)
    with pytest.raises(TypeError, match="unknown option.*'max_node'.*valid options"):
        solve_with_retries(np.eye(2), -np.ones(2), method="robust", max_node=5)
    with pytest.raises(InvalidProblem, match="unknown method 'robst'"):
        solve_with_retries(np.eye(2), -np.ones(2), method="robst")


def test_an_empty_list_of_attempts_is_solve_itself():
    M, q = _hoist_ray()
    res = solve_with_retries(M, q, method="lemke", attempts=())
    assert res.status is solve(M, q, method="lemke").status
    assert res.info["attempts"] == ["lemke:" + res.status.name.lower()]


def test_no_lcp_method_calls_another():
    """The methods' modules do not import each other's entry points: the PPM's module
    imports no other method, robust's neither the PPM nor its kernel."""
    def imported(name):
        with open(os.path.join(LCP_DIR, name + ".py"), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                out |= {a.name for a in node.names}
        return out

    methods = {f"contact_lcp.lcp.{m}" for m in ("robust", "lemke", "lexicographic", "murty",
                                                 "pgs", "ppm", "solve", "attempts")}
    assert not imported("ppm") & methods
    robust = imported("robust")
    assert not robust & {"contact_lcp.lcp.ppm", "contact_lcp.lcp.ppm_kernel",
                         "contact_lcp.lcp.symmetric", "contact_lcp.lcp.symmetric.symmetric_path"}


# ----------------------------------------------------------------- contact models
G_ACC, H = 9.81, 1e-3


def _box(mu=0.5, v=(0, 0, 0, 0, 0, 0)):
    """A 2 kg box resting on z = 0 on its four corners (as test_contact_pyramid)."""
    mass, (hx, hy, hz) = 2.0, (0.1, 0.1, 0.05)
    corners = [(sx * hx, sy * hy, -hz) for sx in (-1, 1) for sy in (-1, 1)]
    inertia = mass / 3.0 * np.diag([hy**2 + hz**2, hx**2 + hz**2, hx**2 + hy**2])
    Minv = np.zeros((6, 6))
    Minv[:3, :3] = np.eye(3) / mass
    Minv[3:, 3:] = np.linalg.inv(inertia)
    axes = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=float)
    J = np.zeros((12, 6))
    for i, r in enumerate(corners):
        for j, a in enumerate(axes):
            J[3 * i + j, :3] = a
            J[3 * i + j, 3:] = np.cross(r, a)
    v = np.asarray(v, dtype=float)
    v_free = v + np.array([0, 0, -G_ACC * H, 0, 0, 0])
    R = np.tile(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float), (4, 1, 1))
    return build_problem(H, R, np.zeros((4, 3)), np.zeros(4), np.full(4, mu), J, Minv, v,
                         v_free, pair=np.zeros(4, dtype=np.int64))


def test_a_pyramid_step_reports_its_rungs():
    model = make_model("pyramid", ModelSettings())
    first = model.solve(_box())
    assert first.report.rungs == ("frictionless:solved", "frictional_warm:solved")
    assert first.report.info["rungs"] == first.report.rungs
    second = model.solve(_box(), first.guess)  # the same contacts: the last basis solves it
    assert second.report.rungs == ("last_basis:solved",)
    assert second.report.last_basis_only and not first.report.last_basis_only


def test_a_failing_pyramid_ladder_reports_every_rung_down_to_the_fallback(monkeypatch):
    """The frictional LCPs made to fail: the ladder climbs to the relaxed problem, and
    the report says which rungs ran and how they ended."""
    from dataclasses import replace

    from contact_lcp.contact import pyramid

    real = pyramid.lcp_rung

    def failing(M, q, method, opts):
        res = real(M, q, method, opts)
        relaxed = M[0, 9 * (q.shape[0] // 10)] < 0.0  # (its -mu column)
        return res if relaxed else replace(res, status=LCPStatus.MAX_PIVOTS)

    monkeypatch.setattr(pyramid, "lcp_rung", failing)
    sol = make_model("pyramid", ModelSettings()).solve(_box(v=(0.05, 0, 0, 0, 0, 0)))
    r = sol.report
    assert r.outcome is Outcome.FALLBACK and r.applied == "relaxed"
    assert r.rungs == ("frictionless:solved", "frictional_warm:max_pivots",
                       "frictional_cold:max_pivots", "contact_frame:max_pivots",
                       "relaxed:solved")


def test_the_frictionless_and_relaxed_models_report_their_rungs():
    assert make_model("frictionless", ModelSettings()).solve(_box()).report.rungs == \
        ("frictionless:solved",)
    assert make_model("relaxed", ModelSettings()).solve(_box()).report.rungs == \
        ("lcp:solved",)


def test_a_report_redone_on_a_larger_active_set_keeps_the_earlier_rungs():
    early = SolveReport(Outcome.SOLVED, LCPStatus.SOLVED, "pyramid", "robust", True,
                        info={"rungs": ("last_basis:miss", "frictional_warm:solved")})
    late = SolveReport(Outcome.SOLVED, LCPStatus.SOLVED, "pyramid", "robust", True,
                       info={"rungs": ("last_basis:solved",)})
    both = ContactSolution(np.zeros(3), late).with_earlier([early], 2)
    assert both.report.rungs == ("last_basis:miss", "frictional_warm:solved",
                                 "last_basis:solved")


def test_an_lcp_rung_that_took_several_attempts_lists_them():
    from contact_lcp.contact.ladder import Rungs
    from contact_lcp.lcp import LCPResult

    def result(status, attempts):
        return LCPResult(np.zeros(1), np.zeros(1), status, "robust", 3, 0.0,
                         {"tol": 1.0, "attempts": attempts})

    rungs = Rungs()
    rungs.add("frictionless", result(LCPStatus.SOLVED, ["symmetric_ppm:solved"]))
    rungs.add("frictional_warm", result(LCPStatus.SOLVED, [
        "robust:no_solution", "rescaled:no_solution", "cold:solved"]))
    rungs.add("safe_stop", "applied")
    assert tuple(rungs) == ("frictionless:solved", "frictional_warm:solved("
                            "robust:no_solution+rescaled:no_solution+cold:solved)",
                            "safe_stop:applied")


def test_the_cli_summary_counts_the_rungs():
    from collections import Counter

    from contact_lcp.cli_simulate import rung_counts

    rows = ["last_basis:solved", "", "last_basis:miss frictional_warm:solved",
            "last_basis:solved"]
    assert rung_counts(Counter(r for row in rows for r in row.split())) == (
        "last_basis:solved 2, last_basis:miss 1, frictional_warm:solved 1")
    assert rung_counts(Counter()) == "none"


def test_a_robust_answer_that_misses_the_verdict_on_every_path_gets_the_lexicographic_one():
    # The ring's 270-row LCP of its loaded contacts at t = 0.791 s (a redundant contact
    # set: M singular), warm-started from the last step's basis. Robust's search can
    # claim answers on all four of its paths that miss the per-row verdict by round-off
    # (which bits it ends on depends on the CPU); the lexicographic path certifies it.
    # Whichever path answers on a given CPU, the standard attempts certify it.
    with np.load(os.path.join(DATA, "ring_claimed_uncertified.npz")) as f:
        M, q, basis = f["M"], f["q"], f["initial_basis"]
    res = solve_with_retries(M, q, method="robust", initial_basis=basis)
    assert res.success and res.error <= res.info["tol"], res.info["attempts"]
    lex = solve(M, q, method="lexicographic")
    assert lex.success and lex.error <= lex.info["tol"]
    if res.info["attempts"][-1] == "lexicographic:solved":
        assert res.info["lexicographic_retry"] and res.info["first_status"] != "SOLVED"
