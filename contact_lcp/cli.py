"""The ``contact-lcp`` command: simulate a scene, compare LCP methods on a recording, plot,
and Yamane & Nakamura's Table III for the chain scenes."""

import argparse
import sys
import time

import numpy as np

from contact_lcp.exceptions import ContactLCPError

#: the seed's Table I comparison: robust, Lemke, and lexicographic Lemke with four Δ
DEFAULT_COMPARE = ["robust", "lemke", "lexicographic:tie_threshold=0",
                   "lexicographic:tie_threshold=1e-8", "lexicographic:tie_threshold=1e-6",
                   "lexicographic:tie_threshold=1e-4"]


def parse_method(spec):
    """'name[:opt=value,...]' -> (label, name, options) with numeric option values."""
    name, _, rest = spec.partition(":")
    options = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"method option {item!r}: expected key=value")
        try:
            options[key] = int(value) if value.lstrip("-").isdigit() else float(value)
        except ValueError:
            options[key] = value
    return spec, name, options


def _progress(sim, info, wall0, last_print, end=False, t0=0.0):
    """Progress on stderr: redrawn in place on a terminal, one line a second otherwise
    (``t0``: the simulated time the run started from)."""
    now = time.perf_counter()
    tty = sys.stderr.isatty()
    if not end and now - last_print < (0.25 if tty else 1.0):
        return last_print
    rtf = (sim.t - t0) / max(now - wall0, 1e-9)
    s = sim.stats
    line = (f"t={sim.t:7.3f}s  rtf={rtf:5.2f}x  contacts={info.num_contacts:3d} "
            f"active={info.num_active:3d}  pivots={info.pivots:4d}  failures={s.lcp_failures} "
            f"fallbacks={s.fallbacks}")
    if tty:
        sys.stderr.write("\r" + line + ("\n" if end else ""))
    elif not end:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()
    return now


def cmd_simulate(args):
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.recording import RunRecorder, save_problems

    sim = Simulator.from_file(args.scene, contact_model=args.model, time_step=args.time_step)
    sim.record_problems = bool(args.record_lcps)
    active = []
    duration = sim.scene.duration if args.duration is None else args.duration
    steps = int(round(duration / sim.h))
    if args.resume:  # on from the saved time to the same end: --duration is the end time
        sim.load_state(args.resume)
        steps = max(steps - sim.stats.steps, 0)
        print(f"resumed {args.resume} at t = {sim.t:.3f} s")
    rec = RunRecorder(sim.scene.output.wrench_links, sim.joint_names)
    t0 = sim.t
    wall0 = last = time.perf_counter()
    info = None
    max_pen = 0.0
    for _ in range(steps):
        recorded = len(sim.recorded_problems)
        info = sim.step()
        max_pen = max(max_pen, info.max_penetration)
        rec.add(sim, info)
        if len(sim.recorded_problems) > recorded:  # one count per recorded problem
            active.append(int(info.report.info.get("pushing_facets", info.num_active)))
        last = _progress(sim, info, wall0, last, t0=t0)
    wall = time.perf_counter() - wall0
    if info is not None:
        _progress(sim, info, wall0, last, end=True, t0=t0)
    s = sim.stats
    # m g of the robots that stand on contacts (a fixed base carries its weight itself)
    mg = sum(sim.robot_mass(i) for i, r in enumerate(sim.world.robots)
             if r.floating_base) * np.linalg.norm(sim.scene.gravity)
    f_avg = np.mean(np.asarray(rec.rows["contact_force_total"])[:, 2]) if steps else 0.0
    summary = (f"done: {steps} steps, {sim.t - t0:.3f} s simulated in {wall:.2f} s "
               f"({(sim.t - t0) / max(wall, 1e-9):.2f}x real time); model {sim.model.name}, "
               f"{s.solves} solves, {s.pivots_total} pivots, {s.warm_starts} warm starts, "
               f"{sim.stepper.hot.hits} steps in one compiled call; "
               f"failures {s.lcp_failures}, fallbacks {s.fallbacks}, safe stops {s.safe_stops}, "
               f"uncertified steps {s.uncertified}; max penetration {1e3 * max_pen:.3f} mm"
               + (f" (moved out at {s.projections} step(s) by projection)" if s.projections else ""))
    if mg > 0:
        summary += f"; mean vertical contact force {f_avg:.1f} N vs m*g {mg:.1f} N"
    if args.resume:
        summary += (" (solves, pivots and failures counted from t = 0, as the state file "
                    "carries them)")
    print(summary)
    if args.save_state:
        sim.save_state(args.save_state)
        print(f"state at t = {sim.t:.3f} s written to {args.save_state}")
    if args.output:
        rec.save(args.output)
        print(f"run written to {args.output}")
    if args.record_lcps:
        save_problems(args.record_lcps, sim.recorded_problems, active)
        print(f"{len(sim.recorded_problems)} contact problems written to {args.record_lcps}")
    if args.plot:
        from contact_lcp.sim.plotting import plot_run

        plot_run(rec.arrays(), args.plot, title=args.scene)
        print(f"force plot written to {args.plot}")
    return 0


def compare_methods(lcps, specs):
    """Replay recorded LCPs through each method; one Table I row per method spec."""
    from contact_lcp.lcp import LCPStatus, solve

    rows = []
    contacts = np.array([c for _, _, c, _ in lcps]) if lcps else np.zeros(0)
    active = np.array([a for _, _, _, a in lcps]) if lcps else np.zeros(0)
    for spec in specs:
        label, name, opts = parse_method(spec)
        counts = {s: 0 for s in LCPStatus}
        times, pivots = [], []
        for M, q, _, _ in lcps:
            t0 = time.perf_counter()
            res = solve(M, q, name, **opts)
            times.append(time.perf_counter() - t0)
            counts[res.status] += 1
            pivots.append(res.pivots)
        rows.append({
            "method": label, "contacts": float(contacts.mean()) if lcps else 0.0,
            "active": float(active.mean()) if lcps else 0.0, "frames": len(lcps),
            "success": counts[LCPStatus.SOLVED], "failure": len(lcps) - counts[LCPStatus.SOLVED],
            "no_solution": counts[LCPStatus.NO_SOLUTION], "cycle": counts[LCPStatus.CYCLE],
            "error": counts[LCPStatus.ERROR], "max_pivots": counts[LCPStatus.MAX_PIVOTS],
            "numerical": counts[LCPStatus.NUMERICAL_FAILURE],
            "median_ms": 1e3 * float(np.median(times)) if times else 0.0,
            "mean_pivots": float(np.mean(pivots)) if pivots else 0.0,
        })
    return rows


def format_table(rows, columns):
    """Plain-text table with a header row."""
    cells = [[c for c in columns]] + [[(f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c]))
                                       for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "\n".join("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths)))
                     for row in cells)


def cmd_compare(args):
    from contact_lcp.sim.recording import frictional_lcps, load_problems

    lcps = frictional_lcps(*load_problems(args.lcps))
    rows = compare_methods(lcps, args.methods or DEFAULT_COMPARE)
    print(format_table(rows, ["method", "contacts", "active", "frames", "success", "failure",
                              "no_solution", "cycle", "error", "max_pivots", "numerical",
                              "median_ms", "mean_pivots"]))
    return 0


def cmd_plot(args):
    from contact_lcp.sim.plotting import plot_run

    with np.load(args.run, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    out = args.output or str(args.run).rsplit(".", 1)[0] + ".png"
    plot_run(data, out, title=args.run)
    print(f"plot written to {out}")
    return 0


def cmd_trace(args):
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.trace import plot_trace, trace_run, write_csv

    sim = Simulator.from_file(args.scene, contact_model=args.model)
    duration = sim.scene.duration if args.duration is None else args.duration
    data = trace_run(sim, args.body, int(round(duration / sim.h)))
    s = sim.stats
    print(f"{args.body}: lowest point z {data['z'][-1]:.4f} m, x {data['x'][-1]:.4f} m, tilt "
          f"{data['tilt_deg'][-1]:.2f} deg (max {data['tilt_deg'].max():.2f}) after "
          f"{sim.t:.3f} s; model {sim.model.name}; failures {s.lcp_failures}, fallbacks "
          f"{s.fallbacks}, safe stops {s.safe_stops}")
    if args.csv:
        write_csv(args.csv, data)
        print(f"trace written to {args.csv}")
    if args.plot:
        plot_trace(data, args.plot, title=f"{args.scene} ({sim.model.name})")
        print(f"trace plot written to {args.plot}")
    return 0


def cmd_table3(args):
    from contact_lcp.sim import table3

    available = table3.bundled_scenes()
    names = args.scenes or [n for n in available if n in table3.DEFAULT_SCENES]
    unknown = [n for n in names if n not in available and not n.endswith(".yaml")]
    if unknown:
        raise ValueError(f"unknown scene(s) {unknown}; bundled: {sorted(available)} "
                         "(or give a .yaml path)")
    rows = []
    for name in names:
        path = available.get(name, name)
        row = table3.run_scene(path, duration=args.duration, time_step=args.time_step)
        published = table3.published_row(row["scene"])
        rows += [row] + ([published] if published else [])
        print(f"{row['scene']}: done", file=sys.stderr)
    print(table3.format_rows(rows))
    return 1 if any(r["failure"] or r["fallbacks"] for r in rows if "[S1]" not in r["scene"]) else 0


def build_parser():
    p = argparse.ArgumentParser(prog="contact-lcp", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("simulate", help="run a scene headless")
    s.add_argument("scene", help="scene YAML file (e.g. config/humanoid_stand.yaml)")
    s.add_argument("--duration", type=float, help="simulated seconds (default: the scene's)")
    s.add_argument("--output", help="write the run to this .npz")
    s.add_argument("--record-lcps", help="write every step's contact problem to this .npz "
                   "(replay with 'compare', with any model or method)")
    s.add_argument("--model", help="contact model instead of the scene's (e.g. frictionless)")
    s.add_argument("--time-step", type=float, help="replace the scene's time step [s]")
    s.add_argument("--plot", help="write the contact-force plot to this .png")
    s.add_argument("--save-state", metavar="FILE",
                   help="write the simulator's state at the end to FILE (for --resume)")
    s.add_argument("--resume", metavar="FILE",
                   help="start from a state FILE of --save-state (same scene) and run on to "
                        "the end time (--duration or the scene's)")
    s.set_defaults(func=cmd_simulate)
    c = sub.add_parser("compare", help="replay recorded LCPs through several methods")
    c.add_argument("lcps", help=".npz written by simulate --record-lcps (the frictional "
                   "8-sided pyramid LCP of each recorded problem is replayed)")
    c.add_argument("--methods", nargs="+", help="method[:opt=value,...] (default: the Table I set)")
    c.set_defaults(func=cmd_compare)
    tr = sub.add_parser("trace", help="run a scene; CSV and plot of a body's lowest point "
                        "and the contact count per step")
    tr.add_argument("scene", help="scene YAML file (e.g. config/cracked_ramp.yaml)")
    tr.add_argument("--body", required=True, help="free body to follow (a box)")
    tr.add_argument("--model", help="contact model instead of the scene's (e.g. pyramid)")
    tr.add_argument("--duration", type=float, help="simulated seconds (default: the scene's)")
    tr.add_argument("--csv", help="write the trace to this .csv")
    tr.add_argument("--plot", help="write the trace plot to this .png")
    tr.set_defaults(func=cmd_trace)
    pl = sub.add_parser("plot", help="plot vertical contact forces and penetration of a run")
    pl.add_argument("run", help=".npz written by simulate --output")
    pl.add_argument("--output", help="PNG path (default: next to the run)")
    pl.set_defaults(func=cmd_plot)
    t3 = sub.add_parser("table3", help="Yamane & Nakamura's Table III for the chain scenes")
    t3.add_argument("scenes", nargs="*", help="bundled scene names (hoist, ring, net, "
                    "disks_21, brazil_nut) or .yaml paths (default: all five; the Brazil "
                    "nut's 75 s take ~5 min)")
    t3.add_argument("--duration", type=float, help="simulated seconds (default: each scene's)")
    t3.add_argument("--time-step", type=float, help="replace the scenes' time step [s]")
    t3.set_defaults(func=cmd_table3)
    return p


def main(argv=None):
    """Entry point of the ``contact-lcp`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ContactLCPError, ValueError, OSError) as e:
        print(f"contact-lcp: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
