"""Test-wide settings.

Hypothesis explores new random examples on every local run; under CI (``CI`` set) it is
derandomized, so a CI run is reproducible and fails only for a change in the code.
Examples it once found are pinned with ``@example`` in the tests themselves.
"""

import os

# One BLAS thread, as contact_lcp sets it for its own processes (before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
