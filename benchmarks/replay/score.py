"""Scoring: each (tool, attempt) is one outcome, judged on the bytes of the files afterwards.

- ``success``: every file holds exactly the intended bytes (for ``sent_twice``: after both sends);
- ``wrong``: a file holds bytes that are neither the intended ones nor the bytes before the call,
  or every call reported success and the files are not the intended ones (the worst outcome);
- ``refused``: a call reported an error and every file is exactly as before;
- ``refused_touched``: a call reported an error and some file changed (partially applied).

A refusal *names the cause* when its message matches the class's pattern below: the words a
model needs to fix its call (the tab, the CRLF, the line-number prefix, ...). The patterns look
for the cause, not for any tool's wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchmarks.replay.corpus import Attempt
from benchmarks.replay.tools import Run

CAUSE: dict[str, re.Pattern[str]] = {
    "tabs_as_spaces": re.compile(r"\btabs?\b", re.I),
    "crlf_as_lf": re.compile(r"CRLF|line ending|\\r\\n|carriage return", re.I),
    "trailing_ws_dropped": re.compile(r"trailing (white)?space", re.I),
    "unicode_normalized": re.compile(
        r"curly|smart quote|typographic|unicode|dash|non-breaking|nbsp|U\+[0-9A-F]{4}|punctuation", re.I
    ),
    "line_number_prefix": re.compile(r"line[- ]number", re.I),
    "indentation_lost": re.compile(r"indent", re.I),
    "elision": re.compile(r"\.\.\.|elision|elided|ellipsis|placeholder", re.I),
    "stale_context": re.compile(r"changed since|modified since|stale|since (it was|you) (read|view)", re.I),
    "sent_twice": re.compile(r"already (applied|present|made)|no longer|duplicate", re.I),
    "context_no_space": re.compile(r"context line|leading space|start with ' '", re.I),
    # Not a bare "@@": a message quoting the model's "-12,7 +12,8 @@" back names nothing.
    "bad_header": re.compile(
        r"hunk header|@@ (header|line|marker)|context marker|unified[- ]diff|line numbers? in @@", re.I
    ),
    "missing_end_patch": re.compile(r"End Patch", re.I),
    "json_wrapped": re.compile(r"\bJSON\b", re.I),
    "hunks_out_of_order": re.compile(r"\border\b", re.I),
    "bom": re.compile(r"\bBOM\b|byte.order", re.I),
    "control": re.compile(r"(?!)"),  # a refusal of a correct call has no cause to name
}

OUTCOMES = ("success", "wrong", "refused", "refused_touched")


@dataclass
class Outcome:
    attempt: str
    cls: str
    tool: str
    outcome: str  # one of OUTCOMES
    named: bool  # a refusal whose message names the cause
    message: str  # the first error message (or the last reply), shortened

    def to_json(self) -> dict[str, object]:
        return {"attempt": self.attempt, "outcome": self.outcome, "named": self.named, "message": self.message}


def judge(tool: str, attempt: Attempt, run: Run) -> Outcome:
    states = []
    for f in attempt.files:
        got = run.final.get(f.path)
        states.append("expected" if got == f.expected else "original" if got == f.original else "other")
    any_error = any(run.errors)
    first_error = next((t for t, e in zip(run.texts, run.errors, strict=True) if e), None)
    if all(s == "expected" for s in states):
        outcome = "success"
    elif "other" in states or not any_error:
        outcome = "wrong"
    elif all(s == "original" for s in states):
        outcome = "refused"
    else:
        outcome = "refused_touched"
    named = outcome.startswith("refused") and first_error is not None and bool(CAUSE[attempt.cls].search(first_error))
    message = first_error if first_error is not None else (run.texts[-1] if run.texts else "")
    return Outcome(attempt.id, attempt.cls, tool, outcome, named, message[:600])
