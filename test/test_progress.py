"""Progress of long work (contact_lcp.progress): a bar with the time left on a terminal,
plain lines with the share done and the time left otherwise; ``simulate`` and
``table3`` show it; the numerical core never imports it, tqdm or Ray."""

import ast
import io
import os
import re

import pytest

import contact_lcp.progress as progress
from contact_lcp.cli import main
from contact_lcp.progress import Progress, clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLINE = os.path.join(ROOT, "config", "incline.yaml")


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def fake_clock(monkeypatch):
    """``progress``'s clock, moved by hand [s]."""
    now = [100.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    return now


def test_plain_lines_give_the_share_done_and_the_time_left(fake_clock):
    out = io.StringIO()
    bar = Progress(4, desc="sweep", unit="run", stream=out, every=5.0)
    fake_clock[0] += 2.0
    bar.update(1, "failed=0")  # < 5 s since the start: no line yet
    assert out.getvalue() == ""
    fake_clock[0] += 4.0
    bar.update(1, "failed=1")  # 1 run in the 4 s after the first: 8 s left for 2
    fake_clock[0] += 2.0
    bar.update(1)  # 2 s after the last line: none
    bar.close()  # 2 runs in the 6 s after the first: 3 s left for the last
    bar.close()
    assert out.getvalue().splitlines() == [
        "sweep: 2/4 runs  failed=1  [50%, 0:06 elapsed, ~0:08 left]",
        "sweep: 3/4 runs  failed=1  [75%, 0:08 elapsed, ~0:03 left]"]
    assert "\r" not in out.getvalue()


def test_the_time_left_leaves_out_the_first_update_which_carries_the_start_up(fake_clock):
    # a run whose first step loads its kernels (30 s) and whose steps then take 1 ms: the
    # time left is that of the steps, not 30 s times the steps left
    out = io.StringIO()
    bar = Progress(20_000, unit="step", stream=out, every=1.0)
    assert bar.left() is None
    fake_clock[0] += 30.0
    bar.update(1)
    assert bar.left() is None  # (one rate point: unknown, "?")
    assert "~? left" in out.getvalue().splitlines()[-1]
    for _ in range(999):
        fake_clock[0] += 1e-3
        bar.update(1)
    assert bar.left() == pytest.approx(19_000 * 1e-3)
    bar.update(19_000)
    assert bar.left() == 0.0


def test_a_terminal_gets_a_bar_redrawn_in_place():
    out = Terminal()
    with Progress(3, desc="table3", unit="step", stream=out) as bar:
        for _ in range(3):
            bar.update(1, "t=0.01s")
        bar.write("hoist: done")
    text = out.getvalue()
    assert "\r" in text and "table3" in text and "3/3" in text and "t=0.01s" in text
    assert "hoist: done\n" in text
    assert "elapsed" not in text  # tqdm's own layout, not the plain lines'


def test_clock():
    assert [clock(x) for x in (0, 59.6, 61, 3725, None, float("inf"))] == [
        "0:00", "1:00", "1:01", "1:02:05", "?", "?"]


def test_simulate_ends_its_plain_lines_with_the_time_left(capsys):
    assert main(["simulate", INCLINE, "--duration", "0.02"]) == 0
    err = capsys.readouterr().err.splitlines()
    last = [line for line in err if line.startswith("t=")][-1]
    assert re.search(r"t=\s*0\.020s .* \[100%, \d+:\d\d elapsed, ~0:00 left\]$", last), last


def test_simulates_status_rate_leaves_out_the_first_step(capsys, monkeypatch):
    # the first step loads the kernels (here 30 s on a clock moved by hand), the others
    # take 1 ms of wall time for 1 ms simulated: the status says 1x, not 20 ms / 30 s
    import types

    import contact_lcp.cli_simulate as cli_simulate
    from contact_lcp.sim import Simulator

    now = [0.0]
    monkeypatch.setattr(cli_simulate, "time", types.SimpleNamespace(
        perf_counter=lambda: now[0]))
    step = Simulator.step

    def timed(sim):
        now[0] += 30.0 if sim.stats.steps == 0 else 1e-3
        return step(sim)
    monkeypatch.setattr(Simulator, "step", timed)
    assert main(["simulate", INCLINE, "--duration", "0.02"]) == 0
    err = capsys.readouterr().err.splitlines()
    last = [line for line in err if line.startswith("t=")][-1]
    assert re.search(r"rtf= 1\.00x", last), last


def test_simulate_shows_a_bar_on_a_terminal(capsys, monkeypatch):
    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    assert main(["simulate", INCLINE, "--duration", "0.02"]) == 0
    text = term.getvalue()
    assert "\r" in text and "20/20" in text and "step" in text
    assert "done: 20 steps" in capsys.readouterr().out


def test_table3_shows_the_progress_of_each_scene(tmp_path, capsys):
    assert main(["table3", INCLINE, "--duration", "0.02"]) in (0, 1)
    err = capsys.readouterr().err
    assert re.search(r"incline: 20/20 steps  t=0\.02s failures=0  \[100%", err), err


CORE = ("lcp", "contact", "collision", "dynamics", "sim")
LAYERS_ABOVE = ("ray", "tqdm", "contact_lcp.progress", "contact_lcp.sweep")


def imported_names(path):
    """Every module name an ``import`` or ``from ... import`` of ``path`` names."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


def test_the_core_imports_neither_ray_nor_tqdm_nor_the_layers_that_do():
    bad, files = [], 0
    for part in CORE:
        for folder, _, names in os.walk(os.path.join(ROOT, "contact_lcp", part)):
            for name in names:
                if name.endswith(".py"):
                    files += 1
                    path = os.path.join(folder, name)
                    bad += [f"{path}: {m}" for m in imported_names(path)
                            if any(m == x or m.startswith(x + ".") for x in LAYERS_ABOVE)]
    assert files > 50 and not bad, bad
    here = list(imported_names(os.path.join(ROOT, "contact_lcp", "sweep", "runner.py")))
    assert "ray" in here  # (the scan reads imports inside functions)
