"""Differential testing against Codex's real apply_patch binary: files and patches, both outcomes
and the resulting trees compared byte for byte; every difference must be one of the spec's
deliberate ones. Two generators: random patches over a shared vocabulary (mostly refused on both
sides) and patches cut from the files they edit (mostly applied). Skipped (reported) when the
binary is absent (``benchmarks/install_peers.sh``). The full runs (10,000 cases each) are
``python -m benchmarks.reliability differential`` and ``differential-derived``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.reliability import differential, fuzz
from editors.apply_patch import errors, parser
from editors.apply_patch.applier import plan_patch

BINARY = differential.codex_binary()
needs_codex = pytest.mark.skipif(
    BINARY is None, reason="Codex apply_patch binary not installed (benchmarks/install_peers.sh codex)"
)


# slow: campaigns at CI size (the fast tier, -m "not slow", leaves them to the full run)
@pytest.mark.slow
@needs_codex
def test_every_difference_from_codex_on_random_patches_is_deliberate():
    report = differential.run(150, binary=BINARY)
    assert report.trials >= 130, report.render()
    assert not report.failures, report.render()
    assert report.counts.get("same (success)", 0) + report.counts.get("same (failure)", 0) > 0


@pytest.mark.slow
@needs_codex
def test_every_difference_from_codex_on_patches_cut_from_the_files_is_deliberate():
    report = differential.run_derived(150, binary=BINARY)
    assert report.trials >= 140, report.render()
    assert not report.failures, report.render()
    # what this generator is for: most of its patches apply the same on both sides
    assert report.counts.get("same (success)", 0) >= report.trials // 2, report.render()


def test_patches_cut_from_the_files_mostly_apply():
    outcomes = {"applied": 0, "refused": 0}

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(fuzz.derived_cases)
    def case(drawn: tuple[dict[str, bytes], str]) -> None:
        tree, text = drawn
        assert all(f"*** Update File: {path}" not in text or path in tree for path in fuzz.DERIVED_NAMES)
        try:
            plan_patch(parser.parse_patch(text, context_without_space=True), tree.get)
        except errors.ApplyPatchError:
            outcomes["refused"] += 1
        else:
            outcomes["applied"] += 1

    case()
    assert outcomes["applied"] > outcomes["refused"], outcomes


def test_model_lines_are_the_lines_without_endings_or_bom():
    assert fuzz.model_lines(b"\xef\xbb\xbfa\r\nb\nc") == ["a", "b", "c"]
    assert fuzz.model_lines(b"a\n\n") == ["a", ""]


CRLF = {"a.txt": b"x\r\n"}
PLAIN = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch"
BOM = b"\xef\xbb\xbf"
NOT_FOUND = b"Failed to find expected lines in /tmp/c1/a.txt:\nx\n"  # Codex's error names the file
ONE, TWO = {"a.txt": b"1\n"}, {"a.txt": b"2\n"}  # two results that differ


def test_classifier_names_the_deliberate_differences():
    assert differential.classify(CRLF, "", False, False, {}, CRLF).startswith("atomic")
    bom = {"a.txt": BOM + b"x\n"}
    assert differential.classify(bom, PLAIN, False, True, {}, ONE, NOT_FOUND).startswith("BOM")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n@@ y\n z\n*** End Patch"
    assert differential.classify(CRLF, patch, False, True, {}, ONE).startswith("consecutive")
    move = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: a.txt\n@@\n-x\n+y\n*** End Patch"
    assert differential.classify(CRLF, move, True, True, ONE, TWO).startswith("Move to")
    assert differential.classify(CRLF, PLAIN, True, True, ONE, TWO) == "unexplained"
    addition = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n+y\n*** End Patch"
    assert differential.classify(CRLF, addition, True, True, ONE, TWO).startswith("pure addition")


def test_classifier_names_a_class_only_where_its_cause_is_in_the_case():
    # a refusal of ours that changed a byte is never explained
    assert differential.classify(CRLF, "", False, False, {}, {"a.txt": b"y\r\n"}).startswith("unexplained")
    # a BOM in a file the patch does not update explains nothing, its first line in the patch or not
    tree = {"a.txt": b"x\n", "b.txt": BOM + b"q\n"}
    with_q = PLAIN.replace("-x", "-x\n q")
    assert differential.classify(tree, with_q, True, True, ONE, TWO) == "unexplained"
    assert differential.classify(tree, with_q, False, True, {}, ONE, NOT_FOUND) == "unexplained"
    # nor one in a file it updates away from the first line (the only line Codex reads the BOM into)
    tree = {"a.txt": BOM + b"q\nx\n"}
    assert differential.classify(tree, PLAIN, False, True, {}, ONE, NOT_FOUND) == "unexplained"
    # the first line among the + lines is not where Codex looks for it
    tree = {"a.txt": BOM + b"y\nx\n"}
    assert differential.classify(tree, PLAIN, False, True, {}, ONE, NOT_FOUND) == "unexplained"
    # a file that is the BOM alone: Codex reads it as a line
    assert differential.classify({"a.txt": BOM}, PLAIN, False, True, {}, ONE, NOT_FOUND).startswith("BOM")
    # the first line as Codex's loosest pass reads it: trimmed, typographic punctuation as ASCII
    bom = {"f.txt": BOM + "print(\u201chi\u201d)\n    return x".encode()}
    loose = '*** Begin Patch\n*** Update File: f.txt\n@@\n print("hi")\n*** End Patch\n'
    error = b"Failed to find expected lines in /tmp/c1/f.txt:\n"
    assert differential.classify(bom, loose, False, True, {}, ONE, error).startswith("BOM")
    # a non-text file the patch does not update explains nothing
    tree = {"a.txt": b"x\n", "b.txt": b"\xff\x00"}
    assert differential.classify(tree, PLAIN, True, False, ONE, tree) == "unexplained"
    assert differential.classify({"a.txt": b"\xff\x00"}, PLAIN, True, False, ONE, {"a.txt": b"\xff\x00"}).startswith(
        "non-text"
    )
    # a pure addition explains a difference only in its own file
    two_files = {"a.txt": b"x\n", "b.txt": b"y\n"}
    addition = "*** Begin Patch\n*** Update File: b.txt\n@@ y\n+z\n*** Update File: a.txt\n@@\n-x\n+w\n*** End Patch"
    assert differential.classify(two_files, addition, True, True, ONE, TWO) == "unexplained"
    # an @@ line followed by + lines then context is not a pure addition
    mixed = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n+y\n z\n*** End Patch"
    assert differential.classify(CRLF, mixed, True, True, ONE, TWO) == "unexplained"


def test_classifier_knows_where_the_bom_sits():
    # Codex inserting before the first line moves the BOM with it; ours keeps it first
    codex, ours = {"a.txt": b"new\n" + BOM + b"x\n"}, {"a.txt": BOM + b"new\nx\n"}
    assert differential.classify({"a.txt": BOM + b"x\n"}, "", True, True, codex, ours).startswith("BOM")
    # ours losing the BOM, or adding one, is not where it sits
    assert differential.classify({"a.txt": BOM + b"x\n"}, "", True, True, codex, {"a.txt": b"new\nx\n"}) == (
        "unexplained"
    )
    assert differential.classify({"a.txt": b"x\n"}, "", True, True, {"a.txt": b"x\n"}, {"a.txt": BOM + b"x\n"}) == (
        "unexplained"
    )


def test_classifier_names_the_recoveries_of_ours():
    indented = {"b.txt": b"\treturn y"}
    lost = "*** Begin Patch\n*** Update File: b.txt\n@@\n return y\n+    z\n*** End of File\n*** End Patch"
    codex, ours = {"b.txt": b"\treturn y\n    z\n"}, {"b.txt": b"\treturn y\n\t    z\n"}
    assert differential.classify(indented, lost, True, True, codex, ours).startswith("re-indented")
    # the note explains only a difference of indentation
    assert differential.classify(indented, lost, True, True, codex, {"b.txt": b"\treturn y\n\tq\n"}) == "unexplained"
    spaceless = "*** Begin Patch\n*** Update File: a.txt\n@@\nx\n+y\n*** End Patch"
    assert differential.classify({"a.txt": b"x\n"}, spaceless, False, True, {}, ONE).startswith("context line")
    unended = "*** Begin Patch\n*** Delete File: a.txt\n"  # no *** End Patch: read as if it followed
    assert differential.classify({"a.txt": b"x\n"}, unended, False, True, {}, {}).startswith("recovery")
