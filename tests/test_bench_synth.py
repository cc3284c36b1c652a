"""The synthetic histories of ``packscope bench --scale``: deterministic,
the counts asked for, the pack layout asked for, written as a stream."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from packscope.bench.synth import Shape, shape_for_scale, write_stream
from tests import repos

ROOT = Path(__file__).resolve().parent.parent


def build(path: Path, shape: Shape) -> dict:
    repos.git("init", "-q", "--bare", str(path))
    limit = ["-c", "fastimport.unpackLimit=100000"] if shape.packs == 0 else []
    p = subprocess.Popen(
        ["git", *limit, "fast-import", "--quiet"], cwd=path, stdin=subprocess.PIPE, env=repos.git_env()
    )
    assert p.stdin is not None
    written = write_stream(shape, p.stdin)
    p.stdin.close()
    assert p.wait() == 0
    return written


def lines(path: Path, *args: str) -> list[str]:
    return repos.git(*args, cwd=path).decode().split()


SMALL = Shape(commits=300, merges=12, files=60, tag_every=20)


def test_same_shape_and_seed_give_the_same_commit_ids(tmp_path):
    build(tmp_path / "a.git", SMALL)
    build(tmp_path / "b.git", SMALL)
    ids_a = lines(tmp_path / "a.git", "rev-list", "--all")
    assert ids_a == lines(tmp_path / "b.git", "rev-list", "--all")
    assert repos.git("show-ref", cwd=tmp_path / "a.git") == repos.git("show-ref", cwd=tmp_path / "b.git")
    other = Shape(**{**SMALL.__dict__, "seed": SMALL.seed + 1})
    build(tmp_path / "c.git", other)
    assert set(lines(tmp_path / "c.git", "rev-list", "--all")).isdisjoint(ids_a)


def test_history_has_the_commits_merges_and_refs_asked_for(tmp_path):
    repo = tmp_path / "r.git"
    written = build(repo, SMALL)
    assert len(lines(repo, "rev-list", "--all")) == SMALL.commits == written["commits"]
    assert len(lines(repo, "rev-list", "--all", "--merges")) == SMALL.merges == written["merges"]
    # every topic branch is merged: the main line reaches every commit
    assert len(lines(repo, "rev-list", "refs/heads/main")) == SMALL.commits
    heads = lines(repo, "for-each-ref", "--format=%(refname)", "refs/heads")
    tags = lines(repo, "for-each-ref", "--format=%(objecttype)", "refs/tags")
    assert len(heads) == 1 + SMALL.merges == written["branches"]
    assert tags and set(tags) == {"tag"} and len(tags) == written["tags"]
    files = lines(repo, "ls-tree", "-r", "--name-only", "refs/heads/main")
    assert len(files) == SMALL.files and any(f.count("/") == 2 for f in files)
    repos.git("fsck", "--strict", cwd=repo)


def test_layouts_give_one_pack_n_packs_or_loose_objects(tmp_path):
    for packs in (1, 4, 0):
        repo = tmp_path / f"p{packs}.git"
        build(repo, Shape(commits=120, merges=4, files=30, packs=packs))
        got = len(list((repo / "objects" / "pack").glob("*.pack")))
        assert got == packs, (packs, got)
        loose = [p for p in (repo / "objects").glob("[0-9a-f][0-9a-f]/*")]
        assert bool(loose) == (packs == 0)


def test_a_scale_of_git_git_asks_for_its_commits_and_two_percent_merges():
    one = shape_for_scale(1)
    assert one.commits == 75_000 and one.merges == 1_500 and 1_000 <= one.files <= 5_000
    three = shape_for_scale(3)
    assert three.commits == 3 * one.commits and three.merges == 3 * one.merges


class CountingSink(io.RawIOBase):
    def __init__(self) -> None:
        self.writes: list[int] = []

    def write(self, b) -> int:
        self.writes.append(len(b))
        return len(b)


def test_the_stream_is_handed_over_as_it_is_made():
    sink = CountingSink()
    write_stream(Shape(commits=6_000, merges=100, files=500), sink)  # type: ignore[arg-type]
    assert len(sink.writes) > 3 and max(sink.writes) < 2 << 20


def test_bench_refuses_a_scale_that_is_not_positive(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "bench", "--scale", "0.1,-1", "--work-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=repos.git_env(),
        timeout=120,
    )
    assert p.returncode == 129 and "--scale" in p.stderr


def test_growth_table_gives_each_row_per_size_and_its_slope():
    from packscope.bench.report import growth_table

    def system(name: str, median: float, rss: int) -> dict:
        return {
            "system": name,
            "group": "process",
            "median": median,
            "metrics": {"max_rss_bytes": {"median": rss}},
        }

    sizes = {0.1: (7_500, 80_000, 0.5), 1.0: (75_000, 800_000, 2.3)}
    cases = [
        {
            "case": f"{x:g}× · log --all",
            "workload": {"scale": x, "commits": c, "objects": o},
            "systems": [system("packscope log --all --format=%H", t, 50 << 20)],
        }
        for x, (c, o, t) in sizes.items()
    ]
    table = growth_table({"scenario": "scale-growth", "cases": cases})
    (row,) = table.rows
    assert row[0] == "packscope log --all --format=%H"
    assert "7,500 commits" in table.headers[1] and "75,000 commits" in table.headers[2]
    assert row[1].endswith("50 MiB") and row[2].endswith("50 MiB")
    (c0, _, t0), (c1, _, t1) = sizes.values()
    per_thousand_ms = (t1 - t0) / (c1 - c0) * 1000 * 1000
    assert row[3] == f"{per_thousand_ms:.3g} ms per 1,000 commits"


def test_scale_growth_measures_a_store_with_a_commit_graph_when_asked(tmp_path):
    import json

    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "packscope.inspector.cli",
            "bench",
            "scale-growth",
            "--tiny",
            "--commit-graph",
            "--json",
            "-q",
            "--work-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=repos.git_env(),
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    (sc,) = json.loads(p.stdout)["scenarios"]
    assert sc["available"], sc["reason"]
    for case in sc["cases"]:
        w = case["workload"]
        assert w["commit_graph"] is True
        repo = Path(w["path"])
        assert (repo / "objects" / "info" / "commit-graph").exists()
        repos.git("commit-graph", "verify", cwd=repo)
        assert w["commits"] == len(lines(repo, "rev-list", "--all"))
        for s in case["systems"]:
            if s["role"] == "packscope":
                assert s["samples"] and s["info"].get("correct") is not False, (case["case"], s)


def test_growth_table_has_the_ui_rows_cpu_time():
    from packscope.bench.report import growth_table

    def case(x: float, commits: int, first: float, end: float) -> dict:
        metrics = {
            "max_rss_bytes": {"median": 90 << 20},
            "first_rows_cpu_seconds": {"median": first},
            "end_cpu_seconds": {"median": end},
        }
        return {
            "case": f"{x:g}× · History vs tig",
            "workload": {"scale": x, "commits": commits, "objects": commits * 10},
            "systems": [{"system": "packscope History (UI)", "group": "ui", "median": 9.0, "metrics": metrics}],
        }

    table = growth_table({"scenario": "scale-growth", "cases": [case(1, 1_000, 1.0, 2.0), case(3, 3_000, 3.0, 6.0)]})
    rows = {r[0]: r for r in table.rows}
    first = rows["packscope History (UI): first rows (CPU time from spawn)"]
    end = rows["packscope History (UI): at the end (CPU time from spawn)"]
    assert first[1].startswith("1 s") and first[2].startswith("3 s")
    assert first[3] == "1 s per 1,000 commits"
    assert end[2].startswith("6 s")


def test_a_peer_s_cpu_time_is_read_as_the_kernel_accounts_it():
    import os
    import subprocess
    import sys

    from packscope.bench.peers import _cpu_from_spawn

    # a child that works, says how much CPU it has used (times(2), the kernel's own
    # account), then waits on its stdin: its CPU time is settled while it waits.
    # Its exit is not compared: interpreter shutdown adds CPU after the reading.
    child = (
        "import os, sys; sum(range(3_000_000)); t = os.times(); print(t.user + t.system, flush=True); sys.stdin.read()"
    )
    p = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        said = float(p.stdout.readline())
        before = _cpu_from_spawn(p.pid)
    finally:
        p.stdin.close()
        p.stdout.close()
    os.wait4(p.pid, 0)
    assert before is not None and said > 0
    # the print and the wait's first read cost a little after the child's own reading
    assert abs(before - said) <= 3 / os.sysconf("SC_CLK_TCK")
