"""The measurement model: series measured in alternation, targets computed from their medians.

A *workload* holds several *series* (ours, each peer, a baseline) measuring the same thing on the
same input bytes, and the *targets* (issue 7) that compare them. The runner, for each repetition,
runs every available series once, in an order rotated from one repetition to the next:

    prepare()   untimed: restore the input files (and wait, flush, ...)
    measure()   the measured value in the series' ``unit``: seconds (timed by the series itself),
                bytes (peak RSS) or a count (S3 requests per file), or a ``Measured`` carrying side
                values too (a process's CPU seconds)
    verify()    untimed: the output must equal the reference bytes, else the run fails loudly

The first ``warmup`` repetitions are run and verified but not recorded; how many are recorded is
the runner's default, scaled by the workload (``Workload.repeat``, ``Workload.runs``: see
:func:`repetitions`). A series whose tool is not installed carries ``missing`` (the reason) and
shows as missing in every table; it is never run.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["ours", "peer", "baseline"]
#: What a series measures: seconds, bytes, or a plain count (``Series.quantity`` says of what).
Unit = Literal["s", "bytes", "count"]


def _noop() -> None:
    return None


class VerificationError(AssertionError):
    """A tool produced output different from the reference: the numbers would be meaningless."""


@dataclass(frozen=True)
class Measured:
    """A measured value with side measurements (``{"cpu_s": 0.21}``), kept per recorded run."""

    value: float
    extra: dict[str, float]


@dataclass
class Series:
    key: str  # stable id within the workload, e.g. "ours.inproc"
    label: str  # what the table shows, e.g. "vfs apply_patch (in-process)"
    role: Role
    measure: Callable[[], float | Measured]
    prepare: Callable[[], None] = _noop
    verify: Callable[[], None] = _noop
    unit: Unit = "s"
    missing: str | None = None
    note: str = ""
    #: With ``unit="count"``: what is counted, shown after the number ("8.12 requests/file").
    quantity: str = ""

    @property
    def available(self) -> bool:
        return self.missing is None


@dataclass
class Target:
    """``numerator`` / ``denominator`` (medians) <= ``bound``; or ``numerator`` <= ``bound`` (absolute).

    An absolute bound is in the numerator series' unit: seconds (``0.1``), bytes, or a count (``4``
    requests per file). ``scale`` divides the numerator instead of a series (peak RSS / file size);
    ``scale_label`` names it in the bound shown ("<= 3x file size"). ``bound=inf``: informative.
    """

    label: str
    numerator: str
    bound: float
    denominator: str | None = None
    scale: float | None = None
    scale_label: str = ""
    note: str = ""  # what the profile shows (filled by the workload)
    #: The bound this target had before it was raised (issue 20): kept so the table shows the
    #: history of the figure, met or not against both. ``None``: a target without an earlier bound.
    earlier: float | None = None

    @property
    def kind(self) -> Literal["ratio", "absolute", "scaled"]:
        if self.denominator is not None:
            return "ratio"
        return "scaled" if self.scale is not None else "absolute"


@dataclass
class Workload:
    name: str
    title: str
    params: dict[str, Any]
    series: list[Series]
    targets: list[Target] = field(default_factory=list)
    teardown: Callable[[], None] = _noop
    missing: str | None = None  # the whole workload cannot run (e.g. its module is absent)
    notes: list[str] = field(default_factory=list)
    #: Runs are short and noisy (fsync latency on a shared disk): this many times the repetitions.
    repeat: int = 1
    #: Runs are expensive (the S3 workload): at most this many recorded repetitions, unless the
    #: repetitions were asked for explicitly (``--reps``). See :func:`repetitions`.
    runs: int | None = None


def repetitions(workload: Workload, reps: int, *, explicit: bool = False) -> int:
    """The recorded repetitions of ``workload`` when the runner's count is ``reps``.

    ``reps`` times ``workload.repeat``; then, unless ``reps`` was given explicitly, at most
    ``workload.runs``.
    """
    planned = reps * max(1, workload.repeat)
    if workload.runs is not None and not explicit:
        planned = min(planned, max(1, workload.runs))
    return planned


@dataclass
class Summary:
    n: int
    median: float
    mean: float
    min: float
    max: float
    q1: float
    q3: float
    stdev: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def rel_spread(self) -> float:
        """Half the inter-quartile range relative to the median (0.05 = +-5 %)."""
        return (self.iqr / 2) / self.median if self.median else math.nan

    def to_dict(self) -> dict[str, float]:
        return {
            "n": self.n,
            "median": self.median,
            "mean": self.mean,
            "min": self.min,
            "max": self.max,
            "q1": self.q1,
            "q3": self.q3,
            "stdev": self.stdev,
        }


def summarize(samples: list[float]) -> Summary | None:
    if not samples:
        return None
    ordered = sorted(samples)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
        stdev = statistics.stdev(ordered)
    else:
        q1 = q3 = ordered[0]
        stdev = 0.0
    return Summary(
        len(ordered), statistics.median(ordered), statistics.fmean(ordered), ordered[0], ordered[-1], q1, q3, stdev
    )


@dataclass
class SeriesResult:
    series: Series
    samples: list[float]
    summary: Summary | None
    extras: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class TargetResult:
    target: Target
    value: float | None  # the ratio (or absolute value)
    low: float | None  # range of the paired per-repetition ratios
    high: float | None
    status: Literal["met", "missed", "missing", "failed"]
    reason: str = ""
    #: The numerator series' unit and quantity: what an absolute value and bound are in.
    unit: Unit = "s"
    quantity: str = ""


@dataclass
class WorkloadResult:
    workload: Workload
    series: dict[str, SeriesResult]
    targets: list[TargetResult]
    seconds: float
    error: str | None = None
    reps: int = 0  # recorded repetitions planned (a series' own count: its summary's n)
    warmup: int = 0


def timed(fn: Callable[[], Any]) -> float:
    """Wall-clock seconds of ``fn()``."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _paired(a: list[float], b: list[float]) -> list[float]:
    return [x / y for x, y in zip(a, b, strict=False) if y]


def unresolved(
    target: Target, results: dict[str, SeriesResult], status: Literal["missing", "failed"], reason: str
) -> TargetResult:
    """A target without a value, in its numerator's unit."""
    num = results.get(target.numerator)
    unit, quantity = (num.series.unit, num.series.quantity) if num is not None else ("s", "")
    return TargetResult(target, None, None, None, status, reason, unit, quantity)


def evaluate(target: Target, results: dict[str, SeriesResult]) -> TargetResult:
    num = results.get(target.numerator)
    den = results.get(target.denominator) if target.denominator else None
    for part in (num, den) if target.denominator else (num,):
        if part is None or not part.series.available:
            reason = part.series.missing if part is not None else "series not defined"
            return unresolved(target, results, "missing", reason or "")
        if part.summary is None:
            return unresolved(target, results, "failed", "no samples")
    assert num is not None and num.summary is not None
    if den is not None:
        assert den.summary is not None
        value = num.summary.median / den.summary.median
        pairs = _paired(num.samples, den.samples)
        low, high = (min(pairs), max(pairs)) if pairs else (None, None)
    elif target.scale is not None:
        value = num.summary.median / target.scale
        low, high = num.summary.min / target.scale, num.summary.max / target.scale
    else:
        value = num.summary.median
        low, high = num.summary.min, num.summary.max
    status: Literal["met", "missed"] = "met" if value <= target.bound else "missed"
    return TargetResult(target, value, low, high, status, "", num.series.unit, num.series.quantity)


def run_workload(
    workload: Workload,
    *,
    reps: int,
    warmup: int,
    explicit: bool = False,
    sync: bool = True,
    log: Callable[[str], None] = print,
) -> WorkloadResult:
    """Run every available series ``warmup`` + :func:`repetitions` times in rotated alternation.

    ``explicit``: ``reps`` was asked for (``--reps``), so the workload's ``runs`` does not cap it.
    """
    start = time.perf_counter()
    reps = repetitions(workload, reps, explicit=explicit)
    available = [s for s in workload.series if s.available]
    samples: dict[str, list[float]] = {s.key: [] for s in workload.series}
    extras: dict[str, dict[str, list[float]]] = {s.key: {} for s in workload.series}
    error = None
    try:
        for rep in range(warmup + reps):
            shift = rep % len(available) if available else 0
            order = available[shift:] + available[:shift]
            for series in order:
                series.prepare()
                if sync:
                    os.sync()  # every run starts with nothing dirty in the page cache
                measured = series.measure()
                series.verify()
                if rep >= warmup:
                    if isinstance(measured, Measured):
                        samples[series.key].append(measured.value)
                        for name, extra in measured.extra.items():
                            extras[series.key].setdefault(name, []).append(extra)
                    else:
                        samples[series.key].append(measured)
            tag = "warm-up" if rep < warmup else f"rep {rep - warmup + 1}/{reps}"
            log(f"  {workload.name}: {tag} done")
    except VerificationError as exc:
        error = f"output verification failed: {exc}"
    finally:
        workload.teardown()
    results = {
        s.key: SeriesResult(s, samples[s.key], summarize(samples[s.key]), extras[s.key]) for s in workload.series
    }
    if error is not None:
        targets = [unresolved(t, results, "failed", error) for t in workload.targets]
    else:
        targets = [evaluate(t, results) for t in workload.targets]
    return WorkloadResult(workload, results, targets, time.perf_counter() - start, error, reps, warmup)
