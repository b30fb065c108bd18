"""Which way the GNOME backend sends input and takes pixels (``gnome.uses_portal``), by what the
session offers: deskpilot's own sandbox → Mutter's API; a running portal or GNOME Shell → the
portal; a bare mutter → Mutter's API. The bus is a stand-in: the names it owns."""

from __future__ import annotations

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.wayland import gnome

BUS = "unix:path=/run/user/1000/bus"


@pytest.mark.parametrize(
    ("sandbox", "owned", "portal"),
    [
        ("/run/deskpilot-sandbox", {gnome.PORTAL_BUS, gnome.SHELL_BUS}, False),
        (None, {gnome.PORTAL_BUS}, True),
        (None, {gnome.SHELL_BUS}, True),  # GNOME Shell: its portal starts on demand
        (None, set(), False),  # a bare mutter someone else runs, no portal
    ],
)
def test_the_way_follows_what_the_session_offers(
    monkeypatch: pytest.MonkeyPatch, sandbox: str | None, owned: set[str], portal: bool
) -> None:
    asked: list[str] = []

    def has_name(bus: str, name: str) -> bool:
        assert bus == BUS
        asked.append(name)
        return name in owned

    monkeypatch.setattr(gnome, "_has_name", has_name)
    settings = Settings(session_bus=BUS, sandbox_dir=sandbox)
    assert gnome.uses_portal(settings) is portal
    if sandbox is not None:
        assert asked == []  # the sandbox is never asked about: its own API, always


def test_no_session_bus_means_no_portal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gnome, "_has_name", lambda bus, name: pytest.fail("asked"))
    assert gnome.uses_portal(Settings(session_bus=None)) is False
