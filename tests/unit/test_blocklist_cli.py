"""deskpilot blocklist: add, remove (a whole default app), list, reset — other config kept."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from deskpilot.cli import main
from deskpilot.config import load_settings
from deskpilot.desktop.base import AppIdentity
from deskpilot.tools.blocklist import Blocklist

KEEPASS = AppIdentity(
    "KeePassXC", "org.keepassxc.KeePassXC", ("keepassxc", "KeePassXC"), "keepassxc"
)
GIMP = AppIdentity("GNU Image Manipulation Program", "gimp", ("gimp", "Gimp"), "gimp")


def test_blocklist_round_trip(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path)}
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "scripted:calculator"\n\n[preferences]\neditor = "Mousepad"\n')
    run = CliRunner().invoke

    def blocked() -> Blocklist:
        return Blocklist.from_settings(load_settings(env=env))

    assert blocked().match(KEEPASS) and not blocked().match(GIMP)
    assert run(main, ["blocklist", "add", "gimp"], env=env).exit_code == 0
    assert blocked().match(GIMP)
    result = run(main, ["blocklist", "remove", "keepassxc"], env=env)
    assert result.exit_code == 0, result.output
    assert blocked().match(KEEPASS) is None  # every KeePassXC entry went, not just one
    listing = run(main, ["blocklist", "list"], env=env).output
    assert "gimp  (added)" in listing and "KeePassXC  (default, removed)" in listing
    missing = run(main, ["blocklist", "remove", "no-such-app"], env=env)
    assert missing.exit_code == 1 and "is not on the blocklist" in missing.output
    assert run(main, ["blocklist", "reset"], env=env).exit_code == 0
    assert blocked().match(KEEPASS) and not blocked().match(GIMP)
    settings = load_settings(env=env)  # the rest of the file is untouched
    assert settings.model == "scripted:calculator" and settings.preferences["editor"] == "Mousepad"


def test_a_blocklist_written_inline_is_left_alone_with_a_clear_error(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path)}
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    original = 'blocklist = { add = ["foo"] }\n'
    config.write_text(original)
    result = CliRunner().invoke(main, ["blocklist", "add", "bar"], env=env)
    assert result.exit_code == 1 and "edit its [blocklist] table by hand" in result.output
    assert config.read_text() == original  # nothing was changed
    assert load_settings(env=env).blocklist_add == ("foo",)
