"""Reading a session file: tolerant, read-only, and honest about what it skipped.

Nothing here writes. Bad lines become :class:`LoadWarning` records with line numbers; a torn
last line (a write cut short) is remembered so the writer can move it aside before it appends;
v1 and v2 files are migrated to v3 in memory only.
"""

from __future__ import annotations

import gc
import io
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .entries import CURRENT_VERSION
from .errors import NotASessionFile
from .ids import new_entry_id
from .records import Entry, Record

HEADER_PROBE_BYTES = 4096


@dataclass(frozen=True, slots=True)
class LoadWarning:
    """Something in a file that was tolerated rather than trusted."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class TornTail:
    """A last line with no newline that is not valid JSON: a write that was cut short."""

    offset: int
    data: bytes


@dataclass(slots=True)
class LoadedFile:
    """Everything read from one session file."""

    header: Record | None
    entries: list[Entry]
    warnings: list[LoadWarning] = field(default_factory=list)
    original_version: int = CURRENT_VERSION
    torn_tail: TornTail | None = None
    missing_final_newline: bool = False
    size: int = 0
    content_lines: int = 0
    """Complete, non-blank lines read (valid or not); 0 for an empty or torn-only file."""

    @property
    def migrated(self) -> bool:
        """True when the records in memory differ from the file (v1/v2 upgraded)."""
        return self.original_version < CURRENT_VERSION


def _version_of(header: Record) -> int:
    version = header.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects.

    Loading allocates millions of containers that all survive; the collector would rescan
    them over and over (measured: 1.4–1.9 s of a 2.7 s open of a 100k-entry file).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_session_bytes(data: bytes) -> LoadedFile:
    """Parse a whole session file's bytes; never raises on bad content."""
    return parse_session_lines(io.BytesIO(data))


def parse_session_lines(lines: Iterable[bytes]) -> LoadedFile:
    """Parse a session file line by line (``lines`` keep their ``\\n``)."""
    warnings: list[LoadWarning] = []
    torn: TornTail | None = None
    missing_newline = False
    header: Record | None = None
    records: list[tuple[int, Record]] = []
    offset = 0
    content_lines = 0
    for number, line in enumerate(lines, start=1):
        start = offset
        offset += len(line)
        if not line.endswith(b"\n") and line.strip():
            # The last line, without its newline: complete, or a write cut short.
            try:
                record = orjson.loads(line)
                missing_newline = True
            except orjson.JSONDecodeError:
                torn = TornTail(start, line)
                warnings.append(
                    LoadWarning(number, "torn last line (cut short while writing); ignored")
                )
                break
        elif not line.strip():
            if line.endswith(b"\n"):
                warnings.append(LoadWarning(number, "blank line; ignored"))
            continue
        else:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                content_lines += 1
                warnings.append(LoadWarning(number, f"malformed JSON ({exc.msg}); ignored"))
                continue
        content_lines += 1
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            warnings.append(LoadWarning(number, "not an entry object; ignored"))
            continue
        if header is None and not records:
            if record["type"] != "session" or not isinstance(record.get("id"), str):
                return LoadedFile(None, [], warnings, size=offset, content_lines=content_lines)
            header = record
            continue
        if record["type"] == "session":
            warnings.append(LoadWarning(number, "second session header; ignored"))
            continue
        records.append((number, record))

    if header is None:
        return LoadedFile(
            None, [], warnings, torn_tail=torn, size=offset, content_lines=content_lines
        )

    version = _version_of(header)
    if version < 2:
        _migrate_v1(header, [record for _, record in records])
    if version < CURRENT_VERSION:
        _migrate_v2(header, [record for _, record in records])

    entries: list[Entry] = []
    for line_number, record in records:
        if not isinstance(record.get("id"), str):
            warnings.append(
                LoadWarning(line_number, f"{record['type']} entry without an id; ignored")
            )
            continue
        entries.append(Entry.from_record(record, line_number))
    return LoadedFile(header, entries, warnings, version, torn, missing_newline, offset)


def _migrate_v1(header: Record, records: list[Record]) -> None:
    """v1 files are one linear log: chain the entries in file order and give them ids."""
    taken: set[str] = set()
    previous: str | None = None
    for record in records:
        entry_id = new_entry_id(taken)
        taken.add(entry_id)
        record["id"] = entry_id
        record["parentId"] = previous
        previous = entry_id
    # firstKeptEntryIndex counted the header as record 0.
    for record in records:
        if record["type"] == "compaction" and "firstKeptEntryIndex" in record:
            index = record.pop("firstKeptEntryIndex")
            if isinstance(index, int) and 1 <= index <= len(records):
                record["firstKeptEntryId"] = records[index - 1]["id"]
    header["version"] = 2


def _migrate_v2(header: Record, records: list[Record]) -> None:
    """v3 renamed the ``hookMessage`` role to ``custom``."""
    for record in records:
        message = record.get("message")
        if (
            record["type"] == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"
    header["version"] = CURRENT_VERSION


def read_session_file(path: Path) -> LoadedFile:
    """Read and parse ``path``; raises NotASessionFile when it holds no session header.

    An empty file is a valid, empty session (nothing was ever flushed into it).
    """
    with path.open("rb", buffering=1 << 20) as handle, gc_paused():
        loaded = parse_session_lines(handle)
    # A file holding nothing but a torn fragment is a first write that was cut short.
    if loaded.header is None and loaded.content_lines:
        raise NotASessionFile(path, "its first record is not a session header")
    return loaded


def read_header(path: Path) -> Record | None:
    """The header of a session file from its first line only, or None (cheap, for listings)."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(HEADER_PROBE_BYTES)
    except OSError:
        return None
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    is_header = isinstance(record, dict) and record.get("type") == "session"
    return record if is_header and isinstance(record.get("id"), str) else None
