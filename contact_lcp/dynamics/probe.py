"""``python -m contact_lcp.dynamics.probe``: load robots in a throw-away process.

Reads ``{"mesh_mode": ..., "robots": [RobotSpec fields, ...]}`` (JSON) on stdin and
loads each robot as :func:`~contact_lcp.dynamics.loading.load_robot` does (URDF and
SRDF through Pinocchio, meshes and convex hulls through coal). Its last stdout line is
JSON: ``{"ok": true}`` or ``{"ok": false, "error": "<the SceneError's message>"}``
(exit status 0 or 1). A process that gets a URDF from a peer (the ROS node) runs this
first, so that a native library crashing on some input the checks did not foresee ends
this process, not the one that asked (:mod:`contact_lcp.ros.urdf_guard`).
"""

import json
import sys

#: RobotSpec fields that are tuples (JSON brings lists).
TUPLES = ("package_dirs", "base_pose", "locked_joints")


def load(request):
    """Load every robot of ``request`` (the decoded JSON); raise what loading raises."""
    from contact_lcp.dynamics.loading import load_robot
    from contact_lcp.dynamics.specs import RobotSpec

    for fields in request["robots"]:
        fields = {k: tuple(v) if k in TUPLES and v is not None else v
                  for k, v in fields.items()}
        load_robot(RobotSpec(**fields), request["mesh_mode"])


def main():
    from contact_lcp.exceptions import ContactLCPError

    try:
        load(json.load(sys.stdin))
    except (ContactLCPError, ValueError, OSError, KeyError, TypeError) as e:
        print(json.dumps({"ok": False, "error": str(e)}), flush=True)
        return 1
    print(json.dumps({"ok": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
