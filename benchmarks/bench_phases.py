#!/usr/bin/env python3
"""Where the two largest kernels of a step spend their time, read by the CPU's cycle counter.

Usage::

    .venv/bin/python benchmarks/bench_phases.py                       # three scenes, ~3 min
    .venv/bin/python benchmarks/bench_phases.py --scenes go1_stand --steps 2000

``first_rung`` (:mod:`contact_lcp.contact.pyramid_warm`) solves a standing robot's or a
resting stack's step in one compiled call, and ``collide``
(:mod:`contact_lcp.collision.closed_forms`) is its collision stage; they are the largest
kernels of those steps. A profiler sees each as one opaque call, and valgrind's counts
(``bench_instructions.py``) say how many instructions they run, not where their time
goes. This copies the package into a temporary folder, inserts reads of the cycle counter
(``llvm.readcyclecounter``) between their phases (``first_rung`` with the island solve
it inlines, ``_warm_island``: the gather of the island's rows, the LCP's assembly, the
equilibration, the basis block's inverse, the principal pivots, the block's condition
check, the verdict; ``collide``: the placements, the near pairs, the closed forms, the
contact arrays), and runs each scene from that copy, with a numba cache of its own (the
counters' addresses are compiled into the kernels), for ``--settle`` steps and then
``--steps`` counted ones. The source is never changed: a probe whose anchor line is not
found stops the run and names the line.

Reported per call, in microseconds (cycles over the counter's rate, measured against
``time.perf_counter`` at the start): each phase, their sum (the time inside the kernel),
the call's time measured from Python, and their difference, the crossing (numba's
dispatch: the arguments' types and unboxing, the returned arrays' boxing); for
``first_rung`` the basis's size before and after the block inverse
(variables left out as numerically dependent), the principal pivots that followed
(``flips``) and the LCP's size; for ``collide`` the near pairs. A probe costs a few
cycles, so the phases sum to a little more than the uninstrumented kernel takes. CSV in
``benchmarks/results/``.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SCENES = ("go1_stand", "talos_stand", "tower_5")

#: the counters: one int64 slot per phase or count, added to by the probes
_PROBE = '''
import numpy as np
import llvmlite.ir as ir
from numba.core import cgutils, types
from numba.extending import intrinsic

SLOTS = np.zeros(64, dtype=np.int64)
_ADDRESS = SLOTS.ctypes.data


@intrinsic
def cycles(typingctx):
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), []), "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@intrinsic
def add(typingctx, slot, value):
    def codegen(context, builder, signature, args):
        base = builder.inttoptr(ir.Constant(ir.IntType(64), _ADDRESS),
                                ir.PointerType(ir.IntType(64)))
        p = builder.gep(base, [args[0]])
        builder.store(builder.add(builder.load(p), args[1]), p)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen
'''

#: (slot, phase name) of the time slots, in the order of a call
PHASES = ((10, "rung_angles"), (0, "island_gather"), (1, "island_assemble"),
          (2, "island_basis"), (3, "island_equilibrate"), (4, "island_block_inverse"),
          (5, "island_pivots"), (6, "island_condition"), (7, "island_verdict"),
          (8, "island_impulses"), (11, "rung_islands_other"), (12, "rung_next_guess"))
#: count slots: solved calls, block candidates, kept, flips, LCP rows
SOLVED, CANDIDATES, KEPT, FLIPS, ROWS = 13, 30, 31, 16, 17
#: (slot, phase name) of ``collide``'s time slots, and its count slots: calls, near pairs
COLLIDE_PHASES = ((40, "collide_placements"), (41, "collide_near_pairs"),
                  (42, "collide_closed_forms"), (43, "collide_contact_arrays"))
COLLIDE_CALLS, NEAR = 44, 45


def _tick(slot, indent="    "):
    return f"{indent}_t1 = _probe_cycles(); _probe_add({slot}, _t1 - _t0); _t0 = _t1\n"


def _around(anchor, before="", after=""):
    """An edit: ``anchor`` with ``before`` and ``after`` it."""
    return anchor, before + anchor + after


#: ``first_rung``'s return when it solved the step
_RETURN_SOLVED = ("    return (0, f, z, nb, solves, keep.shape[0], keep.shape[0] - loaded, a, b, lam,\n"
                  "            friction_directions(f, R, mu, angle, inside), angle, factors)")

#: per file, the function whose body is edited and its edits ``(anchor, replacement)``:
#: each anchor must occur once after the function's ``def`` line
_EDITS = {
    "contact/pyramid_kernel.py": ("def _warm_island(", [
        _around("    k = mu.shape[0]\n    m = keep.shape[0]\n    l = lim.shape[0]\n",
                "    _t0 = _probe_cycles()\n"),
        _around("    M, q = _assemble(Gs, us, mus, bs, m, l, d, cos, sin)\n", _tick(0), _tick(1)),
        _around("    big, rows, carried = np.empty(0), np.empty(0), False\n", _tick(2)),
        _around("    capacity = min(n, nb + max_flips)\n", _tick(3)),
        _around("    X, nb = _bordered_inverse(M, d1, d2, cols, slot, K, np.int64(nb), singular_tol, "
                "capacity)\n", f"    _probe_add({CANDIDATES}, nb)\n", f"    _probe_add({KEPT}, nb)\n"),
        _around("    for i in range(n):\n        in_k[i] = False\n", _tick(4)),
        _around("    if nb:  # the final block", _tick(5) + f"    _probe_add({FLIPS}, flips)\n"),
        _around("    for i in range(n):\n        z[i] = zs[i] * s * d2[i]\n", _tick(6)),
        _around("    if not ok:\n        return 4, z, w, err, tol, nb + flips, in_k, d1, d2\n", _tick(7)),
        _around("    return 0, z, w, err, tol, nb + flips, in_k, d1, d2\n",
                _tick(8) + f"    _probe_add({ROWS}, n)\n"),
    ]),
    "collision/closed_forms.py": ("def collide(", [
        _around("    if fk:\n        X = tree_pass(q, *tree)\n", "    _t0 = _probe_cycles()\n"),
        _around("    near = near_pairs(", _tick(40)),
        _around("    P, R, d, pair, rest = closed_forms(", _tick(41)),
        _around("    k = pair.shape[0]\n    a = np.empty(k, dtype=np.int64)\n", _tick(42)),
        _around("    return X, near, P, R, d, a, b, joint_a, joint_b, mu, rest\n",
                _tick(43) + f"    _probe_add({COLLIDE_CALLS}, 1)\n"
                f"    _probe_add({NEAR}, near.shape[0])\n"),
    ]),
    "contact/pyramid_warm.py": ("def first_rung(", [
        _around("    k, l = pair.shape[0], J_limits.shape[0]\n    none_b", "    _t0 = _probe_cycles()\n"),
        _around("    grown_a, grown_keep, solves, nb, tol = basic_a, keep, 0, 0, 0.0\n", _tick(10)),
        _around("    if code:\n        return (code, f, z, nb, solves, keep.shape[0], 0,", _tick(11)),
        # (the next guess's directions before the last reading: the return computes them)
        (_RETURN_SOLVED, "    _dirs = friction_directions(f, R, mu, angle, inside)\n" + _tick(12)
         + f"    _probe_add({SOLVED}, 1)\n"
         + _RETURN_SOLVED.replace("friction_directions(f, R, mu, angle, inside)", "_dirs")),
    ]),
}


def instrumented_copy(folder):
    """The package copied into ``folder`` with the probes inserted; ValueError naming
    the anchor when one is not found once after its function's ``def``."""
    dst = os.path.join(folder, "contact_lcp")
    shutil.copytree(os.path.join(ROOT, "contact_lcp"), dst,
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(dst, "_phase_probe.py"), "w") as f:
        f.write(_PROBE)
    for rel, (function, edits) in _EDITS.items():
        path = os.path.join(dst, rel)
        with open(path) as f:
            text = f.read()
        start = text.find(function)
        if start < 0:
            raise ValueError(f"bench_phases: {rel} has no {function!r}")
        head, body = text[:start], text[start:]
        for anchor, replacement in edits:
            if body.count(anchor) != 1:
                raise ValueError(f"bench_phases: {rel} after {function!r} has "
                                 f"{body.count(anchor)} copies of the anchor {anchor!r}, "
                                 "expected one: update _EDITS to the kernel's code")
            body = body.replace(anchor, replacement)
        imports = ("from contact_lcp._phase_probe import add as _probe_add, "
                   "cycles as _probe_cycles\n")
        with open(path, "w") as f:
            f.write(imports + head + body)
    return folder


#: the child: the counter's rate, settle, counted steps; one JSON line on stdout
_CHILD = r"""
import json, sys, time
sys.path.insert(0, {bench!r})
import one_thread
sys.path.insert(0, {copy!r})
from numba import njit
from contact_lcp._phase_probe import SLOTS, cycles
import contact_lcp.collision.detector as detector
import contact_lcp.contact.pyramid as pyramid
from contact_lcp.sim import Simulator

@njit
def read():
    return cycles()

read()
t0, c0 = time.perf_counter(), read()
time.sleep(0.2)
c1, t1 = read(), time.perf_counter()
rate = (c1 - c0) / (t1 - t0)
sim = Simulator.from_file({scene!r})
for _ in range({settle}):
    sim.step()
spent = {{}}

def timed(module, name):
    kernel, got = getattr(module, name), spent.setdefault(name, [0.0, 0])

    def call(*args):
        t = time.perf_counter()
        out = kernel(*args)
        got[0] += time.perf_counter() - t
        got[1] += 1
        return out

    setattr(module, name, call)

timed(pyramid, "first_rung")
timed(detector, "collide")
SLOTS[:] = 0
for _ in range({steps}):
    sim.step()
print(json.dumps({{"rate": rate, "slots": SLOTS.tolist(), "spent": spent}}))
"""


def measure(copy, scene, settle, steps, cache):
    """One scene's counters from the instrumented ``copy`` (a child process)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, CONTACT_LCP_COMPILE_AHEAD="0")
    code = _CHILD.format(bench=HERE, copy=copy, scene=os.path.join(ROOT, "config", scene + ".yaml"),
                         settle=settle, steps=steps)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"bench_phases: {scene} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def row_of(scene, got):
    """The CSV row of one scene's counters: microseconds and counts per call (the calls
    that missed too: their phases until the miss; ``solved`` counts the others)."""
    s = got["slots"]
    seconds, calls = got["spent"]["first_rung"]
    per_call = max(calls, 1)
    us = 1e6 / got["rate"] / per_call
    row = {"scene": scene, "calls": calls, "solved": s[SOLVED], "counter_ghz": got["rate"] / 1e9}
    island = sum(s[slot] for slot in range(9))
    for slot, name in PHASES:
        # (slot 11 spans the island solves: its own part is what they leave)
        row[name + "_us"] = (s[slot] - (island if slot == 11 else 0)) * us
    row["kernel_us"] = (s[10] + s[11] + s[12]) * us
    row["python_timed_us"] = 1e6 * seconds / per_call
    row["crossing_us"] = row["python_timed_us"] - row["kernel_us"]
    seconds, calls = got["spent"]["collide"]
    per = 1e6 / got["rate"] / max(s[COLLIDE_CALLS], 1)
    for slot, name in COLLIDE_PHASES:
        row[name + "_us"] = s[slot] * per
    row["collide_kernel_us"] = sum(s[slot] for slot, _ in COLLIDE_PHASES) * per
    row["collide_python_timed_us"] = 1e6 * seconds / max(calls, 1)
    row["collide_crossing_us"] = row["collide_python_timed_us"] - row["collide_kernel_us"]
    row["near_pairs"] = s[NEAR] / max(s[COLLIDE_CALLS], 1)
    for slot, name in ((CANDIDATES, "block_candidates"), (KEPT, "block_kept"), (FLIPS, "flips"),
                       (ROWS, "lcp_rows")):
        row[name] = s[slot] / per_call
    return row


COLUMNS = (("scene", "calls", "solved") + tuple(name + "_us" for _, name in PHASES)
           + ("kernel_us", "python_timed_us", "crossing_us", "block_candidates", "block_kept",
              "flips", "lcp_rows") + tuple(name + "_us" for _, name in COLLIDE_PHASES)
           + ("collide_kernel_us", "collide_python_timed_us", "collide_crossing_us", "near_pairs",
              "counter_ghz", "revision", "date"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", nargs="+", default=list(SCENES))
    ap.add_argument("--settle", type=int, default=300)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--results-dir", default=None)
    args = ap.parse_args(argv)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_phases_") as folder:
        copy = instrumented_copy(folder)
        for scene in args.scenes:  # (each with a cache of its own: see the module notes)
            got = measure(copy, scene, args.settle, args.steps, os.path.join(folder, "cache_" + scene))
            rows.append(dict(row_of(scene, got), revision=revision, date=date))
            r = rows[-1]
            print(f"{scene}: first_rung {r['python_timed_us']:.1f} us a call, "
                  f"{r['kernel_us']:.1f} inside; collide {r['collide_python_timed_us']:.1f}, "
                  f"{r['collide_kernel_us']:.1f} inside", flush=True)
    path = common.write_csv(common.results_path("bench_phases", revision, stamp, args.results_dir),
                            rows, COLUMNS)
    shown = ["scene", "kernel_us", "crossing_us"] + [name + "_us" for _, name in PHASES] + [
        "block_candidates", "block_kept", "flips", "lcp_rows"]
    print(common.format_table(rows, shown))
    shown = ["scene", "collide_kernel_us", "collide_crossing_us"] + [
        name + "_us" for _, name in COLLIDE_PHASES] + ["near_pairs"]
    print(common.format_table(rows, shown))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
