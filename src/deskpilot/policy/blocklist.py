"""Blocked apps: deskpilot refuses to open, read or control them — checked at every tool.

Defaults are password managers. An entry matches an app by desktop id, WM_CLASS, executable or
name (case-insensitive, exact). Users add and remove entries in the config file
(``[blocklist] add/remove``) or with ``deskpilot blocklist add|remove|reset``.
"""

from __future__ import annotations

from collections.abc import Iterable

from deskpilot.config import Settings
from deskpilot.desktop.base import AppEntry, AppIdentity, WindowInfo
from deskpilot.errors import AppBlocked

#: The default entries, one group per app (removing one entry of a group removes the group:
#: an app is only allowed when nothing matches it any more).
DEFAULT_GROUPS: tuple[tuple[str, ...], ...] = (
    ("org.keepassxc.KeePassXC", "keepassxc", "KeePassXC"),
    ("keepass2", "KeePass"),
    ("bitwarden", "com.bitwarden.desktop", "Bitwarden"),
    ("1password", "1Password"),
    ("enpass", "Enpass"),
    ("keeper", "Keeper Password Manager"),
    ("proton-pass", "Proton Pass"),
    ("org.gnome.seahorse.Application", "seahorse", "Passwords and Keys"),
    ("org.gnome.World.Secrets", "gnome-secrets", "Secrets"),
    ("org.gnome.PasswordSafe", "gnome-passwordsafe", "Password Safe"),
    (
        "org.kde.kwalletmanager5",
        "kwalletmanager5",
        "org.kde.kwalletmanager",
        "kwalletmanager",
        "KWalletManager",
        "KWallet Manager",
    ),
    ("qtpass", "QtPass"),
    ("gopass-ui",),
)

DEFAULT_BLOCKLIST: tuple[str, ...] = tuple(e for group in DEFAULT_GROUPS for e in group)


def default_group(entry: str) -> tuple[str, ...]:
    """The default entries that go with ``entry`` (empty if it is not a default)."""
    key = entry.casefold()
    return next((g for g in DEFAULT_GROUPS if key in {e.casefold() for e in g}), ())


class Blocklist:
    def __init__(self, entries: Iterable[str]) -> None:
        self.entries = tuple(dict.fromkeys(e for e in entries if e.strip()))
        self._keys = {e.strip().casefold() for e in self.entries}

    @classmethod
    def from_settings(cls, settings: Settings) -> Blocklist:
        removed = {r.casefold() for r in settings.blocklist_remove}
        base = [e for e in DEFAULT_BLOCKLIST if e.casefold() not in removed]
        extra = [e for e in settings.blocklist_add if e.casefold() not in removed]
        return cls([*base, *extra])

    def match(self, app: AppIdentity) -> str | None:
        """The entry that blocks ``app``, or None."""
        hit = app.match_keys() & self._keys
        return min(hit) if hit else None

    def match_entry(self, app: AppEntry) -> str | None:
        keys = {app.app_id, app.name, app.executable, app.wm_class}
        hit = {k.casefold() for k in keys if k} & self._keys
        return min(hit) if hit else None

    def check_window(self, window: WindowInfo) -> None:
        if self.match(window.app) is not None:
            raise AppBlocked(window.app.name)

    def check_app(self, app: AppEntry) -> None:
        if self.match_entry(app) is not None:
            raise AppBlocked(app.name)
