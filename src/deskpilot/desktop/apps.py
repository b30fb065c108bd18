"""The app catalogue: desktop files → ids, names, Exec lines; resolving what a model asked for.

``open_app`` accepts an app id (``org.gnome.Calculator``) or a human name (``Calculator``,
``Text Editor``). Matching is case-insensitive, in this order: desktop id, Name, executable,
StartupWMClass, GenericName, then a word match on Name/GenericName/Keywords. The best tier with
exactly one app wins; several apps in the best tier is an "ambiguous" error listing them.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from deskpilot.desktop.base import AppEntry, AppIdentity
from deskpilot.errors import AppNotFound

_FIELD_CODES = {"%f", "%F", "%u", "%U", "%d", "%D", "%n", "%N", "%i", "%c", "%k", "%v", "%m"}


def application_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$XDG_DATA_HOME/applications`` then each ``$XDG_DATA_DIRS/applications``."""
    home = env.get("HOME", "")
    data_home = env.get("XDG_DATA_HOME") or (os.path.join(home, ".local/share") if home else "")
    dirs = [data_home] if data_home else []
    dirs += (env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":")
    return [Path(d) / "applications" for d in dirs if d]


def parse_exec(line: str) -> tuple[str, ...]:
    try:
        argv = shlex.split(line)
    except ValueError:
        return ()
    return tuple(a.replace("%%", "%") for a in argv if a not in _FIELD_CODES)


def desktop_entry(text: str) -> dict[str, str] | None:
    """The keys of a desktop file's ``[Desktop Entry]`` group (a later key wins), or None.

    The format is ``Key=Value`` lines under ``[Group]`` headers, ``#`` comments
    (freedesktop's Desktop Entry Specification): a few lines of parsing, where configparser
    cost every ``deskpilot tool`` call ~5 ms to import and ~7 ms to read 20 files."""
    group: str | None = None
    entry: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            if group == "Desktop Entry" and entry is None:
                entry = {}
            continue
        key, sep, value = line.partition("=")
        if sep and group == "Desktop Entry" and entry is not None:
            entry[key.strip()] = value.strip()
    return entry


def read_desktop_file(path: Path, app_id: str) -> AppEntry | None:
    try:
        entry = desktop_entry(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, OSError):
        return None
    if entry is None:
        return None
    if entry.get("Type", "Application") != "Application":
        return None
    if entry.get("Hidden", "false").lower() == "true":
        return None
    if entry.get("Terminal", "false").lower() == "true":
        return None  # needs a terminal emulator; not a GUI window deskpilot can drive
    argv = parse_exec(entry.get("Exec", ""))
    if not argv:
        return None
    return AppEntry(
        app_id=app_id,
        name=entry.get("Name", app_id),
        generic_name=entry.get("GenericName", ""),
        exec_argv=argv,
        wm_class=entry.get("StartupWMClass", ""),
        keywords=tuple(k for k in entry.get("Keywords", "").split(";") if k),
        path=str(path),
        no_display=entry.get("NoDisplay", "false").lower() == "true",
    )


def load_catalogue(env: Mapping[str, str]) -> list[AppEntry]:
    """Every launchable app; a desktop id found in several dirs: the first dir wins."""
    seen: dict[str, AppEntry] = {}
    for folder in application_dirs(env):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.desktop")):
            app_id = str(path.relative_to(folder))[: -len(".desktop")].replace("/", "-")
            if app_id in seen:
                continue
            entry = read_desktop_file(path, app_id)
            if entry is not None:
                seen[app_id] = entry
    return list(seen.values())


def resolve_app(query: str, catalogue: Iterable[AppEntry]) -> AppEntry:
    """The one app ``query`` names, or AppNotFound (unknown or ambiguous)."""
    q = query.strip().casefold()
    if not q:
        raise AppNotFound("open_app needs an app id or name, e.g. 'Calculator'")
    if q.endswith(".desktop"):
        q = q[: -len(".desktop")]
    apps = list(catalogue)
    tiers: list[Callable[[AppEntry], bool]] = [
        lambda a: a.app_id.casefold() == q,
        lambda a: a.name.casefold() == q,
        lambda a: a.executable.casefold() == q,
        lambda a: a.wm_class.casefold() == q,
        lambda a: a.generic_name.casefold() == q,
        lambda a: a.app_id.casefold().rsplit(".", 1)[-1] == q,
        lambda a: q in a.name.casefold().split() or q == a.name.casefold().split(" ")[0],
        lambda a: any(q == k.casefold() for k in a.keywords),
        lambda a: q in a.name.casefold() or q in a.generic_name.casefold(),
    ]
    for tier in tiers:
        hits = [a for a in apps if tier(a)]
        shown = [a for a in hits if not a.no_display]
        hits = shown or hits
        # the same program under two ids (e.g. a -startcenter alias) is not ambiguous
        distinct = {a.exec_argv: a for a in hits}
        if len(distinct) == 1:
            return hits[0]
        if len(hits) > 1:
            names = ", ".join(f"{a.name} ({a.app_id})" for a in hits[:8])
            raise AppNotFound(
                f"'{query}' is ambiguous: it matches {names}. Call open_app again with one of "
                "these app ids."
            )
    raise AppNotFound(
        f"No installed app matches '{query}'. Use an app id or name as shown in the "
        "desktop's app menu (e.g. 'Calculator', 'Text Editor', 'org.gnome.Calculator')."
    )


def identify(
    pid: int, wm_class: tuple[str, ...], exe: str, catalogue: Iterable[AppEntry]
) -> AppIdentity:
    """Name a window's app: match its WM_CLASS / executable against the catalogue."""
    classes = {c.casefold() for c in wm_class if c}
    exe_cf = exe.casefold()
    best: tuple[int, int, AppEntry] | None = None
    for app in catalogue:
        score = 0
        if app.wm_class and app.wm_class.casefold() in classes:
            score = 5
        elif app.app_id.casefold() in classes:
            score = 4
        elif app.app_id.casefold().rsplit(".", 1)[-1] in classes:
            score = 3
        elif app.executable and app.executable.casefold() in classes:
            score = 2
        elif exe_cf and app.executable.casefold() == exe_cf:
            score = 1
        # prefer the plain entry over variants with extra arguments (e.g. --preferences)
        rank = (score, -len(app.exec_argv))
        if score and (best is None or rank > best[:2]):
            best = (*rank, app)
    if best is not None:
        app = best[2]
        return AppIdentity(name=app.name, app_id=app.app_id, wm_class=wm_class, executable=exe)
    fallback = wm_class[-1] if wm_class else exe or f"pid {pid}"
    return AppIdentity(name=fallback, app_id=fallback, wm_class=wm_class, executable=exe)
