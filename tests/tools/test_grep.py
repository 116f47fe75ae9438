"""The grep tool: regex and literal search, context, limits, ignores and binaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.tools.base import ToolError

from .conftest import RunTool, text_of


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (tmp_path / "src" / "util.ts").write_text("export const Main = 1;\n")
    (tmp_path / "notes.md").write_text("a.b\naxb\n")
    return tmp_path


async def test_regex_matches_with_relative_paths(tree: Path, run: RunTool) -> None:
    result = await run("grep", pattern=r"def \w+\(")
    assert text_of(result) == "src/app.py:3: def main():"


async def test_ignore_case_and_glob(tree: Path, run: RunTool) -> None:
    assert text_of(await run("grep", pattern="main", ignoreCase=True)) == (
        "src/app.py:3: def main():\nsrc/util.ts:1: export const Main = 1;"
    )
    assert text_of(await run("grep", pattern="main", ignoreCase=True, glob="*.ts")) == (
        "src/util.ts:1: export const Main = 1;"
    )


async def test_literal_escapes_regex_characters(tree: Path, run: RunTool) -> None:
    assert text_of(await run("grep", pattern="a.b", path="notes.md")) == (
        "notes.md:1: a.b\nnotes.md:2: axb"
    )
    assert text_of(await run("grep", pattern="a.b", literal=True)) == "notes.md:1: a.b"


async def test_context_lines_use_dashes_and_are_not_repeated(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "f.txt").write_text("one\nhit\ntwo\nhit\nthree\nfour\n")
    assert text_of(await run("grep", pattern="hit", context=1)) == (
        "f.txt-1- one\nf.txt:2: hit\nf.txt-3- two\nf.txt:4: hit\nf.txt-5- three"
    )


async def test_no_matches(tree: Path, run: RunTool) -> None:
    assert text_of(await run("grep", pattern="zebra")) == "No matches found"


async def test_invalid_regex(tree: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"missing \), unterminated subpattern"):
        await run("grep", pattern="(unclosed")


async def test_missing_path(tree: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"^Path not found: nowhere$"):
        await run("grep", pattern="x", path="nowhere")


async def test_match_limit_notice(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * 10)
    result = await run("grep", pattern="hit", limit=3)
    assert text_of(result) == (
        "many.txt:1: hit\nmany.txt:2: hit\nmany.txt:3: hit\n\n"
        "[3 matches limit reached. Use limit=6 for more, or refine pattern]"
    )
    assert result.details == {"matchLimitReached": 3}
    exact = await run("grep", pattern="hit", limit=10)
    assert "limit reached" not in text_of(exact)


async def test_long_lines_are_cut(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "wide.txt").write_text("needle" + "x" * 600 + "\n")
    text = text_of(await run("grep", pattern="needle"))
    first = text.splitlines()[0]
    assert first == "wide.txt:1: needle" + "x" * 494 + "... [truncated]"


async def test_output_is_capped_at_50_kb(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "big.txt").write_text(("match " + "y" * 400 + "\n") * 1000)
    result = await run("grep", pattern="match", limit=1000)
    assert result.details is not None
    assert result.details["truncation"]["truncatedBy"] == "bytes"
    assert text_of(result).endswith("[50 KB output limit reached. Refine pattern or path]")
    assert len(text_of(result).encode()) < 52_000


async def test_skips_gitignored_git_and_binary_files(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.txt").write_text("secret\n")
    (tmp_path / "debug.log").write_text("secret\n")
    (tmp_path / "keep.log").write_text("secret\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("secret\n")
    (tmp_path / "image.bin").write_bytes(b"secret\x00\x01")
    (tmp_path / ".hidden").write_text("secret\n")
    assert text_of(await run("grep", pattern="secret")) == ".hidden:1: secret\nkeep.log:1: secret"
