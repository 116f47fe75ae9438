"""The find and ls tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.tools.base import ToolError

from .conftest import RunTool, text_of


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for relative in ("src/a.ts", "src/lib/b.ts", "src/lib/c.py", "top.ts", ".env", "dist/x.ts"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "a.ts").write_text("")
    (tmp_path / ".gitignore").write_text("/dist\n")
    return tmp_path


async def test_find_basename_pattern_at_any_depth(tree: Path, run: RunTool) -> None:
    assert text_of(await run("find", pattern="*.ts")) == "src/a.ts\nsrc/lib/b.ts\ntop.ts"


async def test_find_path_pattern_with_double_star(tree: Path, run: RunTool) -> None:
    assert text_of(await run("find", pattern="src/**/*.ts")) == "src/a.ts\nsrc/lib/b.ts"
    assert text_of(await run("find", pattern="*.ts", path="src/lib")) == "b.ts"


async def test_find_lists_directories_with_slash_and_hidden_files(tree: Path, run: RunTool) -> None:
    assert text_of(await run("find", pattern="*")) == (
        ".env\n.gitignore\nsrc/\nsrc/a.ts\nsrc/lib/\nsrc/lib/b.ts\nsrc/lib/c.py\ntop.ts"
    )


async def test_find_limit_and_no_match(tree: Path, run: RunTool) -> None:
    result = await run("find", pattern="*.ts", limit=2)
    assert text_of(result) == (
        "src/a.ts\nsrc/lib/b.ts\n\n"
        "[2 results limit reached. Use limit=4 for more, or refine pattern]"
    )
    assert text_of(await run("find", pattern="*.rs")) == "No files found matching pattern"


async def test_find_bad_paths(tree: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"^Path not found: nope$"):
        await run("find", pattern="*", path="nope")
    with pytest.raises(ToolError, match=r"^Not a directory: top.ts$"):
        await run("find", pattern="*", path="top.ts")


async def test_ls_sorts_case_insensitively_with_dotfiles_and_slashes(
    tmp_path: Path, run: RunTool
) -> None:
    for name in ("beta.txt", "Alpha.txt", ".hidden", "gamma"):
        (tmp_path / name).write_text("")
    (tmp_path / "Docs").mkdir()
    assert text_of(await run("ls")) == ".hidden\nAlpha.txt\nbeta.txt\nDocs/\ngamma"


async def test_ls_limit_empty_and_errors(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "empty").mkdir()
    assert text_of(await run("ls", path="empty")) == "(empty directory)"
    for number in range(5):
        (tmp_path / f"f{number}").write_text("")
    result = await run("ls", limit=3)
    assert text_of(result) == "empty/\nf0\nf1\n\n[3 entries limit reached. Use limit=6 for more]"
    with pytest.raises(ToolError, match=r"^Path not found: missing$"):
        await run("ls", path="missing")
    with pytest.raises(ToolError, match=r"^Not a directory: f0$"):
        await run("ls", path="f0")
