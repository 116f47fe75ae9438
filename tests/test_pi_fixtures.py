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
