"""The file: delayed flush, one line per append, durable leaf, permissions, byte-exact re-reads."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest

from pi_tui.session import (
    LEAF_MARKER_TYPE,
    SESSION_DIR_ENV,
    FsyncPolicy,
    SessionManager,
    default_session_dir,
    read_session_file,
)
from pi_tui.session.store import SessionWriter
from tests.factories import assistant, user


def lines_of(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture
def session(tmp_path: Path) -> SessionManager:
    return SessionManager.create(tmp_path, tmp_path / ".pi" / "sessions")


def test_file_lives_in_the_sessions_folder_with_pi_naming(session: SessionManager) -> None:
    path = session.session_file
    assert path is not None
    assert path.parent.name == "sessions"
    stamp, _, rest = path.name.partition("_")
    assert rest == f"{session.session_id}.jsonl"
    assert ":" not in stamp and "." not in stamp and stamp.endswith("Z")


def test_state_one_nothing_on_disk_before_the_first_assistant(session: SessionManager) -> None:
    session.append_model_change("p", "m")
    session.append_message(user("question"))
    session.append_session_info("name")
    assert session.session_file is not None
    assert not session.session_file.exists()
    assert session.records_on_disk == 0


def test_state_two_first_assistant_writes_header_and_backlog_in_one_write(
    session: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[bytes] = []
    original = SessionWriter.append

    def spy(self: SessionWriter, payload: bytes, *, holds_assistant: bool) -> None:
        writes.append(payload)
        original(self, payload, holds_assistant=holds_assistant)

    monkeypatch.setattr(SessionWriter, "append", spy)
    session.append_model_change("p", "m")
    session.append_message(user("question"))
    session.append_message(assistant("answer", stop_reason="error"))
    assert len(writes) == 1
    assert session.session_file is not None
    records = lines_of(session.session_file)
    assert [r["type"] for r in records] == ["session", "model_change", "message", "message"]
    assert session.records_on_disk == 4


def test_state_three_each_later_entry_is_one_line(
    session: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    writes: list[bytes] = []
    original = SessionWriter.append

    def spy(self: SessionWriter, payload: bytes, *, holds_assistant: bool) -> None:
        writes.append(payload)
        original(self, payload, holds_assistant=holds_assistant)

    monkeypatch.setattr(SessionWriter, "append", spy)
    session.append_message(user("q2"))
    session.append_label(session.leaf_id or "", "here")
    assert len(writes) == 2
    assert all(w.endswith(b"\n") and w.count(b"\n") == 1 for w in writes)
    assert session.session_file is not None
    assert len(lines_of(session.session_file)) == 5


def test_state_four_loaded_file_without_replies_never_gets_a_second_header(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "x", "timestamp": "t", "cwd": "/"}
    question = {
        "type": "message",
        "id": "aaaaaaaa",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": user("q"),
    }
    path.write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(question) + b"\n")
    session = SessionManager.open(path)
    session.append_custom("waiting")
    assert len(lines_of(path)) == 2
    session.append_message(assistant("finally"))
    records = lines_of(path)
    assert [r["type"] for r in records] == ["session", "message", "custom", "message"]
    session.close()


def test_loaded_file_with_replies_appends_at_once(tmp_path: Path, session: SessionManager) -> None:
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.close()
    assert session.session_file is not None
    reopened = SessionManager.open(session.session_file)
    reopened.append_message(user("more"))
    assert len(lines_of(session.session_file)) == 4
    reopened.close()


def test_a_file_written_by_us_reads_back_byte_identical(session: SessionManager) -> None:
    session.append_model_change("anthropic", "claude")
    session.append_thinking_level_change("medium")
    question = session.append_message(user("héllo ✓ 你好"))
    session.append_message(
        assistant(
            "a",
            tool_calls=[
                {
                    "type": "toolCall",
                    "id": "c1",
                    "name": "read",
                    "arguments": {"path": "x", "n": None},
                }
            ],
        )
    )
    session.append_label(question, "start")
    session.append_custom_message("note", [{"type": "text", "text": "t"}], details={"k": None})
    session.close()
    assert session.session_file is not None
    original = session.session_file.read_bytes()
    loaded = read_session_file(session.session_file)
    assert loaded.warnings == []
    rewritten = (
        orjson.dumps(loaded.header)
        + b"\n"
        + b"".join(orjson.dumps(entry.raw) + b"\n" for entry in loaded.entries)
    )
    assert rewritten == original
    assert "你好".encode() in original  # UTF-8, not \u escapes, as pi writes


def test_new_files_are_private(session: SessionManager) -> None:
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    assert session.session_file is not None
    assert stat.S_IMODE(session.session_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(session.session_file.parent.stat().st_mode) == 0o700
    session.close()


def test_session_dir_override_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SESSION_DIR_ENV, raising=False)
    assert default_session_dir(tmp_path) == tmp_path / ".pi" / "sessions"
    monkeypatch.setenv(SESSION_DIR_ENV, str(tmp_path / "env"))
    assert default_session_dir(tmp_path) == tmp_path / "env"
    assert default_session_dir(tmp_path, tmp_path / "flag") == tmp_path / "flag"


def test_leaf_position_survives_a_restart_through_one_marker(session: SessionManager) -> None:
    question = session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.branch(question)
    session.close()
    assert session.session_file is not None
    records = lines_of(session.session_file)
    marker = records[-1]
    assert marker["type"] == "custom" and marker["customType"] == LEAF_MARKER_TYPE
    assert marker["parentId"] == question

    reopened = SessionManager.open(session.session_file)
    assert reopened.leaf_id == question
    reopened.close()
    # Closing again at the same place adds nothing.
    assert len(lines_of(session.session_file)) == len(records)
    again = SessionManager.open(session.session_file)
    answer = again.append_message(assistant("second answer"))
    again.close()
    assert SessionManager.open(session.session_file, read_only=True).leaf_id == answer


def test_no_marker_when_the_leaf_did_not_move(session: SessionManager) -> None:
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.close()
    assert session.session_file is not None
    assert [r["type"] for r in lines_of(session.session_file)][-1] == "message"


def test_fsync_policies_are_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd))[1])
    for policy, expected in (
        (FsyncPolicy.ENTRY, 3),
        (FsyncPolicy.ASSISTANT, 1),
        (FsyncPolicy.CLOSE, 0),
    ):
        calls.clear()
        session = SessionManager.create(tmp_path, tmp_path / policy.value, fsync=policy)
        session.append_message(user("q"))
        session.append_message(assistant("a"))  # header + 2 entries: one write
        session.append_message(user("q2"))
        session.append_custom("x")
        assert len(calls) == expected, policy
        session.close()


def test_opening_an_empty_file_makes_it_a_new_session_at_that_path(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    session = SessionManager.open(path)
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.close()
    records = lines_of(path)
    assert records[0]["type"] == "session" and records[0]["id"] == session.session_id
    assert len(records) == 3


def test_opening_a_missing_path_creates_it_lazily(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "new.jsonl"
    session = SessionManager.open(path)
    session.append_message(user("q"))
    assert not path.exists()
    session.append_message(assistant("a"))
    assert path.exists()
    session.close()


def test_a_writable_open_takes_the_lock_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui.session import manager as manager_module

    session = SessionManager.create(tmp_path, tmp_path)
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.close()
    path = session.session_file
    assert path is not None
    seen: list[bool] = []
    real_read = manager_module.read_session_file

    def spying_read(target: Path) -> object:
        seen.append(Path(str(target) + ".lock").exists())
        return real_read(target)

    monkeypatch.setattr(manager_module, "read_session_file", spying_read)
    SessionManager.open(path).close()
    SessionManager.open(path, read_only=True)
    assert seen == [True, False]
