"""``contact-lcp sweep``: a parameter sweep or Monte Carlo runs of a scene on Ray.

The spec is checked, every run's scene included, before Ray starts; the rows go to
``DIR/results.csv`` as the runs finish, and a progress bar (plain lines when stderr is
not a terminal) counts the runs done and failed and the time left.
"""

import os
import sys


def add_parser(sub):
    """The ``sweep`` subcommand of ``sub`` (argparse subparsers)."""
    sw = sub.add_parser("sweep", help="run a scene over a grid of parameter values or "
                        "random draws, in parallel on Ray")
    sw.add_argument("spec", help="sweep spec YAML (scene, duration, parameters, samples, "
                    "seed, record; see contact_lcp.sweep.spec)")
    sw.add_argument("--address", help="join this Ray cluster (printed by 'ray start "
                    "--head'; 'auto': the one on this machine); default: a Ray instance "
                    "on this machine, all cores")
    sw.add_argument("--out", help="results folder (default: <spec name>_results in the "
                    "working folder)")
    sw.add_argument("--resume", action="store_true", help="continue the results.csv in "
                    "--out: finished run ids are not run again")
    sw.add_argument("--num-cpus", type=int, help="CPUs of the local Ray instance (default: "
                    "all of this machine's)")
    sw.set_defaults(func=cmd_sweep)
    return sw


def cmd_sweep(args):
    from contact_lcp.sweep import load_spec, run

    if args.num_cpus is not None and args.num_cpus < 1:
        raise ValueError(f"--num-cpus: expected an integer >= 1, got {args.num_cpus}")
    spec = load_spec(args.spec)
    out = args.out or os.path.splitext(os.path.basename(args.spec))[0] + "_results"
    print(f"sweep: {len(spec.runs)} runs of {spec.scene} for {spec.duration:g} s; "
          f"parameters {', '.join(spec.parameters)}; results in {out}", file=sys.stderr)
    try:
        table = run(spec, address=args.address, out=out, resume=args.resume,
                    num_cpus=args.num_cpus)
    except KeyboardInterrupt:
        print(f"contact-lcp: interrupted; the finished runs are in {out}/results.csv "
              "(--resume runs the others)", file=sys.stderr)
        return 130
    errors = sum(s != "ok" for s in table["status"])
    print(f"done: {len(table)} of {len(spec.runs)} runs in {out}/results.csv ({table.ran} run "
          f"now, {table.skipped} finished before); {errors} ended in an error, {table.lost} "
          "lost" + (" (run again with --resume)" if table.lost else ""))
    return 1 if errors or table.lost else 0
