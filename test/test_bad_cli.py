"""The contact-lcp command on bad input and interrupts: a clear error and exit code, no
traceback, files checked before a run and written whole, Ctrl-C keeping what was run.

Each case runs the command as a user does, in a child process (``python -m
contact_lcp.cli``) with this checkout first on the path.
"""

import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
BOX = str(ROOT / "config" / "box_on_plane.yaml")


def _env():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONWARNINGS", None)
    return env


def cli(*args, timeout=300):
    """Run ``contact-lcp args`` to its end: the CompletedProcess (text output)."""
    return subprocess.run([sys.executable, "-m", "contact_lcp.cli", *map(str, args)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def assert_error(res, *parts):
    """Exit code 2, a 'contact-lcp: error:' line holding every one of ``parts``, no
    traceback."""
    assert "Traceback" not in res.stderr, res.stderr
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    line = next((l for l in res.stderr.splitlines() if l.startswith("contact-lcp: error:")), "")
    for part in parts:
        assert part in line, (part, res.stderr)


class _RunsACommand:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_a_negative_or_not_finite_duration_is_an_error(value):
    res = cli("simulate", BOX, f"--duration={value}")
    assert_error(res, "--duration: expected a finite number of seconds >= 0")
    assert "done:" not in res.stdout


def test_trace_and_table3_check_their_durations_and_paths(tmp_path):
    assert_error(cli("trace", BOX, "--body", "box", "--duration=0"),
                 "--duration: expected a finite number of seconds > 0, got 0.0")
    assert_error(cli("table3", "hoist", "--duration=-2"), "--duration", "> 0, got -2.0")
    assert_error(cli("trace", BOX, "--body", "box", "--duration=0.01", "--csv",
                     tmp_path / "no" / "t.csv"), "--csv", "does not exist")
    res = cli("trace", BOX, "--body", "box", "--duration=0.01", "--csv", tmp_path / "t.csv",
              "--plot", tmp_path / "t.png")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.png"]


def test_output_paths_are_checked_before_the_run(tmp_path):
    """A missing folder for --save-state fails at once, before any step, and --output
    is not taken down with it; likewise a folder given as a file, a path under a file,
    an image format matplotlib cannot write, and two outputs naming one file."""
    out = tmp_path / "run.npz"
    res = cli("simulate", BOX, "--duration", "0.01", "--output", out,
              "--save-state", tmp_path / "missing" / "s.state")
    assert_error(res, "--save-state", "does not exist", str(tmp_path / "missing"))
    assert "done:" not in res.stdout and not out.exists()
    assert_error(cli("simulate", BOX, "--duration", "0.01", "--output", tmp_path),
                 "--output", "is a folder")
    assert_error(cli("simulate", BOX, "--duration", "0.01", "--record-lcps",
                     f"{BOX}/x.npz"), "--record-lcps", "is a file, not a folder")
    assert_error(cli("simulate", BOX, "--duration", "0.01", "--plot", tmp_path / "f.xyz"),
                 "--plot", "'.png'")
    assert_error(cli("simulate", BOX, "--duration", "0.01", "--output", out,
                     "--save-state", out), "--save-state and --output name the same file")
    assert not out.exists()


def test_files_are_written_whole_and_nothing_else_is_left(tmp_path):
    res = cli("simulate", BOX, "--duration", "0.01", "--output", tmp_path / "run",
              "--save-state", tmp_path / "s.state", "--plot", tmp_path / "f.svg")
    assert res.returncode == 0, res.stderr
    # exactly the files named (no .npz appended, no temporary file left)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.svg", "run", "s.state"]
    with np.load(tmp_path / "run", allow_pickle=False) as f:
        assert f["t"].shape == (10,)
    assert (tmp_path / "f.svg").read_text().lstrip().startswith("<?xml")


def test_plot_of_a_file_that_is_not_a_run_names_what_it_lacks(tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, t=np.zeros(3))
    assert_error(cli("plot", other), "lacks the arrays ['contact_force_total', "
                 "'max_penetration']")
    np.savez(other, t=np.zeros(3), contact_force_total=np.zeros((2, 3)),
             max_penetration=np.zeros(3))
    assert_error(cli("plot", other), "contact_force_total: expected numbers of shape "
                 "('N', 3)")
    (tmp_path / "text.npz").write_text("hello")
    assert_error(cli("plot", tmp_path / "text.npz"), "expected a run .npz")
    np.save(tmp_path / "one.npy", np.zeros(3))
    assert_error(cli("plot", tmp_path / "one.npy"), "expected a run .npz")
    assert_error(cli("plot", tmp_path / "missing.npz"), "does not exist")


def test_compare_with_an_option_the_method_does_not_take_is_an_error(tmp_path):
    lcps = tmp_path / "lcps.npz"
    assert cli("simulate", BOX, "--duration", "0.003", "--record-lcps", lcps).returncode == 0
    assert_error(cli("compare", lcps, "--methods", "robust:bogus=1"),
                 "--methods 'robust:bogus=1'", "bogus")
    (tmp_path / "cut.npz").write_bytes(lcps.read_bytes()[:100])  # a zip cut short
    assert_error(cli("compare", tmp_path / "cut.npz"), "expected a recording")


def test_resume_from_a_pickle_that_would_run_a_command_runs_nothing(tmp_path):
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.state"
    evil.write_bytes(pickle.dumps(_RunsACommand(marker), protocol=pickle.HIGHEST_PROTOCOL))
    res = cli("simulate", BOX, "--duration", "0.01", "--resume", evil)
    assert_error(res, "pickle state file of an earlier version", "--save-state")
    assert not marker.exists()


def test_ctrl_c_ends_the_run_with_130_and_keeps_what_it_ran(tmp_path):
    """SIGINT once the run is stepping (its first progress line): exit 130, no
    traceback, the run so far in --output, the state at its last step in --save-state,
    and a line saying what was saved."""
    from contact_lcp.sim.checkpoint import read_state

    out, state = tmp_path / "run.npz", tmp_path / "s.state"
    proc = subprocess.Popen(
        [sys.executable, "-m", "contact_lcp.cli", "simulate", BOX, "--duration", "1000",
         "--output", str(out), "--save-state", str(state)], cwd=ROOT, env=_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        err = []
        for line in proc.stderr:  # progress lines, one a second, once it steps
            err.append(line)
            if line.startswith("t="):
                break
        proc.send_signal(signal.SIGINT)
        stdout, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = "".join(err) + rest
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted at t = " in stderr
    saved = next(l for l in stderr.splitlines() if l.startswith("saved: "))
    assert str(out) in saved and str(state) in saved
    with np.load(out, allow_pickle=False) as f:
        t = f["t"]
        assert 0 < t.size < 1_000_000 and f["q"].shape == (t.size, 7)
    assert f"done: {t.size} steps" in stdout
    s = read_state(state)
    assert s["t"] == pytest.approx(t[-1]) and s["stats"]["steps"] == t.size


def test_a_run_stopped_by_a_non_finite_state_keeps_what_it_ran(tmp_path, monkeypatch, capsys):
    """A step whose next state would not be finite ends the run with exit 2 and the
    error, and the steps before it are written (the simulator keeps its last finite
    state, so the state file is that of the last good step). In-process: a stand-in
    step raises the error at the 4th step."""
    from contact_lcp.cli import main
    from contact_lcp.sim.checkpoint import read_state
    from contact_lcp.sim.simulator import SimulationError, Simulator

    real, run = Simulator.step, []

    def step(self):  # (the run's simulator: the first to step; warm-ups step others)
        run[:] = run or [self]
        if self is run[0] and self.stats.steps == 3:
            raise SimulationError("the state after t = 0.0030 s would not be finite")
        return real(self)

    monkeypatch.setattr(Simulator, "step", step)
    out, state = tmp_path / "run.npz", tmp_path / "s.state"
    assert main(["simulate", BOX, "--duration", "0.01", "--output", str(out),
                 "--save-state", str(state)]) == 2
    err = capsys.readouterr().err
    assert "contact-lcp: error: the state after t = 0.0030 s would not be finite" in err
    assert f"run of 3 steps to {out}" in err
    with np.load(out, allow_pickle=False) as f:
        assert f["t"].shape == (3,)
    assert read_state(state)["stats"]["steps"] == 3


def test_a_second_ctrl_c_inside_a_step_ends_it_and_keeps_the_steps_before(
        tmp_path, monkeypatch, capsys):
    """The first Ctrl-C asks the run to end after the step under way; a second one inside
    that step (a long solve) ends it at once: exit 130, the run's earlier steps written,
    the state file not (the interrupted step may have changed part of the state).
    In-process: a stand-in step sends both SIGINTs to this process inside the 3rd step."""
    from contact_lcp.cli import main
    from contact_lcp.sim.simulator import Simulator

    real, run = Simulator.step, []

    def step(self):  # (the run's simulator: the first to step; warm-ups step others)
        run[:] = run or [self]
        if self is run[0] and self.stats.steps == 2:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
        return real(self)

    monkeypatch.setattr(Simulator, "step", step)
    out, state = tmp_path / "run.npz", tmp_path / "s.state"
    before = signal.getsignal(signal.SIGINT)
    assert main(["simulate", BOX, "--duration", "0.01", "--output", str(out),
                 "--save-state", str(state)]) == 130
    assert signal.getsignal(signal.SIGINT) is before  # Ctrl-C is Python's again
    err = capsys.readouterr().err
    assert "interrupted inside the step after t = 0.002 s" in err
    assert "no state (interrupted inside a step" in err and not state.exists()
    with np.load(out, allow_pickle=False) as f:
        assert f["t"].shape == (2,)
