#!/usr/bin/env bash
# Install everything into .venv (first run only) and run the main job on the default scene.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONTACT_LCP_EXTRAS=test bash "$here/scripts/bootstrap.sh"
cd "$here"
exec "$here/.venv/bin/python" benchmarks/bench_lcp.py --quick "$@"
