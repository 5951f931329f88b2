"""Recorded contact problems (--record-lcps): saved without pickle, loaded exactly, with
the facet sets a model asked for, and replayable through the model and `compare`."""

import numpy as np
import pytest

from contact_lcp.cli import main
from contact_lcp.collision.facets import FacetSets
from contact_lcp.contact.facet_set import FacetSetModel
from contact_lcp.sim.recording import (
    FACET_FIELDS,
    frictional_lcps,
    load_problems,
    save_problems,
)

PEG = "config/peg_in_hole.yaml"


@pytest.fixture(scope="module")
def peg_recording(tmp_path_factory):
    """The bundled peg in hole (facet_set model) over its first 0.3 s (the rim, the
    straightening, the walls), every problem recorded with the velocity it produced."""
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(PEG)
    sim.record_problems = True
    v_steps = []
    for _ in range(24):
        n = len(sim.recorded_problems)
        sim.step()
        if len(sim.recorded_problems) > n:
            v_steps.append(sim._last.v_step.copy())
    path = tmp_path_factory.mktemp("rec") / "lcps.npz"
    save_problems(path, sim.recorded_problems, [0] * len(v_steps))
    return sim, v_steps, path


def test_facet_sets_come_back_field_by_field(peg_recording):
    sim, _, path = peg_recording
    loaded, active = load_problems(path)
    assert len(loaded) == len(sim.recorded_problems) == len(active) > 10
    with_sets = 0
    for a, b in zip(sim.recorded_problems, loaded):
        sa, sb = a.extras["facet_sets"], b.extras["facet_sets"]
        assert isinstance(sb, FacetSets)
        for name in FACET_FIELDS:
            x, y = getattr(sa, name), getattr(sb, name)
            assert y.shape == x.shape and np.array_equal(x, y), name
        with_sets += len(sb) > 0
        for name, x in a.arrays().items():
            assert np.array_equal(x, b.arrays()[name]), name
    assert with_sets > 10


def test_a_recorded_facet_set_run_replays_to_the_same_velocities(peg_recording):
    # The model keeps no state between steps: each loaded problem, solved again, gives
    # the velocity the run applied, to the last bits of the solve.
    sim, v_steps, path = peg_recording
    loaded, _ = load_problems(path)
    model = FacetSetModel(sim.model.settings)
    model.options.update(sim.model.options)
    for p, v_step in zip(loaded, v_steps):
        sol = model.solve(p)
        assert sol.report.certified and sol.report.fallbacks == 0
        g = p.J.T @ sol.f if sol.generalized is None else sol.generalized
        assert np.allclose(p.v_free + p.K @ g, v_step, rtol=0, atol=1e-12)


def test_compare_replays_the_facet_set_lcps(peg_recording, capsys):
    _, _, path = peg_recording
    loaded, active = load_problems(path)
    lcps = frictional_lcps(loaded, active)
    sizes = [(q.size, facets) for _, q, facets, _ in lcps]
    # n = F (lambda) + 8 F (edges) + F (sigma) + (F - S) (the c's) at most: larger than
    # the pyramid LCP of the problem's own contacts would be on the same steps.
    assert any(f > 0 for _, f in sizes)
    assert all(n <= 11 * f for n, f in sizes)
    assert main(["compare", str(path), "--methods", "robust", "lemke"]) == 0
    out = capsys.readouterr().out
    assert "robust" in out and "lemke" in out


def test_a_recording_without_facet_sets_loads_as_before(tmp_path):
    rc = main(["simulate", PEG, "--model", "pyramid", "--duration", "0.2", "--record-lcps",
               str(tmp_path / "p.npz")])
    assert rc == 0
    problems, active = load_problems(tmp_path / "p.npz")
    assert len(problems) == len(active) and problems
    assert all("facet_sets" not in p.extras for p in problems)


def test_simulate_records_one_count_per_facet_set_problem(tmp_path):
    # Steps whose sets are all pruned still record their problem (no solve): the counts
    # stay aligned with the problems.
    rc = main(["simulate", PEG, "--duration", "0.2", "--record-lcps", str(tmp_path / "f.npz")])
    assert rc == 0
    problems, active = load_problems(tmp_path / "f.npz")
    assert len(problems) == len(active) and problems
    assert all(isinstance(p.extras["facet_sets"], FacetSets) for p in problems)


def test_a_recording_computes_its_contact_tables_in_batches_with_the_same_forces():
    # The recorder leaves the steps' contact tables (their force distribution) to batches
    # of LATER_STEPS steps; the run it records is, bit for bit, that of another simulator
    # of the same scene whose tables are read after each step (the motion does not depend
    # on the forces being read): the humanoid's sole points under min_norm, across three
    # batches and the rows left waiting at the end
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.recording import LATER_STEPS, RunRecorder

    scene = "config/humanoid_stand.yaml"
    recorded, read = Simulator.from_file(scene), Simulator.from_file(scene)
    links = tuple(recorded.scene.output.wrench_links)
    rec = RunRecorder(links, recorded.joint_names)
    steps = 3 * LATER_STEPS + 5
    tables, totals, wrenches = [], [], []
    for _ in range(steps):
        rec.add(recorded, recorded.step())
        read.step()
        table, total, wrench = read.contact_table(links)
        tables.append(table)
        totals.append(total)
        wrenches.append(wrench)
    assert len(rec._later) > 0  # (some steps still wait: arrays() computes them)
    out = rec.arrays()
    assert np.all(out["contact_count"] > 0)
    np.testing.assert_array_equal(out["contact_count"], [len(t) for t in tables])
    both = np.concatenate(tables)
    for name, cols in zip(RunRecorder.CONTACT_COLUMNS, (slice(0, 3), slice(3, 6),
                                                        slice(6, 9), 9, 10)):
        np.testing.assert_array_equal(out[name], both[:, cols])
    np.testing.assert_array_equal(out["contact_force_total"], np.array(totals))
    for i, link in enumerate(links):
        np.testing.assert_array_equal(out[f"wrench/{link}"], np.array(wrenches)[:, i])
    np.testing.assert_allclose(rec.column_sum("contact_force_total"), np.sum(totals, axis=0),
                               rtol=1e-12)


def test_recorded_forces_and_wrenches_are_the_contacts_sums():
    # The recording's total contact force on the robots and its link wrenches equal the
    # sums over the step's contacts, each read on its own (a hand holding a box: robot
    # links against the box and each other, so both sides of a contact count).
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.recording import RunRecorder

    sim = Simulator.from_file("config/grasp.yaml")
    links = {n for r in sim.world.robots for n in r.link_names}
    wrench_links = sorted(links)[:3]
    rec = RunRecorder(wrench_links, sim.joint_names)
    for _ in range(40):
        rec.add(sim, sim.step())
    contacts = sim.contacts()
    assert any(c.body_a in links or c.body_b in links for c in contacts)
    total = np.zeros(3)
    for c in contacts:
        total += c.force_W * ((c.body_b in links) - (c.body_a in links))
    np.testing.assert_allclose(rec.last("contact_force_total"), total, rtol=1e-12,
                               atol=1e-9)
    arrays = rec.arrays()
    for link in wrench_links:
        np.testing.assert_array_equal(arrays[f"wrench/{link}"][-1], sim.link_wrench(link))


def test_recorded_joint_rows_are_the_joint_state_and_the_applied_torques():
    # The recorder's joint rows (one compiled read when no joint is continuous) are, bit
    # for bit, the joints' coordinates in q and v and the torques the servos applied over
    # the step, each read on its own: before any step (no torque yet) and after each of a
    # grasp's steps (servos against a box)
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file("config/grasp.yaml")
    assert not sim._joint_positions.any_continuous
    idx_q = np.concatenate([r.idx_q for r in sim.world.robots])
    idx_v = np.concatenate([r.idx_v for r in sim.world.robots])
    for step in range(5):
        position, velocity, effort = sim.joint_arrays()
        np.testing.assert_array_equal(position, sim.q[idx_q])
        np.testing.assert_array_equal(velocity, sim.v[idx_v])
        np.testing.assert_array_equal(effort, sim.applied_torques()[idx_v])
        assert step == 0 or np.any(effort != 0.0)
        sim.step()


def test_contacts_are_those_of_a_last_step_and_none_before_one():
    # Before a first step (and after a body is moved) the contact forces are not known:
    # `stepped` says so, and the views give no contacts rather than a stale or made-up
    # set (the node publishes ~/contacts only when stepped).
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.entities import set_pose_and_twist

    sim = Simulator.from_file("config/box_on_plane.yaml")
    assert not sim.stepped and sim.contacts() == []
    sim.step()
    assert sim.stepped and sim.contacts()
    name = sim.scene.bodies[0].name
    set_pose_and_twist(sim, name, twist=np.zeros(6))
    assert not sim.stepped and sim.contacts() == []


class _FakeRun:
    """What a RunRecorder reads of a simulator and a step, without physics: a 30-dof
    state, eight contacts and two wrench links a step, every value a function of the
    step so that a recording can be checked row by row."""

    joint_names = [f"j{i}" for i in range(12)]

    def __init__(self):
        self.i = 0

    def step(self):
        from types import SimpleNamespace

        self.i += 1
        self.q = np.full(31, float(self.i))
        self.v = -self.q[:30]
        return SimpleNamespace(t=1e-3 * self.i, max_penetration=1e-6 * self.i,
                               num_contacts=8, num_active=self.i % 9,
                               lcp_status=("SOLVED", "NO_CONTACT")[self.i % 2],
                               pivots=self.i % 5, lcp_method="robust",
                               lcp_rungs="warm:certified" if self.i % 3 else "",
                               report=SimpleNamespace(failures=0), fallbacks=self.i % 2)

    def contact_table(self, links):
        return self.contact_table_later(links)()

    def contact_table_later(self, links):
        i = self.i  # (the step's: the recorder calls it later)

        def table():
            table = np.arange(88.0).reshape(8, 11) + i
            return table, table[:, 6:9].sum(axis=0), np.full((len(links), 6), float(i))
        return table

    def joint_arrays(self):
        return np.full(12, 0.5 * self.i), np.zeros(12), np.ones(12)


def test_a_spooled_recording_holds_constant_memory_and_writes_the_same_run(
        tmp_path, monkeypatch):
    # With a spool folder the recorder keeps at most BLOCK steps in memory (the rest is
    # in files without names there), so a run of hours cannot fill the memory; the file
    # it writes and the arrays it gives are those of a recorder that keeps everything.
    import os
    import tracemalloc

    import contact_lcp.sim.recording as recording

    monkeypatch.setattr(recording, "BLOCK", 100)
    kept = recording.RunRecorder(["a", "b"], _FakeRun.joint_names)
    spooled = recording.RunRecorder(["a", "b"], _FakeRun.joint_names, spool=tmp_path)
    fake = _FakeRun()
    steps = 2037
    grown = {}
    tracemalloc.start()
    try:
        for rec in (kept, spooled):
            fake.i = 0
            for _ in range(150):  # (one block packed, 50 steps as Python rows)
                rec.add(fake, fake.step())
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(steps - 150):  # (19 more blocks packed, 37 steps as rows)
                rec.add(fake, fake.step())
            grown[rec is spooled] = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # kept: a packed step is ~1.2 kB (q, v, 8 contacts, joints, wrenches); spooled: at
    # most the 19 blocks' bookkeeping, an (offset, dtype, rows) tuple for each of 20
    # columns, ~120 B each (the Python rows' lists are reused, not grown)
    assert grown[False] > 1000 * (steps - 150)
    assert grown[True] < 19 * 20 * 120, grown
    assert len(spooled) == len(kept) == steps and len(spooled.rows["t"]) <= 100
    assert os.listdir(tmp_path) == []  # (nameless files)
    kept.save(tmp_path / "kept.npz")
    spooled.save(tmp_path / "spooled.npz")
    with np.load(tmp_path / "kept.npz") as a, np.load(tmp_path / "spooled.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            assert a[name].dtype == b[name].dtype and np.array_equal(a[name], b[name]), name
        np.testing.assert_array_equal(a["t"], 1e-3 * np.arange(1, steps + 1))
        np.testing.assert_array_equal(a["contact_count"], np.full(steps, 8))
        np.testing.assert_array_equal(a["wrench/b"][:, 0], np.arange(1.0, steps + 1))
        np.testing.assert_array_equal(a["contact_point"][8 * 1000 + 3],
                                      np.arange(33.0, 36.0) + 1001)
        assert list(a["lcp_rungs"][:3]) == ["warm:certified", "warm:certified", ""]
    np.testing.assert_array_equal(spooled.arrays()["q"][:, 0], np.arange(1.0, steps + 1))
    spooled.close()
