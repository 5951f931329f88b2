"""One velocity-impulse time step with contacts and joint limits (Anitescu & Hart).

The stages, in order, each in its own module; the caller (the simulator) owns the state
and runs the one kinematics pass (``world.forward(q, v)``) after each step:

1. free motion (:mod:`contact_lcp.dynamics.reduced`): ``v_free`` and ``K = M^-1``,
   projected on the loop closures (:mod:`contact_lcp.dynamics.loops`) if any;
2. collision (:mod:`contact_lcp.collision`): points within the activation distance, plus
   the distance each body can cover in the step at its speed at the start or after the
   free motion (so a fast body is found before it passes through a thin one, and a body
   resting on nothing finds what gravity brings it to);
3. the :class:`~contact_lcp.contact.problem.ContactProblem`: contact Jacobian rows of
   the contacts that are active (gap, or gap after the free motion, within the
   activation distance) and the joint-limit rows, ``G = J K J'``, the bias;
4. the contact model (:mod:`contact_lcp.contact.models`) turns it into certified impulses;
   contacts those impulses drive shut (or bodies they move farther than collision looked)
   join, contacts whose points' paths curve into each other over the step by more than
   the push-out removes keep that much more gap (:mod:`contact_lcp.sim.curvature`), and
   stages 3-4 run again, at most ``MAX_ACTIVE_ROUNDS`` more times;
5. ``v+ = v_free + K J' f`` and ``q+ = q (+) h v+`` on the configuration manifold, free
   flyers exactly for torque-free motion (:meth:`World.integrate_state`). A step with no
   contact or limit row in a world without free flyers is second order instead
   (:meth:`Stepper._midpoint`).
"""

import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from contact_lcp.collision.broadphase import farther, reach_bound
from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.contact.problem import (ContactProblem, active_contacts, assemble,
                                         problem_from_rows)
from contact_lcp.contact.islands import solve_islands
from contact_lcp.contact.sparse_problem import active_contacts_csr, assemble_csr
from contact_lcp.dynamics.sparse_rows import contact_jacobian_csr
from contact_lcp.dynamics.world import fill_contact_rows
from contact_lcp.contact.report import NO_CONTACT, SolveReport
from contact_lcp.exceptions import ContactLimitError
from contact_lcp.sim.curvature import CurvatureCheck, curvature_defects
from contact_lcp.sim.limits import JointLimits, no_limits
from contact_lcp.sim.projection import PenetrationProjection
from contact_lcp.sim.step_data import StepData

#: extra solves per step with the contacts the first answer drives shut (0: none)
MAX_ACTIVE_ROUNDS = 2


class _Forces:
    """A :class:`StepRecord` field that a record of a solved step reads from its contact
    solution when first asked for (a force distribution is computed then:
    :class:`~contact_lcp.contact.report.ContactSolution`); set, it is a plain value."""

    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, rec, owner=None):
        if rec is None:
            return None  # (the field's default)
        value = rec.__dict__.get(self.slot)
        if value is None and rec.__dict__.get("_solution") is not None:
            k = rec.contacts.size
            f = rec.__dict__.pop("_solution").f
            rec.__dict__["_impulse_C"] = f[:3 * k].reshape(k, 3)
            rec.__dict__["_limit_impulse"] = f[3 * k:]
            value = rec.__dict__[self.slot]
        return value

    def __set__(self, rec, value):
        rec.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class StepRecord:
    """What one step did (kept by the simulator for wrenches, markers and logs).

    ``contacts`` are the active contacts (those in the problem); ``impulse_C`` (k, 3) their
    impulses in each contact frame (n, t1, t2) [N.s]; ``limit_impulse`` (l,) those of the
    joint limits; ``v_step`` (nv,) the velocity over the step in the frames at its start
    (the one the problem's rows constrain: ``problem.J @ v_step`` are the contact
    velocities the model produced; the state's velocity is it re-expressed at the end).
    ``projection``: the :class:`~contact_lcp.sim.projection.Projection` the step started
    with (a penetration deeper than ``contact.projection_depth``), or None;
    ``max_penetration`` is then the penetration before it.
    """

    contacts: ContactSet
    impulse_C: np.ndarray = _Forces()
    limit_impulse: np.ndarray = _Forces()
    report: SolveReport = NO_CONTACT
    problem: ContactProblem = None
    max_penetration: float = 0.0
    timings: dict = field(default_factory=dict)
    v_step: np.ndarray = None
    projection: object = None

    def __init__(self, contacts, impulse_C=None, limit_impulse=None, report=NO_CONTACT,
                 problem=None, max_penetration=0.0, timings=None, v_step=None,
                 projection=None):
        # the fields in one update of the instance's dict (the forces in their
        # descriptors' slots), not one object.__setattr__ each as dataclass generates
        # for a frozen class: a record a step
        self.__dict__.update(
            contacts=contacts, _impulse_C=impulse_C, _limit_impulse=limit_impulse,
            report=report, problem=problem, max_penetration=max_penetration,
            timings={} if timings is None else timings, v_step=v_step,
            projection=projection)

    @property
    def num_active(self) -> int:
        """Contacts the contact solve's answer loads (its active set: ``solved``, not a
        force distribution computed when read); a record made from impulses (a state
        file's, a step without contact) counts those."""
        active = self.__dict__.get("_active")
        return _loaded(self.impulse_C) if active is None else active

    @property
    def applied_impulse_C(self):
        """(k, 3) the impulses the step applied in each contact frame (n, t1, t2) [N.s]:
        its contact answer's ``solved`` (``impulse_C`` are the forces read: a force
        distribution's, with the same velocities)."""
        applied = self.__dict__.get("_applied")
        return self.impulse_C if applied is None else applied

    @classmethod
    def of_solution(cls, contacts, solution, **fields):
        """The record of a step whose contact answer is ``solution``: ``impulse_C`` and
        ``limit_impulse`` are its forces, read from it when first asked for."""
        rec = cls(contacts, None, None, solution.report, **fields)
        k = contacts.size
        rec.__dict__["_solution"] = solution
        applied = solution.solved[:3 * k].reshape(k, 3)
        rec.__dict__["_applied"] = applied
        rec.__dict__["_active"] = _loaded(applied)
        return rec


class Stepper:
    """The step's stages for one world.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    detector : contact_lcp.collision.ContactDetector
    free_motion : contact_lcp.dynamics.reduced.FreeMotion
    model : contact_lcp.contact.base.ContactModel
    contact : contact_lcp.sim.scene.ContactSettings
    h : float
        Time step [s].
    loops : contact_lcp.dynamics.loops.LoopClosures, optional
        Loop closures, eliminated from the free motion before the contact problem.
    sparse : bool
        Keep the contact rows, ``K`` and ``G`` sparse (``free_motion`` then returns a CSR
        ``K``; :mod:`contact_lcp.contact.sparse_problem`); for models that solve islands.
    """

    def __init__(self, world, detector, free_motion, model, contact, h, loops=None,
                 sparse=False):
        self.loops = loops
        self.sparse = bool(sparse)
        # island by island when the scene asks and the model splits its guess by contact
        # (a model that does not is solved whole by solve_islands too: one call less)
        self.islands = contact.islands and model.islands
        if self.sparse and not self.islands:
            raise ValueError(f"sparse contact rows need a model that solves islands; "
                             f"model {model.name!r} with islands={contact.islands} does not")
        self.world, self.detector, self.free_motion, self.model = world, detector, free_motion, model
        self.h = float(h)
        self.activation = contact.activation(self.h)
        self.max_lookahead = contact.max_approach_speed * self.h
        self.gamma = float(contact.stabilization)
        self.max_correction_speed = float(contact.correction_speed(self.h, world.gravity))
        self.limit_activation = self.activation if contact.joint_limits else None
        self.limits = JointLimits(world.robots)
        self.num_geometries = len(world.collision_model.geometryObjects)
        self.facets = None  # facet sets (Nguyen & Trinkle) for models that want them
        if "facet_sets" in model.wants:
            from contact_lcp.collision.facets import FacetSetFinder
            self.facets = FacetSetFinder(detector)
        self.max_contacts = contact.max_contacts
        # penetrations deeper than this are moved out at the step's start (projection.py)
        # (none without drift correction: stabilization 0 keeps penetrations by request)
        self.projection = PenetrationProjection(contact.projection_depth if self.gamma > 0 else None,
                                                self.max_correction_speed * self.h,
                                                model.settings.method)
        # contacts whose points' paths curve into each other by more than the push-out
        # removes in a step are solved again with that much more gap (curvature.py)
        self.curvature = CurvatureCheck(world, detector, self.h,
                                       max(self.max_correction_speed * self.h, 1e-9))
        # second order between impulses, for worlds without free-flyer joints (whose
        # exact rotation step takes the velocity of the whole step)
        self.midpoint = len(free_motion.flyers) == 0
        self.data = StepData()  # what the stages read and write; the warm start

    def _midpoint(self, q, v, tau, h, v_free, armature, prescribed, v_prescribed):
        """A step without impulses, second order: the acceleration at the midpoint state
        ``(q (+) h v / 2, (v + v_free) / 2)``, ``v+ = v + h a_m`` (projected on the loop
        closures at the end of the step), and the path velocity ``(v + v+) / 2``
        (explicit midpoint for the velocity, trapezoid for the position). The first-order
        step loses energy as fast as h: an open triple pendulum 64 % in 10 s at 1 ms
        (``benchmarks/bench_energy.py``). Returns ``(v+, path velocity)``."""
        q_m = self.world.integrate(q, v, 0.5 * h)
        v_m = 0.5 * (v + v_free)
        if prescribed is not None:  # the same acceleration a_P over the step
            v_prescribed = v_m[prescribed] + (v_prescribed - v[prescribed])
        v_fm, K_m = self.free_motion(q_m, v_m, tau, h, armature, prescribed, v_prescribed)
        v_next = v + (v_fm - v_m)  # prescribed joints: v_prescribed exactly
        v_path = 0.5 * (v + v_next)
        if self.loops is not None:
            # Two projections, as RATTLE: the path keeps the closures' positions (their
            # rows at the midpoint, Phi(q+) = Phi(q) + h J(q_m) v_path to second order),
            # the final velocity satisfies their velocity rows at the end of the step.
            Phi = self.loops.rows(self.world.jacobian_data)[1]  # at q
            v_path, _, _ = self.loops.project(self.loops.kinematics(q_m), v_path, K_m, h,
                                              Phi=Phi, gamma=self.loops.gamma)
            q_e = self.world.integrate(q, v_path, h)
            _, K_e = self.free_motion(q_e, v_next, tau, h, armature, prescribed,
                                      None if prescribed is None else v_next[prescribed])
            v_next, _, _ = self.loops.project(self.loops.kinematics(q_e), v_next, K_e, h,
                                              gamma=0.0)
        return v_next, v_path

    def check_contacts(self, contacts, max_depth=None):
        """Raise when there are more than ``max_contacts`` points, or (with ``max_depth``
        [m]) a penetration deeper than that; the message names the pairs and depths."""
        k = len(contacts)
        deep = (np.zeros(0, dtype=int) if max_depth is None or k == 0
                else np.flatnonzero(contacts.distance < -max_depth))
        if k <= self.max_contacts and deep.size == 0:
            return
        idx = deep if deep.size else np.arange(k)
        pairs = {}
        for i in idx:
            key = (contacts.names[contacts.body_a[i]], contacts.names[contacts.body_b[i]])
            pairs[key] = max(pairs.get(key, 0.0), -float(contacts.distance[i]))
        worst = sorted(pairs.items(), key=lambda kv: -kv[1])[:8]
        listing = ", ".join(f"{a}-{b} {1e3 * d:.1f} mm deep" for (a, b), d in worst)
        if deep.size:
            raise ContactLimitError(
                f"bodies start in deep penetration (more than {1e3 * max_depth:.0f} mm, "
                f"contact.max_initial_penetration): {listing}; place them apart (a robot "
                "on its feet: base_pose, or the SRDF's reference configuration), or, if "
                "the overlap is meant (a posture a little low), raise "
                "contact.max_initial_penetration: the first step moves the bodies out "
                "(contact.projection_depth)")
        raise ContactLimitError(
            f"{k} contact points, more than contact.max_contacts = {self.max_contacts} "
            f"(bodies deep in each other?); deepest pairs: {listing}")

    def _free(self, q, v, tau, armature, prescribed, v_prescribed):
        """The step's free motion at ``q``: ``(v_free, K, lookahead)``, projected on the
        loop closures, and how far each body may go."""
        h = self.h
        self.world.ensure_forward(q)
        v_free, K = self.free_motion(q, v, tau, h, armature, prescribed, v_prescribed)
        if self.loops is not None:  # the bilateral rows of the MLCP, by Schur complement
            v_free, K, _ = self.loops.project(self.world.jacobian_data, v_free, K, h)
        # how far each body may go: at v or at the free motion's v (gravity alone moves a
        # body resting on nothing h^2 g, 25 mm at h = 50 ms)
        return v_free, K, self.detector.reach(v, v_free, h, self.max_lookahead)

    def _jacobian(self, q, found):
        """The contact rows of ``found`` at ``q`` (3f, nv): CSR on the sparse path."""
        if self.sparse:
            return contact_jacobian_csr(self.world, q, found)
        return self.world.contact_jacobian(q, found)

    def _rows(self, q, found, v_free):
        """``(J_found, active)``: the rows of the contacts ``found`` at ``q`` (3f, nv) and
        those active under the free motion (increasing), in one compiled call on the dense
        path; after :meth:`_free` at the same ``q``."""
        if self.sparse:
            J_found = self._jacobian(q, found)
            return J_found, self._active(J_found, v_free, v_free, found.distance)
        world = self.world  # (its joint Jacobians are at q: _free forwarded it)
        return _rows_and_active(found.R_WC, found.p_W, found.joint_b, found.joint_a,
                                world.joint_jacobians, world.joint_support, v_free,
                                found.distance, self.h, self.activation)

    def _active(self, J_found, v_free, v_next, distance):
        """:func:`~contact_lcp.contact.problem.active_contacts` of rows ``J_found``."""
        if self.sparse:
            return active_contacts_csr(J_found, v_free, v_next, distance, self.h,
                                       self.activation)
        return active_contacts(J_found, v_free, v_next, distance, self.h, self.activation)

    def _found(self, q, v_free, lookahead, prescribed):
        """The joint-limit rows and the contacts found at ``q``."""
        limits = (no_limits() if self.limit_activation is None else
                  self.limits.rows(q, prescribed, self.limit_activation, v_free, self.h))
        return limits, self.detector.detect(q, lookahead)

    def warm_up(self, q):
        """Run once, on the last step's data, the step's paths that a run reaches only
        later, so that their code loads now and not at that step: the rows and activity
        test of a later active-set round, the reach test, the curvature defects and the
        contact model's later rungs (:meth:`~contact_lcp.contact.base.ContactModel.warm_up`),
        and the general collision path's point reduction (whether or not the step had a
        contact problem). ``q``: the configuration the world was last forwarded to. The
        next step is the same as without it."""
        self.detector.warm_up()
        data = self.data
        if data.problem is None:
            return
        found, v_free, v_step = data.found, data.v_free, data.v_step
        self._active(self._jacobian(q, found), v_free, v_step, found.distance)
        farther(self.detector.reach(v_step, v_free, self.h, self.max_lookahead),
                data.lookahead, self.activation)
        if self.curvature.enabled:
            curvature_defects(self.world, q, data.contacts, v_step, self.h)
        self.model.warm_up(data.problem, data.guess)

    def step(self, q, v, tau, armature=None, prescribed=None, v_prescribed=None, sleep=None):
        """Advance ``(q, v)`` by one step under generalized force ``tau`` (nv,).

        ``armature`` (nv,): implicit servo terms; ``prescribed`` (p,) velocity indices
        that follow ``v_prescribed`` (p,) exactly; ``sleep``: the
        :class:`~contact_lcp.sim.sleep.Sleep` record (its sleeping bodies are held still
        and skipped by collision; the islands the step's candidates touch wake first).
        Returns ``(q_next, v_next, record)``.
        """
        h, world, data = self.h, self.world, self.data
        timings = {}
        t0 = time.perf_counter()
        awake_prescribed = (prescribed, v_prescribed)
        if sleep is not None:
            prescribed, v_prescribed = sleep.prescribe(*awake_prescribed)
            self.detector.still_geometries = sleep.still_geometries()
        v_free, K, lookahead = self._free(q, v, tau, armature, prescribed, v_prescribed)
        t1 = time.perf_counter()
        timings["dynamics"] = t1 - t0
        limits, found = self._found(q, v_free, lookahead, prescribed)
        while sleep is not None and sleep.wake(found):
            # a moving body within reach of a sleeping island: the step again with it awake
            prescribed, v_prescribed = sleep.prescribe(*awake_prescribed)
            self.detector.still_geometries = sleep.still_geometries()
            v_free, K, lookahead = self._free(q, v, tau, armature, prescribed, v_prescribed)
            limits, found = self._found(q, v_free, lookahead, prescribed)
        projected = None
        if self.projection.needed(found.deepest):
            # a penetration the drift term would take many steps to push out: move the
            # bodies out first (projection.py), then the step from there
            projected = self.projection(found.distance, self._jacobian(q, found), K,
                                        (limits.idx_v, limits.sign, limits.gap))
            if projected.certified and np.any(projected.dq):
                q = world.integrate(q, projected.dq, 1.0)
                v_free, K, lookahead = self._free(q, v, tau, armature, prescribed, v_prescribed)
                limits, found = self._found(q, v_free, lookahead, prescribed)
        extras = {} if self.facets is None else {"facet_sets": self.facets.find(q, lookahead)}
        t2 = time.perf_counter()
        timings["collision"] = t2 - t1
        J_found, active = self._rows(q, found, v_free)
        rounds, spent, answers = 0, [], []
        build_s = solve_s = 0.0  # (summed over the rounds)
        defect = None  # (len(found),) curvature defects, once a round found them large
        while True:
            if active.size > self.max_contacts:  # (the candidates may be many more)
                self.check_contacts(found.select(active))
            contacts = found.select(active) if active.size < found.size else found
            k, l = contacts.size, limits.idx_v.size
            if k + l == 0 and not any(len(x) for x in extras.values()):
                timings["lcp_build"] = build_s + time.perf_counter() - t2
                if self.midpoint:
                    v_free, v_path = self._midpoint(q, v, tau, h, v_free, armature, prescribed,
                                                    v_prescribed)
                    q_next, v_next = world.integrate(q, v_path, h), v_free
                else:
                    q_next, v_next = world.integrate_state(q, v_free, h, trusted=True)
                self.detector.advance(q_next, v_free, h)
                data.v_free, data.K, data.lookahead, data.found = v_free, K, lookahead, found
                data.contacts, data.problem, data.solution, data.v_step = contacts, None, None, v_free
                rec = StepRecord(contacts, np.zeros((0, 3)), np.zeros(0), timings=timings,
                                 projection=projected,
                                 max_penetration=_before(projected, 0.0))
                return q_next, v_next, rec
            finite, J_c, phi, G, u, bias, pair = (assemble_csr if self.sparse else assemble)(
                J_found, active, found.distance, found.body_a, found.body_b,
                self.num_geometries, limits.idx_v, limits.sign, limits.gap, K, v_free, h,
                self.gamma, self.max_correction_speed)
            # (contacts whose paths curve into each other keep that much more gap)
            problem = problem_from_rows(h, contacts.R_WC, contacts.p_W, contacts.mu, J_c, K, v,
                                        v_free, (finite, phi, G, u, bias), l, pair, extras,
                                        None if defect is None else defect[active])
            t3 = time.perf_counter()
            timings["lcp_build"] = build_s = build_s + t3 - t2
            sol = (solve_islands(self.model, problem, data.guess) if self.islands
                   else self.model.solve(problem, data.guess))
            data.problem, data.solution, data.guess = problem, sol, sol.guess
            t4 = time.perf_counter()
            timings["solve"] = solve_s = solve_s + t4 - t3
            if sol.safe_stop:
                # No certified impulse: keep the configuration and stop the dynamic motion
                # rather than apply an uncertified impulse (never injects energy).
                v_next = np.zeros_like(v_free)
                if prescribed is not None:
                    v_next[prescribed] = v_free[prescribed]
                break
            # the first round's answer and what it asks of the step in one compiled call
            # (dense rows); the later rounds' below, each part on its own
            fused = rounds == 0 and not self.sparse
            if fused:
                v_next, wider, redo, more = _answered(
                    problem.J, sol.solved, _NO_IMPULSE if sol.generalized is None else
                    sol.generalized, K, v_free, self.detector.levers, h, self.max_lookahead,
                    lookahead, self.activation, J_found, found.distance)
            else:
                g = problem.J.T @ sol.solved if sol.generalized is None else sol.generalized
                v_next = v_free + K @ g
            if rounds == MAX_ACTIVE_ROUNDS:
                break
            # Contacts left out that the impulses drive shut (a sphere pushed into a
            # neighbour by the pile) join the problem, and bodies that the impulses move
            # farther than the search looked get a wider search.
            if not fused:
                wider = self.detector.reach(v_next, v_free, h, self.max_lookahead)
                redo = farther(wider, lookahead, self.activation)
            # contacts whose points' paths curve into each other by more than the
            # push-out removes in a step keep that much more gap (once a step)
            bend = False
            if defect is None and k:
                e = self.curvature(q, contacts, v_next)
                if e is not None:
                    defect = np.zeros(found.size)
                    defect[active] = e
                    bend = True
            if redo:
                lookahead = np.maximum(lookahead, wider)
                found = self.detector.detect(q, lookahead)
                J_found = self._jacobian(q, found)
                defect = None  # (indices into the old candidates)
            # every contact that this step's answers so far drive shut, not only the
            # last one's: a contact that one answer closes and the next (with it in the
            # problem) keeps open must stay in, or the rounds alternate between the two
            # sets and the last one leaves out contacts the other needed (penetration)
            answers.append(v_next)
            if not fused or redo:  # (a redo found other candidates: their rows)
                more = self._active(J_found, v_free, answers[0], found.distance)
                for v_r in answers[1:]:
                    more = np.union1d(more, self._active(J_found, v_free, v_r, found.distance))
            if not redo and not bend and more.size == active.size:  # (a superset: the same)
                break
            active, rounds = more, rounds + 1
            spent.append(sol.report)
            t2 = time.perf_counter()
        if spent:
            sol = sol.with_earlier(spent, rounds)
        v_step = v_next
        q_next, v_next = world.integrate_state(q, v_step, h, trusted=True)
        self.detector.advance(q_next, v_step, h)
        timings["integrate"] = time.perf_counter() - t4
        pen = max(0.0, -contacts.deepest)
        data.v_free, data.K, data.lookahead, data.found = v_free, K, lookahead, found
        data.contacts, data.v_step = contacts, v_step
        rec = StepRecord.of_solution(contacts, sol, problem=problem,
                                     max_penetration=_before(projected, pen), timings=timings,
                                     v_step=v_step, projection=projected)
        return q_next, v_next, rec


@njit(cache=True)
def _rows_and_active(R_WC, p_W, joint_b, joint_a, J_W, support, v_free, distance, h,
                     activation):
    """The contacts' rows (3f, nv) (:func:`~contact_lcp.dynamics.world.fill_contact_rows`
    of the joint Jacobians ``J_W`` and ``support``) and those active under ``v_free``
    (:func:`~contact_lcp.contact.problem.active_contacts`)."""
    J = np.zeros((3 * R_WC.shape[0], J_W.shape[1]))
    fill_contact_rows(J, R_WC, p_W, joint_b, joint_a, J_W, support)
    return J, active_contacts(J, v_free, v_free, distance, h, activation)


#: :func:`_answered` without a generalized impulse of the model's own (then ``J' f``)
_NO_IMPULSE = np.zeros(0)


@njit(cache=True)
def _answered(J, f, g, K, v_free, levers, h, cap, lookahead, activation, J_found, distance):
    """The velocity after the answer's impulses and what it asks of the step:
    ``(v_next, wider, redo, active)`` with ``v_next = v_free + K g`` (``g = J' f`` when
    ``g`` is empty), each geometry's reach over the step at the larger of the two speeds
    (:func:`~contact_lcp.collision.broadphase.reach_bound`, at most ``cap``), whether one
    reaches farther than the search looked (``lookahead``) by more than ``activation``,
    and the candidates (rows ``J_found``, gaps ``distance``) active under ``v_next``
    (:func:`~contact_lcp.contact.problem.active_contacts`). Dense rows and ``K``."""
    if g.shape[0] == 0:
        g = J.T @ f
    v_next = v_free + K @ g
    wider = reach_bound(levers, v_next, v_free, h, cap)
    return (v_next, wider, farther(wider, lookahead, activation),
            active_contacts(J_found, v_free, v_next, distance, h, activation))


def _before(projected, pen):
    """The step's penetration [m]: ``pen`` or, after a projection, what it removed."""
    return pen if projected is None else max(pen, projected.depth_before)


@njit(cache=True)
def _loaded(impulse_C):
    """Rows of ``impulse_C`` (k, 3) with a positive normal impulse (one compiled call)."""
    n = 0
    for i in range(impulse_C.shape[0]):
        if impulse_C[i, 0] > 0.0:
            n += 1
    return n
