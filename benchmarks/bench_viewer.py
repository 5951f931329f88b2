#!/usr/bin/env python3
"""The viewer library, chosen by measurement: viser or rerun-sdk drawing the live humanoid
squat at 30 frames per second, against no viewer.

Per library, a fresh process (``--child LIB``) builds the squat, warms it up, starts the
library's server with the scene's meshes (the same :class:`WorldParts` triangles for
both; viser in contact_lcp.viewer's page process, rerun-sdk's own server threads in the
simulator's process, as its ``serve_grpc`` runs them), optionally opens the page in
headless Chromium, then steps as fast as it can for ``--seconds`` wall seconds, sending
a frame (parts' poses, contact points and force arrows, the force and penetration
values) whenever 1/30 s has passed. ``--browser`` runs every library twice, page closed
and page open; with it open, the offline check lists every URL the page fetched that is
not the local server. Reported: steps per wall second and CPU seconds per step of the
simulator's process, and their overheads against the no-viewer run of the same group
(groups of none, viser, rerun run back to back, ``--repeats`` times, so a change of
machine load hits all three alike).

``--rtf1`` adds runs of ``contact-lcp view``'s own loop (viser, paced to real-time
factor 1, page closed and, with ``--browser``, open) reporting the achieved factor.

The CSV is ``benchmarks/results/bench_viewer_<stamp>_<revision>.csv``; the issue's target
(not a test): overhead <= 10 % at 30 frames per second.

Usage::

    .venv/bin/python benchmarks/bench_viewer.py --browser --rtf1 --seconds 10   # ~7 min
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import contact_lcp  # noqa: E402,F401  (before numpy: it keeps BLAS to one thread)
import numpy as np  # noqa: E402

from benchmarks.common import git_revision, results_path, utc_stamp, write_csv  # noqa: E402

SCENE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config",
                     "humanoid_squat.yaml")
LIBS = ("none", "viser", "rerun")


def _viser(sim, port):
    """contact_lcp.viewer's live page: frames go to its page process, which draws them
    only while a page is open."""
    from contact_lcp.viewer.live import LiveViewer

    viewer = LiveViewer(sim, port)
    return f"http://127.0.0.1:{viewer.port}", viewer.publish, viewer.close


def _rerun(sim, port):
    import rerun as rr

    from contact_lcp.viewer.frames import frame_from_sim
    from contact_lcp.viewer.geometry import WorldParts

    rr.init("contact_lcp_bench")
    uri = rr.serve_grpc(grpc_port=port + 1)
    rr.serve_web_viewer(web_port=port, open_browser=False, connect_to=uri)
    parts = WorldParts(sim.world, [r.robot for r in sim.scene.robots])
    for i, p in enumerate(parts.visual):
        if p is not None:
            rr.log(f"parts/{i}", rr.Mesh3D(vertex_positions=p.vertices,
                                           triangle_indices=p.faces,
                                           albedo_factor=[c / 255 for c in p.color]),
                   static=True)
    last = [-np.inf]

    def publish(info):
        now = time.perf_counter()
        if now - last[0] < 1.0 / 30.0:
            return
        last[0] = now
        f = frame_from_sim(sim, info)
        rr.set_time("sim", duration=f.t)
        X = parts.visual_placements(f.q)
        import pinocchio as pin
        for i, p in enumerate(parts.visual):
            if p is not None:
                xyzw = pin.Quaternion(np.ascontiguousarray(X[i][:3, :3])).coeffs()
                rr.log(f"parts/{i}", rr.Transform3D(translation=X[i][:3, 3],
                                                    quaternion=rr.Quaternion(xyzw=xyzw)))
        rr.log("contacts/points", rr.Points3D(f.p_W, radii=0.0125))
        rr.log("contacts/forces", rr.Arrows3D(origins=f.p_W, vectors=f.force_W / 865.0))
        rr.log("chart/force", rr.Scalars(f.force_total))
        rr.log("chart/penetration", rr.Scalars(f.max_penetration))

    return f"http://127.0.0.1:{port}/?url=rerun%2Bhttp://127.0.0.1:{port + 1}/proxy", publish, None


def child(lib, seconds, browser, port):
    """One measurement in this process; prints one JSON row."""
    from contact_lcp.sim import Simulator
    from contact_lcp.viewer.headless import Chromium, external

    sim = Simulator.from_file(SCENE)
    for _ in range(300):
        sim.step()
    url, publish, close = (None, lambda info: None, None)
    if lib == "viser":
        url, publish, close = _viser(sim, port)
    elif lib == "rerun":
        url, publish, close = _rerun(sim, port)
    chromium, outside = None, None
    if browser and url:
        chromium = Chromium()
        chromium.open(url, settle=8.0)
        outside = external(chromium.requested_urls(), port)
    try:
        steps, t0, c0 = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - t0 < seconds:
            publish(sim.step())
            steps += 1
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        if chromium is not None:
            chromium.close()
        if close is not None:
            close()
    print(json.dumps({"lib": lib, "steps": steps, "wall_s": wall, "steps_per_s": steps / wall,
                      "cpu_us_per_step": 1e6 * cpu / steps,
                      "browser": bool(browser and url),
                      "external_urls": None if outside is None else len(outside),
                      "external_sample": "" if not outside else outside[0]}))


def rtf1(seconds, port, browser):
    """``contact-lcp view``'s loop at factor 1, the page open in Chromium or not; one
    JSON row."""
    import contextlib

    from contact_lcp.sim import Simulator
    from contact_lcp.viewer.headless import Chromium
    from contact_lcp.viewer.live import LiveViewer

    sim = Simulator.from_file(SCENE)
    sim.step()
    viewer = LiveViewer(sim, port)
    stop = threading.Event()
    th = threading.Thread(target=viewer.run, args=(stop,), daemon=True)
    with (Chromium() if browser else contextlib.nullcontext()) as chromium:
        if chromium is not None:
            chromium.open(f"http://127.0.0.1:{viewer.port}", settle=0.0)
        th.start()
        time.sleep(5.0)  # page loaded, meshes drawn
        t0, w0, c0 = sim.t, time.perf_counter(), time.process_time()
        time.sleep(seconds)
        t1, w1, c1 = sim.t, time.perf_counter(), time.process_time()
        stop.set()
        th.join()
    viewer.close()
    steps = int(round((t1 - t0) / sim.h))
    print(json.dumps({"lib": "viser_view_loop_rtf1", "steps": steps, "wall_s": w1 - w0,
                      "steps_per_s": steps / (w1 - w0), "browser": bool(browser),
                      "cpu_us_per_step": 1e6 * (c1 - c0) / max(steps, 1),
                      "achieved_rtf": (t1 - t0) / (w1 - w0), "frames": viewer.frames}))


def run_child(args_list):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), *args_list],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
                             os.path.abspath(__file__)))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--browser", action="store_true", help="open each page in headless Chromium")
    p.add_argument("--rtf1", action="store_true", help="add the paced run at factor 1")
    p.add_argument("--port", type=int, default=8642)
    p.add_argument("--child", choices=LIBS + ("rtf1",))
    args = p.parse_args()
    if args.child == "rtf1":
        return rtf1(args.seconds, args.port, args.browser)
    if args.child:
        return child(args.child, args.seconds, args.browser, args.port)
    rows = []
    browsers = (False, True) if args.browser else (False,)
    for rep in range(args.repeats):
        for browser in browsers:
            group = []
            for lib in LIBS:
                row = run_child(["--child", lib, "--seconds", str(args.seconds), "--port",
                                 str(args.port)] + (["--browser"] if browser else []))
                row.update(repeat=rep, load1=os.getloadavg()[0], page_open=browser)
                group.append(row)
                print(row, file=sys.stderr)
            for r in group:  # against the no-viewer run of the same group
                r["overhead"] = 1.0 - r["steps_per_s"] / group[0]["steps_per_s"]
                r["cpu_overhead"] = r["cpu_us_per_step"] / group[0]["cpu_us_per_step"] - 1.0
            rows += group
    if args.rtf1:
        for browser in browsers:
            row = run_child(["--child", "rtf1", "--seconds", str(args.seconds), "--port",
                             str(args.port)] + (["--browser"] if browser else []))
            row.update(repeat=0, load1=os.getloadavg()[0], page_open=browser)
            rows.append(row)
            print(f"view loop at factor 1, page {'open' if browser else 'closed'}: achieved "
                  f"{row['achieved_rtf']:.3f}x")
    for lib in LIBS[1:]:
        for browser in browsers:
            sel = [r for r in rows if r["lib"] == lib and r["page_open"] == browser]
            ov = [r["overhead"] for r in sel]
            cv = [r["cpu_overhead"] for r in sel]
            print(f"{lib}, page {'open' if browser else 'closed'}: at 30 fps, steps/s lost "
                  f"median {100 * np.median(ov):.1f} % (runs {[round(100 * o, 1) for o in ov]}), "
                  f"CPU per step added median {100 * np.median(cv):.1f} %")
    path = results_path("bench_viewer", git_revision(), utc_stamp()[1])
    write_csv(path, rows, ["lib", "repeat", "page_open", "browser", "steps", "wall_s",
                           "steps_per_s", "overhead", "cpu_us_per_step", "cpu_overhead",
                           "external_urls", "external_sample", "achieved_rtf", "frames",
                           "load1"])
    print(f"written {path}")


if __name__ == "__main__":
    main()
