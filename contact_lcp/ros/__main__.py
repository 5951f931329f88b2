"""``python -m contact_lcp.ros``: the same as ``contact_lcp_node``."""

import sys

from contact_lcp.ros.cli import run

if __name__ == "__main__":
    sys.exit(run())
