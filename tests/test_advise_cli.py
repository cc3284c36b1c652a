"""`packscope advise`: the JSON document's schema and the human table, as a
user runs them."""

from __future__ import annotations

import json

import pytest

from packscope.core.advise.sizes import METRICS
from tests.cli import packscope_in
from tests.repos import build_many_packs, git, git_text

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = build_many_packs(tmp_path_factory.mktemp("advise-cli"), packs=6)
    git("config", "gc.autoPackLimit", "4", cwd=r)
    return r


def test_json_follows_the_issue_schema(repo):
    p = packscope_in(repo, "advise", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == 1
    assert {"maintenance", "sizes", "largest", "whatif"} <= set(doc)
    tasks = {t["task"]: t for t in doc["maintenance"]}
    assert list(tasks) == [
        "gc-auto",
        "loose-objects",
        "incremental-repack",
        "commit-graph",
        "pack-refs",
        "geometric-repack",
    ]
    for t in tasks.values():
        assert {"task", "would_run", "triggers", "why", "command"} <= set(t)
        for trig in t["triggers"]:
            assert {"setting", "value", "threshold", "source", "fires"} <= set(trig)
    packs = len(list((repo / "objects" / "pack").glob("*.pack")))
    limit = {tr["setting"]: tr for tr in tasks["gc-auto"]["triggers"]}["gc.autoPackLimit"]
    assert (limit["value"], limit["threshold"], limit["fires"]) == (packs, 4, True)
    assert limit["source"] == f"{repo / 'config'}:{limit['source'].rsplit(':', 1)[1]}"
    assert tasks["gc-auto"]["would_run"] is True and tasks["gc-auto"]["command"] == "git gc --auto"
    for name in METRICS:
        m = doc["sizes"][name]
        assert set(m) == {"value", "reference", "level", "object"}
        assert m["level"] == m["value"] / m["reference"]
    commits = len(git_text("rev-list", "--all", cwd=repo).split())
    assert doc["sizes"]["uniqueCommitCount"]["value"] == commits
    blob = doc["largest"]["blobs"][0]
    assert set(blob) == {"oid", "path", "size", "disk_size", "delta_depth"}
    assert int(git_text("cat-file", "-s", blob["oid"], cwd=repo)) == blob["size"]
    for w in doc["whatif"]:
        assert {"layout", "workload", "current", "proposed"} <= set(w)


def test_the_human_table_says_what_fires(repo):
    p = packscope_in(repo, "advise", "--no-whatif")
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert "gc-auto             yes" in out
    assert "-> git gc --auto" in out
    assert "uniqueCommitCount" in out and "Largest blobs" in out
    assert "What-if" not in out
