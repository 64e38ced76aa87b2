"""``python -m benchmarks.replay``: the edit-replay benchmark (issue 15).

    python -m benchmarks.replay                    534+ attempts (34 per class), every tool, about a minute
    python -m benchmarks.replay --per-class 5      a quick look
    python -m benchmarks.replay --no-peers         ours only
    python -m benchmarks.replay --publish          also write docs/replay.md and docs/replay.png

How often the model's first call succeeds: every tool gets the same attempts (real code of the
running interpreter's standard library and installed packages, one documented mistake each; see
docs/replay.md) and is judged on the bytes of the files afterwards. Results go to
``benchmarks/results/replay/`` (gitignored): ``latest.json``, ``latest.md``, ``latest.png``.
"""

from __future__ import annotations

import argparse
import collections
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.context import REPO
from benchmarks.replay import corpus, score, tools

RESULTS = REPO / "benchmarks" / "results" / "replay"
DOCS = REPO / "docs"
DEFAULT_SEED = 15
DEFAULT_PER_CLASS = 34


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"corpus seed (default {DEFAULT_SEED})")
    parser.add_argument(
        "--per-class",
        type=int,
        default=DEFAULT_PER_CLASS,
        help=f"attempts per class (default {DEFAULT_PER_CLASS}: {DEFAULT_PER_CLASS * len(corpus.CLASSES)} in all)",
    )
    parser.add_argument("--classes", help="comma-separated subset of: " + ", ".join(corpus.CLASSES))
    parser.add_argument("--no-peers", action="store_true", help="run ours only")
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help="where results go (default benchmarks/results/replay)"
    )
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG")
    parser.add_argument("--publish", action="store_true", help="also write docs/replay.md and docs/replay.png")
    return parser.parse_args(argv)  # fmt: skip


def run(
    attempts: list[corpus.Attempt], tool_list: list[tools.Tool], log: Callable[[str], object] = print
) -> dict[str, list[score.Outcome]]:
    """Every available tool on every attempt it applies to: tool key -> outcomes."""
    results: dict[str, list[score.Outcome]] = {}
    for tool in tool_list:
        if tool.run_all is None:
            log(f"{tool.key}: missing ({tool.missing})")
            continue
        mine = [a for a in attempts if tools.applies(tool, a)]
        started = time.perf_counter()
        runs = tool.run_all(mine)
        results[tool.key] = [score.judge(tool.key, a, r) for a, r in zip(mine, runs, strict=True)]
        log(f"{tool.key}: {len(mine)} attempts in {time.perf_counter() - started:.1f} s")
    return results


# -- tallies ---------------------------------------------------------------------------------------


def tally(outcomes: list[score.Outcome]) -> dict[str, int]:
    counts = collections.Counter(o.outcome for o in outcomes)
    refusals = [o for o in outcomes if o.outcome.startswith("refused")]
    return {
        "attempts": len(outcomes),
        **{k: counts.get(k, 0) for k in score.OUTCOMES},
        "refusals_named": sum(o.named for o in refusals),
        "refusals_untouched": counts.get("refused", 0),
    }


def summarise(results: dict[str, list[score.Outcome]]) -> dict[str, Any]:
    per_tool: dict[str, Any] = {}
    for key, outcomes in results.items():
        mistakes = [o for o in outcomes if o.cls != "control"]
        per_class = {cls: tally([o for o in outcomes if o.cls == cls]) for cls in corpus.CLASSES}
        total: dict[str, float] = dict(tally(mistakes))
        total["success_rate"] = total["success"] / total["attempts"] if total["attempts"] else 0.0
        per_tool[key] = {"mistakes": total, "control": per_class["control"], "classes": per_class}
    return per_tool


def targets(summary: dict[str, Any], tool_list: list[tools.Tool]) -> list[dict[str, Any]]:
    peers_measured = {t.key: summary[t.key]["mistakes"]["success_rate"] for t in tool_list
                      if t.role == "peer" and t.key in summary}  # fmt: skip
    best_peer = max(peers_measured.items(), key=lambda kv: kv[1]) if peers_measured else None
    rows = []
    for tool in tool_list:
        if tool.role != "ours" or tool.key not in summary:
            continue
        s = summary[tool.key]
        wrong_classes = [c for c, t in s["classes"].items() if t["wrong"]]
        wrong_list = ", ".join(f"{c} {s['classes'][c]['wrong']}" for c in wrong_classes)
        rows.append(
            {
                "tool": tool.key,
                "target": "0 wrong edits in every class",
                "measured": f"{sum(t['wrong'] for t in s['classes'].values())} wrong"
                + (f" ({wrong_list})" if wrong_classes else ""),
                "met": not wrong_classes,
            }
        )
        rate = s["mistakes"]["success_rate"]
        if best_peer is None:
            rows.append(
                {
                    "tool": tool.key,
                    "target": "first-call success over all mistake classes >= 2x the best peer's",
                    "measured": f"{rate:.1%} (no peer measured)",
                    "met": None,
                }
            )
        else:
            ratio = rate / best_peer[1] if best_peer[1] else float("inf")
            rows.append(
                {
                    "tool": tool.key,
                    "target": "first-call success over all mistake classes >= 2x the best peer's",
                    "measured": f"{rate:.1%} vs {best_peer[0]} {best_peer[1]:.1%} = {ratio:.2f}x",
                    "met": ratio >= 2,
                }
            )
        m = s["mistakes"]
        refused = m["refused"] + m["refused_touched"]
        rows.append({
            "tool": tool.key, "target": "every refusal names the cause",
            "measured": f"{m['refusals_named']} of {refused} refusals", "met": m["refusals_named"] == refused,
        })  # fmt: skip
    return rows


# -- rendering -------------------------------------------------------------------------------------


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.0%})" if d else "-"


def markdown(summary: dict[str, Any], target_rows: list[dict[str, Any]], tool_list: list[tools.Tool],
             meta: dict[str, Any]) -> str:  # fmt: skip
    shown = [t for t in tool_list]
    lines = ["Targets (issue 15):", ""]
    lines += report._md_table(
        ["tool", "target", "measured", "status"],
        [[r["tool"], r["target"], r["measured"], "-" if r["met"] is None else "met" if r["met"] else "**MISSED**"]
         for r in target_rows],
    )  # fmt: skip
    lines += ["", "Over all mistake classes (control excluded; each tool on the classes of its format):", ""]
    rows = []
    for t in shown:
        if t.key not in summary:
            rows.append([t.label, t.family, "missing: " + (t.missing or "?"), "-", "-", "-", "-", "-"])
            continue
        m, c = summary[t.key]["mistakes"], summary[t.key]["control"]
        refused = m["refused"] + m["refused_touched"]
        rows.append([
            t.label, t.family, _pct(m["success"], m["attempts"]), str(m["wrong"]), str(refused),
            _pct(m["refusals_named"], refused), _pct(m["refused"], refused), _pct(c["success"], c["attempts"]),
        ])  # fmt: skip
    lines += report._md_table(
        ["tool", "format", "first-call success", "wrong edits", "refusals", "refusals naming the cause",
         "untouched on refusal", "control success"],
        rows,
    )  # fmt: skip
    lines += ["", "Per class: successes / attempts, then wrong edits (W), refusals (R) and how many of those "
              "name the cause (n); `n/a`: the class has no form in that tool's format.", ""]  # fmt: skip
    rows = []
    for cls in corpus.CLASSES:
        row = [cls]
        for t in shown:
            if t.key not in summary:
                row.append("missing")
                continue
            c = summary[t.key]["classes"][cls]
            if not c["attempts"]:
                row.append("n/a")
                continue
            refused = c["refused"] + c["refused_touched"]
            cell = f"{c['success']}/{c['attempts']}"
            if c["wrong"]:
                cell += f" **W{c['wrong']}**"
            if refused:
                cell += f" R{refused} n{c['refusals_named']}"
                if c["refused_touched"]:
                    cell += f" (partial {c['refused_touched']})"
            row.append(cell)
        rows.append(row)
    lines += report._md_table(["class", *[t.label for t in shown]], rows)
    m = meta["machine"]
    cfg = meta["config"]
    lines += [
        "",
        f"Corpus: {cfg['attempts']} attempts ({cfg['per_class']} per class, seed {cfg['seed']}) from "
        f"{cfg['source_files']} files of {m['python']}'s standard library and installed packages, read at run time. "
        f"Tools: " + "; ".join(f"{t.label}: {t.version or 'installed'}" if not t.missing else f"{t.label}: missing"
                               for t in tool_list) + ".",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['os']}; commit {m['commit']}, {m['date']}; "
        f"run took {cfg['seconds']:.0f} s. Run: `{cfg['command']}`.",
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(summary: dict[str, Any], tool_list: list[tools.Tool], path: Path, meta: dict[str, Any]) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (bash benchmarks/install_peers.sh python): no PNG written"
    shown = [t for t in tool_list if t.key in summary]
    classes = list(corpus.CLASSES)
    colours = {"ours.str_replace_editor": "#1f77b4", "ours.apply_patch": "#17becf", "codex": "#ff7f0e",
               "dsh": "#2ca02c", "openhands": "#9467bd"}  # fmt: skip
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.6 * len(classes) + 1.8), sharey=True)
    height = 0.8 / max(1, len(shown))
    for k, t in enumerate(shown):
        succ, wrong = [], []
        for cls in classes:
            c = summary[t.key]["classes"][cls]
            succ.append(c["success"] / c["attempts"] * 100 if c["attempts"] else float("nan"))
            wrong.append(c["wrong"] / c["attempts"] * 100 if c["attempts"] else float("nan"))
        ys = [i + k * height for i in range(len(classes))]
        axes[0].barh(ys, succ, height=height, color=colours.get(t.key, "#7f7f7f"), label=t.label)
        axes[1].barh(ys, wrong, height=height, color=colours.get(t.key, "#7f7f7f"), label=t.label)
    centre = [i + height * (len(shown) - 1) / 2 for i in range(len(classes))]
    axes[0].set_yticks(centre, classes, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].set_xlabel("first-call success, % of the class's attempts (higher is better)", fontsize=8)
    axes[1].set_xlabel("wrong edits, % of the class's attempts (the call succeeded, the bytes differ)", fontsize=8)
    axes[0].set_xlim(0, 105)
    axes[1].set_xlim(0, 105)
    axes[0].legend(fontsize=7, loc="lower right")
    m = meta["machine"]
    fig.suptitle(f"vfs edit replay: {meta['config']['attempts']} attempts, seed {meta['config']['seed']} - "
                 f"{m['python']} - {m['date']}", fontsize=9)  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    classes = [c.strip() for c in args.classes.split(",")] if args.classes else list(corpus.CLASSES)
    unknown = [c for c in classes if c not in corpus.CLASSES]
    if unknown:
        raise SystemExit(f"unknown classes: {', '.join(unknown)}")
    log(f"generating {args.per_class} attempts per class (seed {args.seed})")
    attempts = corpus.generate(args.seed, args.per_class, classes)
    tool_list = tools.all_tools(with_peers=not args.no_peers)
    results = run(attempts, tool_list, log)
    summary = summarise(results)
    target_rows = targets(summary, tool_list)
    command = "python -m benchmarks.replay " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])
    )
    meta: dict[str, Any] = {
        "machine": report.machine(REPO),
        "config": {
            "seed": args.seed, "per_class": args.per_class, "classes": classes, "attempts": len(attempts),
            "source_files": len({s for a in attempts for s in (f.source for f in a.files)}),
            "command": command.strip(), "seconds": time.perf_counter() - started,
        },
    }  # fmt: skip
    text = markdown(summary, target_rows, tool_list, meta)
    report.print_terminal("\n" + text)
    by_id = {k: {o.attempt: o for o in v} for k, v in results.items()}
    document = {
        **meta,
        "tools": [{"key": t.key, "label": t.label, "family": t.family, "role": t.role, "version": t.version,
                   "missing": t.missing} for t in tool_list],
        "targets": target_rows,
        "summary": summary,
        "attempts": [
            {**a.to_json(), "outcomes": {k: by_id[k][a.id].to_json() for k in results if a.id in by_id[k]}}
            for a in attempts
        ],
    }  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for name in (f"results-{stamp}.json", "latest.json"):
        (args.out / name).write_text(json.dumps(document, indent=1) + "\n")
    (args.out / "latest.md").write_text(text)
    written = [args.out / "latest.json", args.out / "latest.md"]
    if not args.no_plot:
        why = plot(summary, tool_list, args.out / "latest.png", meta)
        if why:
            log(f"plot: {why}")
        else:
            written.append(args.out / "latest.png")
    if args.publish:
        DOCS.mkdir(exist_ok=True)
        (DOCS / "replay.md").write_text(publish_text(text))
        written.append(DOCS / "replay.md")
        if (args.out / "latest.png").exists() and not args.no_plot:
            (DOCS / "replay.png").write_bytes((args.out / "latest.png").read_bytes())
            written.append(DOCS / "replay.png")
    log("wrote " + ", ".join(str(p) for p in written))
    return 0


def publish_text(table: str) -> str:
    methods = (REPO / "benchmarks" / "replay" / "METHOD.md").read_text()
    return (
        "# Edit replay: how often the model's first call succeeds\n\n"
        "Generated by `python -m benchmarks.replay --publish` (the README, section Benchmarks, says how to "
        "reproduce). The plot: `docs/replay.png`.\n\n![replay](replay.png)\n\n" + table + "\n" + methods
    )
