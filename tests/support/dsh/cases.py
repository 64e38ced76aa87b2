"""Call sequences for the DSH differential test: seeded random ones and hand-written ones.

A case is a starting tree, a ``max_output_chars`` and a few calls whose paths are relative to the
case's root (``{r}`` stands for the root's absolute path). Random cases mix valid and invalid
arguments: ``view_range`` variants, nulls, unknown keys, relative and empty paths, missing files,
directories, symlinks, unicode, CRLF, empty files, and outputs long enough to be clipped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tests.support.dsh import Link, Tree

BIG = "".join(f"line {n}: {'word ' * (n % 7)}end\n" for n in range(1, 301)).encode()

BASE: dict[str, bytes | Link | None] = {
    "a.txt": b"alpha\nbeta\nalpha\n",
    "uni.txt": "h\u00e9llo w\u00f6rld\n\U0001f600 emoji\n\u65e5\u672c\u8a9e\n".encode(),
    "crlf.txt": b"one\r\ntwo\r\nthree\r\n",
    "empty.txt": b"",
    "noeol.txt": b"x = 1\ny = 2",
    "tabs.py": b"def f():\n\treturn 1\n",
    "big.txt": BIG,
    "dir/inner.txt": b"inner\n",
    "dir/sub/deep.txt": b"deep\n",
    "dir/sub/deeper/x.txt": b"x\n",
    "dir/\u00e9t\u00e9.md": "\u00e9t\u00e9\n".encode(),
    ".hidden/h.txt": b"h\n",
    "node_modules/m.js": b"m\n",
    "__pycache__/c.txt": b"c\n",
    "node_modules_old/k.txt": b"k\n",
    "link.txt": Link("a.txt"),
    "dirlink": Link("dir"),
    "dangling": Link("gone.txt"),
}

FILES = ["a.txt", "uni.txt", "crlf.txt", "empty.txt", "noeol.txt", "tabs.py", "big.txt", "dir/inner.txt", "link.txt",
         "dir/\u00e9t\u00e9.md"]  # fmt: skip
DIRS = ["", "dir", "dir/sub", "dirlink", "node_modules_old"]
MISSING = ["nope.txt", "dir/nope.txt", "new/deep/file.txt", "dangling"]
TEXTS = ["X", "new line\n", "\u00fcn\u00ef\U0001f600\n", "a\r\nb", "", "multi\nline\ntext", "alpha", "\tindented\n"]
LIMITS = [16000, 16000, 16000, 2000, 200, 120, 60, 30]
RANGES: list[Any] = [[1, 2], [2, -1], [1, -1], [0, 1], [1, 999], [3, 2], [1], [1, 2, 3], ["1", 2], [1.0, 2],
                     [1.5, 2], "1,2", [], None, [-1, -1], [2, 2]]  # fmt: skip


@dataclass
class Case:
    name: str
    calls: list[dict[str, Any]]
    tree: Tree = field(default_factory=lambda: dict(BASE))
    max_output_chars: int = 16000
    same: bool = False  # a hand-written case where the peer and ours must not differ at all


def _path(rng: random.Random, pool: list[str]) -> str:
    rel = rng.choice(pool)
    roll = rng.random()
    if roll < 0.06:
        return rel or "."  # relative
    if roll < 0.08:
        return rng.choice(["", "   "])
    return "{r}/" + rel if rel else "{r}"


def _snippet(rng: random.Random, tree: Tree, rel: str) -> str:
    data = tree.get(rel)
    if not isinstance(data, bytes) or not data:
        return rng.choice(["alpha", "zzz"])
    text = data.decode("utf-8", "replace")
    start = rng.randrange(len(text))
    return text[start : start + rng.randint(1, 12)] or "x"


def _view(rng: random.Random, tree: Tree) -> dict[str, Any]:
    args: dict[str, Any] = {"command": "view", "path": _path(rng, rng.choice([FILES, FILES, DIRS, MISSING]))}
    if rng.random() < 0.6:
        args["view_range"] = rng.choice(RANGES)
    return args


def _create(rng: random.Random, tree: Tree) -> dict[str, Any]:
    args: dict[str, Any] = {"command": "create", "path": _path(rng, rng.choice([MISSING, MISSING, FILES, DIRS]))}
    roll = rng.random()
    if roll < 0.85:
        args["file_text"] = rng.choice(TEXTS)
    elif roll < 0.92:
        args["file_text"] = rng.choice([None, 3])
    return args


def _str_replace(rng: random.Random, tree: Tree) -> dict[str, Any]:
    rel = rng.choice([*FILES, *FILES, *MISSING, *DIRS])
    args: dict[str, Any] = {"command": "str_replace", "path": _path(rng, [rel])}
    roll = rng.random()
    if roll < 0.8:
        args["old_str"] = _snippet(rng, tree, rel)
    elif roll < 0.9:
        args["old_str"] = rng.choice(["", "alpha", "not there", "one\ntwo"])
    if rng.random() < 0.85:
        args["new_str"] = rng.choice(TEXTS)
    return args


def _insert(rng: random.Random, tree: Tree) -> dict[str, Any]:
    args: dict[str, Any] = {"command": "insert", "path": _path(rng, rng.choice([FILES, FILES, MISSING, DIRS]))}
    roll = rng.random()
    if roll < 0.8:
        args["insert_line"] = rng.randint(-1, 6)
    elif roll < 0.9:
        args["insert_line"] = rng.choice(["2", 1.0, 1.5])
    if rng.random() < 0.9:
        args["new_str"] = rng.choice(TEXTS)
    return args


MAKERS = [_view, _view, _create, _str_replace, _insert]


def _spice(rng: random.Random, args: dict[str, Any]) -> dict[str, Any]:
    """Sometimes a null for an optional argument, or an unknown extra key."""
    roll = rng.random()
    if roll < 0.05:
        key = rng.choice(["file_text", "old_str", "new_str", "insert_line", "view_range"])
        if key not in args:
            args[key] = None
    elif roll < 0.1:
        args[rng.choice(["replace_all", "foo", "new_string"])] = rng.choice([True, 1, "x"])
    return args


def random_cases(count: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for n in range(count):
        tree: dict[str, bytes | Link | None] = dict(BASE)
        calls = [_spice(rng, rng.choice(MAKERS)(rng, tree)) for _ in range(rng.randint(1, 4))]
        cases.append(Case(f"random-{seed}-{n}", calls, tree, rng.choice(LIMITS)))
    return cases


SAME = {"order-missing-path-before-range-length", "order-directory-before-range-length", "order-blank-path",
        "order-missing-file-before-old-str", "order-insert-params-first", "symlinks-in-listing", "utf16-order",
        "ambiguous", "trailing-slash", "insert-edges", "create-nested", "unicode-edit"}  # fmt: skip


def _case(name: str, calls: list[dict[str, Any]], extra: Tree | None = None, limit: int = 16000) -> Case:
    tree: dict[str, bytes | Link | None] = dict(BASE)
    tree.update(extra or {})
    return Case(f"hand-{name}", calls, tree, limit, same=name in SAME)


def _look(path: str, **more: Any) -> dict[str, Any]:
    return {"command": "view", "path": "{r}" + path, **more}


def hand_cases() -> list[Case]:
    """Each names what it pins: the order of checks, symlinks, nulls, unknown keys, clipping, ..."""
    many = {f"many/f{n:03d}.txt": b"x\n" for n in range(60)}
    wide = "\u00e9" * 40
    huge = {"huge.txt": "".join(f"{n} {wide}\n" for n in range(2000)).encode()}
    return [
        _case("order-missing-path-before-range-length", [_look("/nope.txt", view_range=[1]), _look("/nope.txt", view_range=[1, 2, 3])]),
        _case("order-missing-path-range-type", [_look("/nope.txt", view_range=["1", 2])]),
        _case("order-directory-before-range-length", [_look("/dir", view_range=[1]), _look("/dir", view_range=[1, 2])]),
        _case("order-relative-before-old-str", [{"command": "str_replace", "path": "a.txt"}, {"command": "str_replace", "path": "a.txt", "old_str": ""}]),
        _case("order-blank-path", [{"command": "create", "path": ""}, {"command": "insert", "path": " "}, {"command": "str_replace", "path": ""}, {"command": "view", "path": ""}]),
        _case("order-missing-file-before-old-str", [{"command": "str_replace", "path": "{r}/nope.txt"}, {"command": "str_replace", "path": "{r}/dir"}]),
        _case("order-insert-params-first", [{"command": "insert", "path": "rel"}, {"command": "insert", "path": "rel", "insert_line": 0}, {"command": "insert", "path": "{r}/nope", "insert_line": 9, "new_str": "x"}]),
        _case("symlinks-in-listing", [_look(""), _look("/dirlink"), _look("/link.txt"), {"command": "str_replace", "path": "{r}/link.txt", "old_str": "beta", "new_str": "gamma"}], {"dangling": Link("nowhere"), "dir/up": Link("..")}),
        _case("symlink-leaving-root", [_look(""), _look("/out/secret.txt")], {"out": Link("../outside"), "../outside/secret.txt": b"secret\n"}),
        _case("create-through-dangling-link", [{"command": "create", "path": "{r}/dangling", "file_text": "d\n"}, _look("/dangling")]),
        _case("create-through-link-leaving-root", [{"command": "create", "path": "{r}/out", "file_text": "o\n"}], {"out": Link("../outside/none.txt"), "../outside/keep": b""}),
        _case("utf16-order", [_look("/u")], {"u/\U0001f600.txt": b"", "u/\uff41.txt": b"", "u/a.txt": b"", "u/\u00e9": None}),
        _case("limit-below-header", [_look("/a.txt"), _look("/a.txt", view_range=[2, 3])], limit=40),
        _case("limit-clips-file", [_look("/huge.txt"), _look("/huge.txt", view_range=[100, -1])], huge),
        _case("limit-clips-listing", [_look("/many"), _look("")], many, limit=300),
        _case("nulls", [_look("/a.txt", view_range=None), {"command": "create", "path": "{r}/n.txt", "file_text": "n", "new_str": None}, {"command": "str_replace", "path": "{r}/a.txt", "old_str": "beta", "new_str": None}, {"command": "insert", "path": "{r}/a.txt", "insert_line": None, "new_str": "x"}]),
        _case("unknown-keys", [{"command": "str_replace", "path": "{r}/a.txt", "old_str": "beta", "new_string": "gamma"}, _look("/a.txt", extra=1)]),
        _case("schema-texts", [{"path": "{r}/a.txt"}, {"command": "view"}, {"command": "delete", "path": "{r}/a.txt"}, {"command": "view", "path": 7}, {"command": "view", "path": "{r}/a.txt", "view_range": "1-2"}]),
        _case("crlf", [_look("/crlf.txt"), {"command": "str_replace", "path": "{r}/crlf.txt", "old_str": "one\ntwo", "new_str": "1\n2"}, _look("/crlf.txt")]),
        _case("crlf-exact", [{"command": "str_replace", "path": "{r}/crlf.txt", "old_str": "two\r\n", "new_str": "2\r\n"}, {"command": "insert", "path": "{r}/crlf.txt", "insert_line": 1, "new_str": "i"}]),
        _case("near-miss", [{"command": "str_replace", "path": "{r}/tabs.py", "old_str": "    return 1", "new_str": "    return 2"}, {"command": "str_replace", "path": "{r}/a.txt", "old_str": "beta\n\n", "new_str": "b"}]),
        _case("ambiguous", [{"command": "str_replace", "path": "{r}/a.txt", "old_str": "alpha", "new_str": "x"}, {"command": "str_replace", "path": "{r}/m.txt", "old_str": "a\nb", "new_str": "x"}], {"m.txt": b"a\nb\na\nb\n"}),
        _case("identical", [{"command": "str_replace", "path": "{r}/a.txt", "old_str": "beta", "new_str": "beta"}]),
        # issue 15 / 14 rules of ours (docs/differences.md): one call each, the peer refuses or applies as sent
        _case("tolerant-trailing", [{"command": "str_replace", "path": "{r}/t.py", "old_str": "x = 1\ny = 2", "new_str": "x = 1\ny = 3"}], {"t.py": b"x = 1  \ny = 2\n"}),
        _case("tolerant-unicode", [{"command": "str_replace", "path": "{r}/t.py", "old_str": "s = 'a'\nt = 1", "new_str": "s = 'a'\nt = 2"}], {"t.py": "s = \u2018a\u2019\nt = 1\n".encode()}),
        _case("tolerant-line-numbers", [{"command": "str_replace", "path": "{r}/t.py", "old_str": "     2  b\n     3  c", "new_str": "b\nC"}], {"t.py": b"a\nb\nc\n"}),
        _case("tolerant-elision", [{"command": "str_replace", "path": "{r}/t.py", "old_str": "    a = 1\n    ...\n    return a", "new_str": "    a = 10\n    ...\n    return a"}], {"t.py": b"def f():\n    a = 1\n    b = 2\n    return a\n"}),
        _case("already-applied", [{"command": "str_replace", "path": "{r}/t.py", "old_str": "x = 0\ny = 2", "new_str": "x = 1\ny = 2"}], {"t.py": b"x = 1\ny = 2\n"}),
        _case("lost-indentation", [{"command": "str_replace", "path": "{r}/t.py", "old_str": "x = 1", "new_str": "x = 1\ny = 2"}], {"t.py": b"def f():\n    x = 1\n"}),
        _case("other-indentation", [{"command": "str_replace", "path": "{r}/t.py", "old_str": "        b()\n        c()", "new_str": "        b()"}], {"t.py": b"if a:\n    b()\n    c()\nif d:\n        b()\n        c()\n"}),
        _case("bom", [_look("/bom.txt"), {"command": "str_replace", "path": "{r}/bom.txt", "old_str": "bom", "new_str": "b"}], {"bom.txt": b"\xef\xbb\xbfbom\n"}),
        _case("not-text", [_look("/bin.dat"), _look("/latin.txt"), {"command": "str_replace", "path": "{r}/latin.txt", "old_str": "caf", "new_str": "x"}], {"bin.dat": b"\x00\x01\x02", "latin.txt": b"caf\xe9\n"}),
        _case("trailing-slash", [_look("/dir/"), _look("/a.txt/"), {"command": "create", "path": "{r}/dir/new.txt/", "file_text": "x"}]),
        _case("insert-edges", [{"command": "insert", "path": "{r}/empty.txt", "insert_line": 1, "new_str": "e"}, {"command": "insert", "path": "{r}/noeol.txt", "insert_line": 2, "new_str": "z = 3"}, _look("/noeol.txt"), {"command": "insert", "path": "{r}/a.txt", "insert_line": 0, "new_str": ""}]),
        _case("create-nested", [{"command": "create", "path": "{r}/n1/n2/f.txt", "file_text": "deep\n"}, _look("/n1"), {"command": "create", "path": "{r}/n1/n2/f.txt", "file_text": "again"}]),
        _case("create-in-file-parent", [{"command": "create", "path": "{r}/a.txt/x", "file_text": "x"}]),
        _case("unicode-edit", [{"command": "str_replace", "path": "{r}/uni.txt", "old_str": "\U0001f600", "new_str": "\U0001f601"}, _look("/uni.txt", view_range=[2, 2])]),
    ]  # fmt: skip
