"""The web server behind `packscope serve`: textual-serve's, with each
browser session tracked, so that stopping the server ends every session's
app at once (aiohttp would otherwise wait a minute for open websockets), and
one line of our own where textual-serve prints a banner.

Imported only by the serve command, after it has checked that the `serve`
extra is installed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from typing import Any

from textual_serve.server import Server

# How long a session's app has to quit once asked (it is told through its
# stdin, as textual-serve does when a browser tab closes) before it is
# signalled.
SESSION_EXIT_SECONDS = 5.0


class SessionServer(Server):
    def __init__(self, command: str, *, host: str, port: int, title: str, public_url: str, banner: str) -> None:
        super().__init__(command, host=host, port=port, title=title, public_url=public_url)
        self.banner = banner
        self.sessions: set[asyncio.Task[Any]] = set()

    def initialize_logging(self) -> None:
        super().initialize_logging()
        # A line per request (page, script, font, websocket) is noise beside a demo.
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def on_startup(self, app: Any) -> None:
        print(self.banner, flush=True)

    async def handle_websocket(self, request: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        self.sessions.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions.discard(task)

    async def on_shutdown(self, app: Any) -> None:
        """Ctrl-C (or SIGTERM): every open session is ended as a closed tab
        ends it — its app told to quit, its websocket closed — and an app
        that has not quit in time is signalled."""
        sessions = list(self.sessions)
        for task in sessions:
            task.cancel()
        if not sessions:
            return
        _, pending = await asyncio.wait(sessions, timeout=SESSION_EXIT_SECONDS)
        if pending:
            end_children()


def end_children(grace: float = 1.0) -> None:
    """Terminate this process's children (the sessions' apps), then kill
    what is left after ``grace`` seconds.  Linux (/proc) only; elsewhere
    aiohttp's own shutdown timeout applies."""
    children = _children()
    for pid in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while children and time.monotonic() < deadline:
        time.sleep(0.05)
        children = [pid for pid in children if pid in _children()]
    for pid in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _children() -> list[int]:
    me = os.getpid()
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            # pid (comm) state ppid …: comm may hold spaces and parentheses.
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 1 and fields[0] != b"Z" and int(fields[1]) == me:
                found.append(int(name))
    return found
