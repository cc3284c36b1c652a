"""Running measurements: repetitions, fresh processes, the run as a whole.

Rules every scenario gets from here:

* each repetition of each system is a fresh process — a whole command (timed
  from spawn to exit, start-up included, with the children's CPU time from
  ``getrusage``) or ``python -m packscope.bench.worker`` for an in-process API;
* each repetition gets fresh inputs (new random ids) from the scenario's
  ``inputs(rep)``, shared by every system in that repetition, so all systems
  answer the same question and no cache sees an id twice;
* the order of systems rotates from one repetition to the next, so none is
  always the one that runs first (cold caches) or last;
* a system that fails is reported with its error, and the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packscope.bench.inputs import describe
from packscope.bench.peers import bench_env, git_cmd, packscope_cmd, unavailable_reason
from packscope.bench.results import Case, Series, Target
from packscope.core.native import PURE_ENV


class MeasurementError(Exception):
    pass


@dataclass
class Context:
    """Settings of one ``packscope bench`` run, shared by every scenario."""

    reps: int = 5
    tiny: bool = False
    work_dir: Path = Path(".")
    repo: str | None = None  # the real history (--repo / PACKSCOPE_BENCH_REPO)
    seed: int = 20240601
    # git.git's size times each (``--scale``): the inputs of scale-growth
    scales: tuple[float, ...] = (0.1, 1.0)
    scale_graph: bool = False  # --commit-graph: those inputs with a commit-graph
    progress: Callable[[str], None] = lambda msg: None
    timeout: float = 3600.0
    # Seconds one system may spend on one case before its repetitions stop
    # (at least one always runs): some peers take minutes per repetition on
    # 1000 packs, and the run must end on a 2-core machine the same day.
    budget: float = 120.0
    scratch_dir: Path | None = None
    _cache: dict = field(default_factory=dict)

    def size(self, full, tiny):
        """A workload size: the full one, or the tiny one CI uses."""
        return tiny if self.tiny else full

    def scratch_root(self) -> Path:
        """This run's scratch space (removed at the end of the run)."""
        if self.scratch_dir is None:
            (self.work_dir / "scratch").mkdir(parents=True, exist_ok=True)
            self.scratch_dir = Path(tempfile.mkdtemp(prefix="run-", dir=self.work_dir / "scratch"))
        return self.scratch_dir

    def scratch(self) -> Path:
        """A new empty directory inside this run's scratch space."""
        return Path(tempfile.mkdtemp(dir=self.scratch_root()))

    def memo(self, key, make):
        """Build an input once per run (the id tables, the repositories)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


def _gnu_time() -> str | None:
    try:
        p = subprocess.run(["/usr/bin/time", "--version"], capture_output=True, text=True, timeout=10)
    except OSError:
        return None
    return "/usr/bin/time" if "GNU" in p.stdout + p.stderr else None


GNU_TIME = _gnu_time()


@dataclass
class ProcessSample:
    wall: float  # seconds, spawn to exit
    cpu: float  # user + system seconds of the child and the children it waited for
    max_rss_bytes: int  # the peak resident set of the child or of any process it waited for
    out: Path  # a file holding its stdout


def run_process(
    cmd: list[str],
    stdin_path: str | None = None,
    *,
    timeout: float = 3600.0,
    cwd: str | None = None,
    ok: tuple[int, ...] = (0,),
) -> tuple[float, float, Path]:
    """Run a whole command once: (wall seconds, CPU seconds of the child,
    path of a file holding its stdout)."""
    m = measure_process(cmd, stdin_path, timeout=timeout, cwd=cwd, ok=ok)
    return m.wall, m.cpu, m.out


def measure_process(
    cmd: list[str],
    stdin_path: str | None = None,
    *,
    timeout: float = 3600.0,
    cwd: str | None = None,
    ok: tuple[int, ...] = (0,),
    env: dict[str, str] | None = None,
) -> ProcessSample:
    """Run a whole command once and measure it.  stdout goes to a file, not a
    pipe, so the parent does no work while the child runs.  The child is
    reaped with ``os.wait4``: its own rusage (CPU and ``ru_maxrss``, which
    Linux raises to the peak of every descendant the child reaped — worker
    processes included, as ``/usr/bin/time`` reports), not the sum or
    maximum over every child this process ever had (RUSAGE_CHILDREN).

    Linux also carries into ``ru_maxrss`` the resident set of the process
    that exec'd the command — here the bench itself, tens of MiB, more than a
    git command's whole peak.  So when GNU time is installed the command runs
    under ``/usr/bin/time -f %M`` (a small C process forks it), whose report
    is the peak; without it the number is an upper bound, and said so.
    ``env`` adds to (or overrides) the benchmark environment."""
    import signal
    import threading

    with (
        tempfile.NamedTemporaryFile(prefix="bench-out-", delete=False) as out,
        tempfile.TemporaryFile(prefix="bench-err-") as err,
        tempfile.NamedTemporaryFile(prefix="bench-rss-") as rss,
        open(stdin_path, "rb") if stdin_path else contextlib.nullcontext(subprocess.DEVNULL) as stdin,
    ):
        timed = [GNU_TIME, "-f", "%M", "-o", rss.name, *cmd] if GNU_TIME else cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(timed, stdin=stdin, stdout=out, stderr=err, env={**bench_env(), **(env or {})}, cwd=cwd)
        timer = threading.Timer(timeout, lambda: os.kill(p.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        if wall >= timeout and p.returncode < 0:
            Path(out.name).unlink(missing_ok=True)
            raise subprocess.TimeoutExpired(cmd, timeout)
        err.seek(0)
        stderr = err.read()
        peak = usage.ru_maxrss * 1024  # KiB on Linux
        if GNU_TIME:  # its last line (a first one says "Command exited with non-zero status N")
            lines = Path(rss.name).read_text().split()
            peak = int(lines[-1]) * 1024 if lines and lines[-1].isdigit() else peak
    cpu = usage.ru_utime + usage.ru_stime
    if p.returncode not in ok:
        Path(out.name).unlink(missing_ok=True)
        lines = stderr.decode(errors="replace").strip().splitlines()
        raise MeasurementError(f"{' '.join(cmd[:4])}… exited {p.returncode}: {lines[-1] if lines else ''}")
    return ProcessSample(wall, cpu, peak, Path(out.name))


def run_worker(call: str, args: dict, *, timeout: float = 3600.0) -> dict:
    """One in-process measurement in a fresh interpreter (see packscope.bench.worker)."""
    env = bench_env()  # the worker imports packscope as installed, like any user
    p = subprocess.run(
        [sys.executable, "-m", "packscope.bench.worker"],
        input=json.dumps({"call": call, "args": args}),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    lines = p.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        result = {}
    if p.returncode or "error" in result or "seconds" not in result:
        why = result.get("error") or (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise MeasurementError(f"{call} failed: {why}")
    return result


# --- one repetition of one system ---------------------------------------------------------


@dataclass
class ProcessRun:
    """A whole command.  ``verify(stdout_path)`` checks the answer (outside the
    timed region) and returns facts for the table (e.g. lines found/missing)."""

    series: Series
    cmd: Callable[[dict], list[str]]
    stdin: Callable[[dict], str | None] = lambda inputs: None
    verify: Callable[[Path, dict], dict] | None = None
    ok: tuple[int, ...] = (0,)  # exit statuses that are answers, not failures
    env: dict[str, str] | None = None  # added to the benchmark environment

    def once(self, inputs: dict, ctx: Context) -> None:
        m = measure_process(self.cmd(inputs), self.stdin(inputs), timeout=ctx.timeout, ok=self.ok, env=self.env)
        try:
            facts = self.verify(m.out, inputs) if self.verify else {}
        finally:
            m.out.unlink(missing_ok=True)
        self.series.add(m.wall, cpu_seconds=m.cpu, max_rss_bytes=m.max_rss_bytes)
        _merge_info(self.series, facts)


@dataclass
class WorkerRun:
    """An in-process API in a fresh interpreter; ``args(inputs)`` builds the
    worker's arguments.  The worker's ``seconds`` is the sample; every other
    number it returns becomes a side metric, and ``check(result, inputs)``
    turns its answer into facts (found, correct …)."""

    series: Series
    call: str
    args: Callable[[dict], dict]
    check: Callable[[dict, dict], dict] | None = None
    sample: str = "seconds"

    def once(self, inputs: dict, ctx: Context) -> None:
        t0 = time.perf_counter()
        result = run_worker(self.call, self.args(inputs), timeout=ctx.timeout)
        if self.series.unit != "s":
            result["wall_seconds"] = time.perf_counter() - t0  # for the time budget
        facts = self.check(result, inputs) if self.check else {}
        plain = ("answer", "items", self.sample)
        numbers = {
            k: v
            for k, v in result.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in plain
        }
        self.series.add(result[self.sample], **numbers)
        leftovers = {k: v for k, v in result.items() if k not in numbers and k not in (self.sample, "answer")}
        _merge_info(self.series, {**leftovers, **facts})


PURE_SUFFIX = " (pure Python)"


def pure_twin(run: ProcessRun) -> ProcessRun:
    """The same packscope command on the pure-Python path (``PACKSCOPE_PURE=1``,
    see packscope.core.native): a row beside the compiled one, so a table
    shows what the optional compiled module buys.  Targets name the compiled
    row; the twin has none."""
    s = run.series
    twin = Series(s.system + PURE_SUFFIX, s.role, s.group, s.unit)
    return ProcessRun(twin, run.cmd, run.stdin, run.verify, run.ok, {**(run.env or {}), PURE_ENV: "1"})


def cat_file_case(
    ctx: Context,
    label: str,
    repo: str,
    workload: dict,
    flag: str,
    target: tuple[float, str],
    verify: Callable[[Path, dict], dict],
    inputs: Callable[[int], dict],
) -> Case:
    """``packscope cat-file FLAG`` against ``git cat-file FLAG`` as whole
    processes (start-up included), both reading the inputs' ``hex`` ids;
    ``target`` is (the ratio packscope must stay under, its description)."""
    ps, git = f"packscope cat-file {flag}", f"git cat-file {flag}"
    case = Case(f"{label} · whole process", label, workload, targets=[Target(ps, git, *target)])
    compiled = ProcessRun(
        Series(ps, "packscope"), lambda i: packscope_cmd(repo, "cat-file", flag), lambda i: i["hex"], verify
    )
    runs = [
        compiled,
        pure_twin(compiled),
        ProcessRun(Series(git), lambda i: git_cmd(repo, "cat-file", flag), lambda i: i["hex"], verify),
    ]
    return repeat(case, runs, inputs, ctx)


def one_worker_case(
    ctx: Context,
    name: str,
    label: str,
    repo: str,
    series: str,
    call: str,
    args: Callable[[dict], dict],
    check: Callable[[dict, dict], dict] | None = None,
) -> Case:
    """A case of one packscope in-process row (``series``, the worker
    function ``call``) on ``repo``, measured ``ctx.reps`` times; the inputs
    are the repository alone."""
    case = Case(name, label, describe(repo))
    run = WorkerRun(Series(series, "packscope", "in-process"), call, args, check=check)
    return repeat(case, [run], lambda rep: {}, ctx)


def api_series(system: str, label: str) -> Series:
    """An in-process row for ``system`` (packscope or a peer library),
    skipped with the reason when the peer is not installed."""
    s = Series(label, "packscope" if system == "packscope" else "peer", "in-process")
    why = None if system == "packscope" else unavailable_reason(system)
    if why:
        s.skip(why)
    return s


def _merge_info(series: Series, facts: dict) -> None:
    # ``correct`` must hold in every repetition; other facts keep the last
    # value (counts of the last repetition's answer).
    for k, v in facts.items():
        if isinstance(v, bool) and k in series.info:
            series.info[k] = bool(series.info[k]) and v
        else:
            series.info[k] = v


# One system's repetitions, as a whole command or as an in-process worker.
Run = ProcessRun | WorkerRun


def repeat(case: Case, runs: Sequence[Run], inputs: Callable[[int], dict], ctx: Context) -> Case:
    """Measure every run ``ctx.reps`` times with fresh inputs per repetition."""
    live = [r for r in runs if r.series.available]
    for r in runs:
        if r.series not in case.series:
            case.series.append(r.series)
    for rep in range(ctx.reps):
        todo = [r for r in live if r.series.available and sum(r.series.samples_seconds) < ctx.budget]
        if not todo:
            break
        data = inputs(rep)
        k = rep % len(todo)
        for r in todo[k:] + todo[:k]:
            try:
                r.once(data, ctx)
            except (MeasurementError, subprocess.TimeoutExpired, OSError) as e:
                r.series.skip(f"failed: {e}")
                continue
            ctx.progress(
                f"  {case.name} · {r.series.system}: rep {rep + 1}/{ctx.reps} "
                f"{r.series.samples[-1]:.4g} {r.series.unit}"
            )
        _cleanup(data)
    for r in live:
        done = len(r.series.samples)
        if r.series.available and 0 < done < ctx.reps:
            r.series.note = (
                f"{done} of {ctx.reps} repetitions: one takes "
                f"{r.series.samples_seconds[0]:.0f} s, over the {ctx.budget:.0f} s budget per system"
            )
    return case


def _cleanup(data: dict) -> None:
    for v in data.values():
        if isinstance(v, str) and os.path.basename(v).startswith("bench-ids-"):
            Path(v).unlink(missing_ok=True)
