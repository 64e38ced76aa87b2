"""``python -m benchmarks.startup``: where the start-up time of ``vfs apply`` goes.

Two views of ``python -m editors.cli apply`` on a small patch (3 files):

1. wall time, median of ``--runs`` runs, of a ladder of commands, each adding one step
   (interpreter, ``import vfs``, the apply modules, the whole command; then the ``vfs`` console
   script, where installed): the differences are what each step costs, and the ratio to
   ``python -c pass`` is what ``apply_small``'s target bounds;
2. ``python -X importtime``, median over the runs: the import tree, the heaviest imports with the
   first-party module that pulled each in, and what the first-party modules cost themselves.

The commands run a venv made by ``pip install .`` of the tree (``benchmarks/install.py``), as the
runner's whole-process series do and as users run vfs; ``--dev-interpreter`` runs this
interpreter instead (a development venv's editable finder slows every start). ``--json PATH``
writes both views as JSON.
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

from benchmarks import inputs, install
from benchmarks.context import REPO, Context, check_process, restore
from benchmarks.workloads import apply_small

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


def measure(runs: int, python: str | None = None) -> dict[str, Any]:
    """The ladder and the import trees, run with ``python`` (default: this interpreter)."""
    with tempfile.TemporaryDirectory(prefix="vfs-startup-") as tmp:
        root = Path(tmp)
        ctx = Context(root, "quick")
        if python is not None:
            ctx.process_python = python
        patch, originals = _small_case(root / "ws")
        py = ctx.process_python
        baselines = root / "baselines"
        baselines.mkdir()
        apply_small.write_baselines(baselines)
        workspace = root / "ws"
        ladder: list[tuple[str, list[str], bytes | None, Path]] = [
            ("python -c pass", [py, "-c", "pass"], None, workspace),
            ("python -S -c pass (no site-packages)", [py, "-S", "-c", "pass"], None, workspace),
            ("python -m, an empty module (the -m launcher)", [py, "-m", apply_small.EMPTY_MODULE], None, baselines),
            ("import vfs", [py, "-c", "import vfs"], None, workspace),
            ("import vfs, backends.local", [py, "-c", "import vfs, backends.local"], None, workspace),
            (
                "python -m, importing what vfs apply imports, no work",
                [py, "-m", apply_small.LOADED_MODULE],
                None,
                baselines,
            ),
            ("python -m editors.cli --help", [py, "-m", "editors.cli", "--help"], None, workspace),
            ("python -m editors.cli apply (3-file patch)", [*ctx.vfs_cli("apply")], patch, workspace),
        ]
        script = Path(py).parent / "vfs"  # the console script, where vfs is installed in this interpreter
        if script.is_file():
            ladder.append(("vfs apply (the console script; 3-file patch)", [str(script), "apply"], patch, workspace))
        walls: dict[str, list[float]] = defaultdict(list)
        cpus: dict[str, list[float]] = defaultdict(list)
        for _ in range(runs):
            for label, argv, stdin, cwd in ladder:
                restore(originals)
                result = ctx.run(argv, stdin=stdin, cwd=cwd)
                check_process(result, label)
                walls[label].append(result.seconds)
                cpus[label].append(result.cpu)
        trees: list[list[Node]] = []
        for _ in range(runs):
            restore(originals)
            result = ctx.run([py, "-X", "importtime", *ctx.vfs_cli("apply")[1:]], stdin=patch, cwd=workspace)
            check_process(result, "importtime")
            trees.append(parse_importtime(result.stderr.decode("utf-8", "replace")))

    steps = [
        {
            "step": label,
            "wall_ms": statistics.median(walls[label]) * 1e3,
            "cpu_ms": statistics.median(cpus[label]) * 1e3,
        }
        for label, _, _, _ in ladder
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
    parser.add_argument("--dev-interpreter", action="store_true", help="run this interpreter, not a regular install")
    args = parser.parse_args(argv)
    python = sys.executable
    if not args.dev_interpreter:
        python, said = install.regular_install(REPO)
        sys.stdout.write(f"Commands run {said}.\n")
    data = measure(args.runs, python)
    sys.stdout.write(render(data, args.top))
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
