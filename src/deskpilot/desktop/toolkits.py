"""GUI toolkits and their accessibility: switching it on where it is opt-in, and saying why an
app is not on the accessibility bus.

Most toolkits join the AT-SPI bus when the environment asks (:mod:`~deskpilot.desktop.a11yenv`:
GTK 3/4, Qt, Chromium, Electron, Gecko, LibreOffice). Two load their bridge only as a plug-in
that must be named, and get it here when it is installed (:func:`toolkit_switches`):

* **GTK 2** loads ``gail`` and ``atk-bridge`` as GTK modules: ``GTK2_MODULES=gail:atk-bridge``
  (GTK 2 alone reads ``GTK2_MODULES``; GTK 3 has the bridge built in and never sees it).
  Debian packages: ``libgail-common``, ``libatk-adaptor``.
* **Java** (AWT/Swing) loads the ATK wrapper as an *assistive technology*:
  ``-Djavax.accessibility.assistive_technologies=org.GNOME.Accessibility.AtkWrapper`` with the
  wrapper's jar on the boot class path (an app's own ``-jar`` class path cannot hold it), through
  ``JAVA_TOOL_OPTIONS`` so every JVM sees it, and the wrapper's JNI library's directory on
  ``LD_LIBRARY_PATH`` (a JVM that is not Debian's, e.g. one an app bundles, does not search
  Debian's JNI directory and would stop with an ``UnsatisfiedLinkError``). Debian packages:
  ``libatk-wrapper-java``, ``libatk-wrapper-java-jni``. Both files must be there: a named
  assistive technology that cannot load stops the app.

:func:`diagnose` tells from the libraries a process has mapped (``/proc/PID/maps``) and its
environment which toolkit it is built on and, when it is not on the bus, why and what would
put it there; ``Diagnosis.final`` says when waiting cannot help (a toolkit with no AT-SPI
support, or a bridge that is not loaded by a process already showing its window). The AT-SPI
accessibility port answers ``unreadable`` with it.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from deskpilot import _procfs

GTK2_MODULE_GLOBS = (
    "/usr/lib/*/gtk-2.0/modules",
    "/usr/lib/gtk-2.0/modules",
    "/usr/lib64/gtk-2.0/modules",
)
ATK_WRAPPER_JAR = "/usr/share/java/java-atk-wrapper.jar"
ATK_WRAPPER_JNI_GLOBS = ("/usr/lib/*/jni/libatk-wrapper.so", "/usr/lib/jni/libatk-wrapper.so")
ATK_WRAPPER_CLASS = "org.GNOME.Accessibility.AtkWrapper"


def _first(patterns: Iterable[str]) -> str | None:
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def gtk2_modules() -> list[str]:
    """The GTK 2 accessibility modules installed here, in load order (gail, then atk-bridge)."""
    for pattern in GTK2_MODULE_GLOBS:
        for folder in sorted(glob.glob(pattern)):
            names = [
                n
                for n in ("gail", "atk-bridge")
                if os.path.exists(os.path.join(folder, f"lib{n}.so"))
            ]
            if names:
                return names
    return []


def atk_wrapper() -> tuple[str, str] | None:
    """(jar, JNI library) of Java's ATK wrapper, when both are installed."""
    jni = _first(ATK_WRAPPER_JNI_GLOBS)
    if jni is None or not os.path.exists(ATK_WRAPPER_JAR):
        return None
    return ATK_WRAPPER_JAR, jni


def _join(existing: str | None, value: str, sep: str) -> str:
    parts = [p for p in (existing or "").split(sep) if p]
    return sep.join(parts if value in parts else [*parts, value])


def toolkit_switches(env: Mapping[str, str]) -> dict[str, str]:
    """Variables to set (merged with ``env``'s) so GTK 2 and Java apps join the bus, as far as
    their bridges are installed here (see the module docstring)."""
    out: dict[str, str] = {}
    modules = gtk2_modules()
    if modules:
        value = env.get("GTK2_MODULES")
        for name in modules:
            value = _join(value, name, ":")
        out["GTK2_MODULES"] = value or ""
    wrapper = atk_wrapper()
    if wrapper is not None:
        jar, jni = wrapper
        options = env.get("JAVA_TOOL_OPTIONS", "")
        if ATK_WRAPPER_CLASS not in options:
            extra = (
                f"-Djavax.accessibility.assistive_technologies={ATK_WRAPPER_CLASS} "
                f"-Xbootclasspath/a:{jar}"
            )
            options = f"{options} {extra}".strip()
        out["JAVA_TOOL_OPTIONS"] = options
        out["LD_LIBRARY_PATH"] = _join(env.get("LD_LIBRARY_PATH"), os.path.dirname(jni), ":")
    return out


# -- diagnosis ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Toolkit:
    name: str
    #: substrings of mapped file names that show the toolkit is loaded
    marks: tuple[str, ...]
    #: substrings that show its accessibility bridge is loaded; () = no bridge needed/possible
    bridge: tuple[str, ...] = ()
    #: False: the toolkit has no AT-SPI support at all
    accessible: bool = True


#: Most specific first: an app that maps GTK 3 for its dialogs but is a Java app is Java.
TOOLKITS = (
    Toolkit("Java (AWT/Swing)", ("libawt_xawt.so",), bridge=("libatk-wrapper.so",)),
    Toolkit("GTK 2", ("libgtk-x11-2.0.so",), bridge=("gtk-2.0/modules/libatk-bridge.so",)),
    Toolkit("LibreOffice", ("libvcllo.so", "libmergedlo.so")),
    Toolkit("Gecko", ("libxul.so",)),
    Toolkit("Chromium/Electron", ("v8_context_snapshot.bin", "snapshot_blob.bin", "icudtl.dat")),
    Toolkit("Qt 6", ("libQt6Gui.so",)),
    Toolkit("Qt 5", ("libQt5Gui.so",)),
    Toolkit("GTK 4", ("libgtk-4.so",)),
    Toolkit("GTK 3", ("libgtk-3.so",)),
    Toolkit("Tk", ("libtk8.", "libtk9."), accessible=False),
    Toolkit("Motif", ("libXm.so",), accessible=False),
    Toolkit(
        "Xaw (the X Athena widgets)", ("libXaw.so", "libXaw7.so", "libXaw3d"), accessible=False
    ),
    Toolkit("FLTK", ("libfltk",), accessible=False),
    Toolkit("SDL", ("libSDL2", "libSDL3", "libSDL-1.2"), accessible=False),
)

#: Environment settings that switch a toolkit's accessibility off (variable, values).
BLOCKERS: dict[str, tuple[str, ...]] = {
    "NO_AT_BRIDGE": ("1",),
    "GTK_A11Y": ("none",),
    "QT_ACCESSIBILITY": ("0",),
    "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": ("0",),
}


@dataclass(frozen=True)
class Diagnosis:
    """Why a process is (not) on the accessibility bus."""

    toolkit: str  # "" when none was recognised
    #: True: waiting cannot put it on the bus (the reason and fix say what would)
    final: bool
    reason: str
    fix: str

    def text(self) -> str:
        return f"{self.reason}; {self.fix}" if self.fix else self.reason


def mapped_files(pid: int) -> list[str]:
    """The files a process has mapped (its loaded libraries and data), from /proc/PID/maps."""
    out = set()
    for line in _procfs.read(f"/proc/{pid}/maps").decode(errors="replace").splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            out.add(parts[5])
    return sorted(out)


def process_env(pid: int) -> dict[str, str]:
    out = {}
    for item in _procfs.read(f"/proc/{pid}/environ").split(b"\0"):
        key, sep, value = item.decode(errors="replace").partition("=")
        if sep:
            out[key] = value
    return out


def toolkit_of(files: Iterable[str]) -> Toolkit | None:
    names = list(files)
    for kit in TOOLKITS:
        if any(mark in f for f in names for mark in kit.marks):
            return kit
    return None


def explain(files: Iterable[str], env: Mapping[str, str]) -> Diagnosis:
    """Why a process with these mapped ``files`` and this ``env`` is not on the bus."""
    names = list(files)
    kit = toolkit_of(names)
    blocked = [f"{k}={env[k]}" for k, values in BLOCKERS.items() if env.get(k) in values]
    if kit is None:
        if any("libX11.so" in f for f in names):
            return Diagnosis(
                "",
                False,
                "it is not on the accessibility bus and no toolkit with AT-SPI support is loaded "
                "(it may draw its window with plain X11 calls, which no accessibility tree "
                "describes)",
                "its controls can only be seen in a screenshot and used by coordinates",
            )
        return Diagnosis("", False, "it is not on the accessibility bus (toolkit unknown)", "")
    if not kit.accessible:
        return Diagnosis(
            kit.name,
            True,
            f"it is built on {kit.name}, which has no accessibility (AT-SPI) support",
            "its controls can only be seen in a screenshot and used by coordinates "
            "(computer_use_screenshot, then clicks at points)",
        )
    if kit.bridge and not any(mark in f for f in names for mark in kit.bridge):
        return Diagnosis(kit.name, True, *_missing_bridge(kit.name, env))
    if blocked:
        return Diagnosis(
            kit.name,
            True,
            f"it is a {kit.name} app started with accessibility switched off "
            f"({', '.join(blocked)})",
            f"start it without {', '.join(b.split('=')[0] for b in blocked)}",
        )
    return Diagnosis(
        kit.name,
        False,
        f"it is a {kit.name} app but has not joined the accessibility bus (it may still be "
        "starting)",
        "",
    )


def _missing_bridge(name: str, env: Mapping[str, str]) -> tuple[str, str]:
    if name == "GTK 2":
        installed = gtk2_modules()
        reason = "it is a GTK 2 app, and GTK 2 loads its accessibility bridge only as a module"
        if installed != ["gail", "atk-bridge"]:
            return reason, (
                "install the modules (Debian: apt install libgail-common libatk-adaptor), then "
                "start it again"
            )
        return reason, "start it with GTK2_MODULES=gail:atk-bridge (apps deskpilot starts get it)"
    reason = (
        "it is a Java app, and Java loads its accessibility bridge (the ATK wrapper) only when "
        "named as an assistive technology"
    )
    if atk_wrapper() is None:
        return reason, (
            "install the ATK wrapper (Debian: apt install libatk-wrapper-java-jni), then start "
            "it again"
        )
    if ATK_WRAPPER_CLASS not in env.get("JAVA_TOOL_OPTIONS", ""):
        return reason, (
            f"start it with JAVA_TOOL_OPTIONS='-Djavax.accessibility.assistive_technologies="
            f"{ATK_WRAPPER_CLASS} -Xbootclasspath/a:{ATK_WRAPPER_JAR}' (apps deskpilot starts "
            "get it)"
        )
    return reason, "its JVM did not load the wrapper: see the app's log for the Java error"


def diagnose(pids: Iterable[int]) -> Diagnosis:
    """:func:`explain` for the first of ``pids`` that runs a known toolkit (else the first)."""
    found: list[Diagnosis] = []
    for pid in pids:
        files = mapped_files(pid)
        if not files:
            continue
        verdict = explain(files, process_env(pid))
        if verdict.toolkit:
            return verdict
        found.append(verdict)
    return found[0] if found else Diagnosis("", False, "the process is gone", "")


#: What apps say when they will not run as root.
_REFUSALS = re.compile(
    r"not (supposed|allowed|meant) to (be )?run as root|(don't|do not|cannot|can't) run .{0,20}"
    r"as root|running as root (is|without)|refus\w* to run as root|must not be run as root",
    re.IGNORECASE,
)


def refused_root(output: str) -> bool:
    """Whether an app's output says it will not run as root."""
    return _REFUSALS.search(output) is not None


#: Executables of web browsers: only their windows fold their own toolbar into one line of a
#: read (``chrome``); apps built on a browser engine (Thunderbird, Electron apps) are apps.
WEB_BROWSERS = frozenset(
    {"chromium", "chromium-browser", "chrome", "google-chrome", "google-chrome-stable",
     "brave", "brave-browser", "msedge", "microsoft-edge", "vivaldi", "vivaldi-bin", "opera",
     "firefox", "firefox-esr", "firefox-bin", "librewolf", "waterfox", "epiphany",
     "falkon", "qutebrowser", "midori", "konqueror", "palemoon", "seamonkey"}
)  # fmt: skip


def is_web_browser(executable: str, app_id: str = "") -> bool:
    """Whether an app is a web browser (by its executable, else its desktop id's last part)."""
    names = {executable.casefold(), app_id.casefold().rsplit(".", 1)[-1]}
    return bool(names & WEB_BROWSERS)
