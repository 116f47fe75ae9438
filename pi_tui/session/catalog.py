"""Where sessions live, what they are called, and how a user's SESSION argument finds one."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import NotASessionFile, SessionNotFound
from .ids import file_stamp, ms_from_iso
from .loader import read_header, read_session_file
from .tree import SessionIndex

SESSION_DIR_ENV = "PI_TUI_SESSION_DIR"
SESSION_SUFFIX = ".jsonl"


def default_session_dir(cwd: Path, override: Path | str | None = None) -> Path:
    """``--session-dir``, else ``$PI_TUI_SESSION_DIR``, else ``<cwd>/.pi/sessions``."""
    if override:
        return Path(override).expanduser()
    from_env = os.environ.get(SESSION_DIR_ENV)
    if from_env:
        return Path(from_env).expanduser()
    return cwd / ".pi" / "sessions"


def session_file_name(session_id: str, created_iso: str) -> str:
    """``<ISO time with ':' and '.' as '-'>_<session id>.jsonl``."""
    return f"{file_stamp(created_iso)}_{session_id}{SESSION_SUFFIX}"


def text_of(content: Any) -> str:
    """The text of a message ``content`` (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def age(ms: int, now_ms: int | None = None) -> str:
    """How long ago a millisecond timestamp was: now, 5m, 3h, 2d, 1w, 4mo, 1y."""
    now = time.time() * 1000 if now_ms is None else now_ms
    seconds = max(0.0, (now - ms) / 1000)
    for unit, size in (("y", 31_536_000), ("mo", 2_592_000), ("w", 604_800), ("d", 86_400)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    if seconds >= 3600:
        return f"{int(seconds // 3600)}h"
    if seconds >= 60:
        return f"{int(seconds // 60)}m"
    return "now"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One row of a session listing."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session: str | None
    created: str
    modified_ms: int
    message_count: int
    first_message: str
    size: int

    @property
    def title(self) -> str:
        """The name if set, else the first user message."""
        return self.name or self.first_message

    def to_json(self) -> dict[str, Any]:
        """A JSON object for ``pi-tui sessions --json``."""
        return {
            "path": str(self.path),
            "id": self.id,
            "cwd": self.cwd,
            "name": self.name,
            "parentSession": self.parent_session,
            "created": self.created,
            "modified": self.modified_ms,
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
            "size": self.size,
        }


def session_info(path: Path) -> SessionInfo | None:
    """Summarize one file; None when it is not a session file."""
    try:
        loaded = read_session_file(path)
        stat = path.stat()
    except (OSError, NotASessionFile):
        return None
    header = loaded.header
    if header is None:
        return None
    index = SessionIndex(loaded.entries)
    first_message = ""
    count = 0
    modified = 0
    for entry in index.entries:
        message = entry.message
        if message is None:
            continue
        count += 1
        role = message.get("role")
        if role == "user" and not first_message:
            first_message = " ".join(text_of(message.get("content")).split())
        if role in ("user", "assistant"):
            stamp = message.get("timestamp")
            moment = stamp if isinstance(stamp, int) else ms_from_iso(entry.timestamp)
            modified = max(modified, moment)
    created = str(header.get("timestamp", ""))
    if not modified:
        modified = ms_from_iso(created) or int(stat.st_mtime * 1000)
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=str(header.get("cwd", "")),
        name=index.session_name,
        parent_session=parent if isinstance(parent, str) else None,
        created=created,
        modified_ms=modified,
        message_count=count,
        first_message=first_message or "(no messages)",
        size=stat.st_size,
    )


def session_files(directory: Path) -> list[Path]:
    """The ``*.jsonl`` files of a sessions folder (no recursion)."""
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.glob(f"*{SESSION_SUFFIX}") if path.is_file())


def list_sessions(directory: Path, cwd: Path | None = None) -> list[SessionInfo]:
    """Sessions in ``directory``, newest first; only those of ``cwd`` when one is given."""
    infos = [info for path in session_files(directory) if (info := session_info(path))]
    if cwd is not None:
        wanted = str(cwd)
        infos = [info for info in infos if not info.cwd or info.cwd == wanted]
    infos.sort(key=lambda info: info.modified_ms, reverse=True)
    return infos


def most_recent_session(directory: Path) -> Path | None:
    """The valid session file with the newest modification time (pi's ``--continue``)."""
    best: tuple[float, Path] | None = None
    for path in session_files(directory):
        if read_header(path) is None:
            continue
        mtime = path.stat().st_mtime
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None


def resolve_session(argument: str, directory: Path) -> Path:
    """A path, an id prefix, or a session name in ``directory`` → the session file."""
    if os.sep in argument or "/" in argument or argument.endswith(SESSION_SUFFIX):
        path = Path(argument).expanduser()
        if not path.exists():
            raise SessionNotFound(f"No such session file: {path}")
        return path
    matches: list[Path] = []
    for path in session_files(directory):
        header = read_header(path)
        if header is not None and str(header["id"]).startswith(argument):
            matches.append(path)
    if not matches:
        matches = [
            info.path
            for info in list_sessions(directory)
            if info.name is not None and info.name == argument
        ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionNotFound(
            f"No session matches {argument!r} in {directory} "
            "(give a file path, an id prefix, or a session name; `pi-tui sessions` lists them)"
        )
    names = ", ".join(path.name for path in matches[:5])
    raise SessionNotFound(
        f"{argument!r} matches {len(matches)} sessions ({names}); be more specific"
    )
