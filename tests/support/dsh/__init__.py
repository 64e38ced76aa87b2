"""The real DSH ``str_replace_editor`` as a peer: where it is installed, how to run a batch of calls
through it (one node process, the replay benchmark's harness ``benchmarks/replay/dsh_harness.mjs``,
here over real directories), and real directory trees to run both editors on.

The package is installed by ``.ci/run`` into ``~/.cache/vfs-dsh/node_modules`` (outside the
repository, like Azurite); ``VFS_DSH_MODULES`` names another ``node_modules`` directory holding it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.replay.dsh import run_harness

PACKAGE = "@deepseek-ai/dsh-tool-str-replace-editor"
LOCAL_FS = "@deepseek-ai/dsh-fs-local"
DEFAULT_MODULES = Path.home() / ".cache" / "vfs-dsh" / "node_modules"

#: A tree: relative path -> bytes (file), None (directory) or Link(target) (symlink).
Tree = Mapping[str, "bytes | Link | None"]


@dataclass(frozen=True)
class Link:
    """A symlink whose target is ``target`` (relative to the link's directory, or absolute)."""

    target: str


@dataclass(frozen=True)
class Reply:
    text: str
    error: bool
    code: str | None


def missing_reason() -> str | None:
    """Why the peer cannot run here, or ``None`` when it can."""
    if shutil.which("node") is None:
        return "node is not installed (the DSH editor runs under node)"
    modules = modules_dir()
    for package in (PACKAGE, LOCAL_FS):
        if not (modules / package / "package.json").is_file():
            return f"{package} is not installed under {modules} (bash .ci/run installs it; or set VFS_DSH_MODULES)"
    return None


def modules_dir() -> Path:
    return Path(os.environ.get("VFS_DSH_MODULES") or DEFAULT_MODULES)


def run_peer(cases: Sequence[Mapping[str, Any]], *, timeout: float = 300) -> dict[str, list[Reply]]:
    """Run every case (``{id, root, max_output_chars, calls}``) in one node process: id -> replies."""
    return {
        item["id"]: [Reply(r["text"], r["error"], r["code"]) for r in item["results"]]
        for item in run_harness(modules_dir(), cases, timeout=timeout)
    }


def build_tree(root: Path, tree: Tree) -> None:
    """Lay ``tree`` out under ``root``; the case's directory (``root``'s parent, where keys starting
    ``../`` go, e.g. a symlink's target outside the root) is emptied first."""
    if root.parent.exists():
        shutil.rmtree(root.parent)
    root.mkdir(parents=True)
    made = {root}
    for rel in sorted(tree):
        content = tree[rel]
        target = root / rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.update(target.parents)
        if content is None:
            target.mkdir(exist_ok=True)
            made.add(target)
        elif isinstance(content, Link):
            os.symlink(content.target, target)
        else:
            target.write_bytes(content)


def read_tree(root: Path, *, skip: str = ".vfs") -> dict[str, bytes | Link | None]:
    """The tree under ``root`` as :data:`Tree` (symlinks not followed); ``skip`` at the top is left out."""
    out: dict[str, bytes | Link | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        if base == root and skip in dirnames:
            dirnames.remove(skip)
        for name in [*dirnames, *filenames]:
            path = base / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = Link(os.readlink(path))
            elif path.is_dir():
                out[rel] = None
            else:
                out[rel] = path.read_bytes()
    return out
