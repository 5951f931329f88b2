#!/usr/bin/env bash
# Create the project-local virtual environment .venv and install contact_lcp into it
# (editable, with the extras named in $CONTACT_LCP_EXTRAS). Idempotent: it reinstalls
# only when setup.py or the extras changed since the last run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extras="${CONTACT_LCP_EXTRAS:-test}"
venv="$here/.venv"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "contact_lcp needs Python >= 3.10, found " + sys.version)'
    "$py" -m venv "$venv"
fi
stamp="$venv/.contact_lcp-installed"
want="$(cat "$here/setup.py" | sha256sum | cut -c1-16)-$extras"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "[bootstrap] installing contact_lcp[$extras] into $venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v "is ignored" >&2 || true
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here[$extras]" 2>&1 | grep -v "is ignored" >&2 || true
    "$venv/bin/python" -c "import contact_lcp, pinocchio, numba" || { echo "[bootstrap] install failed" >&2; exit 1; }
    echo "$want" > "$stamp"
    # Compile the default scene's kernels now, beside the interface build below (the two
    # use a core each), so that a first run starts at once instead of compiling ~70 s.
    echo "[bootstrap] compiling the default scene's kernels (log: $venv/contact_lcp-warm.log)" >&2
    "$venv/bin/contact-lcp" warm > "$venv/contact_lcp-warm.log" 2>&1 &
    warm_pid=$!
fi
# The ROS interface packages PyPI has no wheel of (tf2_msgs, control_msgs'
# FollowJointTrajectory, simulation_interfaces): built once into .venv with rosidl, CMake
# and the C/C++ compiler (a few minutes), skipped when current or when a ROS installation
# provides them; without a compiler the node runs without them and says why.
case ",$extras," in
    *,ros,*|*,test,*) "$venv/bin/python" -m contact_lcp.ros.interfaces build ;;
esac
if [ -n "${warm_pid:-}" ]; then
    wait "$warm_pid" || echo "[bootstrap] compiling the kernels ahead failed (see $venv/contact_lcp-warm.log): the first run compiles them" >&2
fi
# The viewer's browser tests (test/test_viewer_browser.py) load the page in headless
# Chromium. Install Debian's when it is missing and this is root with apt-get (CI);
# otherwise those tests skip, saying why.
if [[ ",$extras," == *",test,"* ]] && ! command -v chromium >/dev/null 2>&1 \
        && ! command -v chromium-browser >/dev/null 2>&1 \
        && ! command -v google-chrome >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "[bootstrap] installing chromium (apt-get) for the viewer's browser tests" >&2
        { apt-get install -y -qq chromium >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; }; } \
            || echo "[bootstrap] could not install chromium: the browser tests will skip" >&2
    else
        echo "[bootstrap] no chromium (install it as root: apt-get install chromium): the browser tests will skip" >&2
    fi
fi
