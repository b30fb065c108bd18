"""Fixtures for agent end-to-end tests: settings, a FakeDesktop context, event capture."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskpilot.config import Settings, load_settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.events import Event
from deskpilot.policy import AllowAll
from deskpilot.session import Session
from deskpilot.tools.context import ToolContext

KEYS = {
    "OPENAI_API_KEY": "test-key",
    "ANTHROPIC_API_KEY": "test-key",
    "GEMINI_API_KEY": "test-key",
}


@pytest.fixture
def agent_settings(tmp_path: Path) -> Settings:
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path / "home"), **KEYS}
    return load_settings(env=env)


class Events(list[Event]):
    def kinds(self) -> list[str]:
        return [e.kind for e in self]

    def of(self, kind: str) -> list[Event]:
        return [e for e in self if e.kind == kind]


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def fake_desktop() -> FakeDesktop:
    return FakeDesktop()


@pytest.fixture
def fake_ctx(agent_settings: Settings, fake_desktop: FakeDesktop, events: Events) -> ToolContext:
    return ToolContext(
        desktop=fake_desktop,
        settings=agent_settings,
        session=Session(),
        approver=AllowAll(),
        audit=events.append,
    )
