"""Every session file pi wrote opens, and our tree/context equal what pi built from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_tui.cli import main
from tests.factories import PI_FIXTURES, requires_pi_fixtures

pytestmark = requires_pi_fixtures

EXPECTED = sorted(PI_FIXTURES.glob("expected/*.context.json")) if PI_FIXTURES.is_dir() else []
ALL_SESSIONS = (
    sorted(
        path
        for path in PI_FIXTURES.glob("*.jsonl")
        if not path.name.endswith(("transcript.jsonl", "events-json-mode.jsonl", "requests.jsonl"))
    )
    if PI_FIXTURES.is_dir()
    else []
)


def run_json(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return orjson.loads(capsysbinary.readouterr().out)


def _positional(nodes: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    ids = {node["id"]: index for index, node in enumerate(nodes)}
    return [
        (node["type"], node["role"], node["label"], ids.get(node["treeParent"]), node["order"])
        for node in nodes
    ]


@pytest.mark.parametrize("expected_context", EXPECTED, ids=lambda p: p.name.split(".")[0])
def test_context_and_tree_equal_pis(
    expected_context: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    name = expected_context.name.removesuffix(".context.json")
    session_file = PI_FIXTURES / f"{name}.jsonl"
    before = session_file.read_bytes()
    expected = orjson.loads(expected_context.read_bytes())
    expected_tree = orjson.loads((PI_FIXTURES / "expected" / f"{name}.treeflat.json").read_bytes())

    context = run_json(capsysbinary, "context", str(session_file), "--json")
    tree = run_json(capsysbinary, "tree", str(session_file), "--json")

    if name.endswith("-v1"):
        # v1 files get fresh random ids on migration: compare by position.
        assert len(context["branchIds"]) == len(expected["branchIds"])
        assert context["context"] == expected["context"]
        assert context["sessionName"] == expected["sessionName"]
        assert _positional(tree["nodes"]) == _positional(expected_tree["nodes"])
    else:
        for key in ("leafId", "sessionName", "branchIds", "context"):
            assert context[key] == expected[key], key
        assert tree["nodes"] == expected_tree["nodes"]
    assert session_file.read_bytes() == before


@pytest.mark.parametrize("session_file", ALL_SESSIONS, ids=lambda p: p.name)
def test_every_pi_file_opens_and_prints(
    session_file: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    before = session_file.read_bytes()
    assert main(["tree", str(session_file), "--all"]) == 0
    output = capsysbinary.readouterr()
    assert output.out.count(b"\n") >= 3
    assert output.err == b""  # no warnings: pi's files are clean
    assert session_file.read_bytes() == before


def test_appending_to_a_copy_of_a_pi_file_keeps_every_original_byte(tmp_path: Path) -> None:
    from pi_tui.session import SessionManager
    from tests.factories import user

    source = PI_FIXTURES / "rpc_tree.jsonl"
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())
    session = SessionManager.open(copy)
    session.branch("85276fa9")
    new_id = session.append_message(user("And Italy?"))
    session.close()
    data = copy.read_bytes()
    assert data.startswith(source.read_bytes())
    last = orjson.loads(data.splitlines()[-1])
    assert (last["id"], last["parentId"]) == (new_id, "85276fa9")


def pis_context_rules(records: list[dict[str, Any]], leaf_id: str) -> list[tuple[Any, ...]]:
    """pi's context rules (pi-reference §4), written out from the rules alone, on raw records.

    Each message is reduced to (role, its message dict or summary) so the comparison does not
    depend on how pi_tui shapes the synthesized summary messages.
    """
    by_id = {record["id"]: record for record in records if "id" in record}
    path: list[dict[str, Any]] = []
    current = by_id.get(leaf_id)
    while current is not None:
        path.append(current)
        current = by_id.get(current.get("parentId") or "")
    path.reverse()

    def emitted(record: dict[str, Any]) -> tuple[Any, ...] | None:
        if record["type"] == "message":
            return ("message", record["message"])
        if record["type"] == "custom_message":
            return ("custom", record.get("content"))
        if record["type"] == "branch_summary" and record.get("summary"):
            return ("branchSummary", record["summary"])
        return None

    compactions = [i for i, record in enumerate(path) if record["type"] == "compaction"]
    if not compactions:
        return [m for m in map(emitted, path) if m is not None]
    at = compactions[-1]
    compaction = path[at]
    result: list[tuple[Any, ...] | None] = [("compactionSummary", compaction["summary"])]
    kept_ids = [record["id"] for record in path[:at]]
    if compaction["firstKeptEntryId"] in kept_ids:
        start = kept_ids.index(compaction["firstKeptEntryId"])
        result += [emitted(record) for record in path[start:at]]
    result += [emitted(record) for record in path[at + 1 :]]
    return [m for m in result if m is not None]


def ours(context: dict[str, Any]) -> list[tuple[Any, ...]]:
    shaped: list[tuple[Any, ...]] = []
    for message in context["messages"]:
        role = message["role"]
        if role in ("compactionSummary", "branchSummary"):
            shaped.append((role, message["summary"]))
        elif role == "custom":
            shaped.append(("custom", message.get("content")))
        else:
            shaped.append(("message", message))
    return shaped


@pytest.mark.parametrize("name", ["large-session-v1", "rpc_compact"])
async def test_a_file_compacted_by_pi_tui_gives_pis_context(
    name: str,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pi_tui.agent.compaction import CompactionSettings
    from pi_tui.agent.provider import ModelSpec, litellm_module
    from pi_tui.agent_session import AgentSession
    from pi_tui.session import SessionManager, parse_entry

    litellm_module()
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "0")
    copy = tmp_path / f"{name}.jsonl"
    copy.write_bytes((PI_FIXTURES / f"{name}.jsonl").read_bytes())
    manager = SessionManager.open(copy)
    agent = AgentSession(
        manager,
        model=ModelSpec("offline/pi-tui"),
        tools={},
        cwd=tmp_path,
        compaction=CompactionSettings(keep_recent_tokens=1),
    )
    result = await agent.compact()
    agent.close()

    records = [orjson.loads(line) for line in copy.read_bytes().splitlines()]
    for record in records[1:]:
        parse_entry(record)  # still valid pi v3
    compactions = [r for r in records if r["type"] == "compaction"]
    assert compactions[-1]["firstKeptEntryId"] == result.first_kept_entry_id
    context = run_json(capsysbinary, "context", str(copy), "--json")
    expected = pis_context_rules(records, context["leafId"])
    assert ours(context["context"]) == expected
    assert expected[0] == ("compactionSummary", result.summary)
    assert len(expected) < len(pis_context_rules(records, compactions[-1]["parentId"]))
