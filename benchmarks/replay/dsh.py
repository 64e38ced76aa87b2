"""Running the real DSH ``str_replace_editor`` under node: one process for a batch of cases
(``dsh_harness.mjs``, whose header says what a case is). The replay benchmark runs it over an
in-memory filesystem; the differential tests (``tests/support/dsh``) over real directories.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HARNESS = Path(__file__).with_name("dsh_harness.mjs")


def run_harness(modules: Path, cases: Sequence[Mapping[str, Any]], *, timeout: float) -> list[dict[str, Any]]:
    """One result per case (``{id, results: [{text, error, code}], files?}``), in order."""
    done = subprocess.run(
        ["node", str(HARNESS), str(modules)],
        input=json.dumps(list(cases)).encode(),
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"the DSH harness failed ({done.returncode}): {detail}")
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results
