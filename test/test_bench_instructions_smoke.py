"""Smoke test of benchmarks/bench_instructions.py: a few of the humanoid's steps counted
under valgrind, split by library, into its CSV. Nothing is compared with a bound."""

import os
import shutil
import subprocess
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import bench_instructions  # noqa: E402
import common  # noqa: E402

from contact_lcp.sim import Simulator  # noqa: E402


def _marks_build(tmp_path):
    try:
        return bench_instructions.build_marks(str(tmp_path))
    except RuntimeError as e:
        pytest.skip(str(e))


#: the end-to-end count runs when this is "1": valgrind's CPU lacks AVX-512, so numba
#: builds the scene's kernels for it apart, which on a cold cache (a fresh clone) takes
#: longer than the rest of the suite; the parser and the marks are tested below in any case
VALGRIND_TESTS = "CONTACT_LCP_VALGRIND_TESTS"


@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None,
                    reason="valgrind is not installed")
@pytest.mark.skipif(os.environ.get(VALGRIND_TESTS) != "1",
                    reason=f"counts under valgrind, minutes on a cold cache: {VALGRIND_TESTS}=1 "
                           "runs it")
def test_a_few_humanoid_steps_are_counted_and_split_by_library(tmp_path, capsys):
    _marks_build(tmp_path)
    # the scene's kernels in the cache first (the counted child loads them from it)
    Simulator.from_file(os.path.join(bench_instructions.ROOT, "config",
                                     "humanoid_stand.yaml")).step()
    assert bench_instructions.main(["--scenes", "humanoid_stand", "--steps", "3", "--settle",
                                    "3", "--results-dir", str(tmp_path)]) == 0
    assert "instructions a step" in capsys.readouterr().out
    (csv,) = tmp_path.glob("bench_instructions_*.csv")
    (row,) = common.read_csv(csv)
    total = float(row["ir_per_step"])
    groups = [float(row[f"{g}_ir"]) for g in bench_instructions.GROUPS]
    # a standing robot's step runs Python, its compiled kernels and Pinocchio, and the
    # groups are a partition of what was counted
    assert float(row["python_ir"]) > 0 and float(row["kernels_ir"]) > 0
    assert float(row["pinocchio_ir"]) > 0
    assert sum(groups) == pytest.approx(total, rel=1e-9)
    assert 0.0 < float(row["python_share"]) < 1.0
    assert 0.0 < float(row["i1_miss_per_step"]) < total


def test_the_annotations_function_lines_are_grouped_by_their_objects():
    # callgrind_annotate's lines as it prints them (five event columns, the function, its
    # object); 2 steps, so the sums are halved
    text = "\n".join([
        "Ir I1mr ILmr D1mr DLmr file:function",
        "--------",
        "4,000 (10.0%) 40 (1.0%) 4 8 . Python/ceval.c:_PyEval_EvalFrameDefault "
        "[/x/lib/libpython3.11.so.1.0]",
        "2,000 20 2 4 . ???:0x0000000025b30000 [???]",
        "600 6 . . . ./malloc/./malloc/malloc.c:_int_free [/usr/lib/x86_64-linux-gnu/libc.so.6]",
        "800 8 . . . ???:typeof_typecode [/v/numba/_dispatcher.cpython-311-x86_64-linux-gnu.so]",
        "100 1 . . . ???:llvm::Foo [/v/llvmlite/binding/libllvmlite.so]",
    ])
    table = bench_instructions._by_group(text, 2)
    assert table["python"]["ir"] == 2000 and table["python"]["i1_miss"] == 20
    assert table["python"]["d1_miss"] == 4 and table["python"]["l2d_miss"] == 0
    assert table["kernels"]["ir"] == 1000 and table["libc"]["ir"] == 300
    assert table["numba_rt"]["ir"] == 400
    # numba's compiler (a kernel loaded while counting) is kept out of the totals
    assert table["numba_compile"]["ir"] == 50
    assert table["total"]["ir"] == 3700


def test_without_a_compiler_the_marks_say_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="C compiler"):
        bench_instructions.build_marks(str(tmp_path))


def test_the_marks_compile_where_valgrind_headers_are(tmp_path):
    if not os.path.exists("/usr/include/valgrind/callgrind.h"):
        pytest.skip("valgrind's headers are not installed")
    lib = _marks_build(tmp_path)
    out = subprocess.run(["nm", "-D", lib], capture_output=True, text=True)
    if out.returncode:
        pytest.skip("nm is not installed")
    assert "marks_start" in out.stdout and "marks_stop" in out.stdout
