#!/usr/bin/env bash
# Install everything into .venv (first run only) and run the whole test suite.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONTACT_LCP_EXTRAS=test bash "$here/scripts/bootstrap.sh"
cd "$here"
exec "$here/.venv/bin/python" -m pytest -q "$@"
