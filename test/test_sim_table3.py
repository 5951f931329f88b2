"""The ``contact-lcp table3`` command and the bundled chain scenes it runs."""

import pytest

from contact_lcp.cli import main
from contact_lcp.sim import load_scene
from contact_lcp.sim.table3 import PUBLISHED, bundled_scenes, format_rows, published_row


def test_hoist_and_net_are_bundled_with_loops_where_closed():
    scenes = bundled_scenes()
    assert {"hoist", "net"} <= set(scenes)
    net = load_scene(scenes["net"])
    assert len(net.loops) == 4 and len(net.robots) == 4 and len(net.bodies) == 5
    assert load_scene(scenes["hoist"]).loops == ()


def test_table3_prints_our_rows_next_to_the_seed(capsys):
    assert main(["table3", "hoist", "net", "--duration", "0.02"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["scene", "duration", "contacts"]
    assert any(line.startswith("hoist ") for line in lines)
    assert any(line.startswith("net [S1]") and "9.72" in line for line in lines)


def test_table3_rejects_an_unknown_scene(capsys):
    assert main(["table3", "pulley"]) == 2
    assert "unknown scene" in capsys.readouterr().err


def test_published_rows():
    assert published_row("ring")["lcp_ms"] == pytest.approx(35.0)
    assert published_row("disks_21") is None
    assert "hoist (10 ms) [S1]" in format_rows([published_row("hoist (10 ms)")])
    assert set(PUBLISHED) == {"hoist", "hoist (10 ms)", "ring", "net"}


@pytest.mark.parametrize("name", ["hoist", "ring", "net", "disks_21"])
def test_every_bundled_scene_runs_a_few_steps_without_failures(name):
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.table3 import run_scene

    path = bundled_scenes()[name]
    h = Simulator.from_file(path).h
    row = run_scene(path, duration=5 * h)
    assert row["frames"] == 5 and row["failure"] == 0 and row["fallbacks"] == 0


def test_disks_21_end_on_the_tabletop_without_failures():
    # Anitescu & Hart (S3 section 3): after 20 s (h = 0.05 s, mu = 0.2) "all disks are
    # separated, and they are all in contact with the tabletop". Ours holds the second
    # half and not the first (benchmarks/bench_disks_21.py --seeds 0 1 2 3 4 5 6 7 8 9):
    # - All 21 disks end on the table (centre within 1 cm, 0.3 % of the radius, of its
    #   height on the table), in each of ten seeds of the pile's 0.25 mm jitter, with the
    #   walls at 60 degrees (the paper gives no slope; at 45 degrees one disk was rolling
    #   up each wall at t = 20 s in each seed).
    # - GAP to the paper: not all separated. 8-14 pairs touch at t = 20 s (ten seeds), in
    #   rows that roll at one speed. The paper's own model makes these rows: an impact is
    #   plastic and a rolling disk meets no resistance, so a disk that catches up with
    #   another rolls on against it (test_sim_disks: the pair never parts). Not the scene
    #   (8-15 touching pairs with the walls at 70-300 or 20-60 degrees; 9-12 with walls
    #   never reached, so the rows form in the collapse itself), not the stabilisation
    #   (gamma = 0, or uncapped as the paper's: the same rows at 45 degrees), not the
    #   activation (the paper's epsilon = 0.3: 10-15). Only the relaxed model separates
    #   them (0-6 touching pairs; all separated and on the table in 4 of 10 seeds at 45
    #   degrees, at the cost of overlaps of 0.08-0.29 and energy gains of up to 5e-5 per
    #   step): its -mu lambda coupling opens a sliding contact, and two disks rolling side
    #   by side slide past each other at 2 v where they touch. S3 ran this example with
    #   the LCP model.
    # Physics checked on every step: zero failures and fallbacks; the mechanical energy
    # never grows (the scheme only dissipates: plastic impacts, sliding, and the
    # first-order step loses m g^2 h^2 / 2 per step of free flight), up to round-off
    # (1e-9 of the initial potential energy; measured <= 5e-15); the deepest overlap on
    # the geometry stays below 0.05, a sixtieth of the radius (measured 0-0.01 over ten
    # seeds). ~2 s: the disks collide as spheres (exact), not as coal's cylinders.
    import numpy as np

    from contact_lcp.sim import Simulator
    from contact_lcp.sim.disks import DENSITY, RADIUS, gaps

    sim = Simulator.from_file(bundled_scenes()["disks_21"])
    names = [f"disk_{k}/disk" for k in range(1, 22)]
    m = DENSITY * np.pi * RADIUS ** 2  # unit thickness
    g = -sim.scene.gravity[2]

    def centres():
        sim.world.forward(sim.q)
        return np.array([sim.world.frame_placement(n)[[0, 2], 3] for n in names])

    def energy(P):
        v = sim.v.reshape(21, 3)
        return (0.5 * m * np.sum(v[:, :2] ** 2) + 0.25 * m * RADIUS ** 2 * np.sum(v[:, 2] ** 2)
                + m * g * np.sum(P[:, 1] - RADIUS))

    E = E0 = energy(centres())
    deepest = 0.0
    for _ in range(int(round(sim.scene.duration / sim.h))):
        info = sim.step()
        assert info.fallbacks == 0
        P = centres()
        E, E_before = energy(P), E
        assert E <= E_before + 1e-9 * E0, (sim.t, E - E_before)
        support, pairs = gaps(P)
        deepest = max(deepest, -support.min(), -pairs.min())
    assert sim.stats.lcp_failures == 0
    assert deepest < 0.05
    assert E < 0.05 * E0  # measured 1.4-1.6 %: the rows still roll at ~2 m/s
    support, pairs = gaps(P)
    np.testing.assert_allclose(support[0], 0.0, atol=0.01)  # every disk on the table
    assert pairs.min() > -1e-3


def test_table3_runs_the_chain_scenes_by_default_not_the_hours_long_brazil_nut(monkeypatch):
    from contact_lcp.sim import table3

    ran = []
    monkeypatch.setattr(table3, "run_scene", lambda path, **kw: ran.append(path) or {
        "scene": path, "failure": 0, "fallbacks": 0})
    monkeypatch.setattr(table3, "format_rows", lambda rows: "")
    assert main(["table3"]) == 0
    assert [p.rsplit("/", 1)[-1] for p in ran] == [f"{n}.yaml" for n in table3.DEFAULT_SCENES]
