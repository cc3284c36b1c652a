"""The repository may change under any screen: a writer commits, moves a
branch, repacks (`git repack -a -d`) and collects (`git gc --prune=now`) in
a loop of a fixed number of rounds while each screen's main action runs
again and again through its model — Health's check (the forked run and the
settling of its findings), a Lab batch, History's walk of --all, the
Commit screen's last-commit column.

Required: no exception out of any of them; a walk that stops says the
repository changed; every finding Health leaves standing unmarked is one
`git fsck` of the final state also makes.  The writer is bounded by its
rounds, not by time."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from packscope.core.fsck.parallel import default_jobs
from packscope.core.repo.repo_state import state_of
from packscope.inspector import health_run, lab_batch
from packscope.inspector.core_access import CoreAccess
from packscope.inspector.history_model import HistoryLog
from packscope.inspector.last_commits import last_commits
from tests import repos
from tests.repos import git, git_env, git_text

ROUNDS = 15

WRITER = r"""
set -e
i=0
while [ $i -lt {rounds} ]; do
  i=$((i+1))
  echo "round $i" > "g$((i % 4))"
  git add -A
  git commit -q -m "round $i"
  git branch -f "loop$i"
  git repack -a -d -q
  git gc -q --prune=now
done
"""


def chaos_repo(root: Path) -> Path:
    work = repos.work_tree_with_commits(root / "work", 12)
    (work / "dir").mkdir()
    for i in range(6):
        (work / "dir" / f"e{i}").write_text(f"{i}\n")
    git("add", "dir", cwd=work)
    git("commit", "-q", "-m", "dir", cwd=work)
    git("repack", "-a", "-d", "-q", cwd=work)
    return work


def git_fsck_dangling(work: Path) -> tuple[int, set[str]]:
    status, out = repos.git_fsck(work)
    return status, {line.split()[-1] for line in out.splitlines() if line.startswith("dangling ")}


class Jobs:
    """Each screen's main action through its model; what each one saw."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.path = str(work)
        self.runs = {"health": 0, "lab": 0, "history": 0, "last-commits": 0}
        self.changed = dict.fromkeys(self.runs, 0)
        self.standing: list = []  # Health's findings neither dropped nor marked
        self.walk_errors: list[str] = []

    def health(self) -> None:
        core = CoreAccess(self.path)
        core.open()
        try:
            repo = core.repo
        finally:
            core.close()
        start = state_of(repo)
        entries: list = []
        health_run.run_check(repo, "full", lambda *a: None, entries.append, lambda: False, min(2, default_jobs()))
        settled = health_run.settle_run(repo, [e.finding for e in entries], start)
        self.standing += settled.kept
        self.changed["health"] += settled.change is not None
        self.runs["health"] += 1

    def lab(self) -> None:
        core = CoreAccess(self.path)
        core.open()
        try:
            ids = lab_batch.sample_ids(core.store, core.lock, 300, "mixed", seed=self.runs["lab"])
            res = lab_batch.run_batch(core.store, core.lock, ids, "chaos", repo=core.repo)
            assert res.lookups == len(ids)
            self.changed["lab"] += res.changed is not None
        finally:
            core.close()
        self.runs["lab"] += 1

    def history(self) -> None:
        core = CoreAccess(self.path)
        core.open()
        try:
            log = HistoryLog(core, ["--all"])
            log.demand(float("inf"))
            log.run(lambda: None, lambda: False)
            assert log.done
            if log.error:  # a walk may stop when its objects vanish, but then it says why
                assert log.changed, log.error
                self.walk_errors.append(log.error)
            self.changed["history"] += log.changed is not None
        finally:
            core.close()
        self.runs["history"] += 1

    def last_commits(self) -> None:
        core = CoreAccess(self.path)
        core.open()
        seen: list[str] = []
        try:
            head = bytes.fromhex(git_text("rev-parse", "HEAD", cwd=self.work).strip())
            found: list = []
            last_commits(core, head, b"dir", {b"e0", b"e1"}, found=found.extend, changed=seen.append)
            self.changed["last-commits"] += bool(seen)
        finally:
            core.close()
        self.runs["last-commits"] += 1


def test_every_screen_s_main_action_beside_a_repack_loop(tmp_path):
    work = chaos_repo(tmp_path)
    jobs = Jobs(work)
    errors: list[BaseException] = []
    writer = subprocess.Popen(
        ["bash", "-c", WRITER.format(rounds=ROUNDS)],
        cwd=work,
        env=git_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    done = threading.Event()

    def run_jobs() -> None:
        # round after round of every job until the writer ends (and one full round at least)
        try:
            while True:
                for job in (jobs.health, jobs.lab, jobs.history, jobs.last_commits):
                    job()
                if done.is_set():
                    return
        except BaseException as e:  # the assertion below reports it with its traceback
            errors.append(e)

    t = threading.Thread(target=run_jobs)
    t.start()
    out, _ = writer.communicate()
    done.set()
    t.join()
    assert writer.returncode == 0, out.decode(errors="replace")
    if errors:
        raise errors[0]
    status, dangling = git_fsck_dangling(work)
    assert status == 0
    not_in_git = [f.message for f in jobs.standing if not (f.kind == "dangling" and f.oid in dangling)]
    assert not_in_git == [], not_in_git
    assert all(n >= 1 for n in jobs.runs.values()), jobs.runs
    # the jobs ran beside the writer: some of them saw it
    assert sum(jobs.changed.values()) >= 1, (jobs.runs, jobs.changed)


def test_a_loose_subdirectory_pruned_while_the_lab_samples_reads_as_empty(tmp_path, monkeypatch):
    """gc removes objects/xx between the Lab's look at the directory and its
    listing (the chaos run above hit this): the batch's ids come from what
    is left, never a FileNotFoundError."""
    import os

    repo = repos.build_loose(tmp_path, blobs=40)
    core = CoreAccess(str(repo))
    core.open()
    try:
        objects = core.store.objects_dir
        pruned = sorted(d for d in os.listdir(objects) if len(d) == 2)[0]
        gone = os.path.join(objects, pruned)
        listdir, scandir = os.listdir, os.scandir

        def vanished(real):
            def call(path="."):
                if os.fspath(path) == gone:
                    raise FileNotFoundError(2, "No such file or directory", gone)
                return real(path)

            return call

        monkeypatch.setattr(os, "listdir", vanished(listdir))
        monkeypatch.setattr(os, "scandir", vanished(scandir))
        ids = lab_batch.sample_ids(core.store, core.lock, 200, "present", seed=1)
    finally:
        core.close()
    assert len(ids) == 200
    assert not [oid for oid in ids if oid.hex().startswith(pruned)]
