"""A step's instructions and cache misses by library, counted by valgrind (no timing noise).

Usage::

    .venv/bin/python benchmarks/bench_instructions.py                  # the four scenes, ~8 min
    .venv/bin/python benchmarks/bench_instructions.py --scenes talos_stand --steps 100

Timings of one step on a shared machine vary by a few microseconds from run to run, more
than a change to the Python between the stages saves, and a step's time also depends on
what ran before it (its code and data fetched again). This counts instead, for each scene,
what ``--steps`` steps after ``--settle`` steps execute, under valgrind's callgrind with
its cache simulation (``--l1`` KiB first-level instruction and data caches, an ``--l2``
KiB second level, 64-byte lines): instructions, first-level instruction and data misses
and second-level misses per step, split by where the code lives:

* ``python``: the interpreter (``libpython``) running the stages' Python;
* ``kernels``: the compiled numba kernels (code without a file: numba's JIT);
* ``numba_rt``: numba's dispatcher and runtime (the crossings into and out of kernels);
* ``numpy``, ``pinocchio`` (with eigenpy and Boost.Python), ``blas``, ``libc`` (allocation,
  copies) and ``other``.

The counts are deterministic for a given build and scene: two runs of one commit agree to
a fraction of a per cent, so a change that removes Python from a step shows as fewer
``python`` instructions even when its time is lost in the noise. What a miss costs in time
is the machine's: the counts say where the work is, not how long it takes.

Needs ``valgrind`` and a C compiler with ``valgrind/callgrind.h`` (the steps are marked by
callgrind's client requests from a tiny library compiled at the start). Valgrind's CPU
lacks AVX-512, so numba compiles the kernels for it apart (minutes on the first run; they
are cached beside the machine's own): the counts are those of that build, close to but not
the machine's, and its rounding can take a step down another path. A kernel loaded while
the steps are counted is reported and left out of the totals (its Python is not: a
longer ``--settle`` gets past it). CSV in ``benchmarks/results/``. Its smoke test
(``test/test_bench_instructions_smoke.py``) counts a few humanoid steps when
``CONTACT_LCP_VALGRIND_TESTS=1`` (the build for valgrind's CPU takes minutes on a fresh
clone's cold cache, longer than the rest of the suite).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SCENES = ("talos_stand", "go1_stand", "humanoid_stand", "tower_5")
GROUPS = ("python", "kernels", "numba_rt", "numpy", "pinocchio", "blas", "libc", "other")
EVENTS = ("ir", "i1_miss", "l2i_miss", "d1_miss", "l2d_miss")
COLUMNS = (("scene", "steps", "l1_kib", "l2_kib")
           + tuple(f"{e}_per_step" for e in EVENTS)
           + tuple(f"{g}_{e}" for g in GROUPS for e in ("ir", "i1_miss"))
           + ("python_share", "revision", "date", "load1"))

#: the marks around the counted steps (callgrind's client requests)
_MARKS = r"""
#include <valgrind/callgrind.h>
void marks_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION;
                         CALLGRIND_TOGGLE_COLLECT; }
void marks_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS;
                        CALLGRIND_STOP_INSTRUMENTATION; }
"""

#: the child: settle, one more step (anything loaded lazily), then the counted steps
_CHILD = r"""
import ctypes, sys
sys.path.insert(0, {bench!r})
import one_thread
sys.path.insert(0, {root!r})
from contact_lcp.sim import Simulator
marks = ctypes.CDLL({lib!r})
sim = Simulator.from_file({scene!r})
for _ in range({settle} + 1):
    sim.step()
marks.marks_start()
for _ in range({steps}):
    sim.step()
marks.marks_stop()
"""

#: what the objects' names say about their group, checked in order
_OBJECTS = (("python", re.compile(r"libpython|Python-3\.|python-build")),
            ("numba_rt", re.compile(r"numba/|_nrt_python|_helperlib|_dispatcher")),
            ("numpy", re.compile(r"numpy/")),
            ("pinocchio", re.compile(r"pinocchio|eigenpy|boost_python|coal")),
            ("blas", re.compile(r"openblas|lapack")),
            ("libc", re.compile(r"libc\.so|libm\.so|/malloc/|/string/|sysdeps|ld-linux")),
            ("kernels", re.compile(r"^\[\?\?\?\]$|^\?\?\?:0x")),
            ("numba_compile", re.compile(r"llvmlite|libLLVM")))


def _group(function, obj):
    """The group of a function line of callgrind_annotate (``function`` its
    ``file:function``, ``obj`` its ``[object]`` or empty)."""
    for name, pattern in _OBJECTS:
        if pattern.search(obj) or (name != "kernels" and pattern.search(function)):
            return name
    if not obj and function.startswith("???:0x"):
        return "kernels"
    return "other"


def build_marks(folder):
    """Compile the marks library into ``folder``; its path (RuntimeError with the
    compiler's message when there is no compiler or no ``valgrind/callgrind.h``)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("bench_instructions needs a C compiler (cc or gcc) for its "
                           "callgrind marks; none found")
    src, lib = os.path.join(folder, "marks.c"), os.path.join(folder, "libmarks.so")
    with open(src, "w") as f:
        f.write(_MARKS)
    done = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib, src],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError("bench_instructions could not compile its callgrind marks "
                           f"(valgrind/callgrind.h is in valgrind's development files): "
                           f"{done.stderr.strip()}")
    return lib


def count(scene, steps, settle, l1_kib, l2_kib, folder, lib):
    """Per-step events of ``scene`` by group: ``{group: {event: count}}`` and the totals
    (under ``"total"``), from one callgrind run."""
    out = os.path.join(folder, f"cg_{scene}")
    child = _CHILD.format(bench=HERE, root=ROOT, lib=lib, settle=settle, steps=steps,
                          scene=os.path.join(ROOT, "config", scene + ".yaml"))
    l1, l2 = f"{l1_kib * 1024},8,64", f"{l2_kib * 1024},16,64"
    # the ROS wheels' bootstrap re-executes the interpreter (for its library path) unless
    # told it ran: the simulator needs none of ROS, and valgrind would lose the child
    env = dict(os.environ, _ROS_WHEELS_BOOTSTRAP_COMPLETE="1")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--I1={l1}", f"--D1={l1}",
         f"--LL={l2}", "--instr-atstart=no", "--collect-atstart=no",
         f"--callgrind-out-file={out}.%p", sys.executable, "-c", child],
        capture_output=True, text=True, env=env)
    dumps = [os.path.join(folder, n) for n in os.listdir(folder)
             if n.startswith(f"cg_{scene}.") and re.search(r"\.\d+\.\d+$", n)]
    if done.returncode or not dumps:
        raise RuntimeError(f"callgrind on {scene} failed (exit {done.returncode}): "
                           f"{done.stderr.strip()[-2000:]}")
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100",
         "--show=Ir,I1mr,ILmr,D1mr,DLmr", dumps[0]], capture_output=True, text=True,
        check=True).stdout
    return _by_group(annotated, steps)


def _by_group(annotated, steps):
    """Sum callgrind_annotate's function lines (five event columns, then ``file:function``
    and possibly ``[object]``) by group, per step."""
    table = {g: dict.fromkeys(EVENTS, 0.0) for g in GROUPS + ("numba_compile",)}
    started = False
    for line in annotated.splitlines():
        if line.rstrip().endswith("file:function"):
            started = True
            continue
        if not started:
            continue
        line = re.sub(r"\(\s*[0-9.]+%\)", "", line).replace(",", "")
        parts = line.split()
        if len(parts) < 6 or not all(p.isdigit() or p == "." for p in parts[:5]):
            continue
        rest = " ".join(parts[5:])
        found = re.search(r"(\[[^\]]*\])\s*$", rest)
        obj = found.group(1) if found else ""
        function = rest[:found.start()].strip() if found else rest
        g = _group(function, obj)
        for e, value in zip(EVENTS, parts[:5]):
            table[g][e] += 0.0 if value == "." else float(value) / steps
    table["total"] = {e: sum(table[g][e] for g in GROUPS) for e in EVENTS}
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", nargs="+", default=list(SCENES))
    parser.add_argument("--steps", type=int, default=200, help="steps counted")
    parser.add_argument("--settle", type=int, default=1000)
    parser.add_argument("--l1", type=int, default=32, help="first-level caches [KiB]")
    parser.add_argument("--l2", type=int, default=1024, help="second-level cache [KiB]")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("bench_instructions needs valgrind (with callgrind_annotate); not found",
              file=sys.stderr)
        return 2
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        lib = build_marks(folder)
        for scene in args.scenes:
            table = count(scene, args.steps, args.settle, args.l1, args.l2, folder, lib)
            row = {"scene": scene, "steps": args.steps, "l1_kib": args.l1, "l2_kib": args.l2,
                   "revision": revision, "date": date, "load1": os.getloadavg()[0]}
            row.update({f"{e}_per_step": table["total"][e] for e in EVENTS})
            row.update({f"{g}_{e}": table[g][e] for g in GROUPS for e in ("ir", "i1_miss")})
            row["python_share"] = table["python"]["ir"] / max(table["total"]["ir"], 1.0)
            rows.append(row)
            print(f"{scene}: {table['total']['ir']:,.0f} instructions a step, "
                  f"{table['total']['i1_miss']:,.0f} first-level instruction misses; "
                  + ", ".join(f"{g} {table[g]['ir']:,.0f}/{table[g]['i1_miss']:,.0f}"
                              for g in GROUPS), flush=True)
            if table["numba_compile"]["ir"] > 0.01 * table["total"]["ir"]:
                print(f"  (numba loaded or compiled kernels while {scene}'s steps were "
                      f"counted: {table['numba_compile']['ir']:,.0f} instructions a step "
                      "left out; run again for the steady state)", flush=True)
    print(common.write_csv(common.results_path("bench_instructions", revision, stamp,
                                               args.results_dir), rows, COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
