"""Repositories whose refs are in reftable (``extensions.refStorage =
reftable``), read as git reads them.

git 2.39 cannot write reftable, so each test builds a repository with git
(the files backend: the oracle), copies it, and rewrites the copy's refs as
a reftable stack with tests/reftable_writer.py: a base table with every ref
(several ref blocks, restart points, prefix compression, an index, obj and
log block after them) and a newer table that deletes a branch, moves
another, adds a tag and points HEAD elsewhere.  The same updates are made in
the oracle with git; packscope on the reftable copy must then answer as git
does on the oracle.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from packscope.core.repo.refs import RefStore
from packscope.core.repo.reftable import ReftableFile
from packscope.core.repo.repository import Repository
from tests.cli import packscope
from tests.reftable_writer import Rec, write_stack, write_table
from tests.repos import git, git_env, git_text

NAMES = [
    "HEAD",
    "main",
    "refs/heads/b07",
    "b05",
    "refs/heads/b05",
    "b01",
    "v1",
    "v1^{}",
    "v1^{tree}",
    "refs/tags/v1",
    "new",
    "light",
    "origin/HEAD",
    "refs/remotes/origin/main",
    "HEAD~1",
    "b39",
    "nosuch",
]


def build_oracle(root: Path, object_format: str) -> Path:
    work = root / "work"
    git("init", "-q", f"--object-format={object_format}", "--initial-branch=main", work)
    for i in range(4):
        (work / "f").write_text(f"{i}\n")
        git("add", "f", cwd=work)
        git("commit", "-qm", f"c{i}", cwd=work)
    for i in range(40):
        git("branch", f"b{i:02d}", f"HEAD~{i % 4}", cwd=work)
    git("tag", "-a", "-m", "release", "v1", "HEAD~1", cwd=work)
    git("tag", "light", "HEAD~2", cwd=work)
    oracle = root / "oracle.git"
    git("clone", "-q", "--mirror", work, oracle)
    git("update-ref", "refs/remotes/origin/main", "main", cwd=oracle)
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main", cwd=oracle)
    return oracle


def refs_as_records(repo: Path, update_index: int) -> list[Rec]:
    out = []
    fmt = "%(refname) %(objectname) %(*objectname) %(symref)"
    for line in git_text("for-each-ref", f"--format={fmt}", cwd=repo).splitlines():
        name, oid, peeled, symref = (line.split(" ") + [""] * 4)[:4]
        if symref:
            out.append(Rec(name, update_index, target=symref))
        else:
            out.append(Rec(name, update_index, bytes.fromhex(oid), bytes.fromhex(peeled) if peeled else None))
    head = git_text("symbolic-ref", "HEAD", cwd=repo).strip()
    out.append(Rec("HEAD", update_index, target=head))
    return out


def table_name(update_index: int) -> str:
    """A table's file name as git gives it: its update index range, then a
    suffix (here the index again)."""
    return f"0x{update_index:012x}-0x{update_index:012x}-{update_index:04d}.ref"


def write_update(reftable: Path, update_index: int, recs: list[Rec], below: list[str] | None, **kw) -> str:
    """Write the table of one update (``update_index`` its min and max) into
    the ``reftable`` directory and, unless ``below`` is None, the stack:
    ``below`` then it.  ``kw`` go to write_table.  Returns its name."""
    name = table_name(update_index)
    write_table(reftable / name, recs, min_update_index=update_index, max_update_index=update_index, **kw)
    if below is not None:
        write_stack(reftable, [*below, name])
    return name


def to_reftable(oracle: Path, dest: Path, *, version: int, block_size: int) -> Path:
    """A copy of ``oracle`` whose refs live in a reftable stack (base table only)."""
    shutil.copytree(oracle, dest, symlinks=True)
    records = refs_as_records(dest, 1)
    shutil.rmtree(dest / "refs")
    (dest / "refs").mkdir()
    (dest / "refs" / "heads").write_text("this repository uses the reftable format\n")
    (dest / "packed-refs").unlink(missing_ok=True)
    (dest / "HEAD").write_text("ref: refs/heads/.invalid\n")
    git("config", "-f", dest / "config", "core.repositoryformatversion", "1")
    git("config", "-f", dest / "config", "extensions.refStorage", "reftable")
    (dest / "reftable").mkdir()
    write_update(
        dest / "reftable",
        1,
        records,
        [],
        version=version,
        block_size=block_size,
        per_block=7,
        restart_every=3,
        extras=True,
    )
    return dest


def apply_update(oracle: Path, reftable_repo: Path, version: int, block_size: int) -> None:
    """Delete b05, move b07, add tag `new`, point HEAD at b01: with git in
    the oracle, as a newer table in the reftable copy."""
    moved = bytes.fromhex(git_text("rev-parse", "main~1", cwd=oracle).strip())
    new = bytes.fromhex(git_text("rev-parse", "main~3", cwd=oracle).strip())
    git("update-ref", "-d", "refs/heads/b05", cwd=oracle)
    git("update-ref", "refs/heads/b07", "main~1", cwd=oracle)
    git("tag", "new", "main~3", cwd=oracle)
    git("symbolic-ref", "HEAD", "refs/heads/b01", cwd=oracle)
    recs = [
        Rec("refs/heads/b05", 2),
        Rec("refs/heads/b07", 2, moved),
        Rec("refs/tags/new", 2, new),
        Rec("HEAD", 2, target="refs/heads/b01"),
    ]
    write_update(reftable_repo / "reftable", 2, recs, [table_name(1)], version=version, block_size=block_size)


@pytest.fixture(
    scope="module",
    params=[("sha1", 1, 0), ("sha1", 1, 256), ("sha1", 2, 0), ("sha256", 2, 0), ("sha256", 2, 512)],
    ids=["sha1-v1-unaligned", "sha1-v1-aligned", "sha1-v2", "sha256-unaligned", "sha256-aligned"],
)
def pair(request, tmp_path_factory):
    object_format, version, block_size = request.param
    root = tmp_path_factory.mktemp("reftable")
    oracle = build_oracle(root, object_format)
    rt = to_reftable(oracle, root / "rt.git", version=version, block_size=block_size)
    apply_update(oracle, rt, version, block_size)
    return oracle, rt


def test_the_base_table_has_what_a_reader_must_skip_and_split(pair):
    """Guard for the fixture: several ref blocks, then index/obj/log blocks."""
    _, rt = pair
    fmt = Repository.open(rt).object_format
    base = (rt / "reftable" / "tables.list").read_text().split()[0]
    table = ReftableFile(rt / "reftable" / base, fmt.name, fmt.rawsz)
    records = list(table.records())
    assert len(records) >= 45  # 7 per block: at least 7 ref blocks
    assert 0 < table.refs_end < table.end  # an index, obj and log section follow


def test_refs_resolve_as_git_resolves_them_in_the_files_twin(pair):
    oracle, rt = pair
    names = "".join(f"{n}\n" for n in NAMES)
    want = git("cat-file", "--batch-check", cwd=oracle, input=names)
    got = packscope("cat-file", "--batch-check", cwd=rt, input=names)
    assert got.returncode == 0
    assert got.stdout == want
    assert b"refs/heads/b05 missing" in want  # the deletion in the newer table hides the base's b05


def test_log_all_walks_every_reftable_ref(pair):
    oracle, rt = pair
    want = git("log", "--all", "--format=%H %s", cwd=oracle)
    got = packscope("log", "--all", "--format=%H %s", cwd=rt)
    assert (got.returncode, got.stdout) == (0, want)


def test_refs_head_symref_and_peeled_tags_come_from_the_stack(pair):
    oracle, rt = pair
    refs = RefStore(Repository.open(rt))
    head = refs.read("HEAD")
    assert head.symref == "refs/heads/b01" and head.source == "reftable"
    v1 = refs.read("refs/tags/v1")
    assert v1.peeled.hex() == git_text("rev-parse", "v1^{}", cwd=oracle).strip()
    assert refs.read("refs/heads/b05") is None
    listed = [(r.name, (r.oid or b"").hex(), r.symref or "") for r in refs.iter_refs("refs/")]
    fmt = "%(refname) %(objectname) %(symref)"
    oracle_refs = []
    for line in git_text("for-each-ref", f"--format={fmt}", cwd=oracle).splitlines():
        name, oid, symref = line.split(" ")
        oracle_refs.append((name, "" if symref else oid, symref))
    assert listed == oracle_refs
    assert refs.problems == []


def test_info_reads_a_reftable_repository(pair):
    _, rt = pair
    p = packscope("info", "--json", cwd=rt)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert info["refs"]["storage"] == "reftable"
    assert info["refs"]["head"]["symref"] == "refs/heads/b01"
    assert info["problems"] == []
    assert packscope("info", cwd=rt).returncode == 0


def test_a_damaged_table_is_a_problem_not_a_failure(pair, tmp_path):
    _, rt = pair
    broken = shutil.copytree(rt, tmp_path / "broken.git", symlinks=True)
    newer = (broken / "reftable" / "tables.list").read_text().split()[1]
    path = broken / "reftable" / newer
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the footer's CRC-32
    path.write_bytes(bytes(data))
    p = packscope("info", "--json", cwd=broken)
    assert p.returncode == 0
    kinds = [problem["kind"] for problem in json.loads(p.stdout)["problems"]]
    assert "reftable-checksum" in kinds
    # the base table still answers (b05 is back: its deletion was in the damaged table)
    got = packscope("cat-file", "--batch-check", cwd=broken, input="refs/heads/b05\n")
    assert not got.stdout.endswith(b"missing\n")


def test_git_cannot_read_it_but_agrees_it_is_a_repository(pair):
    """The copy is laid out as git lays out reftable repositories: an older
    git recognises the directory and refuses the extension."""
    _, rt = pair
    p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=rt, capture_output=True, env=git_env())
    assert p.returncode != 0 and b"refstorage" in p.stderr.lower()


@pytest.mark.asyncio
async def test_overview_names_the_ref_storage_and_counts_the_refs(pair):
    from tests.ui_support import SIZE, make_app, plain, settle, started, until

    oracle, rt = pair
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: app.screen.facts.refs is not None, "the refs to be counted")
        await settle(app, pilot)
        store_text = plain(app.screen.query_one("#ov-store"), width=400)
        nrefs = len(git_text("for-each-ref", cwd=oracle).splitlines())
        assert f"refs {nrefs} (" in store_text
        assert "in reftable; HEAD → refs/heads/b01" in store_text


def test_a_linked_worktree_reads_its_own_stack_for_per_worktree_refs(pair, tmp_path):
    """Per-worktree refs (HEAD, refs/bisect/…) live in the worktree's own
    stack, shared refs in the common one — compared with git on the twin."""
    oracle, rt = pair
    oracle = shutil.copytree(oracle, tmp_path / "oracle.git", symlinks=True)
    rt = shutil.copytree(rt, tmp_path / "rt.git", symlinks=True)
    bad = bytes.fromhex(git_text("rev-parse", "main~2", cwd=oracle).strip())
    git("worktree", "add", "-q", tmp_path / "owt", "b02", cwd=oracle)
    git("update-ref", "refs/bisect/bad", "main~2", cwd=tmp_path / "owt")
    # the same worktree by hand in the reftable copy
    admin = rt / "worktrees" / "wt"
    admin.mkdir(parents=True)
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {admin}\n")
    (admin / "gitdir").write_text(f"{wt / '.git'}\n")
    (admin / "commondir").write_text("../..\n")
    (admin / "HEAD").write_text("ref: refs/heads/.invalid\n")
    (admin / "refs").mkdir()
    (admin / "reftable").mkdir()
    recs = [Rec("HEAD", 1, target="refs/heads/b02"), Rec("refs/bisect/bad", 1, bad)]
    write_update(admin / "reftable", 1, recs, [], version=1 if len(bad) == 20 else 2)
    names = "HEAD\nrefs/bisect/bad\nmain-worktree/HEAD\nb07\nrefs/heads/b05\n"
    want = git("cat-file", "--batch-check", cwd=tmp_path / "owt", input=names)
    got = packscope("cat-file", "--batch-check", cwd=wt, input=names)
    assert (got.returncode, got.stdout) == (0, want)
    from_main = "worktrees/wt/HEAD\nrefs/bisect/bad\n"
    want = git("cat-file", "--batch-check", cwd=oracle, input=from_main.replace("/wt/", "/owt/"))
    got = packscope("cat-file", "--batch-check", cwd=rt, input=from_main)
    assert got.stdout == want.replace(b"worktrees/owt/HEAD", b"worktrees/wt/HEAD")


def test_a_table_missing_from_the_stack_is_a_problem_and_the_rest_still_reads(pair, tmp_path):
    _, rt = pair
    broken = shutil.copytree(rt, tmp_path / "missing.git", symlinks=True)
    _, newer = (broken / "reftable" / "tables.list").read_text().split()
    (broken / "reftable" / newer).unlink()
    refs = RefStore(Repository.open(broken))
    assert refs.read("HEAD").symref == "refs/heads/main"  # the base table's HEAD: the newer one is gone
    assert [e.kind for e in refs.problems] == ["reftable-missing"]
    p = packscope("info", "--json", cwd=broken)
    assert p.returncode == 0 and "reftable-missing" in p.stdout.decode()


def test_fsck_counts_reftable_reflog_entries_as_roots_as_git_counts_reflogs(pair, tmp_path):
    """A commit only a reflog names is no dangling object for git fsck; the
    same reflog as reftable log records keeps it alive for packscope."""
    oracle, rt = pair
    oracle = shutil.copytree(oracle, tmp_path / "oracle.git", symlinks=True)
    rt = shutil.copytree(rt, tmp_path / "rt.git", symlinks=True)
    tree = git_text("rev-parse", "main^{tree}", cwd=oracle).strip()
    only_in_log = git_text("commit-tree", "-m", "only in a reflog", tree, cwd=oracle).strip()
    loose = Path("objects") / only_in_log[:2] / only_in_log[2:]
    (rt / loose).parent.mkdir(exist_ok=True)
    shutil.copy(oracle / loose, rt / loose)  # the same object in the reftable copy
    main = git_text("rev-parse", "main", cwd=oracle).strip()
    git("update-ref", "--create-reflog", "refs/heads/tmp", only_in_log, cwd=oracle)
    git("update-ref", "refs/heads/tmp", main, cwd=oracle)
    zero = bytes(len(bytes.fromhex(main)))
    base, newer = (rt / "reftable" / "tables.list").read_text().split()
    version = 1 if len(zero) == 20 else 2
    table = write_update(
        rt / "reftable",
        3,
        [Rec("refs/heads/tmp", 3, bytes.fromhex(main))],
        None,
        version=version,
        logs=[
            ("refs/heads/tmp", 3, zero, bytes.fromhex(only_in_log)),
            ("refs/heads/tmp", 4, bytes.fromhex(only_in_log), bytes.fromhex(main)),
        ],
    )

    def dangling(out: bytes) -> list[str]:
        return sorted(line for line in out.decode().splitlines() if line.startswith("dangling "))

    g = subprocess.run(["git", "fsck"], cwd=oracle, capture_output=True, env=git_env())
    assert only_in_log not in g.stdout.decode()
    write_stack(rt / "reftable", [base, newer])  # first without the log: the commit dangles
    p = packscope("fsck", cwd=rt, check=False)
    assert f"dangling commit {only_in_log}" in dangling(p.stdout)
    write_stack(rt / "reftable", [base, newer, table])
    p = packscope("fsck", cwd=rt, check=False)
    assert (p.returncode, dangling(p.stdout)) == (g.returncode, dangling(g.stdout))
