"""Reading one mapping of a scene file with checks: every value is judged at load, and a
value that does not fit is a :class:`SceneError` naming the key, the value and what is
allowed (a gain, an option or a count that is only found to be wrong at the first step,
or silently truncated, is a defect)."""

import inspect
import math

from contact_lcp.exceptions import SceneError


def is_number(v):
    return not isinstance(v, bool) and isinstance(v, (int, float))


def is_finite_number(v):
    return is_number(v) and math.isfinite(v)


class Section:
    """A mapping from the file, read with checks; ``where`` names it in messages."""

    def __init__(self, data, where, allowed):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise SceneError(f"{where}: expected a mapping, got {type(data).__name__} {data!r}")
        unknown = sorted((k for k in data if k not in allowed), key=str)
        if unknown:
            raise SceneError(
                f"{where}: unknown key {unknown[0]!r}; valid keys: {', '.join(sorted(allowed))}"
            )
        self.data, self.where = data, where

    def has(self, key):
        return key in self.data and self.data[key] is not None

    def is_null(self, key):
        """The key is given as null (YAML ``~`` or ``null``, Python None)."""
        return key in self.data and self.data[key] is None

    def raw(self, key, default=None):
        return self.data.get(key, default)

    def number(self, key, default=None, *, positive=False, nonneg=False, required=False):
        if not self.has(key):
            if required:
                raise SceneError(f"{self.where}: missing required key {key!r} (a number)")
            return default
        v = self.data[key]
        if not is_finite_number(v):
            raise SceneError(f"{self.where}.{key}: expected a finite number, got {v!r}")
        if positive and v <= 0:
            raise SceneError(f"{self.where}.{key}: expected a number > 0, got {v!r}")
        if nonneg and v < 0:
            raise SceneError(f"{self.where}.{key}: expected a number >= 0, got {v!r}")
        return float(v)

    def integer(self, key, default, *, minimum):
        """A count: an integer (or an integral float such as ``1e3``) >= ``minimum``;
        a fraction is refused rather than truncated."""
        if not self.has(key):
            return default
        v = self.data[key]
        if not is_finite_number(v) or v != int(v) or v < minimum:
            raise SceneError(f"{self.where}.{key}: expected an integer >= {minimum}, got {v!r}")
        return int(v)

    def flag(self, key, default):
        v = self.data.get(key, default)
        if not isinstance(v, bool):
            raise SceneError(f"{self.where}.{key}: expected true or false, got {v!r}")
        return v

    def text(self, key, default=None, *, choices=None, required=False):
        if not self.has(key):
            if required:
                raise SceneError(f"{self.where}: missing required key {key!r} (a string)")
            return default
        v = self.data[key]
        if not isinstance(v, str):
            raise SceneError(f"{self.where}.{key}: expected a string, got {v!r}")
        if choices and v not in choices:
            raise SceneError(f"{self.where}.{key}: expected one of {list(choices)}, got {v!r}")
        return v

    def vector(self, key, length, default=None, *, required=False):
        if not self.has(key):
            if required:
                raise SceneError(f"{self.where}: missing required key {key!r} ({length} numbers)")
            return default
        v = self.data[key]
        ok = isinstance(v, (list, tuple)) and (length is None or len(v) == length)
        ok = ok and all(is_finite_number(x) for x in v)
        if not ok:
            want = f"{length} finite numbers" if length else "a list of finite numbers"
            raise SceneError(f"{self.where}.{key}: expected {want}, got {v!r}")
        return tuple(float(x) for x in v)

    def pose(self, key, default=None, *, required=False):
        """``[x, y, z, qx, qy, qz, qw]``: 7 finite numbers with a non-zero quaternion."""
        p = self.vector(key, 7, default, required=required)
        if p is not None and sum(c * c for c in p[3:]) < 1e-12:
            raise SceneError(f"{self.where}.{key}: expected a non-zero quaternion "
                             f"[qx, qy, qz, qw] in the last 4 numbers, got {list(p)}")
        return p


def gains(sec, key, default):
    """A controller gain: a number >= 0, or a joint -> number >= 0 mapping (finite)."""
    v = sec.raw(key, default)
    if isinstance(v, dict):
        for j, g in v.items():
            if not is_finite_number(g) or g < 0:
                raise SceneError(f"{sec.where}.{key}.{j}: expected a finite number >= 0, "
                                 f"got {g!r}")
        return {str(j): float(g) for j, g in v.items()}
    if v is not None and (not is_finite_number(v) or v < 0):
        raise SceneError(f"{sec.where}.{key}: expected a finite number >= 0 or a "
                         f"joint -> number mapping, got {v!r}")
    return sec.number(key, default, nonneg=True)


def solver_option_defaults(method):
    """``{option: default}`` that ``solve(M, q, method, **options)`` takes for ``method``:
    the method's keyword-only options and solve()'s own (tol, equilibrate, ...)."""
    from contact_lcp.lcp import METHODS, solve

    out = {}
    for func in (solve, METHODS[method]):
        for p in inspect.signature(func).parameters.values():
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                out[p.name] = p.default
    return out


def check_options(where, options, defaults, owner):
    """Each of ``options`` is one of ``defaults`` (name -> default) with a value of the
    default's kind: true/false for a flag, an integer for a count, a finite number for a
    number, a string for a string; None and, where the default is None, any finite
    value or list of them. ``owner`` names what the options are for."""
    if not isinstance(options, dict):
        raise SceneError(f"{where}: expected a mapping, got {options!r}")
    unknown = sorted((k for k in options if k not in defaults), key=str)
    if unknown:
        raise SceneError(f"{where}: unknown option(s) {unknown} for {owner}; "
                         f"valid options: {sorted(defaults)}")
    out = {}
    for name, value in options.items():
        default = defaults[name]
        why = _option_fault(value, default)
        if why:
            raise SceneError(f"{where}.{name}: expected {why}, got {value!r}")
        integral = isinstance(default, int) and not isinstance(default, bool)
        out[name] = int(value) if integral and value is not None else value
    return out


def _option_fault(value, default):
    if value is None:
        return None
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "true or false"
    if isinstance(default, int):
        ok = is_finite_number(value) and value == int(value)
        return None if ok else "an integer"
    if isinstance(default, float):
        return None if is_finite_number(value) else "a finite number"
    if isinstance(default, str):
        return None if isinstance(value, str) else "a string"
    items = value if isinstance(value, (list, tuple)) else [value]
    ok = all(isinstance(x, (bool, str)) or is_finite_number(x) for x in items)
    return None if ok else "finite numbers"
