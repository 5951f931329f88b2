"""Bad state files: never unpickled, every field checked, the culprit named, nothing changed.

A state file is what users attach to bug reports, so loading one must not run code
(a crafted pickle is refused before any byte of it is interpreted) and a crafted field
(NaN time, missing counters, wrong shapes, another scene, indices that would reach a
compiled kernel) is a :class:`CheckpointError` naming the field.
"""

import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.checkpoint import CheckpointError, read_state

ROOT = Path(__file__).resolve().parent.parent
ARM = str(ROOT / "test" / "data" / "two_link_arm.urdf")


class _RunsACommand:
    """Unpickling this runs ``touch <marker>``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _box(steps=5):
    sim = Simulator.from_file(str(ROOT / "config" / "box_on_plane.yaml"))
    for _ in range(steps):
        sim.step()
    return sim


def _arm():
    return Simulator(scene_from_dict({
        "time_step": 1e-3, "ground": False,
        "robots": [{"name": "arm", "urdf": ARM, "floating_base": False,
                    "base_pose": [0, 0, 0.5, 0, 0, 0, 1],
                    "controller": {"type": "pd", "kp": 100.0, "kd": 10.0}}]}, base_dir="."))


@pytest.fixture(scope="module")
def box_state(tmp_path_factory):
    """A valid state file of box_on_plane after 5 steps (contacts, a warm-start basis)."""
    path = tmp_path_factory.mktemp("state") / "box.state"
    _box().save_state(path)
    return path


def _rewrite(src, dst, edit):
    """Copy the state file ``src`` to ``dst`` with ``edit(header, arrays)`` applied."""
    with np.load(src, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(str(arrays.pop("header")))
    edit(header, arrays)
    _savez(dst, header=np.array(json.dumps(header)), **arrays)
    return dst


def _savez(path, **arrays):
    with open(path, "wb") as f:  # (np.savez would append .npz to the name)
        np.savez(f, **arrays)


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_a_pickle_that_would_run_a_command_is_refused_unread(tmp_path, protocol):
    marker = tmp_path / "marker"
    path = tmp_path / "evil.state"
    path.write_bytes(pickle.dumps({"format": "contact_lcp.state/1",
                                   "t": _RunsACommand(marker)}, protocol=protocol))
    sim = _box(0)
    with pytest.raises(CheckpointError, match="evil.state") as e:
        sim.load_state(path)
    with pytest.raises(CheckpointError):
        read_state(path)
    assert not marker.exists(), "the pickle was unpickled"
    if protocol >= 2:  # a binary pickle: how earlier versions saved their state
        assert "earlier version" in str(e.value) and "--save-state" in str(e.value)
    assert sim.t == 0.0


def test_an_earlier_versions_state_file_says_how_to_save_it_again(tmp_path):
    """The bundled pour's state was a pickle before; such a file is refused by name."""
    path = tmp_path / "old.state"
    path.write_bytes(pickle.dumps({"format": "contact_lcp.state/1", "t": 0.5},
                                  protocol=pickle.HIGHEST_PROTOCOL))
    with pytest.raises(CheckpointError,
                       match=r"pickle state file of an earlier version.*contact-lcp simulate"):
        _box(0).load_state(path)


def test_a_valid_file_loads_and_is_an_npz_without_pickles(box_state):
    sim = _box(0)
    sim.load_state(box_state)
    assert sim.t == pytest.approx(0.005) and sim.stats.steps == 5
    with np.load(box_state, allow_pickle=False) as f:
        assert all(f[k].dtype != object for k in f.files)
        header = json.loads(str(f["header"]))
    assert header["schema"] == "contact_lcp.state" and header["version"] == 3


# (what is crafted, edit of (header, arrays), the message's field and expectation)
CRAFTED = [
    ("t NaN", lambda h, a: h["state"].update(t={"float": "nan"}), r"t: expected a finite"),
    ("t negative", lambda h, a: h["state"].update(t=-1.0), r"t: expected a finite number >= 0"),
    ("t a string", lambda h, a: h["state"].update(t="1"), r"t: expected a finite number"),
    ("stats None", lambda h, a: h["state"].update(stats=None), r"stats: expected a mapping"),
    ("a counter negative", lambda h, a: h["state"]["stats"]["dict"].update(steps=-3),
     r"stats\.steps: expected an integer >= 0, got -3"),
    ("a counter a float", lambda h, a: h["state"]["stats"]["dict"].update(solves=1.5),
     r"stats\.solves: expected an integer"),
    ("q too short", lambda h, a: a.update(q=a["q"][:3]),
     r"\bq: expected a float array of shape \(7,\)"),
    ("q NaN", lambda h, a: a.update(q=np.full(7, np.nan)), r"\bq: expected finite values"),
    ("q's quaternion not unit", lambda h, a: a.update(q=a["q"] * 2.0),
     r"\bq: expected unit quaternions"),
    ("v as strings", lambda h, a: a.update(v=np.array(["x"] * 6)), r"\bv: expected a bool"),
    ("q missing", lambda h, a: a.pop("q"), r"\bq: the array 'q' is missing"),
    ("a field missing", lambda h, a: h["state"].pop("guess"), r"lacks \['guess'\]"),
    ("another body", lambda h, a: h["identity"].update(bodies=["crate"]),
     r"another scene.*bodies is \['crate'\] there, \['box'\] here"),
    ("another contact model",
     lambda h, a: h["identity"].update(contact_model="frictionless"),
     r"contact_model is 'frictionless' there, 'pyramid' here"),
    ("a class by name", lambda h, a: h["state"].update(
        last={"record": "os.system", "fields": {}}), r"last: unknown record 'os.system'"),
    ("an unknown tag", lambda h, a: h["state"].update(applied={"eval": "1"}),
     r"applied: unknown entry \['eval'\]"),
    ("a record with other fields", lambda h, a: h["state"]["last"]["fields"].pop("report"),
     r"last: StepRecord: expected the fields"),
    ("contact indices out of range",
     lambda h, a: a.update({"last.contacts.body_a": a["last.contacts.body_a"] + 50}),
     r"last\.contacts\.body_a: expected indices in \[0, 2\)"),
    ("impulses of another shape",
     lambda h, a: a.update({"last.impulse_C": np.zeros((1, 3))}),
     r"last\.impulse_C: expected a float array of shape \(4, 3\)"),
    ("basis flags of another shape",
     lambda h, a: a.update({"guess.basic_b": np.zeros((4, 3), dtype=bool)}),
     r"guess\.basic_b: expected a bool array of shape \(4, 8\)"),
    ("part of a basis", lambda h, a: h["state"]["guess"]["fields"].update(basic_lam=None),
     r"guess\.basic_a: expected basic_a, basic_b and basic_lam all arrays or all null"),
    ("equilibration factors not powers of two",
     lambda h, a: a.update({"guess.equilibration": a["guess.equilibration"] * 3.0}),
     r"guess\.equilibration: expected 0 \(in both rows\) or positive powers of two"),
    ("equilibration factors of another LCP",
     lambda h, a: a.update({"guess.equilibration": a["guess.equilibration"][:, :-1]}),
     r"guess\.equilibration: expected a float array of shape \(2, 40\)"),
    ("equilibration factors without a basis",
     lambda h, a: h["state"]["guess"]["fields"].update(basic_a=None, basic_b=None,
                                                       basic_lam=None),
     r"guess\.equilibration: expected null \(a guess without a basis"),
    ("points of another shape", lambda h, a: a.update({"guess.points": np.zeros((4, 2))}),
     r"guess\.points: expected a float array of shape \(4, 3\)"),
    ("a guess of another model", lambda h, a: h["state"].update(guess={
        "record": "BasisGuess", "fields": {"pair": None, "basis": None}}),
     r"guess: expected null or a PyramidGuess \(the warm start of the 'pyramid' model\)"),
    ("a guess with another field",
     lambda h, a: h["state"]["guess"]["fields"].update(evil=1),
     r"guess: PyramidGuess: expected the fields"),
    ("a report's status not a status",
     lambda h, a: h["state"]["last"]["fields"]["report"]["fields"].update(status="SOLVED"),
     r"last\.report\.status: expected an LCPStatus or null"),
    ("an enum member unknown",
     lambda h, a: h["state"]["last"]["fields"]["report"]["fields"].update(
         outcome={"enum": "Outcome", "name": "__class__"}), r"last\.report\.outcome: expected"),
    ("another schema version", lambda h, a: h.update(version=2), r"version 2; this version reads version 3.*--save-state"),
]


@pytest.mark.parametrize("what,edit,message", CRAFTED, ids=[c[0] for c in CRAFTED])
def test_a_crafted_field_is_refused_by_name(tmp_path, box_state, what, edit, message):
    path = _rewrite(box_state, tmp_path / "crafted.state", edit)
    sim = _box(2)
    q = sim.q
    with pytest.raises(CheckpointError, match=message):
        sim.load_state(path)
    assert sim.t == pytest.approx(0.002) and np.array_equal(sim.q, q)  # left as it was


def test_a_header_that_is_not_json_or_holds_nan_is_refused(tmp_path, box_state):
    sim = _box(0)
    with np.load(box_state, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["header"] = np.array('{"schema": "contact_lcp.state", "version": NaN')
    _savez(tmp_path / "a.state", **arrays)
    with pytest.raises(CheckpointError, match="the header is not valid JSON"):
        sim.load_state(tmp_path / "a.state")
    arrays["header"] = np.array("[" * 100_000 + "]" * 100_000)
    _savez(tmp_path / "deep.state", **arrays)
    with pytest.raises(CheckpointError, match="nested too deeply"):
        sim.load_state(tmp_path / "deep.state")
    header = json.loads(str(np.load(box_state)["header"]))
    nested = 0.0
    for _ in range(900):  # within json's limit, beyond what decoding recurses through
        nested = [nested]
    header["state"]["t"] = nested
    arrays["header"] = np.array(json.dumps(header))
    _savez(tmp_path / "deep2.state", **arrays)
    with pytest.raises(CheckpointError, match="nested too deeply|t: expected"):
        sim.load_state(tmp_path / "deep2.state")
    arrays["header"] = np.zeros(3)
    _savez(tmp_path / "b.state", **arrays)
    with pytest.raises(CheckpointError, match="no JSON 'header' string"):
        sim.load_state(tmp_path / "b.state")
    np.save(tmp_path / "c.npy", np.zeros(3))
    with pytest.raises(CheckpointError, match="expected an .npz"):
        sim.load_state(tmp_path / "c.npy")


def test_a_robots_commands_round_trip_and_crafted_ones_are_refused(tmp_path):
    a = _arm()
    a.step()
    joints = a.joint_names
    a.set_command("position", [0.3], joints=[joints[0]])
    a.controls[0].track(np.array([1]), [0.0, 1.0], [[0.0], [0.2]])
    a.step()
    a.save_state(tmp_path / "arm.state")
    straight = [(a.step(), a.q)[1] for _ in range(5)]
    b = _arm()
    b.load_state(tmp_path / "arm.state")
    assert list(b.controls[0].mode) == ["position", "trajectory", None]
    assert all(np.array_equal(q, (b.step(), b.q)[1]) for q in straight)

    def mode(h, arr):
        h["state"]["controls"][0]["dict"]["mode"] = {"objects": ["position", "sudo", None]}

    def track_index(h, arr):
        arr["controls[0].tracks[0][0]"] = np.array([7])

    def times(h, arr):
        arr["controls[0].tracks[0][1].t"] = np.array([1.0, 0.0])

    for edit, message in [(mode, r"controls\[0\]\.mode: expected 3 entries"),
                          (track_index,
                           r"controls\[0\]\.tracks\[0\]\[0\]: expected indices in \[0, 3\)"),
                          (times, r"tracks\[0\]\[1\]\.t: expected strictly increasing")]:
        path = _rewrite(tmp_path / "arm.state", tmp_path / "crafted.state", edit)
        with pytest.raises(CheckpointError, match=message):
            _arm().load_state(path)
