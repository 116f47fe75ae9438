"""Which files of a tree grep and find look at: ``.gitignore`` rules, never ``.git`` and not
the session logs in ``.pi/sessions``.

A small gitignore matcher: comments, blank lines, ``!`` negation, ``/`` anchoring, trailing
``/`` for directories only, ``*``, ``?``, ``**`` and character classes. Rules of deeper
``.gitignore`` files win over shallower ones, and the last matching rule of a file wins. An
ignored directory is not entered, so nothing below it can be re-included (as in git).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ALWAYS_SKIPPED = frozenset({".git"})
SKIPPED_FOLDERS = frozenset({(".pi", "sessions")})
"""(parent, name) of folders skipped when met on the way: the session logs hold every tool
result, so searching them finds each earlier search again. Searching inside them still works."""


def glob_to_regex(pattern: str) -> str:
    """A regex (without anchors) matching the slash-separated paths that ``pattern`` matches.

    ``*`` and ``?`` stay within one path segment, ``**/`` spans any number of directories
    (including none), a trailing ``/**`` everything below, and ``[...]`` is a character class
    (``[!...]`` or ``[^...]`` negated).
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            translated, i = _character_class(pattern, i)
            out.append(translated)
        elif char == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def _character_class(pattern: str, start: int) -> tuple[str, int]:
    """Translate the ``[...]`` at ``start``; an unclosed ``[`` is a literal bracket."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    body_start = i
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 1
    if i >= len(pattern):
        return re.escape("["), start + 1
    body = pattern[body_start:i].replace("\\", "\\\\").replace("[", "\\[")
    return f"[{'^' if negate else ''}{body}]", i + 1


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A compiled full-match regex for a glob over relative POSIX paths.

    A pattern without ``/`` matches the last path segment at any depth.
    """
    cleaned = pattern.removeprefix("./")
    prefix = "" if "/" in cleaned else "(?:.*/)?"
    return re.compile(prefix + glob_to_regex(cleaned.removeprefix("/")), re.DOTALL)


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One line of a ``.gitignore`` file."""

    regex: re.Pattern[str]
    negated: bool
    directory_only: bool

    @classmethod
    def parse(cls, line: str) -> IgnoreRule | None:
        """The rule on ``line``, or None for blank lines and comments."""
        text = line.rstrip("\n\r")
        if not text.endswith("\\ "):
            text = text.rstrip(" ")
        if not text or text.startswith("#"):
            return None
        negated = text.startswith("!")
        if negated or text.startswith(("\\#", "\\!")):
            text = text[1:]
        directory_only = text.endswith("/")
        text = text.rstrip("/")
        if not text:
            return None
        return cls(compile_glob(text), negated, directory_only)

    def matches(self, relative: str, is_dir: bool) -> bool:
        """Whether the rule applies to ``relative`` (a path below the rule's directory)."""
        if self.directory_only and not is_dir:
            return False
        return self.regex.fullmatch(relative) is not None


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ``.gitignore``, applying to paths below ``base``."""

    base: str
    rules: tuple[IgnoreRule, ...]

    @classmethod
    def load(cls, directory: Path) -> IgnoreFile | None:
        """The ``.gitignore`` of ``directory``, or None when it has none (or no rules)."""
        try:
            text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        rules = tuple(rule for line in text.splitlines() if (rule := IgnoreRule.parse(line)))
        return cls(directory.as_posix(), rules) if rules else None

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True if ignored, False if re-included by a ``!`` rule, None if no rule matches."""
        relative = path[len(self.base) :].lstrip("/")
        for rule in reversed(self.rules):
            if rule.matches(relative, is_dir):
                return not rule.negated
        return None


@dataclass(frozen=True, slots=True)
class Entry:
    """A file or directory found by :func:`walk`."""

    relative: str
    """POSIX path relative to the walk's root."""
    path: Path
    is_dir: bool


def is_ignored(path: Path, is_dir: bool, ignores: list[IgnoreFile]) -> bool:
    """Whether the innermost deciding ``.gitignore`` in ``ignores`` ignores ``path``."""
    if path.name in ALWAYS_SKIPPED:
        return True
    if is_dir and (path.parent.name, path.name) in SKIPPED_FOLDERS:
        return True
    posix = path.as_posix()
    for ignore in reversed(ignores):
        decision = ignore.decide(posix, is_dir)
        if decision is not None:
            return decision
    return False


def ancestor_ignores(root: Path) -> list[IgnoreFile]:
    """The ``.gitignore`` files above ``root`` up to its git work tree's top, outermost first.

    Outside a git work tree no ancestor's rules apply.
    """
    found: list[IgnoreFile] = []
    if (root / ".git").exists():
        return found
    for directory in root.parents:
        loaded = IgnoreFile.load(directory)
        if loaded:
            found.append(loaded)
        if (directory / ".git").exists():
            return found[::-1]
    return []


def walk(root: Path) -> Iterator[Entry]:
    """Every visible entry below ``root``, depth first, names sorted; symlinks are not followed."""
    root = root.absolute()
    yield from _walk(root, "", ancestor_ignores(root))


def _walk(directory: Path, prefix: str, ignores: list[IgnoreFile]) -> Iterator[Entry]:
    local = IgnoreFile.load(directory)
    scoped = [*ignores, local] if local else ignores
    try:
        with os.scandir(directory) as scan:
            children = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    for child in children:
        try:
            is_dir = child.is_dir(follow_symlinks=False)
        except OSError:
            continue
        path = Path(child.path)
        if is_ignored(path, is_dir, scoped):
            continue
        relative = prefix + child.name
        yield Entry(relative, path, is_dir)
        if is_dir:
            yield from _walk(path, relative + "/", scoped)
