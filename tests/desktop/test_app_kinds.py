"""Kinds of app the project has no fixtures for, read through the tools (issue #26): a VTE
terminal's output, a PDF viewer's page, a calculator's display in GTK and in Qt, and a mail
client built on Gecko showing its own controls with true states.

Each effect is checked through a channel the tools do not use: the file a command wrote, the
PDF the test wrote, and the app's accessibility tree as Debian's own pyatspi walks it
(scripts/atspi_exposed.py, run with /usr/bin/python3). The apps are in scripts/apt-packages.txt
(CI installs them); on a machine set up without them a test skips with what to install.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripts.app_probe import write_pdf

from deskpilot._wait import async_wait_for
from deskpilot.sandbox import Sandbox
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

WALK = Path(__file__).parents[2] / "scripts" / "atspi_exposed.py"
SYSTEM_PYTHON = "/usr/bin/python3"


def needs(program: str, package: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shutil.which(program) is None,
        reason=f"{program} is not installed (apt install {package}; make setup installs it)",
    )


def exposed(sandbox: Sandbox, pid: int, title: str) -> list[dict[str, Any]]:
    """The window's nodes as pyatspi walks them: role, name, states, text."""
    done = subprocess.run(
        [SYSTEM_PYTHON, str(WALK), "--pid", str(pid), "--title", title],
        capture_output=True,
        text=True,
        env=sandbox.app_env(),
        timeout=120,
        check=True,
    )
    nodes: list[dict[str, Any]] = json.loads(done.stdout)["nodes"]
    return nodes


@needs("xfce4-terminal", "xfce4-terminal")
async def test_a_vte_terminals_output_is_read_back(call: Call, apps: Apps, tmp_path: Path) -> None:
    term = await apps.spawn(
        ["xfce4-terminal", "--disable-server", f"--working-directory={tmp_path}"],
        match=lambda w: "Terminal" in w.title,
    )
    read = await call("read_screen_ax", {"windowID": term.stable_id})
    screen = find_id(read.text, "terminal", "Terminal")
    command = "echo $((6*7))-answer > out.txt; cat out.txt; seq 1 80"
    steps = [
        {"action": "click", "elementID": screen},
        {"action": "type", "text": command},
        {"action": "shortcut", "shortcut": "enter"},
    ]
    done = await call("perform_sequence", {"windowID": term.stable_id, "steps": steps})
    assert not done.is_error, done.text
    out = tmp_path / "out.txt"

    async def written_out() -> str | None:
        return out.read_text().strip() or None if out.exists() else None

    await async_wait_for(written_out, timeout=20, what="the command to write its file")
    written = out.read_text().strip()
    assert written == "42-answer"

    async def shown() -> str | None:
        text = (await call("read_screen_ax", {"windowID": term.stable_id})).text
        return text if "│ 80" in text else None

    text = await async_wait_for(shown, timeout=20, what="the output in the read")
    lines = [ln.strip() for ln in text.splitlines()]
    # the last lines first: the end of seq's output and the prompt after it
    at = lines.index("│ 80")
    assert lines[at - 1] == "│ 79", text
    assert lines[at + 1].startswith("│ ") and lines[at + 1].rstrip()[-1] in "$#", text
    # what the terminal exposes, walked apart from the tools, holds the same last lines
    nodes = exposed(apps.sandbox, term.pid, term.title)
    screen_text = next(n["text"] or "" for n in nodes if n["role"] == "terminal")
    assert "\n79\n80\n" in screen_text
    # the command's first output has scrolled out of the screen (80 lines on 24 rows): the
    # read says where it is
    assert f"│ {written}" not in text and "in the scrollback: scroll up" in text, text
    zoomed = await call("read_screen_ax", {"windowID": term.stable_id, "elementID": screen})
    visible = [ln for ln in screen_text.splitlines() if ln.strip()]
    assert all(f"│ {ln.rstrip()}" in zoomed.text for ln in visible[-60:]), zoomed.text


@needs("evince", "evince")
async def test_a_pdf_viewers_page_text_is_read(call: Call, apps: Apps, tmp_path: Path) -> None:
    lines = ["Quarterly report for Wombat Ltd", "Revenue rose by 17 percent", "Signed: A. Byron"]
    pdf = tmp_path / "report.pdf"
    write_pdf(pdf, lines)
    viewer = await apps.spawn(["evince", str(pdf)], match=lambda w: "report" in w.title)

    async def page() -> str | None:
        text = (await call("read_screen_ax", {"windowID": viewer.stable_id})).text
        return text if f"│ {lines[-1]}" in text else None

    text = await async_wait_for(page, timeout=30, what="the page's text in the read")
    shown = [ln.strip()[2:] for ln in text.splitlines() if ln.strip().startswith("│ ")]
    assert shown == lines, text  # the page as the test wrote it, in reading order


@needs("kcalc", "kcalc")
async def test_a_qt_calculators_display_is_read(call: Call, apps: Apps) -> None:
    calc = await apps.spawn(["kcalc"], match=lambda w: w.title == "KCalc")
    await _computes_84(call, calc.stable_id, 'text "84"')
    # the display as the app exposes it: a frame named by what it shows
    nodes = exposed(apps.sandbox, calc.pid, calc.title)
    assert any(n["name"] == "84" and "showing" in n["states"] for n in nodes)


@needs("galculator", "galculator")
async def test_a_gtk_calculators_display_is_read(call: Call, apps: Apps) -> None:
    calc = await apps.spawn(["galculator"], match=lambda w: w.title == "galculator")
    await _computes_84(call, calc.stable_id, '= "84"')
    nodes = exposed(apps.sandbox, calc.pid, calc.title)
    assert any((n["text"] or "").strip() == "84" for n in nodes)


async def _computes_84(call: Call, window: str, expect: str) -> None:
    before = (await call("read_screen_ax", {"windowID": window})).text
    assert expect not in before, before
    steps = [{"action": "type", "text": "12*7"}, {"action": "shortcut", "shortcut": "enter"}]
    done = await call("perform_sequence", {"windowID": window, "steps": steps})
    assert not done.is_error, done.text

    async def result() -> str | None:
        text = (await call("read_screen_ax", {"windowID": window})).text
        return text if expect in text else None

    await async_wait_for(result, timeout=15, what=f"{expect} in the read")


@needs("thunderbird", "thunderbird")
async def test_a_gecko_mail_client_reads_as_an_app_with_true_states(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    profile.mkdir()
    mail = await apps.spawn(
        ["thunderbird", "--no-remote", "--profile", str(profile)],
        match=lambda w: "Thunderbird" in w.title,
        timeout=90,
    )

    async def hub() -> str | None:
        text = (await call("read_screen_ax", {"windowID": mail.stable_id})).text
        return text if "Continue" in text else None

    # a first run opens its account set-up; "Continue" stays disabled until an address is in
    text = await async_wait_for(hub, timeout=60, what="the account set-up's Continue")
    line = next(ln.strip() for ln in text.splitlines() if '"Continue"' in ln)
    nodes = exposed(apps.sandbox, mail.pid, mail.title)
    button = next(n for n in nodes if n["role"] == "push button" and n["name"] == "Continue")
    assert "enabled" not in button["states"] and "sensitive" not in button["states"]
    assert line.startswith('button "Continue"') and "[disabled]" in line, line
    # closed, the set-up leaves the main window: the mail app's own controls read by
    # default around its web content (a message pane's page is not a browser's)
    close = find_id(text, "button", "Minimize")
    assert not (await call("perform", {"elementID": close})).is_error

    async def main_window() -> str | None:
        read = await call("read_screen_ax", {"windowID": mail.stable_id, "chrome": False})
        return read.text if '"New Message"' in read.text else None

    full = await async_wait_for(main_window, timeout=30, what="the main window's controls")
    assert not any(ln.startswith("browser") for ln in full.splitlines()), full
    nodes = exposed(apps.sandbox, mail.pid, mail.title)
    own = [
        n["name"]
        for n in nodes
        if n["role"] == "push button"
        and n["name"]
        and "showing" in n["states"]
        and "visible" in n["states"]
    ]
    assert len(own) > 5, own
    missing = [name for name in own if f'"{name}"' not in full]
    assert len(missing) <= len(own) // 10, (missing, full)


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="Linux desktops only")
