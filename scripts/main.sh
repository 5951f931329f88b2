#!/usr/bin/env bash
# Install everything into .venv (first run only) and run the main job on the default scene.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONTACT_LCP_EXTRAS=test bash "$here/scripts/bootstrap.sh"
cd "$here"
# The ROS 2 node on the default humanoid scene (config/humanoid_stand.yaml); it prints one
# status line per second until Ctrl-C or --duration S. No ROS installation is needed.
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
exec "$here/.venv/bin/python" -m contact_lcp.ros "$@"
