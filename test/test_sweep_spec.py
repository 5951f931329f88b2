"""Sweep specs (contact_lcp.sweep.spec) and results files (contact_lcp.sweep.results),
without Ray: the expansion into runs, the run ids, the up-front checks, the CSV rows."""

import os

import numpy as np
import pytest

from contact_lcp.cli import main
from contact_lcp.exceptions import SweepError
from contact_lcp.sweep.results import ResultsFile, Table, cell, parse, read_csv
from contact_lcp.sweep.spec import apply_key, load_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLINE = os.path.join(ROOT, "config", "incline.yaml")


def spec(**parameters):
    return {"scene": INCLINE, "duration": 0.05, "parameters": parameters}


def test_the_grid_is_the_product_of_the_lists_in_key_order():
    s = load_spec(spec(**{"ground.friction": [0.2, 0.5], "bodies.0.mass": [1.0, 2.0, 3.0]}))
    assert [tuple(r.values.values()) for r in s.runs] == [
        (0.2, 1.0), (0.2, 2.0), (0.2, 3.0), (0.5, 1.0), (0.5, 2.0), (0.5, 3.0)]
    # the values are in each run's scene mapping, the file's other keys kept
    r = s.runs[4]
    assert r.scene_data["ground"] == {"height": 0.0, "friction": 0.5}
    assert r.scene_data["bodies"][0]["mass"] == 2.0
    assert r.scene_data["bodies"][0]["size"] == [0.2, 0.2, 0.1]
    assert len(set(s.ids)) == 6


def test_run_ids_depend_on_the_values_not_on_the_order_of_the_runs():
    a = load_spec(spec(**{"ground.friction": [0.2, 0.5]}))
    b = load_spec(spec(**{"ground.friction": [0.5, 0.2, 0.9]}))
    assert a.ids == b.ids[1::-1]
    longer = load_spec({**spec(**{"ground.friction": [0.2, 0.5]}), "duration": 0.1})
    assert not set(longer.ids) & set(a.ids)  # another duration is another run


def test_repeated_values_get_numbered_ids():
    s = load_spec({**spec(**{"ground.friction": [0.3]}), "samples": 3})
    assert s.ids[1:] == [s.ids[0] + "-1", s.ids[0] + "-2"]


def test_the_same_seed_draws_the_same_runs():
    d = {**spec(**{"bodies.0.mass": {"uniform": [0.5, 2.0]},
                   "ground.friction": {"normal": [0.5, 0.05]}, "time_step": [1e-3, 2e-3]}),
         "samples": 4, "seed": 7}
    a, b = load_spec(d), load_spec(d)
    other = load_spec({**d, "seed": 8})
    assert a.ids == b.ids and [r.values for r in a.runs] == [r.values for r in b.runs]
    assert len(a.runs) == 8 and len(set(a.ids)) == 8
    masses = [r.values["bodies.0.mass"] for r in a.runs]
    assert all(0.5 <= m < 2.0 for m in masses) and len(set(masses)) == 8
    assert not set(other.ids) & set(a.ids)


def test_a_spec_file_names_its_scene_relative_to_itself(tmp_path):
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "box.yaml").write_text(open(INCLINE).read())
    (tmp_path / "spec.yaml").write_text(
        "scene: scenes/box.yaml\nparameters:\n  contact.model: [pyramid, frictionless]\n")
    s = load_spec(str(tmp_path / "spec.yaml"))
    assert s.duration == 2.0  # the scene's
    assert [r.scene_data["contact"] for r in s.runs] == [{"model": "pyramid"},
                                                         {"model": "frictionless"}]


@pytest.mark.parametrize("parameters, named", [
    ({"ground.frction": [0.2]}, ["ground.frction=0.2", "unknown key 'frction'"]),
    ({"bodies.0.mass": [1.0, -1.0]}, ["bodies.0.mass=-1.0", "bodies[0].mass", "> 0"]),
    ({"bodies.3.mass": [1.0]}, ["parameters.bodies.3.mass", "list of 1", "'3'"]),
    ({"bodies.x.mass": [1.0]}, ["parameters.bodies.x.mass", "'x'"]),
    ({"bodies.0.mass.kg": [1.0]}, ["parameters.bodies.0.mass.kg", "1.0, not a mapping"]),
    ({"contact.model": ["nosuch"]}, ["contact.model='nosuch'", "pyramid"]),
    ({"bodies.0.pose": [[0, 0, 0.05]]}, ["bodies.0.pose=[0, 0, 0.05]", "bodies[0].pose"]),
    ({"bodies.0.mass": 3}, ["parameters.bodies.0.mass", "list of values", "uniform"]),
    ({"bodies.0.mass": []}, ["parameters.bodies.0.mass", "empty list"]),
    ({"bodies.0.mass": {"uniform": [2, 1]}}, ["bodies.0.mass.uniform", "lo < hi"]),
    ({"bodies.0.mass": {"normal": [1, 0]}}, ["bodies.0.mass.normal", "sigma > 0"]),
    ({"bodies.0.mass": {"beta": [1, 2]}}, ["parameters.bodies.0.mass", "normal"]),
    ({"ground..friction": [0.2]}, ["'ground..friction'", "dotted scene key"]),
])
def test_a_bad_key_or_value_is_named_before_anything_runs(parameters, named):
    d = spec(**parameters)
    if any(isinstance(v, dict) for v in parameters.values()):
        d["samples"] = 2
    with pytest.raises(SweepError) as e:
        load_spec(d)
    for part in named:
        assert part in str(e.value), (part, str(e.value))


@pytest.mark.parametrize("extra, named", [
    ({"sample": 3}, ["unknown key 'sample'"]),
    ({"duration": -1}, ["duration", "-1"]),
    ({"seed": -2}, ["seed", "-2"]),
    ({"record": "yes"}, ["record", "'yes'"]),
    ({"scene": "nosuch.yaml"}, ["scene", "nosuch.yaml"]),
    ({"parameters": {}}, ["parameters", "dotted scene keys"]),
])
def test_a_bad_spec_key_is_named(extra, named):
    with pytest.raises(SweepError) as e:
        load_spec({**spec(**{"ground.friction": [0.2]}), **extra})
    for part in named:
        assert part in str(e.value), (part, str(e.value))


def test_a_distribution_needs_samples():
    with pytest.raises(SweepError, match="samples.*required with a distribution"):
        load_spec(spec(**{"bodies.0.mass": {"uniform": [1, 2]}}))


def test_apply_key_creates_missing_sections_but_not_list_items():
    data = {"bodies": [{"mass": 1.0}]}
    apply_key(data, "contact.options.max_pivots", 50)
    apply_key(data, "bodies.0.pose.2", 0.3)  # (the loader then rejects a 3-item pose)
    assert data["contact"] == {"options": {"max_pivots": 50}}
    with pytest.raises(SweepError, match="list of 1"):
        apply_key(data, "bodies.1.mass", 2.0)


def test_the_cli_names_a_bad_key_and_starts_nothing(tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text(f"scene: {INCLINE}\nparameters:\n  ground.fricton: [0.1]\n")
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "ground.fricton=0.1" in err and "unknown key 'fricton'" in err
    assert not (tmp_path / "out").exists()


COLUMNS = ["run_id", "ground.friction", "bodies.0.pose", "status", "message", "final_x"]


def row(run_id, x):
    return {"run_id": run_id, "ground.friction": 0.1, "bodies.0.pose": [0, 0, 0.05],
            "status": "ok", "message": "", "final_x": x}


def test_results_rows_read_back_exactly_and_each_id_once(tmp_path):
    f = ResultsFile(str(tmp_path), COLUMNS)
    x = 0.1 + 0.2  # not a short decimal: read back exactly or not at all
    assert f.append(row("a", x)) and f.append(row("b", -1e-300))
    assert not f.append(row("a", 5.0))  # a retried run that had finished
    f.close()
    header, rows = read_csv(f.path)
    assert header == COLUMNS
    assert [r["run_id"] for r in rows] == ["a", "b"]
    assert rows[0]["final_x"] == x and rows[1]["final_x"] == -1e-300
    assert rows[0]["bodies.0.pose"] == [0, 0, 0.05] and rows[0]["message"] == ""


def test_run_ids_that_look_like_numbers_read_back_as_text(tmp_path):
    # hex digests of digits alone, or of digits, one e and digits, parse as numbers
    f = ResultsFile(str(tmp_path), COLUMNS)
    for run_id in ("123456789012", "12e345678901", "0000000000ab"):
        f.append(row(run_id, 1.0))
    f.close()
    assert [r["run_id"] for r in read_csv(f.path)[1]] == [
        "123456789012", "12e345678901", "0000000000ab"]
    assert ResultsFile(str(tmp_path), COLUMNS, resume=True).ids == {
        "123456789012", "12e345678901", "0000000000ab"}


def test_results_resume_drops_a_cut_line_and_refuses_another_spec(tmp_path):
    f = ResultsFile(str(tmp_path), COLUMNS)
    f.append(row("a", 1.0))
    f.close()
    with open(f.path, "a") as out:
        out.write("b,0.1,\"[0, 0")  # a driver killed in the middle of a write
    with pytest.raises(SweepError, match="exists.*--resume"):
        ResultsFile(str(tmp_path), COLUMNS)
    g = ResultsFile(str(tmp_path), COLUMNS, resume=True)
    assert g.ids == {"a"}
    g.append(row("b", 2.0))
    g.close()
    assert [r["run_id"] for r in read_csv(f.path)[1]] == ["a", "b"]
    with pytest.raises(SweepError, match="columns"):
        ResultsFile(str(tmp_path), COLUMNS[:-1], resume=True)


def test_cells_and_the_table():
    for v in (0.1 + 0.2, -3, "pyramid", [1.5, 2], {"a": 1}, True, None, float("inf")):
        assert parse(cell(v)) == v
    assert np.isnan(parse(cell(float("nan"))))
    t = Table([row("a", 1.0), row("b", 2.0)], COLUMNS)
    assert t["final_x"] == [1.0, 2.0] and t[1]["run_id"] == "b" and len(t) == 2
    with pytest.raises(KeyError, match="final_y"):
        t["final_y"]
