"""The README's terminal run of checkpoint, rewind and redo: every command of its console block
runs as written, in a shell, in a directory holding the files the block shows
with ``cat``; the output must be the block's, line by line, once transaction ids, times, the
directory and the history's size (which holds the directory's name) are normalized."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.adapters.support import REPO, cli_env

DOC = REPO / "README.md"
SHOWN_ROOT = "/home/me/project"
VOLATILE = [
    (re.compile(r"\d{20}-[0-9a-f]{8}"), "<txid>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), "<time>"),
    (re.compile(r"\d+(\.\d)? (bytes|KiB|MiB)"), "<size>"),
]


def session() -> list[tuple[str, str]]:
    """(command, expected output) of every ``$`` line of the console block."""
    block = re.search(r"```console\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert block is not None
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines(keepends=True):
        if line.startswith("$ "):
            steps.append((line[2:].rstrip("\n"), []))
        else:
            steps[-1][1].append(line)
    return [(command, "".join(lines)) for command, lines in steps]


def _normalize(text: str, root: Path) -> str:
    text = text.replace(str(root), SHOWN_ROOT)
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def test_the_terminal_run_shows_checkpoint_rewind_and_redo() -> None:
    commands = [command for command, _ in session()]
    assert [c.split()[:2] for c in commands if c.startswith("vfs ")] == [
        ["vfs", "checkpoint"], ["vfs", "apply"], ["vfs", "rewind"], ["vfs", "rewind"], ["vfs", "redo"], ["vfs", "log"],
    ]  # fmt: skip
    assert "--dry-run" in commands[4]


def test_every_command_runs_as_written(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "vfs").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m editors.cli "$@"\n')
    (shim / "vfs").chmod(0o755)
    steps = session()
    for command, expected in steps:  # the files the block shows before it changes them
        name = command.removeprefix("cat ")
        if command.startswith("cat ") and not (root / name).exists():
            (root / name).write_text(expected)
    env = cli_env(PATH=f"{shim}:{cli_env()['PATH']}")
    for command, expected in steps:
        done = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr)
        assert _normalize(done.stdout, root) == _normalize(expected, root), command
