"""benchmarks/bench_phases.py: its probes still find their places in today's kernels, its
arithmetic, and (with CONTACT_LCP_PHASE_TESTS=1) one scene measured end to end."""

import ast
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_phases  # noqa: E402

#: the end-to-end run compiles a scene's kernels from scratch into a cache of its own
#: (the probes' addresses are compiled in): about a minute, so it runs when this is "1"
PHASE_TESTS = "CONTACT_LCP_PHASE_TESTS"


def test_every_probe_finds_its_anchor_and_the_copy_parses(tmp_path):
    # (an edit of a kernel that moves an anchor line fails here, naming the line)
    copy = bench_phases.instrumented_copy(str(tmp_path))
    for rel, (function, edits) in bench_phases._EDITS.items():
        with open(os.path.join(copy, "contact_lcp", rel)) as f:
            text = f.read()
        ast.parse(text)
        body = text[text.index(function):]
        for anchor, replacement in edits:
            assert replacement in body, (rel, anchor)
    with open(os.path.join(copy, "contact_lcp", "_phase_probe.py")) as f:
        ast.parse(f.read())


def test_a_missing_anchor_is_named(tmp_path, monkeypatch):
    edits = dict(bench_phases._EDITS)
    function, probes = edits["collision/closed_forms.py"]
    edits["collision/closed_forms.py"] = (function, probes + [("    no such line\n", "")])
    monkeypatch.setattr(bench_phases, "_EDITS", edits)
    with pytest.raises(ValueError, match="no such line"):
        bench_phases.instrumented_copy(str(tmp_path))


def test_rows_are_cycles_over_the_rate_per_call():
    slots = [0] * 64
    # two solved calls at 1 GHz: 4000 cycles in the rung's own slots is 2 us a call
    slots[bench_phases.SOLVED] = 2
    slots[10], slots[12] = 1000, 1000
    slots[0], slots[1] = 500, 1500  # the island's phases, inside slot 11
    slots[11] = 2000 + 2000  # (island 2000 cycles, 2000 its own)
    slots[bench_phases.COLLIDE_CALLS] = 4
    slots[40], slots[41], slots[42], slots[43] = 4000, 0, 4000, 0
    slots[bench_phases.NEAR] = 12
    got = {"rate": 1e9, "slots": slots,
           "spent": {"first_rung": [2 * 5e-6, 2], "collide": [4 * 3e-6, 4]}}
    row = bench_phases.row_of("scene", got)
    assert row["kernel_us"] == pytest.approx(3.0)  # (1000 + 4000 + 1000) / 2 / 1000
    assert row["island_gather_us"] == pytest.approx(0.25)
    assert row["rung_islands_other_us"] == pytest.approx(1.0)
    assert row["crossing_us"] == pytest.approx(2.0)
    assert row["collide_kernel_us"] == pytest.approx(2.0)
    assert row["collide_crossing_us"] == pytest.approx(1.0)
    assert row["near_pairs"] == pytest.approx(3.0)


@pytest.mark.skipif(os.environ.get(PHASE_TESTS) != "1",
                    reason=f"compiles a scene's kernels afresh (a minute): {PHASE_TESTS}=1 runs it")
def test_go1_measured_end_to_end(tmp_path):
    copy = bench_phases.instrumented_copy(str(tmp_path))
    got = bench_phases.measure(copy, "go1_stand", 50, 100, str(tmp_path / "cache"))
    row = bench_phases.row_of("go1_stand", got)
    # every counted step solved by the first rung (the robot stands), each phase timed
    assert row["solved"] == row["calls"] == 100
    assert all(row[name + "_us"] > 0 for _, name in bench_phases.PHASES)
    # the call measured from Python contains the time inside it
    assert 0 < row["kernel_us"] < row["python_timed_us"]
    assert 0 < row["collide_kernel_us"] < row["collide_python_timed_us"]
