"""contact_lcp: articulated robots in frictional contact, one certified LCP per step.

Notation, written once for the whole package
--------------------------------------------
LCP
    Find ``z`` with ``w = M z + q``, ``z >= 0``, ``w >= 0``, ``z . w = 0``.
    ``M`` is (n, n), ``q`` is (n,). The error of a candidate ``z`` is the natural-map
    residual ``||min(z, w)||_inf`` (``contact_lcp.lcp.residual``).
Frames
    ``W`` is the world frame (z up, gravity along -z by default). Names carry their frame:
    ``X_WB`` is the pose of body B in W, ``p_W`` a point in W, ``v_W`` a velocity in W.
Contacts
    A contact is between body A and body B. ``n_W`` is the unit normal pointing
    **from A to B**; the contact impulse acts on B along ``+n_W`` and on A along ``-n_W``.
    The ground (and any fixed world geometry) is always body A. The signed distance
    ``phi`` is positive when apart and negative in penetration [m]. Each contact has a
    frame ``C`` with axes (n, t1, t2); the contact Jacobian maps generalized velocity to the
    velocity of B relative to A at the contact point, expressed in C.
Units
    SI throughout: m, kg, s, rad, N, N.m. LCP unknowns of the contact model are
    impulses [N.s]; the rows of ``w`` are velocities [m/s]. Poses are
    [x y z qx qy qz qw] (Pinocchio's quaternion order).
Joint positions
    A one-dof joint's position [rad or m] is its entry of ``q``, except a continuous
    joint's: ``q`` holds ``(cos θ, sin θ)``, its position is the angle θ, reported
    unwrapped and servoed the shortest way (``contact_lcp.sim.joint_angles``).
Time stepping
    Velocity-impulse (semi-implicit Euler) with step ``h`` [s]:
    ``v+ = v + M^-1 (h (tau - b) + J^T z)``, ``q+ = integrate(q, h v+)``; a step without
    contact or limit impulses in a world without free-flyer joints is second order
    (``contact_lcp.sim.stepper.Stepper._midpoint``).
"""

import os
import sys
import warnings

# The matrices of a contact step are small (n <= a few hundred): BLAS threads only add
# synchronisation (measured: J M^-1 J' for Talos 0.1 ms on one thread, 10-20 ms with
# OpenBLAS threads on 2 busy cores; a humanoid step 1.0 ms vs 1.5 ms). It only works
# before numpy loads its BLAS; an explicit setting wins.
if "numpy" in sys.modules and "OPENBLAS_NUM_THREADS" not in os.environ:
    warnings.warn(
        "contact_lcp was imported after numpy, so numpy's BLAS may run several threads, "
        "which makes a contact step about 1.5x slower; set OPENBLAS_NUM_THREADS=1 before "
        "starting Python (or import contact_lcp first)", RuntimeWarning, stacklevel=2)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# before any compiled kernel is defined: a cache folder per state of the sources, and
# what numba's compiler does at a cold start (the functions of _numba_cache say why)
from contact_lcp import _numba_cache  # noqa: E402

NUMBA_CACHE = _numba_cache.configure()
_numba_cache.plain_error_messages()
_numba_cache.cache_array_class()
_numba_cache.share_inline_copies()

from contact_lcp.exceptions import (  # noqa: E402
    ContactLCPError,
    FrameNotFound,
    InvalidProblem,
    SceneError,
)
from contact_lcp.lcp import LCPResult, LCPStatus, solve, solve_with_retries  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "ContactLCPError",
    "FrameNotFound",
    "InvalidProblem",
    "LCPResult",
    "LCPStatus",
    "SceneError",
    "solve",
    "solve_with_retries",
]
