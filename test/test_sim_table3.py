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
    # half up to the chaos of the run and not the first:
    # - The pile comes apart: every disk ends on the table or rolling on a wall (gap below
    #   1 cm, 0.3 % of the radius), none on another disk; at least 19 of 21 on the table
    #   (19, one disk rolling on each wall, for the bundled pile and for each of ten seeds
    #   of its 0.25 mm jitter; 19-21 with a 0.9 mm jitter: a disk rolling at ~2 m/s spends
    #   ~0.9 s of each visit on a 45-degree wall).
    # - GAP to the paper: not all separated. 10-15 pairs touch at t = 20 s (ten seeds) in
    #   rows that roll at one speed. The paper's own model makes these rows: an impact is
    #   plastic and a rolling disk meets no resistance, so a disk that catches up with
    #   another stays against it (test_sim_disks: the pair rolls on together, forever).
    #   Not the scene (the same rows with walls at 70-300, slopes 20-60 degrees, gapped or
    #   jittered piles), not the stabilisation (gamma = 0, or uncapped as the paper's),
    #   not the activation (the paper's epsilon = 0.3 without look-ahead or re-solve). Only
    #   the relaxed model separates them (0-4 touching pairs): its -mu lambda coupling
    #   opens a sliding contact, and two disks rolling side by side slide at 2 v where
    #   they touch.
    # Physics checked on every step: zero failures and fallbacks; the mechanical energy
    # never grows (the scheme only dissipates: plastic impacts, sliding, and the
    # first-order step loses m g^2 h^2 / 2 per step of free flight), up to round-off
    # (1e-9 of the initial potential energy; measured 3e-16); the deepest overlap on the
    # geometry stays below 0.05, a sixtieth of the radius (measured 0-0.01 over ten
    # seeds). 1.4 s: the disks collide as spheres (exact), not as coal's cylinders.
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
    assert E < 0.05 * E0  # measured 1.6-2.3 %: the rows still roll at ~2 m/s
    support, pairs = gaps(P)
    on_support = support.min(axis=0)  # the table's or a wall's gap per disk
    np.testing.assert_allclose(on_support, 0.0, atol=0.01)
    assert np.count_nonzero(np.abs(P[:, 1] - RADIUS) < 0.01) >= 19
    assert pairs.min() > -1e-3
