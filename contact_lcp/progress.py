"""Progress of long work (``simulate``, ``table3``, ``sweep``, the benchmarks) on stderr.

On a terminal a tqdm bar redrawn in place, with the rate and the time left; anywhere else
(a log file, a pipe, CI) one plain line at most every ``every`` seconds and one at the
end, each ending with the share done, the time elapsed and the time left, so a log keeps
a readable history instead of carriage returns. Only the command-line, benchmark and
sweep layers use this module; the numerical core reports progress through callbacks.
"""

import sys
import time


def is_terminal(stream):
    """Whether ``stream`` is an interactive terminal (False for anything without
    ``isatty``, e.g. a notebook's stream or a closed file)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def clock(seconds):
    """``seconds`` as ``m:ss`` or ``h:mm:ss`` (``?`` when unknown)."""
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "?"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """``total`` units of work, reported as they are done.

    Parameters
    ----------
    total : int
        Units of work (steps, runs, scenes); the time left is extrapolated from the rate
        since the first unit (:meth:`left`).
    desc : str
        Label in front of the bar or line (e.g. ``"sweep"``).
    unit : str
        Name of one unit (e.g. ``"run"``).
    stream : file, optional
        Where to write; default ``sys.stderr``.
    every : float
        Seconds between plain lines when ``stream`` is not a terminal.
    bar : bool, optional
        Force the tqdm bar (True) or plain lines (False); default: a bar on a terminal.
    count : bool
        Start plain lines with ``done/total unit`` (False: with the status alone, for
        callers whose status says where the work is, such as ``t=1.250s``).

    Use as a context manager, or call :meth:`close` at the end.
    """

    def __init__(self, total, *, desc="", unit="it", stream=None, every=1.0, bar=None,
                 count=True):
        self.total = max(int(total), 0)
        self.desc = desc
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.every = float(every)
        self.count = count
        self.done = 0
        self.status = ""
        self.start = self._first = time.perf_counter()
        self._first_done = 0
        self._last_line = self.start
        self._closed = False
        self._bar = None
        if is_terminal(self.stream) if bar is None else bar:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=desc or None, unit=unit, file=self.stream,
                             dynamic_ncols=True, leave=True, mininterval=0.25)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def left(self):
        """Seconds left at the rate since the first update (None before a later one; 0 when
        all is done): the first units carry the start-up (a simulation's first step loads
        or compiles its kernels; a sweep's first run starts its workers), which, spread
        over the units left, would announce hours for a run of seconds."""
        if self.done >= self.total:
            return 0.0
        after = self.done - self._first_done
        if after <= 0:
            return None
        elapsed = time.perf_counter() - self._first
        return elapsed / after * max(self.total - self.done, 0)

    def update(self, n=1, status=None):
        """``n`` more units done; ``status`` (text such as ``"failed=2"``) replaces the
        status shown after the count."""
        if self.done == 0:  # (when the first update's units ended)
            self._first, self._first_done = time.perf_counter(), n
        self.done += n
        if status is not None:
            self.status = status
        if self._bar is not None:
            if status is not None:
                self._bar.set_postfix_str(status, refresh=False)
            self._bar.update(n)
            return
        now = time.perf_counter()
        if now - self._last_line >= self.every:
            self._line(now)

    def line(self):
        """The plain-text line of the current progress."""
        now = time.perf_counter()
        share = 100.0 * self.done / self.total if self.total else 100.0
        head = f"{self.desc}: " if self.desc else ""
        parts = ([f"{self.done}/{self.total} {self.unit}s"] if self.count else []) + \
            ([self.status] if self.status else [])
        return (f"{head}{'  '.join(parts)}  [{share:.0f}%, {clock(now - self.start)} elapsed, "
                f"~{clock(self.left())} left]")

    def _line(self, now):
        self._last_line = now
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def write(self, text):
        """Print ``text`` on its own line without breaking the bar."""
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def close(self, status=None):
        """End the bar (or write the last plain line, if any unit was done), with
        ``status`` as the last status if given; idempotent."""
        if self._closed:
            return
        self._closed = True
        if status is not None:
            self.status = status
        if self._bar is not None:
            if status is not None:
                self._bar.set_postfix_str(status, refresh=False)
            self._bar.close()
        elif self.done:
            self._line(time.perf_counter())
