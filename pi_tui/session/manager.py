"""SessionManager: one session's entries, its movable leaf, and its file.

Appends create a child of the current leaf and move the leaf onto it; ``branch`` moves the leaf
anywhere in O(1) and writes nothing. Persistence follows pi's delayed flush, with a count of
records already on disk instead of a flag:

=================================  ===========================================================
state                              what reaches the disk on the next append
=================================  ===========================================================
new, no assistant message yet      nothing: entries wait in memory (no orphan question on disk)
first assistant message arrives    header + every waiting entry, in one ``write()``
flushed (or loaded with replies)   that one entry, one line in one ``write()``
loaded file without replies        nothing until an assistant arrives; then only the records
                                   not yet on disk (never a second header)
=================================  ===========================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self

from .catalog import (
    SessionInfo,
    default_session_dir,
    list_sessions,
    most_recent_session,
    session_file_name,
    text_of,
)
from .context import LAST_ENTRY, SessionContext, _LastEntry, build_context
from .entries import (
    CURRENT_VERSION,
    AgentMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    ModelChangeEntry,
    PiModel,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UserContentBlock,
    parse_message,
)
from .errors import EntryNotFound
from .ids import new_entry_id, new_session_id, now_iso
from .loader import LoadedFile, LoadWarning, gc_paused, read_session_file
from .records import Entry, Record, dump_line
from .store import FsyncPolicy, SessionWriter
from .tree import SessionIndex, TreeNode

LEAF_MARKER_TYPE = "pi_tui.leaf"
"""``customType`` of the entry that makes a leaf position durable across restarts."""

SUMMARY_ROLES = frozenset({"branchSummary", "compactionSummary"})


def is_leaf_marker(entry: Entry) -> bool:
    """True for the ``custom`` entry pi_tui appends to remember a leaf on close."""
    return entry.type == "custom" and entry.raw.get("customType") == LEAF_MARKER_TYPE


class SessionManager:
    """A live session: the tree index, the current leaf, and (when persistent) its file."""

    def __init__(
        self,
        header: Record,
        *,
        path: Path | None,
        loaded: LoadedFile | None = None,
        fsync: FsyncPolicy = FsyncPolicy.ASSISTANT,
        read_only: bool = False,
        writer: SessionWriter | None = None,
    ) -> None:
        self.header = header
        self.session_file = path
        self.read_only = read_only
        self.fsync = fsync
        self.warnings: list[LoadWarning] = list(loaded.warnings) if loaded else []
        entries = loaded.entries if loaded else []
        # Mirror of the file: header then every entry record in file order. The first
        # ``_on_disk`` of them are already written.
        self._records: list[Record] = [header, *(entry.raw for entry in entries)]
        self._on_disk = len(self._records) if loaded is not None and loaded.header else 0
        self._rewrite_from: int | None = (
            loaded.original_version if loaded is not None and loaded.migrated else None
        )
        with gc_paused():
            self.index = SessionIndex(entries)
        self.warnings.extend(self.index.warnings)
        self._has_assistant = any(entry.role == "assistant" for entry in entries)
        if writer is None and path is not None and not read_only:
            writer = SessionWriter(path, fsync)
        self._writer = writer
        self.leaf_id: str | None = self._resume_leaf()

    # --- construction -----------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        cwd: Path,
        session_dir: Path | None = None,
        *,
        fsync: FsyncPolicy = FsyncPolicy.ASSISTANT,
        parent_session: str | None = None,
        session_id: str | None = None,
    ) -> Self:
        """A new session in ``session_dir`` (default ``<cwd>/.pi/sessions``); no file yet."""
        directory = default_session_dir(cwd, session_dir)
        header = cls._new_header(cwd, parent_session, session_id)
        path = directory / session_file_name(str(header["id"]), str(header["timestamp"]))
        return cls(header, path=path, fsync=fsync)

    @classmethod
    def in_memory(cls, cwd: Path | None = None) -> Self:
        """A session that is never written (``--no-session``)."""
        return cls(cls._new_header(cwd or Path.cwd(), None), path=None)

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        read_only: bool = False,
        fsync: FsyncPolicy = FsyncPolicy.ASSISTANT,
    ) -> Self:
        """Open a session file; a missing or empty file becomes a new session at that path.

        Writable managers take the file's write lock at once (SessionLocked if another
        process has it). Opening never changes a byte of the file.
        """
        path = Path(path)
        writer = None if read_only else SessionWriter(path, fsync)
        # Lock before reading: a copy read before the lock could miss another writer's last
        # lines, and the next append would silently branch off a stale leaf.
        if writer is not None:
            writer.acquire()
        try:
            loaded = read_session_file(path) if path.exists() else None
        except BaseException:
            if writer is not None:
                writer.close()
            raise
        header = loaded.header if loaded is not None and loaded.header else None
        return cls(
            header or cls._new_header(Path.cwd(), None),
            path=path,
            loaded=loaded,
            fsync=fsync,
            read_only=read_only,
            writer=writer,
        )

    @classmethod
    def continue_recent(
        cls,
        cwd: Path,
        session_dir: Path | None = None,
        *,
        fsync: FsyncPolicy = FsyncPolicy.ASSISTANT,
    ) -> Self:
        """The most recently modified session of the folder, or a new one."""
        directory = default_session_dir(cwd, session_dir)
        recent = most_recent_session(directory)
        if recent is None:
            return cls.create(cwd, directory, fsync=fsync)
        return cls.open(recent, fsync=fsync)

    @staticmethod
    def list_sessions(cwd: Path, session_dir: Path | None = None) -> list[SessionInfo]:
        """Sessions of ``cwd``, newest first."""
        return list_sessions(default_session_dir(cwd, session_dir), cwd)

    @staticmethod
    def _new_header(cwd: Path, parent_session: str | None, session_id: str | None = None) -> Record:
        header = SessionHeader(
            version=CURRENT_VERSION,
            id=session_id or new_session_id(),
            timestamp=now_iso(),
            cwd=str(cwd),
            parent_session=parent_session,
        )
        return header.to_record()

    # --- properties -------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The header's session id."""
        return str(self.header["id"])

    @property
    def cwd(self) -> str:
        """The working folder the session belongs to."""
        return str(self.header.get("cwd", ""))

    @property
    def session_name(self) -> str | None:
        """The latest non-empty name set with ``/rename``."""
        return self.index.session_name

    @property
    def is_persisted(self) -> bool:
        """True once the header is on disk."""
        return self._on_disk > 0

    @property
    def records_on_disk(self) -> int:
        """How many records (header included) this manager knows to be in the file."""
        return self._on_disk

    @property
    def leaf(self) -> Entry | None:
        """The entry the next append will hang under."""
        return self.index.get(self.leaf_id) if self.leaf_id is not None else None

    def entries(self) -> list[Entry]:
        """All tree entries in file order."""
        return list(self.index.entries)

    def get_entry(self, entry_id: str) -> Entry | None:
        """The entry with this id, if any."""
        return self.index.get(entry_id)

    def get_children(self, entry_id: str) -> list[Entry]:
        """Direct children of an entry, in file order."""
        return self.index.children_of(entry_id)

    def get_label(self, entry_id: str) -> str | None:
        """The entry's current label."""
        return self.index.label_of(entry_id)

    def path(self, leaf_id: str | _LastEntry | None = LAST_ENTRY) -> list[Entry]:
        """Root → leaf (default: the current leaf)."""
        target = self.leaf_id if isinstance(leaf_id, _LastEntry) else leaf_id
        return self.index.path(target)

    def get_tree(self) -> list[TreeNode]:
        """The whole tree, children sorted by timestamp."""
        return self.index.get_tree()

    def build_context(self, leaf_id: str | _LastEntry | None = LAST_ENTRY) -> SessionContext:
        """What the model sees at ``leaf_id`` (default: the current leaf)."""
        target = self.leaf_id if isinstance(leaf_id, _LastEntry) else leaf_id
        return build_context(self.index, target)

    # --- leaf movement ----------------------------------------------------------------------

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``: O(1), nothing written."""
        if entry_id not in self.index:
            raise EntryNotFound(entry_id)
        self.leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append becomes a new root."""
        self.leaf_id = None

    def _resume_leaf(self) -> str | None:
        """The leaf a fresh load resumes at: the last entry, or what a leaf marker names."""
        last = self.index.last_entry
        if last is None:
            return None
        if is_leaf_marker(last) and (last.parent_id is None or last.parent_id in self.index):
            return last.parent_id
        return last.id

    # --- appending --------------------------------------------------------------------------

    def _append(self, build: Callable[[str, str | None, str], PiModel | Record]) -> str:
        entry_id = new_entry_id(self.index.by_id)
        built = build(entry_id, self.leaf_id, now_iso())
        return self._append_record(built if isinstance(built, dict) else built.to_record())

    def _append_record(self, record: Record) -> str:
        entry = Entry.from_record(record, len(self._records) + 1)
        self._records.append(record)
        self.index.add(entry)
        self.leaf_id = entry.id
        if entry.role == "assistant":
            self._has_assistant = True
        self._flush()
        return entry.id

    def _flush(self) -> None:
        """Write what is not on disk yet, if the session has earned a file."""
        if self._writer is None or not self._has_assistant:
            return
        pending = self._records[self._on_disk :]
        if not pending:
            return
        if self._rewrite_from is not None:
            # The file is still an older version: replace it by the migrated records that
            # were already on disk, then append the new ones.
            self._writer.prepare(self._records[: self._on_disk], self._rewrite_from)
            self._rewrite_from = None
        payload = b"".join(dump_line(record) for record in pending)
        holds_assistant = any(
            isinstance(record.get("message"), dict) and record["message"].get("role") == "assistant"
            for record in pending
        )
        self._writer.append(payload, holds_assistant=holds_assistant)
        self._on_disk = len(self._records)

    def append_message(self, message: AgentMessage | Record) -> str:
        """Append a user, assistant, toolResult, bashExecution or custom message."""
        if isinstance(message, dict):
            record = dict(message)
            role = parse_message(record).role
        else:
            record = message.to_record()
            role = message.role
        if role in SUMMARY_ROLES:
            raise ValueError(
                f"{role} messages are synthesized; use append_compaction/append_branch_summary"
            )
        return self._append(
            lambda i, p, t: {
                "type": "message",
                "id": i,
                "parentId": p,
                "timestamp": t,
                "message": record,
            }
        )

    def append_model_change(self, provider: str, model_id: str) -> str:
        """Record a model switch."""
        return self._append(
            lambda i, p, t: ModelChangeEntry(
                id=i, parent_id=p, timestamp=t, provider=provider, model_id=model_id
            )
        )

    def append_thinking_level_change(self, level: str) -> str:
        """Record a thinking-level switch."""
        return self._append(
            lambda i, p, t: ThinkingLevelChangeEntry(
                id=i, parent_id=p, timestamp=t, thinking_level=level
            )
        )

    def append_label(self, target_id: str, label: str | None) -> str:
        """Label an entry; None or blank text clears its label."""
        if target_id not in self.index:
            raise EntryNotFound(target_id)
        text = label.strip() if label else None
        return self._append(
            lambda i, p, t: LabelEntry(
                id=i, parent_id=p, timestamp=t, target_id=target_id, label=text or None
            )
        )

    def append_session_info(self, name: str) -> str:
        """Name the session (the name is stored trimmed)."""
        return self._append(
            lambda i, p, t: SessionInfoEntry(id=i, parent_id=p, timestamp=t, name=name.strip())
        )

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        """Store app or extension state that never reaches the model."""
        return self._append(
            lambda i, p, t: CustomEntry(
                custom_type=custom_type, data=data, id=i, parent_id=p, timestamp=t
            )
        )

    def append_custom_message(
        self,
        custom_type: str,
        content: str | Sequence[UserContentBlock],
        display: bool = True,
        details: Any = None,
    ) -> str:
        """Store an extension message that the model sees as user text."""
        return self._append(
            lambda i, p, t: CustomMessageEntry(
                custom_type=custom_type,
                content=content if isinstance(content, str) else list(content),
                display=display,
                details=details,
                id=i,
                parent_id=p,
                timestamp=t,
            )
        )

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = False,
    ) -> str:
        """Record a compaction at the leaf."""
        return self._append(
            lambda i, p, t: CompactionEntry(
                id=i,
                parent_id=p,
                timestamp=t,
                summary=summary,
                first_kept_entry_id=first_kept_entry_id,
                tokens_before=tokens_before,
                details=details,
                from_hook=from_hook,
            )
        )

    def append_branch_summary(
        self, summary: str, details: Any = None, from_hook: bool | None = False
    ) -> str:
        """Attach a branch summary at the leaf; ``fromId`` is the leaf (``"root"`` if none)."""
        from_id = self.leaf_id if self.leaf_id is not None else "root"
        return self._append(
            lambda i, p, t: BranchSummaryEntry(
                id=i,
                parent_id=p,
                timestamp=t,
                from_id=from_id,
                summary=summary,
                details=details,
                from_hook=from_hook,
            )
        )

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = False,
    ) -> str:
        """Move the leaf to ``entry_id`` (None: before the root) and attach a summary there."""
        if entry_id is None:
            self.reset_leaf()
        else:
            self.branch(entry_id)
        return self.append_branch_summary(summary, details, from_hook)

    # --- forks and closing ------------------------------------------------------------------

    def fork(self, entry_id: str, session_dir: Path | None = None) -> SessionManager:
        """A new session holding the path root → ``entry_id``, with its labels re-created.

        The new file is written at once when the path holds an assistant message, else at its
        first reply. This manager is left unchanged.
        """
        if entry_id not in self.index:
            raise EntryNotFound(entry_id)
        path_entries = [entry for entry in self.index.path(entry_id) if entry.type != "label"]
        directory = session_dir or (
            self.session_file.parent if self.session_file is not None else None
        )
        parent = str(self.session_file) if self.session_file is not None else None
        cwd = Path(self.cwd) if self.cwd else Path.cwd()
        if directory is None:
            forked = SessionManager.in_memory(cwd)
        else:
            forked = SessionManager.create(cwd, directory, fsync=self.fsync, parent_session=parent)
        for entry in path_entries:
            forked._records.append(entry.raw)
            forked.index.add(Entry.from_record(entry.raw, len(forked._records)))
            forked._has_assistant = forked._has_assistant or entry.role == "assistant"
        forked.leaf_id = forked._resume_leaf()
        for entry in path_entries:
            label = self.index.label_of(entry.id)
            if label is not None:
                forked.append_label(entry.id, label)
        forked._flush()
        return forked

    def close(self) -> None:
        """Make the leaf durable if it moved, then fsync and release the file."""
        if self._writer is None:
            return
        try:
            if self._has_assistant and self.leaf_id != self._resume_leaf():
                self.append_custom(LEAF_MARKER_TYPE)
                # The marker hangs under the old leaf; keep pointing at that entry.
                marker = self.index.last_entry
                self.leaf_id = marker.parent_id if marker is not None else None
        finally:
            self._writer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def user_messages(self) -> list[tuple[Entry, str]]:
        """Every user message of the file (all branches, file order) with its text."""
        result: list[tuple[Entry, str]] = []
        for entry in self.index.entries:
            message = entry.message
            if message is not None and message.get("role") == "user":
                text = text_of(message.get("content"))
                if text.strip():
                    result.append((entry, text))
        return result
