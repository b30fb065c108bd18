"""Apps of every toolkit on a headless sway, as native Wayland clients (Qt, LibreOffice with
its GTK 3 VCL plug-in, Chromium on ozone-wayland, GTK 4), and an app pinned to X11 on the
session's Xwayland: each read, an element acted on, text typed, through the real ToolSet.

Each effect is checked outside the tools: the file the app saved, the lines the probe apps
log (tests/fixtures/apps), the title a page gives itself in sway's tree; that each app is the
kind of client it should be (``xdg_shell`` or ``xwayland``) comes from sway's tree too.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.a11yenv import chromium_flags
from deskpilot.desktop.base import WindowInfo
from tests.desktop.helpers import find_id
from tests.wayland.sway_rig import FIXTURES, SwayRig, sway_rig

__all__ = ["sway_rig"]

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.sandbox, pytest.mark.app]

PYTHON = "/usr/bin/python3"  # Debian's, with PyGObject (the probes' toolkit bindings)


def needs(program: str, package: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shutil.which(program) is None,
        reason=f"{program} is not installed (apt install {package}: scripts/apt-packages.txt)",
    )


async def shell_of(rig: SwayRig, window: WindowInfo) -> str:
    return next(v.shell for v in await rig.views() if v.con_id == window.handle)


async def read_until(rig: SwayRig, window: WindowInfo, wanted: str) -> str:
    async def read() -> str | None:
        text = (await rig.call("read_screen_ax", {"windowID": window.stable_id})).text
        return text if wanted in text else None

    return await async_wait_for(read, timeout=30, what=f"{wanted!r} in the read")


async def logged(rig: SwayRig, name: str, line: str) -> None:
    async def there() -> bool:
        return line in rig.log(name)

    await async_wait_for(there, timeout=15, what=f"{line!r} in {name}")


@needs("featherpad", "featherpad qtwayland5")
async def test_a_qt_editor_typed_into_and_saved_by_its_toolbar_button(sway_rig: SwayRig) -> None:
    notes = sway_rig.home / "notes.txt"
    notes.write_text("first line\n")
    sway_rig.give(notes)
    pad = await sway_rig.spawn(
        ["featherpad", "--standalone", str(notes)], match=lambda w: "notes.txt" in w.title
    )
    try:
        assert await shell_of(sway_rig, pad) == "xdg_shell"  # Qt's own Wayland client
        text = await read_until(sway_rig, pad, 'textbox = "first line"')
        assert 'button "Save" [disabled]' in text, text
        typed = await sway_rig.call(
            "perform_sequence",
            {
                "windowID": pad.stable_id,
                "steps": [
                    {"action": "click", "elementID": find_id(text, "textbox")},
                    {"action": "shortcut", "shortcut": "ctrl+end"},
                    {"action": "type", "text": "typed on Wayland: Zürich"},
                ],
            },
        )
        assert not typed.is_error, typed.text
        assert "typed on Wayland: Zürich" in typed.text, typed.text  # the read-back change
        text = await read_until(sway_rig, pad, 'button "Save" @')  # enabled by the edit
        saved = await sway_rig.call(
            "perform", {"windowID": pad.stable_id, "elementID": find_id(text, "button", "Save")}
        )
        assert not saved.is_error, saved.text

        async def written() -> bool:
            return "typed on Wayland: Zürich" in notes.read_text()

        await async_wait_for(written, timeout=15, what="the file saved")
        assert notes.read_text().startswith("first line\ntyped on Wayland: Zürich")
    finally:
        await sway_rig.close(pad)


@needs("soffice", "libreoffice-writer libreoffice-gtk3")
async def test_libreoffice_writer_typed_into_and_saved_through_its_dialog(
    sway_rig: SwayRig,
) -> None:
    """Writer on GTK 3's Wayland backend; saving a text file asks to keep the format, in a
    dialog whose accessible frame is named otherwise ("Question") and is the window plus its
    client-side shadow."""
    letter = sway_rig.home / "letter.txt"
    letter.write_text("Dear reader\n")
    sway_rig.give(letter)
    writer = await sway_rig.spawn(
        ["soffice", "--writer", "--norestore", str(letter)],
        match=lambda w: "letter" in w.title,
        timeout=120,
    )
    try:
        assert await shell_of(sway_rig, writer) == "xdg_shell"
        text = await read_until(sway_rig, writer, 'para = "Dear reader"')
        typed = await sway_rig.call(
            "perform_sequence",
            {
                "windowID": writer.stable_id,
                "steps": [
                    {"action": "click", "elementID": find_id(text, "para")},
                    {"action": "shortcut", "shortcut": "ctrl+end"},
                    {"action": "type", "text": ", greetings from sway"},
                ],
            },
        )
        assert 'para = "Dear reader, greetings from sway"' in typed.text, typed.text
        save = find_id(text, "button", "Save")
        saved = await sway_rig.call("perform", {"windowID": writer.stable_id, "elementID": save})
        assert not saved.is_error and "Confirm File Format" in saved.text, saved.text
        dialog = next(
            w
            for w in await sway_rig.desktop.list_windows()
            if w.pid == writer.pid and w.title == "Confirm File Format"
        )
        asked = await read_until(sway_rig, dialog, 'button "Use Text Format"')
        text_format = find_id(asked, "button", "Use Text Format")
        keep = await sway_rig.call(
            "perform", {"windowID": dialog.stable_id, "elementID": text_format}
        )
        assert not keep.is_error, keep.text
        # the pointer went where the button is: inside the dialog, not its shadow (shown
        # there beside the button's action, or a GTK button in sight clicked by it)
        at = re.search(r"(?:the pointer on it|pointer click) at \((\d+), (\d+)\)", keep.text)
        assert at, keep.text
        g = dialog.geometry
        assert g.x <= int(at.group(1)) < g.x + g.width and g.y <= int(at.group(2)) < g.y + g.height

        async def written() -> bool:
            return "greetings from sway" in letter.read_text(encoding="utf-8-sig")

        await async_wait_for(written, timeout=20, what="the letter saved")
        assert letter.read_text(encoding="utf-8-sig").strip() == "Dear reader, greetings from sway"
    finally:
        await sway_rig.close(writer)


PAGE = """<!doctype html><title>page ready</title><label for=c>City</label> <input id=c>
<button onclick="document.title='city: '+document.getElementById('c').value">Send</button>"""


@needs("chromium", "chromium")
async def test_chromium_on_ozone_wayland_typed_into_and_clicked(sway_rig: SwayRig) -> None:
    page = sway_rig.home / "form.html"
    page.write_text(PAGE)
    sway_rig.give(page)
    argv = [
        "chromium",
        *chromium_flags(),
        f"--user-data-dir={sway_rig.home}/chromium-profile",
        "--no-first-run",
        "--password-store=basic",
        page.as_uri(),
    ]
    browser = await sway_rig.spawn(argv, match=lambda w: "page ready" in w.title, timeout=90)
    try:
        assert await shell_of(sway_rig, browser) == "xdg_shell"  # ozone's Wayland platform
        text = await read_until(sway_rig, browser, 'textbox "City"')
        # Chromium takes a key's meaning from its code: punctuation, a space and characters the
        # keymap adds must arrive too (they sit on printable keys' codes: wlr_input)
        done = await sway_rig.call(
            "perform_sequence",
            {
                "windowID": browser.stable_id,
                "steps": [
                    {"action": "click", "elementID": find_id(text, "textbox", "City")},
                    {"action": "type", "text": "Zürich 8€, ok?"},
                    {"action": "click", "elementID": find_id(text, "button", "Send")},
                ],
            },
        )
        assert not done.is_error, done.text

        async def renamed() -> bool:
            return any(v.title.startswith("city: Zürich 8€, ok?") for v in await sway_rig.views())

        await async_wait_for(renamed, timeout=15, what="the page's new title in sway's tree")
    finally:
        await sway_rig.close(browser)


async def test_a_gtk4_app_typed_into_and_its_button_clicked(sway_rig: SwayRig) -> None:
    log = "gtk4-probe.txt"
    probe = await sway_rig.spawn(
        [PYTHON, str(FIXTURES / "gtk4_probe.py"), str(Path(sway_rig.runtime_dir, log))],
        match=lambda w: w.title == "GTK 4 probe",
    )
    try:
        assert await shell_of(sway_rig, probe) == "xdg_shell"
        text = await read_until(sway_rig, probe, 'textbox "Name"')
        done = await sway_rig.call(
            "perform_sequence",
            {
                "windowID": probe.stable_id,
                "steps": [
                    {"action": "click", "elementID": find_id(text, "textbox", "Name")},
                    {"action": "type", "text": "Grüße"},
                    {"action": "click", "elementID": find_id(text, "button", "Greet")},
                    {"action": "click", "elementID": find_id(text, "checkbox", "Loud")},
                ],
            },
        )
        assert not done.is_error, done.text
        await logged(sway_rig, log, "loud=True")
        assert "greeted Grüße" in sway_rig.log(log)
        # what the model reads back is what the app holds (GTK 4.8's GetText(0, -1) is "")
        assert 'textbox "Name" = "Grüße"' in done.text, done.text
    finally:
        await sway_rig.close(probe)


async def test_an_x11_app_on_xwayland_listed_read_clicked_and_typed_into(
    sway_rig: SwayRig,
) -> None:
    """A GTK 3 app pinned to X11 (as an X11-only app is), then GTK 2's demo (X11 only): Xwayland
    windows in sway's tree."""
    log = "x11-probe.txt"
    probe = await sway_rig.spawn(
        [PYTHON, str(FIXTURES / "actions_probe.py"), str(Path(sway_rig.runtime_dir, log))],
        match=lambda w: w.title == "Actions probe",
        env={"GDK_BACKEND": "x11"},
    )
    try:
        assert await shell_of(sway_rig, probe) == "xwayland"
        listed = await sway_rig.call("list_windows")
        assert f"{probe.pid}/{probe.handle}" in listed.text and "Actions probe" in listed.text
        text = await read_until(sway_rig, probe, 'textbox "Notes"')
        done = await sway_rig.call(
            "perform_sequence",
            {
                "windowID": probe.stable_id,
                "steps": [
                    {"action": "click", "elementID": find_id(text, "textbox", "Notes")},
                    {"action": "type", "text": "über X"},
                    {"action": "click", "elementID": find_id(text, "button", "Over")},
                ],
            },
        )
        assert not done.is_error, done.text
        await logged(sway_rig, log, "clicked Over")
        assert "Notes=über X" in sway_rig.log(log)
    finally:
        await sway_rig.close(probe)
    if shutil.which("gtk-demo") is None:
        return
    # GTK 2 has no Wayland backend at all: its demo's row double-clicked with the pointer
    demo = await sway_rig.spawn(["gtk-demo"], match=lambda w: w.title == "GTK+ Code Demos")
    try:
        assert await shell_of(sway_rig, demo) == "xwayland"
        text = await read_until(sway_rig, demo, "row 4: Button Boxes @")
        row = next(ln for ln in text.splitlines() if "row 4: Button Boxes @" in ln)
        done = await sway_rig.call(
            "perform",
            {
                "windowID": demo.stable_id,
                "action": "double_click",
                "elementID": row.rsplit("@", 1)[1],
            },
        )
        assert not done.is_error, done.text

        async def opened() -> bool:
            return any(
                v.title == "Button Boxes" and v.shell == "xwayland" for v in await sway_rig.views()
            )

        await async_wait_for(opened, timeout=20, what="the Button Boxes demo in sway's tree")
    finally:
        await sway_rig.close(demo)
