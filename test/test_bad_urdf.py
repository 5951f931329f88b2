"""URDFs and collision geometry that cannot crash the process (issue 35, items 1 and 7).

Each bad URDF is refused with a SceneError naming the link or joint, the element and
the value, through the library loader and through ``contact-lcp simulate`` (non-zero
exit, no traceback, no signal); a flat mesh is a legal shape that rests on the ground.
The node's side (a crashing description over ROS) is in test_bad_urdf_ros.py.
"""

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from contact_lcp.dynamics.loading import load_robot
from contact_lcp.dynamics.meshes import FLAT, SLAB, check_mesh
from contact_lcp.dynamics.specs import RobotSpec
from contact_lcp.exceptions import SceneError

ROOT = Path(__file__).resolve().parents[1]
INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" '
            'iyz="0" izz="0.007"/></inertial>')
SQUARE = [((-0.1, -0.1, 0.0), (0.1, -0.1, 0.0), (0.1, 0.1, 0.0)),
          ((-0.1, -0.1, 0.0), (0.1, 0.1, 0.0), (-0.1, 0.1, 0.0))]


def binary_stl(path, triangles):
    """Write ``triangles`` (each 3 points) as a binary STL; return the path."""
    with open(path, "wb") as f:
        f.write(b"\0" * 80 + struct.pack("<I", len(triangles)))
        for tri in triangles:
            f.write(struct.pack("<3f", 0.0, 0.0, 0.0))
            for p in tri:
                f.write(struct.pack("<3f", *p))
            f.write(b"\0\0")
    return str(path)


def ascii_stl(path, triangles):
    """Write ``triangles`` as an ASCII STL; return the path."""
    lines = ["solid t"]
    for tri in triangles:
        lines += ["facet normal 0 0 0", "outer loop"]
        lines += [f"vertex {x} {y} {z}" for x, y, z in tri]
        lines += ["endloop", "endfacet"]
    Path(path).write_text("\n".join(lines + ["endsolid t"]) + "\n")
    return str(path)


def cube_triangles(h=0.05):
    v = [(x, y, z) for x in (-h, h) for y in (-h, h) for z in (-h, h)]
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
             (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    return [tuple(v[i] for i in f) for f in faces]


def one_link(collision, inertial=INERTIAL):
    return (f'<robot name="r"><link name="base">{inertial}<collision>{collision}</collision>'
            '</link></robot>')


def two_links(joint, kind="revolute"):
    link = '<link name="{}">' + INERTIAL + '<collision><geometry><box size="0.1 0.1 0.1"/>' \
           '</geometry></collision></link>'
    return (f'<robot name="r">{link.format("a")}{link.format("b")}<joint name="j" '
            f'type="{kind}"><parent link="a"/><child link="b"/>{joint}</joint></robot>')


LIMIT = '<limit lower="-1" upper="1" effort="5" velocity="2"/>'


def meshes(tmp_path):
    return {"square": binary_stl(tmp_path / "square.stl", SQUARE),
            "cube": ascii_stl(tmp_path / "cube.stl", cube_triangles()),
            "line": binary_stl(tmp_path / "line.stl", [((0, 0, 0), (1, 0, 0), (2, 0, 0)),
                                                       ((0, 0, 0), (0.5, 0, 0), (2, 0, 0))])}


def mesh(path, scale=None):
    s = f' scale="{scale}"' if scale is not None else ""
    return f'<geometry><mesh filename="{path}"{s}/></geometry>'


# (name, URDF of the tmp meshes, words the message must contain); each one crashed the
# process (SIGSEGV in coal's hull), loaded a robot without its collision shape (urdfdom
# dropped it), or ran with a nonsense value at the start of this branch.
def bad_urdfs(m):
    return [
        ("zero scale", one_link(mesh(m["cube"], "0 0 0")),
         ["link 'base'", "<mesh>", "scale='0 0 0'", "non-zero"]),
        ("flattening scale", one_link(mesh(m["cube"], "1 1 0")),
         ["link 'base'", "scale='1 1 0'"]),
        ("NaN scale", one_link(mesh(m["cube"], "nan 1 1")), ["link 'base'", "scale='nan 1 1'"]),
        ("collinear mesh", one_link(mesh(m["line"])),
         ["link 'base'", "line.stl", "lie on one line"]),
        ("NaN collision origin",
         one_link('<origin xyz="nan 0 0"/><geometry><box size="1 1 1"/></geometry>'),
         ["link 'base' <collision> #1 <origin>", "xyz='nan 0 0'", "finite"]),
        ("NaN box size", one_link('<geometry><box size="nan 1 1"/></geometry>'),
         ["link 'base'", "<box>", "size='nan 1 1'", "> 0"]),
        ("zero box size", one_link('<geometry><box size="0 1 1"/></geometry>'),
         ["<box>", "size='0 1 1'", "> 0"]),
        ("negative cylinder", one_link('<geometry><cylinder radius="0.1" length="-1"/>'
                                       '</geometry>'), ["<cylinder>", "length='-1'", "> 0"]),
        ("zero sphere", one_link('<geometry><sphere radius="0"/></geometry>'),
         ["<sphere>", "radius='0'"]),
        ("dropped capsule", one_link('<geometry><capsule radius="0.1" length="0.2"/>'
                                     '</geometry>'),
         ["link 'base': 1 <collision> element(s) in the URDF, 0 loaded"]),
        ("lower > upper", two_links('<axis xyz="0 0 1"/><limit lower="1" upper="-1" '
                                    'effort="5" velocity="2"/>'),
         ["joint 'j'", "lower='1' upper='-1'", "lower <= upper"]),
        ("zero axis", two_links('<axis xyz="0 0 0"/>' + LIMIT),
         ["joint 'j' (revolute)", "xyz='0 0 0'", "not all zero"]),
        ("NaN axis", two_links('<axis xyz="nan 0 1"/>' + LIMIT), ["joint 'j'", "'nan 0 1'"]),
        ("NaN limit", two_links('<axis xyz="0 0 1"/><limit lower="nan" upper="1" effort="5" '
                                'velocity="2"/>'), ["joint 'j'", "lower='nan'", "finite"]),
        ("negative velocity", two_links('<axis xyz="0 0 1"/><limit lower="-1" upper="1" '
                                        'effort="5" velocity="-2"/>'),
         ["joint 'j'", "velocity='-2'", ">= 0"]),
        ("NaN damping", two_links('<axis xyz="0 0 1"/>' + LIMIT + '<dynamics damping="nan"/>'),
         ["joint 'j'", "<dynamics damping='nan'>", ">= 0"]),
        ("NaN joint origin", two_links('<origin xyz="0 0 inf"/><axis xyz="0 0 1"/>' + LIMIT),
         ["joint 'j' <origin>", "xyz='0 0 inf'"]),
        ("NaN inertial origin", one_link('<geometry><box size="1 1 1"/></geometry>',
                                         INERTIAL.replace("<mass", '<origin rpy="0 nan 0"/>'
                                                          "<mass")),
         ["link 'base' <inertial> <origin>", "rpy='0 nan 0'"]),
    ]


CASES = [c[0] for c in bad_urdfs({"square": "", "cube": "", "line": ""})]


@pytest.mark.parametrize("mode", ["convex", "exact"])
@pytest.mark.parametrize("case", CASES)
def test_a_bad_urdf_is_a_scene_error_naming_the_culprit(case, mode, tmp_path):
    name, urdf, words = next(c for c in bad_urdfs(meshes(tmp_path)) if c[0] == case)
    with pytest.raises(SceneError) as e:
        load_robot(RobotSpec("r", urdf_string=urdf), mode)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.parametrize("case", ["zero scale", "flattening scale", "NaN box size",
                                  "lower > upper", "zero axis"])
def test_the_cli_refuses_a_bad_urdf_without_traceback_or_signal(case, tmp_path):
    name, urdf, words = next(c for c in bad_urdfs(meshes(tmp_path)) if c[0] == case)
    (tmp_path / "bad.urdf").write_text(urdf)
    (tmp_path / "scene.yaml").write_text(
        "time_step: 0.001\nduration: 0.01\nrobots:\n  - {name: r, urdf: bad.urdf, "
        "base_pose: [0, 0, 0.2, 0, 0, 0, 1]}\n")
    run = subprocess.run([sys.executable, "-m", "contact_lcp.cli", "simulate",
                          str(tmp_path / "scene.yaml")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode > 0, (run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr, run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)


def test_a_degenerate_point_set_is_named():
    with pytest.raises(SceneError, match="coincide"):
        check_mesh(np.ones((5, 3)), 2, "mesh m")
    with pytest.raises(SceneError, match="2 vertex"):
        check_mesh(np.eye(3)[:2], 0, "mesh m")
    with pytest.raises(SceneError, match="non-finite"):
        check_mesh(np.array([[0, 0, 0], [1, 0, 0], [0, np.nan, 0.0]]), 1, "mesh m")
    tilted = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]]) @ np.array(
        [[1, 0, 0], [0, 0.6, 0.8], [0, -0.8, 0.6]])
    assert check_mesh(tilted, 2, "mesh m") == "flat"
    lifted = tilted + np.array([[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0.1]])
    assert check_mesh(lifted, 2, "mesh m") == "solid"


@pytest.mark.parametrize("writer", [binary_stl, ascii_stl])
def test_a_flat_mesh_loads_as_a_thin_slab_or_as_its_triangles(writer, tmp_path):
    path = writer(tmp_path / "square.stl", SQUARE)
    urdf = one_link(mesh(path))
    hull = load_robot(RobotSpec("r", urdf_string=urdf), "convex").geom.geometryObjects[0].geometry
    P = np.array(hull.points(), dtype=float)
    assert hull.num_points == 8
    np.testing.assert_allclose(np.ptp(P, axis=0), [0.2, 0.2, SLAB * 0.2 * np.sqrt(2)],
                               rtol=1e-6)
    exact = load_robot(RobotSpec("r", urdf_string=urdf), "exact").geom.geometryObjects[0]
    assert exact.geometry.num_tris == 2 and FLAT > 0


@pytest.mark.parametrize("meshes", ["convex", "exact"])
def test_a_body_on_a_flat_mesh_rests_on_the_ground(meshes, tmp_path):
    """A 1 kg plate whose only collision shape is a flat two-triangle STL, dropped from
    2 cm: it lands and stays on the ground, on the slab's lower face (convex) or on its
    triangles (exact). Before: SIGSEGV while loading (convex)."""
    from contact_lcp.sim import Simulator, scene_from_dict

    path = binary_stl(tmp_path / "square.stl", SQUARE)
    (tmp_path / "plate.urdf").write_text(one_link(mesh(path)))
    scene = scene_from_dict({
        "time_step": 0.002, "duration": 0.4, "ground": {"height": 0.0, "friction": 0.8},
        "contact": {"meshes": meshes},
        "robots": [{"name": "plate", "urdf": "plate.urdf",
                    "base_pose": [0, 0, 0.02, 0, 0, 0, 1]}]}, base_dir=str(tmp_path))
    sim = Simulator(scene)
    for _ in range(200):
        sim.step()
    base = sim.base_state(0)
    half = 0.5 * SLAB * 0.2 * np.sqrt(2) if meshes == "convex" else 0.0  # lower face
    assert abs(base.pose[2] - half) < 1e-3, base.pose
    assert np.linalg.norm(base.twist) < 1e-2, base.twist


FUZZ = """
import sys, numpy as np, coal
from contact_lcp.dynamics.meshes import _hull, check_mesh
from contact_lcp.exceptions import SceneError
counts = {"rejected": 0, "flat": 0, "solid": 0}
for seed in range(300):
    rng = np.random.default_rng(seed)
    # squashed along 0, 1 or 2 of random orthogonal axes by 1e-12 to 1e-3: towards a
    # plane or a line; a tenth of them towards a point
    squash = [1.0] + [10.0 ** -rng.uniform(3, 12) if rng.random() < 0.5 else 1.0
                      for _ in range(2)]
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    P = (rng.normal(size=(int(rng.integers(3, 40)), 3)) * squash) @ Q
    P *= 10.0 ** (rng.uniform(-4, 3) if rng.random() > 0.1 else -14)
    P += rng.normal(size=3) * 10.0 ** rng.uniform(-3, 3)
    m = coal.BVHModelOBBRSS(); m.beginModel(0, 0); m.addVertices(P)
    m.addTriangles(np.array([[0, 1, 2]])); m.endModel()
    try:
        kind = check_mesh(P, 1, "mesh")
        _hull(m, P, kind, "mesh")
        counts[kind] += 1
    except SceneError:
        counts["rejected"] += 1
print(counts)
"""


def test_near_degenerate_point_sets_are_refused_or_hulled_never_a_crash():
    """Random point sets squashed towards planes, lines and points (qhull crashes the
    process below ~1e-8 relative thickness), in a child process so that a crash fails
    this test rather than ending the test run."""
    run = subprocess.run([sys.executable, "-c", FUZZ], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    counts = eval(run.stdout.strip().splitlines()[-1])
    assert min(counts.values()) > 0, counts  # every outcome was exercised
