"""The gitignore matcher and the tree walk grep and find share."""

from __future__ import annotations

from pathlib import Path

from pi_tui.tools.ignore import IgnoreRule, compile_glob, walk


def visible(root: Path) -> list[str]:
    return [entry.relative + ("/" if entry.is_dir else "") for entry in walk(root)]


def make(root: Path, *paths: str) -> None:
    for relative in paths:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if relative.endswith("/"):
            target.mkdir(exist_ok=True)
        else:
            target.write_text("x\n")


def test_glob_wildcards() -> None:
    assert compile_glob("*.py").fullmatch("a/b/c.py")
    assert not compile_glob("*.py").fullmatch("a/b/c.pyc")
    assert compile_glob("src/*.ts").fullmatch("src/a.ts")
    assert not compile_glob("src/*.ts").fullmatch("src/x/a.ts")
    assert compile_glob("src/**/*.ts").fullmatch("src/a.ts")
    assert compile_glob("src/**/*.ts").fullmatch("src/x/y/a.ts")
    assert compile_glob("file?.txt").fullmatch("file1.txt")
    assert not compile_glob("file?.txt").fullmatch("file10.txt")
    assert compile_glob("[ab]*.md").fullmatch("b.md")
    assert not compile_glob("[!ab]*.md").fullmatch("a.md")
    assert compile_glob("[!ab]*.md").fullmatch("c.md")
    assert compile_glob("x[").fullmatch("x[")


def test_rule_parsing() -> None:
    assert IgnoreRule.parse("# comment") is None
    assert IgnoreRule.parse("   ") is None
    rule = IgnoreRule.parse("!build/")
    assert rule is not None
    assert rule.negated
    assert rule.directory_only
    escaped = IgnoreRule.parse("\\#notes")
    assert escaped is not None
    assert escaped.matches("#notes", False)


def test_root_gitignore_with_negation(tmp_path: Path) -> None:
    make(tmp_path, "a.log", "keep.log", "main.py", "sub/b.log", "sub/c.py")
    (tmp_path / ".gitignore").write_text("# logs\n*.log\n\n!keep.log\n")
    assert visible(tmp_path) == [".gitignore", "keep.log", "main.py", "sub/", "sub/c.py"]


def test_leading_slash_anchors_to_the_gitignore_folder(tmp_path: Path) -> None:
    make(tmp_path, "out.txt", "sub/out.txt", "docs/tmp/x.md", "tmp/y.md")
    (tmp_path / ".gitignore").write_text("/out.txt\n/tmp\n")
    assert visible(tmp_path) == [
        ".gitignore",
        "docs/",
        "docs/tmp/",
        "docs/tmp/x.md",
        "sub/",
        "sub/out.txt",
    ]


def test_middle_slash_also_anchors(tmp_path: Path) -> None:
    make(tmp_path, "a/b.txt", "x/a/b.txt")
    (tmp_path / ".gitignore").write_text("a/b.txt\n")
    assert "a/b.txt" not in visible(tmp_path)
    assert "x/a/b.txt" in visible(tmp_path)


def test_trailing_slash_matches_directories_only(tmp_path: Path) -> None:
    make(tmp_path, "build/out.o", "src/build", "src/main.c")
    (tmp_path / ".gitignore").write_text("build/\n")
    assert visible(tmp_path) == [".gitignore", "src/", "src/build", "src/main.c"]


def test_double_star_patterns(tmp_path: Path) -> None:
    make(tmp_path, "logs/a/debug.txt", "debug.txt", "cache/x/y.bin", "keep/y.bin")
    (tmp_path / ".gitignore").write_text("**/debug.txt\ncache/**\n")
    assert visible(tmp_path) == [".gitignore", "cache/", "keep/", "keep/y.bin", "logs/", "logs/a/"]


def test_nested_gitignore_is_relative_to_its_folder_and_overrides(tmp_path: Path) -> None:
    make(tmp_path, "pkg/gen.py", "pkg/lib.py", "gen.py", "pkg/data.csv", "top.csv")
    (tmp_path / ".gitignore").write_text("*.csv\n")
    (tmp_path / "pkg" / ".gitignore").write_text("/gen.py\n!data.csv\n")
    assert visible(tmp_path) == [
        ".gitignore",
        "gen.py",
        "pkg/",
        "pkg/.gitignore",
        "pkg/data.csv",
        "pkg/lib.py",
    ]


def test_git_folder_is_always_skipped_and_hidden_files_are_not(tmp_path: Path) -> None:
    make(tmp_path, ".git/config", ".env", "a.txt")
    assert visible(tmp_path) == [".env", "a.txt"]


def test_ancestor_gitignore_applies_inside_the_work_tree(tmp_path: Path) -> None:
    make(tmp_path, ".git/HEAD", "src/a.py", "src/a.pyc")
    (tmp_path / ".gitignore").write_text("*.pyc\n")
    assert visible(tmp_path / "src") == ["a.py"]


def test_session_logs_are_skipped_unless_searched_directly(tmp_path: Path) -> None:
    make(tmp_path, ".pi/settings.json", ".pi/sessions/one.jsonl", "src/sessions/keep.py")
    assert visible(tmp_path) == [
        ".pi/",
        ".pi/settings.json",
        "src/",
        "src/sessions/",
        "src/sessions/keep.py",
    ]
    assert visible(tmp_path / ".pi" / "sessions") == ["one.jsonl"]
