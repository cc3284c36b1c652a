"""Where a change group sits when it could slide: git's indent heuristic
(diff.indentHeuristic, on by default) — a function added between two
others reads as the whole function added, not as its tail and the next
one's head.  Patch text compared with git diff's on files built here."""

from __future__ import annotations

import pytest

from packscope.core.history.commit_changes import file_changes, patch_lines
from packscope.core.repo.session import open_session
from tests.repos import git, git_text

C_OLD = "int a(void)\n{\n\treturn 1;\n}\n\nint c(void)\n{\n\treturn 3;\n}\n"
C_NEW = "int a(void)\n{\n\treturn 1;\n}\n\nint b(void)\n{\n\treturn 2;\n}\n\nint c(void)\n{\n\treturn 3;\n}\n"
PY_OLD = "def f():\n    if x:\n        y()\n\n    return 1\n\n\ndef g():\n    pass\n"
PY_NEW = "def f():\n    if x:\n        y()\n\n    if z:\n        y()\n\n    return 1\n\n\ndef g():\n    pass\n"
NESTED_OLD = "a {\n    b {\n        x\n    }\n}\n"
NESTED_NEW = "a {\n    b {\n        x\n    }\n    b {\n        x\n    }\n}\n"
# the pair sliding as far down as it goes differs from git's choice here
SLIDE_OLD = "\n    }\n\n    }\n    return x\ndef f():\n"
SLIDE_NEW = "\n    }\n\n    }\n    return x\ndef f():\n    return x\ndef f():\n"


@pytest.fixture(scope="module")
def slides_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("slides") / "repo"
    git("init", "-q", "-b", "main", repo)
    for name, text in (("f.c", C_OLD), ("f.py", PY_OLD), ("nested.txt", NESTED_OLD), ("slide.py", SLIDE_OLD)):
        (repo / name).write_text(text)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "old", cwd=repo)
    for name, text in (("f.c", C_NEW), ("f.py", PY_NEW), ("nested.txt", NESTED_NEW), ("slide.py", SLIDE_NEW)):
        (repo / name).write_text(text)
    git("commit", "-q", "-am", "new", cwd=repo)
    return repo


def test_added_blocks_sit_where_git_puts_them(slides_repo, backend_path):
    session = open_session(str(slides_repo))
    trees = [bytes.fromhex(git_text("rev-parse", f"{r}^{{tree}}", cwd=slides_repo).strip()) for r in ("HEAD~1", "HEAD")]
    for change in file_changes(session.store, trees[0], trees[1]):
        path = change.path.decode()
        want = git_text("diff", "HEAD~1", "HEAD", "--", path, cwd=slides_repo).splitlines()
        got = [line.decode() for line in patch_lines(session.store, change)]
        assert got == want, path
    # and the C file's hunk is the whole function added (the heuristic's point)
    c_patch = git_text("diff", "HEAD~1", "HEAD", "--", "f.c", cwd=slides_repo)
    assert "+int b(void)\n+{\n+\treturn 2;\n+}\n+\n" in c_patch
