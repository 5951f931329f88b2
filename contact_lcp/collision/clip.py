"""Face-to-face contact patches of two convex polytopes by polygon clipping.

coal's contact patch needs the shapes to overlap; two boxes of a tower that rest exactly on
each other (gap 0 to a few micrometres) then come back with one point one step and eight
the next, and the upper box tips. For two polytopes whose closest features are faces
(a box on a box, a foot on a block), the patch is computed here instead: each shape's
support face towards the other (vertices within ``face_tol`` of its extreme along the
normal), both projected on the contact plane, the first clipped by the second
(Sutherland-Hodgman, both convex); the caller measures each clipped vertex's gap along
the normal through both shapes (the compiled pass is
:func:`contact_lcp.collision.clip_kernel.face_patch_gaps`). The normal is the face normal of largest separation (a
separating-axis test over both shapes' faces), not the closest-point normal, which is
arbitrary when two equal boxes touch along coincident edges.
"""

import numpy as np


def best_face_normal(VA, HA, VB, HB):
    """The face normal (from A to B) along which A and B are the most separated.

    Parameters
    ----------
    VA, VB : (a, 3), (b, 3) ndarray
        Vertices in W [m].
    HA, HB : tuple of ((fa, 3), (fa,)) and ((fb, 3), (fb,)) ndarray
        Each shape's faces ``{x : N x <= c}`` in W (unit outward normals N).

    Returns
    -------
    n : (3,) ndarray
        Unit normal from A to B: an outward face normal of A, or minus one of B.
    separation : float
        The gap between A and B along it [m] (negative: overlap). Equal to the distance
        (or the penetration depth) when the closest features include a face; smaller
        for edge-edge contacts.
    """
    NA, cA = HA
    NB, cB = HB
    sepA = (NA @ VB.T).min(axis=1) - cA
    sepB = (NB @ VA.T).min(axis=1) - cB
    a, b = int(np.argmax(sepA)), int(np.argmax(sepB))
    if sepA[a] >= sepB[b]:
        return NA[a], float(sepA[a])
    return -NB[b], float(sepB[b])
