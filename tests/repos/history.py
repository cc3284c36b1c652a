"""Histories with exact shapes and dates (HistoryBuilder): the scenario,
random and odd-commit repositories walks, tree diffs and log formats use."""

from __future__ import annotations

import random
from pathlib import Path

from tests.repos.common import git, git_text, hash_literally, init_bare

# --- histories with exact shapes and dates (walks, tree diffs, log formats) ----------


class HistoryBuilder:
    """A fast-import stream where every commit's parents, whole tree and dates
    are stated: each commit lists its full tree (``deleteall`` + ``M`` lines),
    so merges resolve exactly as told and any date (clock skew, equal
    seconds) is possible.  Files map path -> content, or -> (mode, content)
    (mode 160000: content is the gitlink's hex id)."""

    AUTHOR = "A U Thor <author@example.com>"
    COMMITTER = "C O Mitter <committer@example.com>"

    def __init__(self) -> None:
        self._out: list[bytes] = []
        self._mark = 0
        self._blobs: dict[bytes, int] = {}
        self.files: dict[int, dict] = {}
        self.when: dict[int, int] = {}

    def _next(self) -> int:
        self._mark += 1
        return self._mark

    def _blob(self, content) -> int:
        if isinstance(content, str):
            content = content.encode()
        m = self._blobs.get(content)
        if m is None:
            m = self._blobs[content] = self._next()
            self._out.append(b"blob\nmark :%d\ndata %d\n%s\n" % (m, len(content), content))
        return m

    def commit(
        self,
        parents: list[int],
        files: dict,
        when: int,
        msg: str | None = None,
        *,
        tz: str = "+0000",
        author_when: int | None = None,
        author_tz: str | None = None,
        author: str | None = None,
    ) -> int:
        lines = []
        for path in sorted(files):
            v = files[path]
            mode, content = v if isinstance(v, tuple) else ("100644", v)
            if mode == "160000":
                lines.append(f"M 160000 {content} {path}\n".encode())
            else:
                lines.append(f"M {mode} :{self._blob(content)} {path}\n".encode())
        mark = self._next()
        msg = msg if msg is not None else f"commit {mark}\n"
        mb = msg.encode()
        head = (
            f"reset refs/builder/tmp\ncommit refs/builder/tmp\nmark :{mark}\n"
            f"author {author or self.AUTHOR} {author_when if author_when is not None else when} {author_tz or tz}\n"
            f"committer {self.COMMITTER} {when} {tz}\n"
        ).encode()
        body = b"data %d\n%s\n" % (len(mb), mb)
        rel = b"".join((b"from :%d\n" if i == 0 else b"merge :%d\n") % p for i, p in enumerate(parents))
        self._out.append(head + body + rel + b"deleteall\n" + b"".join(lines) + b"\n")
        self.files[mark] = dict(files)
        self.when[mark] = when
        return mark

    def derive(
        self, parents: int | list[int], when: int, changes: dict | None = None, msg: str | None = None, **kw
    ) -> int:
        """A commit whose tree is the first parent's with ``changes``
        applied (a value of None deletes the path)."""
        parents = [parents] if isinstance(parents, int) else parents
        files = dict(self.files[parents[0]])
        for path, v in (changes or {}).items():
            if v is None:
                files.pop(path, None)
            else:
                files[path] = v
        return self.commit(parents, files, when, msg, **kw)

    def ref(self, name: str, mark: int) -> None:
        self._out.append(f"reset {name}\nfrom :{mark}\n\n".encode())

    def tag(self, name: str, mark: int, when: int, message: str = "tag\n") -> None:
        mb = message.encode()
        self._out.append(
            f"tag {name}\nfrom :{mark}\ntagger T Agger <tag@example.com> {when} +0000\n".encode()
            + b"data %d\n%s\n" % (len(mb), mb)
        )

    def stream(self) -> bytes:
        return b"".join(self._out)

    def write(self, repo: Path, head: str = "refs/heads/main") -> Path:
        git("fast-import", "--quiet", cwd=repo, input=self.stream())
        git("update-ref", "-d", "refs/builder/tmp", cwd=repo)
        git("symbolic-ref", "HEAD", head, cwd=repo)
        return repo


GITLINK = "0123456789abcdef0123456789abcdef01234567"


# Pathspecs for the scenario repository: files, directories, a file turned
# directory, a symlink, a gitlink, several at once, and paths it never has.
SCENARIO_PATHSPECS = [
    ["dir"],
    ["lib/x.c"],
    ["README"],
    ["gone.txt", "new.txt"],
    ["thing"],
    ["thing/inner"],
    ["sub", "link"],
    ["link"],
    ["sub"],
    ["dir/sub", "lib"],
    ["dir/sub/b.txt"],
    ["."],
    ["nowhere"],
    ["nowhere/deeper"],
    ["dir/a.txt/deeper"],
]
SCENARIO_PATHSPECS_NEVER_CHANGED = (["nowhere"], ["nowhere/deeper"], ["dir/a.txt/deeper"])


def scenario_history() -> HistoryBuilder:
    """A small history holding the cases git's walks are particular about:
    same-second commits, clock skew (a parent newer than its child, and a
    child far older than its parent), a criss-cross merge, merges TREESAME to
    one side for some paths, a rename, a file deleted and re-added, a file
    replaced by a directory, a symlink/gitlink/mode change, branch tips with
    exactly equal dates, a second root, and annotated tags (one of a tag)."""
    h = HistoryBuilder()
    T = 1_600_000_000
    base = {
        "README": "readme 0\n",
        "dir/a.txt": "a0\n",
        "dir/sub/b.txt": "b0\n",
        "old.txt": "old\n",
        "gone.txt": "gone 0\n",
        "lib/x.c": "x0\n",
        "thing": "thing file\n",
        "link": ("120000", "README"),
        "sub": ("160000", GITLINK),
        "run.sh": "#!/bin/sh\n",
    }
    c1 = h.commit([], base, T, "root\n")
    c2 = h.derive(c1, T + 60, {"dir/a.txt": "a1\n"}, "edit a\n", tz="+0530", author_tz="-0700")
    c3 = h.derive(c2, T + 120, {"old.txt": None, "new.txt": "old\n"}, "rename old.txt to new.txt\n")
    c4 = h.derive(c3, T + 180, {"gone.txt": None}, "delete gone.txt\n")
    s1 = h.derive(c2, T + 150, {"lib/x.c": "x1\n"}, "side: x1\n", author_tz="+1400", author_when=T - 86_400)
    s2 = h.derive(s1, T + 150, {"dir/sub/b.txt": "b1\n"}, "side: b1 (same second)\n")
    s3 = h.derive(s2, T + 150, {"README": "readme side\n"}, "side: readme (same second)\n")
    # merge: lib/x.c and dir/sub/b.txt from the side, README kept from main
    m1 = h.derive([c4, s3], T + 240, {"lib/x.c": "x1\n", "dir/sub/b.txt": "b1\n"}, "merge side\n")
    c5 = h.derive(m1, T + 300, {"gone.txt": "gone again\n"}, "re-add gone.txt\n")
    c6 = h.derive(c5, T + 5000, {"run.sh": ("100755", "#!/bin/sh\n")}, "future-dated: chmod +x\n")
    c7 = h.derive(c6, T + 400, {"dir/a.txt": "a2\n"}, "older than its parent\n", author_tz="-1200")
    c8 = h.derive(c7, T + 460, {"link": "now a file\n"}, "symlink becomes a file\n")
    # criss-cross
    x1 = h.derive(c8, T + 500, {"README": "readme x\n"}, "x1\n")
    y1 = h.derive(c8, T + 500, {"lib/x.c": "x-y\n"}, "y1\n")
    x2 = h.derive([x1, y1], T + 560, {"lib/x.c": "x-y\n"}, "x2: merge y1\n")
    y2 = h.derive([y1, x1], T + 560, {"README": "readme y\n"}, "y2: merge x1\n")
    m2 = h.derive([x2, y2], T + 620, {"README": "readme xy\n"}, "merge criss-cross\n")
    c9 = h.derive(
        m2,
        T + 680,
        {"thing": None, "thing/inner": "inner\n", "sub": "gitlink now a file\n"},
        "thing becomes a directory\n",
    )
    # merge that brings nothing under dir/ from the side (TREESAME to the first parent there)
    t1 = h.derive(c9, T + 700, {"lib/x.c": "x-t\n"}, "t1\n")
    m3 = h.derive([c9, t1], T + 720, {"lib/x.c": "x-t\n"}, "merge t1\n")
    c10 = h.derive(m3, T + 800, {"dir/a.txt": "a3\n"}, "main tip\n")
    b1a = h.derive(c9, T + 800, {"dir/b1": "b1\n"}, "b1a\n")
    b1 = h.derive(b1a, T + 800, {"dir/b1": "b1 again\n"}, "b1 tip (same second)\n")
    b2 = h.derive(c9, T + 800, {"lib/b2": "b2\n"}, "b2 tip\n")
    b3 = h.derive(c8, T + 800, {"README": "readme b3\n"}, "b3 tip\n")
    old1 = h.derive(c1, T - 100_000, {"lib/old": "old side\n"}, "ancient side 1\n")
    old2 = h.derive(old1, T - 90_000, {"lib/old": "old side 2\n"}, "ancient side 2\n")
    m4 = h.derive([c10, old2], T + 900, {"lib/old": "old side 2\n"}, "merge ancient side\n")
    r1 = h.commit([], {"other/root.txt": "second root\n"}, T + 200, "second root\n")
    r2 = h.derive(r1, T + 800, {"other/root.txt": "second root 2\n"}, "second root tip\n")
    h.ref("refs/heads/main", m4)
    h.ref("refs/heads/b1", b1)
    h.ref("refs/heads/b2", b2)
    h.ref("refs/heads/b3", b3)
    h.ref("refs/heads/side", s3)
    h.ref("refs/heads/old", old2)
    h.ref("refs/heads/orphan", r2)
    h.ref("refs/heads/skew", c7)
    h.ref("refs/heads/x", x2)
    h.ref("refs/heads/y", y2)
    h.ref("refs/tags/light", s1)
    h.tag("v1", c5, T + 310)
    h.tag("v2", c9, T + 690)
    h.marks = dict(
        c1=c1,
        c2=c2,
        c3=c3,
        c4=c4,
        c5=c5,
        c6=c6,
        c7=c7,
        c8=c8,
        c9=c9,
        c10=c10,
        s1=s1,
        s2=s2,
        s3=s3,
        m1=m1,
        m2=m2,
        m3=m3,
        m4=m4,
        x1=x1,
        x2=x2,
        y1=y1,
        y2=y2,
        t1=t1,
        b1=b1,
        b2=b2,
        b3=b3,
        old1=old1,
        old2=old2,
        r1=r1,
        r2=r2,
    )
    return h


def build_scenario_repo(root: Path) -> Path:
    repo = init_bare(root / "scenario.git")
    scenario_history().write(repo)
    # a tag of a tag, for peeling
    v1 = git_text("rev-parse", "refs/tags/v1", cwd=repo).strip()
    obj = f"object {v1}\ntype tag\ntag v1-again\ntagger T Agger <tag@example.com> 1600000999 +0000\n\na tag of a tag\n"
    oid = git_text("hash-object", "-t", "tag", "-w", "--stdin", cwd=repo, input=obj).strip()
    git("update-ref", "refs/tags/v1-again", oid, cwd=repo)
    return repo


def random_history(commits: int, seed: int = 7) -> HistoryBuilder:
    """A generated history: several branches forking from old commits and
    merging (sometimes criss-cross), dates mostly rising a minute at a time
    but with same-second runs, backwards skew and future-dated commits."""
    rnd = random.Random(seed)
    h = HistoryBuilder()
    T = 1_650_000_000
    paths = [f"d{i % 4}/e{i % 3}/f{i}.txt" for i in range(24)] + ["top.txt", "d0/top0"]
    files = {p: f"{p} 0\n" for p in paths[:16]}
    first = h.commit([], files, T, "root\n")
    all_marks = [first]
    heads = {"main": first}
    clock = T
    names = 0
    for n in range(commits - 1):
        roll = rnd.random()
        clock += 60
        if roll < 0.15:
            when = h.when[all_marks[-1]]  # the same second as the previous commit
        elif roll < 0.19:
            when = clock - rnd.randrange(3600, 200_000)  # clock skew into the past
        elif roll < 0.21:
            when = clock + rnd.randrange(3600, 50_000)  # a future-dated commit
        else:
            when = clock
        action = rnd.random()
        branch = rnd.choice(sorted(heads))
        tip = heads[branch]
        if action < 0.12 and len(heads) > 1:
            other = rnd.choice([b for b in sorted(heads) if b != branch])
            o = heads[other]
            if o == tip:
                continue
            merged = dict(h.files[tip])
            for p, v in h.files[o].items():
                if p not in merged or rnd.random() < 0.5:
                    merged[p] = v
            for p in list(merged):
                if p not in h.files[o] and rnd.random() < 0.3:
                    del merged[p]
            if rnd.random() < 0.3:
                p = rnd.choice(paths)
                merged[p] = f"{p} resolved {n}\n"
            mark = h.commit([tip, o], merged, when, f"merge {other} into {branch} ({n})\n")
            heads[branch] = mark
            if rnd.random() < 0.2:
                # criss-cross: the other branch merges the old tip of this one
                heads[other] = h.commit([o, tip], dict(h.files[o]), when, f"criss-cross {n}\n")
                all_marks.append(heads[other])
        elif action < 0.16 and len(heads) < 7:
            names += 1
            start = rnd.choice(all_marks[-200:])
            mark = h.derive(start, when, {rnd.choice(paths): f"branch {names}\n"}, f"start b{names} ({n})\n")
            heads[f"b{names}"] = mark
        elif action < 0.17 and len(heads) > 3 and branch != "main":
            del heads[branch]  # reachable only through merges from now on (or not at all)
            if names % 3 == 0:
                h.ref(f"refs/heads/done-{branch}", tip)
            continue
        else:
            changes = {}
            for _ in range(rnd.choice((1, 1, 2, 3))):
                p = rnd.choice(paths)
                changes[p] = None if (p in h.files[tip] and rnd.random() < 0.1) else f"{p} {n}\n"
            mark = h.derive(tip, when, changes, f"change {n} on {branch}\n\nbody {n}\n")
            heads[branch] = mark
        all_marks.append(mark)
    for name, mark in sorted(heads.items()):
        h.ref(f"refs/heads/{name}", mark)
    h.ref("refs/heads/mid", all_marks[len(all_marks) // 2])
    h.ref("refs/heads/quarter", all_marks[len(all_marks) // 4])
    h.marks = {"all": all_marks}
    return h


def build_random_history_repo(root: Path, commits: int = 3000, seed: int = 7) -> Path:
    repo = init_bare(root / f"random-history-{commits}.git")
    random_history(commits, seed).write(repo)
    return repo


ODD_COMMITS = [
    # (headers after tree/parent, message) — each becomes one commit of a chain
    (
        b"author Jos\xe9 M\xfcller <jose@example.com> 1600000000 +0100\n"
        b"committer C O Mitter <committer@example.com> 1600000000 +0100\nencoding ISO-8859-1\n",
        b"caf\xe9 in latin-1\n\nna\xefve body\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000100 +0590\n"
        b"committer C O Mitter <committer@example.com> 1600000100 -0730\n"
        b"x-custom first line\n continued\n  indented more\n"
        b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n",
        b"signed, with an unknown header\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000200 +1400\n"
        b"committer C O Mitter <committer@example.com> 1600000200 -1200\n",
        b"\n\n  leading blank lines and\ttabs  \n\xe6\x97\xa5\xe6\x9c\xac\tafter wide chars\nab\tc\td\n"
        b"   \n\n\nparagraph   \n\tindented by tab\n\n\n",
    ),
    (
        b"author Two Authors <one@example.com> 1600000300 +0000\n"
        b"author Second Author <two@example.com> 1600000301 +0200\n"
        b"committer C O Mitter <committer@example.com> 1600000300 +0000\n",
        b"subject split\nover two lines\n\nbody para 1\n\nbody para 2\n\n",
    ),
    (
        b"author <noname@example.com> 1600000400 +0000\ncommitter NoSpace<committer@example.com> 1600000400 +0000\n",
        b"no trailing newline",
    ),
    (
        b"author Broken Ident <broken 1600000500 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000500 +0000\n",
        b"author line without a closing >\n",
    ),
    (
        b"author No Zone <nozone@example.com> 1600000600\n"
        b"committer C O Mitter <committer@example.com> 1600000600 +0000\nencoding bogus-encoding\n",
        b"time without a zone; unknown encoding \xff\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000700 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000700 +0000\n",
        b"",
    ),
    (
        b"author A U Thor <author@example.com> 1600000800 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000800 +0000\nencoding UTF-8\n",
        b"windows\r\nline endings\r\n\r\nbody\r\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600000900 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600000900 +0000\n",
        b"nul in the body\n\nbefore\0after\n",
    ),
    (
        b"author A U Thor <author@example.com> 1600001000 +0000\n"
        b"committer C O Mitter <committer@example.com> 1600001000 +0000\n",
        b"percent %s and %n in a message\n\n\t\n   \n",
    ),
]


def build_odd_commits_repo(root: Path) -> Path:
    """A chain of commits written byte for byte (hash-object --literally):
    other encodings, odd zones, unknown and multi-line headers, duplicated
    and broken idents, messages with tabs, wide characters, CRLF, NUL, no
    trailing newline or no message; tip at refs/heads/odd (also HEAD), a
    merge of the chain with the scenario-like side at refs/heads/odd-merge."""
    repo = init_bare(root / "odd-commits.git")
    tree = git_text("mktree", cwd=repo, input="").strip()
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input="x\n").strip()
    tree2 = git_text("mktree", cwd=repo, input=f"100644 blob {blob}\tx\n").strip()
    parent = None
    for k, (headers, message) in enumerate(ODD_COMMITS):
        raw = b"tree %s\n" % (tree2 if k % 2 else tree).encode()
        if parent:
            raw += b"parent %s\n" % parent.encode()
        raw += headers
        if message or k % 2:
            raw += b"\n" + message
        parent = hash_literally(repo, "commit", raw)
    git("update-ref", "refs/heads/odd", parent, cwd=repo)
    side = hash_literally(
        repo,
        "commit",
        f"tree {tree2}\nauthor S Ide <side@example.com> 1600002000 +0000\n"
        "committer S Ide <side@example.com> 1600002000 +0000\n\nside root\n".encode(),
    )
    merge = hash_literally(
        repo,
        "commit",
        f"tree {tree2}\nparent {parent}\nparent {side}\n"
        "author M Erge <merge@example.com> 1600003000 +0000\n"
        "committer M Erge <merge@example.com> 1600003000 +0000\n\nmerge odd and side\n".encode(),
    )
    git("update-ref", "refs/heads/odd-merge", merge, cwd=repo)
    git("symbolic-ref", "HEAD", "refs/heads/odd", cwd=repo)
    return repo
