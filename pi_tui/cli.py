"""The ``pi-tui`` command: argument parsing and the read-only session commands.

``sessions``, ``tree`` and ``context`` never modify a file; they also serve as the test oracle
against pi's own output for the same files.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from .session.catalog import age, text_of
from .session.entries import THINKING_LEVELS
from .session.layout import (
    default_filter,
    describe_calls,
    describe_entry,
    filter_tree,
    layout_tree,
    show_all,
)

if TYPE_CHECKING:
    from .agent_session import AgentSession
    from .settings import Settings

FRAMES_PER_SECOND = 120
EXIT_FAILURE = 1
EXIT_USAGE = 2


def open_session(args: argparse.Namespace, cwd: Path) -> SessionManager:
    """The session a run works in, from --session / -c / --from / --no-session."""
    directory = default_session_dir(cwd, args.session_dir)
    if args.no_session:
        return SessionManager.in_memory(cwd)
    if args.session:
        candidate = Path(args.session).expanduser()
        looks_like_path = "/" in args.session or args.session.endswith(".jsonl")
        if looks_like_path and not candidate.exists():
            return SessionManager.open(candidate)
        return SessionManager.open(resolve_session(args.session, directory))
    if args.continue_ or args.from_entry:
        return SessionManager.continue_recent(cwd, directory)
    return SessionManager.create(cwd, directory)


def build_agent(
    args: argparse.Namespace,
    manager: SessionManager,
    cwd: Path,
    settings: Settings | None = None,
) -> AgentSession:
    """The AgentSession for a run: model, thinking level and tools from the arguments."""
    from .agent.provider import ModelSpec
    from .agent_session import AgentSession
    from .config import choose_model
    from .settings import load_settings
    from .tools.base import ToolContext
    from .tools.registry import create_tools

    settings = settings or load_settings(cwd)
    tools_arg = getattr(args, "tools", None)
    names = [n.strip() for n in tools_arg.split(",") if n.strip()] if tools_arg else None
    tools = create_tools(ToolContext(cwd), names)
    context = manager.build_context()
    current = context.model
    model_name = choose_model(args.model, (current.provider, current.model_id) if current else None)
    spec = ModelSpec(model_name, api_base=args.api_base, api_key=args.api_key)
    summary_model = (
        ModelSpec(settings.summary_model, api_base=args.api_base, api_key=args.api_key)
        if settings.summary_model
        else None
    )
    thinking = getattr(args, "thinking", None) or context.thinking_level
    return AgentSession(
        manager,
        model=spec,
        tools=tools,
        thinking=thinking,
        cwd=cwd,
        compaction=settings.compaction,
        branch_summary=settings.branch_summary,
        summary_model=summary_model,
    )


def move_to_entry(args: argparse.Namespace, agent: AgentSession, settings: Settings) -> None:
    """``--from``: move the leaf, writing a summary of the branch left behind when asked to."""
    if args.summarize_branch or settings.on_navigate == "summarize":
        navigation = asyncio.run(agent.navigate_with_summary(args.from_entry, exact=True))
        if navigation.summary_entry_id is not None:
            print(
                f"pi-tui: summarized the branch left behind ({navigation.summary_entry_id})",
                file=sys.stderr,
            )
    else:
        agent.navigate(args.from_entry, exact=True)


def run_agent(args: argparse.Namespace) -> int:
    """Run one prompt in print or JSON mode."""
    from .agent.provider import warm_up
    from .modes.json_mode import run_json
    from .modes.print_mode import run_print
    from .settings import load_settings

    warm_up()  # LiteLLM's import dominates start-up; overlap it with opening the session
    prompt = " ".join(args.prompt).strip()
    if not prompt and not sys.stdin.isatty():
        prompt = sys.stdin.read().strip()
    if not prompt:
        raise ValueError("no prompt given (pass it as an argument or on standard input)")
    cwd = Path.cwd()
    settings = load_settings(cwd)
    manager = open_session(args, cwd)
    try:
        session = build_agent(args, manager, cwd, settings)
        if args.from_entry:
            move_to_entry(args, session, settings)
        runner = run_json(session, prompt) if args.mode == "json" else run_print(session, prompt)
        return asyncio.run(runner)
    finally:
        manager.close()


def run_interactive(args: argparse.Namespace) -> int:
    """The Textual app."""
    # Textual paints at most MAX_FPS frames a second and a key waits for the next frame; 120
    # instead of 60 takes about 12 ms off every key press (measured in tmux). Read at import.
    os.environ.setdefault("TEXTUAL_FPS", str(FRAMES_PER_SECOND))
    from .settings import load_settings
    from .ui.app import PiTuiApp

    cwd = Path.cwd()
    settings = load_settings(cwd)
    # What exists once the session is open lives until exit, so it is moved out of the cyclic
    # collector's reach; else its first pass after loading walks every entry (measured: 120 ms
    # at 10k entries, before the first frame). The collection first clears the start-up
    # garbage while it is small, so nothing collectable is frozen.
    gc.collect()
    manager = open_session(args, cwd)
    agent = build_agent(args, manager, cwd, settings)
    gc.freeze()
    if args.from_entry:
        move_to_entry(args, agent, settings)

    def open_other(path: Path) -> AgentSession:
        return build_agent(args, SessionManager.open(path), cwd, settings)

    prompt = " ".join(args.prompt).strip() or None
    app = PiTuiApp(
        agent,
        open_session=open_other,
        initial_prompt=prompt,
        start_with="resume" if args.resume else None,
        on_navigate=settings.on_navigate,
    )
    try:
        app.run()
    finally:
        app.agent.close()
    return 0


def _print_json(value: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")


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
    """``pi-tui sessions``: the sessions of this folder, newest first."""
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
            f"{info.id[:8]}  {age(info.modified_ms):>4}  {info.message_count:>5} msgs"
            f"  {_size(info.size):>8}  {title}"
        )
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    """``pi-tui tree SESSION``: the session's tree, active path marked."""
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
    """``pi-tui context SESSION``: what the next model call would see."""
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


def cmd_compact(args: argparse.Namespace) -> int:
    """``pi-tui compact SESSION``: summarize older turns into a compaction entry."""
    from .agent.compaction import CompactionRefused
    from .agent.summarize import SummarizationAborted, SummarizationError
    from .settings import load_settings

    cwd = Path.cwd()
    settings = load_settings(cwd)
    if args.keep_recent_tokens is not None:
        if args.keep_recent_tokens < 0:
            raise ValueError("--keep-recent-tokens must not be negative")
        settings = replace(
            settings,
            compaction=replace(settings.compaction, keep_recent_tokens=args.keep_recent_tokens),
        )
    manager = SessionManager.open(
        resolve_session(args.session, default_session_dir(cwd, args.session_dir))
    )
    try:
        _report_warnings(manager)
        agent = build_agent(args, manager, cwd, settings)
        result = asyncio.run(agent.compact(args.instructions))
    except (CompactionRefused, SummarizationError, SummarizationAborted) as exc:
        print(f"pi-tui: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        manager.close()
    print(
        f"Compacted {result.tokens_before:,} tokens of context; kept from entry "
        f"{result.first_kept_entry_id}.\n"
    )
    print(result.summary)
    return 0


COMMANDS = ("sessions", "tree", "context", "compact")


def build_command_parser() -> argparse.ArgumentParser:
    """The parser for ``pi-tui COMMAND …`` (read-only session commands)."""
    parser = argparse.ArgumentParser(prog="pi-tui", description="Inspect and compact sessions.")
    parser.add_argument(
        "--session-dir",
        type=Path,
        help="where sessions live (default: $PI_TUI_SESSION_DIR or <cwd>/.pi/sessions)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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

    compact = commands.add_parser(
        "compact", help="summarize older turns into a compaction entry (the originals stay)"
    )
    compact.add_argument("session", help="a file path, an id prefix, or a session name")
    compact.add_argument(
        "--keep-recent-tokens",
        type=int,
        help="recent context kept verbatim, in tokens (default: settings, else 20000)",
    )
    compact.add_argument("--instructions", help="what the summary should focus on")
    compact.add_argument("--model", help="the model that writes the summary")
    compact.add_argument("--api-base", help="base URL of an OpenAI-compatible server")
    compact.add_argument("--api-key", help="API key for the model's provider")
    compact.set_defaults(handler=cmd_compact)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The parser for running the agent: ``pi-tui [options] [PROMPT]``."""
    parser = argparse.ArgumentParser(
        prog="pi-tui",
        description="A terminal coding agent whose sessions are append-only trees.",
        epilog="Session commands: pi-tui sessions | tree SESSION | context SESSION | "
        "compact SESSION.",
    )
    parser.add_argument("--version", action="version", version=f"pi-tui {__version__}")
    parser.add_argument("prompt", nargs="*", help="the message to send")
    parser.add_argument(
        "-p", "--print", action="store_true", help="answer PROMPT, print the answer, exit"
    )
    parser.add_argument(
        "--mode", choices=("text", "json"), default="text", help="json: one event per line"
    )
    parser.add_argument("--model", help="any LiteLLM model string (default: offline/pi-tui)")
    parser.add_argument("--thinking", choices=THINKING_LEVELS, help="reasoning level")
    parser.add_argument("--api-base", help="base URL of an OpenAI-compatible server")
    parser.add_argument("--api-key", help="API key for the model's provider")
    parser.add_argument("--session", help="open this session (path, id prefix or name)")
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the most recent session",
    )
    parser.add_argument("--no-session", action="store_true", help="keep nothing on disk")
    parser.add_argument("-r", "--resume", action="store_true", help="start with the session picker")
    parser.add_argument(
        "--from",
        dest="from_entry",
        metavar="ENTRY_ID",
        help="branch from this entry before prompting (implies -c without --session)",
    )
    parser.add_argument(
        "--summarize-branch",
        action="store_true",
        help="with --from: attach a summary of the branch left behind at the new position",
    )
    parser.add_argument("--tools", help="comma-separated tools to enable (default: all)")
    parser.add_argument(
        "--session-dir",
        type=Path,
        help="where sessions live (default: $PI_TUI_SESSION_DIR or <cwd>/.pi/sessions)",
    )
    return parser


def _is_command(arguments: list[str]) -> bool:
    """True for ``pi-tui [--session-dir DIR] COMMAND …``."""
    position = 0
    if arguments and arguments[0] == "--session-dir":
        position = 2
    elif arguments and arguments[0].startswith("--session-dir="):
        position = 1
    return len(arguments) > position and arguments[position] in COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pi-tui`` console script."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if _is_command(arguments):
            args = build_command_parser().parse_args(arguments)
            result: int = args.handler(args)
            return result
        parser = build_parser()
        args = parser.parse_args(arguments)
        if args.print or args.mode == "json":
            return run_agent(args)
        return run_interactive(args)
    except (SessionError, EntryNotFound, ValueError) as exc:
        print(f"pi-tui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"pi-tui: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
