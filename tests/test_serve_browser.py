"""`packscope serve` in a real browser: Debian's chromium, headless, driven
by Playwright (its own browser downloads are not used).  The page loads, the
app starts in it, keys typed in the page reach the app (switch to the Lab,
look an id up, quit), and stopping the server leaves no app behind.

The terminal in the page (xterm.js) draws on a canvas; its text is read from
xterm's own buffer, reached by catching the page script's assignment of its
terminal object (``CAPTURE``).  Without chromium the browser tests skip,
except under CI (``CI=true``), where they fail."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import repos

SERVE = (sys.executable, "-m", "packscope.inspector.cli", "serve")
START_SECONDS = 90  # the app's start-up in the page, on a busy 2-core machine
STEP_SECONDS = 30
# The server ends its sessions itself when stopped (5 s for an app to quit
# when told, then signals); left to aiohttp, open websockets hold it 15-60 s.
STOP_SECONDS = 12
VIEWPORT = {"width": 1400, "height": 900}

# Runs before the page's scripts: textual.js keeps its xterm Terminal in a
# `terminal` property of its own object; a setter on Object.prototype sees that
# assignment, keeps the value where it was put, and remembers the terminal.
CAPTURE = """
Object.defineProperty(Object.prototype, 'terminal', {
  configurable: true,
  set(value) {
    Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
    if (value && value.buffer && typeof value.write === 'function') window.__packscopeTerminal = value;
  },
});
"""
# The terminal's visible rows as text, or null before the terminal exists.
SCREEN_TEXT = """() => {
  const t = window.__packscopeTerminal;
  if (!t) return null;
  const b = t.buffer.active, rows = [];
  for (let y = 0; y < t.rows; y++) {
    const line = b.getLine(b.viewportY + y);
    rows.push(line ? line.translateToString(true) : '');
  }
  return rows.join('\\n');
}"""


def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        reason = "Debian's chromium is not installed (apt-get install chromium); .ci/run installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " — and CI must run the browser tests")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def served_repo(tmp_path_factory):
    return repos.build_packed(tmp_path_factory.mktemp("serve"), commits=20)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """A running `packscope serve`: its process, the URL it printed, what it
    has written so far."""

    def __init__(self, proc: subprocess.Popen, port: int) -> None:
        self.proc = proc
        self.port = port
        self.out: list[str] = []
        self.err: list[str] = []
        self.url: str | None = None
        self._url_seen = threading.Event()
        for stream, sink in ((proc.stdout, self.out), (proc.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, sink), daemon=True).start()

    def _read(self, stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)
            found = re.search(r"\bat (http://\S+)", line)
            if found and self.url is None:
                self.url = found.group(1)
                self._url_seen.set()
        self._url_seen.set()  # ended: no URL will come

    def output(self) -> str:
        return "".join(self.out) + "".join(self.err)

    def wait_for_url(self) -> str:
        self._url_seen.wait(START_SECONDS)
        if self.url is None:
            self.proc.poll()
            pytest.fail(f"packscope serve printed no URL (exit {self.proc.returncode}):\n{self.output()}")
        # The URL is printed as the server starts; its socket listens a moment later.
        deadline = time.monotonic() + STEP_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self.url
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"packscope serve is not listening on port {self.port}:\n{self.output()}")
                time.sleep(0.1)

    def children(self) -> list[int]:
        """The server's live child processes (the sessions' apps)."""
        return [pid for pid, (ppid, state) in _processes().items() if ppid == self.proc.pid and state != "Z"]


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state), from /proc."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        table[int(name)] = (int(fields[1]), fields[0])
    return table


def alive(pid: int) -> bool:
    state = _processes().get(pid)
    return state is not None and state[1] != "Z"


@contextmanager
def serving(repo: Path, *args: str):
    """`packscope serve REPO ARGS` in a session of its own (so that a Ctrl-C
    can go to its whole process group, as a terminal sends it)."""
    port = free_port()
    proc = subprocess.Popen(
        [*SERVE, str(repo), "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=repos.git_env(),
        start_new_session=True,
    )
    served = Served(proc, port)
    try:
        yield served
    finally:
        if proc.poll() is None:
            children = served.children()
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            for pid in children:  # now orphans, outside the group only if they moved
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


def listening_addresses(port: int) -> set[str]:
    """Local addresses of the TCP sockets listening on ``port`` (every one on
    this machine's network namespace), from /proc/net/tcp and tcp6."""
    found = set()
    for table, width in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            hex_addr, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(hex_addr)
            # The kernel prints each 32-bit word in host (little-endian) order.
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, width, 4))
            found.add(socket.inet_ntop(socket.AF_INET if width == 4 else socket.AF_INET6, raw))
    return found


def is_loopback(address: str) -> bool:
    import ipaddress

    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


class Page:
    """The page of one browser session, read as the terminal's text."""

    def __init__(self, page) -> None:
        self.page = page

    def text(self) -> str:
        return self.page.evaluate(SCREEN_TEXT) or ""

    def wait_for(self, *words: str, seconds: float = STEP_SECONDS) -> str:
        """The screen once it shows every one of ``words``; fails with what
        it shows otherwise."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        check = (
            "(words) => { const t = window.__packscopeTerminal; if (!t) return false;"
            f" const text = ({SCREEN_TEXT})(); return words.every(w => text.includes(w)); }}"
        )
        try:
            self.page.wait_for_function(check, arg=list(words), timeout=seconds * 1000)
        except PlaywrightTimeout:
            pytest.fail(f"the page never showed {words!r}; it shows:\n{self.text()}")
        return self.text()

    def keys(self, text: str) -> None:
        """Typed into the terminal, as a person at the page types."""
        self.page.locator(".xterm-helper-textarea").focus()
        self.page.keyboard.type(text, delay=20)


@contextmanager
def opened(browser, url: str):
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(CAPTURE)
    page = context.new_page()
    try:
        page.goto(url)
        yield Page(page)
    finally:
        context.close()


def test_serve_listens_on_the_loopback_only_by_default(served_repo):
    with serving(served_repo) as served:
        url = served.wait_for_url()
        assert url == f"http://127.0.0.1:{served.port}"
        addresses = listening_addresses(served.port)
        assert addresses, f"nothing listens on port {served.port}"
        assert all(is_loopback(a) for a in addresses), f"listening beyond the loopback: {addresses}"
        assert "warning" not in served.output()


def test_keys_typed_in_the_browser_drive_the_lab(browser, served_repo, tmp_path):
    wanted = repos.ids_of_type(served_repo, "tree")[0]
    [pack] = repos.pack_files(served_repo)
    with serving(served_repo) as served, opened(browser, served.wait_for_url()) as page:
        # The app started in the page, on this repository (its path at the top right).
        # the app opened the repository served (its name: a long path gives up its start)
        first = page.wait_for("1 Overview", "6 Lookup lab", served_repo.name, seconds=START_SECONDS)
        assert "Press l (or Enter)" not in first
        overview = page.page.screenshot()
        assert len(served.children()) == 1  # this session's own app

        page.keys("6")
        page.wait_for("Press l (or Enter) and type an id")
        page.keys("l")
        page.wait_for("look up:")  # the prompt
        page.keys(wanted)
        page.page.keyboard.press("Enter")
        # Found where git put it: the repository's one pack.
        lab = page.wait_for(f"found in pack {pack.stem}")
        assert wanted in lab

        shot = tmp_path / "lab.png"
        page.page.screenshot(path=str(shot))
        png = shot.read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        assert int.from_bytes(png[16:20], "big") == VIEWPORT["width"]
        assert png != overview  # the page shows what the keys changed

        page.keys("q")  # the Lab is a top-level screen: q quits, as in tig, and the page says so
        page.page.wait_for_selector("body.-closed", timeout=STEP_SECONDS * 1000)
        deadline = time.monotonic() + STEP_SECONDS
        while served.children() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served.children() == []
        assert served.proc.poll() is None  # the server goes on serving other tabs


@pytest.mark.parametrize(
    "stop",
    [
        pytest.param(lambda pid: os.killpg(pid, signal.SIGINT), id="ctrl-c"),  # a terminal sends it to the group
        pytest.param(
            lambda pid: os.kill(pid, signal.SIGTERM), id="sigterm"
        ),  # kill, a service manager: the server only
    ],
)
def test_stopping_the_server_ends_every_session(browser, served_repo, stop):
    with serving(served_repo, "--present") as served:
        url = served.wait_for_url()
        with opened(browser, url) as one, opened(browser, url) as two:
            for page in (one, two):
                page.wait_for("1 Overview", seconds=START_SECONDS)
            apps = served.children()
            assert len(apps) == 2
            stop(served.proc.pid)
            try:
                assert served.proc.wait(STOP_SECONDS) == 0
            except subprocess.TimeoutExpired:
                pytest.fail(f"packscope serve still runs {STOP_SECONDS} s after being stopped")
            left = [pid for pid in apps if alive(pid)]
            assert left == [], f"apps left running: {left}"
            assert "Traceback" not in served.output()


def test_a_wider_host_is_served_with_a_warning(served_repo):
    with serving(served_repo, "--host", "0.0.0.0") as served:
        served.wait_for_url()
        assert served.url == f"http://{socket.gethostname()}:{served.port}"
        assert listening_addresses(served.port) == {"0.0.0.0"}
        # printed before the URL, on stderr: read by its own thread, so waited for
        deadline = time.monotonic() + STEP_SECONDS
        while "anyone who can reach port" not in served.output() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "anyone who can reach port" in served.output()


def test_without_textual_serve_it_says_how_to_install_it(served_repo):
    # As if the extra were not installed: the import system finds no textual_serve.
    code = (
        "import sys; sys.modules['textual_serve'] = None\n"
        "from packscope.inspector.cli import main\n"
        f"sys.exit(main(['serve', {str(served_repo)!r}]))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=repos.git_env(), timeout=60)
    assert p.returncode == 2
    assert "pip install 'packscope[serve]'" in p.stderr
    assert p.stdout == ""


def test_a_port_in_use_is_said_before_any_url(served_repo):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        p = subprocess.run(
            [*SERVE, str(served_repo), "--port", str(port)],
            capture_output=True,
            text=True,
            env=repos.git_env(),
            timeout=60,
        )
    assert p.returncode == 2
    assert f"cannot listen on 127.0.0.1 port {port}" in p.stderr
    assert "http://" not in p.stdout + p.stderr
