"""Journal records, their durable layout, and the rollback that both failed commits and crash
recovery use.

Layout under the workspace's metadata folder (``.vfs/``)::

    tx/<txid>.journal   written before the first target changes: every target's pre-image
                        (content or absence, mode, version), post-image hash, created directories
    tx/<txid>.done      the commit point: written after every target changed; a small JSON summary
                        (label, time, paths, the versions written) that ``vfs log`` reads

A journal without ``.done`` is an interrupted commit: recovery rolls it back. A journal with
``.done`` is history: its pre-images serve ``undo``.

A transaction with a single file target and no directory to create needs no journal for
atomicity: its one atomic replace (or unlink) is all-or-nothing. Its history record is written
after the change, not flushed, with ``committed`` set in the journal header, so recovery never
rolls it back; a power cut can cost that record (one undo step), never the change. History is pruned oldest first, ``.journal``
before ``.done`` (a lone ``.done`` is harmless; a lone ``.journal`` would mean "roll back").

``txid`` sorts by time, so listings give history in order without reading every file.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from backends.base import content_digest

State = Literal["file", "absent", "directory"]

MAGIC = b"VFSJOURNAL1\n"


def digest(data: bytes) -> str:
    """The post-image hash recorded per target; the same function the backends hash versions with,
    so the commit hands it to ``write`` rather than hash the content twice."""
    return content_digest(data)


def new_txid() -> str:
    return f"{time.time_ns():020d}-{os.urandom(4).hex()}"


@dataclass
class TargetRecord:
    """One changed path: what it held before the commit and what the commit puts there."""

    key: str
    path: str  # model-facing, for messages and the log
    before: State
    after: State
    before_version: str | None = None
    before_mode: int | None = None
    after_sha: str | None = None
    after_mode: int | None = None


@dataclass
class Journal:
    txid: str
    label: str
    created: float
    targets: list[TargetRecord]
    created_dirs: list[str] = field(default_factory=list)
    undo_of: str | None = None
    #: target index -> pre-image bytes (only targets that were files before)
    pre_images: dict[int, bytes] = field(default_factory=dict)
    #: written after the change landed (single-target commits): a history record, never rolled back
    committed: bool = False

    def encode(self) -> bytes:
        """``MAGIC``, one JSON header line, then the pre-images back to back."""
        return b"".join(self.encode_parts())

    def encode_parts(self) -> list[bytes]:
        """:meth:`encode` in pieces: the header, then each pre-image as it is (not copied)."""
        blobs: list[bytes] = []
        spans: dict[str, list[int]] = {}
        offset = 0
        for index in sorted(self.pre_images):
            blob = self.pre_images[index]
            spans[str(index)] = [offset, len(blob)]
            blobs.append(blob)
            offset += len(blob)
        header = {
            "txid": self.txid,
            "label": self.label,
            "created": self.created,
            "undo_of": self.undo_of,
            "committed": self.committed,
            "created_dirs": self.created_dirs,
            "targets": [vars(t) for t in self.targets],  # flat records: no deep copy (asdict) needed
            "blobs": spans,
        }
        return [MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n", *blobs]

    @classmethod
    def decode(cls, data: bytes) -> Journal:
        if not data.startswith(MAGIC):
            raise ValueError("not a vfs journal")
        newline = data.index(b"\n", len(MAGIC))
        header: dict[str, Any] = json.loads(data[len(MAGIC) : newline])
        body = memoryview(data)[newline + 1 :]
        pre_images = {int(k): bytes(body[o : o + n]) for k, (o, n) in header["blobs"].items()}
        return cls(
            txid=header["txid"],
            label=header["label"],
            created=header["created"],
            targets=[TargetRecord(**t) for t in header["targets"]],
            created_dirs=list(header["created_dirs"]),
            undo_of=header.get("undo_of"),
            pre_images=pre_images,
            committed=bool(header.get("committed", False)),
        )


@dataclass
class DoneRecord:
    """The commit mark and log entry of a committed transaction."""

    txid: str
    label: str
    created: float
    changes: list[tuple[str, str]]  # (model-facing path, action)
    versions: dict[str, str | None]  # key -> version written (None for a deleted path)
    undo_of: str | None = None

    def encode(self) -> bytes:
        return json.dumps(vars(self), sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> DoneRecord:
        raw = json.loads(data)
        raw["changes"] = [tuple(c) for c in raw["changes"]]
        return cls(**raw)
