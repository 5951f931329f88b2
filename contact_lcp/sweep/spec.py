"""A sweep spec: the scene, the parameters and their values, expanded into runs.

The spec (a YAML file or the same mapping in Python)::

    scene: incline.yaml              # relative to the spec file
    duration: 1.0                    # simulated seconds per run (default: the scene's)
    parameters:                      # dotted scene keys; list indices are numbers
      ground.friction: [0.3, 0.4, 0.5]          # a list: the grid is the product
      bodies.0.mass: {uniform: [0.5, 2.0]}      # or {normal: [mu, sigma]}
    samples: 8                       # draws of the distributions per grid point
    seed: 1                          # the same seed draws the same runs
    record: false                    # write each run's recording to DIR/runs/<id>.npz

Every run's scene is built from the scene file's parsed YAML with the run's values put
in at their keys, then checked by the scene loader itself
(:func:`contact_lcp.sim.scene_loader.scene_from_dict`), for every run before any runs: a
key or value that does not fit is a :class:`SweepError` naming it.

A run's id is a digest of the scene as the spec names it, the duration and the run's
parameter values, so it does not depend on the order of the runs or on the machine; a
run whose values repeat those of an earlier run of the same sweep (``samples`` without
a distribution) gets ``-<n>`` appended for its ``n``-th repeat.
"""

import copy
import hashlib
import itertools
import json
import os
from dataclasses import dataclass

import numpy as np
import yaml

from contact_lcp.exceptions import SceneError, SweepError

SPEC_KEYS = ("scene", "duration", "parameters", "samples", "seed", "record")
DISTRIBUTIONS = ("uniform", "normal")


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its id, its parameter values and the scene mapping they make."""

    run_id: str
    index: int
    values: dict
    scene_data: dict


@dataclass(frozen=True)
class SweepSpec:
    """A checked spec and its runs, in grid order (then sample order)."""

    scene: str
    scene_path: str
    duration: float
    parameters: tuple
    samples: int
    seed: int
    record: bool
    runs: tuple

    @property
    def ids(self):
        """The run ids, in the runs' order."""
        return [r.run_id for r in self.runs]


def load_spec(spec):
    """Read and check a sweep spec.

    Parameters
    ----------
    spec : str, os.PathLike or dict
        A YAML spec file (its ``scene`` relative to the file's folder) or the mapping
        itself (``scene`` relative to the working folder).

    Returns
    -------
    SweepSpec

    Raises
    ------
    SweepError
        A missing file, an unknown or missing key, a value that does not fit, or a run
        whose scene the loader rejects (the message names the key and the run's values).
    """
    from contact_lcp.sim.scene_file import parse_yaml

    base = "."
    if not isinstance(spec, dict):
        path = os.fspath(spec)
        try:
            with open(path, encoding="utf-8") as f:
                spec = parse_yaml(f.read())
        except FileNotFoundError:
            raise SweepError(f"sweep spec {path!r} does not exist") from None
        except OSError as e:
            raise SweepError(f"sweep spec {path!r} cannot be read ({e.strerror})") from None
        except (yaml.YAMLError, ValueError) as e:  # incl. UnicodeDecodeError
            raise SweepError(f"{path}: not valid YAML: {e}") from None
        base = os.path.dirname(os.path.abspath(path))
        if not isinstance(spec, dict):
            raise SweepError(f"{path}: expected a mapping with the keys {list(SPEC_KEYS)}, "
                             f"got {type(spec).__name__}")
    unknown = sorted(str(k) for k in spec if k not in SPEC_KEYS)
    if unknown:
        raise SweepError(f"sweep spec: unknown key {unknown[0]!r}; valid keys: {list(SPEC_KEYS)}")
    scene = spec.get("scene")
    if not isinstance(scene, str) or not scene:
        raise SweepError(f"sweep spec: scene: expected a scene file name, got {scene!r}")
    scene_path = os.path.join(base, os.path.expanduser(scene))
    data = _scene_data(scene_path)
    duration = spec.get("duration")
    if duration is not None and not (_is_number(duration) and np.isfinite(duration)
                                     and duration > 0):
        raise SweepError(f"sweep spec: duration: expected simulated seconds > 0, got {duration!r}")
    seed = spec.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SweepError(f"sweep spec: seed: expected an integer >= 0, got {seed!r}")
    record = spec.get("record", False)
    if not isinstance(record, bool):
        raise SweepError(f"sweep spec: record: expected true or false, got {record!r}")
    params = spec.get("parameters")
    if not isinstance(params, dict) or not params:
        raise SweepError("sweep spec: parameters: expected a mapping of dotted scene keys "
                         f"(e.g. ground.friction) to values, got {params!r}")
    params = tuple((_key(k), _values(k, v)) for k, v in params.items())
    drawn = any(isinstance(v, tuple) for _, v in params)
    samples = spec.get("samples", None if drawn else 1)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise SweepError(f"sweep spec: samples: expected an integer >= 1 (draws per grid "
                         f"point{', required with a distribution' if drawn else ''}), "
                         f"got {samples!r}")
    if duration is None:
        duration = _check_scene(data, scene_path, {}).duration
    runs = _expand(scene, float(duration), data, params, samples, seed)
    for run in runs:
        _check_scene(run.scene_data, scene_path, run.values)
    return SweepSpec(scene, os.path.abspath(scene_path), float(duration),
                     tuple(k for k, _ in params), samples, seed, record, tuple(runs))


def _is_number(v):
    return not isinstance(v, bool) and isinstance(v, (int, float))


def _scene_data(path):
    from contact_lcp.sim.scene_file import parse_yaml

    try:
        with open(path, encoding="utf-8") as f:
            data = parse_yaml(f.read())
    except OSError as e:
        raise SweepError(f"sweep spec: scene: {path!r} cannot be read ({e.strerror})") from None
    except (yaml.YAMLError, ValueError) as e:
        raise SweepError(f"sweep spec: scene: {path!r} is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise SweepError(f"sweep spec: scene: {path!r}: expected a mapping at the top level")
    return data


def _key(key):
    if not isinstance(key, str) or not key or any(not p for p in key.split(".")):
        raise SweepError(f"sweep spec: parameters: {key!r}: expected a dotted scene key such "
                         "as ground.friction or bodies.0.mass")
    return key


def _values(key, v):
    """A list of values, or a distribution as ``(name, a, b)``."""
    where = f"sweep spec: parameters.{key}"
    if isinstance(v, list):
        if not v:
            raise SweepError(f"{where}: expected at least one value, got an empty list")
        return list(v)
    if isinstance(v, dict) and len(v) == 1 and next(iter(v)) in DISTRIBUTIONS:
        name, ab = next(iter(v.items()))
        if not (isinstance(ab, list) and len(ab) == 2 and all(_is_number(x) and np.isfinite(x)
                                                               for x in ab)):
            raise SweepError(f"{where}.{name}: expected two finite numbers, got {ab!r}")
        a, b = float(ab[0]), float(ab[1])
        if (name == "uniform" and not a < b) or (name == "normal" and not b > 0):
            what = "lo < hi" if name == "uniform" else "sigma > 0"
            raise SweepError(f"{where}.{name}: expected {what}, got {ab!r}")
        return (name, a, b)
    raise SweepError(f"{where}: expected a list of values or one of "
                     "{uniform: [lo, hi]}, {normal: [mu, sigma]}; got " + repr(v))


def _expand(scene, duration, data, params, samples, seed):
    """The runs: the product of the listed values, ``samples`` draws at each point."""
    rng = np.random.default_rng(seed)
    listed = [(k, v) for k, v in params if isinstance(v, list)]
    runs, seen = [], {}
    for point in itertools.product(*(v for _, v in listed)):
        fixed = dict(zip((k for k, _ in listed), point))
        for _ in range(samples):
            values = {}
            for k, v in params:
                if isinstance(v, tuple):
                    name, a, b = v
                    values[k] = float(rng.uniform(a, b) if name == "uniform" else rng.normal(a, b))
                else:
                    values[k] = fixed[k]
            base = run_digest(scene, duration, values)
            n = seen.get(base, 0)
            seen[base] = n + 1
            scene_data = copy.deepcopy(data)
            for k, value in values.items():
                apply_key(scene_data, k, value)
            runs.append(Run(base if n == 0 else f"{base}-{n}", len(runs), values, scene_data))
    return runs


def run_digest(scene, duration, values):
    """12 hex digits of the scene name, the duration and the values (in key order)."""
    text = json.dumps([scene, repr(float(duration)), sorted(values.items())], default=repr)
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def apply_key(data, key, value):
    """Put ``value`` at dotted ``key`` of the scene mapping ``data`` (in place); missing
    mappings on the way are created, list items must exist."""
    parts = key.split(".")
    node, where = data, []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise SweepError(f"sweep spec: parameters.{key}: {'.'.join(where)} is a list of "
                                 f"{len(node)}; expected an index 0..{len(node) - 1}, got {part!r}")
            part = int(part)
        elif not isinstance(node, dict):
            raise SweepError(f"sweep spec: parameters.{key}: {'.'.join(where)} is "
                             f"{node!r}, not a mapping or a list")
        if last:
            node[part] = value
        else:
            if isinstance(node, dict) and node.get(part) is None:
                node[part] = {}
            node = node[part]
        where.append(str(part))


def _check_scene(data, path, values):
    """The :class:`Scene` of ``data`` (the loader's checks), or a SweepError naming the
    run's values."""
    from contact_lcp.sim.scene_loader import scene_from_dict

    try:
        return scene_from_dict(data, base_dir=os.path.dirname(os.path.abspath(path)),
                               path=os.path.abspath(path))
    except SceneError as e:
        given = ", ".join(f"{k}={v!r}" for k, v in values.items())
        raise SweepError(f"sweep spec: {'the run with ' + given if given else 'the scene'}: "
                         f"{e}") from None
