"""Backends are chosen, not hard-coded: a toy backend added through the registry alone is
opened by the CLI when the setting (flag, environment or config file) names it, or when
``auto`` finds that it fits the session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from deskpilot.cli import main
from deskpilot.config import Settings, load_settings
from deskpilot.desktop import registry
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.fake import FakeWorld, fake_ports
from deskpilot.errors import ConfigError

#: The toy desktops opened, by the settings they were opened with.
OPENED: list[tuple[Settings, FakeWorld]] = []


async def open_toy(settings: Settings) -> Ports:
    world = FakeWorld()
    world.open(FAKE_APPS[0], title="Toy Calculator")
    OPENED.append((settings, world))
    return fake_ports(settings, world, name="toy")


def toy_session(settings: Settings) -> str | None:
    return "TOY_SESSION is set" if settings.environ.get("TOY_SESSION") else None


@pytest.fixture
def toy() -> Iterator[registry.Backend]:
    backend = registry.Backend(
        "toy", open_toy, toy_session, priority=50, summary="an in-memory desktop for tests"
    )
    registry.register(backend)
    OPENED.clear()
    try:
        yield backend
    finally:
        registry.unregister("toy")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path / "home"), "DISPLAY": ""}


def tool(env: dict[str, str], *args: str) -> object:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_the_cli_opens_the_backend_the_flag_names(
    toy: registry.Backend, env: dict[str, str]
) -> None:
    result = tool(env, "--backend", "toy", "tool", "list_windows", "--json")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    listed = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert "Toy Calculator" in json.dumps(listed)
    assert len(OPENED) == 1 and OPENED[0][0].backend == "toy"
    assert "windows closed" in OPENED[0][1].log  # the CLI closed what it opened


def test_the_environment_and_the_config_file_choose_too(
    toy: registry.Backend, env: dict[str, str], tmp_path: Path
) -> None:
    assert tool({**env, "DESKPILOT_BACKEND": "toy"}, "tool", "list_windows").exit_code == 0  # type: ignore[attr-defined]
    config = tmp_path / "config.toml"
    config.write_text('backend = "toy"\n')
    assert tool(env, "--config", str(config), "tool", "list_windows").exit_code == 0  # type: ignore[attr-defined]
    assert [s.backend for s, _w in OPENED] == ["toy", "toy"]


def test_auto_takes_the_first_backend_that_fits(toy: registry.Backend, env: dict[str, str]) -> None:
    fits = load_settings(env={**env, "TOY_SESSION": "1"})
    assert fits.backend == "auto" and registry.choose(fits) is toy
    other = load_settings(env=env)
    assert registry.choose(other).name == "x11"  # the fallback, when the toy does not fit
    result = tool({**env, "TOY_SESSION": "1"}, "tool", "list_windows")
    assert result.exit_code == 0 and "Toy Calculator" in result.stdout  # type: ignore[attr-defined]


def test_an_unknown_backend_is_a_config_error_naming_the_known_ones(
    toy: registry.Backend, env: dict[str, str]
) -> None:
    with pytest.raises(
        ConfigError, match="'nope' is not known: use one of auto, gnome, toy, wlroots, x11"
    ):
        registry.choose(load_settings(env={**env, "DESKPILOT_BACKEND": "nope"}))
    result = tool(env, "--backend", "nope", "tool", "list_windows")
    assert result.exit_code == 2 and "is not known" in result.stderr  # type: ignore[attr-defined]
    assert OPENED == []  # nothing was opened


def test_a_backend_needs_a_plain_name() -> None:
    with pytest.raises(ValueError, match="plain name"):
        registry.register(registry.Backend("auto", open_toy, toy_session))
    with pytest.raises(ConfigError, match="backend must be"):
        load_settings(env={"DESKPILOT_BACKEND": "x11; rm -rf"})


def test_a_named_backend_picks_the_sandbox_kind_auto_keeps_x11() -> None:
    """``deskpilot --backend wlroots`` with a sandbox (eval trials, ``--sandbox``) starts a sway
    one; with no backend named the sandbox stays X11 whatever the session is."""
    assert registry.sandbox_kind(Settings(backend="wlroots")) == "sway"
    assert registry.sandbox_kind(Settings(backend="gnome")) == "gnome"
    assert registry.sandbox_kind(Settings(backend="x11")) == "x11"
    assert registry.sandbox_kind(Settings(backend="auto")) == "x11"


def test_looking_at_the_backends_loads_no_pillow_or_provider() -> None:
    """Every ``deskpilot tool`` call asks the registry which backends exist, which imports each
    built-in backend's module: none may pull in Pillow, a provider or MCP at import time (the
    GNOME backend's window streams did, and cost every X11 tool call Pillow's import)."""
    import subprocess
    import sys

    probe = (
        "import json, sys\n"
        "from deskpilot.desktop import registry\n"
        "registry.backends()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    heavy = ("PIL", "mcp", "rich", "httpx", "anthropic", "openai", "playwright")
    loaded = [m for m in json.loads(done.stdout) if m.split(".")[0] in heavy]
    assert loaded == [], loaded
