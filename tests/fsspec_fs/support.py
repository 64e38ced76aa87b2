"""Helpers for the fsspec-filesystem tests: the package's entry points as declared in
pyproject.toml, made visible to fsspec (in process) or to a fresh interpreter (subprocess)."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def declared_entry_points() -> dict[str, dict[str, str]]:
    """group -> name -> "module:attr", from pyproject.toml (what an install would register)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups: dict[str, dict[str, str]] = project.get("entry-points", {})
    return groups


def register_in_process() -> None:
    """Make the declared ``vfs`` protocol known to this process's fsspec and universal_pathlib.

    The venv may hold an editable install of another checkout whose metadata predates these
    entry points (``pip install -e .`` refreshes it); the strings registered are the declared
    ones, so a wrong declaration still fails here. The subprocess tests check the entry point
    mechanism itself.
    """
    import fsspec
    from upath.registry import register_implementation as register_upath

    declared = declared_entry_points()
    fsspec.register_implementation("vfs", declared["fsspec.specs"]["vfs"].replace(":", "."), clobber=True)
    register_upath("vfs", declared["universal_pathlib.implementations"]["vfs"].replace(":", "."), clobber=True)


def metadata_dir(tmp: Path) -> Path:
    """A folder holding this checkout's distribution metadata (name and entry points), to put
    first on a subprocess's path: importlib.metadata then finds these entry points first."""
    info = tmp / "vfs-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vfs\nVersion: 0.1.0\n", encoding="utf-8")
    lines = []
    for group, entries in declared_entry_points().items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in entries.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return tmp


def subprocess_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of a fresh interpreter that sees this checkout and its entry points."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    inherited = [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
    env["PYTHONPATH"] = os.pathsep.join([str(metadata_dir(tmp)), str(REPO), *inherited])
    env.update(extra)
    return env


PYTHON = sys.executable
