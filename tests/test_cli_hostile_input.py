"""What a peer, a caller or a file wrote reaches no terminal raw, and input a command cannot take is
one line and exit status 2, never a traceback and never `contract diff`'s 1 ("breaking").

Tool names with ANSI escapes, an OSC title, a newline that forges a verdict line and bidi
overrides; schemas nested 300 and 3,000 levels; wrong types; a huge file. Then a bounded,
seeded run of random hostile snapshots through `contract diff`.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from mcpobs.__main__ import main

HOSTILE_NAMES = [
    "\x1b[2J\x1b[1;32mall clear",
    "x\nsafe: nothing breaks",
    "x\rbreaking",
    "\u202egnikaerb",
    "\x1b]0;owned\x07title",
    "\x9b31mC1 CSI",
    "zero\u200bwidth\u2066isolate\u2069",
    "line\u2028separator",
]
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
"""What a terminal acts on (C0 but the line's own newline, C1, bidi controls, zero-width, separators)."""


def snapshot(path: Path, tools: list[dict[str, Any]] | str) -> str:
    path.write_text(tools if isinstance(tools, str) else json.dumps({"tools": tools}))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_safe(out: str, verdicts: int | None = None) -> None:
    assert not UNSAFE.search(out), repr(out)
    lines = out.splitlines()
    if verdicts is not None:  # no forged line: one verdict line per change, the rest the catalog's cost
        assert sum(bool(re.match(r"(breaking|additive|safe): ", line)) for line in lines) == verdicts, lines
    for line in lines:
        assert re.match(
            r"(breaking|additive|safe|grew|shrank|added|removed|catalog|over budget): |no changes$", line
        ), line


def test_contract_diff_of_hostile_names_prints_no_control_or_forged_line(tmp_path, capsys):
    tools = [{"name": name, "inputSchema": {"type": "object"}} for name in HOSTILE_NAMES]
    tools[3]["inputSchema"] = {"type": "object", "properties": {"\x1b]8;;http://evil\x07": {"type": "string"}}}
    old = snapshot(tmp_path / "old.json", tools)
    new = snapshot(tmp_path / "new.json", [{**tools[3], "inputSchema": {"type": "object"}}])
    status, out, err = run(capsys, "contract", "diff", old, new)
    assert status == 1 and not err
    assert_safe(out, verdicts=len(HOSTILE_NAMES))
    assert "\\x1b[2J\\x1b[1;32mall clear: tool removed" in out and "x\\nsafe: nothing breaks: tool removed" in out
    assert "\\u202egnikaerb: input \\x1b]8;;http://evil\\x07: removed" in out


def nested(levels: int) -> str:
    """A tools/list snapshot whose one schema nests `levels` properties deep, written as text (json.dumps recurses)."""
    schema = '{"type": "string"}'
    for _ in range(levels):
        schema = '{"type": "object", "properties": {"a": ' + schema + "}}"
    return '{"tools": [{"name": "deep", "inputSchema": ' + schema + "}]}"


@pytest.mark.parametrize("levels", [300, 3000])
@pytest.mark.parametrize("side", ["old", "new"])
def test_an_absurdly_nested_schema_gets_one_line_and_exit_2(tmp_path, capsys, levels, side):
    deep = snapshot(tmp_path / "deep.json", nested(levels))
    plain = snapshot(tmp_path / "plain.json", nested(2))
    status, out, err = run(capsys, "contract", "diff", *((deep, plain) if side == "old" else (plain, deep)))
    assert status == 2 and not out
    assert err.count("\n") == 1 and "nested deeper than" in err and "Traceback" not in err


def test_a_schema_nested_as_deep_as_real_ones_is_still_diffed(tmp_path, capsys):
    status, out, _ = run(
        capsys, "contract", "diff", snapshot(tmp_path / "a.json", nested(20)), snapshot(tmp_path / "b.json", nested(19))
    )
    assert status == 1 and "breaking: deep: input " in out


@pytest.mark.parametrize(
    "tools",
    [
        [{"name": "x", "inputSchema": {"type": "object", "properties": 5, "required": "a"}}],
        [{"name": "x", "inputSchema": 5, "outputSchema": [1]}],
        [{"name": "x", "inputSchema": {"type": "object", "properties": {"a": []}}}],
        '{"tools": [{"name": "x", "inputSchema": {"$ref": "#/x/y", "properties": {"a": {"$ref": "#"}}}}]}',
    ],
    ids=["properties a number", "schema a number", "property a list", "references"],
)
def test_wrong_types_never_give_a_traceback(tmp_path, capsys, tools):
    odd = snapshot(tmp_path / "odd.json", tools)
    plain = snapshot(tmp_path / "plain.json", [{"name": "x", "inputSchema": {"type": "object"}}])
    for pair in ((odd, plain), (plain, odd), (odd, odd)):
        status, out, err = run(capsys, "contract", "diff", *pair)
        assert "Traceback" not in err
        if status == 2:
            assert not out and err.count("\n") == 1
        else:
            assert status in (0, 1) and not err
            assert_safe(out)


def test_a_huge_snapshot_file_gets_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    from mcpobs._cli import contract_diff

    monkeypatch.setattr(contract_diff, "MAX_BYTES", 1024)
    huge = snapshot(tmp_path / "huge.json", [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(100)])
    status, out, err = run(capsys, "contract", "diff", huge, huge)
    assert status == 2 and not out and "larger than" in err and err.count("\n") == 1


def test_a_hostile_file_name_is_escaped_in_the_error_line(tmp_path, capsys):
    status, _, err = run(capsys, "contract", "diff", str(tmp_path / "no\x1b[2Jsuch\n.json"), str(tmp_path / "x.json"))
    assert status == 2 and err.count("\n") == 1 and "\x1b" not in err


# -- a property test: random hostile snapshots, bounded and seeded ---------------------------------

_ALPHABET = [
    *"ab_-. /:\\",
    "\x00",
    "\x07",
    "\x1b",
    "\n",
    "\r",
    "\t",
    "\x7f",
    "\x85",
    "\x9b",
    "\u061c",
    "\u200b",
    "\u200e",
    "\u2028",
    "\u202a",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\ud800",
    "é",
    "🚀",
]


def hostile_text(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 24)))


def hostile_schema(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 6 or roll < 0.15:
        return rng.choice([5, "x", None, [], [1, "a"], True, hostile_text(rng)])
    schema: dict[str, Any] = {"type": rng.choice(["object", "string", ["object", "null"], 7, hostile_text(rng)])}
    if roll < 0.8:
        schema["properties"] = {hostile_text(rng): hostile_schema(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if roll < 0.3:
        schema["required"] = rng.choice([[hostile_text(rng)], "a", 3])
    if roll < 0.2:
        schema["enum"] = [hostile_text(rng) for _ in range(2)]
    if roll < 0.1:
        schema["additionalProperties"] = rng.choice([False, True, {}, "no"])
    return schema


def hostile_snapshot(rng: random.Random) -> list[dict[str, Any]]:
    tools = []
    for _ in range(rng.randint(0, 4)):
        tool: dict[str, Any] = {"name": hostile_text(rng) or "t", "inputSchema": hostile_schema(rng)}
        if rng.random() < 0.5:
            tool["outputSchema"] = hostile_schema(rng)
        if rng.random() < 0.3:
            tool["description"] = hostile_text(rng)
        tools.append(tool)
    return tools


def test_random_hostile_snapshots_print_only_escaped_lines_or_one_error_line(tmp_path, capsys):
    rng = random.Random(54)  # seeded: a failure names its round, and replays
    for round_ in range(150):
        old = snapshot(tmp_path / "old.json", json.dumps({"tools": hostile_snapshot(rng)}))
        new = snapshot(tmp_path / "new.json", json.dumps({"tools": hostile_snapshot(rng)}))
        status, out, err = run(capsys, "contract", "diff", old, new)
        assert "Traceback" not in err, round_
        assert status in (0, 1, 2), round_
        if status == 2:
            assert not out and err.count("\n") == 1 and not UNSAFE.search(err), (round_, err)
        else:
            assert not err, (round_, err)
            assert_safe(out)
