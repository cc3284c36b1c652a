"""Partial clones: promised objects (packscope.core.store.promisor), and what cat-file,
lookup and info say of them.  git runs with GIT_NO_LAZY_FETCH=1 (tests.repos
sets it), so nothing is ever fetched."""

from __future__ import annotations

import json
import subprocess

import pytest

from packscope.core.errors import CancelledError, CorruptObjectError, MissingObjectError, PromisedObjectError
from packscope.core.objects import tree_items
from packscope.core.oid import SHA1
from packscope.core.repo.session import is_partial_clone, open_session
from packscope.core.store.promisor import PromisorSet, referenced_ids
from tests.cli import packscope
from tests.repos import copy_repo, git, git_env, git_text, hash_literally, ids_of_type, pack_files


def _source(root, object_format="sha1"):
    src = root / f"promisor-src-{object_format}"
    git("init", "-q", "-b", "main", f"--object-format={object_format}", src)
    for i in range(4):
        (src / f"f{i}.txt").write_text(f"file {i}\n" * (i + 1))
        (src / "dir").mkdir(exist_ok=True)
        (src / "dir" / "g.txt").write_text(f"version {i}\n")
        git("add", "-A", cwd=src)
        git("commit", "-q", "-m", f"commit {i}", cwd=src)
    git("tag", "-a", "-m", "a tag", "v1", "HEAD~1", cwd=src)
    git("tag", "-a", "-m", "a blob tag", "blob-tag", "HEAD~2:f0.txt", cwd=src)
    git("config", "uploadpack.allowFilter", "true", cwd=src)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=src)
    return src


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def partial(request, tmp_path_factory):
    """(source, clone): a blob:none clone (no checkout, so nothing was fetched
    lazily), plus one blob fetched explicitly into a second promisor pack."""
    root = tmp_path_factory.mktemp("promisor")
    src = _source(root, request.param)
    clone = root / "clone"
    git("clone", "-q", "--filter=blob:none", "--no-local", "--no-checkout", f"file://{src}", clone)
    fetched = git_text("rev-parse", "HEAD:f3.txt", cwd=src).strip()
    git("fetch", "-q", "origin", fetched, cwd=clone)
    return src, clone


def without_partial_clone_settings(clone, dst, promisor: str | None = None):
    """A copy of ``clone`` without extensions.partialclone and with
    remote.origin.promisor unset (or set to ``promisor``)."""
    copy = copy_repo(clone, dst)
    if promisor is None:
        git("config", "--unset", "remote.origin.promisor", cwd=copy)
    else:
        git("config", "remote.origin.promisor", promisor, cwd=copy)
    git("config", "--unset", "extensions.partialclone", cwd=copy, check=False)
    return copy


def all_blobs(src) -> set[str]:
    return set(ids_of_type(src, "blob"))


def missing_in_clone(clone) -> set[str]:
    """What git itself lists as missing (every one of them promised)."""
    out = git_text("rev-list", "--objects", "--all", "--missing=print", cwd=clone)
    return {line[1:] for line in out.splitlines() if line.startswith("?")}


def test_the_clone_is_a_partial_clone(partial):
    _src, clone = partial
    with open_session(str(clone)) as session:
        assert is_partial_clone(session.repo) and session.store.partial_clone
        promisor_packs = [h for h in session.store.packs if h.files.promisor]
        assert len(promisor_packs) == len(pack_files(clone / ".git")) == 2


def test_every_object_git_finds_missing_is_promised_and_nothing_else_is(partial):
    src, clone = partial
    missing = missing_in_clone(clone)
    assert missing, "a blob:none clone leaves blobs out"
    blobs = all_blobs(src)
    assert missing <= blobs
    with open_session(str(clone)) as session:
        store = session.store
        promised = PromisorSet(store)
        assert not promised.built
        for hexid in missing:
            assert promised.is_promised(bytes.fromhex(hexid)), hexid
        assert promised.built and len(promised) >= len(missing)
        # Objects present in promisor packs are promised too (git's rule) ...
        for hexid in git_text("rev-list", "--objects", "--all", "--missing=allow-promisor", cwd=clone).split()[::3]:
            if len(hexid) == len(next(iter(missing))):
                assert promised.is_promised(bytes.fromhex(hexid))
        # ... an id nothing references is not.
        assert not promised.is_promised(bytes.fromhex("ab" * store.fmt.rawsz))
        assert promised.stats.packs == 2 and promised.stats.skipped == 0
        assert promised.stats.parsed > 0 and promised.stats.objects >= promised.stats.parsed


def test_the_store_raises_promised_not_missing(partial):
    _src, clone = partial
    blob = bytes.fromhex(min(missing_in_clone(clone)))
    with open_session(str(clone)) as session:
        for read in (session.store.read, session.store.read_header, session.store.object_info):
            with pytest.raises(PromisedObjectError) as e:
                read(blob)
            assert e.value.kind == "promised" and e.value.oid == blob.hex()
        with pytest.raises(MissingObjectError):
            session.store.read(bytes.fromhex("cd" * session.fmt.rawsz))
        with pytest.raises(PromisedObjectError) as e:
            session.resolve("HEAD~1:dir/g.txt")
        assert "HEAD~1:dir/g.txt" in e.value.message and "promisor remote" in e.value.message
        assert session.store.is_promised(blob)


def test_without_a_promisor_remote_nothing_is_promised(partial, tmp_path):
    _src, clone = partial
    copy = without_partial_clone_settings(clone, tmp_path / "no-remote")
    blob = bytes.fromhex(min(missing_in_clone(clone)))
    with open_session(str(copy)) as session:
        assert not session.store.partial_clone and session.store.promisor is None
        assert not session.store.is_promised(blob)
        with pytest.raises(MissingObjectError):
            session.store.read(blob)
    doc = json.loads(packscope("-C", copy, "info", "--json").stdout)
    assert not doc["promisor"]["partial_clone"] and len(doc["promisor"]["packs"]) == 2
    assert [p["kind"] for p in doc["problems"]] == ["promisor-without-remote"]


def test_a_normal_repository_never_builds_the_set(packed_repo):
    with open_session(str(packed_repo)) as session:
        with pytest.raises(MissingObjectError):
            session.store.read(b"\x12" * 20)
        assert session.store._promisor is None


def test_progress_is_reported_and_cancel_keeps_nothing(partial):
    _src, clone = partial
    with open_session(str(clone)) as session:
        calls = []
        promised = PromisorSet(session.store, progress=lambda done, total, phase: calls.append((done, total, phase)))
        promised.build()
        assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] > 0 and {c[2] for c in calls} == {"promised objects"}
        stopped = PromisorSet(session.store)
        with pytest.raises(CancelledError):
            stopped.build(cancel=lambda: True)
        assert not stopped.built and len(stopped) == 0
        assert stopped.is_promised(bytes.fromhex(min(missing_in_clone(clone))))  # builds on demand later


def test_referenced_ids_of_each_type(partial):
    src, clone = partial
    with open_session(str(clone)) as session:
        fmt = session.fmt

        def refs_of(rev):
            oid = session.resolve(rev)
            return [r.hex() for r in referenced_ids(*session.store.read(oid), fmt)]

        assert refs_of("HEAD") == [git_text("rev-parse", r, cwd=src).strip() for r in ("HEAD^{tree}", "HEAD~1")]
        assert refs_of("v1") == [git_text("rev-parse", "v1^{}", cwd=src).strip()]
        tree = git_text("ls-tree", "HEAD", cwd=src).splitlines()
        assert refs_of("HEAD^{tree}") == [line.split()[2] for line in tree]


@pytest.mark.parametrize("bad_mode", [b"100648", b"100944", b"9", b"40008"])
def test_a_mode_with_8_or_9_is_not_a_tree_entry_for_the_promised_ids(tmp_path, bad_mode):
    """Promised ids stop at the first malformed entry, as git's tree reader
    does; a mode spelled with 8 or 9 is malformed for git (ls-tree dies) and
    for packscope's tree parser, so the promised ids stop there too."""
    repo = tmp_path / "modes.git"
    git("init", "-q", "--bare", repo)
    a, b, c = (bytes.fromhex(hash_literally(repo, "blob", f"blob {i}\n".encode())) for i in range(3))
    data = b"100644 a\0" + a + bad_mode + b" b\0" + b + b"100644 c\0" + c
    tree = hash_literally(repo, "tree", data)
    listed = subprocess.run(["git", "ls-tree", tree], cwd=repo, env=git_env(), capture_output=True, text=True)
    assert listed.returncode != 0 and "malformed mode" in listed.stderr
    with pytest.raises(CorruptObjectError, match="malformed mode"):
        tree_items(data, SHA1)
    assert referenced_ids("tree", data, SHA1) == [a]
    # The same entry spelled in octal digits is a tree entry for all three.
    good = data.replace(bad_mode + b" b", b"100644 b")
    assert git_text("ls-tree", "--format=%(objectname)", hash_literally(repo, "tree", good), cwd=repo).split() == [
        o.hex() for o in (a, b, c)
    ]
    assert [o for _, _, o in tree_items(good, SHA1)] == [a, b, c]
    assert referenced_ids("tree", good, SHA1) == [a, b, c]


# --- the CLI -------------------------------------------------------------------------------------


def test_cat_file_prints_missing_for_promised_objects(partial):
    _src, clone = partial
    blob = min(missing_in_clone(clone))
    present = [git_text("rev-parse", r, cwd=clone).strip() for r in ("HEAD", "HEAD^{tree}", "HEAD:f3.txt")]
    # (A blob a tag points at is sent even with blob:none: only blobs of trees are left out.)
    ordinary = [
        "HEAD",
        "HEAD^{tree}",
        "v1",
        "v1^{}",
        "HEAD:dir",
        "HEAD:f3.txt",
        "blob-tag^{}",
        "HEAD~2:f0.txt",
        "ef" * (len(blob) // 2),
        "nope",
    ]
    promised = [blob, "HEAD~1:dir/g.txt", "HEAD:f1.txt", "HEAD~3:f2.txt"]
    stdin = "".join(r + "\n" for r in ordinary + promised)
    p = packscope("-C", clone, "cat-file", "--batch-check", input=stdin)
    got = p.stdout.decode().splitlines()
    # Objects the clone has, and plain misses: exactly git's lines.
    want = git("cat-file", "--batch-check", cwd=clone, input="".join(r + "\n" for r in ordinary)).decode().splitlines()
    assert got[: len(ordinary)] == want
    assert {line.split()[0] for line in want[:3]} <= set(present) | {git_text("rev-parse", "v1", cwd=clone).strip()}
    # Promised objects: "missing", as git reports an object it may not fetch.
    assert got[len(ordinary) :] == [f"{r} missing" for r in promised]
    assert b"never fetches" in p.stderr and b"Traceback" not in p.stderr
    for r in promised:
        g = subprocess.run(
            ["git", "cat-file", "--batch-check"],
            cwd=clone,
            input=(r + "\n").encode(),
            capture_output=True,
            env=git_env(),
            check=False,
        )
        # git 2.39 dies ("could not fetch … from promisor remote"); either way it has no such object.
        assert g.stdout in (b"", f"{r} missing\n".encode()), r
        assert g.stdout or b"could not fetch" in g.stderr
    single = packscope("-C", clone, "cat-file", "-t", blob, check=False)
    assert single.returncode == 128 and b"promisor remote promises it" in single.stderr
    assert packscope("-C", clone, "cat-file", "-e", blob).returncode == 1


def test_lookup_json_says_promised(partial):
    _src, clone = partial
    blob = min(missing_in_clone(clone))
    absent = "ef" * (len(blob) // 2)
    lines = packscope("-C", clone, "lookup", "--json", blob, "HEAD~1:dir/g.txt", absent, "HEAD").stdout.splitlines()
    by_blob, by_path, plain, head = (json.loads(x) for x in lines)
    for d in (by_blob, by_path):
        assert not d["found"] and d["promised"] is True and d["error"] == "promised" and d["source"] is None
    assert by_path["oid"] == git_text("rev-parse", "HEAD~1:dir/g.txt", cwd=clone).strip()
    assert not plain["found"] and plain["promised"] is False and "error" not in plain
    assert head["found"] and "promised" not in head
    people = packscope("-C", clone, "lookup", blob).stdout.decode()
    assert "promised" in people


def test_info_lists_the_promisor_remote_and_packs(partial):
    src, clone = partial
    doc = json.loads(packscope("-C", clone, "info", "--json").stdout)
    pr = doc["promisor"]
    assert pr["partial_clone"] is True
    assert pr["remotes"] == [{"name": "origin", "url": f"file://{src}", "filter": "blob:none"}]
    assert pr["packs"] == sorted(p.stem for p in (clone / ".git" / "objects" / "pack").glob("*.promisor"))
    assert doc["packs"]["promisor"] == 2 and doc["problems"] == [] and pr["promised"] is None
    counted = json.loads(packscope("-C", clone, "info", "--json", "--promised").stdout)["promisor"]["promised"]
    assert counted["absent"] == len(missing_in_clone(clone)) and counted["referenced"] >= counted["absent"]
    assert counted["skipped"] == 0
    out = packscope("-C", clone, "info").stdout.decode()
    assert "promisor remote" in out and "origin" in out and "blob:none" in out


def test_chunked_runs_merge_into_the_same_compact_set(partial, monkeypatch):
    import packscope.core.store.promisor as promisor_module

    _src, clone = partial
    with open_session(str(clone)) as session:
        whole = PromisorSet(session.store)
        whole.build()
        monkeypatch.setattr(promisor_module, "CHUNK_IDS", 3)
        chunked = PromisorSet(session.store)
        chunked.build()
        ids = list(chunked.referenced())
        assert ids == list(whole.referenced()) == sorted(set(ids)) and len(ids) == len(whole)
        assert all(len(i) == session.fmt.rawsz for i in ids)


def test_a_promisor_pack_fetched_later_is_read_on_the_next_question(partial, tmp_path):
    src, clone = partial
    copy = copy_repo(clone, tmp_path / "later")
    with open_session(str(copy)) as session:
        promised = session.store.promisor
        promised.build()
        assert promised.stats.packs == 2
        later = git_text("rev-parse", "HEAD~1:dir/g.txt", cwd=src).strip()
        assert promised.is_promised(bytes.fromhex(later))
        git("fetch", "-q", "origin", later, cwd=copy)
        session.store.rescan()
        assert not promised.built
        assert session.store.read(bytes.fromhex(later))[1] == b"version 2\n"
        assert promised.is_promised(bytes.fromhex(later)) and promised.built and promised.stats.packs == 3


def test_a_bad_promisor_setting_is_a_problem_not_a_failure(partial, tmp_path):
    _src, clone = partial
    copy = without_partial_clone_settings(clone, tmp_path / "bad-setting", promisor="perhaps")
    p = packscope("-C", copy, "info", "--json")
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and not doc["promisor"]["partial_clone"]
    assert "bad-config" in [pb["kind"] for pb in doc["problems"]]
    assert packscope("-C", copy, "cat-file", "-t", "HEAD").stdout == b"commit\n"
