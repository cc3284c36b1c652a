"""`packscope lookup`: traced lookups for people (Rich) and scripts (JSON)."""

from __future__ import annotations

import hashlib
import json

from tests.cli import packscope
from tests.repos import git_text, pack_files, show_index


def _json_lines(p):
    return [json.loads(line) for line in p.stdout.decode().splitlines()]


def test_json_reports_the_offset_git_show_index_gives_for_all_three_algorithms(packed_repo):
    idx = pack_files(packed_repo)[0].with_suffix(".idx")
    expected = show_index(idx)
    ids = sorted(expected)[::9]
    docs = _json_lines(packscope("-C", packed_repo, "lookup", "--json", "--algorithm", "all", *ids))
    assert [d["oid"] for d in docs] == ids
    for d in docs:
        assert d["found"] and d["source"] == "pack" and d["offset"] == expected[d["oid"]]
        searched = [e for e in d["events"] if e["event"] == "PackSearched"]
        assert searched[-1]["offset"] == expected[d["oid"]]
        (cmp,) = d["compare"]
        for algorithm in ("binary", "interpolation", "hedged"):
            path = cmp["paths"][algorithm]
            lo, hi = path["bucket"]
            assert path["found"] is not None and path["probes"][-1]["cmp"] == 0
            assert all(lo <= p["lo"] <= p["mi"] < p["hi"] <= hi for p in path["probes"])


def test_absent_ids_and_abbreviations(packed_repo):
    head = git_text("rev-parse", "main", cwd=packed_repo).strip()
    absent = hashlib.sha1(b"nope").hexdigest()
    p = packscope("-C", packed_repo, "lookup", "--json", head[:8], absent, "0" * 40)
    short, missing, null = _json_lines(p)
    assert p.returncode == 1  # something was not found
    assert short["oid"] == head and short["found"]
    assert not missing["found"] and missing["source"] is None
    assert not null["found"] and [e["event"] for e in null["events"]] == ["NullOidShortcut", "LookupFinished"]


def test_stdin_summary_totals_and_policies(many_packs_repo, tmp_path):
    import shutil

    from tests.repos import age_directories

    repo = tmp_path / "copy.git"
    shutil.copytree(many_packs_repo, repo)
    age_directories(repo)  # a scan of a directory changed < 2 s ago is provisional
    many_packs_repo = repo
    ids = git_text("rev-list", "--objects", "--all", cwd=many_packs_repo)
    absent = "".join(hashlib.sha1(b"%d" % i).hexdigest() + "\n" for i in range(30))
    stdin = ids + absent
    totals = {}
    for policy in ("git", "gated"):
        p = packscope(
            "-C", many_packs_repo, "lookup", "--stdin", "--summary", "--json", "--policy", policy, input=stdin
        )
        totals[policy] = json.loads(p.stdout)
    n_ids = len(ids.splitlines())
    for t in totals.values():
        assert t["lookups"] == n_ids + 30 and t["found"] == n_ids and t["missing"] == 30
        assert t["probes"] > 0 and t["pages"] > 0
    assert totals["git"]["rescans"] == 30
    assert totals["gated"]["rescans"] == 0


def test_people_see_the_pack_bucket_and_probes(packed_repo):
    head = git_text("rev-parse", "main", cwd=packed_repo).strip()
    out = packscope("-C", packed_repo, "lookup", "--algorithm", "all", head).stdout.decode()
    assert "found in pack-" in out and "bucket [" in out
    for algorithm in ("binary", "interpolation", "hedged"):
        assert algorithm in out


def test_not_a_repository_is_a_clear_error(tmp_path):
    p = packscope("-C", tmp_path, "lookup", "abcd", check=False)
    assert p.returncode == 128
    assert b"Traceback" not in p.stderr and b"remedy:" in p.stderr
