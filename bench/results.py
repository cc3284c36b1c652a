"""What a benchmark run produces: plain data, turned into JSON as is.

* ``Series`` — one system measured ``reps`` times (samples in seconds unless
  ``unit`` says otherwise), plus named side metrics (CPU seconds, open time,
  page faults, probes …) with their own samples.
* ``Case`` — one input and workload, every system measured on it in the same
  run; ratios are packscope's median over each peer's median, within a
  ``group`` (whole processes are only compared with whole processes).
* ``ScenarioResult`` — the cases of one scenario, or why it is not available.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

SCHEMA_VERSION = 1


def summary(samples: list[float]) -> dict:
    if not samples:
        return {"median": None, "min": None, "max": None, "samples": []}
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": list(samples)}


@dataclass
class Series:
    system: str  # what is shown in the table, e.g. "git cat-file --batch-check"
    role: str = "peer"  # "packscope" or "peer"
    group: str = "process"  # ratios are taken within a group
    unit: str = "s"
    samples: list[float] = field(default_factory=list)
    metrics: dict[str, list[float]] = field(default_factory=dict)
    info: dict = field(default_factory=dict)  # per-run facts that do not vary (answers, counts)
    available: bool = True
    note: str | None = None

    def add(self, value: float, **metrics: float) -> None:
        self.samples.append(value)
        for k, v in metrics.items():
            if v is not None:
                self.metrics.setdefault(k, []).append(v)

    @property
    def samples_seconds(self) -> list[float]:
        """Wall time of each repetition, whatever the unit of the samples."""
        return self.metrics.get("wall_seconds", self.samples) if self.unit != "s" else self.samples

    def skip(self, reason: str) -> Series:
        self.available = False
        self.note = reason
        return self

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def metric_median(self, name: str) -> float | None:
        values = self.metrics.get(name)
        return statistics.median(values) if values else None

    def to_dict(self) -> dict:
        return {
            "system": self.system,
            "role": self.role,
            "group": self.group,
            "unit": self.unit,
            "available": self.available,
            "note": self.note,
            **summary(self.samples),
            "metrics": {k: summary(v) for k, v in self.metrics.items()},
            "info": self.info,
        }


@dataclass
class Target:
    """A goal from the benchmark issue: packscope ≤ ``max_ratio`` × peer."""

    packscope: str
    peer: str
    max_ratio: float
    label: str

    def evaluate(self, case: Case) -> dict:
        ratio = case.ratio(self.packscope, self.peer)
        cpu = case.cpu_ratio(self.packscope, self.peer)
        return {
            "label": self.label,
            "packscope": self.packscope,
            "peer": self.peer,
            "max_ratio": self.max_ratio,
            "ratio": ratio,
            "met": None if ratio is None else ratio <= self.max_ratio,
            "cpu_ratio": cpu,
            "met_cpu": None if cpu is None else cpu <= self.max_ratio,
        }


@dataclass
class Case:
    name: str
    input: str
    workload: dict = field(default_factory=dict)
    series: list[Series] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra_ratios: list[tuple[str, str]] = field(default_factory=list)  # (numerator, denominator)

    def get(self, system: str) -> Series | None:
        return next((s for s in self.series if s.system == system), None)

    def ratio(self, a: str, b: str) -> float | None:
        sa, sb = self.get(a), self.get(b)
        if sa is None or sb is None:
            return None
        ma, mb = sa.median, sb.median  # None when a series has no samples
        return ma / mb if ma is not None and mb else None

    def cpu_ratio(self, a: str, b: str) -> float | None:
        sa, sb = self.get(a), self.get(b)
        if sa is None or sb is None:
            return None
        ca, cb = sa.metric_median("cpu_seconds"), sb.metric_median("cpu_seconds")
        return ca / cb if ca is not None and cb else None

    def ratios(self) -> list[dict]:
        out = []
        for p in self.series:
            if p.role != "packscope" or not p.samples:
                continue
            for q in self.series:
                if q.role == "peer" and q.group == p.group and q.samples:
                    out.append(
                        {
                            "packscope": p.system,
                            "peer": q.system,
                            "group": p.group,
                            "ratio": self.ratio(p.system, q.system),
                            "cpu_ratio": self.cpu_ratio(p.system, q.system),
                        }
                    )
        for a, b in self.extra_ratios:
            r = self.ratio(a, b)
            if r is not None:
                out.append(
                    {
                        "packscope": a,
                        "peer": b,
                        "group": "within packscope",
                        "ratio": r,
                        "cpu_ratio": self.cpu_ratio(a, b),
                    }
                )
        return out

    def to_dict(self) -> dict:
        return {
            "case": self.name,
            "input": self.input,
            "workload": self.workload,
            "systems": [s.to_dict() for s in self.series],
            "ratios": self.ratios(),
            "targets": [t.evaluate(self) for t in self.targets],
            "notes": self.notes,
        }


@dataclass
class ScenarioResult:
    name: str
    title: str
    available: bool = True
    reason: str | None = None
    layout: str = "list"  # "list": a row per system; "matrix": a row per case, a column per system
    cases: list[Case] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0  # wall time the scenario took, builds included
    # Side metrics shown as columns in the list layout: (metric name, header).
    columns: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "scenario": self.name,
            "title": self.title,
            "available": self.available,
            "reason": self.reason,
            "layout": self.layout,
            "notes": self.notes,
            "columns": [list(c) for c in self.columns],
            "seconds": self.seconds,
            "cases": [c.to_dict() for c in self.cases],
        }
