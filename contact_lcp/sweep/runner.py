"""Running a sweep's runs as Ray tasks, writing each row as it comes back.

One task per run (:func:`contact_lcp.sweep.worker.simulate_run`, one CPU each), all
submitted at once; Ray retries a task whose worker process or node died
(``max_retries``), and the driver writes each finished row once (by run id). A task that
still fails after its retries is *lost*: it gets no row, so ``resume`` runs it again.

Workers are separate processes: each imports contact_lcp once and reuses it for its
later runs, and all workers of a machine share the on-disk cache of compiled kernels
(a cold cache is compiled in every worker at once, which on one machine costs no more
wall time than compiling it in one). The cache is keyed on the package files that name
the compiler; this one does not, so editing it does not invalidate the cache.
"""

import os
import threading

from contact_lcp.exceptions import SweepError
from contact_lcp.sweep.results import ResultsFile, Table, plot_parameters, read_csv, \
    write_parquet
from contact_lcp.sweep.spec import load_spec
from contact_lcp.sweep.worker import METRICS, simulate_run, task

#: single-threaded BLAS in the workers, as contact_lcp sets for its own processes (and so
#: for a local Ray instance, whose workers inherit the driver's environment)
WORKER_ENV = {v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def run(spec, address=None, out=None, resume=False, *, num_cpus=None, max_retries=3,
        progress=True, on_row=None, plots=True):
    """Run every run of a sweep on Ray and return its rows.

    Parameters
    ----------
    spec : str, os.PathLike, dict or SweepSpec
        The spec file or mapping (:func:`contact_lcp.sweep.load_spec`).
    address : str, optional
        An existing Ray cluster (``ray start --head`` prints it; ``"auto"``: the one on
        this machine). Default: the Ray instance this process already runs, else a new
        one on this machine with ``num_cpus`` CPUs, shut down at the end.
    out : str, optional
        Results folder (created): ``results.csv``, ``results.parquet`` (with pyarrow),
        one plot per numeric parameter, ``runs/`` with ``record: true``. Default: none,
        the rows are only returned.
    resume : bool
        Continue the ``results.csv`` in ``out``: its run ids are not run again.
    num_cpus : int, optional
        CPUs of a new local Ray instance (default: all of this machine's).
    max_retries : int
        Ray's retries of a run whose worker process or node died.
    progress : bool
        Show progress on stderr (:class:`contact_lcp.progress.Progress`).
    on_row : callable, optional
        Called with each row as it is written (in the order the runs finish).
    plots : bool
        Write the summary plots (with ``out``).

    Returns
    -------
    Table
        One row per run of the spec (in the spec's order), those found in
        ``results.csv`` included; ``ran``, ``skipped`` and ``lost`` count them.
    """
    if not hasattr(spec, "runs"):
        spec = load_spec(spec)
    columns = ["run_id", *spec.parameters, *METRICS]
    if resume and out is None:
        raise SweepError("resume: expected an output folder (out) whose results.csv to continue")
    results = None
    if out is not None:
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as e:
            raise SweepError(f"output folder {out!r} cannot be made: {e.strerror}") from None
        results = ResultsFile(out, columns, resume)
    stopping = None
    try:
        done = results.ids if results is not None else set()
        todo = [r for r in spec.runs if r.run_id not in done]
        rows, lost, stopping = _run_tasks([task(r, spec, out) for r in todo], address,
                                          num_cpus, max_retries, progress, results, on_row)
    finally:
        if results is not None:
            results.close()
    try:
        if out is not None:
            _, rows = read_csv(results.path)
        by_id = {r["run_id"]: r for r in rows}
        table = Table([by_id[i] for i in spec.ids if i in by_id], columns,
                      ran=len(todo) - len(lost), skipped=len(spec.runs) - len(todo),
                      lost_ids=lost)
        if out is not None:
            write_parquet(table, os.path.join(out, "results.parquet"))
            if plots:
                plot_parameters(table, spec.parameters, out)
    finally:
        if stopping is not None:
            stopping.join()
    return table


def _run_tasks(tasks, address, num_cpus, max_retries, progress, results, on_row):
    """Rows of ``tasks`` run on Ray (each written to ``results`` as it comes), the ids of
    the lost ones, and the thread stopping the Ray instance this call started (None if it
    started none): Ray's shutdown waits up to a second for each of its processes in turn,
    which the caller spends reading back and writing the results instead, then joins.
    On an error or an interrupt the instance is stopped before this returns."""
    from contact_lcp.progress import Progress

    if not tasks:
        return [], [], None
    try:
        import ray
    except ImportError:
        raise SweepError("sweeps run on Ray, which is not installed: pip install "
                         "'contact_lcp[sweep]' (or ray>=2.60)") from None

    started = _init(ray, address, num_cpus)
    rows, lost, failed, seen, finished = [], [], 0, set(), False
    bar = Progress(len(tasks), desc="sweep", unit="run", every=5.0) if progress else None
    try:
        remote = ray.remote(num_cpus=1, max_retries=max_retries)(simulate_run)
        pending = {remote.remote(t): t["run_id"] for t in tasks}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                run_id = pending.pop(ref)
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayError as e:
                    lost.append(run_id)
                    if bar is not None:
                        bar.write(f"run {run_id} lost after {max_retries} retries: "
                                  f"{type(e).__name__}")
                    row = None
                if row is not None and (results.append(row) if results is not None
                                        else row["run_id"] not in seen):
                    seen.add(row["run_id"])
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
                failed += row is None or row["status"] != "ok"
                if bar is not None:
                    bar.update(1, f"failed={failed}" + (f" lost={len(lost)}" if lost else ""))
        finished = True
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if bar is not None:
            bar.close()
        if started and not finished:
            ray.shutdown()
    stopping = None
    if started:  # (not a daemon: the interpreter waits for it at exit)
        stopping = threading.Thread(target=ray.shutdown, name="ray-shutdown")
        stopping.start()
    return rows, lost, stopping


def _init(ray, address, num_cpus):
    """Connect to Ray; whether this call started it (and so shuts it down)."""
    if ray.is_initialized():  # the caller's instance (a notebook's, a test's cluster)
        return False
    kwargs = {"include_dashboard": False, "log_to_driver": False}
    if address is None:  # the workers inherit this process's environment (WORKER_ENV)
        kwargs["num_cpus"] = num_cpus or os.cpu_count()
    else:  # a cluster's workers inherit 'ray start''s: a runtime env sets it
        kwargs["runtime_env"] = {"env_vars": dict(WORKER_ENV)}
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, ValueError) as e:
        raise SweepError(f"Ray at {address!r}: cannot connect ({e})") from None
    return True
