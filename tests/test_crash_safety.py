"""Crash safety of session files, checked with real processes.

- A writer child is SIGKILLed at a random moment, twenty times against the same file; after
  every kill the file must still load, hold one header, keep every entry the writer reported
  as written, stay append-only and form one unbroken parent chain.
- A torn last line (a write cut short) is moved to ``NAME.jsonl.torn`` before the next
  append, so no broken line ever ends up in the middle of the file.
- The write lock works across processes: a second writer is refused with the holder's pid,
  readers (including the ``tree`` CLI) are never blocked, and the lock dies with its holder
  whether it exits cleanly or is killed.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import orjson
import pytest

from pi_tui.session import (
    Entry,
    FsyncPolicy,
    SessionLocked,
    SessionManager,
    read_session_file,
)
from tests.factories import assistant, user

CRASH_ROUNDS = 20
CRASH_SEED = 20240607
KILL_DELAY_RANGE = (0.0, 0.12)
"""Seconds between the writer's ``ready`` and its SIGKILL. ``ready`` comes once the session
is open: importing pi_tui alone takes ~0.25 s and opening grows with the file, so a delay
counted from the start of the process would mostly kill writers that never appended."""
LINE_TIMEOUT = 30.0
PROJECT_ROOT = Path(__file__).resolve().parents[1]
ENTRY_ID = re.compile(r"[0-9a-f]{8}")

USER = user("hello from a child process")
ASSISTANT = assistant("reply from a child process")

CHILD_PRELUDE = f"""
import sys
from pathlib import Path

from pi_tui.session import FsyncPolicy, SessionManager, parse_message

USER = {USER!r}
ASSISTANT = {ASSISTANT!r}
"""

WRITER_SCRIPT = (
    CHILD_PRELUDE
    + """
directory = Path(sys.argv[1])
fsync = FsyncPolicy(sys.argv[2])
existing = sorted(directory.glob("*.jsonl")) if directory.is_dir() else []
if existing:
    manager = SessionManager.open(existing[0], fsync=fsync)
else:
    manager = SessionManager.create(Path.cwd(), directory, fsync=fsync)
parse_message(USER)  # builds pydantic's validator (~50 ms) before the clock starts
print("ready", flush=True)
# An id is reported only once the manager says its record is on disk: a new session keeps
# entries in memory until the first assistant message, then writes them all at once.
pending = []
records = len(manager.entries()) + 1
for number in range(1_000_000):  # bounded, in case the parent dies before killing us
    pending.append(manager.append_message(USER if number % 2 == 0 else ASSISTANT))
    records += 1
    if manager.records_on_disk == records:
        print("\\n".join(pending), flush=True)
        pending.clear()
manager.close()
"""
)

APPEND_ONCE_SCRIPT = (
    CHILD_PRELUDE
    + """
manager = SessionManager.open(Path(sys.argv[1]))
print(manager.append_message(USER), flush=True)
manager.close()
"""
)

HOLDER_SCRIPT = (
    CHILD_PRELUDE
    + """
manager = SessionManager.open(Path(sys.argv[1]))
print("locked", flush=True)
sys.stdin.read()
manager.close()
print("closed", flush=True)
"""
)


# --- helpers --------------------------------------------------------------------------------


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    """Child processes started by a test; any still running at teardown are killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def spawn(
    children: list[subprocess.Popen[str]], script: str, *args: str, cwd: Path
) -> subprocess.Popen[str]:
    """Start ``python -c script args...`` with piped, line-buffered text streams."""
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), path]))}
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        env=env,
    )
    children.append(process)
    return process


def stream(process: subprocess.Popen[str], name: str) -> IO[str]:
    """One of the child's piped streams (they are all pipes in :func:`spawn`)."""
    handle: IO[str] | None = getattr(process, name)
    assert handle is not None
    return handle


def expect_line(process: subprocess.Popen[str], expected: str) -> None:
    """Read one stdout line, killing the child if it does not come within LINE_TIMEOUT."""
    watchdog = threading.Timer(LINE_TIMEOUT, process.kill)
    watchdog.start()
    try:
        line = stream(process, "stdout").readline()
    finally:
        watchdog.cancel()
    if line != expected + "\n":
        process.kill()
        process.wait(timeout=10)
        detail = stream(process, "stderr").read()
        pytest.fail(f"child wrote {line!r}, expected {expected!r}; stderr:\n{detail}")


def reported_ids(output: str) -> list[str]:
    """Entry ids from complete stdout lines; a line cut short by the kill is not a report."""
    complete = output.split("\n")[:-1]
    assert all(ENTRY_ID.fullmatch(line) for line in complete), complete
    return complete


def lock_holder(session: Path) -> str:
    """What the lock sidecar says about its holder."""
    return session.with_name(session.name + ".lock").read_text()


def check_file_bytes(data: bytes) -> bytes:
    """Check, without the loader, that every complete line is a JSON object and the first
    (only the first) is the session header. Returns the unterminated tail (may be empty)."""
    *complete, tail = data.split(b"\n")
    records = [orjson.loads(line) for line in complete]
    assert all(isinstance(record, dict) for record in records)
    if records:
        assert [r["type"] == "session" for r in records] == [True] + [False] * (len(records) - 1)
    return tail


def check_chain(entries: list[Entry]) -> None:
    """No branching happened, so the entries form one chain in file order."""
    ids = [entry.id for entry in entries]
    assert len(set(ids)) == len(ids), "duplicate entry ids"
    known = set(ids)
    assert all(entry.parent_id is None or entry.parent_id in known for entry in entries)
    assert [entry.parent_id for entry in entries] == [None, *ids[:-1]]


def write_session(directory: Path, count: int = 3) -> tuple[Path, list[str]]:
    """A closed session file with ``count`` alternating user/assistant entries."""
    manager = SessionManager.create(directory, directory / "sessions")
    ids = [manager.append_message(assistant() if n % 2 else user(f"u{n}")) for n in range(count)]
    manager.close()
    assert manager.session_file is not None
    return manager.session_file, ids


# --- SIGKILLed writers ----------------------------------------------------------------------


def test_writer_killed_at_random_moments_never_loses_reported_entries(
    tmp_path: Path, children: list[subprocess.Popen[str]]
) -> None:
    rng = random.Random(CRASH_SEED)
    directory = tmp_path / "sessions"
    previous_complete = b""
    all_reported: list[str] = []
    rounds_with_appends = 0
    session: Path | None = None

    for number in range(CRASH_ROUNDS):
        fsync = FsyncPolicy.CLOSE if number % 2 == 0 else FsyncPolicy.ASSISTANT
        child = spawn(children, WRITER_SCRIPT, str(directory), fsync.value, cwd=tmp_path)
        expect_line(child, "ready")
        time.sleep(rng.uniform(*KILL_DELAY_RANGE))
        child.send_signal(signal.SIGKILL)
        output = stream(child, "stdout").read()
        errors = stream(child, "stderr").read()
        assert child.wait(timeout=10) == -signal.SIGKILL, f"writer died on its own:\n{errors}"
        reported = reported_ids(output)
        all_reported.extend(reported)

        files = sorted(directory.glob("*.jsonl")) if directory.is_dir() else []
        assert len(files) <= 1, files
        if not files:
            assert not all_reported, "ids were reported but no session file exists"
            continue
        if session is None:
            session = files[0]
        assert files == [session], "a later writer started a second file"

        data = session.read_bytes()
        # Append-only: everything complete before this round is still there, byte for byte.
        assert data.startswith(previous_complete)
        tail = check_file_bytes(data)
        loaded = read_session_file(session)
        if tail:
            assert loaded.torn_tail is not None and loaded.torn_tail.data == tail
            assert len(loaded.warnings) == 1 and "torn" in loaded.warnings[0].message
        else:
            assert loaded.torn_tail is None
            assert loaded.warnings == []
        if data:
            assert loaded.header is not None
        position = {entry.id: index for index, entry in enumerate(loaded.entries)}
        missing = set(all_reported) - position.keys()
        assert not missing, f"round {number}: reported ids lost: {sorted(missing)}"
        # This writer's ids are in the file in the order it reported them.
        order = [position[entry_id] for entry_id in reported]
        assert order == sorted(order)
        check_chain(loaded.entries)
        if reported:
            rounds_with_appends += 1
            # The killed writer's lock sidecar stays behind; only the flock died with it.
            assert f"pid {child.pid} " in lock_holder(session)
        previous_complete = data[: len(data) - len(tail)]

    assert session is not None
    final = read_session_file(session)
    assert final.warnings == [] or (final.torn_tail is not None and len(final.warnings) == 1)
    assert len(final.entries) >= len(all_reported) > 0
    check_chain(final.entries)
    # The random delays must mostly land inside the append loop, or this test proves little.
    assert rounds_with_appends >= CRASH_ROUNDS // 2, rounds_with_appends


# --- torn and unterminated last lines -------------------------------------------------------


def test_torn_last_line_is_moved_aside_before_the_next_append(
    tmp_path: Path, children: list[subprocess.Popen[str]]
) -> None:
    session, ids = write_session(tmp_path)
    before = session.read_bytes()
    fragment = orjson.dumps({"type": "message", "id": "deadbeef", "parentId": ids[-1]})[:30]
    with session.open("ab") as handle:
        handle.write(fragment)

    loaded = read_session_file(session)
    assert loaded.torn_tail is not None
    assert (loaded.torn_tail.offset, loaded.torn_tail.data) == (len(before), fragment)
    assert len(loaded.warnings) == 1
    assert [entry.id for entry in loaded.entries] == ids
    # Opening (read-only or writable) changes nothing; only an append repairs the tail.
    SessionManager.open(session, read_only=True).close()
    SessionManager.open(session).close()
    assert session.read_bytes() == before + fragment

    child = spawn(children, APPEND_ONCE_SCRIPT, str(session), cwd=tmp_path)
    new_id = stream(child, "stdout").read().strip()
    assert child.wait(timeout=30) == 0, stream(child, "stderr").read()

    torn = session.with_name(session.name + ".torn")
    assert torn.read_bytes() == fragment + b"\n"
    data = session.read_bytes()
    assert data.startswith(before)
    assert data.count(b"\n") == before.count(b"\n") + 1 and data.endswith(b"\n")
    check_file_bytes(data)
    repaired = read_session_file(session)
    assert repaired.warnings == [] and repaired.torn_tail is None
    assert [entry.id for entry in repaired.entries] == [*ids, new_id]
    check_chain(repaired.entries)

    # A second torn tail is added to the same sidecar, not written over the first.
    second = b'{"type":"message","id":"0badf00d","mess'
    with session.open("ab") as handle:
        handle.write(second)
    with SessionManager.open(session) as manager:
        manager.append_message(assistant())
    assert torn.read_bytes() == fragment + b"\n" + second + b"\n"
    final = read_session_file(session)
    assert final.warnings == [] and len(final.entries) == len(ids) + 2
    check_chain(final.entries)


def test_complete_last_line_without_newline_gets_one(tmp_path: Path) -> None:
    session, ids = write_session(tmp_path)
    session.write_bytes(session.read_bytes().rstrip(b"\n"))
    loaded = read_session_file(session)
    assert loaded.missing_final_newline and loaded.warnings == [] and loaded.torn_tail is None

    with SessionManager.open(session) as manager:
        new_id = manager.append_message(user("after the repair"))
    check_file_bytes(session.read_bytes())
    repaired = read_session_file(session)
    assert repaired.warnings == [] and not repaired.missing_final_newline
    assert [entry.id for entry in repaired.entries] == [*ids, new_id]
    assert not session.with_name(session.name + ".torn").exists()


def test_torn_first_write_is_replaced_by_a_complete_session(tmp_path: Path) -> None:
    # A file holding nothing but a cut-short header: the new header must be written too.
    session = tmp_path / "torn-header.jsonl"
    fragment = b'{"type":"session","version":3,"id":"0190'
    session.write_bytes(fragment)
    assert read_session_file(session).header is None

    with SessionManager.open(session) as manager:
        ids = [manager.append_message(user("again")), manager.append_message(assistant())]
    assert session.with_name(session.name + ".torn").read_bytes() == fragment + b"\n"
    loaded = read_session_file(session)
    assert loaded.header is not None
    assert [entry.id for entry in loaded.entries] == ids


# --- the write lock across processes --------------------------------------------------------


def test_second_writer_is_refused_while_readers_and_the_cli_still_work(
    tmp_path: Path, children: list[subprocess.Popen[str]]
) -> None:
    session, ids = write_session(tmp_path)
    holder = spawn(children, HOLDER_SCRIPT, str(session), cwd=tmp_path)
    expect_line(holder, "locked")
    assert f"pid {holder.pid} " in lock_holder(session)
    before = session.read_bytes()

    with pytest.raises(SessionLocked) as refused:
        SessionManager.open(session)
    assert f"pid {holder.pid} " in str(refused.value)
    assert refused.value.path == session
    # The refused attempt left the holder's record alone.
    assert f"pid {holder.pid} " in lock_holder(session)

    reader = SessionManager.open(session, read_only=True)
    assert [entry.id for entry in reader.entries()] == ids
    reader.close()

    cli = subprocess.run(
        [sys.executable, "-m", "pi_tui", "tree", "--json", str(session)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert [node["id"] for node in json.loads(cli.stdout)["nodes"]] == ids
    assert session.read_bytes() == before
    assert holder.poll() is None, "the holder should still be running"

    stream(holder, "stdin").close()
    assert holder.wait(timeout=30) == 0, stream(holder, "stderr").read()
    assert stream(holder, "stdout").read() == "closed\n"
    assert not session.with_name(session.name + ".lock").exists()

    with SessionManager.open(session) as manager:
        assert f"pid {os.getpid()} " in lock_holder(session)
        new_id = manager.append_message(user("after the holder left"))
    assert [entry.id for entry in read_session_file(session).entries] == [*ids, new_id]


def test_lock_of_a_killed_holder_does_not_block_the_next_writer(
    tmp_path: Path, children: list[subprocess.Popen[str]]
) -> None:
    session, ids = write_session(tmp_path)
    holder = spawn(children, HOLDER_SCRIPT, str(session), cwd=tmp_path)
    expect_line(holder, "locked")
    with pytest.raises(SessionLocked, match=f"pid {holder.pid} "):
        SessionManager.open(session)

    holder.send_signal(signal.SIGKILL)
    assert holder.wait(timeout=10) == -signal.SIGKILL
    # The sidecar outlives its holder and still names it, but the flock is gone.
    assert f"pid {holder.pid} " in lock_holder(session)

    with SessionManager.open(session) as manager:
        assert f"pid {os.getpid()} " in lock_holder(session)
        new_id = manager.append_message(assistant())
    assert not session.with_name(session.name + ".lock").exists()
    loaded = read_session_file(session)
    assert loaded.warnings == []
    assert [entry.id for entry in loaded.entries] == [*ids, new_id]
