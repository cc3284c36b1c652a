"""Mailmap: `packscope log` maps names and emails as git 2.39 does — the
medium format's Author lines by default (log.mailmap, --use-mailmap,
--no-mailmap) and %aN %aE %aL %cN %cE %cL always — from `.mailmap` in the
work tree, `mailmap.file`, `mailmap.blob` and `HEAD:.mailmap` in a bare
repository; every documented form of line, matched case-insensitively."""

from __future__ import annotations

import pytest

from packscope.core.repo.mailmap import Mailmap
from tests.cli import packscope_in
from tests.repos import git

ATOMS = "--format=%an <%ae> | %aN <%aE> %aL | %cn <%ce> | %cN <%cE> %cL | %al %cl"

# commit author (name, email) -> what the map below should make of it
PEOPLE = [
    ("A One", "a@x.org"),  # name only, by email
    ("B Two", "b@x.org"),  # email only
    ("C Three", "C@X.ORG"),  # name and email by email, matched across case
    ("Old Name", "d@x.org"),  # name and email by name and email
    ("Other Name", "d@x.org"),  # same email, another name: the email-only entry (none here)
    ("OLD NAME", "D@x.org"),  # case-insensitive name and email
    ("E Five", "e@x.org"),  # a later line overrides an earlier one
    ("F Six", "f@x.org"),  # nothing maps
    ("G Seven", "g@x.org"),  # by name+email, with an email-only entry too
    ("Someone", "g@x.org"),  # … which catches the other names
]

MAILMAP = """\
# the four forms of gitmailmap(5)
Proper One <a@x.org>
<bee@y.org> <b@x.org>
Cee Proper <cee@y.org> <c@x.org>   # a trailing comment
Dee Proper <dee@y.org> old name <d@x.org>
Wrong Name <e@x.org>
  Five  Right  <e@X.org>
Gee Fallback <g@x.org>
Gee Proper <gee@y.org> G Seven <g@x.org>
not a line at all
"""


def same_as_git(repo, *args) -> None:
    want = git("log", *args, cwd=repo)
    got = packscope_in(repo, "log", *args)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == want, f"log {' '.join(args)}"


def build(repo, mailmap_in_tree: bool = True):
    git("init", "-q", "--initial-branch=main", repo)
    for n, (name, email) in enumerate(PEOPLE):
        (repo / f"f{n}").write_text(f"{n}\n")
        git("add", f"f{n}", cwd=repo)
        stamp = f"{1_600_000_000 + n * 60} +0000"
        env = {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            # committers map too: give some commits a mapped committer
            "GIT_COMMITTER_NAME": PEOPLE[(n + 3) % len(PEOPLE)][0],
            "GIT_COMMITTER_EMAIL": PEOPLE[(n + 3) % len(PEOPLE)][1],
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
        }
        git("commit", "-q", "-m", f"commit {n}", cwd=repo, env=env)
    if mailmap_in_tree:
        (repo / ".mailmap").write_text(MAILMAP)
    return repo


@pytest.fixture(scope="module")
def mapped_repo(tmp_path_factory):
    return build(tmp_path_factory.mktemp("mailmap") / "work")


def test_every_form_of_line_maps_as_gits(mapped_repo):
    same_as_git(mapped_repo)  # the medium format maps Author lines by default
    same_as_git(mapped_repo, ATOMS)
    out = packscope_in(mapped_repo, "log", "--format=%aN <%aE>").stdout.decode()
    assert "Cee Proper <cee@y.org>" in out and "Dee Proper <dee@y.org>" in out  # the test means something


def test_use_and_no_mailmap_and_log_mailmap(mapped_repo, tmp_path):
    for flag in ("--no-mailmap", "--use-mailmap", "--mailmap", "--no-use-mailmap"):
        same_as_git(mapped_repo, flag)
        same_as_git(mapped_repo, flag, ATOMS)  # %aN maps even with --no-mailmap; %an never
    git("config", "log.mailmap", "false", cwd=mapped_repo)
    try:
        same_as_git(mapped_repo)
        same_as_git(mapped_repo, "--use-mailmap")
        same_as_git(mapped_repo, ATOMS)
    finally:
        git("config", "--unset", "log.mailmap", cwd=mapped_repo)


def test_mailmap_file_and_blob_settings(tmp_path):
    repo = build(tmp_path / "settings", mailmap_in_tree=False)
    elsewhere = tmp_path / "elsewhere.mailmap"
    elsewhere.write_text("From File <a@x.org>\n<file@y.org> <b@x.org>\n")
    git("config", "mailmap.file", str(elsewhere), cwd=repo)
    same_as_git(repo)
    same_as_git(repo, ATOMS)
    # a blob: read before mailmap.file, which overrides it for the emails both name
    blob = git("hash-object", "-w", "--stdin", cwd=repo, input=MAILMAP.encode()).decode().strip()
    git("tag", "mm", blob, cwd=repo)
    git("config", "mailmap.blob", "mm", cwd=repo)
    same_as_git(repo)
    same_as_git(repo, ATOMS)
    # a work-tree .mailmap comes first of all
    (repo / ".mailmap").write_text("Tree Name <f@x.org>\nTree A <a@x.org>\n")
    same_as_git(repo, ATOMS)
    # a blob name that does not resolve is no mailmap (silently, as in git)
    git("config", "mailmap.blob", "nosuchref:.mailmap", cwd=repo)
    same_as_git(repo, ATOMS)


def test_a_bare_repository_reads_head_mailmap(tmp_path):
    work = build(tmp_path / "src")
    git("add", ".mailmap", cwd=work)
    git("commit", "-q", "-m", "mailmap", cwd=work)
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", work, bare)
    same_as_git(bare)
    same_as_git(bare, ATOMS)
    assert b"Proper One" in packscope_in(bare, "log", ATOMS).stdout  # HEAD:.mailmap was read at all


def test_a_symlinked_work_tree_mailmap_is_not_followed(tmp_path):
    repo = build(tmp_path / "link", mailmap_in_tree=False)
    target = tmp_path / "real.mailmap"
    target.write_text(MAILMAP)
    (repo / ".mailmap").symlink_to(target)
    same_as_git(repo, ATOMS)
    assert b"Proper One" not in packscope_in(repo, "log", ATOMS).stdout


def test_the_parser_on_its_own():
    mm = Mailmap()
    mm.add_text(MAILMAP.encode())
    assert mm.map(b"A One", b"A@X.ORG") == (b"Proper One", b"A@X.ORG")
    assert mm.map(b"B Two", b"b@x.org") == (b"B Two", b"bee@y.org")
    assert mm.map(b"old NAME", b"d@X.org") == (b"Dee Proper", b"dee@y.org")
    assert mm.map(b"Other Name", b"d@x.org") == (b"Other Name", b"d@x.org")
    assert mm.map(b"E", b"e@x.org") == (b"Five  Right", b"e@x.org")
    assert mm.map(b"Someone", b"g@x.org") == (b"Gee Fallback", b"g@x.org")
    assert mm.map(b"g seven", b"G@x.org") == (b"Gee Proper", b"gee@y.org")
    assert mm.map(b"F Six", b"f@x.org") == (b"F Six", b"f@x.org")
