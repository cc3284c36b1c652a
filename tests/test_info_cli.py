"""`packscope info --json`: structure and values, checked against git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from tests.cli import packscope
from tests.repos import git, git_env, git_text, pack_files, refs_worktree, show_index

TOP_KEYS = {
    "schema",
    "object_format",
    "repository",
    "packs",
    "loose",
    "multi_pack_index",
    "commit_graph",
    "alternates",
    "promisor",
    "refs",
    "worktrees",
    "shallow",
    "replace_refs",
    "grafts",
    "implementation",
    "problems",
}
PACK_KEYS = {
    "name",
    "objects",
    "pack_bytes",
    "index_bytes",
    "index_version",
    "keep",
    "promisor",
    "bitmap",
    "rev",
    "in_midx",
}
PROBLEM_KEYS = {"area", "severity", "kind", "message", "path", "offset", "oid", "remedy"}


def info(repo, *extra) -> dict:
    p = packscope("-C", repo, "info", "--json", *extra)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    return json.loads(p.stdout)


def count_objects(repo) -> dict:
    out = {}
    for line in git_text("count-objects", "-v", cwd=repo).splitlines():
        key, _, value = line.partition(": ")
        if key == "alternate":
            out.setdefault("alternate", []).append(value)
        else:
            out[key] = int(value)
    return out


def namespaces(names: list[str]) -> dict[str, int]:
    def ns(n):
        parts = n.split("/")
        return "/".join(parts[:2]) if len(parts) > 2 else n

    return dict(Counter(ns(n) for n in names))


@pytest.mark.parametrize(
    "fixture",
    [
        "packed_repo",
        "sha256_repo",
        "many_packs_repo",
        "loose_repo",
        "midx_repo",
        "idxv1_repo",
        "rev_repo",
        "repack_midx_repo",
    ],
)
def test_counts_agree_with_git_count_objects(fixture, request):
    check_counts(request.getfixturevalue(fixture))


def test_counts_of_a_work_tree_repository_agree_with_git(refs_repo):
    check_counts(refs_repo)
    check_counts(refs_worktree(refs_repo))


def check_counts(repo):
    doc = info(repo)
    assert set(doc) == TOP_KEYS and doc["schema"] == 2
    assert doc["object_format"] == git_text("rev-parse", "--show-object-format", cwd=repo).strip()
    want = count_objects(repo)
    packs, loose = doc["packs"], doc["loose"]
    assert packs["count"] == want["packs"] == len(packs["list"])
    assert packs["objects"] == want["in-pack"]
    assert (packs["pack_bytes"] + packs["index_bytes"]) // 1024 == want["size-pack"]
    assert loose["objects"] == want["count"]
    assert loose["also_packed"] == want["prune-packable"]
    assert doc["alternates"] == [] and "alternate" not in want
    for row in packs["list"]:
        assert set(row) == PACK_KEYS
        base = os.path.join(doc["repository"]["objects_dir"], "pack", row["name"])
        assert row["pack_bytes"] == os.path.getsize(base + ".pack")
        assert row["index_bytes"] == os.path.getsize(base + ".idx")
        assert row["objects"] == len(show_index(base + ".idx", doc["object_format"]))
        for flag in ("keep", "promisor", "bitmap", "rev"):
            assert row[flag] == os.path.exists(f"{base}.{flag}")
    assert packs["rev"] == sum(r["rev"] for r in packs["list"])
    for p in doc["problems"]:
        assert set(p) == PROBLEM_KEYS


def test_loose_objects_are_summarised_per_subdirectory(loose_repo):
    doc = info(loose_repo)["loose"]
    per = Counter(
        p.name for p in (loose_repo / "objects").iterdir() if len(p.name) == 2 and p.is_dir() for _ in p.iterdir()
    )
    counts = [per.get(f"{i:02x}", 0) for i in range(256)]
    assert doc["objects"] == sum(counts)
    assert doc["subdirectories_used"] == sum(1 for c in counts if c)
    assert doc["per_subdirectory"]["min"] == min(counts) and doc["per_subdirectory"]["max"] == max(counts)
    assert counts[int(doc["busiest"], 16)] == max(counts)


def test_index_versions_and_companion_files(idxv1_repo, rev_repo, repack_midx_repo):
    assert info(idxv1_repo)["packs"]["index_versions"] == {"1": 1}
    rev = info(rev_repo)["packs"]
    assert rev["rev"] == 1 and rev["index_versions"] == {"2": 1}
    midx = info(repack_midx_repo)
    assert midx["multi_pack_index"]["packs"] == len(pack_files(repack_midx_repo))
    assert all(r["in_midx"] for r in midx["packs"]["list"])


def test_keep_files_and_orphans_are_reported(packed_repo, tmp_path):
    import shutil

    repo = tmp_path / "copy.git"
    shutil.copytree(packed_repo, repo)
    (pack,) = pack_files(repo)
    pack.with_suffix(".keep").write_text("kept\n")
    (pack.parent / ("pack-" + "ab" * 20 + ".idx")).write_bytes(b"stray")
    doc = info(repo)
    assert doc["packs"]["keep"] == 1 and doc["packs"]["list"][0]["keep"]
    assert doc["packs"]["orphans"] == ["pack-" + "ab" * 20 + ".idx"]
    assert any(p["kind"] == "pack-orphan" and p["severity"] == "warning" for p in doc["problems"])


def test_multi_pack_index(midx_repo, many_packs_repo):
    m = info(midx_repo)["multi_pack_index"]
    idxs = [p.with_suffix(".idx") for p in pack_files(midx_repo)]
    unique = set()
    for idx in idxs:
        unique.update(show_index(idx))
    assert m["packs"] == len(idxs) and m["objects"] == len(unique)
    assert m["layers"] == 1 and not m["chain"] and m["packs_missing"] == [] and m["used_by_store"]
    assert info(many_packs_repo)["multi_pack_index"] is None


def test_multi_pack_index_chain(midx_chain_repo):
    m = info(midx_chain_repo)["multi_pack_index"]
    assert m["chain"] and m["layers"] == 2 and m["packs"] == len(pack_files(midx_chain_repo))
    assert m["used_by_store"]  # the store reads chains too


def test_commit_graph_single_chain_and_generations(graph_repo, split_graph_repo, mixed_generation_repo, packed_repo):
    g = info(graph_repo)["commit_graph"]
    commits = len(git_text("rev-list", "--all", cwd=graph_repo).split())
    assert g["present"] and g["kind"] == "single" and g["layers"] == 1 and g["commits"] == commits
    assert g["bloom_filters"] and g["generation_data"] and g["bloom_settings"]["num_hashes"] > 0
    s = info(split_graph_repo)["commit_graph"]
    chain = (split_graph_repo / "objects" / "info" / "commit-graphs" / "commit-graph-chain").read_text().split()
    assert s["kind"] == "chain" and s["layers"] == len(chain) == 3
    assert s["commits"] == len(git_text("rev-list", "--all", cwd=split_graph_repo).split())
    assert s["bloom_layers"] == 2
    assert not info(mixed_generation_repo)["commit_graph"]["generation_data"]
    assert info(packed_repo)["commit_graph"] == {
        "present": False,
        "kind": None,
        "path": None,
        "layers": 0,
        "commits": 0,
        "bloom_filters": False,
        "bloom_layers": 0,
        "bloom_settings": None,
        "generation_data": False,
    }


def test_refs_head_and_worktrees_agree_with_git(refs_repo):
    doc = info(refs_repo)
    refs = doc["refs"]
    names = git_text("for-each-ref", "--format=%(refname)", cwd=refs_repo).split()
    assert refs["total"] == len(names)
    assert refs["namespaces"] == dict(sorted(namespaces(names).items()))
    symbolic = [
        n
        for n in git_text("for-each-ref", "--format=%(refname) %(symref)", cwd=refs_repo).splitlines()
        if n.split(" ")[1:] != [""]
    ]
    assert refs["symbolic"] == len(symbolic)
    packed_names = {
        line.split(" ")[1]
        for line in (refs_repo / ".git" / "packed-refs").read_text().splitlines()
        if line[:1] not in ("#", "^")
    }
    assert refs["loose"] + refs["packed"] == refs["total"]
    assert refs["packed"] == len(packed_names & set(names) - {n for n in names if (refs_repo / ".git" / n).exists()})
    assert refs["packed_refs"]["present"] and "peeled" in refs["packed_refs"]["traits"]
    head = refs["head"]
    assert head["symref"] == git_text("symbolic-ref", "HEAD", cwd=refs_repo).strip()
    assert head["oid"] == git_text("rev-parse", "HEAD", cwd=refs_repo).strip() and not head["detached"]
    want = []
    for block in git_text("worktree", "list", "--porcelain", cwd=refs_repo).strip().split("\n\n"):
        fields = dict(line.partition(" ")[::2] for line in block.splitlines())
        want.append((fields["worktree"], fields.get("HEAD"), fields.get("branch")))
    got = [(w["path"], w["head"]["oid"], w["head"]["symref"]) for w in doc["worktrees"]]
    assert got == want
    assert doc["worktrees"][0]["main"] and doc["worktrees"][0]["current"]
    assert doc["worktrees"][1]["name"] == refs_worktree(refs_repo).name and not doc["worktrees"][1]["current"]
    assert doc["problems"] == []


def test_from_a_linked_worktree(refs_repo):
    wt = refs_worktree(refs_repo)
    doc = info(wt)
    names = git_text("for-each-ref", "--format=%(refname)", cwd=wt).split()
    assert doc["refs"]["total"] == len(names)
    assert doc["refs"]["namespaces"] == dict(sorted(namespaces(names).items()))
    assert doc["refs"]["head"]["symref"] == "refs/heads/feature"
    assert [w["current"] for w in doc["worktrees"]] == [False, True]
    assert doc["worktrees"][0]["path"] == str(refs_repo)
    assert doc["repository"]["common_dir"] == str(refs_repo / ".git")


def test_detached_and_unborn_heads(tmp_path):
    repo = tmp_path / "unborn"
    git("init", "-q", "-b", "trunk", repo)
    head = info(repo)["refs"]["head"]
    assert head == {"symref": "refs/heads/trunk", "oid": None, "detached": False, "unborn": True}
    (repo / "f").write_text("x\n")
    git("add", "f", cwd=repo)
    git("commit", "-q", "-m", "x", cwd=repo)
    git("checkout", "-q", "--detach", cwd=repo)
    head = info(repo)["refs"]["head"]
    assert head["detached"] and head["symref"] is None
    assert head["oid"] == git_text("rev-parse", "HEAD", cwd=repo).strip()


def test_alternates_from_the_file_and_the_environment(packed_repo, many_packs_repo, tmp_path):
    repo = tmp_path / "borrower.git"
    git("init", "-q", "--bare", repo)
    (repo / "objects" / "info" / "alternates").write_text(str(packed_repo / "objects") + "\n")
    env = git_env({"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(many_packs_repo / "objects")})
    p = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(repo), "info", "--json"],
        capture_output=True,
        env=env,
        check=True,
    )
    doc = json.loads(p.stdout)
    want = subprocess.run(["git", "count-objects", "-v"], cwd=repo, capture_output=True, env=env, check=True)
    alternates = [line.split(": ", 1)[1] for line in want.stdout.decode().splitlines() if line.startswith("alternate:")]
    assert [os.path.realpath(a["path"]) for a in doc["alternates"]] == [os.path.realpath(a) for a in alternates]
    by_path = {os.path.realpath(a["path"]): a for a in doc["alternates"]}
    mp = by_path[os.path.realpath(many_packs_repo / "objects")]
    assert mp["source"] == "environment" and mp["packs"] == len(pack_files(many_packs_repo))
    pk = by_path[os.path.realpath(packed_repo / "objects")]
    assert pk["source"] == "objects/info/alternates" and pk["packs"] == 1
    assert doc["packs"]["count"] == 0  # count-objects counts local packs only
    # The environment's alternate is read by the store (Repository.env_alternates).
    head = git_text("rev-parse", "main", cwd=many_packs_repo).strip()
    p = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(repo), "cat-file", "-t", head],
        capture_output=True,
        env=env,
        check=False,
    )
    assert p.stdout == b"commit\n"


def test_broken_alternate_is_a_problem_not_a_failure(tmp_path):
    repo = tmp_path / "broken-alt.git"
    git("init", "-q", "--bare", repo)
    (repo / "objects" / "info" / "alternates").write_text(str(tmp_path / "nowhere") + "\n")
    doc = info(repo)
    assert doc["alternates"] == []
    assert [p["kind"] for p in doc["problems"]] == ["alternates-missing"]


def test_people_get_a_readable_summary(refs_repo, midx_repo, split_graph_repo):
    out = packscope("-C", refs_repo, "info").stdout.decode()
    for word in ("object format", "packs", "loose objects", "commit-graph", "refs", "refs/heads", "worktrees"):
        assert word in out
    assert "multi-pack-index" in packscope("-C", midx_repo, "info").stdout.decode()
    assert "a chain of 3 layers" in packscope("-C", split_graph_repo, "info").stdout.decode()


def test_not_a_repository(tmp_path):
    p = packscope("-C", tmp_path, "info", check=False)
    assert p.returncode == 128 and b"Traceback" not in p.stderr and b"remedy:" in p.stderr


def test_damaged_index_commit_graph_and_midx_are_problems(midx_repo, tmp_path):
    import shutil

    repo = tmp_path / "damaged.git"
    shutil.copytree(midx_repo, repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    idx = pack_files(repo)[0].with_suffix(".idx")
    os.chmod(idx, 0o644)
    idx.write_bytes(idx.read_bytes()[:100])
    graph = repo / "objects" / "info" / "commit-graph"
    os.chmod(graph, 0o644)
    graph.write_bytes(b"XXXX" + graph.read_bytes()[4:])
    midx = repo / "objects" / "pack" / "multi-pack-index"
    os.chmod(midx, 0o644)
    midx.write_bytes(midx.read_bytes()[:40])
    doc = info(repo)
    areas = {p["area"] for p in doc["problems"] if p["severity"] == "error"}
    assert {"packs", "commit-graph", "multi-pack-index"} <= areas
    row = next(r for r in doc["packs"]["list"] if r["name"] == idx.stem)
    assert row["objects"] is None and row["index_version"] is None
    assert doc["commit_graph"]["present"] and doc["commit_graph"]["commits"] == 0
    assert all(p["remedy"] for p in doc["problems"])
    people = packscope("-C", repo, "info")
    assert people.returncode == 0 and b"problems" in people.stdout
