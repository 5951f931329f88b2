"""More than one attempt at an LCP, listed explicitly: :func:`solve_with_retries`.

:func:`contact_lcp.lcp.solve` runs one method and certifies its answer; no method calls
another. A caller that wants another attempt when the first does not certify lists it:
:func:`standard_attempts` gives the list the contact models use
(:mod:`contact_lcp.contact.ladder`), :func:`solve_with_retries` runs a method and then
such a list, in order, under one time budget, until an answer certifies, and returns one
:class:`~contact_lcp.lcp.result.LCPResult` that counts every attempt's pivots
(``info['attempts']``: each attempt's ``name:status``).

The standard list, in order (each kind reported in the result's info as the key given):

* ``symmetric_ppm`` (before a cold robust solve of a symmetric ``M``, a frictionless
  contact LCP: positive semidefinite, and degenerate when contacts are redundant): the
  modified principal pivoting method keeps its principal blocks nonsingular where
  Lemke's paths cycle on ties (a 4-3-2-1 box pyramid's frictionless LCP, n = 68 of
  rank 30: both Lemke variants cycle, the robust search spends 3300 nodes, the PPM
  certifies in 36 pivots). ``info['symmetric_first']``.
* ``robust`` after a ``ppm`` solve that did not certify (``info['fallback']``).
* ``tolerant`` (:data:`TOLERANT_RETRY`), then ``rescaled`` (:data:`RESCALED_RETRY`), and
  for a warm-started solve ``cold``, ``cold_tolerant``, ``cold_rescaled`` from the slack
  basis (``info['tolerant_retry']``, ``['rescaled_retry']``, ``['cold_retry']``).
* ``lexicographic``, after a robust solve without a pivot budget whose every path
  ended on an answer that does not certify (``info['lexicographic_retry']``): robust
  stays never worse than Lemke when its search claims an answer, not only when it
  finds none.
* ``exact_ties`` last, for a warm-started solve without a pivot budget
  (:data:`EXACT_TIE_RETRY`): the warm path once more with exact ties
  (``info['exact_ties_retry']``).
"""

from dataclasses import dataclass, field
from typing import Mapping

from contact_lcp.lcp import budget as bg
from contact_lcp.lcp.result import LCPResult
from contact_lcp.lcp.robust import revised_first
from contact_lcp.lcp.solve import checked_method, solve, time_limit_of, validated
from contact_lcp.lcp.symmetric import is_symmetric

#: methods whose failed path on the Ruiz-equilibrated problem is walked once more on the
#: problem scaled by powers of two only (M / 2^E, q / s; ``solve(scaling=
#: "powers_of_two")``). Ruiz's row and column factors can turn a nearly degenerate column
#: into a tie that sends every Lemke path to a secondary ray: a hoist chain's 3-contact
#: LCP (n = 30, edges orthogonal to the chain's plane) ended on rays with all three
#: methods and solved in 12 pivots unscaled. The retry's answer is certified in the same
#: units as the first (scale-invariant verdicts: (alpha M, beta q) with powers of two give
#: the same scalar-scaled problem bit for bit). ``revised`` walks the lexicographic path
#: and takes the same retry.
RESCALED_RETRY = ("robust", "lemke", "lexicographic", "revised")

#: methods whose failed path is first walked once more on the same equilibrated problem
#: with these options (each only where the caller did not set it): a pivot tolerance above
#: the round-off that the basis inverse accumulates, and an absolute tie threshold above
#: that of its entries. On a nearly rank-deficient contact LCP (pyramid_3's first contact,
#: n = 360, rank 108; issue 10) the dense B^-1 had drifted by 5e-8 ||d|| from the exact
#: inverse of a basis of condition 800; entries of the entering column that are exactly 0
#: then read 4e-9 ||d||, above the default pivot tolerance 1e-9, and which degenerate rows
#: blocked (and which row the lexicographic rule picked among ties resolved only by
#: round-off, with a zero threshold) depended on the last bits of the data: under
#: (alpha M, q) with alpha = 1e-6 ... 1e6 the paths ended in cycles, rays or uncertified
#: bases. With these options both methods walk the same 33 pivots for every alpha and
#: for the random D1 M D2 of the sweep.
TOLERANT_RETRY = {
    "lemke": {"pivot_tol": 1e-7},
    "lexicographic": {"pivot_tol": 1e-7, "tie_threshold": 1e-9},
    "revised": {"pivot_tol": 1e-7, "tie_threshold": 1e-9},
}

#: methods whose warm-started path, when every attempt above missed, is walked once more
#: from the warm start with ``tie_threshold = 0`` (ties broken exactly, not within 1e-9):
#: the hoist's 40-row frictional LCP at t = 2.171 s (condition number 1e20,
#: ``benchmarks/data/hoist_t2171_uncertified.npz``) ends with the default threshold, warm
#: and cold, tolerant and rescaled, on bases whose answers miss the per-row verdict by a
#: factor of ~5 (friction rows at w = -3e-11 beside their contact's lam at 0); its warm
#: path with exact ties ends on another basis in 24 pivots and certifies. From the slack
#: basis exact ties do not help there (robust's cold search misses by 5e8), hence warm only;
#: and last, so that it answers only LCPs that every other attempt missed (placed before
#: the lexicographic retry, it also took over solves that retry certifies).
EXACT_TIE_RETRY = ("robust", "revised")

#: how an attempt's result is merged with the first solve's (see :func:`solve_with_retries`)
KINDS = ("before", "fallback", "retry")

#: ``Attempt.options`` value that removes the caller's option (e.g. the warm start)
DROP = None


@dataclass(frozen=True)
class Attempt:
    """One solve of the same LCP besides the caller's.

    Attributes
    ----------
    name : str
        Short name, reported in ``info['attempts']``.
    method : str
        The method of :data:`contact_lcp.lcp.METHODS`.
    options : Mapping
        Replace or add to the caller's options; a value ``DROP`` (None) removes one.
    scaling : str
        What the method pivots on (:func:`contact_lcp.lcp.solve`'s ``scaling``).
    kind : str
        ``"before"``: runs before the caller's method, whose solve runs only when it does
        not certify; ``"fallback"`` and ``"retry"``: after it, in order, until one
        certifies (they differ only in how the result reports them, see
        :func:`solve_with_retries`).
    report : Mapping
        Info keys the result carries when this attempt's answer is the one returned.
    inherit : bool
        Take the caller's options (updated by ``options``); False: ``options`` alone.
    """

    name: str
    method: str
    options: Mapping = field(default_factory=dict)
    scaling: str = "ruiz"
    kind: str = "retry"
    report: Mapping = field(default_factory=dict)
    inherit: bool = True

    def options_for(self, given):
        """The options of this attempt's solve, from the caller's ``given``."""
        base = dict(given) if self.inherit else {}
        for key, value in self.options.items():
            if value is DROP:
                base.pop(key, None)
            else:
                base[key] = value
        return base


def _retry_paths(method, options, cold=False):
    """The tolerant and rescaled retries of ``method`` with ``options`` (``cold``: from
    the slack basis)."""
    prefix, extra_key = ("cold_", {"cold_retry": True}) if cold else ("", {})
    drop = {"initial_basis": DROP} if cold else {}
    out = []
    extra = {k: v for k, v in TOLERANT_RETRY.get(method, {}).items() if k not in options}
    if extra:
        out.append(Attempt(prefix + "tolerant", method, {**drop, **extra},
                           report={"tolerant_retry": extra, **extra_key}))
    if method in RESCALED_RETRY:
        out.append(Attempt(prefix + "rescaled", method, drop, "powers_of_two",
                           report={"rescaled_retry": True, **extra_key}))
    return out


def standard_attempts(M, method, options):
    """The standard attempts (module notes) around a solve of ``(M, ., method, options)``,
    in order."""
    out = []
    warm = options.get("initial_basis") is not None
    if method == "robust" and not warm and options.get("lemke_fallback", True) \
            and not revised_first(M) and is_symmetric(M):
        # (large sparse problems walk robust's sparse paths first, which suit them)
        tol = {"singular_tol": options["singular_tol"]} if "singular_tol" in options else {}
        out.append(Attempt("symmetric_ppm", "ppm", tol, kind="before", inherit=False,
                           report={"symmetric_first": ["ppm:solved"]}))
    if method == "ppm":
        out.append(Attempt("robust", "robust", {}, kind="fallback", inherit=False,
                           report={"fallback": "robust"}))
    out += _retry_paths(method, options)
    if warm and options.get("pivot_budget") is None:  # (a budget's caller plans its paths)
        # a warm start can end on a basis whose answer is accurate only to the global
        # tolerance (a disk pile's LCP: w = -1.5e-8 m/s in a row of scale 1e-3, where the
        # cold path certifies on the powers-of-two scaling): the retries once more from
        # the slack basis, with the path on Ruiz's scaling first
        out.append(Attempt("cold", method, {"initial_basis": DROP},
                           report={"cold_retry": True}))
        out += _retry_paths(method, options, cold=True)
    if method == "robust" and options.get("lemke_fallback", True) \
            and options.get("pivot_budget") is None:
        # robust's own Lemke paths run only when its search certifies nothing, but the
        # search can claim a basis whose answer misses the per-row verdict by round-off
        # on every path above (a redundant contact set's degenerate rows: the ring's
        # loaded-contact LCP in test_ladder, whose last bits depend on the CPU the
        # kernels were compiled for), where the lexicographic path ends on another basis
        # and certifies
        out.append(Attempt("lexicographic", "lexicographic", {}, inherit=False,
                           report={"lexicographic_retry": True}))
    if warm and options.get("pivot_budget") is None and method in EXACT_TIE_RETRY \
            and "tie_threshold" not in options:
        out.append(Attempt("exact_ties", method, {"tie_threshold": 0.0},
                           report={"exact_ties_retry": True}))
    return tuple(out)


def solve_with_retries(M, q, method="robust", *, attempts=None, tol=None, time_limit=None,
                       **options):
    """:func:`contact_lcp.lcp.solve` of ``method`` and, until an answer certifies, the
    ``attempts`` (default :func:`standard_attempts`; ``()``: none), under one time budget.

    A retry's answer must meet both its own tolerance and that of the first solve's
    answer (unless ``tol`` is given): the tolerance grows with ``||z||``, so neither alone
    will do (a first path that ended on a ray at ``||z|| ~ 1e12`` has a tolerance large
    enough to pass a retry's answer that violates a friction cone). A ``pivot_budget`` option is shared: an attempt after the first
    gets what those before it left, and none runs once it is spent.

    Returns one :class:`LCPResult`: the certified answer, or the first solve's failure.
    ``info['attempts']`` lists every solve as ``name:status`` (the caller's method under
    its own name). Pivots: an answer of a ``"retry"`` attempt counts the earlier solves'
    pivots in ``pivots`` and in ``info['attempt_pivots']``, with ``info['first_status']``;
    a ``"fallback"``'s adds them to ``pivots`` (``info['ppm_status']``,
    ``['ppm_pivots']``, ``['ppm_reason']``); a ``"before"`` attempt that failed is
    reported in ``info['symmetric_first']`` and ``['symmetric_first_pivots']``. A
    failure keeps the first solve's pivots and puts the retries' in
    ``info['attempt_pivots']``.
    """
    checked_method(method, options)  # (before any attempt runs)
    M, q = validated(M, q)
    if attempts is None:
        attempts = standard_attempts(M, method, options)
    with bg.opened(time_limit_of(time_limit, q.shape[0])):
        return _run(M, q, method, attempts, tol, time_limit, options)


def _run(M, q, method, attempts, tol, time_limit, options):
    ran = []
    before = [a for a in attempts if a.kind == "before"]
    after = [a for a in attempts if a.kind != "before"]
    extra = {}
    for a in before:
        res = solve(M, q, a.method, tol=tol, scaling=a.scaling, time_limit=time_limit,
                    **a.options_for(options))
        ran.append(f"{a.name}:{res.status.name.lower()}")
        if res.success:
            info = dict(res.info, attempts=ran, symmetric_first_pivots=int(res.pivots),
                        **a.report)
            return LCPResult(res.z, res.w, res.status, method, res.pivots, res.error, info)
        extra = {"symmetric_first": [f"ppm:{res.status.name.lower()}"],
                 "symmetric_first_pivots": int(res.pivots)}
    first = solve(M, q, method, tol=tol, time_limit=time_limit, **options)
    ran.append(f"{method}:{first.status.name.lower()}")
    if first.success or not after or _unrepresentable(first):
        return _with(first, extra, ran)
    cap = first.info["tol"] if tol is None else None
    budget = options.get("pivot_budget")
    spent = int(first.pivots)
    for a in after:
        if bg.expired():
            break
        run = a.options_for(options)
        if budget is not None and "pivot_budget" in run:  # shared (see above)
            left = int(budget) - spent
            if left <= 0:
                break
            run["pivot_budget"] = left
        res = solve(M, q, a.method, tol=tol, scaling=a.scaling, time_limit=time_limit,
                    tol_cap=cap if a.kind == "retry" else None, **run)
        ran.append(f"{a.name}:{res.status.name.lower()}")
        if res.success:
            return _merged(first, res, a, spent, extra, ran, method)
        spent += int(res.pivots)
    if spent > first.pivots:
        extra = dict(extra, attempt_pivots=spent - int(first.pivots))
    return _with(first, extra, ran)


def _unrepresentable(res):
    """Whether ``res`` is solve()'s verdict on data whose range defeats double precision
    (no method ran; no other attempt would fare better on the same data)."""
    return res.info.get("unrepresentable", False)


def _with(res, extra, ran):
    return LCPResult(res.z, res.w, res.status, res.method, res.pivots, res.error,
                     dict(res.info, attempts=ran, **extra))


def _merged(first, res, attempt, spent, extra, ran, method):
    """The certified ``res`` of ``attempt`` after ``first`` and retries of ``spent``
    pivots in all (see :func:`solve_with_retries`)."""
    info = dict(res.info, attempts=ran, **extra, **attempt.report)
    if attempt.kind == "fallback":
        info.update(ppm_status=first.status.name, ppm_pivots=int(first.pivots),
                    ppm_reason=first.info.get("reason", ""))
        return LCPResult(res.z, res.w, res.status, method, int(res.pivots) + spent,
                         res.error, info)
    info.update(first_status=first.status.name, attempt_pivots=spent)
    return LCPResult(res.z, res.w, res.status, method, int(res.pivots) + spent, res.error,
                     info)
