"""A process that has imported packscope's CLI once and forks a fresh run of
it for each request from tests/cli.py.

A run of ``python -m packscope.inspector.cli`` spends most of a small
command's time starting Python and importing packscope (about 80 ms, more
under load); the suite runs thousands.  A child forked from this process
starts with those imports done and nothing else: no repository opened, no
cache filled, no thread running.  It is given the caller's argument list,
directory, environment and standard streams (passed over the socket), runs
the CLI as ``python -m`` would, and ends as that process would (exit
status, uncaught exception, threads joined, streams flushed).

Run as ``python tests/cli_zygote.py FD``: FD is one end of a socket pair.
A request is a 4-byte length, a JSON header (argv, cwd, env) and three
file descriptors (stdin, stdout, stderr); the answer is the child's exit
status as 4 bytes (negative: the signal that ended it)."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import runpy
import socket
import struct
import sys

CLI = "packscope.inspector.cli"


def preload() -> None:
    importlib.import_module(CLI)
    commands = importlib.import_module("packscope.inspector.commands")
    for module in pkgutil.iter_modules(commands.__path__):
        importlib.import_module(f"{commands.__name__}.{module.name}")


def receive(sock: socket.socket) -> tuple[dict, list[int]] | None:
    data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 3)
    if not data:
        return None
    (size,) = struct.unpack("!I", data[:4])
    body = data[4:]
    while len(body) < size:
        more = sock.recv(size - len(body))
        if not more:
            return None
        body += more
    return json.loads(body), list(fds)


def run_child(header: dict, fds: list[int]) -> None:
    """In the forked child: become the CLI process the caller asked for.
    Never returns: the interpreter exits with the run's status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(header["cwd"])
    os.environ.clear()
    os.environ.update(header["env"])
    sys.argv = ["packscope", *header["argv"]]
    # `python -m` runs the module as __main__ only; a module imported under its
    # own name as well is another object (and runpy warns about it).
    sys.modules.pop(CLI, None)
    runpy.run_module(CLI, run_name="__main__", alter_sys=True)
    sys.exit(0)


def serve(sock: socket.socket) -> None:
    while (request := receive(sock)) is not None:
        header, fds = request
        pid = os.fork()
        if pid == 0:
            sock.close()
            run_child(header, fds)
        for fd in fds:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        sock.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))


if __name__ == "__main__":
    preload()
    serve(socket.socket(fileno=int(sys.argv[1])))
