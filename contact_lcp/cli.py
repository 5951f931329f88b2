"""The ``contact-lcp`` command: simulate a scene, compare LCP methods on a recording, plot,
Yamane & Nakamura's Table III for the chain scenes, parameter sweeps on Ray, and view a
scene live or a recorded run in the browser."""

import argparse
import os
import sys
import time

import numpy as np

from contact_lcp.cli_simulate import check_outputs, check_seconds, cmd_simulate
from contact_lcp.cli_sweep import add_parser as add_sweep_parser
from contact_lcp.cli_view import add_parsers as add_viewer_parsers
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


def compare_methods(lcps, specs):
    """Replay recorded LCPs through each method (and the standard further attempts of
    :func:`contact_lcp.lcp.solve_with_retries`, as the contact models solve them); one
    Table I row per method spec."""
    from contact_lcp.lcp import LCPStatus, solve_with_retries

    rows = []
    contacts = np.array([c for _, _, c, _ in lcps]) if lcps else np.zeros(0)
    active = np.array([a for _, _, _, a in lcps]) if lcps else np.zeros(0)
    for spec in specs:
        label, name, opts = parse_method(spec)
        counts = {s: 0 for s in LCPStatus}
        times, pivots = [], []
        for M, q, _, _ in lcps:
            t0 = time.perf_counter()
            try:
                res = solve_with_retries(M, q, name, **opts)
            except TypeError as e:  # an option the method does not take
                raise ValueError(f"--methods {spec!r}: {e}") from None
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

    out = args.output or str(args.run).rsplit(".", 1)[0] + ".png"
    args.plot = out
    check_outputs(args, ("plot",))
    from contact_lcp.sim.recording import read_run

    plot_run(read_run(args.run), out, title=args.run)
    print(f"plot written to {out}")
    return 0


def cmd_trace(args):
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.trace import plot_trace, trace_run, write_csv

    check_seconds(args.duration, "--duration", positive=True)
    check_outputs(args, ("csv", "plot"))
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

    check_seconds(args.duration, "--duration", positive=True)
    check_seconds(args.time_step, "--time-step", positive=True)
    available = table3.bundled_scenes()
    names = args.scenes or [n for n in available if n in table3.DEFAULT_SCENES]
    unknown = [n for n in names if n not in available and not n.endswith(".yaml")]
    if unknown:
        raise ValueError(f"unknown scene(s) {unknown}; bundled: {sorted(available)} "
                         "(or give a .yaml path)")
    rows = []
    for name in names:
        path = available.get(name, name)
        bar = _StepProgress(os.path.splitext(os.path.basename(name))[0], args.duration)
        try:
            row = table3.run_scene(path, duration=args.duration, time_step=args.time_step,
                                   progress=bar)
        finally:
            bar.close()
        published = table3.published_row(row["scene"])
        rows += [row] + ([published] if published else [])
        print(f"{row['scene']}: done", file=sys.stderr)
    print(table3.format_rows(rows))
    return 1 if any(r["failure"] or r["fallbacks"] for r in rows if "[S1]" not in r["scene"]) else 0


class _StepProgress:
    """A ``progress(sim, info)`` callback of a run's steps: a bar with the time left on a
    terminal, a line every 10 s otherwise (:class:`contact_lcp.progress.Progress`)."""

    def __init__(self, name, duration=None):
        self.name, self.duration, self.bar = name, duration, None

    def __call__(self, sim, info):
        if self.bar is None:
            from contact_lcp.progress import Progress

            duration = sim.scene.duration if self.duration is None else self.duration
            self.bar = Progress(int(round(duration / sim.h)), desc=self.name, unit="step",
                                every=10.0)
        self.bar.update(1, f"t={sim.t:.2f}s failures={sim.stats.lcp_failures}")

    def close(self):
        if self.bar is not None:
            self.bar.close()


def build_parser():
    p = argparse.ArgumentParser(prog="contact-lcp", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("simulate", help="run a scene headless")
    s.add_argument("scene", help="scene YAML file (e.g. config/humanoid_stand.yaml)")
    s.add_argument("--duration", type=float, help="simulated seconds (default: the scene's)")
    s.add_argument("--output", help="write the run to this .npz (while it runs, the steps "
                   "are kept in files without names in its folder)")
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
    w = sub.add_parser("warm", help="compile the kernels a scene's run needs now (the set-up "
                       "commands do it for the default scene), so its first run starts at once")
    w.add_argument("scenes", nargs="*", help="scene YAML files (default: the bundled "
                   "config/humanoid_stand.yaml)")
    w.set_defaults(func=cmd_warm)
    add_sweep_parser(sub)
    add_viewer_parsers(sub)
    return p


def cmd_warm(args):
    """Build each scene and run :func:`~contact_lcp.sim.warm.warm_up` on it."""
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.warm import warm_up

    scenes = args.scenes or [os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "config", "humanoid_stand.yaml")]
    for scene in scenes:
        t0 = time.perf_counter()
        error = warm_up(Simulator.from_file(scene))
        note = f" (its first step fails: {error})" if error else ""
        print(f"kernels ready for {scene} in {time.perf_counter() - t0:.1f} s{note}")
    return 0


def main(argv=None):
    """Entry point of the ``contact-lcp`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ContactLCPError, ValueError, OSError) as e:
        print(f"contact-lcp: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before or after a run's steps (during them: _Interrupt)
        print("contact-lcp: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
