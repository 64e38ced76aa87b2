"""Sessions (one agent conversation): observations, and the policy that turns them into intents.

An observation is what the agent has seen at a path: present at a version, or confirmed absent.
The stock :class:`ObservationPolicy` is the peer harness's model:

- an edit (str_replace / insert) of a never-read path -> ``FS_NOT_OBSERVED``;
- an edit of a confirmed-absent path -> ``FS_NOT_FOUND`` (absence never authorizes an edit);
- present at ``v`` -> ``replace_if_version(v)``;
- a create, or a whole-file write of an unseen or absent path -> ``create_if_absent``.

Any object with the same ``intent`` method can replace it (a pluggable policy hook). A policy may
also carry ``rebase = True`` (``ObservationPolicy(rebase=True)``; off by default): an editor may
then apply an edit to a file that changed since the view when the region the edit touches did not.

A session also remembers, for the tools built on it:

- the bytes of the version it last saw of each file (:class:`ViewMemory`, LRU-bounded by total
  size; files over a size cap are not kept), so a refusal for a stale view can show what changed.
  By default every session of the process shares one memory (:data:`SHARED_VIEWS`), so a server
  with many sessions stays within one bound; the least recently used views go first, whoever
  owns them (that session's stale refusals then ask for a new view instead of showing a diff);
- the last successful edit of each path (:class:`EditMemo`), so the same edit sent twice is
  recognised instead of applied twice.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading's Lock, without threading's start-up (~4 M instructions)
from collections import OrderedDict
from collections.abc import Hashable

from backends.values import Protocol, value
from vfs.errors import NotFound, NotObserved
from vfs.txlog import new_session_id
from vfs.types import CREATE_IF_ABSENT, UNCONDITIONAL, Intent, Read, Stat, replace_if_version

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Literal

    from vfs.workspace import Workspace

    Operation = Literal["edit", "create", "write"]


@value(frozen=True)
class Observation:
    state: Literal["present", "absent"]
    version: str | None = None


class Policy(Protocol):
    def intent(self, path: str, observation: Observation | None, operation: Operation) -> Intent: ...


class ObservationPolicy:
    """The stock policy (see the module docstring); ``rebase`` lets editors rebase a stale edit."""

    def __init__(self, *, rebase: bool = False) -> None:
        self.rebase = rebase

    def intent(self, path: str, observation: Observation | None, operation: Operation) -> Intent:
        if operation == "create":
            return CREATE_IF_ABSENT
        if operation == "edit":
            if observation is None:
                raise NotObserved(f'edit requires reading "{path}" first', path=path)
            if observation.state == "absent":
                raise NotFound(f'cannot edit "{path}": not found', path=path)
        if observation is None or observation.state == "absent" or observation.version is None:
            return CREATE_IF_ABSENT
        return replace_if_version(observation.version)


#: What the sessions keep of the files they saw: 8 MiB in all, no file over 1 MiB.
DEFAULT_VIEW_MEMORY_BYTES = 8 * 1024 * 1024
DEFAULT_VIEW_FILE_CAP_BYTES = 1024 * 1024


class ViewMemory:
    """The bytes of the last version seen of each key (a path, or a session's path), least
    recently used dropped first.

    Only one version per key is kept (the one the session last observed), and the total stays
    within ``limit_bytes``; a file larger than ``file_cap_bytes`` is not kept (a stale refusal then
    says the file changed, without showing how).
    """

    def __init__(
        self, limit_bytes: int = DEFAULT_VIEW_MEMORY_BYTES, file_cap_bytes: int = DEFAULT_VIEW_FILE_CAP_BYTES
    ) -> None:
        self.limit_bytes = limit_bytes
        self.file_cap_bytes = min(file_cap_bytes, limit_bytes)
        self._entries: OrderedDict[Hashable, tuple[str, bytes]] = OrderedDict()
        self._total = 0
        self._lock = allocate_lock()  # shared by sessions whose calls run in worker threads (MCP)

    @property
    def total_bytes(self) -> int:
        return self._total

    def forget(self, path: Hashable) -> None:
        with self._lock:
            self._forget(path)

    def _forget(self, path: Hashable) -> None:
        entry = self._entries.pop(path, None)
        if entry is not None:
            self._total -= len(entry[1])

    def remember(self, path: Hashable, version: str, data: bytes) -> None:
        with self._lock:
            self._forget(path)
            if len(data) > self.file_cap_bytes:
                return
            self._entries[path] = (version, data)
            self._total += len(data)
            while self._total > self.limit_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._total -= len(dropped)

    def get(self, path: Hashable, version: str) -> bytes | None:
        """The bytes of ``path`` at ``version`` if kept (and marks them recently used)."""
        with self._lock:
            entry = self._entries.get(path)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(path)
            return entry[1]


#: The memory every session shares unless it is given its own.
SHARED_VIEWS = ViewMemory()


@value(frozen=True)
class EditMemo:
    """The last successful edit of a path: what was sent (a digest), the version it wrote, and
    the 1-based lines its new text occupies in that version."""

    signature: str
    version: str
    first_line: int
    last_line: int


class Session:
    """Observations of one agent conversation over one workspace."""

    def __init__(
        self, workspace: Workspace, policy: Policy | None, *, views: ViewMemory | None = None, id: str | None = None
    ) -> None:
        self.workspace = workspace
        #: this conversation's id, recorded on the commits it makes (``vfs undo --session ID``)
        self.id = id if id is not None else new_session_id()
        self.policy = policy
        self.observations: dict[str, Observation] = {}
        self.views = views if views is not None else SHARED_VIEWS
        self._token = object()  # this session's part of a shared memory
        self.edits: dict[str, EditMemo] = {}

    @property
    def rebase(self) -> bool:
        """Whether the policy lets an editor rebase an edit of a file changed since the view."""
        return bool(getattr(self.policy, "rebase", False))

    def remember_view(self, path: str, version: str, data: bytes) -> None:
        """Keep the bytes seen at ``version`` (within the memory bound) and observe that version."""
        self.observe(path, version)
        self.views.remember((self._token, self._canonical(path)), version, data)

    def viewed(self, path: str, version: str) -> bytes | None:
        """The bytes the session saw of ``path`` at ``version``, if still kept."""
        return self.views.get((self._token, self._canonical(path)), version)

    def remember_edit(self, path: str, memo: EditMemo) -> None:
        self.edits[self._canonical(path)] = memo

    def last_edit(self, path: str) -> EditMemo | None:
        return self.edits.get(self._canonical(path))

    def _canonical(self, path: str) -> str:
        return self.workspace.to_path(path)

    def observe(self, path: str, version: str | None) -> None:
        """Record that ``path`` was seen at ``version`` (``None``: confirmed absent)."""
        state: Literal["present", "absent"] = "absent" if version is None else "present"
        self.observations[self._canonical(path)] = Observation(state, version)

    record = observe

    def observation(self, path: str) -> Observation | None:
        return self.observations.get(self._canonical(path))

    def read(self, path: str) -> Read:
        try:
            result = self.workspace.read(path)
        except NotFound:
            self.observe(path, None)
            raise
        if result.version is not None:
            self.remember_view(path, result.version, result.data)
        return result

    def stat(self, path: str) -> Stat:
        try:
            result = self.workspace.stat(path)
        except NotFound:
            self.observe(path, None)
            raise
        if result.kind == "file" and result.version is not None:
            self.observe(path, result.version)
        return result

    def intent_for(self, path: str, operation: Operation) -> Intent:
        if self.policy is None:
            return CREATE_IF_ABSENT if operation == "create" else UNCONDITIONAL
        return self.policy.intent(self._canonical(path), self.observation(path), operation)
