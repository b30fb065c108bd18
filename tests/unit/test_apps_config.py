"""Desktop-file catalogue and app resolution; settings precedence; session persistence."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskpilot.config import load_settings
from deskpilot.desktop.apps import identify, load_catalogue, parse_exec, resolve_app
from deskpilot.errors import AppNotFound, ConfigError
from deskpilot.session import ElementRecord, Session
from deskpilot.tools.blocklist import Blocklist

ENTRIES = {
    "org.gnome.Calculator": "Name=Calculator\nExec=gnome-calculator\n",
    "galculator": "Name=Galculator\nGenericName=Scientific calculator\nExec=galculator\n",
    "org.xfce.mousepad": "Name=Mousepad\nGenericName=Text Editor\nExec=mousepad %U\n"
    "StartupWMClass=mousepad\n",
    "org.xfce.mousepad-settings": "Name=Mousepad Settings\nExec=mousepad --preferences\n"
    "NoDisplay=true\n",
    "vim": "Name=Vim\nGenericName=Text Editor\nExec=vim %F\nTerminal=true\n",
    "broken": "Name=Broken\n",
}


@pytest.fixture
def apps_env(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "share" / "applications"
    folder.mkdir(parents=True)
    for app_id, body in ENTRIES.items():
        (folder / f"{app_id}.desktop").write_text(f"[Desktop Entry]\nType=Application\n{body}")
    return {"HOME": str(tmp_path / "home"), "XDG_DATA_DIRS": str(tmp_path / "share")}


def test_catalogue_and_resolution(apps_env: dict[str, str]) -> None:
    apps = load_catalogue(apps_env)
    ids = {a.app_id for a in apps}
    assert "vim" not in ids and "broken" not in ids  # terminal apps and no Exec are skipped
    assert resolve_app("Calculator", apps).app_id == "org.gnome.Calculator"
    assert resolve_app("calculator", apps).app_id == "org.gnome.Calculator"
    assert resolve_app("org.xfce.mousepad.desktop", apps).app_id == "org.xfce.mousepad"
    assert resolve_app("Text Editor", apps).app_id == "org.xfce.mousepad"
    assert resolve_app("galculator", apps).exec_argv == ("galculator",)
    with pytest.raises(AppNotFound, match="No installed app matches 'Photoshop'"):
        resolve_app("Photoshop", apps)


def test_ambiguous_names_list_candidates(apps_env: dict[str, str]) -> None:
    apps = load_catalogue(apps_env)
    with pytest.raises(
        AppNotFound, match=r"ambiguous.*Galculator.*Calculator \(org.gnome.Calculator\)"
    ):
        resolve_app("calc", apps)


def test_exec_field_codes_removed() -> None:
    assert parse_exec('foo --name "a b" %U %%x') == ("foo", "--name", "a b", "%x")


def test_identify_prefers_the_plain_entry(apps_env: dict[str, str]) -> None:
    apps = load_catalogue(apps_env)
    ident = identify(1, ("mousepad", "Mousepad"), "mousepad", apps)
    assert ident.app_id == "org.xfce.mousepad" and ident.name == "Mousepad"
    unknown = identify(1, ("weird", "Weird"), "weird", apps)
    assert unknown.app_id == "Weird"


def test_settings_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'confirm = "all"\nmax_steps = 12\n[blocklist]\nadd = ["gimp"]\n'
        'remove = ["KeePassXC", "keepassxc", "org.keepassxc.KeePassXC"]\n'
    )
    env = {
        "HOME": str(tmp_path),
        "DESKPILOT_CONFIG": str(cfg),
        "DESKPILOT_MAX_STEPS": "20",
        "OPENAI_API_KEY": "sk-x",
    }
    s = load_settings(env=env)
    assert s.confirm == "all" and s.max_steps == 20 and s.api_keys["openai"] == "sk-x"
    assert load_settings({"confirm": "none"}, env=env).confirm == "none"
    blocklist = Blocklist.from_settings(s)
    assert "gimp" in blocklist.entries and "keepassxc" not in blocklist.entries


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("confirm = 'maybe'", "confirm must be one of"),
        ("max_steps = 0", "max_steps must be between"),
        ("max_steps = 'many'", "max_steps must be a number"),
        ("[blocklist]\nadd = 'gimp'", "must be a list of strings"),
        ("not toml at all ===", "is not valid TOML"),
        ("consequential = 'x'", r"\[consequential\] must be a table"),
        ("model = 5", "model must be a string"),
    ],
)
def test_bad_config_is_explained(tmp_path: Path, body: str, message: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(body)
    with pytest.raises(ConfigError, match=message):
        load_settings(env={"HOME": str(tmp_path), "DESKPILOT_CONFIG": str(cfg)})


def test_session_survives_a_round_trip(tmp_path: Path) -> None:
    s = Session.load(tmp_path, "work")
    s.track("1/2")
    s.track("1/3")
    s.remember({"a.1": ElementRecord(":1.5", "/p/1", "push-button", "OK", "/p", 3, 1)})
    s.save()
    again = Session.load(tmp_path, "work")
    assert again.target == "1/3" and again.history == ["1/2"]
    assert again.elements["a.1"].name == "OK"
    (tmp_path / "sessions" / "work.json").write_text("{corrupt")
    assert Session.load(tmp_path, "work").target is None  # a corrupt file starts fresh
