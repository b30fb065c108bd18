"""DesktopFacade: the :class:`~deskpilot.desktop.base.Desktop` of any backend.

A backend hands over its ports (:class:`~deskpilot.desktop.ports.bundle.Ports`: windows, input,
capture, accessibility, launching); the facade builds the skills every backend gets
(:mod:`deskpilot.desktop.skills`) on top of them and answers each Desktop method with the one
port or skill whose job it is — the table in ``__init__`` is the whole of it. It is opened by
:func:`deskpilot.desktop.registry.open_desktop`; nothing else names it.
"""

from __future__ import annotations

from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.skills.aiming import Aiming
from deskpilot.desktop.skills.cells import Cells
from deskpilot.desktop.skills.choosing import Choosing
from deskpilot.desktop.skills.covering import Covering
from deskpilot.desktop.skills.documents import Documents
from deskpilot.desktop.skills.elements import Elements
from deskpilot.desktop.skills.filling import Filling
from deskpilot.desktop.skills.hits import HitTests
from deskpilot.desktop.skills.keyed import CheckedKeys
from deskpilot.desktop.skills.launching import Launching
from deskpilot.desktop.skills.pixels import Pixels
from deskpilot.desktop.skills.pointer import Pointer
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.desktop.skills.reading import Reading
from deskpilot.desktop.skills.scrolling import Scrolling
from deskpilot.desktop.skills.segments import Segments
from deskpilot.desktop.skills.selecting import Selecting
from deskpilot.desktop.skills.tab_closing import TabClosers


class DesktopFacade:
    """A desktop composed of a backend's ports and the skills over them."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.settings = ports.settings
        self.late_windows = ports.late_windows
        windows, launcher = ports.windows, ports.launcher
        # the skills, each given the ports and the skills it builds on
        self.raw = raw = RawInput(ports)
        self.pixels = pixels = Pixels(ports)
        self.reading = reading = Reading(ports, pixels, raw)
        self.launching = launching = Launching(ports, reading)
        self.aiming = aiming = Aiming(ports, reading)
        self.cells = cells = Cells(ports, raw)
        self.choosing = choosing = Choosing(ports, raw)
        self.segments = segments = Segments(ports, raw, aiming)
        filling = Filling(ports, raw, aiming, cells, choosing, segments)
        hits = HitTests(ports)  # one hit-test a point, for the cover check and the click
        closers = TabClosers(reading, pixels, raw)  # GTK 3 tabs' close buttons, drawn only
        covering = Covering(ports, aiming, hits)
        elements = Elements(ports, raw, aiming, cells, choosing, hits, closers, covering)
        pointer, scrolling = Pointer(ports, raw), Scrolling(ports, reading, raw, pixels)
        documents = Documents(ports, launching)
        selecting = Selecting(ports)
        keyed = CheckedKeys(ports, raw)

        # -- windows and apps ---------------------------------------------------------------
        self.list_windows = launching.list_windows
        self.window_handles = windows.handles
        self.active_window = windows.active_window
        self.activate = windows.activate
        self.window_at = windows.window_at
        self.minimize = windows.minimize
        self.close_window = windows.close_window
        self.screen_size = windows.screen_size
        self.apps = launcher.apps
        self.launched_pids = launcher.launched_pids
        self.launch = launching.launch
        self.open_urls = launching.open_urls
        self.open_document = documents.open_document
        self.wait_tree_ready = launching.wait_tree_ready
        self.wait_page_loaded = launching.wait_page_loaded
        self.agent_browser_profile = launching.agent_browser_profile
        # -- accessibility ------------------------------------------------------------------
        self.snapshot = reading.snapshot
        self.inspect = reading.inspect
        self.read_text = reading.read_text
        self.cell_at = reading.cell_at
        self.read_cells = reading.read_cells
        self.focused_element = reading.focused_element
        self.text_caret = reading.text_caret
        self.settle = reading.settle
        self.events_seen = ports.a11y.events_seen
        self.element_at = reading.element_at
        self.covering = covering.covering
        self.click_element = elements.click_element
        self.focus_element = elements.focus_element
        self.fill_element = filling.fill_element
        self.select_text = selecting.select_text
        # -- keyboard and pointer, aimed at a window ----------------------------------------
        self.type_text = raw.type_text
        self.type_into = keyed.type_into
        self.press_keys = raw.press_keys
        self.scroll = scrolling.scroll
        self.element_point = aiming.element_point
        self.point_at = pointer.point_at
        self.drag_in = pointer.drag_in
        # -- pixels and raw input at a point (the native computer tool) ---------------------
        self.capture = pixels.capture
        self.capture_image = pixels.capture_image
        self.pointer_click = raw.pointer_click
        self.pointer_move = raw.pointer_move
        self.pointer_button = raw.pointer_button
        self.pointer_position = raw.pointer_position
        self.pointer_drag = raw.pointer_drag
        self.wheel = raw.wheel
        self.key_event = raw.key_event
        self.type_raw = raw.type_raw

    @property
    def backend(self) -> str:
        """The name of the backend it was built from ("x11", …)."""
        return self.ports.backend

    def lost(self) -> str | None:
        """Why this desktop can no longer be used (the display or its accessibility gone)."""
        return self.ports.lost()

    async def close(self) -> None:
        await self.pixels.finish()  # a grab in a thread: let it end before the grabber closes
        await self.ports.close()
