"""Rendering results: the terminal/Markdown table, the JSON document, the PNG plot, machine facts."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks import peers
from benchmarks.context import REPO
from benchmarks.core import SeriesResult, Summary, TargetResult, Unit, WorkloadResult, summarize

# -- machine ----------------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return None


def _filesystem(path: Path) -> str:
    """The mount (device, type) holding ``path``: fsync costs depend on it."""
    try:
        best = ("", "?", "?")
        real = str(path.resolve())
        for line in Path("/proc/mounts").read_text().splitlines():
            device, mount, kind = line.split()[:3]
            if (real == mount or real.startswith(mount.rstrip("/") + "/")) and len(mount) > len(best[0]):
                best = (mount, kind, device)
        return f"{best[1]} on {best[2]} (mounted at {best[0]})"
    except OSError:
        return "?"


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        )
        dirty = subprocess.run(
            [
                "git",
                "-C",
                str(REPO),
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                "vfs",
                "backends",
                "editors",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            return None
        return out.stdout.strip() + (" (+ uncommitted changes in vfs/backends/editors)" if dirty.stdout.strip() else "")
    except OSError:
        return None


def machine(workdir: Path) -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(_memory_gib() or 0, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "filesystem": _filesystem(workdir),
        "load_average_at_start": [round(x, 2) for x in load] if load else None,
        "commit": _git_commit(),
        "peers": {
            name: (peer.version or "installed") if peer.available else f"missing: {peer.missing}"
            for name, peer in peers.all_peers().items()
        },
    }


# -- formatting -------------------------------------------------------------------------------------


def fmt_count(value: float, *like: float) -> str:
    """A count as a plain number: ``812``, ``8.12``, ``1,024``; with the precision of ``like`` too
    (the other end of a range: ``8.00 - 8.50``, not ``8 - 8.50``)."""
    if all(math.isfinite(v) and v == round(v) for v in (value, *like)):
        return f"{value:,.0f}"
    return f"{value:,.2f}"


def fmt_value(value: float, unit: str, quantity: str = "", *like: float) -> str:
    """``value`` in ``unit``: ``"149 ms"``, ``"322.8 MB"``, ``"8.12 requests/file"`` (a count of
    ``quantity``, as precise as ``like``: see :func:`fmt_count`)."""
    if unit == "count":
        return f"{fmt_count(value, *like)} {quantity}" if quantity else fmt_count(value, *like)
    if unit == "bytes":
        return f"{value / 1e6:,.1f} MB"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 0.01:
        return f"{value * 1e3:.0f} ms"
    return f"{value * 1e3:.2f} ms"


def fmt_ratio(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.2f}x"


def _target_number(result: TargetResult, value: float, *like: float) -> str:
    """A value of an absolute target: in its series' unit; a count bare (the label says of what)."""
    return fmt_count(value, *like) if result.unit == "count" else fmt_value(value, result.unit)


def _target_value(result: TargetResult) -> str:
    if result.value is None:
        return "-"
    if result.target.kind == "absolute":
        return _target_number(result, result.value)
    return fmt_ratio(result.value)


def _target_bound(result: TargetResult) -> str:
    t = result.target
    if math.isinf(t.bound):
        return "(info)"
    if t.kind == "absolute":
        # A time bound reads as issue 7 words it ("< 0.1 s"): a median of timings never equals it.
        return f"{'<' if result.unit == 's' else '<='} {_target_number(result, t.bound)}"
    if t.kind == "scaled" and t.scale_label:
        return f"<= {t.bound:g}x {t.scale_label}"
    return f"<= {t.bound:g}x"


def _earlier_bound(result: TargetResult) -> str:
    """The target's earlier bound and whether the median meets it ("<= 2.5x: met")."""
    t = result.target
    if t.earlier is None:
        return "-"
    bound = _target_bound(replace(result, target=replace(t, bound=t.earlier)))
    if result.value is None:
        return bound
    return f"{bound}: {'met' if result.value <= t.earlier else 'missed'}"


def _target_spread(result: TargetResult) -> str:
    if result.low is None or result.high is None:
        return "-"
    if result.target.kind == "absolute":
        low, high = result.low, result.high
        return f"{_target_number(result, low, high)} - {_target_number(result, high, low)}"
    return f"{result.low:.2f} - {result.high:.2f}x"


def _status(result: TargetResult) -> str:
    if math.isinf(result.target.bound) and result.status in ("met", "missed"):
        return "info"
    return {"met": "met", "missed": "**MISSED**", "missing": "missing", "failed": "**FAILED**"}[result.status]


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return out


def targets_table(results: list[WorkloadResult]) -> list[str]:
    rows = []
    for wr in results:
        if wr.workload.missing:
            rows.append([wr.workload.name, wr.workload.title, "-", "-", "-", "-", "missing: " + wr.workload.missing])
            continue
        for tr in wr.targets:
            status = _status(tr)
            if tr.status in ("missing", "failed") and tr.reason:
                status += f": {tr.reason}"
            rows.append(
                [
                    wr.workload.name,
                    tr.target.label,
                    _target_value(tr),
                    _target_bound(tr),
                    _earlier_bound(tr),
                    _target_spread(tr),
                    status,
                ]
            )
    header = ["workload", "target", "measured", "bound", "earlier bound", "range over runs", "status"]
    return _md_table(header, rows)


def _spread(summary: Summary, unit: str, quantity: str = "") -> str:
    low, high = summary.min, summary.max
    return f"{fmt_value(low, unit, '', high)} - {fmt_value(high, unit, quantity, low)}"


def _extra(sr: SeriesResult) -> str:
    """Side measurements, medians: CPU seconds of a process (steadier than wall time under load).

    A name ending in ``_s`` is seconds (``server_cpu_s``: "server CPU 1.30 s"); others are counts.
    """
    parts = []
    for name, values in sorted(sr.extras.items()):
        summary = summarize(values)
        if summary is None:
            continue
        if name.endswith("_s"):
            words = {"cpu_s": "CPU", "wall_s": "wall"}.get(name) or name[:-2].replace("_", " ").replace("cpu", "CPU")
            parts.append(f"{words} {fmt_value(summary.median, 's')}")
        else:
            parts.append(f"{name.replace('_', ' ')} {fmt_count(summary.median)}")
    return ", ".join(parts)


def series_table(wr: WorkloadResult) -> list[str]:
    rows = []
    for sr in wr.series.values():
        s = sr.series
        if not s.available:
            rows.append([s.label, s.role, "missing", "-", "-", s.missing or ""])
        elif sr.summary is None:
            rows.append([s.label, s.role, "-", "-", "0", "no samples"])
        else:
            spread = f"IQR +-{sr.summary.rel_spread * 100:.0f} %"
            extra = _extra(sr)
            rows.append(
                [
                    s.label,
                    s.role,
                    fmt_value(sr.summary.median, s.unit, s.quantity),
                    _spread(sr.summary, s.unit, s.quantity),
                    str(sr.summary.n),
                    f"{spread}; {extra}" if extra else spread,
                ]
            )
    return _md_table(["series", "role", "median", "min - max", "runs", "spread; side measurements"], rows)


def _runs(results: list[WorkloadResult], reps: int) -> str:
    """The workloads whose recorded repetitions differ from the run's ``reps``, and why."""
    parts = []
    for wr in results:
        w = wr.workload
        if w.missing or wr.reps == reps:
            continue
        if w.runs is not None and wr.reps == w.runs < reps * max(1, w.repeat):
            why = f"at most {w.runs}: long runs"
        elif w.repeat > 1 and wr.reps == reps * w.repeat:
            why = f"{w.repeat}x: short, noisy runs"
        else:
            why = ""
        parts.append(f"{w.name} {wr.reps}" + (f" ({why})" if why else ""))
    return "; repetitions per workload where they differ: " + ", ".join(parts) if parts else ""


def markdown(results: list[WorkloadResult], meta: dict[str, Any], *, details: bool = True) -> str:
    m = meta["machine"]
    cfg = meta["config"]
    lines = [
        "Ratios are ours / peer (or / baseline) of the medians; below the bound is better. "
        '"range over runs" is the min - max of the per-repetition ratios (runs alternate, so each '
        "repetition pairs one run of each); for an absolute bound (a time, a count) the median itself "
        "and its min - max.",
        "",
        *targets_table(results),
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, {m['python']}; "
        f"files on {m['filesystem']}. Load average (1, 5, 15 min) at start: {m['load_average_at_start']}, "
        f"at end: {m.get('load_average_at_end')} (other work on the machine widens the ranges). "
        f"Commit {m['commit']}, {m['date']}.",
        "",
        "Peers: " + "; ".join(f"{k}: {v}" for k, v in m["peers"].items()) + ".",
        "",
        f"Our processes (and the bare interpreter beside them) run {cfg.get('processes', 'with the runner')}.",
        "",
        f"Run: `{cfg['command']}` ({cfg['profile']} sizes, {cfg['reps']} repetitions after "
        f"{cfg['warmup']} warm-up, alternating{_runs(results, cfg['reps'])}; each series' recorded runs: "
        'the "runs" column of its table).',
    ]
    if details:
        for wr in results:
            if wr.workload.missing:
                continue
            lines += ["", f"### {wr.workload.title}", ""]
            params = ", ".join(
                f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in wr.workload.params.items()
            )
            lines += [f"Parameters: {params}.", ""]
            lines += series_table(wr)
            notes = [tr.target for tr in wr.targets if tr.target.note] + []
            for target in notes:
                lines += ["", f"- {target.label}: {target.note}"]
            for note in wr.workload.notes:
                lines += ["", f"- {note}"]
            if wr.error:
                lines += ["", f"**{wr.error}**"]
    return "\n".join(lines) + "\n"


# -- JSON ---------------------------------------------------------------------------------------------


def _series_json(sr: SeriesResult) -> dict[str, Any]:
    s = sr.series
    return {
        "key": s.key,
        "label": s.label,
        "role": s.role,
        "unit": s.unit,
        "quantity": s.quantity,
        "missing": s.missing,
        "samples": sr.samples,
        "summary": sr.summary.to_dict() if sr.summary else None,
        "extras": sr.extras,
    }


def _target_json(tr: TargetResult) -> dict[str, Any]:
    t = tr.target
    return {
        "label": t.label,
        "kind": t.kind,
        "numerator": t.numerator,
        "denominator": t.denominator,
        "scale": t.scale,
        "scale_label": t.scale_label,
        # what value, range and bound are in: a ratio, or the numerator's unit (absolute bounds)
        "unit": tr.unit if t.kind == "absolute" else "ratio",
        "quantity": tr.quantity if t.kind == "absolute" else "",
        "bound": None if math.isinf(t.bound) else t.bound,
        "earlier_bound": t.earlier,
        "informative": math.isinf(t.bound),
        "value": tr.value,
        "range": [tr.low, tr.high],
        "status": tr.status,
        "reason": tr.reason,
        "note": t.note,
    }


def to_json(results: list[WorkloadResult], meta: dict[str, Any]) -> dict[str, Any]:
    return {
        **meta,
        "workloads": [
            {
                "name": wr.workload.name,
                "title": wr.workload.title,
                "params": wr.workload.params,
                "missing": wr.workload.missing,
                "error": wr.error,
                "seconds": round(wr.seconds, 2),
                "reps": wr.reps,
                "warmup": wr.warmup,
                "series": [_series_json(sr) for sr in wr.series.values()],
                "targets": [_target_json(tr) for tr in wr.targets],
            }
            for wr in results
        ],
    }


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n")


# -- plot ---------------------------------------------------------------------------------------------


def panels(results: list[WorkloadResult]) -> list[tuple[str, Unit, str, list[SeriesResult]]]:
    """The plot's series panels: (title, unit, quantity, series), one per workload and unit.

    A workload's series share a panel when they share a unit; a count (S3 requests per file) gets
    a panel of its own, after the workload's time (or memory) panel, never an axis in seconds.
    """
    out: list[tuple[str, Unit, str, list[SeriesResult]]] = []
    for wr in results:
        if wr.workload.missing:
            continue
        groups: dict[tuple[Unit, str], list[SeriesResult]] = {}
        for sr in wr.series.values():
            groups.setdefault((sr.series.unit, sr.series.quantity), []).append(sr)
        for i, ((unit, quantity), srs) in enumerate(groups.items()):
            title = wr.workload.title if i == 0 else f"{wr.workload.title}: {quantity or unit}"
            out.append((title, unit, quantity, srs))
    return out


_AXIS = {"s": (1e3, "ms (median, whiskers min - max)"), "bytes": (1e-6, "MB (peak RSS)")}


def plot(results: list[WorkloadResult], path: Path, meta: dict[str, Any]) -> str | None:
    """A PNG: one panel of the targets, then per workload one panel per unit (median, min - max).

    Returns why no plot was drawn (matplotlib missing), or None.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (bash benchmarks/install_peers.sh python): no PNG written"

    shown = [wr for wr in results if not wr.workload.missing]
    series_panels = panels(shown)
    n_targets = sum(1 for wr in shown for tr in wr.targets if not math.isinf(tr.target.bound))
    heights = [max(2.0, 0.55 * n_targets)] + [max(1.6, 0.42 * len(srs)) for *_, srs in series_panels]
    fig, axes = plt.subplots(
        len(heights),
        1,
        figsize=(10, 1.0 + sum(heights) * 1.25),
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    colours = {"ours": "#1f77b4", "peer": "#ff7f0e", "baseline": "#7f7f7f"}

    # Targets panel first: the headline.
    ax = axes[0][0]
    rows = [(wr.workload.name, tr) for wr in shown for tr in wr.targets if not math.isinf(tr.target.bound)]
    labels, values, bounds, cols = [], [], [], []
    for name, tr in rows:
        t = tr.target
        labels.append(textwrap.fill(f"{name}: {t.label}", 48))
        if tr.value is None:
            values.append(0.0)
            cols.append("#cccccc")
            bounds.append(1.0)
            continue
        # Normalise to the bound: 1.0 is the target line for every row (a bound of 0: met only at 0).
        values.append(tr.value / t.bound if t.bound else (0.0 if tr.value <= 0 else 2.0))
        bounds.append(1.0)
        cols.append("#2ca02c" if tr.status == "met" else "#d62728")
    y = list(range(len(labels)))
    ax.barh(y, values, color=cols)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    for i, (_, tr) in enumerate(rows):
        text = "missing" if tr.value is None else f"{_target_value(tr)} ({_target_bound(tr)})"
        ax.text(max(values[i], 0) + 0.02, i, text, va="center", fontsize=7)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("measured / bound (left of the dashed line = target met)", fontsize=8)
    ax.set_title("Targets (issue 7)", fontsize=10)
    ax.set_xlim(0, max([*values, 1.0]) * 1.35)

    for ax, (title, unit, quantity, srs) in zip((row[0] for row in axes[1:]), series_panels, strict=True):
        scale, xlabel = _AXIS.get(unit) or (1.0, f"{quantity or 'count'} (median, whiskers min - max)")
        labels = [textwrap.fill(sr.series.label, 40) for sr in srs]
        med = [sr.summary.median * scale if sr.summary else 0 for sr in srs]
        low = [(sr.summary.median - sr.summary.min) * scale if sr.summary else 0 for sr in srs]
        high = [(sr.summary.max - sr.summary.median) * scale if sr.summary else 0 for sr in srs]
        y = list(range(len(srs)))
        ax.barh(y, med, xerr=[low, high], color=[colours[sr.series.role] for sr in srs], capsize=3)
        for i, sr in enumerate(srs):
            shown_value = fmt_value(sr.summary.median, unit, quantity) if sr.summary else "-"
            text = "missing" if not sr.series.available else shown_value
            ax.text(med[i] + high[i], i, " " + text, va="center", fontsize=7)
        ax.set_yticks(y, labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_xlim(0, max([m + h for m, h in zip(med, high, strict=True)] + [1e-9]) * 1.3)
    m = meta["machine"]
    fig.suptitle(f"vfs benchmarks - {m['cpu']}, {m['cores']} cores, {m['python']} - {m['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def print_terminal(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
