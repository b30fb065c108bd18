"""One X display connection with python-xlib: EWMH windows, activation, XTEST input, capture.

The X11 backend's ports (:mod:`.windows`, :mod:`.input`, :mod:`.capture`) share one
:class:`X11`; this module speaks X (window ids, keysyms), they speak the ports' language.

Measured on Xvfb: listing windows 3.7 ms, activation 10–30 ms,
an XTEST key 0.6 ms and a click 1.6 ms (xdotool: 17 / 106 ms). Xvfb keeps no backing store, so a
covered window captures black unless a Composite redirect is held open on a long-lived
connection; :class:`X11` holds one for its lifetime.
"""

from __future__ import annotations

import contextlib
import select
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from Xlib import XK, X, Xatom, display, error
from Xlib.ext import composite, xtest
from Xlib.protocol import event as xevent

from deskpilot.desktop.base import MouseButton, Rect
from deskpilot.desktop.x11 import probe as x11probe
from deskpilot.desktop.x11.keysyms import char_keysym
from deskpilot.errors import DesktopError, DisplayUnavailable

BUTTONS: dict[str, int] = {"left": 1, "middle": 2, "right": 3, "back": 8, "forward": 9}
WHEEL = {"up": 4, "down": 5, "left": 6, "right": 7}
#: The pointer-state bit of each button that has one (6 and up have none).
BUTTON_MASKS = {
    1: X.Button1Mask,
    2: X.Button2Mask,
    3: X.Button3Mask,
    4: X.Button4Mask,
    5: X.Button5Mask,
}
#: Longest wait (seconds) for the X server to show one pointer event done.
POINTER_SETTLE_S = 1.0


@dataclass(frozen=True)
class XWindow:
    xid: int
    pid: int
    title: str
    wm_class: tuple[str, ...]
    geometry: Rect
    hidden: bool
    desktop: int


#: The properties a window's reading uses (:meth:`X11.window`), and the client list's: a
#: change of any other property leaves what was read as it was.
READ_PROPERTIES = (
    "_NET_WM_PID",
    "_NET_WM_NAME",
    "WM_NAME",
    "WM_CLASS",
    "_NET_WM_STATE",
    "_NET_WM_DESKTOP",
    "_NET_CLIENT_LIST",
)


class X11:
    """One connection to an X display, used from one thread (the event loop's)."""

    def __init__(self, display_name: str | None) -> None:
        if not display_name:
            raise DisplayUnavailable(
                "no X display: DISPLAY is not set. Start a sandbox desktop with "
                "`eval $(deskpilot sandbox up)` (or run a command in one with "
                "`deskpilot sandbox run -- CMD`), or run deskpilot inside your X11 session."
            )
        try:
            self.d = x11probe.adopt(display_name) or display.Display(display_name)
        except (error.DisplayError, error.DisplayConnectionError, OSError) as exc:
            raise DisplayUnavailable(
                f"cannot open X display {display_name}: {exc}. Is the X server (or the sandbox "
                "desktop) running? Check `deskpilot sandbox status`."
            ) from exc
        self.name = display_name
        self.root = self.d.screen().root
        self._atoms: dict[str, int] = {}
        self._spare_keycode: int | None = None
        self._xres: bool | None = None  # the X-Resource extension (pids of pid-less clients)
        #: windows as last read, kept while no X event says anything changed (see _fresh)
        self._known: dict[int, XWindow | None] = {}
        self._watched: set[int] = set()  # client windows whose changes this connection hears
        self._watching_root = False
        self._read_props: set[int] = set()  # atoms of READ_PROPERTIES
        if not self.d.has_extension("XTEST"):
            raise DisplayUnavailable(f"X display {display_name} has no XTEST extension")
        if self.d.has_extension("Composite"):
            with contextlib.suppress(error.XError):
                composite.redirect_subwindows(self.root, composite.RedirectAutomatic)
                self.d.sync()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.d.close()

    def lost(self) -> str | None:
        """Why this connection is dead (the X server went away), or None while it lives.

        No request is sent (a hung server would hang the caller): python-xlib's own error
        flag, then a zero-timeout poll of the socket for a hang-up."""
        conn = self.d.display
        if conn.socket_error is not None:
            return f"the X display {self.name} closed its connection"
        try:
            poller = select.poll()
            poller.register(conn.fileno(), select.POLLHUP | select.POLLERR | select.POLLNVAL)
            events = poller.poll(0)
        except (OSError, ValueError):
            return f"the X display {self.name} connection is broken"
        if any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, mask in events):
            return f"the X display {self.name} hung up (its X server stopped)"
        return None

    # -- atoms and properties --------------------------------------------------------------

    def atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = self.d.intern_atom(name)
        return self._atoms[name]

    def _prop(self, win: Any, name: str, kind: int = X.AnyPropertyType) -> Any:
        try:
            prop = win.get_full_property(self.atom(name), kind)
        except (error.BadWindow, error.BadMatch, error.BadAtom):
            return None
        return None if prop is None else prop.value

    def _text_prop(self, win: Any, name: str) -> str:
        value = self._prop(win, name)
        if value is None:
            return ""
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return str(value)

    # -- windows ---------------------------------------------------------------------------

    def client_ids(self, stacking: bool = False) -> list[int]:
        name = "_NET_CLIENT_LIST_STACKING" if stacking else "_NET_CLIENT_LIST"
        value = self._prop(self.root, name, Xatom.WINDOW)
        return [int(v) for v in value] if value is not None else []

    def client_pids(self) -> dict[int, int]:
        """Each managed window's id with its _NET_WM_PID (0 when unknown or already destroyed).

        X reuses window ids: an app restarted right after its last window closed gets the
        same id, so "is this window new?" needs the pid too.
        """
        out = {}
        for xid in self.client_ids():
            out[xid] = self._pid(self.d.create_resource_object("window", xid))
        return out

    def _pid(self, win: Any) -> int:
        """The window's _NET_WM_PID; for a client that does not set it (Tk, Xaw, plain Xlib
        apps) the pid the X server knows for its local connection (X-Resource); 0 if neither."""
        value = self._prop(win, "_NET_WM_PID", Xatom.CARDINAL)
        if value is not None and len(value):
            return int(value[0])
        if self._xres is None:
            self._xres = self.d.has_extension("X-Resource")
        if not self._xres:
            return 0
        from Xlib.ext import res

        try:
            reply = self.d.res_query_client_ids(
                [{"client": win.id, "mask": res.LocalClientPIDMask}]
            )
        except error.XError:
            return 0
        for found in reply.ids:
            if found.spec.mask == res.LocalClientPIDMask and found.value:
                return int(found.value[0])
        return 0

    def active_xid(self) -> int | None:
        value = self._prop(self.root, "_NET_ACTIVE_WINDOW", Xatom.WINDOW)
        xid = int(value[0]) if value is not None and len(value) else 0
        return xid or None

    def _fresh(self, *, synced: bool = False) -> None:
        """Forget the windows read before any X event since (a window created, destroyed,
        mapped, moved or resized; a title, state, desktop or the active window changed).

        The events are the ones this connection asked for (:meth:`_watch`); the X server
        delivers each before the reply to any later request, so after one round trip (made
        here unless the caller just made one: ``synced``) the queue holds every change made
        before it. Listing windows took ~10 round trips a window, several times per action;
        an unchanged window now costs none."""
        if not synced:
            self.d.sync()
        if not self._watching_root:
            self._watching_root = True
            with contextlib.suppress(error.XError):
                self.root.change_attributes(
                    event_mask=X.SubstructureNotifyMask | X.PropertyChangeMask
                )
        if not self._read_props:
            self._read_props = {self.atom(n) for n in READ_PROPERTIES}
        changed = False
        for _ in range(self.d.pending_events()):
            event = self.d.next_event()
            if event.type == X.DestroyNotify:
                # its id may be given to a new window (X clients reuse freed ids): that one
                # is not heard until it is watched again
                self._watched.discard(event.window.id)
            # a property a window's reading does not use (GTK 4 sets its size hints on every
            # frame of an animation, and the window manager its allowed actions after them)
            # changes nothing kept
            if event.type != X.PropertyNotify or event.atom in self._read_props:
                changed = True
        if changed:
            self._known.clear()

    def _watch(self, win: Any) -> None:
        """Hear a client window's changes (before reading it, so none is missed)."""
        if win.id in self._watched:
            return
        if len(self._watched) > 4096:  # ids of windows long gone
            self._watched.clear()
        self._watched.add(win.id)
        with contextlib.suppress(error.XError):
            win.change_attributes(event_mask=X.StructureNotifyMask | X.PropertyChangeMask)

    def window(self, xid: int, *, synced: bool = False) -> XWindow | None:
        """The window as it is now (``synced``: the caller made a round trip just before)."""
        self._fresh(synced=synced)
        return self._window(xid)

    def _window(self, xid: int) -> XWindow | None:
        if xid in self._known:
            return self._known[xid]
        win = self.d.create_resource_object("window", xid)
        self._watch(win)  # its changes are heard from before it is read
        found = self._read_window(xid, win)
        if found is None:
            # no window has this id (the window manager's client list still names one just
            # destroyed): the watch asked for nothing, and the id's next window, X hands freed
            # ids on (a restarted browser's first window), must be watched when it is read
            self._watched.discard(xid)
        else:
            self._known[xid] = found
        return found

    def _read_window(self, xid: int, win: Any) -> XWindow | None:
        try:
            geo = win.get_geometry()
            pos = win.translate_coords(self.root, 0, 0)
            attrs = win.get_attributes()
        except (error.BadWindow, error.BadDrawable, error.BadMatch):
            return None
        pid = self._pid(win)
        title = self._text_prop(win, "_NET_WM_NAME") or self._text_prop(win, "WM_NAME")
        try:
            cls = win.get_wm_class() or ()
        except error.XError:
            cls = ()
        states = self._prop(win, "_NET_WM_STATE", Xatom.ATOM)
        hidden = bool(states is not None and self.atom("_NET_WM_STATE_HIDDEN") in list(states))
        hidden = hidden or attrs.map_state != X.IsViewable
        desk = self._prop(win, "_NET_WM_DESKTOP", Xatom.CARDINAL)
        return XWindow(
            xid=xid,
            pid=pid,
            title=title,
            wm_class=tuple(cls),
            geometry=Rect(-pos.x, -pos.y, geo.width, geo.height),
            hidden=hidden,
            desktop=int(desk[0]) if desk is not None and len(desk) else 0,
        )

    def windows(self) -> list[XWindow]:
        out = []
        xids = self.client_ids()  # a round trip: the events before it are in the queue
        self._fresh(synced=True)
        for xid in xids:
            w = self._window(xid)
            if w is not None:
                out.append(w)
        return out

    def request_activate(self, xid: int) -> None:
        """Ask the window manager to activate (raise, focus, un-minimize) a window."""
        win = self.d.create_resource_object("window", xid)
        ev = xevent.ClientMessage(
            window=win,
            client_type=self.atom("_NET_ACTIVE_WINDOW"),
            data=(32, [2, X.CurrentTime, self.active_xid() or 0, 0, 0]),
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        self.root.send_event(ev, event_mask=mask)
        self.d.flush()

    def request_minimize(self, xid: int) -> None:
        win = self.d.create_resource_object("window", xid)
        ev = xevent.ClientMessage(
            window=win, client_type=self.atom("WM_CHANGE_STATE"), data=(32, [3, 0, 0, 0, 0])
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        self.root.send_event(ev, event_mask=mask)
        self.d.flush()

    def request_close(self, xid: int) -> None:
        win = self.d.create_resource_object("window", xid)
        ev = xevent.ClientMessage(
            window=win,
            client_type=self.atom("_NET_CLOSE_WINDOW"),
            data=(32, [X.CurrentTime, 2, 0, 0, 0]),
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        self.root.send_event(ev, event_mask=mask)
        self.d.flush()

    def screen_size(self) -> tuple[int, int]:
        s = self.d.screen()
        return int(s.width_in_pixels), int(s.height_in_pixels)

    # -- input -----------------------------------------------------------------------------

    def _keycode_for(self, sym: int) -> tuple[int, bool]:
        """(keycode, needs shift) for a keysym, remapping a spare keycode if none has it."""
        for code, index in self.d.keysym_to_keycodes(sym):
            if index in (0, 1):
                return int(code), index == 1
        code = self._spare()
        self.d.change_keyboard_mapping(code, [(sym, sym, sym, sym)])
        self.d.sync()
        return code, False

    def _spare(self) -> int:
        if self._spare_keycode is None:
            first = self.d.display.info.min_keycode
            count = self.d.display.info.max_keycode - first + 1
            mapping = self.d.get_keyboard_mapping(first, count)
            for offset, syms in enumerate(mapping):
                if not any(syms):
                    self._spare_keycode = first + offset
            if self._spare_keycode is None:
                raise DesktopError("no free keycode to type this character")
        return self._spare_keycode

    def _fake(self, kind: int, detail: int, x: int = 0, y: int = 0) -> None:
        xtest.fake_input(self.d, kind, detail, x=x, y=y)

    def key_event(self, syms: Sequence[int], down: bool) -> None:
        for sym in syms if down else reversed(syms):
            code, _ = self._keycode_for(sym)
            self._fake(X.KeyPress if down else X.KeyRelease, code)
        self.d.sync()

    def press_combo(self, syms: Sequence[int]) -> None:
        """Press keys in order (modifiers first), then release them in reverse order."""
        codes = [self._keycode_for(s)[0] for s in syms]
        for code in codes:
            self._fake(X.KeyPress, code)
        for code in reversed(codes):
            self._fake(X.KeyRelease, code)
        self.d.sync()

    def type_text(self, text: str) -> None:
        shift = self._keycode_for(XK.XK_Shift_L)[0]
        for ch in text:
            code, shifted = self._keycode_for(char_keysym(ch))
            if shifted:
                self._fake(X.KeyPress, shift)
            self._fake(X.KeyPress, code)
            self._fake(X.KeyRelease, code)
            if shifted:
                self._fake(X.KeyRelease, shift)
            self.d.sync()

    # XTest moves the pointer at once but a button event can be handled later: under load a
    # press sent after a motion was seen at the position of a *later* motion (10 of 40 rounds
    # of five quick clicks on a loaded machine). So every pointer event is followed until the
    # server shows it done (the pointer at the target; the button's state bit set or clear)
    # before the next one goes out. Bounded: a grab that freezes the pointer (a window
    # manager's click-to-focus) costs at most POINTER_SETTLE_S per event.

    def _until(self, done: Callable[[Any], bool]) -> None:
        deadline = time.monotonic() + POINTER_SETTLE_S
        while not done(self.root.query_pointer()) and time.monotonic() < deadline:
            pass  # each query is a round trip to the server, which meanwhile handles the event

    def _motion(self, x: int, y: int) -> None:
        self._fake(X.MotionNotify, 0, x, y)
        self._until(lambda q: (q.root_x, q.root_y) == (x, y))

    def _button(self, detail: int, down: bool) -> None:
        self._fake(X.ButtonPress if down else X.ButtonRelease, detail)
        mask = BUTTON_MASKS.get(detail)
        if mask is None:  # buttons 6+ have no state bit to watch
            self.d.sync()
            return
        self._until(lambda q: bool(q.mask & mask) == down)

    def move(self, x: int, y: int) -> None:
        self._motion(x, y)

    def button(self, button: MouseButton | str, down: bool) -> None:
        self._button(BUTTONS[button], down)

    def click(self, x: int, y: int, button: MouseButton | str = "left", count: int = 1) -> None:
        self._motion(x, y)
        for _ in range(count):
            self._button(BUTTONS[button], True)
            self._button(BUTTONS[button], False)

    def wheel(self, direction: str, notches: int) -> None:
        for _ in range(notches):
            self._button(WHEEL[direction], True)
            self._button(WHEEL[direction], False)

    def pointer(self) -> tuple[int, int]:
        q = self.root.query_pointer()
        return int(q.root_x), int(q.root_y)

    @contextlib.contextmanager
    def held(self, syms: Sequence[int]) -> Iterator[None]:
        self.key_event(syms, True)
        try:
            yield
        finally:
            self.key_event(syms, False)

    # -- capture ---------------------------------------------------------------------------

    def capture_window(self, xid: int) -> tuple[int, int, bytes]:
        """(width, height, BGRX bytes) of a window's content, even when it is covered."""
        win = self.d.create_resource_object("window", xid)
        try:
            geo = win.get_geometry()
            img = win.get_image(0, 0, geo.width, geo.height, X.ZPixmap, 0xFFFFFFFF)
        except (error.BadWindow, error.BadDrawable, error.BadMatch) as exc:
            raise DesktopError(f"cannot capture window {xid}: {type(exc).__name__}") from exc
        data = img.data if isinstance(img.data, bytes) else bytes(img.data)
        return int(geo.width), int(geo.height), data
