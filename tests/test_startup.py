"""A one-shot command imports only what it uses: `cat-file -t HEAD` loads no
UI library, no history or fsck code, no trace event classes (nobody
traces), no hashing (unless it checks an object), no multi-pack-index
reader when there is none, and no sorted containers when there are no loose
objects; `log` loads no UI library and no trace events either, and a
traced command does load them; and the constants that spare it work are
git's values."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from packscope.core.oid import SHA1, SHA256
from tests.repos import build_packed, git, git_env

PROBE = """
import json, sys
from packscope.inspector.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

NOT_FOR_ONE_SHOT = (
    "textual",
    "rich",
    "sortedcontainers",
    "packscope.core.store.midx",
    "packscope.core.history",
    "packscope.core.fsck",
    "packscope.core.trace_events",
    "packscope.inspector.app",
    "packscope.inspector.screens",
    "packscope.inspector.widgets",
)


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    return build_packed(tmp_path_factory.mktemp("startup"), commits=5)


@pytest.mark.parametrize(
    "args, hashes",
    [
        (["cat-file", "-t", "HEAD"], False),
        (["cat-file", "-p", "HEAD"], False),
        (["cat-file", "-s", "HEAD~2"], True),  # stepping to a parent checks the commit's hash, as git does
    ],
)
def test_one_shot_cat_file_imports_only_what_it_uses(packed, args, hashes):
    p = subprocess.run(
        [sys.executable, "-c", PROBE, "-C", str(packed), *args], capture_output=True, env=git_env(), check=True
    )
    expected = git(*args[:1], *args[1:], cwd=packed)
    assert p.stdout == expected
    report = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert report["code"] == 0
    loaded = [m for m in report["modules"] if m.startswith(NOT_FOR_ONE_SHOT)]
    assert loaded == []
    assert ("hashlib" in report["modules"]) == hashes


@pytest.mark.parametrize("args", [["cat-file", "-t", "HEAD"], ["cat-file", "-e", "HEAD"]])
def test_one_shot_type_query_creates_no_dataclass(packed, args):
    # The records a lookup opens with (formats, repository, config entries,
    # refs, pack files, locations) are NamedTuples or plain classes: a frozen
    # slots dataclass costs ~1 ms to create, `dataclasses` ~6 ms to import,
    # together a third of this command's start-up before they were dropped.
    out, modules = loaded_modules(packed, args)
    assert out == git(*args, cwd=packed)
    assert "dataclasses" not in modules


UI_AND_EVENTS = ("textual", "rich", "packscope.core.trace_events", "packscope.inspector.app")


def loaded_modules(repo, args) -> tuple[bytes, list[str]]:
    p = subprocess.run([sys.executable, "-c", PROBE, "-C", str(repo), *args], capture_output=True, env=git_env())
    report = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert report["code"] == 0
    return p.stdout, report["modules"]


@pytest.mark.parametrize("args", [["log", "--all", "--format=%H"], ["log", "-n2"]])
def test_one_shot_log_loads_no_ui_no_trace_events_and_no_argument_parser(packed, args):
    # log reads its own words (cli.WORDS_COMMANDS): argparse, and the shutil
    # and locale its help formatter loads, are ~8 ms of its start-up
    out, modules = loaded_modules(packed, args)
    assert out == git(*args, cwd=packed)
    assert [m for m in modules if m.startswith(UI_AND_EVENTS)] == []
    assert [m for m in modules if m in ("argparse", "shutil", "locale")] == []


@pytest.fixture(scope="module")
def graphed(tmp_path_factory):
    repo = build_packed(tmp_path_factory.mktemp("startup-graph"), commits=5)
    git("commit-graph", "write", "--reachable", "--changed-paths", cwd=repo)
    return repo


@pytest.mark.parametrize(
    "args", [["log", "--all", "--format=%H"], ["log", "--topo-order", "-n", "3", "--format=%H"], ["log", "-n2"]]
)
def test_log_over_a_commit_graph_creates_no_dataclass(graphed, args):
    # the commit-graph's records (CommitRecord, BloomSettings, the chunk
    # table's Chunk) are NamedTuples: `dataclasses` and the `inspect` it
    # loads were ~5 ms of a short log's start-up
    out, modules = loaded_modules(graphed, args)
    assert out == git(*args, cwd=graphed)
    assert "packscope.core.history.commit_graph" in modules  # (the graph was read)
    assert [m for m in modules if m in ("dataclasses", "inspect")] == []


def test_log_help_builds_the_parser_when_asked(packed):
    out, modules = loaded_modules(packed, ["log", "--help"])
    assert out.startswith(b"usage: packscope log [REV")
    assert "argparse" in modules


ENTRY_PROBE = """
import gc, json, sys
from packscope.inspector import entry
sys.argv = ["packscope", *sys.argv[1:]]
code = entry.main()
sys.stdout.flush()
print(json.dumps({"code": code, "collector": gc.isenabled(), "frozen": gc.get_freeze_count()}), file=sys.stderr)
"""


def test_the_entry_point_loads_the_cli_with_the_collector_paused(packed):
    # the console script's entry: the CLI runs, the collector is on again
    # after the modules loaded, and what they made is out of its sight
    p = subprocess.run(
        [sys.executable, "-c", ENTRY_PROBE, "--version"],  # (no parser: its loading is paused too)
        capture_output=True,
        env=git_env(),
        check=True,
    )
    assert p.stdout.startswith(b"packscope ")
    report = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert report["code"] == 0 and report["collector"] is True
    assert report["frozen"] > 0  # nothing else freezes on this path (--version builds no parser)


def test_a_traced_lookup_loads_the_trace_events(packed):
    # the other side of the lazy import: a listener gets real events
    out, modules = loaded_modules(packed, ["lookup", "--json", git("rev-parse", "HEAD", cwd=packed).decode().strip()])
    assert b'"event": "LookupFinished"' in out
    assert "packscope.core.trace_events" in modules


def test_empty_tree_ids_are_the_hash_of_an_empty_tree(tmp_path):
    for fmt in (SHA1, SHA256):
        assert fmt.empty_tree == fmt.hash_object("tree", b"")
        repo = tmp_path / fmt.name
        git("init", "-q", f"--object-format={fmt.name}", repo)
        out = git("hash-object", "-t", "tree", "--stdin", cwd=repo, input=b"").decode().strip()
        assert fmt.empty_tree.hex() == out


def test_the_ui_loads_only_its_first_screen_before_painting():
    # The other screens (and the history, fsck and lab code behind them)
    # are imported when first shown; the trace events with the first event.
    probe = "import json, sys\nimport packscope.inspector.app\nprint(json.dumps(sorted(sys.modules)))"
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=git_env(), check=True)
    modules = json.loads(p.stdout)
    screens = [m for m in modules if m.startswith("packscope.inspector.screens.")]
    assert screens == ["packscope.inspector.screens.base", "packscope.inspector.screens.overview"]
    later = ("packscope.core.history", "packscope.core.fsck", "packscope.core.trace_events")
    assert [m for m in modules if m.startswith(later)] == []
