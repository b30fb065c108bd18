"""The desktop's rooms keep to what their docstrings allow: only the X11 package imports Xlib,
the skills and the ports import no backend and no platform library, and no surface names a
concrete desktop class (surfaces get desktops from the registry through the place helper)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from tests import sources

ROOT = sources.ROOT
SRC = sources.SRC


@functools.cache
def imports(path: Path) -> frozenset[str]:
    """Every module a file imports, at any level (functions and TYPE_CHECKING included); the
    source is read once per run (tests/sources.py)."""
    out: set[str] = set()
    for node in sources.by_path()[path].imports:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return frozenset(out)


def files(under: str = "") -> list[Path]:
    return sorted((ROOT / under).rglob("*.py"))


def rel(path: Path) -> str:
    return str(path.relative_to(SRC))


def test_only_the_x11_package_imports_xlib() -> None:
    x11 = ROOT / "desktop" / "x11"
    found = [
        rel(p)
        for p in files()
        if x11 not in p.parents and any(m.split(".")[0] in ("Xlib", "mss") for m in imports(p))
    ]
    assert found == []
    assert any("Xlib" in m for m in imports(x11 / "display.py"))  # the check can see one


def test_skills_and_ports_import_no_backend_and_no_platform_library() -> None:
    banned = re.compile(
        r"^(Xlib|mss|dbus_fast|deskpilot\.desktop\.(x11|atspi|xdg|wayland|facade|registry))\b"
    )
    found = {
        rel(p): sorted(m for m in imports(p) if banned.match(m))
        for room in ("desktop/skills", "desktop/ports")
        for p in files(room)
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_no_surface_names_a_concrete_desktop_class() -> None:
    concrete = re.compile(
        r"\b(LinuxDesktop|DesktopFacade|X11Windows|X11Input|X11Capture|AtspiAccessibility|"
        r"XdgLauncher)\b"
    )
    surfaces = [p for p in files() if (ROOT / "desktop") not in p.parents]
    found = [
        f"{rel(p)}:{n}"
        for p in surfaces
        for n, line in enumerate(sources.by_path()[p].text.splitlines(), 1)
        if concrete.search(line)
    ]
    assert found == []


#: Outside the desktop package, what may reach into a backend's package directly, and why: the
#: sandbox starts the desktops the backends drive (it waits for an Xvfb root window's
#: properties or a compositor's seats, and gives apps a Wayland client's environment); the
#: discovery of the user's X display with the X cookie it hands to Xlib (the x11 backend's
#: ``resolve``); ``deskpilot doctor``, whose job is to report the session the backends find; and
#: the stand-in for OSWorld's ``pyautogui`` that a trial's setup commands import (it drives the
#: trial's X display as the VM's own pyautogui would: harness setup, never an agent's act).
PLATFORM_HELPERS = {
    "deskpilot/sandbox/lifecycle.py",
    "deskpilot/sandbox/compositors.py",
    "deskpilot/sandbox/info.py",
    "deskpilot/discovery.py",
    "deskpilot/config.py",
    "deskpilot/cli/doctor_cmd.py",
    "deskpilot/eval/vm_python/pyautogui.py",
}


def test_surfaces_reach_backends_only_through_the_registry() -> None:
    backend = re.compile(r"^deskpilot\.desktop\.(x11|atspi|xdg|wayland|facade)\b")
    found = {
        rel(p): sorted(m for m in imports(p) if backend.match(m))
        for p in files()
        if (ROOT / "desktop") not in p.parents and rel(p) not in PLATFORM_HELPERS
    }
    assert {k: v for k, v in found.items() if v} == {}
