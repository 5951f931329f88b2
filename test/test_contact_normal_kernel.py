"""The normal-row models' one-call step against their Python sequence (same answer)."""

import dataclasses

import numpy as np
import pytest

from contact_lcp.contact import normal_rows
from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_problems import random_problem


def python_sequence(model, monkeypatch):
    """``model`` with its compiled step switched off (the reference sequence)."""
    monkeypatch.setattr(model, "_compiled", lambda problem, guess: (None, None))
    return model


@pytest.mark.parametrize("name, options", [("no_slip", {}), ("viscous", {}),
                                           ("viscous", {"per": "pair", "coefficient": 50.0})])
@pytest.mark.parametrize("seed", range(6))
def test_compiled_step_gives_the_python_sequence_answer(name, options, seed, monkeypatch):
    """Same impulses (to 1e-9 of their size: the Schur complement is summed in another
    order), same pivots and report fields, over two steps (the second warm-started).
    Rows independent (nv >= 3k + l), so that every random LCP has a solution; redundant
    contacts are the scene test below."""
    rng = np.random.default_rng(seed)
    k, limits = int(rng.integers(1, 10)), int(rng.integers(0, 3))
    nv = 3 * k + limits + int(rng.integers(0, 4))
    settings = ModelSettings(method="robust", options=options)  # the model's own default: ppm
    fast = make_model(name, settings)
    slow = python_sequence(make_model(name, settings), monkeypatch)
    ga = gb = None
    for step in range(2):
        problem = random_problem(seed + 100 * step, k, nv, 0.3, limits)
        a, b = fast.solve(problem, ga), slow.solve(problem, gb)
        ga, gb = a.guess, b.guess
        assert a.report.outcome.name == b.report.outcome.name == "SOLVED"
        assert "compiled_miss" not in a.report.info
        scale = max(1.0, np.abs(b.f).max())
        np.testing.assert_allclose(a.f, b.f, atol=1e-9 * scale)
        assert a.report.pivots == b.report.pivots
        assert a.report.solves == b.report.solves
        assert a.report.warm_started == b.report.warm_started
        # (the rungs differ by construction: the compiled call is one rung of its own)
        assert a.report.rungs == ("compiled:solved",)
        assert set(b.report.rungs) == {"normal_rows:solved"}
        assert {k: v for k, v in a.report.info.items() if k != "rungs"} == {
            key: value for key, value in b.report.info.items()
            if key in a.report.info and key != "rungs"}


@pytest.mark.parametrize("name", ["no_slip", "viscous"])
def test_compiled_step_on_the_grasp_gives_the_python_sequence_answer(name, monkeypatch):
    """The grasp's recorded steps (36 redundant contacts on 14 dofs: no-slip holds the
    directions of its 72 tangent rows; viscous goes through the dofs), each solved by both. With
    redundant contacts the impulses are not unique (the normal-row matrix has rank <= 14)
    but the velocity after the step is (the minimizer of a strictly convex QP): the same
    ``v+ = v_free + K J' f`` to 1e-9 of the velocity change."""
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.scene_loader import load_scene

    scene = load_scene("config/grasp.yaml")
    scene = scene.replace(contact=dataclasses.replace(scene.contact, model=name))
    sim = Simulator(scene)
    sim.record_problems = True
    for _ in range(30):
        sim.step()
    slow = python_sequence(make_model(name, ModelSettings()), monkeypatch)
    fast = make_model(name, ModelSettings())
    problems = [p for p in sim.recorded_problems if p.num_contacts][-10:]
    assert problems and problems[-1].num_contacts == 36
    ga = gb = None
    for problem in problems:
        a, b = fast.solve(problem, ga), slow.solve(problem, gb)
        ga, gb = a.guess, b.guess
        assert a.report.outcome.name == b.report.outcome.name == "SOLVED"
        dv_a, dv_b = (problem.K @ (problem.J.T @ f) for f in (a.f, b.f))
        np.testing.assert_allclose(dv_a, dv_b, atol=1e-9 * np.abs(dv_b).max())


def test_a_step_the_kernel_does_not_certify_is_solved_by_the_python_sequence(monkeypatch):
    """A failed compiled step (forced here) is not applied: the Python sequence (with the
    PPM's fallback to the robust search) solves the step and the report says why."""
    problem = random_problem(3, 6, 20, 0.0)
    model = make_model("no_slip", ModelSettings())
    reference = make_model("no_slip", ModelSettings()).solve(problem)

    def fails(*args):
        out = list(real(*args))
        out[0] = 2  # NOT_CERTIFIED
        return tuple(out)

    real = normal_rows.normal_step
    monkeypatch.setattr(normal_rows, "normal_step", fails)
    sol = model.solve(problem)
    assert sol.report.outcome.name == "SOLVED"
    assert sol.report.info["compiled_miss"] == "not certified"
    np.testing.assert_allclose(sol.f, reference.f, atol=1e-9 * np.abs(reference.f).max())


@pytest.mark.parametrize("seed", range(20))
def test_symmetric_equilibration_is_the_general_one_bit_for_bit(seed):
    """The certification's units: the upper-triangle Ruiz gives the general one's factors
    exactly (powers of two), on symmetric matrices with entries over 12 decades."""
    from contact_lcp.contact.normal_kernel import symmetric_ruiz
    from contact_lcp.lcp.scaling import MAX_SWEEPS, _ruiz

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    B = rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-6, 6, (n, 1))
    A = B @ B.T
    c = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3)
    for got, want in zip(symmetric_ruiz(A, c, MAX_SWEEPS), _ruiz(A, c, MAX_SWEEPS)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(10))
def test_viscous_through_the_dofs_is_the_rows_schur_complement(seed):
    """More damped rows than dofs: A, c and the eliminated impulses of viscous_dofs equal
    the rows' route (Cholesky of G_tt + (h B)^-1) to 1e-10 of their size; A is exactly
    symmetric as built."""
    from contact_lcp.contact.tangential import reduce_to_normal_rows, tangent_rows_of
    from contact_lcp.contact.viscous_dofs import viscous_dofs, viscous_dofs_impulse

    rng = np.random.default_rng(seed)
    k, nv = int(rng.integers(4, 20)), int(rng.integers(2, 7))
    problem = random_problem(seed, k, nv, 0.0)
    t = tangent_rows_of(np.arange(k))
    hb = np.repeat(1e-3 * rng.uniform(1.0, 1e3, k), 2)  # h b per row [N.s^2/m]
    ref = reduce_to_normal_rows(problem, t, damping=1.0 / hb)
    ok, A, c, P, Ls, Q = viscous_dofs(problem.J, problem.K, problem.u, problem.bias,
                                      problem.normal_rows, t, hb)
    assert ok
    np.testing.assert_array_equal(A, A.T)
    np.testing.assert_allclose(A, ref.M, atol=1e-10 * np.abs(ref.M).max())
    np.testing.assert_allclose(c, ref.q, atol=1e-10 * np.abs(ref.q).max())
    f_n = rng.uniform(0.0, 1.0, k)
    f_ref = ref.impulses(problem, f_n)[t]
    f = viscous_dofs_impulse(P, Ls, Q, hb, problem.u[t], f_n)
    np.testing.assert_allclose(f, f_ref, atol=1e-10 * np.abs(f_ref).max())
