"""Sessions (one agent conversation): observations, and the policy that turns them into intents.

An observation is what the agent has seen at a path: present at a version, or confirmed absent.
The stock :class:`ObservationPolicy` is the peer harness's model:

- an edit (str_replace / insert) of a never-read path -> ``FS_NOT_OBSERVED``;
- an edit of a confirmed-absent path -> ``FS_NOT_FOUND`` (absence never authorizes an edit);
- present at ``v`` -> ``replace_if_version(v)``;
- a create, or a whole-file write of an unseen or absent path -> ``create_if_absent``.

Any object with the same ``intent`` method can replace it (a pluggable policy hook).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from vfs.errors import NotFound, NotObserved
from vfs.txlog import new_session_id
from vfs.types import CREATE_IF_ABSENT, UNCONDITIONAL, Intent, Read, Stat, replace_if_version

if TYPE_CHECKING:
    from vfs.workspace import Workspace

Operation = Literal["edit", "create", "write"]


@dataclass(frozen=True)
class Observation:
    state: Literal["present", "absent"]
    version: str | None = None


class Policy(Protocol):
    def intent(self, path: str, observation: Observation | None, operation: Operation) -> Intent: ...


class ObservationPolicy:
    """The stock policy (see the module docstring)."""

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


class Session:
    """Observations of one agent conversation over one workspace."""

    def __init__(self, workspace: Workspace, policy: Policy | None, *, id: str | None = None) -> None:
        self.workspace = workspace
        #: this conversation's id, recorded on the commits it makes (``vfs undo --session ID``)
        self.id = id if id is not None else new_session_id()
        self.policy = policy
        self.observations: dict[str, Observation] = {}

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
            self.observe(path, result.version)
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
