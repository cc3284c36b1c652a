"""`packscope serve`: the UI in a web browser, for demos and shared sessions.

Each browser tab that connects gets an app process of its own, started
exactly as `packscope PATH` starts (or `packscope lab PATH --replay FILE`),
on the same repository, read-only as always.  Textualize's textual-serve
runs the web server (the `serve` extra: pip install 'packscope[serve]').

It listens on 127.0.0.1 unless --host says otherwise: anyone who can reach a
wider address can browse the repository.  Ctrl-C stops the server and every
session's app."""

from __future__ import annotations

import ipaddress
import os
import shlex
import socket
import sys

INSTALL_HINT = "pip install 'packscope[serve]'  (or: pip install textual-serve)"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(sub) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the UI to web browsers (each browser session its own app; needs the `serve` extra)",
        description=__doc__.split("\n", 1)[1].strip(),
    )
    p.add_argument("path", nargs="?", default=None, help="repository (default: discovered from the current directory)")
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only; a wider one is reachable by others)",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    p.add_argument(
        "--public-url",
        metavar="URL",
        default=None,
        help="the address browsers use, when not http://HOST:PORT (e.g. behind a proxy)",
    )
    p.add_argument("--present", action="store_true", help="presentation mode (no live panels; the Lab draws larger)")
    p.add_argument(
        "--replay",
        metavar="FILE",
        help="open each session on the Lookup lab replaying lookups recorded with `packscope lookup --json`",
    )
    p.set_defaults(func=run)


def session_command(path: str | None, *, present: bool, replay: str | None) -> list[str]:
    """The words each browser session's app process runs: the same start-up
    as `packscope PATH` in a terminal (`packscope lab PATH --replay FILE`
    with a trace), through this interpreter so that the packscope serving
    is the packscope served."""
    words = [sys.executable, "-m", "packscope.inspector.entry"]
    if replay is not None:
        words.append("lab")
    if path is not None:
        words.append(os.path.abspath(path))
    if replay is not None:
        words += ["--replay", os.path.abspath(os.path.expanduser(replay))]
    if present:
        words.append("--present")
    return words


def shell_line(words: list[str]) -> str:
    """textual-serve starts each session through the shell: the words
    quoted, `exec` so that the app is the session's only process, and
    Ctrl-C ignored until the app takes its own signals.  The server ends
    the sessions when it stops (as a closed tab does): a Ctrl-C at the
    server's terminal, which the whole process group receives, would
    otherwise interrupt an app still starting with a traceback."""
    return "trap '' INT; exec " + shlex.join(words)


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is this machine's loopback
    (an unknown name is not)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]).is_loopback for info in infos)


def url_for(host: str, port: int) -> str:
    """The address a browser opens: a wildcard host is named by this
    machine's name, an IPv6 literal in brackets."""
    bare = host.strip("[]")
    if bare in ("", "0.0.0.0", "::"):
        bare = socket.gethostname()
    try:
        if ipaddress.ip_address(bare).version == 6:
            bare = f"[{bare}]"
    except ValueError:
        pass
    return f"http://{bare}:{port}"


def bind_error(host: str, port: int) -> OSError | None:
    """Why the server could not listen on ``host:port`` (in use, no such
    address), asked before it starts: textual-serve announces the URL before
    it binds, and a URL followed by an error reads as if it half worked."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, proto, _, address in infos:
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp listens
                s.bind(address)
    except OSError as e:
        return e
    return None


def run(args) -> int:
    import importlib.util

    if importlib.util.find_spec("textual_serve") is None:
        print(f"packscope serve: needs textual-serve, which is not installed: {INSTALL_HINT}", file=sys.stderr)
        return 2
    from packscope.core.repo.repository import Repository

    if not 0 < args.port < 65536:
        print(f"packscope serve: --port must be 1…65535, not {args.port}", file=sys.stderr)
        return 2
    if args.replay:
        from packscope.inspector.replay import read_recordings

        read_recordings(args.replay)  # a bad file is said here, once, not in every browser tab
    # Every session opens the same repository: refuse here, not in the page.
    repo = Repository.discover() if args.path is None else Repository.open(args.path)
    from packscope.inspector.web_server import SessionServer

    error = bind_error(args.host, args.port)
    if error is not None:
        print(
            f"packscope serve: cannot listen on {args.host} port {args.port}: {error.strerror or error}",
            file=sys.stderr,
        )
        return 2
    url = args.public_url or url_for(args.host, args.port)
    if not is_loopback(args.host):
        print(
            f"packscope serve: warning: listening on {args.host}: anyone who can reach port {args.port} "
            "can browse this repository (there is no password)",
            file=sys.stderr,
            flush=True,
        )
    server = SessionServer(
        shell_line(session_command(args.path, present=args.present, replay=args.replay)),
        host=args.host,
        port=args.port,
        title=f"packscope {repo.git_dir}",
        public_url=url,
        banner=f"packscope serve: {repo.git_dir} at {url}  (Ctrl-C to stop)",
    )
    try:
        server.serve()
    except OSError as e:
        print(f"packscope serve: cannot listen on {args.host} port {args.port}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0
