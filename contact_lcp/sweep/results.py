"""A sweep's results: ``results.csv`` written row by row, the table read back, Parquet and
the summary plots.

``results.csv`` is the record of what finished: a row is appended, flushed and fsynced
as each run ends, so a driver that dies keeps every finished row; a run id already in
the file is never written again (a retried task whose first attempt did finish), and
``resume`` skips the ids it holds. Cells: floats as ``repr`` (they read back exactly),
lists and mappings as JSON, None as empty.
"""

import csv
import io
import json
import math
import os

from contact_lcp.exceptions import SweepError

CSV_NAME = "results.csv"
#: columns read back as text whatever they look like (a run id of hex digits can read
#: as a number: ``123456789012``, ``1e5f...`` is not, ``12e345678901`` is)
TEXT_COLUMNS = frozenset({"run_id", "status", "message"})


class Table:
    """Rows of a sweep (a list of dicts, one per run), with column access.

    ``table["final_x"]`` is a column (a list), ``table[0]`` a row; ``len``, iteration
    over rows, :meth:`to_csv`, and :meth:`to_pandas` when pandas is installed.
    ``ran``, ``skipped`` and ``lost`` count the runs made by this call, those found in
    ``results.csv`` already (``resume``) and those lost to worker or node failures after
    Ray's retries (ids in ``lost_ids``; ``resume`` runs them again).
    """

    def __init__(self, rows, columns, *, ran=0, skipped=0, lost_ids=()):
        self.rows = list(rows)
        self.columns = list(columns)
        self.ran, self.skipped = ran, skipped
        self.lost_ids = list(lost_ids)

    @property
    def lost(self):
        """How many runs were lost (``len(lost_ids)``)."""
        return len(self.lost_ids)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self.columns:
                raise KeyError(f"no column {key!r}; columns: {self.columns}")
            return [r.get(key) for r in self.rows]
        return self.rows[key]

    def __repr__(self):
        return f"Table({len(self.rows)} rows, columns {self.columns})"

    def to_csv(self, path):
        """Write the rows to ``path`` in the ``results.csv`` format."""
        with open(path, "w", newline="", encoding="utf-8") as f:
            f.write(_line(self.columns))
            for row in self.rows:
                f.write(_line([cell(row.get(c)) for c in self.columns]))

    def to_pandas(self):
        """A ``pandas.DataFrame`` of the rows (pandas is not a dependency of contact_lcp)."""
        import pandas

        return pandas.DataFrame(self.rows, columns=self.columns)


def cell(value):
    """The text of one CSV cell (see the module notes)."""
    if value is None:
        return ""
    if isinstance(value, bool) or isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def parse(text):
    """A cell read back: None, int, float, a JSON list/mapping/bool, else the text."""
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text[0] in "[{" or text in ("true", "false"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _line(cells):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()


class ResultsFile:
    """``DIR/results.csv``, opened for appending rows.

    A new sweep in a folder that already holds ``results.csv`` is refused unless
    ``resume`` (then its columns must be this sweep's, and a last line cut short by a
    crash is dropped).
    """

    def __init__(self, folder, columns, resume=False):
        self.path = os.path.join(folder, CSV_NAME)
        self.columns = list(columns)
        self.ids = set()
        exists = os.path.isfile(self.path) and os.path.getsize(self.path) > 0
        if exists and not resume:
            raise SweepError(f"{self.path} exists: resume the sweep (--resume) or choose "
                             "another output folder (--out)")
        if exists:
            self._trim_cut_line()
            header, rows = read_csv(self.path)
            if header != self.columns:
                raise SweepError(f"{self.path}: its columns {header} are not this sweep's "
                                 f"{self.columns}: another spec wrote it")
            self.ids = {r["run_id"] for r in rows}
        self._file = open(self.path, "a", newline="", encoding="utf-8")
        if not exists:
            self._write(_line(self.columns))

    def _trim_cut_line(self):
        with open(self.path, "rb+") as f:
            data = f.read()
            if not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)

    def _write(self, text):
        self._file.write(text)
        self._file.flush()
        os.fsync(self._file.fileno())

    def append(self, row):
        """Write ``row`` unless its run id is in the file already; whether it was written."""
        if row["run_id"] in self.ids:
            return False
        self._write(_line([cell(row.get(c)) for c in self.columns]))
        self.ids.add(row["run_id"])
        return True

    def close(self):
        """Close the file (every written row is on disk already)."""
        self._file.close()


def read_csv(path):
    """``(header, rows)`` of a ``results.csv``, the cells parsed back (:func:`parse`)
    except those of :data:`TEXT_COLUMNS`."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        rows = [{k: v if k in TEXT_COLUMNS else parse(v) for k, v in zip(header, r)}
                for r in reader if len(r) == len(header)]
    return header, rows


def write_parquet(table, path):
    """Write ``table`` as Parquet if pyarrow is installed; whether it was written.
    Columns that mix kinds of values (lists next to numbers) are written as JSON text."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    try:
        data = pa.Table.from_pylist(table.rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        data = pa.Table.from_pylist([{k: cell(v) if isinstance(v, (list, dict)) else v
                                      for k, v in r.items()} for r in table.rows])
    pq.write_table(data, path)
    return True


#: what each summary plot shows against a parameter: (column, label, scale)
PLOTTED = (("final_x", "final x [m]", 1.0), ("final_z", "final z [m]", 1.0),
           ("max_penetration", "max penetration [mm]", 1e3),
           ("mean_vertical_force", "mean vertical contact force [N]", 1.0))


def plot_parameters(table, parameters, folder):
    """One PNG per numeric parameter with more than one value (``DIR/<key>.png``): each
    of :data:`PLOTTED` against it, runs that ended in an error as red crosses. Returns
    the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for key in parameters:
        x = table[key]
        if len(set(map(repr, x))) < 2 or not all(isinstance(v, (int, float)) and
                                                 not isinstance(v, bool) for v in x):
            continue
        fig, axes = plt.subplots(2, 2, figsize=(9, 6), sharex=True)
        try:
            ok = [s == "ok" for s in table["status"]]
            for ax, (col, label, scale) in zip(axes.flat, PLOTTED):
                y = [math.nan if v is None else scale * v for v in table[col]]
                ax.plot([a for a, g in zip(x, ok) if g], [b for b, g in zip(y, ok) if g], "o",
                        ms=4)
                ax.plot([a for a, g in zip(x, ok) if not g], [b for b, g in zip(y, ok) if not g],
                        "rx", ms=6)
                ax.set_ylabel(label)
                ax.grid(alpha=0.3)
            for ax in axes[1]:
                ax.set_xlabel(key)
            fig.suptitle(f"{len(x)} runs against {key}")
            fig.tight_layout()
            path = os.path.join(folder, f"{key}.png")
            fig.savefig(path, dpi=100)
            written.append(path)
        finally:
            plt.close(fig)
    return written
