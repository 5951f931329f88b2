"""A state file's values as JSON plus named arrays, and back, without pickle.

:func:`encode` turns a tree of the values a simulator's state holds into a JSON-able
tree and a dict of arrays (for one ``.npz``); :func:`decode` rebuilds it. Only these
values exist in a file, each JSON object carrying exactly one tag:

- ``None``, bool, int, str and finite floats as JSON; ``{"float": "nan"|"inf"|"-inf"}``;
- lists as JSON lists; ``{"tuple": [...]}``; ``{"dict": {str: value}}``;
- ``{"array": name}``: a numeric or bool array stored in the ``.npz`` under ``name``;
- ``{"objects": [...]}``: a 1-d object array of None or str (the controllers' modes);
- ``{"enum": "Outcome"|"LCPStatus", "name": ...}``;
- ``{"record": kind, "fields": {...}}``: one of :data:`RECORDS` (a frozen dataclass
  built from exactly its fields) or ``"SampledReference"`` (``t``, ``p``, ``v``).

Decoding builds nothing else, so a file can hold data but never name code to run. The
values' shapes and meaning are checked by :mod:`contact_lcp.sim.state_checks`.
"""

import dataclasses
import math
from enum import Enum
from types import MappingProxyType

import numpy as np

from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.contact.guess import GUESSES
from contact_lcp.contact.report import Outcome, SolveReport
from contact_lcp.lcp.result import LCPStatus
from contact_lcp.sim.projection import Projection
from contact_lcp.sim.references import SampledReference
from contact_lcp.sim.stepper import StepRecord

#: the dataclasses a state file may hold, by name
RECORDS = {cls.__name__: cls for cls in (SolveReport, ContactSet, StepRecord, Projection,
                                         *GUESSES.values())}
#: fields a record gained after files of this layout were written (a guess's
#: equilibration factors): a file that holds none of them reads them as null, which
#: the model takes as "equilibrate anew": the resumed run's next answer is the one the
#: carried factors give unless a choice made in equilibrated units differs (a stack's
#: redundant contacts: another certified basis, the same motion to round-off)
ADDED_FIELDS = {"PyramidGuess": ("equilibration",)}
#: the enums a state file may hold, by name
ENUMS = {cls.__name__: cls for cls in (Outcome, LCPStatus)}


class DecodeError(ValueError):
    """A value of the file that is not one :func:`decode` builds (``path`` names it)."""

    def __init__(self, path, message):
        self.path = path
        super().__init__(f"{path}: {message}")


def encode(value, name, arrays):
    """The JSON-able tree of ``value``; its arrays go into ``arrays`` under names that
    start with ``name`` (the value's path in the state)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, Enum):
        return {"enum": type(value).__name__, "name": value.name}
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return {"objects": [encode(v, f"{name}[{i}]", arrays)
                                for i, v in enumerate(value.ravel())]}
        arrays[name] = value
        return {"array": name}
    if isinstance(value, SampledReference):
        return {"record": "SampledReference",
                "fields": {k: encode(getattr(value, k), f"{name}.{k}", arrays) for k in "tpv"}}
    if dataclasses.is_dataclass(value) and type(value).__name__ in RECORDS:
        return {"record": type(value).__name__,
                "fields": {f.name: encode(getattr(value, f.name), f"{name}.{f.name}", arrays)
                           for f in dataclasses.fields(value)}}
    if isinstance(value, (dict, MappingProxyType)):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"{name}: a state file holds mappings with string keys only")
        return {"dict": {str(k): encode(v, f"{name}.{k}", arrays) for k, v in value.items()}}
    if isinstance(value, tuple):
        return {"tuple": [encode(v, f"{name}[{i}]", arrays) for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [encode(v, f"{name}[{i}]", arrays) for i, v in enumerate(value)]
    raise TypeError(f"{name}: a state file cannot hold a {type(value).__name__}")


def decode(tree, path, arrays):
    """The value of ``tree`` (of :func:`encode`) with the arrays of the file ``arrays``."""
    if tree is None or isinstance(tree, (bool, str, int, float)):
        return tree
    if isinstance(tree, list):
        return [decode(v, f"{path}[{i}]", arrays) for i, v in enumerate(tree)]
    if not isinstance(tree, dict) or not tree:
        raise DecodeError(path, f"unexpected JSON value {type(tree).__name__}")
    tag = next(iter(tree))
    body = tree[tag]
    expected = {"float": 1, "tuple": 1, "dict": 1, "array": 1, "objects": 1, "enum": 2,
                "record": 2}
    if tag not in expected or len(tree) != expected[tag]:
        raise DecodeError(path, f"unknown entry {sorted(tree)}; expected one of "
                          f"{sorted(expected)}")
    if tag == "float":
        if body not in ("nan", "inf", "-inf"):
            raise DecodeError(path, f"expected 'nan', 'inf' or '-inf', got {body!r}")
        return float(body)
    if tag in ("tuple", "objects") and not isinstance(body, list):
        raise DecodeError(path, f"{tag}: expected a list, got {type(body).__name__}")
    if tag == "tuple":
        return tuple(decode(v, f"{path}[{i}]", arrays) for i, v in enumerate(body))
    if tag == "objects":
        if not all(v is None or isinstance(v, str) for v in body):
            raise DecodeError(path, "expected a list of strings or null")
        out = np.empty(len(body), dtype=object)
        out[:] = body
        return out
    if tag == "dict":
        if not isinstance(body, dict):
            raise DecodeError(path, f"dict: expected an object, got {type(body).__name__}")
        return {k: decode(v, f"{path}.{k}", arrays) for k, v in body.items()}
    if tag == "array":
        if body not in arrays:
            raise DecodeError(path, f"the array {body!r} is missing from the file")
        a = arrays[body]
        if a.dtype.kind not in "biuf":
            raise DecodeError(path, f"expected a bool, integer or float array, got {a.dtype}")
        return a
    if tag == "enum":
        cls = ENUMS.get(body)
        name = tree.get("name")
        if cls is None or not isinstance(name, str) or name not in cls.__members__:
            raise DecodeError(path, f"expected one of the enums {sorted(ENUMS)} by member "
                              f"name, got {body!r} {name!r}")
        return cls[name]
    fields = tree.get("fields")
    if not isinstance(fields, dict):
        raise DecodeError(path, "record: expected its fields as an object")
    values = {k: decode(v, f"{path}.{k}", arrays) for k, v in fields.items()}
    if body == "SampledReference":
        names, cls = ("t", "p", "v"), None
    elif body in RECORDS:
        cls = RECORDS[body]
        names = tuple(f.name for f in dataclasses.fields(cls))
    else:
        raise DecodeError(path, f"unknown record {body!r}; expected one of "
                          f"{sorted(RECORDS) + ['SampledReference']}")
    added = ADDED_FIELDS.get(body, ())
    if added and set(names) - set(values) == set(added):
        values.update(dict.fromkeys(added))
    if set(values) != set(names):
        raise DecodeError(path, f"{body}: expected the fields {list(names)}, got {sorted(values)}")
    if cls is None:
        ref = SampledReference.__new__(SampledReference)
        ref.t, ref.p, ref.v = values["t"], values["p"], values["v"]
        return ref
    try:
        return cls(**values)
    except (TypeError, ValueError) as e:
        raise DecodeError(path, f"{body}: {e}") from None
