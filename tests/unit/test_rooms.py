"""The desktop's rooms keep to what their docstrings allow: only the X11 package imports Xlib,
the skills and the ports import no backend and no platform library, and no surface names a
concrete desktop class (surfaces get desktops from the registry through the place helper)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import deskpilot

ROOT = Path(deskpilot.__file__).parent
SRC = ROOT.parent


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any level (functions and TYPE_CHECKING included)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


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
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if concrete.search(line)
    ]
    assert found == []
