"""Loading is tolerant and read-only; writing repairs and migrates only when it must."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_tui.session import (
    NotASessionFile,
    SessionManager,
    SessionNotFound,
    list_sessions,
    most_recent_session,
    read_session_file,
    resolve_session,
)
from tests.factories import assistant, texts, user

HEADER = {
    "type": "session",
    "version": 3,
    "id": "sess-1",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/p",
}


def entry(
    entry_id: str, parent: str | None, message: dict[str, Any], second: int = 0
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
        "message": message,
    }


def write(path: Path, *records: dict[str, Any] | bytes) -> bytes:
    data = b"".join(
        record if isinstance(record, bytes) else orjson.dumps(record) + b"\n" for record in records
    )
    path.write_bytes(data)
    return data


def test_missing_and_empty_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    loaded = read_session_file(empty)
    assert loaded.header is None and loaded.entries == []
    session = SessionManager.open(tmp_path / "missing.jsonl", read_only=True)
    assert session.entries() == []


@pytest.mark.parametrize(
    "content",
    [b'{"type":"message","id":"a"}\n', b"not json at all\n", b'{"type":"session"}\n'],
    ids=["first-record-not-a-header", "only-malformed", "header-without-id"],
)
def test_a_file_that_is_not_a_session_is_refused_and_left_alone(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(NotASessionFile, match="not a pi session file"):
        SessionManager.open(path)
    assert path.read_bytes() == content


def test_bad_lines_are_skipped_with_warnings_and_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(
        path,
        HEADER,
        entry("aaaaaaaa", None, user("q"), 1),
        b"{this is not json\n",
        b"\n",
        b"[1, 2]\n",
        {"type": "message", "parentId": "aaaaaaaa"},
        entry("bbbbbbbb", "aaaaaaaa", assistant("a"), 2),
    )
    loaded = read_session_file(path)
    assert [e.id for e in loaded.entries] == ["aaaaaaaa", "bbbbbbbb"]
    messages = {w.line: w.message for w in loaded.warnings}
    assert set(messages) == {3, 4, 5, 6}
    assert "malformed JSON" in messages[3]
    assert "blank" in messages[4]
    assert "without an id" in messages[6]


def test_torn_last_line_is_ignored_then_moved_aside_before_the_next_append(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    complete = write(
        path,
        HEADER,
        entry("aaaaaaaa", None, user("q"), 1),
        entry("bbbbbbbb", "aaaaaaaa", assistant("a"), 2),
    )
    fragment = b'{"type":"message","id":"cccccccc","parentId":"bbbb'
    path.write_bytes(complete + fragment)
    loaded = read_session_file(path)
    assert loaded.torn_tail is not None and loaded.torn_tail.data == fragment
    assert [w.line for w in loaded.warnings] == [4]
    assert "torn" in loaded.warnings[0].message

    session = SessionManager.open(path)
    assert path.read_bytes() == complete + fragment  # opening changes nothing
    session.append_message(user("next"))
    session.close()
    assert (tmp_path / "s.jsonl.torn").read_bytes() == fragment + b"\n"
    data = path.read_bytes()
    assert data.startswith(complete)
    reread = read_session_file(path)
    assert reread.warnings == [] and len(reread.entries) == 3


def test_complete_last_line_without_newline_gets_one_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    complete = write(
        path,
        HEADER,
        entry("aaaaaaaa", None, user("q"), 1),
        entry("bbbbbbbb", "aaaaaaaa", assistant("a"), 2),
    )
    path.write_bytes(complete[:-1])
    loaded = read_session_file(path)
    assert loaded.warnings == [] and loaded.missing_final_newline
    session = SessionManager.open(path)
    session.append_message(user("next"))
    session.close()
    assert read_session_file(path).warnings == []
    assert path.read_bytes().startswith(complete)
    assert not (tmp_path / "s.jsonl.torn").exists()


def test_orphans_become_extra_roots(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(
        path,
        HEADER,
        entry("aaaaaaaa", None, user("root"), 1),
        entry("bbbbbbbb", "deadbeef", user("orphan"), 2),
        entry("cccccccc", "bbbbbbbb", assistant("child of orphan"), 3),
    )
    session = SessionManager.open(path, read_only=True)
    roots = session.get_tree()
    assert [node.entry.id for node in roots] == ["aaaaaaaa", "bbbbbbbb"]
    assert roots[1].children[0].entry.id == "cccccccc"
    assert texts(session.build_context().messages) == ["orphan", "child of orphan"]


def test_duplicate_ids_later_wins_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(
        path,
        HEADER,
        entry("aaaaaaaa", None, user("first"), 1),
        entry("aaaaaaaa", None, user("second"), 2),
    )
    session = SessionManager.open(path, read_only=True)
    assert texts(session.build_context().messages) == ["second"]
    assert any("duplicate id aaaaaaaa" in str(w) for w in session.warnings)
    assert len(session.get_tree()) == 1


def test_parent_cycles_neither_hang_nor_lose_entries(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(
        path,
        HEADER,
        entry("aaaaaaaa", None, user("root"), 1),
        entry("bbbbbbbb", "cccccccc", user("b"), 2),
        entry("cccccccc", "bbbbbbbb", user("c"), 3),
        entry("dddddddd", "dddddddd", user("self"), 4),
    )
    session = SessionManager.open(path, read_only=True)
    rows = session.index.flatten()
    assert sorted(row.entry.id for row in rows) == ["aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd"]
    assert texts(session.build_context("cccccccc").messages) == ["b", "c"]
    assert any("cycle" in str(w) for w in session.index.warnings)


def test_unknown_entry_types_are_tree_nodes_but_not_context(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    future = {
        "type": "future_thing",
        "id": "bbbbbbbb",
        "parentId": "aaaaaaaa",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "payload": {"x": 1},
    }
    write(
        path,
        HEADER,
        entry("aaaaaaaa", None, user("q"), 1),
        future,
        entry("cccccccc", "bbbbbbbb", assistant("a"), 3),
    )
    session = SessionManager.open(path, read_only=True)
    assert [row.entry.type for row in session.index.flatten()] == [
        "message",
        "future_thing",
        "message",
    ]
    assert texts(session.build_context().messages) == ["q", "a"]
    assert session.get_entry("bbbbbbbb").raw == future  # type: ignore[union-attr]


def test_deep_chains_do_not_recurse(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records: list[dict[str, Any] | bytes] = [HEADER]
    parent = None
    for n in range(5000):
        entry_id = f"{n:08x}"
        records.append(entry(entry_id, parent, user(str(n))))
        parent = entry_id
    write(path, *records)
    session = SessionManager.open(path, read_only=True)
    assert len(session.path()) == 5000
    assert len(session.index.flatten()) == 5000
    assert len(session.build_context().messages) == 5000


# --- migration ------------------------------------------------------------------------------


def v1_file(path: Path) -> bytes:
    header = {
        "type": "session",
        "id": "old",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/p",
        "provider": "anthropic",
        "modelId": "c",
        "thinkingLevel": "off",
    }
    return write(
        path,
        header,
        {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": user("q1")},
        {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z", "message": assistant("a1")},
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 9,
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:04.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "h",
                "content": "x",
                "display": True,
                "timestamp": 4,
            },
        },
    )


def test_v1_entries_get_ids_in_one_chain_and_index_becomes_id(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    original = v1_file(path)
    session = SessionManager.open(path, read_only=True)
    entries = session.entries()
    assert all(len(e.id) == 8 for e in entries)
    assert entries[0].parent_id is None
    assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]
    compaction = entries[2].raw
    assert compaction["firstKeptEntryId"] == entries[1].id
    assert "firstKeptEntryIndex" not in compaction
    assert entries[3].raw["message"]["role"] == "custom"
    assert session.header["version"] == 3
    assert texts(session.build_context().messages) == ["s", "a1", "x"]
    assert path.read_bytes() == original
    assert not list(tmp_path.glob("*.bak"))


def test_v2_ids_are_kept_and_hook_messages_renamed(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    write(
        path,
        {**HEADER, "version": 2},
        entry(
            "aaaaaaaa",
            None,
            {
                "role": "hookMessage",
                "customType": "h",
                "content": "x",
                "display": True,
                "timestamp": 1,
            },
            1,
        ),
    )
    session = SessionManager.open(path, read_only=True)
    only = session.entries()[0]
    assert (only.id, only.parent_id) == ("aaaaaaaa", None)
    assert only.raw["message"]["role"] == "custom"


def test_old_file_is_rewritten_atomically_with_a_backup_only_when_appended_to(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.jsonl"
    original = v1_file(path)
    session = SessionManager.open(path)
    ids = [e.id for e in session.entries()]
    assert path.read_bytes() == original
    new_id = session.append_message(user("new"))
    session.close()
    assert (tmp_path / "old.jsonl.v1.bak").read_bytes() == original
    reread = read_session_file(path)
    assert reread.header is not None and reread.header["version"] == 3
    assert reread.original_version == 3
    assert [e.id for e in reread.entries] == [*ids, new_id]
    assert reread.entries[-1].parent_id == ids[-1]
    assert not list(tmp_path.glob("*.tmp-*"))


# --- catalog --------------------------------------------------------------------------------


def _session(directory: Path, cwd: Path, question: str, name: str | None = None) -> Path:
    session = SessionManager.create(cwd, directory)
    session.append_message(user(question, timestamp=int(time.time() * 1000)))
    session.append_message(assistant("a", timestamp=int(time.time() * 1000)))
    if name:
        session.append_session_info(name)
    session.close()
    assert session.session_file is not None
    return session.session_file


def test_listing_most_recent_and_resolving(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    older = _session(directory, tmp_path, "first question", name="Auth bug")
    newer = _session(directory, tmp_path, "second question")
    other = _session(directory, tmp_path / "elsewhere", "other project")
    (directory / "notes.txt").write_text("ignored")
    (directory / "broken.jsonl").write_text("garbage\n")
    os.utime(older, (time.time() - 100, time.time() - 100))
    os.utime(other, (time.time() - 200, time.time() - 200))

    infos = list_sessions(directory, tmp_path)
    assert {info.path for info in infos} == {older, newer}
    assert {info.path for info in list_sessions(directory)} == {older, newer, other}
    named = next(info for info in infos if info.path == older)
    assert (named.name, named.title, named.message_count) == ("Auth bug", "Auth bug", 2)
    plain = next(info for info in infos if info.path == newer)
    assert plain.title == "second question"

    assert most_recent_session(directory) == newer
    assert resolve_session(str(older), directory) == older
    header_id = read_session_file(newer).header["id"]  # type: ignore[index]
    assert resolve_session(header_id[:13], directory) == newer
    assert resolve_session("Auth bug", directory) == older
    with pytest.raises(SessionNotFound, match="No session matches"):
        resolve_session("nothing-like-this", directory)
    with pytest.raises(SessionNotFound, match="No such session file"):
        resolve_session(str(tmp_path / "gone.jsonl"), directory)


def test_continue_recent_opens_the_newest_or_creates(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    fresh = SessionManager.continue_recent(tmp_path, directory)
    assert fresh.entries() == []
    path = _session(directory, tmp_path, "q")
    resumed = SessionManager.continue_recent(tmp_path, directory)
    assert resumed.session_file == path
    assert len(resumed.entries()) == 2
    resumed.close()


def test_a_file_holding_only_a_torn_first_write_becomes_a_fresh_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"session","version":3,"id":"01')
    session = SessionManager.open(path)
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.close()
    assert (tmp_path / "s.jsonl.torn").read_bytes() == b'{"type":"session","version":3,"id":"01\n'
    loaded = read_session_file(path)
    assert loaded.warnings == []
    assert loaded.header is not None and loaded.header["id"] == session.session_id
    assert len(loaded.entries) == 2


def test_most_recent_session_ignores_what_is_not_a_session(tmp_path: Path) -> None:
    assert most_recent_session(tmp_path / "missing") is None
    directory = tmp_path / "sessions"
    directory.mkdir()
    assert most_recent_session(directory) is None
    valid = _session(directory, tmp_path, "q")
    (directory / "newer-but-invalid.jsonl").write_text('{"type":"message"}\n')
    (directory / "newer.txt").write_text("x")
    assert most_recent_session(directory) == valid


def test_custom_session_id_is_used_in_header_and_file_name(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path, session_id="my-own-id")
    assert session.session_id == "my-own-id"
    assert session.session_file is not None
    assert session.session_file.name.endswith("_my-own-id.jsonl")
