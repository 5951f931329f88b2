"""Build the ROS 2 interface packages that PyPI has no wheel of, into this environment
(and the package's own messages, ``contact_lcp_msgs``).

The node publishes ``/tf`` (``tf2_msgs``), serves FollowJointTrajectory (``control_msgs``)
and the simulation_interfaces services; a ROS installation has those packages, a pip-only
environment does not. Their definitions ship in ``contact_lcp/ros/idl/`` (the kilted
releases' fields and constants, so a stock ROS peer computes the same type hashes) and
:func:`build` generates and installs each one with ``rosidl_generate_interfaces`` from the
``ros-kilted-rosidl-*`` wheels, CMake and the C/C++ compiler, into ``sys.prefix``.

A package that imports and was not built here (a ROS installation's own) is left alone;
one built here is rebuilt when its definitions change. Where a tool is missing the build
is skipped and :func:`missing` tells the node which interface is absent and why.

Run as ``python -m contact_lcp.ros.interfaces [build|status] [--jobs N]`` (the
set-up commands in the README run ``build``).
"""

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

#: the packages, in build order, and the import that shows each one is there
PACKAGES = {
    "tf2_msgs": "tf2_msgs.msg",
    "control_msgs": "control_msgs.action",
    "simulation_interfaces": "simulation_interfaces.srv",
    "contact_lcp_msgs": "contact_lcp_msgs.msg",  # our own: per-contact messages
}
IDL_DIR = Path(__file__).resolve().parent / "idl"
#: what each built package records beside its share/ files: the definitions' digest
STAMP = "contact_lcp_idl_digest"
#: why the last build of each package failed or was skipped (read by :func:`missing`)
STATUS_FILE = "share/contact_lcp_interfaces/status.json"
MIN_CMAKE = (3, 16)


def digest(package):
    """sha256 over the package's definition files and the shared CMake fix-ups."""
    h = hashlib.sha256()
    files = sorted(p for p in (IDL_DIR / package).rglob("*") if p.is_file())
    for path in files + [IDL_DIR / "wheel_fixups.cmake"]:
        h.update(path.relative_to(IDL_DIR).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _importable(package):
    try:
        return importlib.util.find_spec(PACKAGES[package]) is not None
    except (ImportError, ValueError):
        return False


def _stamp_path(prefix, package):
    return Path(prefix) / "share" / package / STAMP


def origin(package, prefix=None):
    """``"built"`` (by :func:`build`, current), ``"stale"`` (built from older
    definitions), ``"ros"`` (importable, not built here) or None (absent)."""
    stamp = _stamp_path(prefix or sys.prefix, package)
    if stamp.is_file():
        current = stamp.read_text().strip() == digest(package)
        return "built" if current and _importable(package) else "stale"
    return "ros" if _importable(package) else None


def _cmake():
    """Path of a CMake >= 3.16, or a reason string (starting with "no ")."""
    exe = shutil.which("cmake")
    if exe is None:
        return "no cmake on PATH (CMake >= 3.16 is needed)"
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"version (\d+)\.(\d+)", out)
    if m is None or (int(m.group(1)), int(m.group(2))) < MIN_CMAKE:
        return f"no CMake >= 3.16 ({exe} reports {out.splitlines()[0] if out else 'nothing'})"
    return exe


def prerequisites(prefix=None):
    """Reasons the build cannot run here (empty: it can)."""
    prefix = Path(prefix or sys.prefix)
    reasons = []
    cmake = _cmake()
    if cmake.startswith("no "):
        reasons.append(cmake)
    for tool, names in (("C compiler", ("cc", "gcc", "clang")),
                        ("C++ compiler", ("c++", "g++", "clang++"))):
        if not any(shutil.which(n) for n in names):
            reasons.append(f"no {tool} ({' or '.join(names)}) on PATH")
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        reasons.append(f"no Python headers (Python.h) in {include} (install python3-dev)")
    if not (prefix / "share" / "rosidl_default_generators").is_dir():
        reasons.append(f"no rosidl_default_generators in {prefix}/share (pip install "
                       "contact_lcp[ros] installs the ros-kilted-rosidl-* wheels)")
    return reasons


def _env(prefix):
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    ament = [str(prefix)] + [p for p in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(dict.fromkeys(ament))
    return env


def _build_one(package, prefix, jobs, log):
    """Configure, build and install one package; raises CalledProcessError on failure."""
    env = _env(prefix)
    with tempfile.TemporaryDirectory(prefix=f"contact_lcp_{package}_") as build_dir:
        def run(args):
            subprocess.run(args, cwd=build_dir, env=env, check=True, stdout=log,
                           stderr=subprocess.STDOUT)
        run([_cmake(), str(IDL_DIR / package), f"-DCMAKE_INSTALL_PREFIX={prefix}",
             f"-DCMAKE_PREFIX_PATH={prefix}", f"-DPython3_EXECUTABLE={sys.executable}",
             "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release"])
        run([_cmake(), "--build", ".", "--parallel", str(jobs)])
        run([_cmake(), "--install", "."])
    _stamp_path(prefix, package).write_text(digest(package) + "\n")


def _write_status(prefix, status):
    path = Path(prefix) / STATUS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(status, indent=1, sort_keys=True))
    os.replace(tmp, path)


def build(prefix=None, jobs=None, echo=print):
    """Build every package of :data:`PACKAGES` that is absent or stale.

    Returns ``{package: outcome}`` with outcome ``"built"``, ``"current"``, ``"ros"`` or
    ``"skipped: <reason>"`` / ``"failed: <reason>"``; the reasons also go to the status
    file that :func:`missing` reads.
    """
    prefix = Path(prefix or sys.prefix)
    jobs = jobs or os.cpu_count() or 1
    outcomes, status = {}, {}
    todo = []
    for package in PACKAGES:
        where = origin(package, prefix)
        if where in ("built", "ros"):
            outcomes[package] = "current" if where == "built" else "ros"
        else:
            todo.append(package)
    reasons = prerequisites(prefix) if todo else []
    for package in todo:
        if reasons:
            outcomes[package] = "skipped: " + "; ".join(reasons)
            status[package] = outcomes[package]
            continue
        echo(f"[interfaces] building {package} into {prefix} (rosidl, cmake -j{jobs})")
        log_path = prefix / "share" / "contact_lcp_interfaces" / f"{package}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(log_path, "w") as log:
                _build_one(package, prefix, jobs, log)
        except (subprocess.CalledProcessError, OSError) as exc:
            outcomes[package] = f"failed: {exc}; the build's output is in {log_path}"
            status[package] = outcomes[package]
            continue
        importlib.invalidate_caches()
        outcomes[package] = "built"
    _write_status(prefix, status)
    return outcomes


def missing(package, prefix=None):
    """Why ``package`` cannot be imported, in a sentence for a log line (None: it can)."""
    if _importable(package):
        return None
    path = Path(prefix or sys.prefix) / STATUS_FILE
    try:
        why = json.loads(path.read_text()).get(package)
    except (OSError, ValueError):
        why = None
    how = "python -m contact_lcp.ros.interfaces build"
    if why:
        return f"{package} is not installed: its build {why} (retry: {how})"
    return f"{package} is not installed and was not built here (build it: {how})"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m contact_lcp.ros.interfaces",
        description="Build the ROS 2 interface packages PyPI has no wheel of "
                    f"({', '.join(PACKAGES)}) into this environment.")
    parser.add_argument("action", nargs="?", default="build", choices=("build", "status"))
    parser.add_argument("--jobs", type=int, default=None, help="parallel compile jobs")
    args = parser.parse_args(argv)
    if args.action == "status":
        for package in PACKAGES:
            print(f"{package}: {origin(package) or missing(package)}")
        return 0
    outcomes = build(jobs=args.jobs, echo=lambda s: print(s, file=sys.stderr))
    for package, outcome in outcomes.items():
        if outcome.startswith(("skipped", "failed")):
            print(f"[interfaces] {package}: {outcome}; the node runs without it",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
