"""Where numba keeps the compiled kernels: one folder per state of the package's sources.

numba keys a cached function on its own file (name, size, modification time), not on the
files of the compiled functions it calls and inlines. After an edit or a ``git pull`` that
changes ``collision/reduction.py`` alone, ``collision/ground.py``'s cached kernel would keep
running the old reduction code, silently. So the cache goes to
``<cache home>/contact_lcp/numba/<digest>``, the digest of the contents of every ``.py``
file of the package that imports numba (about 2 ms at import): a change in any of them
compiles every kernel once (a minute). numba also keys each kernel on its file's path
and modification time, so the digest covers the tree's path too: another clone gets a
folder of its own (the set-up commands fill it at install: ``contact-lcp warm``) instead
of two trees overwriting each other's kernels in one folder. The newest few folders are
kept.

An explicit ``NUMBA_CACHE_DIR`` wins (one of these folders, inherited from a parent
process that may run other sources, does not). When no cache home is writable numba's
default (the ``__pycache__`` folders) stays.
"""

import hashlib
import os
import re
import shutil
import sys

#: folders of other source states kept besides the current one
KEEP_OTHERS = 2


#: a line importing numba: the files that define kernels (a file that only mentions
#: numba in prose defines none, and its edits must not recompile every kernel)
_IMPORTS_NUMBA = re.compile(rb"^[ \t]*(?:from numba\b|import numba\b)", re.M)


def source_digest(root):
    """Hex digest of ``root``'s path and of the relative paths and contents of the ``.py``
    files under it that import numba (the only ones whose changes compiled code can
    inline)."""
    h = hashlib.blake2b(digest_size=10)
    # the tree's own path too: numba keys each kernel on its file's path and mtime, so two
    # clones sharing a folder would overwrite each other's entries and recompile in turn
    h.update(os.path.abspath(root).encode())
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    text = f.read()
                if _IMPORTS_NUMBA.search(text):
                    h.update(os.path.relpath(path, root).encode())
                    h.update(text)
    return h.hexdigest()


def _prune(base, current):
    """Remove all but the ``KEEP_OTHERS`` most recently used other folders of ``base``."""
    try:
        others = [os.path.join(base, d) for d in os.listdir(base) if d != current]
        others = [p for p in others if os.path.isdir(p)]
        others.sort(key=os.path.getmtime, reverse=True)
    except OSError:
        return
    for path in others[KEEP_OTHERS:]:
        shutil.rmtree(path, ignore_errors=True)


def configure():
    """Point numba's cache at this source state's folder (see the module notes); returns
    the folder, or None when ``NUMBA_CACHE_DIR`` was set or no folder is writable."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    base = os.path.join(home, "contact_lcp", "numba")
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given and os.path.dirname(os.path.abspath(given)) != os.path.abspath(base):
        return None  # the user's (one of ours comes from a parent process: recomputed)
    digest = source_digest(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(base, digest)
    try:
        os.makedirs(path, exist_ok=True)
        os.utime(path)  # most recently used
    except OSError:
        return None
    if not os.access(path, os.W_OK):
        return None
    _prune(base, digest)
    os.environ["NUMBA_CACHE_DIR"] = path  # also for the processes this one starts
    if "numba" in sys.modules:  # imported before us: its config has read the environment
        sys.modules["numba"].config.CACHE_DIR = path
    return path


def plain_error_messages():
    """Have numba write its error messages without terminal highlighting, when numba is
    not imported yet and the environment does not say otherwise. While compiling, numba
    builds the message of every typing attempt that fails (each overload template it
    tries and rejects: tens of thousands for a robot's first steps), and with
    highlighting on each one initialises colorama's stream wrappers again, seconds of a
    cold start's compile. The setting is numba's own
    (``NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING``, read when numba is imported); the
    messages keep their text."""
    if "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")


def cache_array_class():
    """Put a C-level cache in front of the Python function through which numba's compiled
    code reads the ndarray class each time it boxes an array a kernel returns
    (``numba.core.serialize._numba_unpickle``: a memo lookup behind a Python frame, one
    per returned array; a robot's step returns dozens). The C helper that
    calls it looks it up once, at its first call, so this runs before any kernel has
    returned an array (at import); later it changes nothing (the helper keeps what it
    found). The function memoizes already, so the cache returns the objects it would."""
    import functools

    from numba.core import serialize

    fn = serialize._numba_unpickle
    if not hasattr(fn, "cache_info"):
        serialize._numba_unpickle = functools.lru_cache(maxsize=None)(fn)


def share_inline_copies():
    """Copy a callee's IR once per inlining, not once per block: numba inlines a kernel
    declared ``inline="always"`` (:mod:`contact_lcp.collision.closed_forms`,
    :mod:`contact_lcp.contact.pyramid_kernel`) by deep-copying the callee's IR twice, one
    ``copy.deepcopy`` per basic block, and every block refers to the function's scope,
    which lists all of its variables: each block's copy copies them all again, so the
    copies cost blocks x variables (numba issue 8989): seconds for the contact model's
    first rung (its island solve, inlined, has over a hundred blocks and a thousand
    variables). During each inlining, the deep copies of
    ``numba.core.inline_closurecall`` share one memo: the scope is copied once, each
    block still gets copies of its own statements, and the result is the copy a single
    deep copy of all blocks would give (numba then renames the callee's variables into
    the caller's scope, so the copied scope lives only through the inlining). A numba
    whose inliner does not look as this expects is left as it is."""
    import copy
    import functools

    try:
        from numba.core import inline_closurecall as ic
    except ImportError:
        return
    inline_ir = getattr(getattr(ic, "InlineWorker", None), "inline_ir", None)
    if (inline_ir is None or getattr(inline_ir, "shares_copies", False)
            or getattr(ic, "copy", None) is not copy):
        return
    memos = []  # one per inlining under way (numba compiles under one lock)

    class _SharedCopy:
        """The ``copy`` module as the inliner sees it: a ``deepcopy`` without a memo
        of its own takes the running inlining's."""

        def __getattr__(self, name):
            return getattr(copy, name)

        @staticmethod
        def deepcopy(x, memo=None):
            return copy.deepcopy(x, memos[-1] if memo is None and memos else memo)

    @functools.wraps(inline_ir)
    def shared(self, *args, **kwargs):
        memos.append({})
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            memos.pop()

    shared.shares_copies = True
    ic.copy = _SharedCopy()
    ic.InlineWorker.inline_ir = shared
