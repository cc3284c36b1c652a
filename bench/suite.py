"""One ``packscope bench`` run: the chosen scenarios, the machine, one document."""

from __future__ import annotations

import os
import shutil
import sys
import time

from packscope.bench.machine import machine_details
from packscope.bench.results import SCHEMA_VERSION, ScenarioResult
from packscope.bench.runner import Context
from packscope.bench.scenarios import SCENARIOS, load

MIN_REPS = 5


def run_suite(names: list[str], ctx: Context, command: str = "") -> dict:
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenario(s): {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    scratch = ctx.scratch_root()  # each run has its own scratch directory: runs may share a work dir
    notes: list[str] = []
    scenarios: list[dict] = []
    doc = {
        "schema": SCHEMA_VERSION,
        "command": command,
        "tiny": ctx.tiny,
        "reps": ctx.reps,
        "budget_seconds": ctx.budget,
        "repo": ctx.repo,
        "work_dir": str(ctx.work_dir),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_details(),
        "load_start": list(os.getloadavg()),
        "notes": notes,
        "scenarios": scenarios,
    }
    if ctx.reps < MIN_REPS and not ctx.tiny:
        notes.append(f"only {ctx.reps} repetition(s): medians need at least {MIN_REPS} to mean much")
    for name in names or list(SCENARIOS):
        ctx.progress(f"{name} …")
        t0 = time.perf_counter()
        module = load(name)
        try:
            result = module.run(ctx)
        except Exception as e:  # one broken scenario must not lose the others' numbers
            import traceback

            traceback.print_exc(file=sys.stderr)
            result = ScenarioResult(
                name, getattr(module, "TITLE", name), available=False, reason=f"failed: {type(e).__name__}: {e}"
            )
        result.seconds = time.perf_counter() - t0
        scenarios.append(result.to_dict())
        ctx.progress(f"{name} done in {result.seconds:.1f} s")
    doc["load_end"] = list(os.getloadavg())
    shutil.rmtree(scratch, ignore_errors=True)
    return doc
