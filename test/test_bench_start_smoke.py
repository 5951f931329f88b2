"""Smoke test of benchmarks/bench_start.py: its compile log counts what numba compiles,
per kernel and signature, with nested compilations apart, and its command line refuses
unknown entries. Nothing is timed; the cold and warm runs themselves take minutes and
stay in the benchmark."""

import os
import sys

import numpy as np
import pytest
from numba import njit

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_start  # noqa: E402


def test_compile_log_counts_kernels_signatures_and_nesting():
    @njit
    def inner(x, k):
        return x[k] * 2.0

    @njit
    def outer(x, n):
        return inner(x, 0) + inner(x, n)  # a literal 0: a second signature of inner

    log = bench_start.CompileLog().install()
    try:
        assert outer(np.arange(3.0), 2) == 4.0
    finally:
        log.uninstall()
    names = {name.rsplit(".", 1)[-1]: k for name, k in log.kernels.items()}
    assert len(names["outer"]["signatures"]) == 1
    assert sorted(names["inner"]["signatures"]) == ["array(float64, 1d, C), Literal[int](0)",
                                                   "array(float64, 1d, C), int64"]
    # outer's compilation includes inner's two: its own seconds exclude them
    assert names["outer"]["incl_s"] >= names["outer"]["self_s"] + names["inner"]["incl_s"] - 1e-9
    assert all(k["later_s"] == 0.0 for k in log.kernels.values())
    top = bench_start.top_kernels(log.kernels, 1)
    assert top[0][1]["self_s"] == max(k["self_s"] for k in log.kernels.values())


def test_later_compilations_are_counted_apart():
    @njit
    def f(x):
        return x + 1

    log = bench_start.CompileLog().install()
    log.later = True
    try:
        assert f(1.5) == 2.5
    finally:
        log.uninstall()
    (k,) = [k for name, k in log.kernels.items() if name.endswith(".f")]
    assert k["later_s"] == k["self_s"] > 0.0


def test_unknown_entry_is_refused(capsys):
    with pytest.raises(SystemExit):
        bench_start.main(["--entries", "sim,gui", "--results-dir", ""])
    err = capsys.readouterr().err
    assert "gui" in err and "sim" in err
