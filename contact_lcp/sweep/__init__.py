"""Parameter sweeps and Monte Carlo runs of a scene, in parallel on Ray.

``contact-lcp sweep SPEC.yaml`` and :func:`run` expand a spec (:mod:`.spec`) into runs,
simulate each as a Ray task (:mod:`.worker`, :mod:`.runner`) on this machine or on a
cluster, and write one row per run to ``DIR/results.csv`` as the runs finish
(:mod:`.results`). Only this package (and the command line) imports Ray.
"""

from contact_lcp.sweep.results import Table
from contact_lcp.sweep.runner import run
from contact_lcp.sweep.spec import Run, SweepSpec, load_spec
from contact_lcp.sweep.worker import METRICS, simulate_run

__all__ = ["METRICS", "Run", "SweepSpec", "Table", "load_spec", "run", "simulate_run"]
