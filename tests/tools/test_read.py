"""The read tool: paging, truncation notices, images and binary files."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from pi_tui.tools.base import ToolError

from .conftest import RunTool, text_of

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17


def numbered(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


async def test_reads_text_without_line_numbers(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    result = await run("read", path="a.txt")
    assert text_of(result) == "hello\nworld"
    assert result.details is None


async def test_offset_and_limit_with_more_lines_notice(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "a.txt").write_text(numbered(10))
    result = await run("read", path="a.txt", offset=3, limit=2)
    assert text_of(result) == (
        "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
    )
    assert text_of(await run("read", path="a.txt", offset=9, limit=5)) == "line 9\nline 10"


async def test_offset_beyond_end_is_an_error(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "a.txt").write_text(numbered(3))
    with pytest.raises(ToolError, match=r"Offset 4 is beyond the end .*\(3 lines total\)"):
        await run("read", path="a.txt", offset=4)


async def test_long_file_is_head_truncated_with_continue_notice(
    tmp_path: Path, run: RunTool
) -> None:
    (tmp_path / "big.txt").write_text(numbered(5231))
    result = await run("read", path="big.txt")
    text = text_of(result)
    assert text.startswith("line 1\n")
    assert text.endswith(
        "line 2000\n\n[Showing lines 1-2000 of 5231. Use offset=2001 to continue.]"
    )
    assert result.details is not None
    assert result.details["truncation"]["truncatedBy"] == "lines"
    page = text_of(await run("read", path="big.txt", offset=5001))
    assert page.startswith("line 5001\n")
    assert page.endswith("line 5231")


async def test_byte_limit_notice(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 999 + "\n") * 100)
    text = text_of(await run("read", path="wide.txt"))
    assert text.endswith("[Showing lines 1-51 of 100 (50 KB limit). Use offset=52 to continue.]")


async def test_oversized_line_is_cut_with_advice(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "one.txt").write_text("z" * 60_000 + "\nshort\n")
    text = text_of(await run("read", path="one.txt"))
    assert text.startswith("z" * 51_200 + "\n\n[Line 1 is 58.6 KB;")
    assert text.endswith("Use offset=2 to continue.]")


async def test_missing_file(run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"^File not found: nope.txt$"):
        await run("read", path="nope.txt")


async def test_image_detected_by_magic_bytes_not_extension(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "picture.dat").write_bytes(PNG)
    result = await run("read", path="picture.dat")
    assert result.content == [
        {"type": "text", "text": "Read image file [image/png]"},
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
    ]


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89a....", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
)
async def test_other_image_types(tmp_path: Path, run: RunTool, data: bytes, mime: str) -> None:
    (tmp_path / "img").write_bytes(data)
    result = await run("read", path="img")
    assert result.content[1]["mimeType"] == mime


async def test_binary_file_is_an_error(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "blob.bin").write_bytes(b"ELF\x00\x01\x02")
    with pytest.raises(ToolError, match=r"binary file"):
        await run("read", path="blob.bin")


async def test_empty_file_and_at_prefix(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "empty.txt").write_text("")
    assert text_of(await run("read", path="@empty.txt")) == "(empty file)"
