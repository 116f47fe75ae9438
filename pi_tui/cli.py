"""The ``pi-tui`` command: argument parsing and the read-only session commands.

``sessions``, ``tree`` and ``context`` never modify a file; they also serve as the test oracle
against pi's own output for the same files.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from . import __version__
from .session import (
    EntryNotFound,
    SessionError,
    SessionManager,
    default_session_dir,
    list_sessions,
    resolve_session,
)
from .session.catalog import text_of
from .session.layout import (
    default_filter,
    describe_calls,
    describe_entry,
    filter_tree,
    layout_tree,
    show_all,
)

EXIT_USAGE = 2


def _print_json(value: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")


def _age(ms: int) -> str:
    seconds = max(0, time.time() - ms / 1000)
    for unit, size in (("y", 31_536_000), ("mo", 2_592_000), ("w", 604_800), ("d", 86_400)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    if seconds >= 3600:
        return f"{int(seconds // 3600)}h"
    if seconds >= 60:
        return f"{int(seconds // 60)}m"
    return "now"


def _size(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f}{unit}" if unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    return f"{value:.1f}GB"


def _open_read_only(argument: str, session_dir: Path) -> SessionManager:
    return SessionManager.open(resolve_session(argument, session_dir), read_only=True)


def _report_warnings(manager: SessionManager) -> None:
    for warning in manager.warnings:
        print(f"pi-tui: warning: {warning}", file=sys.stderr)


def cmd_sessions(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    directory = default_session_dir(cwd, args.session_dir)
    infos = list_sessions(directory, None if args.all else cwd)
    if args.json:
        _print_json([info.to_json() for info in infos])
        return 0
    if not infos:
        print(f"No sessions in {directory}")
        return 0
    for info in infos:
        title = " ".join(info.title.split())
        if len(title) > 60:
            title = title[:59] + "…"
        print(
            f"{info.id[:8]}  {_age(info.modified_ms):>4}  {info.message_count:>5} msgs"
            f"  {_size(info.size):>8}  {title}"
        )
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    manager = _open_read_only(args.session, default_session_dir(Path.cwd(), args.session_dir))
    _report_warnings(manager)
    roots = manager.get_tree()
    if args.json:
        nodes = [
            {
                "id": row.entry.id,
                "type": row.entry.type,
                "role": row.entry.role,
                "label": row.label,
                "treeParent": row.tree_parent,
                "order": row.order,
            }
            for row in manager.index.flatten(roots)
        ]
        _print_json({"nodes": nodes})
        return 0
    active = {entry.id for entry in manager.path()}
    visible = filter_tree(roots, show_all if args.all else default_filter)
    lines = []
    for row in layout_tree(visible):
        marker = "*" if row.entry.id in active else " "
        label = f"[{row.label}] " if row.label else ""
        text = describe_entry(row.entry, manager.index)
        lines.append(f"{marker} {row.prefix}{row.entry.id[:8]} {label}{text}")
    print("\n".join(lines) if lines else "(empty session)")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    manager = _open_read_only(args.session, default_session_dir(Path.cwd(), args.session_dir))
    _report_warnings(manager)
    if args.leaf is not None:
        manager.branch(args.leaf)
    context = manager.build_context()
    if args.json:
        _print_json(
            {
                "leafId": manager.leaf_id,
                "sessionName": manager.session_name,
                "branchIds": [entry.id for entry in manager.path()],
                "context": context.to_json(),
            }
        )
        return 0
    model = f"{context.model.provider}/{context.model.model_id}" if context.model else "(none)"
    print(f"leaf {manager.leaf_id}  model {model}  thinking {context.thinking_level}")
    for message in context.messages:
        role = message.get("role")
        text = (
            message.get("summary")
            or text_of(message.get("content"))
            or message.get("command")
            or describe_calls(message)
        )
        print(f"[{role}] {' '.join(str(text).split())[:200]}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``pi-tui``."""
    parser = argparse.ArgumentParser(
        prog="pi-tui",
        description="A terminal coding agent whose sessions are append-only trees.",
    )
    parser.add_argument("--version", action="version", version=f"pi-tui {__version__}")
    parser.add_argument(
        "--session-dir",
        type=Path,
        help="where sessions live (default: $PI_TUI_SESSION_DIR or <cwd>/.pi/sessions)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    sessions = commands.add_parser("sessions", help="list the sessions of this folder")
    sessions.add_argument(
        "--all", action="store_true", help="include sessions started in other folders"
    )
    sessions.add_argument("--json", action="store_true", help="print JSON")
    sessions.set_defaults(handler=cmd_sessions)

    tree = commands.add_parser("tree", help="print a session's tree")
    tree.add_argument("session", help="a file path, an id prefix, or a session name")
    tree.add_argument("--json", action="store_true", help="print the flattened tree as JSON")
    tree.add_argument("--all", action="store_true", help="show settings, labels and app state")
    tree.set_defaults(handler=cmd_tree)

    context = commands.add_parser("context", help="print what the next model call would see")
    context.add_argument("session", help="a file path, an id prefix, or a session name")
    context.add_argument("--leaf", help="build the context at this entry instead of the leaf")
    context.add_argument("--json", action="store_true", help="print JSON")
    context.set_defaults(handler=cmd_context)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pi-tui`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        result: int = handler(args)
    except (SessionError, EntryNotFound) as exc:
        print(f"pi-tui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(
            f"pi-tui: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(), file=sys.stderr
        )
        return EXIT_USAGE
    return result


if __name__ == "__main__":
    sys.exit(main())
