"""A history-walking command (log, last-modified) leaves what it made out of
the cyclic collector's sight when it ends: the interpreter's collection at
exit then scans almost nothing, instead of every object of the walk."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.repos import build_packed, git, git_env

PROBE = """
import gc, json, sys
from packscope.inspector.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"code": code, "frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects()),
                  "enabled": gc.isenabled()}), file=sys.stderr)
"""


def test_log_ends_with_its_objects_frozen_and_the_collector_back_on(tmp_path):
    repo = build_packed(tmp_path, commits=30)
    p = subprocess.run(
        [sys.executable, "-c", PROBE, "-C", str(repo), "log", "--all", "--format=%H %s"],
        capture_output=True,
        env=git_env(),
        check=True,
    )
    assert p.stdout == git("log", "--all", "--format=%H %s", cwd=repo)
    report = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert report["code"] == 0 and report["enabled"]
    # everything the command made (modules, the walk) is frozen; the few
    # tracked objects left are what the probe made after it returned
    assert report["frozen"] > 5000
    assert report["tracked"] < 200, report
