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


@pytest.mark.slow
def test_disks_21_end_on_the_tabletop_without_failures():
    # Anitescu & Hart: after 20 s (h = 0.05 s, mu = 0.2) every disk rests on the tabletop.
    # (They also report all disks separated; ours end in contact in rows along the walls,
    # still rolling: that part is not asserted.) Tolerance: a disk is on the table when
    # its centre is within 5 cm of r = 3 (the penetration stays below 0.1 m during the
    # collapse and is pushed out afterwards).
    import numpy as np

    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(bundled_scenes()["disks_21"])
    for _ in range(int(round(sim.scene.duration / sim.h))):
        info = sim.step()
        assert info.fallbacks == 0
    assert sim.stats.lcp_failures == 0
    sim.world.forward(sim.q)
    z = [sim.world.frame_placement(f"disk_{k}/disk")[2, 3] for k in range(1, 22)]
    np.testing.assert_allclose(z, 3.0, atol=0.05)
