"""The session package stands alone: importing it pulls in no UI and no model layer."""

from __future__ import annotations

import re
import subprocess
import sys

FORBIDDEN = ("textual", "litellm", "pi_tui.ui", "pi_tui.agent", "pi_tui.tools", "pi_tui.cli")


def test_session_package_imports_no_ui_or_llm_code() -> None:
    probe = (
        "import sys, pi_tui.session, pi_tui.session.layout; "
        f"print([m for m in {FORBIDDEN!r} if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_session_sources_do_not_import_the_rest_of_the_package() -> None:
    from pathlib import Path

    import pi_tui.session

    package = Path(pi_tui.session.__file__).parent
    for source in package.glob("*.py"):
        imports = re.findall(r"^\s*(?:from|import)\s+(\S+)", source.read_text(), re.MULTILINE)
        outside = [name for name in imports if name.startswith(("pi_tui", ".."))]
        assert outside == [], source.name


def test_front_end_modules_do_not_import_litellm_at_import_time() -> None:
    probe = (
        "import sys, pi_tui.cli, pi_tui.agent_session, pi_tui.agent.loop, pi_tui.modes.print_mode; "
        "print('litellm' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"
