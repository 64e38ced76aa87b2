"""vfs: a transactional view of any filesystem, for coding agents.

Open a workspace, group changes to any number of files into a transaction, and commit them
atomically, with concurrent modification detected and a crash always recoverable::

    import vfs

    ws = vfs.open_workspace("memory://demo")
    with ws.transaction(label="rename") as tx:
        tx.write("/workspace/a.txt", b"hello\\n")
        tx.move("/workspace/a.txt", "/workspace/b.txt")

See ``docs/vfs-api.md`` for the whole API. Importing vfs never imports fsspec, s3fs or boto3.
"""

from vfs.errors import (
    Aborted,
    AlreadyApplied,
    AmbiguousEdit,
    CorruptMetadata,
    EditNotFound,
    Exists,
    HardLinkRefused,
    HistoryGap,
    InvalidArgument,
    IOFailure,
    IsADirectory,
    NotADirectory,
    NotFound,
    NotObserved,
    NotRegularFile,
    NotText,
    PatchError,
    PermissionDenied,
    RecoveryNeeded,
    RollbackFailed,
    SandboxDenied,
    StaleVersion,
    TooLarge,
    Unsupported,
    VfsError,
    WorkspaceRootInvalid,
    code_of,
)
from vfs.history import Pruned, Rewind
from vfs.paths import META_DIR, MODES
from vfs.session import EditMemo, Observation, ObservationPolicy, Policy, Session, ViewMemory
from vfs.text import decode_text, dominant_newline, encode_text, has_bom
from vfs.transaction import Transaction
from vfs.txlog import Checkpoint
from vfs.types import (
    CREATE_IF_ABSENT,
    UNCONDITIONAL,
    Change,
    CommitResult,
    FileChange,
    HistoryEntry,
    Intent,
    Read,
    RecoveryReport,
    Stat,
    replace_if_version,
)
from vfs.workspace import DEFAULT_MOUNT, Workspace, open_workspace

__all__ = [
    "CREATE_IF_ABSENT",
    "DEFAULT_MOUNT",
    "META_DIR",
    "MODES",
    "UNCONDITIONAL",
    "Aborted",
    "AlreadyApplied",
    "AmbiguousEdit",
    "Change",
    "Checkpoint",
    "CommitResult",
    "CorruptMetadata",
    "EditMemo",
    "EditNotFound",
    "Exists",
    "FileChange",
    "HardLinkRefused",
    "HistoryEntry",
    "HistoryGap",
    "IOFailure",
    "Intent",
    "InvalidArgument",
    "IsADirectory",
    "NotADirectory",
    "NotFound",
    "NotObserved",
    "NotRegularFile",
    "NotText",
    "Observation",
    "ObservationPolicy",
    "PatchError",
    "PermissionDenied",
    "Policy",
    "Pruned",
    "Read",
    "RecoveryNeeded",
    "RecoveryReport",
    "Rewind",
    "RollbackFailed",
    "SandboxDenied",
    "Session",
    "StaleVersion",
    "Stat",
    "TooLarge",
    "Transaction",
    "Unsupported",
    "VfsError",
    "ViewMemory",
    "Workspace",
    "WorkspaceRootInvalid",
    "code_of",
    "decode_text",
    "dominant_newline",
    "encode_text",
    "has_bom",
    "open_workspace",
    "replace_if_version",
]
