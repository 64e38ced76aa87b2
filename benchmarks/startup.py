"""``python -m benchmarks.startup``: where the start-up time of ``vfs apply`` goes.

Two views of ``python -m editors.cli apply`` on a small patch (3 files):

1. wall time, median of ``--runs`` runs, of a ladder of commands, each adding one step
   (interpreter, ``import vfs``, the apply modules, the whole command; then the ``vfs`` console
   script, where installed): the differences are what each step costs, and the ratio to
   ``python -c pass`` is what ``apply_small``'s target bounds;
2. ``python -X importtime``, median over the runs: the import tree, the heaviest imports with the
   first-party module that pulled each in, and what the first-party modules cost themselves.

``--json PATH`` writes both as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import inputs
from benchmarks.context import Context, check_process, restore

FIRST_PARTY = ("vfs", "backends", "editors", "benchmarks")
_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)$")


@dataclass
class Node:
    name: str
    self_us: int
    cumulative_us: int
    depth: int
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None


def parse_importtime(stderr: str) -> list[Node]:
    """The forest of ``-X importtime`` lines (children are printed before their parent)."""
    pending: dict[int, list[Node]] = defaultdict(list)
    roots: list[Node] = []
    for line in stderr.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        self_us, cumulative_us, indent, name = match.groups()
        depth = len(indent) // 2
        node = Node(name, int(self_us), int(cumulative_us), depth)
        node.children = pending.pop(depth + 1, [])
        for child in node.children:
            child.parent = node
        if depth == 0:
            roots.append(node)
        else:
            pending[depth].append(node)
    return roots


def walk(nodes: list[Node]) -> list[Node]:
    out: list[Node] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def is_first_party(name: str) -> bool:
    return name.split(".")[0] in FIRST_PARTY


def importer(node: Node) -> str:
    """The nearest first-party ancestor (who is to blame), or the top of the chain."""
    chain = []
    current = node.parent
    while current is not None:
        chain.append(current.name)
        if is_first_party(current.name):
            return current.name
        current = current.parent
    return chain[-1] if chain else "(run time)"


def _small_case(root: Path) -> tuple[bytes, dict[Path, bytes]]:
    sources = {f"pkg/mod_{i}.py": inputs.source(lines=300, seed=100 + i) for i in range(3)}
    case = inputs.update_patch(sources, 2)
    return case.patch.encode("utf-8"), {root / path: data for path, data in case.files.items()}


def measure(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="vfs-startup-") as tmp:
        root = Path(tmp)
        ctx = Context(root, "quick")
        patch, originals = _small_case(root)
        py = ctx.python
        ladder = [
            ("python -c pass", [py, "-c", "pass"], None),
            ("python -S -c pass (no site-packages)", [py, "-S", "-c", "pass"], None),
            ("import vfs", [py, "-c", "import vfs"], None),
            ("import vfs, backends.local", [py, "-c", "import vfs, backends.local"], None),
            (
                "import vfs, backends.local and the apply modules",
                [py, "-c", "import vfs, backends.local, editors.apply_patch.tool, editors.adapters.cli.apply_cmd"],
                None,
            ),
            ("python -m editors.cli --help", [py, "-m", "editors.cli", "--help"], None),
            ("python -m editors.cli apply (3-file patch)", [*ctx.vfs_cli("apply")], patch),
        ]
        script = Path(py).parent / "vfs"  # the console script, where vfs is installed in this interpreter
        if script.is_file():
            ladder.append(("vfs apply (the console script; 3-file patch)", [str(script), "apply"], patch))
        walls: dict[str, list[float]] = defaultdict(list)
        cpus: dict[str, list[float]] = defaultdict(list)
        for _ in range(runs):
            for label, argv, stdin in ladder:
                restore(originals)
                result = ctx.run(argv, stdin=stdin, cwd=root)
                check_process(result, label)
                walls[label].append(result.seconds)
                cpus[label].append(result.cpu)
        trees: list[list[Node]] = []
        for _ in range(runs):
            restore(originals)
            result = ctx.run([py, "-X", "importtime", *ctx.vfs_cli("apply")[1:]], stdin=patch, cwd=root)
            check_process(result, "importtime")
            trees.append(parse_importtime(result.stderr.decode("utf-8", "replace")))

    steps = [
        {
            "step": label,
            "wall_ms": statistics.median(walls[label]) * 1e3,
            "cpu_ms": statistics.median(cpus[label]) * 1e3,
        }
        for label, _, _ in ladder
    ]
    # Median per module over runs (by name; the tree has the same shape every run).
    per_module: dict[str, dict[str, Any]] = {}
    samples: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for roots in trees:
        for node in walk(roots):
            samples[node.name].append((node.self_us, node.cumulative_us))
            per_module.setdefault(node.name, {"importer": importer(node), "depth": node.depth})
    for name, values in samples.items():
        per_module[name]["self_ms"] = statistics.median(v[0] for v in values) / 1e3
        per_module[name]["cumulative_ms"] = statistics.median(v[1] for v in values) / 1e3
    total = sum(per_module[n.name]["cumulative_ms"] for n in trees[0])
    return {"runs": runs, "steps": steps, "import_total_ms": total, "modules": per_module}


def render(data: dict[str, Any], top: int) -> str:
    lines = [
        f"Start-up ladder (median of {data['runs']} runs; wall and child CPU; + = over `python -c pass`, x = ratio):",
        "",
    ]
    base = data["steps"][0]["wall_ms"]
    for step in data["steps"]:
        ratio = step["wall_ms"] / base if base else float("nan")
        delta = "" if step is data["steps"][0] else f"  ({step['wall_ms'] - base:+.0f} ms, {ratio:.2f}x)"
        lines.append(f"  {step['wall_ms']:7.1f} ms wall  {step['cpu_ms']:7.1f} ms CPU  {step['step']}{delta}")
    modules = data["modules"]
    lines += [
        "",
        f"-X importtime of `vfs apply`: {data['import_total_ms']:.0f} ms of imports in all (inflated by the tracing).",
    ]
    lines += ["", "Heaviest imports that are not ours (cumulative ms, who imported them):", ""]
    foreign = [
        (name, info)
        for name, info in modules.items()
        if not is_first_party(name) and (info["importer"] and (is_first_party(info["importer"]) or info["depth"] == 0))
    ]
    foreign.sort(key=lambda item: -item[1]["cumulative_ms"])
    for name, info in foreign[:top]:
        lines.append(f"  {info['cumulative_ms']:7.1f} ms  {name:40s} <- {info['importer']}")
    lines += ["", "Our modules (self ms = their own top-level code; cumulative includes what they import):", ""]
    ours = sorted(((n, i) for n, i in modules.items() if is_first_party(n)), key=lambda item: -item[1]["cumulative_ms"])
    for name, info in ours[:top]:
        lines.append(f"  {info['self_ms']:7.1f} ms self  {info['cumulative_ms']:7.1f} ms cumulative  {name}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    data = measure(args.runs)
    sys.stdout.write(render(data, args.top))
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
