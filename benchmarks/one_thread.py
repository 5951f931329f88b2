"""Import first in a benchmark: one BLAS/OpenMP thread for every timing.

On 2 shared cores a threaded OpenBLAS makes the small products of a contact step about
10x slower and the timings erratic, and the targets are stated for one core. The setting
only takes effect before numpy loads its BLAS; an explicit environment value wins.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
