"""Toolkit accessibility: which switches an app's environment gets, and the diagnosis of an app
that is not on the bus (pure logic over mapped-file lists and environments; the real apps are
in tests/desktop/test_toolkits.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskpilot.desktop import toolkits
from deskpilot.desktop.a11yenv import accessible_env
from deskpilot.desktop.toolkits import ATK_WRAPPER_CLASS, explain, toolkit_switches
from deskpilot.sandbox import services

LIB = "/usr/lib/x86_64-linux-gnu"


@pytest.fixture
def bridges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both opt-in bridges installed (whatever this machine has)."""
    monkeypatch.setattr(toolkits, "gtk2_modules", lambda: ["gail", "atk-bridge"])
    monkeypatch.setattr(
        toolkits, "atk_wrapper", lambda: ("/usr/share/java/w.jar", f"{LIB}/jni/libatk-wrapper.so")
    )


def test_switches_name_the_bridges_and_keep_what_was_set(bridges: None) -> None:
    env = {
        "GTK2_MODULES": "canberra-gtk-module",
        "JAVA_TOOL_OPTIONS": "-Xmx512m",
        "LD_LIBRARY_PATH": "/opt/lib",
    }
    out = toolkit_switches(env)
    assert out["GTK2_MODULES"] == "canberra-gtk-module:gail:atk-bridge"
    assert out["JAVA_TOOL_OPTIONS"] == (
        f"-Xmx512m -Djavax.accessibility.assistive_technologies={ATK_WRAPPER_CLASS} "
        "-Xbootclasspath/a:/usr/share/java/w.jar"
    )
    assert out["LD_LIBRARY_PATH"] == f"/opt/lib:{LIB}/jni"
    # applied twice (a launch from a sandbox's own environment): nothing is doubled
    again = toolkit_switches({**env, **out})
    assert again == out


def test_no_switch_for_a_bridge_that_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    # a named assistive technology that cannot load stops every Java app: never name it then
    monkeypatch.setattr(toolkits, "gtk2_modules", lambda: [])
    monkeypatch.setattr(toolkits, "atk_wrapper", lambda: None)
    assert toolkit_switches({"JAVA_TOOL_OPTIONS": "-Xmx1g"}) == {}
    env = accessible_env({"PATH": "/bin", "JAVA_TOOL_OPTIONS": "-Xmx1g"})
    assert env["JAVA_TOOL_OPTIONS"] == "-Xmx1g" and "GTK2_MODULES" not in env


def test_accessible_env_carries_the_switches(bridges: None) -> None:
    env = accessible_env({"PATH": "/bin"}, sandbox=True)
    assert env["GTK2_MODULES"] == "gail:atk-bridge"
    assert ATK_WRAPPER_CLASS in env["JAVA_TOOL_OPTIONS"]


GTK2 = [f"{LIB}/libgtk-x11-2.0.so.0.2400.33", f"{LIB}/libX11.so.6"]
JAVA = [
    "/usr/lib/jvm/java-17-openjdk-amd64/lib/libawt_xawt.so",
    f"{LIB}/libgtk-3.so.0.2404.32",  # Swing's GTK look: still a Java app
]


def test_gtk2_without_its_bridge_is_final_and_says_how(bridges: None) -> None:
    verdict = explain(GTK2, {})
    assert verdict.toolkit == "GTK 2" and verdict.final
    assert "GTK2_MODULES=gail:atk-bridge" in verdict.fix
    # with the bridge mapped it is a GTK 2 app still starting, not a final verdict
    loaded = explain([*GTK2, f"{LIB}/gtk-2.0/modules/libatk-bridge.so"], {})
    assert not loaded.final


def test_missing_modules_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolkits, "gtk2_modules", lambda: ["atk-bridge"])
    monkeypatch.setattr(toolkits, "atk_wrapper", lambda: None)
    assert "apt install libgail-common libatk-adaptor" in explain(GTK2, {}).fix
    java = explain(JAVA, {})
    assert java.toolkit == "Java (AWT/Swing)" and java.final
    assert "apt install libatk-wrapper-java-jni" in java.fix


def test_java_started_without_the_wrapper(bridges: None) -> None:
    verdict = explain(JAVA, {"JAVA_TOOL_OPTIONS": "-Xmx1g"})
    assert verdict.final and "JAVA_TOOL_OPTIONS=" in verdict.fix
    started = explain(JAVA, {"JAVA_TOOL_OPTIONS": f"-D...={ATK_WRAPPER_CLASS}"})
    assert started.final and "app's log" in started.fix  # named, yet not loaded


@pytest.mark.parametrize(
    ("lib", "name"),
    [
        (f"{LIB}/libtk8.6.so", "Tk"),
        (f"{LIB}/libXaw7.so.7.0.0", "Xaw (the X Athena widgets)"),
        (f"{LIB}/libXm.so.4.0.4", "Motif"),
        (f"{LIB}/libfltk.so.1.3", "FLTK"),
        (f"{LIB}/libSDL2-2.0.so.0.2600.5", "SDL"),
    ],
)
def test_toolkits_without_atspi_are_final(lib: str, name: str) -> None:
    verdict = explain([lib, f"{LIB}/libX11.so.6"], {})
    assert verdict.toolkit == name and verdict.final
    assert "no accessibility (AT-SPI) support" in verdict.reason
    assert "screenshot" in verdict.fix


@pytest.mark.parametrize(
    ("files", "name"),
    [
        ([f"{LIB}/libQt5Gui.so.5", f"{LIB}/libgtk-3.so.0"], "Qt 5"),  # Qt with a GTK theme
        ([f"{LIB}/libgtk-4.so.1"], "GTK 4"),
        (["/usr/lib/firefox-esr/libxul.so", f"{LIB}/libgtk-3.so.0"], "Gecko"),
        (
            ["/usr/lib/chromium/chromium", "/usr/lib/chromium/v8_context_snapshot.bin"],
            "Chromium/Electron",
        ),
        ([f"{LIB}/libreoffice/program/libmergedlo.so"], "LibreOffice"),
    ],
)
def test_accessible_toolkits_are_waited_for(files: list[str], name: str) -> None:
    verdict = explain(files, {})
    assert verdict.toolkit == name and not verdict.final


def test_switched_off_by_the_environment_is_final() -> None:
    verdict = explain([f"{LIB}/libgtk-3.so.0"], {"NO_AT_BRIDGE": "1"})
    assert verdict.final and "NO_AT_BRIDGE=1" in verdict.reason
    assert verdict.fix == "start it without NO_AT_BRIDGE"


def test_unknown_toolkits_are_not_final_at_once() -> None:
    plain = explain([f"{LIB}/libX11.so.6", f"{LIB}/libc.so.6"], {})
    assert plain.toolkit == "" and not plain.final and "plain X11" in plain.reason


def test_the_bus_may_start_only_the_allowed_services(tmp_path: Path) -> None:
    system = tmp_path / "services"
    system.mkdir()
    for name in ("ca.desrt.dconf", "org.freedesktop.portal.Desktop", "org.gtk.vfs.Daemon"):
        (system / f"{name}.service").write_text(f"[D-BUS Service]\nName={name}\nExec=/bin/true\n")
    folder = services.write_service_dir(str(tmp_path), (str(system),))
    assert sorted(p.name for p in Path(folder).iterdir()) == ["ca.desrt.dconf.service"]
    assert services.service_files((str(system),)) == {
        "ca.desrt.dconf": str(system / "ca.desrt.dconf.service")
    }
