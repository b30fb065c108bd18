"""The ``[consequential]`` section of config.toml is wired into the door: the person's own
words replace the built-in verbs and their own shortcuts are asked about, in a session opened
the way every surface opens one (``runtime.open_session``); a section that is wrong fails at
load, naming what to write. A FakeDesktop note app (a text area and a Send button) is the
desktop; its log says what was pressed.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from deskpilot.config import Settings, load_settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.errors import ConfigError
from deskpilot.events import Event
from deskpilot.policy import DenyAll
from deskpilot.runtime import open_session
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools


def settings_with(tmp_path: Path, section: str) -> Settings:
    config = tmp_path / "config.toml"
    config.write_text(section, encoding="utf-8")
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path / "home")}
    return load_settings(env=env, config_file=config)


async def outcomes(settings: Settings, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Each call's outcome at the door (policy.decided), nobody there to say yes."""
    desktop = FakeDesktop()
    window = desktop.add_window(FAKE_APPS[1], "Note to Ann").stable_id
    events: list[Event] = []
    tools = computer_use_tools()
    async with open_session(
        settings,
        surface="python",
        approver=DenyAll(),
        desktop=desktop,
        session=Session(),
        observe=events.append,
    ) as ctx:
        read = await tools.call("read_screen_ax", {"windowID": window}, ctx)
        found = re.search(r'button "Send".*@(\S+)', read.text)
        assert found, read.text
        for action, args in calls:
            step = {"action": action, **args}
            if action == "click":
                step["elementID"] = found.group(1)
            else:
                step["windowID"] = window
            await tools.call("perform", step, ctx)
    return [
        e.data["outcome"]
        for e in events
        if e.kind == "policy.decided" and e.data.get("tool") == "perform"
    ]


SEND = ("click", {})
CTRL_J = ("shortcut", {"shortcut": "ctrl+j"})


def test_without_the_section_send_is_asked_and_ctrl_j_is_not(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, "")
    assert asyncio.run(outcomes(settings, [SEND, CTRL_J])) == ["declined", "allowed"]


def test_the_persons_words_and_shortcuts_replace_the_defaults(tmp_path: Path) -> None:
    settings = settings_with(
        tmp_path, '[consequential]\nwords = ["dispatch"]\nshortcuts = ["ctrl+j"]\n'
    )
    assert settings.consequential_words == ("dispatch",)
    # "Send" is no word of theirs: not asked; their ctrl+j is
    assert asyncio.run(outcomes(settings, [SEND, CTRL_J])) == ["allowed", "declined"]


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ('[consequential]\nshortcuts = ["ctrl+nonsense+"]\n', "is not a shortcut"),
        ('[consequential]\nverbs = ["zap"]\n', "it takes 'words'"),
    ],
)
def test_a_wrong_section_is_refused_naming_what_to_write(
    tmp_path: Path, section: str, says: str
) -> None:
    with pytest.raises(ConfigError, match=says):
        settings = settings_with(tmp_path, section)
        asyncio.run(outcomes(settings, [SEND]))
