"""The workloads, one module each, looked up by name.

A workload module defines ``build(ctx: benchmarks.context.Context) -> benchmarks.core.Workload``
(and optionally ``DEFAULTS``: its size parameters for ``full`` / ``quick`` / ``tiny`` runs,
overridable with ``--set name.param=value``). ``build`` creates its input files under
``ctx.workdir(name)`` and returns the series to measure in alternation and the targets.

Hook for the S3 workload: ``benchmarks/workloads/s3.py`` is listed here already. While the module
does not exist the runner reports the workload as missing; once it exists it runs like any other
(it owns its server: start it in ``build``, stop it in the workload's ``teardown``, and mark its
series ``missing`` with the reason when SeaweedFS is not installed).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

#: name -> module, in the order the table shows them.
WORKLOADS: dict[str, str] = {
    "apply_large": "benchmarks.workloads.apply_large",
    "apply_small": "benchmarks.workloads.apply_small",
    "dry_run": "benchmarks.workloads.dry_run",
    "str_replace": "benchmarks.workloads.str_replace",
    "transaction": "benchmarks.workloads.transaction",
    "memory": "benchmarks.workloads.memory",
    "undo": "benchmarks.workloads.undo",
    "dir_view": "benchmarks.workloads.dir_view",
    "s3": "benchmarks.workloads.s3",
}


def load(name: str) -> ModuleType | None:
    """The workload's module, or ``None`` when it does not exist (yet)."""
    module_name = WORKLOADS[name]
    if importlib.util.find_spec(module_name) is None:
        return None
    return importlib.import_module(module_name)
