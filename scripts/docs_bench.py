"""The benchmark pages, generated from ``benchmarks/results/*.csv``.

A result file is named ``<benchmark>_<UTC stamp>_<commit>[-dirty][_<tag>].csv``; the
newest file of each benchmark is shown as a table (the columns chosen in :data:`KINDS`),
with its commit, date and the machine's load where the CSV has it, and the older files
are listed. Measurement history lives in those files and in git; nothing here is typed.
Used by ``scripts/docs_hooks.py`` and ``test/test_docs.py``.
"""

import csv
import io
import math
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MACHINE = ("the development machine: 2 cores shared with other work, one BLAS thread "
           "(benchmarks/README.md)")
NAME = re.compile(r"^(?P<kind>.+?)_(?P<stamp>\d{8}T\d{6}Z)_(?P<rev>[0-9a-f]{7,40})"
                  r"(?P<dirty>-dirty)?(?:_(?P<tag>[A-Za-z0-9_]+))?\.csv$")

#: benchmark -> (title, command, columns shown, row filter or None)
KINDS = {
    "bench_sim": ("Simulation speed against MuJoCo, Drake, DART and PyBullet",
                  "benchmarks/bench_sim.py",
                  ["section", "name", "engine", "scene", "version", "time_step", "step_us",
                   "rtf", "force_ratio", "drift_mm", "collision_us", "dynamics_us",
                   "lcp_build_us", "solve_us", "integrate_us", "other_us"], None),
    "bench_stacks": ("Towers, box pyramids and the sphere pile", "benchmarks/bench_stacks.py",
                     ["scene", "h", "steps", "step_ms", "median_step_ms", "rtf", "solves",
                      "pivots", "failures", "fallbacks", "safe_stops", "uncertified",
                      "deepest_mm", "last_basis_steps"], None),
    "bench_scenes": ("Every bundled scene for its whole duration: failures and the slowest "
                     "step", "benchmarks/bench_scenes.py",
                     ["scene", "h", "steps", "wall_s", "step_ms", "slowest_ms", "slowest_t",
                      "slowest_rungs", "failures", "fallbacks", "safe_stops", "uncertified",
                      "stopped"], None),
    "bench_large": ("Large scenes: 200-sphere pour, 201-disk Brazil nut",
                    "benchmarks/bench_large.py",
                    ["scene", "step", "t", "ms", "contacts", "active", "pivots", "status",
                     "failures", "peak_rss_mb"], None),
    "bench_large_peers": ("Large scenes in MuJoCo too: the same pours, side by side",
                          "benchmarks/bench_large.py SCENE:SECONDS --peers mujoco",
                          ["scene", "engine", "version", "status", "steps", "wall_s",
                           "engine_penetration", "our_penetration", "pile_height", "notes"],
                          None),
    "bench_fidelity": ("Physical fidelity against closed forms (and MuJoCo)",
                       "benchmarks/bench_fidelity.py",
                       ["group", "case", "quantity", "reference", "ours_error", "mujoco_error"],
                       None),
    "lcp": ("LCP methods and peers on random contact LCPs", "benchmarks/bench_lcp.py",
            ["set", "variant", "total", "success", "median_ms", "p95_ms", "mean_pivots",
             "lied", "false_fail", "max_residual"], None),
    "lcp-scenes": ("LCP methods on LCPs recorded from the stack and pile scenes",
                   "benchmarks/bench_lcp.py --scenes DIR",
                   ["scene", "index", "n", "variant", "status", "certified", "ms", "pivots"],
                   None),
    "lcp-sweep": ("Verdicts under rescaling (αM, βq)", "benchmarks/bench_lcp.py --scenes DIR",
                  ["scene", "index", "n", "method", "scaling", "same_verdict", "false_success"],
                  None),
    "bench_drumwright": ("Viscous and no-slip contact (S4)", "benchmarks/bench_drumwright.py",
                         ["section", "scene", "name", "contacts", "dofs", "lcp_size", "step_us",
                          "solve_us", "collision_us", "pivots_mean", "pivots_max", "slip_max",
                          "failures"], None),
    "relaxed": ("Relaxed model: velocity QP against the LCP path (S3)",
                "benchmarks/bench_relaxed.py",
                ["scene", "path", "solver", "problems", "solved", "median_ms", "max_ms",
                 "worst_dv", "mean_size"], None),
    "bench_facet_set": ("Facet sets against the pyramid (S5)", "benchmarks/bench_facet_set.py",
                        ["scene", "model", "time_step", "steps", "step_median_ms", "solves",
                         "failed_solves", "fallbacks", "lowest_z", "tilt_deg", "max_tilt_deg"],
                        None),
    "bench_brazil_nut": ("The Brazil nut (S3)", "benchmarks/bench_brazil_nut.py",
                         ["t", "nut_height", "grains_above_nut", "grains", "contacts", "deepest",
                          "failures", "fallbacks", "step_ms"], None),
    "bench_disks_21": ("21 disks on a table (S3)", "benchmarks/bench_disks_21.py",
                       ["variant", "seed", "on_table", "on_wall", "touching_pairs",
                        "energy_left", "max_step_gain", "deepest", "failures", "fallbacks"],
                       None),
    "bench_forces": ("What reading the contact forces costs a step",
                     "benchmarks/bench_forces.py",
                     ["scene", "force_distribution", "forces_read", "ms_per_step", "compiled",
                      "qp", "unique", "moved"], None),
    "bench_energy": ("Energy drift of a closed loop", "benchmarks/bench_energy.py",
                     ["system", "h", "duration", "max_error", "final_error", "loop_drift"], None),
    "hard_lcps": ("The pour's hardest recorded LCPs", "benchmarks/bench_hard_lcps.py",
                  ["lcp", "n", "variant", "status", "certified", "s", "all_pivots", "paths"],
                  None),
    "pile_alternatives": ("Other routes to a settled pile's answer",
                          "benchmarks/bench_pile_alternatives.py",
                          ["variant", "parameter", "iteration", "status", "certified", "pivots",
                           "s", "hard_error_over_tol"], None),
    "bench_node": ("The node against the bare step", "benchmarks/bench_node.py",
                   ["mode", "round", "publish_rate", "rtf", "rtf_cpu", "joint_states_hz",
                    "publishing_share"], None),
    "bench_node_client": ("The node seen from a client process",
                          "benchmarks/bench_node.py --mode client",
                          ["round", "publish_rate", "publisher_process", "rtf", "cli_rtf",
                           "ratio", "joint_states_hz", "node_cpu", "load_1min"], None),
    "bench_node_soak": ("The node under random commands and parameter changes",
                        "benchmarks/bench_node.py --mode soak",
                        ["publisher_process", "t_wall", "alive", "rss_anon_kib", "nan",
                         "error_diagnostics", "commands", "accepted", "rejected"], None),
    "bench_crossing": ("What crossing into the compiled kernels costs a step",
                       "benchmarks/bench_crossing.py",
                       ["scene", "kernel", "module", "args", "python_us", "compiled_us",
                        "step_us"], None),
    "bench_glue": ("What a step spends in Python around its kernels",
                   "benchmarks/bench_glue.py",
                   ["scene", "step_us", "floor_us", "kernels_us", "pinocchio_us", "glue_us",
                    "glue_share", "compiled_us", "outside_us", "python_calls"], None),
    "bench_instructions": ("A step's instructions and cache misses by library (valgrind)",
                           "benchmarks/bench_instructions.py",
                           ["scene", "ir_per_step", "i1_miss_per_step", "d1_miss_per_step",
                            "python_ir", "python_i1_miss", "kernels_ir", "kernels_i1_miss",
                            "python_share"], None),
    "bench_phases": ("Inside the first rung and the collision kernel (cycle counter)",
                     "benchmarks/bench_phases.py",
                     ["scene", "kernel_us", "crossing_us", "island_assemble_us",
                      "island_equilibrate_us", "island_block_inverse_us", "island_verdict_us",
                      "flips", "lcp_rows", "collide_kernel_us", "collide_crossing_us"], None),
    "bench_start": ("Start-up time, with and without the kernel cache",
                    "benchmarks/bench_start.py",
                    ["section", "scene", "entry", "cache", "status", "wall_s", "load_s",
                     "step_s", "compile_s"], lambda r: r.get("section") == "run"),
    "bench_sweep": ("Parameter sweeps on Ray", "benchmarks/bench_sweep.py",
                    ["mode", "runs", "cpus", "wall_s", "per_run_s", "speedup", "ok_runs"], None),
    "bench_viewer": ("The browser viewer's cost", "benchmarks/bench_viewer.py",
                     ["lib", "repeat", "page_open", "browser", "steps_per_s", "overhead",
                      "cpu_overhead", "achieved_rtf"], None),
}
#: long raw files: summarised by their own benchmark's table (lcp) instead
SKIP = {"lcp-runs"}
MAX_ROWS = 60


def result_files():
    """``{benchmark: [(stamp, commit, dirty, tag, path)]}``, oldest first."""
    out = defaultdict(list)
    for path in sorted(RESULTS.glob("*.csv")):
        m = NAME.match(path.name)
        if m is None:
            raise ValueError(f"{path.name}: not <benchmark>_<stamp>_<commit>.csv")
        out[m["kind"]].append((m["stamp"], m["rev"], bool(m["dirty"]), m["tag"], path))
    for files in out.values():
        files.sort()
    return dict(out)


def newest(kind):
    """Path of the newest CSV of benchmark ``kind`` (None when there is none)."""
    files = result_files().get(kind)
    return files[-1][-1] if files else None


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fmt(value):
    """A CSV cell for a table: numbers to 3 significant digits."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value).replace("|", "\\|")
    if not math.isfinite(x):
        return str(value)
    if x == int(x) and abs(x) < 1e9 and "e" not in value.lower():
        return str(int(x)) if "." not in value or x == 0 else f"{x:g}"
    return f"{x:.3g}"


def table(rows, columns):
    cols = [c for c in columns if any(c in r for r in rows)]
    out = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for r in rows[:MAX_ROWS]:
        out.append("| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |")
    if len(rows) > MAX_ROWS:
        out.append(f"\n*{len(rows) - MAX_ROWS} more rows in the CSV.*")
    return "\n".join(out)


def stamp_text(stamp):
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]} UTC"


def provenance(stamp, rev, dirty, tag, rows):
    """Which commit, when and on which machine one file was measured."""
    loads = [r.get(k) for r in rows[:1] for k in ("load1", "load_1min", "load_start")
             if r.get(k) not in (None, "", "nan")]
    load = f"; load average {float(loads[0]):.2f} at the start" if loads else ""
    state = " with uncommitted changes" if dirty else ""
    partial = " (partial run)" if tag == "partial" else ""
    measured_on = next((r["machine"] for r in rows[:1] if r.get("machine")), MACHINE)
    return (f"Commit `{rev}`{state}, {stamp_text(stamp)}{partial}; machine: {measured_on}"
            f"{load}.")


def csv_link(path):
    return f"results/{path.name}"


def page_markdown():
    """The body of the benchmark results page, and the result files it links to."""
    files = result_files()
    unknown = sorted(set(files) - set(KINDS) - SKIP)
    if unknown:
        raise ValueError(f"benchmark results of no documented benchmark: {unknown} "
                         "(add them to scripts/docs_bench.py KINDS)")
    out, linked = [], []
    for kind, (title, command, columns, keep) in KINDS.items():
        if kind not in files:
            continue
        stamp, rev, dirty, tag, path = files[kind][-1]
        rows = read(path)
        if keep is not None:
            rows = [r for r in rows if keep(r)]
        linked.append(path)
        out += [f"## {title}", "",
                f"`{command}` — newest of {len(files[kind])} result files: "
                f"[`{path.name}`]({csv_link(path)}).", "",
                provenance(stamp, rev, dirty, tag, rows), ""]
        for png in sorted(RESULTS.glob(path.stem + "*.png")):
            linked.append(png)
            out += [f"![{title}]({csv_link(png)})", ""]
        out += [table(rows, columns), ""]
        older = files[kind][:-1]
        if older:
            out += ["??? note \"Earlier result files\"", ""]
            for s, r, d, t, p in reversed(older):
                out.append(f"    - `{p.name}` — commit `{r}`{' (dirty)' if d else ''}, "
                           f"{stamp_text(s)}")
            out.append("")
    return "\n".join(out), linked


ENGINES = [("contact_lcp", "contact_lcp"), ("mujoco", "MuJoCo"), ("drake", "Drake (SAP)"),
           ("dart", "DART"), ("pybullet", "PyBullet")]
SCENES = [("talos", "Talos standing, h = 1 ms"), ("go1", "Go1 standing, h = 1 ms"),
          ("tower", "5-box tower, h = 10 ms")]


def headline_markdown():
    """The README's one benchmark table: real-time factor per engine and scene, from the
    newest bench_sim CSV (its name and commit in the caption)."""
    path = newest("bench_sim")
    rows = read(path)
    rtf, versions = {}, {}
    for r in rows:
        if r.get("section") in ("ours", "peers") and r.get("status") == "ok":
            rtf[r["engine"], r["scene"]] = float(r["rtf"])
            versions[r["engine"]] = r["version"]
    head = ["scene"] + [f"{label} {versions.get(e, '')}".strip() if e != "contact_lcp"
                        else label for e, label in ENGINES]
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for scene, label in SCENES:
        cells = [f"{rtf[e, scene]:.3g}×" if (e, scene) in rtf else "–" for e, _ in ENGINES]
        out.append("| " + " | ".join([label] + cells) + " |")
    caption = ("Real-time factor (simulated seconds per wall second; higher is faster), "
               "every engine in one process on the same scenes (`benchmarks/bench_sim.py`; "
               f"the file name carries the commit and time): "
               f"[{path.name}](benchmarks/results/{path.name}).")
    return caption + "\n\n" + "\n".join(out) + "\n"


README = ROOT / "README.md"
BEGIN = "<!-- headline benchmark: python scripts/docs_bench.py --readme rewrites it -->"
END = "<!-- end of headline benchmark -->"


def readme_headline():
    """The headline block as the README has it (None when the markers are missing)."""
    text = README.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def write_readme_headline():
    """Replace the README's headline block by the one of the newest bench_sim CSV."""
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + BEGIN + "\n" + headline_markdown() + END + tail, encoding="utf-8")


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--readme"]:
        write_readme_headline()
    else:
        sys.exit("usage: python scripts/docs_bench.py --readme")


def figures():
    """``{name: png bytes}`` drawn from the CSVs: the contact models' cost (bench_drumwright)
    and the Brazil nut's rise (bench_brazil_nut, the relaxed model); and the plot the newest
    bench_sweep's sweep made (``incline_friction.png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = {}
    path = newest("bench_drumwright")
    rows = [r for r in read(path) if r.get("section") == "models"]
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    labels = [f"{r['scene']}\n{r['name']}" for r in rows]
    ax.bar(range(len(rows)), [float(r["solve_us"]) for r in rows], color="tab:blue",
           label="contact solve")
    ax.bar(range(len(rows)), [float(r["step_us"]) - float(r["solve_us"]) for r in rows],
           bottom=[float(r["solve_us"]) for r in rows], color="tab:gray", label="rest of the step")
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("median µs per step")
    ax.set_title(f"Contact models on the grasp and the standing robot ({path.name})", fontsize=8)
    ax.legend(fontsize=7)
    out["contact_models_cost.png"] = _png(fig, plt)
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for stamp, rev, dirty, tag, p in _newest_per_grains():
        rows = read(p)
        ax.plot([float(r["t"]) for r in rows], [float(r["nut_height"]) for r in rows],
                label=f"{rows[0]['grains']} grains ({p.name})")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("height of the nut")
    ax.set_title("Brazil nut, relaxed model (S3)", fontsize=8)
    ax.legend(fontsize=6)
    out["brazil_nut.png"] = _png(fig, plt)
    sweep = newest("bench_sweep")
    plot = None if sweep is None else sweep.with_name(sweep.stem + "_friction.png")
    if plot is not None and plot.is_file():  # the sweep's own plot, as the sweep made it
        out["incline_friction.png"] = plot.read_bytes()
    return out


def _newest_per_grains():
    latest = {}
    for entry in result_files().get("bench_brazil_nut", []):
        rows = read(entry[-1])
        if rows:
            latest[rows[0]["grains"]] = entry
    return [latest[k] for k in sorted(latest, key=int)]


def _png(fig, plt):
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
