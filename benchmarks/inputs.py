"""Deterministic inputs: Python-like source files and Codex-format patches with known results.

Every tool in a workload gets the same bytes from here, and the expected output is computed by
the generator itself (not by any of the tools), so "outputs verified equal" means equal to an
independent reference, hence to each other.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

_WORDS = (
    "account", "billing", "cache", "catalog", "checkout", "config", "gateway", "inventory",
    "ledger", "metrics", "orders", "payments", "profile", "queue", "search", "session",
)  # fmt: skip


def _function(k: int, rng: random.Random) -> list[str]:
    """One function block (at least 11 lines; the first line is unique, many others repeat)."""
    word = _WORDS[k % len(_WORDS)]
    lines = [
        f"def handler_{k:07d}(request, context):",
        f'    """Handle request {k} for the {word} service."""',
        f'    value = request.get("{word}_{k % 97}")',
        "    if value is None:",
        "        return None",
        f"    result = compute(value, context, retries={k % 5})",
        "    total = 0",
    ]
    for _ in range(rng.randint(0, 6)):
        lines.append(
            rng.choice(
                (
                    "    for item in result:",
                    "        total += item.weight",
                    f'    logger.debug("handler %s: %r", {k}, result)',
                    "    context.record(total)",
                    "    # keep the order of the results stable",
                    "",
                )
            )
        )
    lines += ["    context.finish(total)", "    return result", "", ""]
    return lines


@dataclass
class Source:
    lines: list[str]  # without line endings; the file is "\n".join(lines) + "\n"
    starts: list[int]  # line index of each function's def line

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")


def source(*, lines: int | None = None, size: int | None = None, seed: int = 7) -> Source:
    """A Python-like module of about ``lines`` lines or ``size`` bytes (at least one of them)."""
    if lines is None and size is None:
        raise ValueError("give lines or size")
    rng = random.Random(seed)
    out: list[str] = []
    starts: list[int] = []
    nbytes = 0
    k = 0
    while (lines is None or len(out) < lines) and (size is None or nbytes < size):
        block = _function(k, rng)
        starts.append(len(out))
        out.extend(block)
        nbytes += sum(len(line) + 1 for line in block)
        k += 1
    if lines is not None:
        del out[lines:]
        starts = [s for s in starts if s + 11 <= len(out)]
    return Source(out, starts)


@dataclass
class PatchCase:
    patch: str
    files: dict[str, bytes]  # path -> original bytes
    expected: dict[str, bytes]  # path -> bytes after the patch


def _update_hunks(src: Source, n_hunks: int, salt: str) -> tuple[list[str], list[str]]:
    """Patch body lines for ``n_hunks`` hunks spread evenly over ``src``, and the new lines.

    Half the hunks carry an ``@@ def ...`` anchor (context starts after it), half a bare ``@@``
    (context starts at the def line). Each replaces one line with two.
    """
    if n_hunks > len(src.starts):
        raise ValueError(f"{n_hunks} hunks need at least {n_hunks} functions, the source has {len(src.starts)}")
    step = len(src.starts) / n_hunks
    chosen = [src.starts[int(i * step)] for i in range(n_hunks)]
    body: list[str] = []
    new_lines = list(src.lines)
    for index, start in reversed(list(enumerate(chosen))):
        anchored = index % 2 == 0
        first = start + 1 if anchored else start
        target = first + 3
        old = src.lines[target]
        replacement = [old.replace("value", f"value_{salt}", 1) + f"  # {salt} {index}", f"    audit({index})"]
        new_lines[target : target + 1] = replacement
        hunk = [f"@@ {src.lines[start]}" if anchored else "@@"]
        hunk += [" " + line for line in src.lines[first:target]]
        hunk += ["-" + old] + ["+" + line for line in replacement]
        hunk += [" " + line for line in src.lines[target + 1 : target + 4]]
        body[0:0] = hunk
    return body, new_lines


def update_patch(files: dict[str, Source], hunks_per_file: int, *, salt: str = "v2") -> PatchCase:
    """One Codex patch updating every file of ``files`` with ``hunks_per_file`` hunks each."""
    out = ["*** Begin Patch"]
    originals: dict[str, bytes] = {}
    expected: dict[str, bytes] = {}
    for path, src in files.items():
        body, new_lines = _update_hunks(src, hunks_per_file, salt)
        out.append(f"*** Update File: {path}")
        out.extend(body)
        originals[path] = src.data
        expected[path] = ("\n".join(new_lines) + "\n").encode("utf-8")
    out.append("*** End Patch")
    return PatchCase("\n".join(out) + "\n", originals, expected)


@dataclass
class ReplaceCase:
    data: bytes
    old_str: str
    new_str: str
    expected: bytes


def str_replace_case(size: int, *, seed: int = 11) -> ReplaceCase:
    """A file of about ``size`` bytes and a unique 4-line ``old_str`` in its middle."""
    src = source(size=size, seed=seed)
    start = src.starts[len(src.starts) // 2]
    old = "\n".join(src.lines[start : start + 4])
    new = "\n".join(
        [src.lines[start], src.lines[start + 1], src.lines[start + 2].replace("value", "payload", 1),
         "    if payload is None:  # edited"]
    )  # fmt: skip
    text = src.text
    assert text.count(old) == 1
    return ReplaceCase(src.data, old, new, text.replace(old, new, 1).encode("utf-8"))
