"""The edit tool: unique exact matches, line endings, BOM and the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_tui.tools.base import ToolError

from .conftest import RunTool, text_of

SOURCE = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    return a\n"


async def test_replaces_unique_text_with_diff_and_first_changed_line(
    tmp_path: Path, run: RunTool
) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    result = await run("edit", path="m.py", oldText="    c = 3\n", newText="    c = 30\n")
    assert text_of(result) == "Successfully replaced text in m.py."
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("c = 3", "c = 30")
    assert result.details == {
        "diff": (
            "--- a/m.py\n+++ b/m.py\n@@ -1,7 +1,7 @@\n def f():\n     a = 1\n     b = 2\n"
            "-    c = 3\n+    c = 30\n     d = 4\n     e = 5\n     return a\n"
        ),
        "firstChangedLine": 4,
    }
    assert sorted(os.listdir(tmp_path)) == ["m.py"]


async def test_first_changed_line_skips_a_shared_prefix(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    result = await run("edit", path="m.py", oldText="a = 1\n    b = 2", newText="a = 1\n    b = 9")
    assert result.details is not None
    assert result.details["firstChangedLine"] == 3


async def test_no_match(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as error:
        await run("edit", path="m.py", oldText="c  = 3", newText="x")  # wrong spacing
    assert str(error.value) == (
        "Could not find the exact text in m.py. The old text must match exactly, "
        "including whitespace and newlines."
    )


async def test_several_matches(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as error:
        await run("edit", path="m.py", oldText="    ", newText="\t")
    assert str(error.value) == (
        "Found 6 occurrences of the text in m.py. The text must be unique; "
        "add more surrounding context."
    )
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_identical_replacement(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"^No changes made to m.py"):
        await run("edit", path="m.py", oldText="b = 2", newText="b = 2")


async def test_missing_file_and_empty_old_text(tmp_path: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"^File not found: gone.py$"):
        await run("edit", path="gone.py", oldText="a", newText="b")
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"oldText"):
        await run("edit", path="m.py", oldText="", newText="b")


async def test_crlf_and_bom_are_preserved(tmp_path: Path, run: RunTool) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    result = await run("edit", path="win.txt", oldText="one\ntwo\n", newText="one\n2\n")
    assert target.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\nthree\r\n"
    assert result.details is not None
    assert "-two\n+2\n" in result.details["diff"]
    assert "\r" not in result.details["diff"]


async def test_crlf_old_text_from_the_model_also_matches(tmp_path: Path, run: RunTool) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"a\r\nb\r\n")
    await run("edit", path="win.txt", oldText="a\r\nb", newText="a\r\nc")
    assert target.read_bytes() == b"a\r\nc\r\n"


async def test_diff_marks_a_missing_final_newline(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "n.txt").write_text("x\ny")
    result = await run("edit", path="n.txt", oldText="y", newText="z")
    assert result.details is not None
    assert result.details["diff"].endswith(
        "-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n"
    )


async def test_snake_case_names_are_accepted_too(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    await run("edit", path="m.py", old_text="e = 5", new_text="e = 6")
    assert "e = 6" in (tmp_path / "m.py").read_text()
