"""The reliability campaign (issue 8): crash, escape, fuzz, fault, race and differential harnesses.

Each campaign module exposes ``run(trials=..., seed=...) -> Report``; ``python -m
benchmarks.reliability <campaign> [--trials N]`` runs one at its full count and prints its
figures. The pytest suites under ``tests/reliability/`` call the same functions at CI-sized counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Report:
    """Figures of one campaign run. ``failures`` holds one line per trial that broke a promise."""

    campaign: str
    trials: int = 0
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _started: float = field(default_factory=time.perf_counter, repr=False)

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def fail(self, text: str) -> None:
        self.failures.append(text)

    def finish(self) -> Report:
        self.seconds = time.perf_counter() - self._started
        return self

    def render(self) -> str:
        lines = [
            f"campaign {self.campaign}: {self.trials} trials in {self.seconds:.1f} s, {len(self.failures)} failures"
        ]
        lines += [f"  {name}: {value}" for name, value in sorted(self.counts.items())]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  FAIL: {f}" for f in self.failures[:50]]
        if len(self.failures) > 50:
            lines.append(f"  ... and {len(self.failures) - 50} more failures")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "campaign": self.campaign,
            "trials": self.trials,
            "seconds": round(self.seconds, 2),
            "counts": self.counts,
            "failures": self.failures,
        }
