"""Where the page side keeps its files: the rule library, the generated extension, the
agent browser's profile."""

from __future__ import annotations

from pathlib import Path

from deskpilot.config import Settings
from deskpilot.pages.library import Library


def pages_dir(settings: Settings) -> Path:
    return settings.data_dir / "pages"


def library_path(settings: Settings) -> Path:
    return pages_dir(settings) / "rules.sqlite3"


def extension_dir(settings: Settings) -> Path:
    """The generated extension the agent browser loads. On a sandbox it lives in the sandbox's
    home, next to the profile: the browser may run as the sandbox's own user, who cannot read
    deskpilot's data dir (Chromium then shows "Error Loading Extension" and runs no rule)."""
    if settings.sandbox_dir:
        return Path(settings.sandbox_dir) / "home" / ".config" / "deskpilot-browser-extension"
    return pages_dir(settings) / "extension"


def open_library(settings: Settings) -> Library:
    return Library(library_path(settings))


def agent_profile(settings: Settings) -> Path:
    """The agent browser's own Chromium profile (in the sandbox's home on a sandbox)."""
    if settings.sandbox_dir:
        return Path(settings.sandbox_dir) / "home" / ".config" / "deskpilot-browser"
    return settings.state_dir / "browser-profile"
