"""Test-wide settings.

Hypothesis explores new random examples on every local run; under CI (``CI`` set) it is
derandomized, so a CI run is reproducible and fails only for a change in the code.
Examples it once found are pinned with ``@example`` in the tests themselves.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
