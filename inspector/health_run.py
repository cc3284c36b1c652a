"""Health's check in a process of its own.

The check (packscope.core.fsck.verify) builds large short-lived tables — a
set of every reachable id, the ids the objects name, its delta-base caches.
Run in the UI process, that memory is not given back when the run ends: the
small objects the UI allocates meanwhile pin the allocator's arenas (git.git:
~165 MB still resident after a finished run, ~195 MB after a cancelled one,
and a second run started from there).  So the UI's worker thread forks one
process that runs the whole check (its object pass forks the usual workers,
packscope.core.fsck.parallel) and streams back progress and findings over a
pipe; when it exits, all of its memory goes with it.

Cancel sets an event the check asks at every progress step (the object
pass's wait polls it every 0.1 s and terminates its workers); a child that
does not stop within ``STOP_GRACE`` seconds is terminated.  Without fork
(not POSIX) the check runs in the calling thread, as before.

The child runs only fsck code: it never touches Textual (its streams go to
/dev/null; Ctrl-C is the UI's) and it ends with multiprocessing's
``os._exit``, so none of the UI's exit handlers run there.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from packscope.core.errors import CancelledError, PackscopeError

if TYPE_CHECKING:
    from packscope.core.repo.repository import Repository

STOP_GRACE = 5.0  # seconds a cancelled child has to stop by itself
SEND_EVERY = 0.1  # seconds between batches of findings / progress reports

Progress = Callable[[int, int, str], None]


class CheckFailed(Exception):
    """The check stopped on an error (its text, as the Health title shows it)."""


def forks() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def run_check(
    repository: Repository,
    mode: str,
    progress: Progress,
    entry: Callable[[Any], None],
    cancelled: Callable[[], bool],
    jobs: int,
) -> dict:
    """Run the check (``mode``: "full" or "connectivity") on ``repository``
    (the UI's, as found once: never found again here, from a path or the
    current directory); ``progress(done, total, phase)`` and ``entry(Entry)`` are
    called in this thread as results come.  The summary; CancelledError
    after a cancel, CheckFailed after an error."""
    if not forks():
        return _check(repository, mode, progress, entry, cancelled, jobs)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    stop = ctx.Event()
    proc = ctx.Process(target=_child, args=(repository, mode, send, stop, jobs), name="packscope-health-check")
    gc.freeze()  # the child inherits the UI's objects: its collections leave them (and their pages) alone
    try:
        proc.start()
    finally:
        gc.unfreeze()
    send.close()  # the child holds the write end: end of file when it exits
    stop_asked = 0.0
    try:
        while True:
            if cancelled() and not stop_asked:
                stop.set()
                stop_asked = time.monotonic()
            if stop_asked and time.monotonic() - stop_asked > STOP_GRACE:
                proc.terminate()
                raise CancelledError("cancelled")
            if not recv.poll(0.1):
                continue
            try:
                message = recv.recv()
            except EOFError:  # gone without a word: killed
                raise CheckFailed(f"the check process ended (exit status {proc.exitcode})") from None
            kind = message[0]
            if kind == "progress":
                progress(*message[1:])
            elif kind == "entries":
                for e in message[1]:
                    entry(e)
            elif kind == "done":
                return message[1]
            elif kind == "cancelled":
                raise CancelledError("cancelled")
            else:
                raise CheckFailed(message[1])
    finally:
        stop.set()
        proc.join(STOP_GRACE)
        if proc.is_alive():
            proc.terminate()
            proc.join()
        recv.close()


def _child(repository: Repository, mode: str, send: Any, stop: Any, jobs: int) -> None:
    """In the forked process: the check, its results down the pipe."""
    # The UI's handlers are not this process's: Ctrl-C is the UI's to act on
    # (it cancels through the event), and Textual's resize / suspend handlers
    # would act on the terminal from here, or wake the UI's event loop
    # through the wake-up pipe the fork shares.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGWINCH", "SIGTSTP", "SIGCONT", "SIGTTOU", "SIGTTIN"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.set_wakeup_fd(-1)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the UI's streams are Textual's
    batch: list[Any] = []
    sent = [0.0]

    def flush(force: bool = False) -> None:
        now = time.monotonic()
        if batch and (force or now - sent[0] >= SEND_EVERY):
            send.send(("entries", list(batch)))
            batch.clear()
            sent[0] = now

    def progress(done: int, total: int, phase: str) -> None:
        send.send(("progress", done, total, phase))
        flush()

    try:
        summary = _check(repository, mode, progress, batch.append, stop.is_set, jobs)
        flush(force=True)
        send.send(("done", summary))
    except CancelledError:
        send.send(("cancelled",))
    except CheckFailed as e:
        flush(force=True)
        send.send(("error", str(e)))
    except Exception as e:  # a bug in a check must not go unexplained
        send.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        send.close()


def _check(
    repository: Repository,
    mode: str,
    progress: Progress,
    entry: Callable[[Any], None],
    cancelled: Callable[[], bool],
    jobs: int,
) -> dict:
    """The check itself, on a private read-only session (its own store, no
    tracer: it reads every object once, and neither the shared store's lock
    nor the event log should be held by it for minutes)."""
    from packscope.core.fsck.verify import Fsck
    from packscope.core.repo.session import open_session
    from packscope.inspector.health_groups_model import Attributor

    session = open_session(repo=repository)
    try:
        store = session.store
        checker = Fsck(
            session.repo,
            store,
            session.refs,
            connectivity_only=mode != "full",
            progress=progress,  # the check keeps its own resident set down (core/fsck/resident.py)
            cancel=cancelled,
            jobs=jobs,
        )
        attribute = Attributor(store)
        try:
            for finding in checker.run():
                entry(attribute.entry(finding))
        except CancelledError:
            raise
        except PackscopeError as e:
            raise CheckFailed(e.message + (f" [{e.location()}]" if e.location() else "")) from e
        return checker.summary()
    finally:
        with contextlib.suppress(Exception):
            session.close()


def settle_run(repository: Any, findings: list, start: Any) -> Any:
    """The run's findings against the state at its start (``start``: a
    ``RepoState`` of ``repository``, the one the UI opened) and now (``packscope.core.fsck.changed_during``):
    when the repository changed meanwhile, what is about files that are gone
    is dropped, and what may come from the change is told apart.  A session
    on the final state is opened only then."""
    from packscope.core.fsck.changed_during import settle, unchanged
    from packscope.core.repo.repo_state import compare, state_of
    from packscope.core.repo.session import open_session

    end = state_of(repository)
    if compare(start, end) is None:
        return unchanged(findings)
    session = open_session(repo=repository)
    try:
        return settle(findings, start, end, session)
    finally:
        with contextlib.suppress(Exception):
            session.close()
