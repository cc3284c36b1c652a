"""`advise`'s sizes: git-sizer's metrics, on-disk sizes, the largest blobs
and paths, and what the store holds beside reachable objects — each held
against counts computed here with git (`rev-list --objects --all`,
`cat-file --batch-check`, `ls-tree`, `count-objects -v`)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from packscope.core.advise.sizes import METRICS, REFERENCES, SizeWalk
from packscope.core.repo.session import open_session
from tests.repos import fast_import_stream, git, git_text, init_bare

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def walk(repo: Path, **kw):
    with open_session(str(repo)) as s:
        return SizeWalk(s, **kw).run()


# --- the oracle: everything from git's own output -------------------------------------------------


def batch_check(repo: Path, ids: list[str]) -> dict[str, tuple[str, int, int]]:
    fmt = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk)"
    out = git_text("cat-file", f"--batch-check={fmt}", cwd=repo, input="\n".join(ids) + "\n")
    rows = {}
    for line in out.splitlines():
        oid, kind, size, disk = line.split()
        rows[oid] = (kind, int(size), int(disk))
    return rows


def reachable(repo: Path, missing: str | None = None) -> tuple[dict[str, tuple[str, int, int]], list[str]]:
    args = ["rev-list", "--objects", "--all"] + ([f"--missing={missing}"] if missing else [])
    lines = git_text(*args, cwd=repo).splitlines()
    ids = [ln.split(" ", 1)[0] for ln in lines if not ln.startswith("?")]
    promised = [ln[1:] for ln in lines if ln.startswith("?")]
    return batch_check(repo, ids), promised


def ls_tree(repo: Path, rev: str, *flags: str) -> list[tuple[str, str, str, str, str]]:
    """(mode, type, id, size, path) of ``git ls-tree -z -l FLAGS REV``."""
    out = git("ls-tree", "-z", "-l", *flags, rev, cwd=repo).decode("utf-8", "surrogateescape")
    rows = []
    for rec in out.split("\0"):
        if not rec:
            continue
        meta, path = rec.split("\t", 1)
        mode, kind, oid, size = meta.split()
        rows.append((mode, kind, oid, size, path))
    return rows


def checkout(repo: Path, commit: str) -> dict[str, int]:
    rows = ls_tree(repo, commit, "-r", "-t")
    blobs = [r for r in rows if r[0] in ("100644", "100755")]
    return {
        "maxCheckoutTreeCount": 1 + sum(1 for r in rows if r[1] == "tree"),
        "maxCheckoutPathDepth": max((r[4].count("/") + 1 for r in rows), default=0),
        "maxCheckoutPathLength": max((len(r[4].encode("utf-8", "surrogateescape")) for r in rows), default=0),
        "maxCheckoutBlobCount": len(blobs),
        "maxCheckoutBlobSize": sum(int(r[3]) for r in blobs),
        "maxCheckoutLinkCount": sum(1 for r in rows if r[0] == "120000"),
        "maxCheckoutSubmoduleCount": sum(1 for r in rows if r[0] == "160000"),
    }


def history_depths(repo: Path) -> dict[str, int]:
    parents = {}
    for line in git_text("rev-list", "--all", "--parents", cwd=repo).splitlines():
        ids = line.split()
        parents[ids[0]] = ids[1:]
    depth: dict[str, int] = {}
    for c in reversed(git_text("rev-list", "--all", "--topo-order", cwd=repo).split()):
        depth[c] = 1 + max((depth[p] for p in parents[c] if p in depth), default=0)
    return depth


def tag_depths(repo: Path, objects: dict[str, tuple[str, int, int]]) -> dict[str, int]:
    out = {}
    for oid, (kind, _, _) in objects.items():
        if kind != "tag":
            continue
        d, cur = 0, oid
        while git_text("cat-file", "-t", cur, cwd=repo).strip() == "tag":
            d += 1
            cur = git_text("cat-file", "tag", cur, cwd=repo).split()[1]
        out[oid] = d
    return out


def git_metrics(repo: Path) -> dict[str, int]:
    objects, _ = reachable(repo)
    by = {k: [v for v in objects.values() if v[0] == k] for k in ("commit", "tree", "blob", "tag")}
    trees = [oid for oid, v in objects.items() if v[0] == "tree"]
    entries = {t: len(ls_tree(repo, t)) for t in trees}
    commits = [oid for oid, v in objects.items() if v[0] == "commit"]
    parents = Counter()
    for line in git_text("rev-list", "--all", "--parents", cwd=repo).splitlines():
        ids = line.split()
        parents[ids[0]] = len(ids) - 1
    checkouts = [checkout(repo, c) for c in commits]
    tags = tag_depths(repo, objects)
    m = {
        "uniqueCommitCount": len(by["commit"]),
        "uniqueCommitSize": sum(v[1] for v in by["commit"]),
        "uniqueTreeCount": len(by["tree"]),
        "uniqueTreeSize": sum(v[1] for v in by["tree"]),
        "uniqueTreeEntries": sum(entries.values()),
        "uniqueBlobCount": len(by["blob"]),
        "uniqueBlobSize": sum(v[1] for v in by["blob"]),
        "uniqueTagCount": len(by["tag"]),
        "referenceCount": len(git_text("for-each-ref", cwd=repo).splitlines()),
        "maxCommitSize": max((v[1] for v in by["commit"]), default=0),
        "maxCommitParentCount": max(parents.values(), default=0),
        "maxTreeEntries": max(entries.values(), default=0),
        "maxBlobSize": max((v[1] for v in by["blob"]), default=0),
        "maxHistoryDepth": max(history_depths(repo).values(), default=0),
        "maxTagDepth": max(tags.values(), default=0),
    }
    for name in checkouts[0] if checkouts else ():
        m[name] = max(c[name] for c in checkouts)
    return m


# --- repositories -------------------------------------------------------------------------------------


def rich_repo(root: Path, object_format: str = "sha1") -> Path:
    """An imported history (merges, tags, a symlink, an executable, a big
    file) plus: an octopus merge, a tag of a tag, tags of a tree and of a
    blob, a submodule entry, a deep path, loose objects, an unreachable
    blob, a cruft pack and garbage files."""
    repo = init_bare(root / f"rich-{object_format}.git", object_format)
    git("fast-import", "--quiet", cwd=repo, input=fast_import_stream(40, seed=21))
    work = root / f"rich-work-{object_format}"
    git("clone", "-q", repo, work)
    sub = git_text("rev-parse", "HEAD~3", cwd=work).strip()
    git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/sub", cwd=work)
    deep = work / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "h" / "i" / "j" / "k"
    deep.mkdir(parents=True)
    (deep / ("long-name-" * 6 + ".txt")).write_text("deep\n")
    git("add", "a", cwd=work)
    git("commit", "-q", "-m", "deep and a submodule", cwd=work)
    for b in ("o1", "o2"):
        git("checkout", "-q", "-b", b, "main~1", cwd=work)
        (work / f"{b}.txt").write_text(b)
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", b, cwd=work)
    git("checkout", "-q", "main", cwd=work)
    git("merge", "-q", "--no-edit", "o1", "o2", cwd=work)
    git("push", "-q", "origin", "main", "o1", "o2", cwd=work)
    git("tag", "-a", "-m", "inner", "inner", "main", cwd=repo)
    git("tag", "-a", "-m", "outer", "outer", "inner", cwd=repo)
    tree = git_text("rev-parse", "main^{tree}", cwd=repo).strip()
    git("tag", "treetag", tree, cwd=repo)
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input="tagged blob\n").strip()
    git("tag", "-a", "-m", "blob", "blobtag", blob, cwd=repo)
    git("repack", "-a", "-d", "-q", cwd=repo)
    # unreachable: a loose blob, and a cruft pack of another
    git("hash-object", "-w", "--stdin", cwd=repo, input="unreachable loose\n")
    cruft = git_text("hash-object", "-w", "--stdin", cwd=repo, input="unreachable packed\n").strip()
    git("-c", "gc.pruneExpire=never", "repack", "--cruft", "-d", "-q", cwd=repo)
    assert list((repo / "objects" / "pack").glob("*.mtimes")), cruft
    git("hash-object", "-w", "--stdin", cwd=repo, input="unreachable loose again\n")
    # reachable loose objects
    git("commit", "-q", "--allow-empty", "-m", "loose tip", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    pack = repo / "objects" / "pack"
    (pack / "tmp_pack_Ab12Cd").write_bytes(b"x" * 5000)
    (pack / "pack-0000000000000000000000000000000000000000.keep").write_text("orphan keep\n")
    (pack / "stray.txt").write_text("stray\n")
    (pack / "pack-1111111111111111111111111111111111111111.pack").write_bytes(b"PACK half-written")
    (repo / "objects" / "ab").mkdir(exist_ok=True)
    (repo / "objects" / "ab" / "tmp_obj_XYZ").write_bytes(b"y" * 300)
    return repo


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    return rich_repo(tmp_path_factory.mktemp("advise-sizes"))


@pytest.fixture(scope="module")
def rich256(tmp_path_factory):
    return rich_repo(tmp_path_factory.mktemp("advise-sizes-256"), "sha256")


# --- the tests -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["rich", "rich256"])
def test_every_git_sizer_metric_equals_the_count_made_with_git(which, request):
    repo = request.getfixturevalue(which)
    got = walk(repo)
    want = git_metrics(repo)
    assert set(METRICS) <= set(got.metrics)
    assert {m: got.metrics[m].value for m in METRICS} == want
    assert got.object_format == ("sha256" if which == "rich256" else "sha1")
    # the interesting ones are really exercised
    assert want["maxCommitParentCount"] == 3 and want["maxTagDepth"] == 2
    assert want["maxCheckoutSubmoduleCount"] == 1 and want["maxCheckoutLinkCount"] == 1


def test_levels_are_values_over_git_sizers_references(rich):
    got = walk(rich)
    for name in METRICS:
        m = got.metrics[name]
        assert m.reference == REFERENCES[name]
        assert m.level == m.value / REFERENCES[name]
    assert REFERENCES["uniqueBlobCount"] == 1_500_000 and REFERENCES["maxTagDepth"] == 1.001


def test_each_maximum_names_an_object_that_holds_it(rich):
    got = walk(rich).metrics
    blob = got["maxBlobSize"].object
    assert int(git_text("cat-file", "-s", blob, cwd=rich)) == got["maxBlobSize"].value
    tree = got["maxTreeEntries"].object
    assert len(ls_tree(rich, tree)) == got["maxTreeEntries"].value
    assert int(git_text("cat-file", "-s", got["maxCommitSize"].object, cwd=rich)) == got["maxCommitSize"].value
    parents = git_text("rev-list", "--parents", "-n1", got["maxCommitParentCount"].object, cwd=rich).split()
    assert len(parents) - 1 == got["maxCommitParentCount"].value
    depth = history_depths(rich)
    assert depth[got["maxHistoryDepth"].object] == got["maxHistoryDepth"].value
    for name in ("maxCheckoutPathDepth", "maxCheckoutPathLength", "maxCheckoutBlobCount", "maxCheckoutSubmoduleCount"):
        commit, _, rest = got[name].object.partition("^")
        assert rest == "{tree}"
        assert checkout(rich, commit)[name] == got[name].value
    assert git_text("cat-file", "-t", got["maxTagDepth"].object, cwd=rich).strip() == "tag"


def test_reference_groups_count_refs_by_prefix(rich):
    got = walk(rich).metrics
    refs = git_text("for-each-ref", "--format=%(refname)", cwd=rich).split()
    assert got["referenceCount.branches"].value == sum(r.startswith("refs/heads/") for r in refs)
    assert got["referenceCount.tags"].value == sum(r.startswith("refs/tags/") for r in refs)
    assert got["referenceCount.other"].value == 0
    assert got["referenceCount"].value == len(refs)


def test_disk_sizes_equal_objectsize_disk(rich):
    got = walk(rich)
    objects, _ = reachable(rich)
    for kind, key in (
        ("commit", "uniqueCommitDisk"),
        ("tree", "uniqueTreeDisk"),
        ("blob", "uniqueBlobDisk"),
        ("tag", "uniqueTagDisk"),
    ):
        assert got.disk[key] == sum(v[2] for v in objects.values() if v[0] == kind), kind
    for big in got.largest_blobs + got.largest_blobs_on_disk:
        assert objects[big.oid][1:] == (big.size, big.disk_size)


def test_largest_blobs_are_the_top_by_size_and_by_disk(rich):
    got = walk(rich, top=5)
    objects, _ = reachable(rich)
    blobs = [(oid, v[1], v[2]) for oid, v in objects.items() if v[0] == "blob"]
    assert [b.size for b in got.largest_blobs] == sorted((b[1] for b in blobs), reverse=True)[:5]
    assert [b.disk_size for b in got.largest_blobs_on_disk] == sorted((b[2] for b in blobs), reverse=True)[:5]
    top = got.largest_blobs[0]
    commit, _, path = top.path.partition(":")
    assert git_text("rev-parse", f"{commit}:{path}", cwd=rich).strip() == top.oid


def test_largest_paths_sum_the_distinct_blobs_first_met_there(rich):
    got = walk(rich, top=1000)
    objects, _ = reachable(rich)
    blobs = {oid for oid, v in objects.items() if v[0] == "blob"}
    assert sum(p.blobs for p in got.largest_paths) == len(blobs) - 1  # the tagged blob has no path
    assert sum(p.size for p in got.largest_paths) + objects[git_text("rev-parse", "blobtag^{}", cwd=rich).strip()][
        1
    ] == sum(objects[b][1] for b in blobs)
    # the most-edited path: each blob counted there is a version of it, in git's log
    first = got.largest_paths[0]
    raw = git_text("log", "--all", "--format=", "--raw", "--no-abbrev", "--", first.path, cwd=rich)
    versions = {f for ln in raw.splitlines() if ln.startswith(":") for f in ln.split()[2:4]} - {"0" * 40}
    assert first.blobs == len(versions) and first.blobs > 1
    assert first.size == sum(objects[v][1] for v in versions)


def test_stored_counts_unreachable_cruft_temporary_and_garbage_as_git_does(rich):
    got = walk(rich).stored
    count = dict(ln.split(": ") for ln in git_text("count-objects", "-v", cwd=rich).splitlines())
    assert got.garbage_files == int(count["garbage"])
    assert got.garbage_bytes // 1024 == int(count["size-garbage"])
    assert got.loose_objects == int(count["count"])
    everything = {
        ln.split()[0] for ln in git_text("cat-file", "--batch-all-objects", "--batch-check", cwd=rich).splitlines()
    }
    objects, _ = reachable(rich)
    assert got.reachable_objects == len(objects)
    unreachable = everything - set(objects)
    cruft_pack = next((rich / "objects" / "pack").glob("*.mtimes")).with_suffix(".idx")
    in_cruft = set(git_text("show-index", input=cruft_pack.read_bytes()).split()[1::3])
    outside = unreachable - in_cruft
    assert len(in_cruft) == 2  # both unreachable blobs written before repack --cruft
    assert got.unreachable_objects == len(outside) == 1  # the loose one written after it
    assert got.unreachable_disk == sum(v[2] for v in batch_check(rich, sorted(outside)).values())
    assert got.cruft_packs == 1
    base = cruft_pack.with_suffix("")
    assert got.cruft_bytes == sum(
        p.stat().st_size for p in base.parent.glob(base.name + ".*") if p.suffix in (".pack", ".idx", ".mtimes", ".rev")
    )
    assert (got.temporary_files, got.temporary_bytes) == (2, 5300)


def test_shallow_clone_counts_what_git_lists(rich, tmp_path):
    clone = tmp_path / "shallow"
    git("clone", "-q", "--bare", "--depth=3", f"file://{rich}", clone)
    got = walk(clone)
    want = git_metrics(clone)
    assert {m: got.metrics[m].value for m in METRICS} == want
    assert got.shallow is True and want["maxHistoryDepth"] == 3
    assert got.missing == {} and got.promised == {}  # the boundary's parents are cut, not missing


def test_partial_clone_counts_promised_objects_apart(rich, tmp_path):
    git("config", "uploadpack.allowFilter", "true", cwd=rich)
    clone = tmp_path / "partial"
    git("clone", "-q", "--bare", "--filter=blob:limit=1000", f"file://{rich}", clone)
    got = walk(clone)
    objects, promised = reachable(clone, missing="print")
    kinds = Counter(v[0] for v in objects.values())
    assert got.partial is True and promised
    assert got.promised == {"blob": len(promised)}
    assert got.metrics["uniqueBlobCount"].value == kinds["blob"]
    assert got.metrics["uniqueTreeCount"].value == kinds["tree"]
    assert got.missing == {}


def test_cancel_stops_the_walk(rich):
    from packscope.core.errors import CancelledError

    with pytest.raises(CancelledError):
        walk(rich, cancel=lambda: True)


def test_copy_is_read_only(rich, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(rich, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    walk(copy)
    assert {p: p.stat().st_mtime_ns for p in copy.rglob("*")} == before


@pytest.mark.parametrize("which", ["rich", "rich256"])
def test_the_compiled_tree_sums_answer_what_the_pure_loop_does(which, request, door):
    from packscope.core import native as door_module

    native = door_module.compiled_module()
    if native is None:
        pytest.skip("the compiled module is not built")
    repo = request.getfixturevalue(which)
    door.use("compiled")
    compiled = walk(repo, top=50)
    door.use("pure")
    pure = walk(repo, top=50)
    assert compiled == pure
    # and the tree sums themselves, tree by tree, against the pure entry list
    objects, _ = reachable(repo)
    blob_sizes = {bytes.fromhex(o): v[1] for o, v in objects.items() if v[0] == "blob"}
    rawsz = 32 if which == "rich256" else 20
    for oid, v in objects.items():
        if v[0] != "tree":
            continue
        data = git("cat-file", "tree", oid, cwd=repo)
        n, length, blobs, size, links, gitlinks, subtrees, unseen = native.tree_sums(data, rawsz, blob_sizes)
        rows = ls_tree(repo, oid)
        assert n == len(rows) and unseen == []
        assert [(name.decode(), i.hex()) for _, name, i in subtrees] == [(r[4], r[2]) for r in rows if r[1] == "tree"]
        leaves = [r for r in rows if r[1] != "tree"]
        assert length == max((len(r[4].encode()) for r in leaves), default=0)
        assert blobs == sum(r[0] not in ("120000", "160000") for r in leaves)
        assert size == sum(int(r[3]) for r in leaves if r[0] not in ("120000", "160000"))
        assert (links, gitlinks) == (sum(r[0] == "120000" for r in leaves), sum(r[0] == "160000" for r in leaves))


def test_tree_sums_leaves_a_malformed_tree_to_the_pure_loop():
    from packscope.core import native as door_module

    native = door_module.compiled_module()

    if native is None:
        pytest.skip("the compiled module is not built")
    good = b"100644 a\0" + b"\1" * 20
    assert native.tree_sums(good, 20, {b"\1" * 20: 5})[:6] == (1, 1, 1, 5, 0, 0)
    for bad in (good[:-1], b"100644a\0" + b"\1" * 20, b"10x644 a\0" + b"\1" * 20, b"100644 \0" + b"\1" * 20):
        assert native.tree_sums(bad, 20, {}) is None
    with pytest.raises(TypeError):
        native.tree_sums(good, 20, [])
