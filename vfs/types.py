"""Plain value types of the public API (no behaviour, no I/O)."""

from __future__ import annotations

from backends.values import field, value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Literal

    Kind = Literal["file", "directory", "symlink", "other"]
    Action = Literal["add", "modify", "delete", "mkdir", "rmdir"]


@value(frozen=True)
class Stat:
    """What is at a model-facing path. ``version`` is opaque (``None`` for directories)."""

    path: str
    kind: Kind
    size: int = 0
    mode: int | None = None
    version: str | None = None

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def is_file(self) -> bool:
        return self.kind == "file"

    @property
    def is_dir(self) -> bool:
        return self.kind == "directory"


@value(frozen=True)
class Read:
    """The bytes of a file and the version of exactly those bytes (``None`` if staged, uncommitted)."""

    path: str
    data: bytes
    version: str | None
    mode: int | None = None


@value(frozen=True)
class Intent:
    """How a write relates to what is stored: see :data:`UNCONDITIONAL` and friends."""

    kind: Literal["unconditional", "create_if_absent", "replace_if_version"]
    version: str | None = None


#: Write whatever is there (still checked against what the transaction first saw, at commit).
UNCONDITIONAL = Intent("unconditional")
#: Write only if nothing exists at the path (never clobbers a concurrent create).
CREATE_IF_ABSENT = Intent("create_if_absent")


def replace_if_version(version: str) -> Intent:
    """Write only if the file still holds ``version``."""
    return Intent("replace_if_version", version)


@value(frozen=True)
class Change:
    path: str
    action: Action


@value(frozen=True)
class CommitResult:
    txid: str | None
    changes: list[Change] = field(default_factory=list)
    #: model-facing path -> version now stored (``None`` where the path was deleted)
    versions: dict[str, str | None] = field(default_factory=dict)
    #: What went wrong after the commit point (the change stands): e.g. its history record
    #: could not be written, so undo cannot reach it.
    warnings: list[str] = field(default_factory=list)


@value(frozen=True)
class HistoryEntry:
    txid: str
    timestamp: float
    label: str
    changes: list[Change]
    #: the session (conversation) that made it, if it said
    session: str | None = None


@value(frozen=True)
class FileChange:
    """A staged change of one file: its bytes before and after (``None``: absent)."""

    path: str
    before: bytes | None
    after: bytes | None


@value
class RecoveryReport:
    rolled_back: list[str] = field(default_factory=list)  # txids
    rolled_forward: list[str] = field(default_factory=list)  # txids finished by this recovery
    finished: list[str] = field(default_factory=list)  # txids whose cleanup was completed
    conflicts: list[str] = field(default_factory=list)  # human-readable problems left in place

    @property
    def clean(self) -> bool:
        return not self.conflicts
