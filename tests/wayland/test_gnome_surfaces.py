"""Eval on a GNOME (headless mutter) sandbox: ``DESKPILOT_BACKEND=gnome deskpilot eval`` runs a
trial there, and its window checks read the session's windows through the GNOME backend's own
titles (AT-SPI frames, on connections of their own): Xwayland's X11 titles would show none of
its native Wayland dialogs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.wayland.conftest import require

pytestmark = [pytest.mark.sandbox, pytest.mark.app, pytest.mark.trial]

#: two native Wayland dialogs: one answered, one that must stay (a window check that sees it)
TASK = """\
goal = "Answer the dialog asking your name with 'Ada' (OK); leave the other open."
family = "gtk-dialog"
apps = ["zenity"]
timeout = 90
max_steps = 10

[[setup]]
launch = ["zenity", "--info", "--title=Keep me", "--text=Leave this open"]
window = "^Keep me$"

[[setup]]
launch = ["zenity", "--entry", "--title=Welcome", "--text=What is your name?"]
window = "^Welcome$"
capture = "dialog"

[[check]]
kind = "output"
of = "dialog"
stdout = "Ada"
exit_code = 0

[[check]]
kind = "window"
title = "^Keep me$"

[[check]]
kind = "window"
title = "^Welcome$"
absent = true

[[oracle]]
tool = "read_screen_ax"
args = { windowID = { window = "^Welcome$" } }

[[oracle]]
tool = "perform_sequence"
args = { windowID = { window = "^Welcome$" }, steps = [
  {action = "fill", elementID = {find = {role = "text", states = ["editable"]}}, text = "Ada"},
  { action = "click", elementID = { find = { role = "push-button", name = "OK" } } },
] }

[[oracle]]
tool = "list_windows"
until = { gone = "^Welcome$" }
"""


def test_an_eval_trial_with_window_checks_runs_on_a_gnome_sandbox(tmp_path: Path) -> None:
    require("gnome")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "gnome.answer-one.toml").write_text(TASK)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKPILOT_", "RAY_"))}
    env.update({"DESKPILOT_HOME": str(tmp_path), "DESKPILOT_BACKEND": "gnome"})
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK"):
        env.pop(k, None)
    done = subprocess.run(
        [sys.executable, "-m", "deskpilot", "eval", "run", str(suite), "--policy", "oracle",
         "--trials", "1", "--isolation", "none", "--json"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["overall"]["passed"] == 1, done.stderr
    result = json.loads(next(Path(tmp_path, summary["run"]).glob("trials/*/*/result.json"))
                        .read_text())  # fmt: skip
    assert result["sandbox"] == "gnome" and result["status"] == "passed", result
    output, kept, gone = result["checks"]
    assert output["detail"] == "dialog exited with 0 and printed 'Ada'"
    # the Wayland dialog left open is seen, the answered one is not
    assert kept["ok"] and "'Keep me'" in kept["detail"], kept
    assert gone["ok"] and "Welcome" not in gone["detail"], gone
