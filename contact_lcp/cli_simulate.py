"""``contact-lcp simulate``: run a scene headless, keeping what it ran.

The files the run will write are checked before its first step; Ctrl-C ends the run
after the step under way (exit code 130) and the files asked for are written with what
was run so far, as is a run that stops on a :class:`SimulationError`. Every file is
written atomically (:mod:`contact_lcp.sim.files`).
"""

import collections
import os
import signal
import sys
import time

import numpy as np


def rung_counts(counts):
    """``name:outcome count, ...`` of a Counter of the ladder rungs the steps ran (the
    words of their ``lcp_rungs``), the most frequent first; ``none`` when no step had
    contact."""
    return ", ".join(f"{r} {c}" for r, c in counts.most_common()) or "none"


def _status(sim, info, wall0, t0):
    """The progress status of a run: simulated time, real-time factor since the wall
    time ``wall0`` at simulated time ``t0`` (the end of the run's first step, which loads
    the kernels, once there is one: the rate the run goes at), the last step's contacts
    and pivots, the failures so far."""
    rtf = (sim.t - t0) / max(time.perf_counter() - wall0, 1e-9)
    s = sim.stats
    return (f"t={sim.t:7.3f}s  rtf={rtf:5.2f}x  contacts={info.num_contacts:3d} "
            f"active={info.num_active:3d}  pivots={info.pivots:4d}  failures={s.lcp_failures} "
            f"fallbacks={s.fallbacks}")


def check_seconds(value, flag, positive=False):
    """``value`` of ``flag`` (None: the scene's) as a finite number of seconds >= 0 (> 0
    if ``positive``)."""
    if value is not None and not (np.isfinite(value) and (value > 0 if positive else
                                                          value >= 0)):
        raise ValueError(f"{flag}: expected a finite number of seconds "
                         f"{'> 0' if positive else '>= 0'}, got {value!r}")
    return value


def check_outputs(args, flags):
    """Check, before a run, that every file the run will write (``args.<flag>``) can be
    written and that no two of them are the same file."""
    from contact_lcp.sim.files import OutputPathError, check_writable

    seen = {}
    for flag in flags:
        path = getattr(args, flag, None)
        if not path:
            continue
        name = "--" + flag.replace("_", "-")
        check_writable(path, name)
        real = os.path.realpath(path)
        if real in seen:
            raise OutputPathError(f"{name} and {seen[real]} name the same file {path!r}")
        seen[real] = name
    if getattr(args, "plot", None):
        from contact_lcp.sim.plotting import check_image_path

        check_image_path(args.plot, "--plot")


class _Interrupt:
    """Ctrl-C during a run, as a request: the run ends after the step under way and keeps
    what it recorded. A second Ctrl-C during a step (a long solve) ends the step at once
    (``KeyboardInterrupt``); the simulator's state is then not saved."""

    def __init__(self):
        self.requested = False
        self.stepping = False
        self._previous = None

    def __enter__(self):
        try:
            self._previous = signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main thread: Ctrl-C stays Python's
            self._previous = None
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handler(self, signum, frame):
        if self.requested and self.stepping:
            raise KeyboardInterrupt
        if not self.requested:
            sys.stderr.write("\ninterrupted: stopping after this step (Ctrl-C again to stop "
                             "inside it)\n")
        self.requested = True


def cmd_simulate(args):
    from contact_lcp.sim import Simulator

    check_seconds(args.duration, "--duration")
    check_outputs(args, ("output", "record_lcps", "plot", "save_state"))
    sim = Simulator.from_file(args.scene, contact_model=args.model, time_step=args.time_step)
    sim.record_problems = bool(args.record_lcps)
    duration = sim.scene.duration if args.duration is None else args.duration
    steps = int(round(duration / sim.h))
    if args.resume:  # on from the saved time to the same end: --duration is the end time
        sim.load_state(args.resume)
        steps = max(steps - sim.stats.steps, 0)
        print(f"resumed {args.resume} at t = {sim.t:.3f} s")
    run = _Run(sim, record=bool(args.output or args.plot),
               spool=os.path.dirname(os.path.abspath(args.output or args.plot or ".")))
    with _Interrupt() as stop:
        stopped, error = run.steps(steps, stop)
        if stopped == "step":  # a second Ctrl-C inside a step: its state may be half-made
            print(f"interrupted inside the step after t = {sim.t:.3f} s", file=sys.stderr)
        elif stopped:
            print(f"interrupted at t = {sim.t:.3f} s after {run.done} of {steps} steps",
                  file=sys.stderr)
        print(run.summary(args))
        saved = _save_run(args, run, state=stopped != "step")
    if error is not None:
        print(f"contact-lcp: error: {error}", file=sys.stderr)
    if stopped or error is not None:
        print(f"saved: {'; '.join(saved)}" if saved else "nothing saved (no output was asked "
              "for)", file=sys.stderr)
    return 130 if stopped else 2 if error is not None else 0


class _Run:
    """The steps of one ``simulate`` run and what they recorded.

    ``record``: every step's row is kept (:class:`RunRecorder`) for the files that need
    them (``--output``, ``--plot``), packed into files without names in the folder
    ``spool`` (the output's: a run of hours must not fill the memory, and ``/tmp`` may be
    memory); without, only the summary's sums."""

    def __init__(self, sim, record=True, spool=None):
        from contact_lcp.sim.recording import RunRecorder

        self.sim = sim
        self.rec = (RunRecorder(sim.scene.output.wrench_links, sim.joint_names,
                                scene_path=sim.scene.path, spool=spool) if record else None)
        # without a recorder, the robots' vertical contact force summed over the steps [N]
        # (force_z; a recorder sums its column)
        self._force_z = 0.0
        # the steps by the ladder rungs they ran (a step's rungs as its report has them:
        # one count a step, the rungs' words counted at the end, rungs())
        self._rung_steps = collections.Counter()
        self.active = []
        self.done = 0
        self.max_pen = 0.0
        self.t0 = sim.t
        self.wall = 0.0
        # wall seconds of the first step and its row (they load the compiled kernels,
        # later steps' with them)
        self.first = 0.0

    def steps(self, steps, stop):
        """Run up to ``steps`` steps; ``(stopped, error)``: ``stopped`` is False, True (a
        Ctrl-C between steps) or ``"step"`` (inside one); ``error`` a SimulationError."""
        from contact_lcp.sim.simulator import SimulationError
        from contact_lcp.sim.warm import ahead

        from contact_lcp.progress import Progress

        sim = self.sim
        wall0 = last = time.perf_counter()
        since = (wall0, self.t0)
        info, stopped, error = None, False, None
        # a bar on a terminal, else a line a second, starting "t=" (the status)
        bar = Progress(steps, unit="step", count=False, every=1.0)
        try:
            for _ in range(steps):
                recorded = len(sim.recorded_problems)
                stop.stepping = True
                try:
                    info = sim.step()
                finally:
                    stop.stepping = False
                self.done += 1
                if self.done == 1:  # (later steps' kernels load with the first step's)
                    ahead(sim)
                self.max_pen = max(self.max_pen, info.max_penetration)
                if self.rec is not None:  # (its rows hold the steps' total forces)
                    self.rec.add(sim, info)
                else:
                    self._force_z += float(sim.contact_force_total(applied=True)[2])
                if self.done == 1:  # (its row's reads load their kernels too)
                    self.first = time.perf_counter() - wall0
                    since = (wall0 + self.first, sim.t)  # (the status's rate from here)
                self._rung_steps[info.report.rungs] += 1
                if len(sim.recorded_problems) > recorded:  # one count per recorded problem
                    self.active.append(int(info.report.info.get("pushing_facets",
                                                                info.num_active)))
                now = time.perf_counter()
                if now - last >= 0.2:  # the status text, five times a second at most
                    last = now
                    bar.update(1, _status(sim, info, *since))
                else:
                    bar.update(1)
                if stop.requested:
                    stopped = True
                    break
        except KeyboardInterrupt:
            stopped = "step"
        except SimulationError as e:  # the simulator keeps its last finite state
            error = e
        self.wall = time.perf_counter() - wall0
        bar.close(None if info is None else _status(sim, info, *since))
        return stopped, error

    @property
    def force_z(self):
        """The robots' vertical contact force summed over the steps [N]."""
        if self.rec is not None:
            return float(self.rec.column_sum("contact_force_total")[2])
        return self._force_z

    def rungs(self):
        """Counter of the ladder rungs the steps ran (``name:outcome``), each in the order
        the steps first ran it."""
        counts = collections.Counter()
        for rungs, steps in self._rung_steps.items():
            for rung in rungs:
                counts[rung] += steps
        return counts

    def _steady(self):
        """``; the first step S s, then N.NNx``: the rate without the first step and its
        recorded row, which load (or compile) the kernels the scene, its later steps
        (:func:`~contact_lcp.sim.warm.ahead`) and the recording use: the rate a longer run
        tends to."""
        rest = self.wall - self.first
        if self.done < 2 or rest <= 0.0:
            return ""
        return f"; the first step {self.first:.2f} s, then {(self.sim.t - self.t0) * (self.done - 1) / self.done / rest:.2f}x"

    def summary(self, args):
        """The run's one-line summary."""
        sim, s, wall = self.sim, self.sim.stats, self.wall
        # m g of the robots that stand on contacts (a fixed base carries its weight itself)
        mg = sum(sim.robot_mass(i) for i, r in enumerate(sim.world.robots)
                 if r.floating_base) * np.linalg.norm(sim.scene.gravity)
        f_avg = self.force_z / self.done if self.done else 0.0
        dt = sim.t - self.t0
        summary = (f"done: {self.done} steps, {dt:.3f} s simulated in {wall:.2f} s "
                   f"({dt / max(wall, 1e-9):.2f}x real time{self._steady()}); model {sim.model.name}, "
                   f"{s.solves} solves, {s.pivots_total} pivots, {s.warm_starts} warm starts; "
                   f"failures {s.lcp_failures}, fallbacks {s.fallbacks}, safe stops "
                   f"{s.safe_stops}, uncertified steps {s.uncertified}; max penetration "
                   f"{1e3 * self.max_pen:.3f} mm"
                   + (f" (moved out at {s.projections} step(s) by projection)"
                      if s.projections else "")
                   + f"; last step: {sim.islands} contact island(s)"
                   + (f", {sim.sleeping_bodies} sleeping bodies" if sim.sleep is not None
                      else ""))
        if mg > 0 and self.done:
            summary += f"; mean vertical contact force {f_avg:.1f} N vs m*g {mg:.1f} N"
        if self.done:
            summary += f"; ladder rungs {rung_counts(self.rungs())}"
        if args.resume:
            summary += (" (solves, pivots and failures counted from t = 0, as the state file "
                        "carries them)")
        return summary


def _save_run(args, run, state=True):
    """Write the files ``args`` asks for (the state only if ``state``); what was saved."""
    from contact_lcp.sim.recording import save_problems

    sim, saved = run.sim, []
    if args.save_state and state:
        sim.save_state(args.save_state)
        print(f"state at t = {sim.t:.3f} s written to {args.save_state}")
        saved.append(f"state at t = {sim.t:.3f} s to {args.save_state}")
    elif args.save_state:
        saved.append(f"no state (interrupted inside a step; {args.save_state} unchanged)")
    if args.output:
        run.rec.save(args.output)
        print(f"run written to {args.output}")
        saved.append(f"run of {run.done} steps to {args.output}")
    if args.record_lcps:
        save_problems(args.record_lcps, sim.recorded_problems, run.active)
        print(f"{len(sim.recorded_problems)} contact problems written to {args.record_lcps}")
        saved.append(f"{len(sim.recorded_problems)} contact problems to {args.record_lcps}")
    if args.plot:
        from contact_lcp.sim.plotting import plot_run

        plot_run(run.rec.arrays(), args.plot, title=args.scene)
        print(f"force plot written to {args.plot}")
        saved.append(f"force plot to {args.plot}")
    if run.rec is not None:
        run.rec.close()
    return saved
