"""What every verb shares: the workspace options and opening the workspace (errors: :mod:`.errors`)."""

from __future__ import annotations

import os
import sys

import vfs
from editors.adapters.cli.errors import is_terminal

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace
    from typing import Any


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
    """Open the workspace the common options name; ``options`` go to :class:`vfs.Workspace`.

    A root that cannot hold a workspace (a missing directory, a file, a missing bucket) is
    ``FS_BAD_ROOT``, from vfs (each backend checks its own root when it is opened). Missing
    credentials for an object store are said as such here, with how to give them on the command
    line, by every verb (instead of a botocore class name)."""
    root = args.root if args.root is not None else os.getcwd()
    try:
        return vfs.open_workspace(
            root,
            mode=getattr(args, "mode", "workspace-write"),
            mount=getattr(args, "mount", None),
            storage_options=parse_storage_options(args.storage_option),
            **options,
        )
    except vfs.VfsError as exc:
        raise _missing_credentials(str(root), exc) or exc from None


_OBJECT_STORES = ("s3://", "s3a://")
CREDENTIALS_HELP = (
    "Give them as environment variables (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE), "
    "or as storage options (--storage-option key=... --storage-option secret=...); a server other "
    "than AWS also needs --storage-option endpoint_url=URL (or AWS_ENDPOINT_URL)."
)


def _is_object_store(root: str) -> bool:
    return root.startswith(_OBJECT_STORES)


def _causes(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _missing_credentials(root: str, exc: vfs.VfsError) -> vfs.VfsError | None:
    """No credentials to reach the object store at ``root``, said with how to give them, or ``None``."""
    if not _is_object_store(root):
        return None
    names = {type(cause).__name__ for cause in _causes(exc)}
    text = " ".join(str(cause) for cause in _causes(exc))
    if names & {"NoCredentialsError", "PartialCredentialsError"} or "Unable to locate credentials" in text:
        return vfs.PermissionDenied(f"No S3 credentials were found for {root}. {CREDENTIALS_HELP}", path=root)
    return None


def read_stdin(waiting_for: str = "") -> bytes:
    """All of stdin, as bytes (a text stream without a buffer: tests feeding text). On a terminal,
    ``waiting_for`` is said on stderr first, so nobody waits for a command that waits for them."""
    if waiting_for and is_terminal(sys.stdin):
        from editors.adapters.cli.errors import write

        write(sys.stderr, f"{waiting_for} (end with Ctrl-D; Ctrl-C to cancel)\n")
    stdin = getattr(sys.stdin, "buffer", None)
    return bytes(stdin.read()) if stdin is not None else sys.stdin.read().encode("utf-8")
