"""The xdg-desktop-portal path, for real: xdg-desktop-portal + xdg-desktop-portal-gnome on a
headless GNOME (mutter) session deskpilot's client did not start. The consent dialog is the
real one (a GTK 4 window of xdg-desktop-portal-gnome), answered through its accessibility tree
as a person would press its buttons; the client runs as the session's user (the portal serves
only its own user's programs).

Covered for real: the dialog shown on first use; "Cancel" → ConsentRefused with what to do;
"Share" with remote interaction switched on → keyboard + pointer + one monitor stream; the next
start (restored without a dialog where the portal keeps grants — Debian 12's
xdg-desktop-portal-gnome 43 gives no restore token for remote desktop, so there the dialog
comes again) whose keys reach an app; a token the portal does not honour followed by a refusal
→ ConsentRevoked and the token forgotten. And the ``gnome`` backend on this session as on a
user's own (``deskpilot tool`` as the session's user, nothing telling it the session is a
sandbox): input through the portal, a refusal as the tool's text.
Not covered here: a restore token honoured without a dialog (needs xdg-desktop-portal-gnome
≥ 46), KDE's portal, libei (ConnectToEIS: newer portals than Debian 12's 1.16), and the
Screenshot portal (xdg-desktop-portal-gnome hands it to gnome-shell, absent on bare mutter).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskpilot._wait import wait_for
from deskpilot.desktop.wayland.pipewire import FrameReader, opaque_box
from deskpilot.sandbox import Sandbox
from tests.wayland.conftest import (
    do_action,
    focused_window_stream,
    frames_by_pid,
    is_checked,
    require,
    texts_of,
    window_extents,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.app]

ROOT = Path(__file__).resolve().parents[2]
PORTAL = "/usr/libexec/xdg-desktop-portal"
PORTAL_GNOME = "/usr/libexec/xdg-desktop-portal-gnome"
STORE = "/usr/libexec/xdg-permission-store"


@pytest.fixture(scope="module")
def session() -> Iterator[tuple[Sandbox, int]]:
    """A GNOME session with its portals (as its own user); yields it and the GNOME portal's pid."""
    require("gnome")
    if not all(Path(p).exists() for p in (PORTAL, PORTAL_GNOME, STORE)):
        pytest.skip("xdg-desktop-portal, -gnome and xdg-permission-store are not installed")
    with Sandbox(kind="gnome", width=1024, height=768) as sb:
        assert sb.info is not None
        sb.spawn([STORE, "--replace"], log="permission-store.log")
        gnome = sb.spawn([PORTAL_GNOME, "--replace"], log="portal-gnome.log")
        # the portal picks its backends when it starts: the GNOME one must be there first
        wait_for(
            lambda: _has_name(sb, "org.freedesktop.impl.portal.desktop.gnome"),
            timeout=30,
            what="the GNOME portal backend",
        )
        sb.spawn([PORTAL, "--replace"], log="portal.log")
        wait_for(
            lambda: _has_name(sb, "org.freedesktop.portal.Desktop"),
            timeout=30,
            what="the desktop portal",
        )
        yield sb, gnome.pid


def _has_name(sb: Sandbox, name: str) -> bool:
    from deskpilot.sandbox.compositors import _has_name as has

    assert sb.info is not None
    return has({"DBUS_SESSION_BUS_ADDRESS": sb.info.session_bus, "PATH": "/usr/bin:/bin"}, name)


def _run(
    sb: Sandbox, gnome_pid: int, token: Path, *extra: str, answer: str | None, log: str
) -> dict[str, object]:
    assert sb.info is not None
    proc = sb.spawn(
        [sys.executable, "-m", "tests.wayland.portal_client", str(token), *extra],
        cwd=str(ROOT),
        log=log,
    )
    if answer is not None:
        _answer(sb, gnome_pid, proc, answer, log)
    code = proc.wait(timeout=90)
    out = Path(sb.info.runtime_dir, log).read_text().strip().splitlines()
    assert code == 0 and out, out
    result: dict[str, object] = json.loads(out[-1])
    if answer is None:
        assert "Remote desktop" not in frames_by_pid(sb.info.session_bus).get(gnome_pid, [])
    return result


def _answer(
    sb: Sandbox, gnome_pid: int, proc: subprocess.Popen[bytes], answer: str, log: str
) -> None:
    """Answer the portal's consent dialog, shown for ``proc``, as a person would: "Cancel", or
    "Share" with the monitor picked and remote interaction switched on."""
    assert sb.info is not None
    bus, run = sb.info.session_bus, sb.info.runtime_dir
    wait_for(
        lambda: (
            proc.poll() is not None or "Remote desktop" in frames_by_pid(bus).get(gnome_pid, [])
        ),
        timeout=60,
        what="the consent dialog",
    )
    assert proc.poll() is None, Path(run, log).read_text()
    if answer == "Share":  # pick the (only) monitor, allow interaction, then share
        x, y, w, h = wait_for(
            lambda: _try(lambda: window_extents(bus, gnome_pid, "list item", "MetaVendor")),
            timeout=20,
            what="the monitor in the dialog",
        )
        # (GTK 4 rows have no accessible action: a click)
        asyncio.run(_click_in_focused_window(bus, run, x + w // 2, y + h // 2))
        # and remote interaction (the dialog's switch starts off)
        switch = ("switch", "Allow remote interaction")
        if not is_checked(bus, gnome_pid, *switch):
            x, y, w, h = window_extents(bus, gnome_pid, *switch)
            asyncio.run(_click_in_focused_window(bus, run, x + w // 2, y + h // 2))
            wait_for(
                lambda: is_checked(bus, gnome_pid, *switch),
                timeout=20,
                what="remote interaction to be allowed",
            )
    wait_for(
        lambda: do_action(bus, gnome_pid, "button", f"_{answer} {answer}"),
        timeout=20,
        what=f"the dialog's {answer} button",
    )


def _try(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except LookupError:
        return None


async def _click_in_focused_window(bus: str, run: str, x: int, y: int) -> None:
    """Click at (x, y) of the focused GTK 4 window (the dialog), through Mutter: GTK 4's
    window coordinates start at the window's opaque body, which its own frame shows."""
    session = await focused_window_stream(bus)
    try:
        assert session.stream is not None
        frames = FrameReader(session.stream.node_id, session.stream.size, runtime_dir=run)
        try:
            body = opaque_box(frames.frame_rgba(timeout=20))
        finally:
            frames.close()
        assert body is not None, "the window's own frame shows no window"
        await session.move(body[0] + x, body[1] + y)
        await session.button("left", True)
        await session.button("left", False)
    finally:
        await session.close()


def test_consent_refused_granted_restored_revoked(session: tuple[Sandbox, int]) -> None:
    sb, gnome_pid = session
    assert sb.info is not None
    token = Path(sb.info.home, "portal-token")

    refused = _run(sb, gnome_pid, token, answer="Cancel", log="portal-1.log")
    assert refused["error"] == "ConsentRefused"
    assert "Run the command again" in str(refused["message"]) and not token.exists()

    granted = _run(sb, gnome_pid, token, answer="Share", log="portal-2.log")
    assert "devices" in granted, granted
    assert granted["devices"] == 3  # keyboard | pointer
    streams = granted["streams"]
    assert isinstance(streams, list) and len(streams) == 1 and streams[0][1] == [1024, 768]
    assert granted["restored"] is False
    assert granted["token_saved"] is granted["token_offered"]

    # the next start: with a kept grant, no dialog; without one (Debian 12's
    # xdg-desktop-portal-gnome 43 keeps none for remote desktop), the dialog again. Either way
    # the keys reach the focused app
    entry = sb.spawn(["zenity", "--entry", "--text=portal"], log="portal-entry.log")
    wait_for(
        lambda: frames_by_pid(sb.info.session_bus).get(entry.pid),
        timeout=30,  # type: ignore[union-attr]
        what="the entry dialog",
    )
    kept = bool(granted["token_offered"])
    again = _run(
        sb,
        gnome_pid,
        token,
        "type",
        "via the portal",
        answer=None if kept else "Share",
        log="portal-3.log",
    )
    assert again["restored"] is kept and again["devices"] == 3
    assert entry.wait(timeout=30) == 0
    typed = Path(sb.info.runtime_dir, "portal-entry.log").read_text().splitlines()
    assert "via the portal" in typed

    # a token the portal does not honour (revoked, or never kept), then the user says no:
    # revoked, and the token forgotten
    token.write_text("deskpilot-stale-grant")
    revoked = _run(sb, gnome_pid, token, answer="Cancel", log="portal-4.log")
    assert revoked["error"] == "ConsentRevoked", revoked
    assert "no longer valid" in str(revoked["message"]) and not token.exists()


def _deskpilot(sb: Sandbox, args: list[str], log: str) -> subprocess.Popen[bytes]:
    """``deskpilot ARGS`` as the session's own user, as on a desktop deskpilot did not start:
    nothing tells it the session is a sandbox (DESKPILOT_SANDBOX empty), ``auto`` finds GNOME."""
    assert sb.info is not None
    home = str(Path(sb.info.home, "deskpilot-user"))
    return sb.spawn(
        [sys.executable, "-m", "deskpilot", *args],
        env={"DESKPILOT_HOME": home, "DESKPILOT_SANDBOX": ""},
        cwd=str(ROOT),
        log=log,
    )


def _tool(sb: Sandbox, name: str, args: dict[str, object], log: str) -> subprocess.Popen[bytes]:
    return _deskpilot(sb, ["tool", name, json.dumps(args)], log)


def _result(sb: Sandbox, proc: subprocess.Popen[bytes], log: str) -> tuple[int, str]:
    assert sb.info is not None
    code = proc.wait(timeout=120)
    return code, Path(sb.info.runtime_dir, log).read_text()


def test_the_gnome_backend_on_a_user_session_goes_through_the_portal(
    session: tuple[Sandbox, int],
) -> None:
    """The backend on a session it did not start: keys through the portal once the dialog is
    answered "Share", a click on an element, both seen in zenity's own output; "Cancel" → the
    tool's result says what the user must do (text, no traceback) and nothing was typed."""
    sb, gnome_pid = session
    assert sb.info is not None
    bus = sb.info.session_bus
    entry = sb.spawn(
        ["zenity", "--entry", "--title=user session", "--text=name"], log="user-entry.log"
    )
    wait_for(lambda: frames_by_pid(bus).get(entry.pid), timeout=30, what="the entry dialog")
    wid = f"{entry.pid}/user session"

    listed = _tool(sb, "read_screen_ax", {"windowID": wid}, "user-1.log")
    code, read = _result(sb, listed, "user-1.log")  # reading asks nobody
    field = re.search(r"textbox[^@\n]*@(\S+)", read)
    button = re.search(r'button "OK".*?@(\S+)', read)
    assert code == 0 and field and button, read
    assert "Remote desktop" not in frames_by_pid(bus).get(gnome_pid, [])

    # refused: the result says so and what to do; nothing reached the entry
    typing = {
        "windowID": wid,
        "steps": [{"action": "type", "elementID": field.group(1), "text": "refused"}],
    }
    proc = _tool(sb, "perform_sequence", typing, "user-2.log")
    _answer(sb, gnome_pid, proc, "Cancel", "user-2.log")
    code, refused = _result(sb, proc, "user-2.log")
    assert code != 0 and "declined the desktop's permission dialog" in refused, refused
    assert "Run the command again" in refused and "Traceback" not in refused, refused
    assert texts_of(bus, entry.pid) == [""], texts_of(bus, entry.pid)

    # a Wayland window's own pixels: refused with the reason, before anyone is asked
    proc = _tool(sb, "computer_use_screenshot", {"windowID": wid}, "user-shot.log")
    code, shot = _result(sb, proc, "user-shot.log")
    assert code != 0 and "own pixels cannot be taken" in shot, shot
    assert "Remote desktop" not in frames_by_pid(bus).get(gnome_pid, [])

    # granted: the keys land (two typing steps, one dialog: the grant is kept for the
    # process's life — a second dialog would leave the tool waiting), then a click on OK (an
    # element: AT-SPI's action)
    steps = {
        "windowID": wid,
        "steps": [
            {"action": "type", "elementID": field.group(1), "text": "through the"},
            {"action": "type", "elementID": field.group(1), "text": " portal, Zürich"},
            {"action": "click", "elementID": button.group(1)},
        ],
    }
    proc = _tool(sb, "perform_sequence", steps, "user-3.log")
    _answer(sb, gnome_pid, proc, "Share", "user-3.log")
    code, done = _result(sb, proc, "user-3.log")
    assert code == 0, done
    assert entry.wait(timeout=30) == 0
    out = Path(sb.info.runtime_dir, "user-entry.log").read_text().splitlines()
    assert "through the portal, Zürich" in out, out  # "ü": the toolkit's Unicode entry

    # doctor names the way, and once the dialog is answered the screen's pixels come through
    # the portal's own PipeWire connection
    proc = _deskpilot(sb, ["doctor"], "user-doctor.log")
    _answer(sb, gnome_pid, proc, "Share", "user-doctor.log")
    code, report = _result(sb, proc, "user-doctor.log")
    assert code == 0, report
    assert "through xdg-desktop-portal" in report and "auto picks: gnome" in report, report
    assert "input: PortalInput" in report and "capture: 1024x768 screenshot" in report, report


def test_a_pointer_click_through_the_portal_lands_in_an_x11_window(
    session: tuple[Sandbox, int],
) -> None:
    """An X11 app on Xwayland knows its place: a click at its Yes button's place goes through
    the portal's pointer (screen points in the shared monitor) and answers the question
    (zenity's exit code); a click at a point of a Wayland window is refused with the reason."""
    sb, gnome_pid = session
    assert sb.info is not None
    bus = sb.info.session_bus
    question = sb.spawn(
        ["zenity", "--question", "--title=portal X11", "--text=x"], env={"GDK_BACKEND": "x11"}
    )
    try:
        wait_for(lambda: frames_by_pid(bus).get(question.pid), timeout=30, what="the question")
        fx, fy, _w, _h = window_extents(bus, question.pid, "dialog", "portal X11", coords=0)
        assert (fx, fy) != (0, 0)  # on the screen, where Xwayland's window is
        bx, by, bw, bh = window_extents(bus, question.pid, "push button", "Yes", coords=0)
        click = {
            "action": "click",
            "x": bx - fx + bw // 2,
            "y": by - fy + bh // 2,
            "windowID": f"{question.pid}/portal X11",
        }
        proc = _tool(sb, "perform", click, "user-x11.log")
        _answer(sb, gnome_pid, proc, "Share", "user-x11.log")
        code, done = _result(sb, proc, "user-x11.log")
        assert code == 0 and 'on button "Yes"' in done, done
        assert question.wait(timeout=20) == 0  # "Yes"; "No" would be 1
    finally:
        if question.poll() is None:
            question.kill()
            question.wait(timeout=10)

    # a Wayland window's point: no screen place through the portal — refused, nothing pressed
    entry = sb.spawn(["zenity", "--question", "--title=portal Wayland", "--text=y"])
    try:
        wait_for(lambda: frames_by_pid(bus).get(entry.pid), timeout=30, what="the question")
        x, y, w, h = window_extents(bus, entry.pid, "push button", "Yes")
        click = {
            "action": "click",
            "x": x + w // 2,
            "y": y + h // 2,
            "windowID": f"{entry.pid}/portal Wayland",
        }
        proc = _tool(sb, "perform", click, "user-wl.log")
        code, refused = _result(sb, proc, "user-wl.log")
        assert code != 0 and "cannot aim the pointer" in refused, refused
        assert "Traceback" not in refused and entry.poll() is None  # nothing answered it
    finally:
        entry.kill()
        entry.wait(timeout=10)
