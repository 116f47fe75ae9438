"""The session tree: pi v3 JSONL files, their tree index, contexts, and the SessionManager.

This package is pure Python and imports nothing else from pi_tui, so it can be used alone.
"""

from .catalog import (
    SESSION_DIR_ENV,
    SessionInfo,
    default_session_dir,
    list_sessions,
    most_recent_session,
    resolve_session,
)
from .context import LAST_ENTRY, ModelRef, SessionContext, build_context
from .entries import CURRENT_VERSION, parse_entry, parse_message
from .errors import EntryNotFound, NotASessionFile, SessionError, SessionLocked, SessionNotFound
from .loader import LoadedFile, LoadWarning, read_session_file
from .manager import LEAF_MARKER_TYPE, SessionManager
from .records import Entry
from .store import FsyncPolicy
from .tree import FlatNode, SessionIndex, TreeNode

__all__ = [
    "CURRENT_VERSION",
    "LAST_ENTRY",
    "LEAF_MARKER_TYPE",
    "SESSION_DIR_ENV",
    "Entry",
    "EntryNotFound",
    "FlatNode",
    "FsyncPolicy",
    "LoadWarning",
    "LoadedFile",
    "ModelRef",
    "NotASessionFile",
    "SessionContext",
    "SessionError",
    "SessionIndex",
    "SessionInfo",
    "SessionLocked",
    "SessionManager",
    "SessionNotFound",
    "TreeNode",
    "build_context",
    "default_session_dir",
    "list_sessions",
    "most_recent_session",
    "parse_entry",
    "parse_message",
    "read_session_file",
    "resolve_session",
]
