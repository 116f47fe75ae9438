"""The write tool: folders, atomic replacement, file mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .conftest import RunTool, text_of


async def test_creates_parent_folders(tmp_path: Path, run: RunTool) -> None:
    result = await run("write", path="deep/er/file.txt", content="héllo\n")
    assert text_of(result) == "Successfully wrote 7 bytes to deep/er/file.txt"
    assert (tmp_path / "deep/er/file.txt").read_text() == "héllo\n"


async def test_overwrites_keeping_mode_and_leaves_no_temp_file(
    tmp_path: Path, run: RunTool
) -> None:
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    await run("write", path="run.sh", content="new")
    assert script.read_text() == "new"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert sorted(os.listdir(tmp_path)) == ["run.sh"]


async def test_new_file_gets_umask_permissions(tmp_path: Path, run: RunTool) -> None:
    umask = os.umask(0o022)
    try:
        await run("write", path="new.txt", content="x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


async def test_writes_through_a_symlink(tmp_path: Path, run: RunTool) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await run("write", path="link.txt", content="new")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"
