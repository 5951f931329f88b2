"""What the contact models' fallback ladders share: the LCP rung and the record of rungs.

A contact model owns its ladder: which problem it solves next, with which method, and
why, in the order its module notes give (the pyramid model: the last step's basis, the
searches on the loaded contacts, the frictional LCP warm-started and cold, on the
contact frames' pyramids, then the relaxed and the frictionless problems, then a safe
stop). Each rung that solves an LCP calls :func:`lcp_rung`: the LCP's method, and when its
answer does not certify the further attempts of
:func:`contact_lcp.lcp.attempts.standard_attempts` (the symmetric PPM before a cold robust
search on a symmetric matrix, the robust search after the PPM, the tolerant and the
rescaled paths, a cold start after a warm one), reported as one solve.
:func:`contact_lcp.lcp.solve` itself runs one method; no method calls another.

Every rung that ran is recorded, in order, as ``name:outcome`` (:class:`Rungs`), and the
step's :class:`~contact_lcp.contact.report.SolveReport` carries them (``rungs``, kept in
its ``info['rungs']`` so that state files keep their format), e.g.
``('last_basis:miss', 'frictional_warm:solved')``. Names: ``last_basis`` (the compiled
solve from the last step's basis), ``loaded`` (the LCP of the loaded contacts),
``frictionless`` (the frictionless LCP: the two-step solve's first half, or a fallback),
``frictional_warm``, ``frictional``, ``frictional_cold``, ``contact_frame``, ``relaxed``,
``lcp`` / ``qp`` (the relaxed model's paths; the QP's attempts: ``interior_point``, then
``refine`` and ``polish`` when its answer did not certify), ``normal_rows``, ``facet_set``,
``safe_stop``. Outcomes: the LCP status in lower case (``solved``, ``max_pivots``, ...),
followed by the LCP's attempts when it took more than one (e.g.
``frictional_warm:solved(robust:no_solution+rescaled:no_solution+cold:solved)``), or a
short word (``miss``, ``rejected``: an answer the rung's own test refused).
"""

from contact_lcp.lcp import robust, solve_with_retries


def lcp_rung(M, q, method, options):
    """The LCP ``(M, q)`` by ``method`` with ``options``, then the standard further
    attempts until one certifies (module notes): one
    :class:`~contact_lcp.lcp.result.LCPResult` (``info['attempts']`` lists them)."""
    return solve_with_retries(M, q, method, **options)


class Rungs:
    """The rungs a step ran, in order (module notes); ``tuple(rungs)`` for the report."""

    __slots__ = ("ran",)

    def __init__(self):
        self.ran = []

    def add(self, name, outcome):
        """Record rung ``name`` ending with ``outcome``: an LCPResult (its status, and
        when it took more than one attempt those attempts in parentheses, joined by
        ``+``) or a short word. Returns ``outcome``."""
        if isinstance(outcome, str):
            self.ran.append(f"{name}:{outcome}")
            return outcome
        entry = f"{name}:{outcome.status.name.lower()}"
        attempts = outcome.info.get("attempts", ())
        if len(attempts) > 1:
            entry += "(" + "+".join(attempts) + ")"
        self.ran.append(entry)
        return outcome

    def into(self, info):
        """``info`` (a dict) with ``info['rungs']``: the rungs so far, as the step's
        report carries them (:attr:`~contact_lcp.contact.report.SolveReport.rungs`)."""
        info["rungs"] = tuple(self.ran)
        return info

    def __iter__(self):
        return iter(self.ran)

    def __len__(self):
        return len(self.ran)


def sparse_paths(results, info):
    """``info['lcp_paths']``: the sparse Lemke paths the step's solves walked, in order, as
    ``name:outcome:pivots`` (robust's ``paths`` with their lengths; none below n = 1 000)."""
    walked = [f"{p}:{n}" for r in results if r is not None
              for p, n in zip(r.info.get("paths", ()), r.info.get("path_lengths", ()))]
    if walked:
        info["lcp_paths"] = walked


def walked_cold(res):
    """Whether a failed warm-started robust solve already walked every path that a cold
    one would: its sparse cold paths ran (``revised:...`` in ``info['paths']``) and no
    dense stage follows them (n above ``robust.DENSE_MAX_N``). The paths are
    deterministic, so a cold retry would only repeat the failure."""
    return (res.z.shape[0] > robust.DENSE_MAX_N
            and any(p.startswith("revised:") for p in res.info.get("paths", ())))
