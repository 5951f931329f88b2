"""The Brazil-nut shaker (Anitescu & Hart, S3 section 4): the bundled scene and short runs
of smaller versions of it (the full run is ``benchmarks/bench_brazil_nut.py``)."""

import numpy as np
import pytest

from contact_lcp.sim import Simulator, load_scene
from contact_lcp.sim.brazil_nut import (
    BUNDLED, BUNDLED_SMALL, FRICTION, GRAIN_RADII, INNER_WIDTH, LARGE_RADIUS, WALL_HEIGHT,
    container_width, disk_radius, grain_radius, grain_urdf_name, initial_centres, scene_yaml)
from contact_lcp.sim.disks import DENSITY, THICKNESS
from contact_lcp.sim.scene import package_share_dir
from contact_lcp.sim.table3 import bundled_scenes

URDF = package_share_dir() / "urdf"


def small_scene(tmp_path, num_small, duration, **shaking):
    """A scene file of the generator's layout with ``num_small`` grains."""
    path = tmp_path / "nut.yaml"
    path.write_text(scene_yaml(num_small, duration, urdf_dir=URDF, **shaking))
    return str(path)


def disk_mass(r):
    return DENSITY * np.pi * r ** 2 * THICKNESS


def test_bundled_scenes_are_the_generated_ones():
    for name, args in BUNDLED.items():
        with open(package_share_dir() / "config" / name) as f:
            assert f.read() == scene_yaml(**args), name
    scene = load_scene(bundled_scenes()["brazil_nut"])
    assert scene.time_step == pytest.approx(0.1) and scene.duration == pytest.approx(75.0)
    assert scene.contact.model == "relaxed" and scene.contact.friction == FRICTION
    assert scene.ground is None
    assert len(scene.robots) == BUNDLED_SMALL + 2  # the shaker, the nut, the grains


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_initial_layout_does_not_overlap(scale):
    large, small = initial_centres(BUNDLED_SMALL, INNER_WIDTH, max(GRAIN_RADII) * scale)
    r = np.array([grain_radius(k, scale) for k in range(len(small))])
    d = np.linalg.norm(small[:, None] - small[None], axis=2) - (r[:, None] + r[None])
    assert d[np.triu_indices(len(small), 1)].min() > 0
    assert (np.linalg.norm(small - large, axis=1) - r - LARGE_RADIUS).min() > 0
    assert (np.abs(small[:, 0]) + r).max() < 0.5 * INNER_WIDTH
    assert (small[:, 1] - r).min() > 0
    assert np.allclose(sorted(set(r)), scale * np.array(sorted(GRAIN_RADII)))
    assert (small[:, 1] + r).max() < WALL_HEIGHT  # no grain starts above the walls


def _heights(sim, n):
    sim.world.forward(sim.q)
    floor = sim.world.frame_placement("box")[2, 3]
    nut = sim.world.frame_placement("nut/disk")[[0, 2], 3]
    grains = np.array([sim.world.frame_placement(f"grain_{k}/disk")[[0, 2], 3]
                       for k in range(1, n + 1)])
    return floor, nut, grains


def test_a_resting_pile_weighs_on_the_container(tmp_path):
    # Without shaking the pile collapses from its grid (grains stacked upright are unstable
    # and fall off each other within ~10 s at h = 0.1 s) and comes to rest (to within a
    # slow roll); the container
    # then carries exactly the disks' weight m g. Tolerance 1 %: at rest the relaxed
    # model's sticking contacts give the standard model's forces (measured: 1e-4).
    n = 12
    sim = Simulator.from_file(small_scene(tmp_path, n, 15.0, amplitude=0.0, sway=(0.0, 1.0)))
    for _ in range(150):
        info = sim.step()
        assert info.fallbacks == 0
    assert sim.stats.lcp_failures == 0
    assert np.abs(sim.v).max() < 1e-2  # grains may still roll slowly (no rolling resistance)
    on_box = sum((-c.force_W if c.body_a == "box" else c.force_W) for c in sim.contacts()
                 if "box" in (c.body_a, c.body_b))
    weight = 9.81 * (disk_mass(LARGE_RADIUS) + sum(disk_mass(grain_radius(k)) for k in range(n)))
    assert on_box[2] == pytest.approx(-weight, rel=0.01)
    assert abs(on_box[0]) < 0.01 * weight


def test_shaken_grains_stay_apart_and_inside_the_container(tmp_path):
    # 5 s of the bundled shaking (vertical and sideways, peak accelerations 4 g and 2.4 g)
    # with 12 grains: the disks fly up to ~13 m/s relative to the container, yet no two
    # overlap and none leaves it. Measured on the geometry (centres and radii): overlaps
    # 0 between disks and 2e-6 with the container; tolerance 1 cm, 1 % of a grain's
    # radius (with Pinocchio's planar joint the grains overlapped by 0.39).
    n = 12
    sim = Simulator.from_file(small_scene(tmp_path, n, 5.0))
    names = ["nut/disk"] + [f"grain_{k}/disk" for k in range(1, n + 1)]
    r = np.array([LARGE_RADIUS] + [grain_radius(k) for k in range(n)])
    deepest_pair = deepest_wall = 0.0
    for _ in range(50):
        info = sim.step()
        assert info.fallbacks == 0
        sim.world.forward(sim.q)
        box = sim.world.frame_placement("box")[[0, 2], 3]
        P = np.array([sim.world.frame_placement(nm)[[0, 2], 3] for nm in names]) - box
        gaps = np.linalg.norm(P[:, None] - P[None], axis=2) - (r[:, None] + r[None])
        deepest_pair = max(deepest_pair, -gaps[np.triu_indices(n + 1, 1)].min())
        deepest_wall = max(deepest_wall, (np.abs(P[:, 0]) + r - 0.5 * INNER_WIDTH).max(),
                           (r - P[:, 1]).max())
    assert sim.stats.lcp_failures == 0
    assert deepest_pair < 0.01 and deepest_wall < 0.01


def test_geometry_read_back_from_the_urdfs():
    # (the benchmark measures overlaps with the radii and the width it reads from the scene)
    assert container_width(URDF / "brazil_shaker.urdf") == pytest.approx(INNER_WIDTH)
    assert disk_radius(URDF / "disk_3.urdf") == pytest.approx(LARGE_RADIUS)
    for r in (0.4, 0.45, 0.5, 0.55, 0.6, 0.8, 1.2):
        assert disk_radius(URDF / grain_urdf_name(r)) == pytest.approx(r)
