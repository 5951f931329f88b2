"""Process lifetime shared by the node's command (:mod:`contact_lcp.ros.cli`) and its
publishing relay (:mod:`contact_lcp.ros.relay`): both end when the process that started
them does."""

import signal
import sys


def die_with_parent(signum=signal.SIGTERM):
    """Ask Linux to send ``signum`` when the parent process dies (PR_SET_PDEATHSIG).

    Returns True when set. The callers also poll ``os.getppid()`` in their loops, which
    covers other systems and a parent that died before this call.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
