"""The walk row's target follows issue 21: ≤ 1.2× git on git.git-sized
histories, ≤ 1.5× on dulwich-sized ones, chosen by the packed object count,
which is what git counts in the packs."""

from __future__ import annotations

from packscope.bench.scenarios.walk import LARGE_HISTORY_OBJECTS, packed_objects, walk_target
from tests.repos import build_idx_v1, build_packed, git, git_text


def test_the_target_is_chosen_by_the_repository_size():
    small = walk_target(56_611)
    large = walk_target(849_014)
    assert small.max_ratio == 1.5 and "dulwich-sized" in small.label and "56,611" in small.label
    assert large.max_ratio == 1.2 and "git.git-sized" in large.label
    assert walk_target(LARGE_HISTORY_OBJECTS - 1).max_ratio == 1.5
    assert walk_target(LARGE_HISTORY_OBJECTS).max_ratio == 1.2


def test_the_packed_object_count_is_gits(tmp_path):
    for repo in (build_packed(tmp_path / "v2", commits=12), build_idx_v1(tmp_path / "v1")):
        # a second pack, so the count adds up over packs
        blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input=b"one more blob\n").strip()
        git("tag", "one-more", blob, cwd=repo)
        git("repack", "-q", cwd=repo)
        stats = dict(line.split(": ") for line in git_text("count-objects", "-v", cwd=repo).splitlines())
        assert int(stats["packs"]) == 2
        assert packed_objects(repo) == int(stats["in-pack"]) > 0
