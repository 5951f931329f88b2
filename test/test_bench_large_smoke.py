"""Smoke test of benchmarks/bench_large.py: it steps the scenes it is given, writes one CSV
row per step and groups them by contacts in the LCP. Nothing here is timed."""

import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

bench_large = pytest.importorskip("bench_large")
common = pytest.importorskip("common")


def test_rows_per_step_and_the_summary(tmp_path, capsys):
    assert bench_large.main(["box_stack.yaml:0.05", "--results-dir", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("bench_large_*.csv")
    rows = common.read_csv(path)
    assert [int(r["step"]) for r in rows] == list(range(1, len(rows) + 1)) and len(rows) >= 5
    assert all(r["scene"] == "box_stack.yaml" and r["groups"] == "1" for r in rows)
    assert all(r["status"] in ("SOLVED", "NO_CONTACT") for r in rows)
    # each step's rungs: none without contact, the solving rung last with contact
    assert all((r["rungs"] == "") == (r["status"] == "NO_CONTACT") for r in rows)
    assert all(r["rungs"].split(" ")[-1].split("(")[0].endswith(":solved")
               for r in rows if r["status"] == "SOLVED")
    assert max(int(r["active"]) for r in rows) > 0  # the stack rests on contacts
    assert float(rows[-1]["peak_rss_mb"]) > 0
    out = capsys.readouterr().out
    assert "median_pivots" in out
    # the slowest step after the first (which compiles) and when it ran
    (total,) = bench_large.totals([dict(r, ms=float(r["ms"]), t=float(r["t"]),
                                        islands=int(r["islands"])) for r in rows])
    slowest = max(rows[1:], key=lambda r: float(r["ms"]))
    assert total["slowest_ms"] == float(slowest["ms"]) and total["slowest_t"] == float(slowest["t"])
    assert "slowest_ms" in out


def test_the_csv_holds_every_step_so_far_while_the_run_goes_on(tmp_path, monkeypatch):
    """A run of hours that is stopped keeps its rows: the CSV is rewritten after each
    step (here read back when the third step has been written)."""
    seen = []
    real = common.write_csv

    def spy(path, rows, columns, float_format=None):
        real(path, rows, columns, float_format)
        seen.append(len(common.read_csv(path)))

    monkeypatch.setattr(common, "write_csv", spy)
    assert bench_large.main(["box_stack.yaml:0.03", "--results-dir", str(tmp_path)]) == 0
    assert seen[:3] == [1, 2, 3] and seen[-1] == seen[-2]  # and once more at the end


def test_failed_frictional_lcps_are_written_and_read_back_by_the_hard_lcp_bench(
        tmp_path, monkeypatch):
    """``--failed-lcps DIR``: each frictional LCP that a step did not certify (here every
    one: the pyramid model's solver is made to report MAX_PIVOTS) is written in
    bench_hard_lcps' format; read back, it is the same LCP, which robust certifies."""
    from dataclasses import replace

    from contact_lcp.contact import pyramid
    from contact_lcp.lcp import LCPStatus, solve

    bench_hard = pytest.importorskip("bench_hard_lcps")
    real = pyramid.lcp_rung
    seen = []

    def failing(M, q, method, opts):
        seen.append((M.copy(), q.copy(), opts.get("initial_basis")))
        return replace(real(M, q, method, opts), status=LCPStatus.MAX_PIVOTS)

    monkeypatch.setattr(pyramid, "lcp_rung", failing)
    folder = tmp_path / "failed"
    assert bench_large.main(["spheres_21.yaml:0.03", "--results-dir", str(tmp_path),
                             "--failed-lcps", str(folder)]) == 0
    assert pyramid.lcp_rung is failing  # put back after the run
    rows = common.read_csv(next(tmp_path.glob("bench_large_*.csv")))
    assert any(int(r["failures"]) > 0 for r in rows)
    files = sorted(folder.glob("spheres_21_t*.npz"))
    assert len(files) == sum(int(r["failures"]) for r in rows) == len(seen) > 0
    M, q, basis = bench_hard.load(str(files[0]))
    M0, q0, basis0 = seen[0]
    assert np.array_equal(M.toarray(), M0) and np.array_equal(q, q0)
    # (an empty warm start is a cold one: it is read back as None)
    assert np.array_equal([] if basis is None else basis, [] if basis0 is None else basis0)
    assert solve(M.toarray(), q, "robust").success


def test_a_run_stopped_and_resumed_from_its_state_file_gives_the_same_rows(tmp_path):
    """``--state FILE`` after every step, ``--resume FILE``: the resumed run's rows go on
    from the saved step with the same contacts, pivots and outcomes as one run through."""
    whole, part, rest = (tmp_path / d for d in ("whole", "part", "rest"))
    state = tmp_path / "tower.state"
    assert bench_large.main(["tower_5.yaml:0.3", "--results-dir", str(whole)]) == 0
    assert bench_large.main(["tower_5.yaml:0.15", "--results-dir", str(part),
                             "--state", str(state)]) == 0
    assert bench_large.main(["tower_5.yaml:0.3", "--results-dir", str(rest),
                             "--resume", str(state)]) == 0
    keys = ("step", "t", "contacts", "active", "pivots", "status", "max_penetration")

    def table(folder):
        (path,) = folder.glob("bench_large_*.csv")
        return [tuple(r[k] for k in keys) for r in common.read_csv(path)]

    a, b, c = table(whole), table(part), table(rest)
    assert len(b) == 15 and [int(r[0]) for r in c] == list(range(16, 31))
    assert a == b + c
    with pytest.raises(SystemExit):  # one scene only
        bench_large.main(["tower_5.yaml:0.1", "box_stack.yaml:0.1", "--state", str(state)])
    with pytest.raises(SystemExit):  # another scene's state: an error, not a traceback
        bench_large.main(["box_stack.yaml:0.1", "--resume", str(state),
                          "--results-dir", str(tmp_path / "other")])
