"""What every verb shares: the workspace options and opening the workspace (errors: :mod:`.errors`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import vfs

if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace


def add_workspace_args(parser: argparse.ArgumentParser, *, mount: bool = True, mode: bool = True) -> None:
    """``--root``, ``--storage-option KEY=VALUE`` (repeatable), ``--mount``, ``--mode``."""
    parser.add_argument(
        "--root",
        default=None,
        help="workspace root: a directory, file://, memory://NAME, s3://BUCKET/PREFIX or any fsspec URL "
        "(default: the current directory)",
    )
    parser.add_argument(
        "--storage-option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="option passed to the storage backend, e.g. endpoint_url=http://127.0.0.1:9000 (repeatable)",
    )
    if mount:
        parser.add_argument("--mount", default=None, help="model-facing mount point of the root")
    if mode:
        parser.add_argument(
            "--mode",
            default="workspace-write",
            choices=list(vfs.MODES),
            help="policy mode (default: workspace-write)",
        )


def parse_storage_options(pairs: list[str]) -> dict[str, Any]:
    """``["endpoint_url=http://x", "anon=true"]`` -> dict; JSON-ish scalars are converted."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise vfs.InvalidArgument(f"--storage-option expects KEY=VALUE, got {pair!r}")
        lowered = value.lower()
        converted: Any = value
        if lowered in ("true", "false"):
            converted = lowered == "true"
        elif value.isdigit():
            converted = int(value)
        options[key] = converted
    return options


def open_workspace(args: argparse.Namespace | SimpleNamespace, **options: Any) -> vfs.Workspace:
    """Open the workspace the common options name; ``options`` go to :class:`vfs.Workspace`."""
    root = args.root if args.root is not None else os.getcwd()
    return vfs.open_workspace(
        root,
        mode=getattr(args, "mode", "workspace-write"),
        mount=getattr(args, "mount", None),
        storage_options=parse_storage_options(args.storage_option),
        **options,
    )


def read_stdin() -> bytes:
    """All of stdin, as bytes (a text stream without a buffer: tests feeding text)."""
    stdin = getattr(sys.stdin, "buffer", None)
    return bytes(stdin.read()) if stdin is not None else sys.stdin.read().encode("utf-8")
