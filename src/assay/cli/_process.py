"""Process-wide tricks of the `assay` executable, and of nothing else (CONVENTIONS).

`console()`, the executable's entry point, calls `take_over()`; until then every trick here does
nothing, so `main()` called inside somebody's process and every library call (`assay.evaluate`)
leave the garbage collector (its frozen generation, its thresholds) and the interpreter's
teardown as the host set them. The tricks: the collector off during `run`'s imports and what
they made frozen, rare young collections during runs and what a target's set-up loaded frozen,
and the end of the process without the interpreter's teardown.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import itertools
import os
import sys
import threading
from collections.abc import Iterator
from typing import NoReturn

__all__ = ["end_process", "freeze_heap", "long_lived_heap", "long_lived_imports", "take_over"]

_GC_GEN0_THRESHOLD = 100_000
"""Net allocations between young-generation collections during a run (Python's default: 700).

Each collection scans every young object alive at that moment, mostly the results waiting
for the store, so fewer collections cost less in total (100,000 graded recordings: 470
collections and 2.3 s at 10,000; 6 and 0.14 s at 100,000)."""


class _Owner:
    """Whether this process is the `assay` executable's (set once, by `take_over`)."""

    executable = False


def take_over() -> None:
    """Declare the process the `assay` executable's: the tricks below apply from now on."""
    _Owner.executable = True


@contextlib.contextmanager
def long_lived_imports() -> Iterator[None]:
    """The garbage collector off for `run`'s imports, then what they made frozen.

    They create ~65,000 objects that live as long as the process; with the collector on,
    those were scanned ~150 times while they were made (~40 ms of start-up). Frozen
    (`gc.freeze`), no later collection scans them again either: the first collections after
    the imports took another ~40 ms of a 5,000-case run.
    """
    if not _Owner.executable:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


@contextlib.contextmanager
def long_lived_heap() -> Iterator[None]:
    """Collect garbage rarely while runs execute, and never re-scan what existed before.

    A run allocates a few dozen short-lived objects per case while it holds the whole suite;
    with the default thresholds the collector scans that heap again and again (50,000 graded
    recordings: 27 s before, 21 s with this).
    """
    if not _Owner.executable:
        yield
        return
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], _GC_GEN0_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def freeze_heap() -> None:
    """Put what exists now out of the collector's reach: called once a run's target is set up,
    since what it loaded (a replay file's recordings) lives as long as the run."""
    if _Owner.executable:
        gc.freeze()


def end_process(code: str | int | None) -> NoReturn:
    """End the process with `code`, without the interpreter's teardown once it is safe.

    Once a command is done, Python would free every module and object one by one: ~0.2 s after
    a 5,000-case run (2,700 pydantic classes and their validators), a twentieth of the whole run.
    None of it is needed, so the process ends as soon as what a normal exit guarantees is done:
    the atexit handlers have run (logging, multiprocessing, coverage) and the standard streams
    are flushed, and so is every other open file once a suite's own code was imported (a Python
    target's module may hold one, which the teardown would have flushed; finding them takes
    ~20 ms after a large run). Exits the normal way while a non-daemon thread still runs
    (Python waits for it), when flushing stdout or stderr fails (Python reports it), and when
    `take_over` was not called. Objects' `__del__` methods do not run. User code abandoned
    after a timeout runs on daemon threads (`assay._user_code`), so it never forces the
    normal way.
    """
    if (
        not _Owner.executable
        or not isinstance(code, int | None)
        or not _only_daemon_threads()
        or not _flushed()
    ):
        sys.exit(code)
    atexit._run_exitfuncs()
    references = sys.modules.get("assay._references")  # not imported: no user code was either
    if references is not None and references.user_code_imported():
        _flush_open_files()
    if not _flushed():
        sys.exit(code)
    os._exit(code or 0)


def _only_daemon_threads() -> bool:
    main_thread = threading.main_thread()
    return all(t is main_thread or t.daemon for t in threading.enumerate())


def _flushed() -> bool:
    """Flush stdout and stderr; False when that fails (a closed pipe, a full disk)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


_BUFFERED_FILES = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)


def _flush_open_files() -> None:
    """Flush every open buffered file, as freeing it in the interpreter's teardown would."""
    gc.unfreeze()  # frozen objects (a target module's open log) are not listed otherwise
    objects = gc.get_objects()
    # By type, not isinstance: isinstance reads `__class__`, which a lazy proxy (the openai
    # SDK has some) answers by importing what it stands for. Mapped in C: a Python loop over
    # the ~200,000 objects of a large run took twice as long.
    is_file = map(issubclass, map(type, objects), itertools.repeat(_BUFFERED_FILES))
    for file in itertools.compress(objects, is_file):
        with contextlib.suppress(Exception):  # closed, detached or failing: as at teardown
            file.flush()
