"""The one error vocabulary of vfs (a leaf module: it imports nothing from the project).

Every error carries a stable ``code`` (``FS_NOT_FOUND``, ...) and a message written for a model:
one or two plain sentences, no traceback. Storage errors also subclass the matching builtin, so
``except FileNotFoundError`` keeps working for callers that do not know about vfs.

Backends raise builtin exceptions (``OSError`` and friends, ``backends.base.PreconditionFailed``);
they are translated into this vocabulary in exactly one place, ``vfs.storage``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import ClassVar

SANDBOX_TAG = "[sandbox: file access denied under {mode} mode]"


class VfsError(Exception):
    """Base of every error vfs raises on purpose. ``code`` is stable; ``message`` is for a model."""

    code: ClassVar[str] = "FS_ERROR"

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, str | None]:
        """A JSON-friendly form used by the adapters (CLI, MCP, tool results)."""
        return {"code": self.code, "message": self.message, "path": self.path}


class NotFound(VfsError, FileNotFoundError):
    code = "FS_NOT_FOUND"


class Exists(VfsError, FileExistsError):
    code = "FS_EXISTS"


class NotADirectory(VfsError, NotADirectoryError):
    code = "FS_NOT_DIRECTORY"


class NotRegularFile(VfsError, OSError):
    code = "FS_NOT_REGULAR_FILE"


class IsADirectory(VfsError, IsADirectoryError):
    code = "FS_IS_DIRECTORY"


class NotText(VfsError, UnicodeError):
    code = "FS_NOT_TEXT"


class TooLarge(VfsError, OSError):
    code = "FS_TOO_LARGE"


class PermissionDenied(VfsError, PermissionError):
    """The operating system or the store refused the operation."""

    code = "FS_PERMISSION_DENIED"


class HardLinkRefused(VfsError, OSError):
    """The file has other names (hard links); replacing it would split them. Nothing changed."""

    code = "FS_HARD_LINKED"


class CorruptMetadata(VfsError):
    """A record under ``.vfs/`` failed its checks (length, digest, format, or a key that leaves
    the root). Nothing was written from it."""

    code = "FS_CORRUPT_METADATA"


class RecoveryNeeded(VfsError):
    """An interrupted commit is still unresolved: the tree may be mid-commit. Commits are refused
    until ``vfs recover`` (or ``Workspace.recover()``) finishes it."""

    code = "FS_RECOVERY_NEEDED"


class HistoryGap(VfsError):
    """Undo refused: a newer commit left no history record, so the newest record is not the
    newest change."""

    code = "FS_HISTORY_GAP"


class SandboxDenied(VfsError, PermissionError):
    """Our own policy refused the operation (path outside the root, read-only mode, ...)."""

    code = "FS_SANDBOX_DENIED"

    def __init__(self, message: str, *, path: str | None = None, mode: str = "workspace-write") -> None:
        tag = SANDBOX_TAG.format(mode=mode)
        if tag not in message:
            message = f"{message} {tag}" if message else tag
        super().__init__(message, path=path)
        self.mode = mode


class StaleVersion(VfsError):
    """What is stored is not what was observed: someone else changed it. Nothing was written."""

    code = "FS_STALE_VERSION"


class NotObserved(VfsError):
    code = "FS_NOT_OBSERVED"


class EditNotFound(VfsError):
    code = "FS_EDIT_NOT_FOUND"


class AmbiguousEdit(VfsError):
    code = "FS_AMBIGUOUS_EDIT"


class AlreadyApplied(VfsError):
    """The change an edit asks for is already in the file (a retry or a repeat); nothing was written."""

    code = "FS_ALREADY_APPLIED"


class WorkspaceRootInvalid(VfsError, NotADirectoryError):
    """The workspace root does not exist or is not a directory."""

    code = "FS_BAD_ROOT"


class IOFailure(VfsError, OSError):
    code = "FS_IO_ERROR"


class RollbackFailed(VfsError, OSError):
    """A commit failed and restoring the old state failed too; the journal is kept for recovery."""

    code = "FS_ROLLBACK_FAILED"


class Aborted(VfsError):
    code = "FS_ABORTED"


class InvalidArgument(VfsError, ValueError):
    """A caller passed something malformed (bad mode, bad path syntax, bad option)."""

    code = "FS_INVALID_ARGUMENT"


class Unsupported(VfsError):
    """The backend cannot do this at all (for example ``danger-full-access`` on S3)."""

    code = "FS_UNSUPPORTED"


class PatchError(VfsError):
    """Base of the apply_patch codes; the editors define the concrete ones."""

    code = "PATCH_ERROR"


ALL_ERRORS: tuple[type[VfsError], ...] = (
    NotFound,
    Exists,
    NotADirectory,
    NotRegularFile,
    IsADirectory,
    NotText,
    TooLarge,
    PermissionDenied,
    HardLinkRefused,
    CorruptMetadata,
    RecoveryNeeded,
    HistoryGap,
    SandboxDenied,
    StaleVersion,
    NotObserved,
    EditNotFound,
    AmbiguousEdit,
    AlreadyApplied,
    WorkspaceRootInvalid,
    IOFailure,
    RollbackFailed,
    Aborted,
    InvalidArgument,
    Unsupported,
)


def code_of(exc: BaseException) -> str:
    """The stable code of any exception (``FS_IO_ERROR`` for foreign ones)."""
    return exc.code if isinstance(exc, VfsError) else IOFailure.code
