"""The live previews' stream: one HTTP response per page carrying every frame it shows.

``GET /api/frames?watch=ID&thumbs=1`` answers with a binary stream of frames, each framed as
``[u32 header length][header JSON][u32 body length][JPEG]`` (big-endian): the thumbnails of
every session (``thumbs=1``, for the cards) and the patches and keyframes of the session the
page shows full size (``watch``). A page holds one such stream beside its event stream (two of
a browser's six connections per host, whatever the number of sessions).

:class:`Previews` owns one :class:`~deskpilot.serve.capture.Capturer` per live session and
tells each what is wanted (full frames while a page watches it, thumbnails while a page shows
the cards, nothing otherwise); a capturer lives as long as its session's desktop (a finished
session that keeps its desktop is still shown), and each session's last thumbnail is kept
and sent to every page that shows the cards, so a finished session keeps its picture. A page
that falls behind does not slow the others: its queue is emptied and its next full frame is a
keyframe; thumbnails keep only the latest.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from deskpilot import _procfs
from deskpilot.desktop import registry
from deskpilot.desktop.window_ids import handle_of, pid_of
from deskpilot.serve.capture import Capturer, Frame, Mode, Seen
from deskpilot.serve.sessions import ConsoleSession, Sessions

#: Full frames a page may have queued before it is skipped ahead to a keyframe.
BACKLOG = 30


def pack(frame: Frame) -> bytes:
    header = json.dumps(frame.header(), separators=(",", ":")).encode()
    return b"".join(
        (struct.pack(">I", len(header)), header, struct.pack(">I", len(frame.jpeg)), frame.jpeg)
    )


class WindowOwners:
    """The handle in a ``pid/handle`` window ID while its window can still be the one it named.

    X hands a closed window's id to the next client that connects, so a session whose window
    closed (a finished session keeps its desktop, and its preview, for a follow-up) would show
    another app's window under that id, title and all. Once the process seen owning a window
    has ended, its id names nothing: :meth:`handle` is None from then on. A pid never seen alive
    here (a window without ``_NET_WM_PID``, or one from another pid namespace) is trusted.
    """

    def __init__(self) -> None:
        self._alive: set[int] = set()  # pids seen running

    def handle(self, stable_id: str | None) -> int | None:
        handle = handle_of(stable_id)
        pid = pid_of(stable_id)
        if handle is None or pid is None or pid <= 0:
            return handle
        if not _procfs.is_zombie(pid):
            self._alive.add(pid)
            return handle
        return None if pid in self._alive else handle


class Viewer:
    def __init__(self, watch: str | None, thumbs: bool) -> None:
        self.watch = watch
        self.thumbs = thumbs
        self.queue: asyncio.Queue[Frame | None] = asyncio.Queue()
        self.full_queued = 0


class Previews:
    """Capturers for the live sessions, and the pages that watch them."""

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions
        self.loop: asyncio.AbstractEventLoop | None = None
        self.capturers: dict[str, Capturer] = {}
        self.viewers: set[Viewer] = set()
        self.latest: dict[str, Frame] = {}  # each session's last thumbnail
        sessions.on_running.append(self._started)
        sessions.on_end.append(self._ended)
        sessions.on_close.append(self._closed)

    # -- capturers ----------------------------------------------------------------------------

    def _started(self, session: ConsoleSession) -> None:
        if session.id in self.capturers:  # a continued session: its desktop is still shown
            self._update(session.id)
            return
        # a task's place, or an MCP client's display (this desktop: its tracked window)
        display = session.place.display if session.place is not None else session.display
        if not display or self.loop is None:
            return
        sandbox = session.place is not None and session.place.target == "sandbox"
        mode: Mode = "root" if sandbox else "window"
        loop = self.loop

        owners = WindowOwners()

        def target() -> int | None:
            if sandbox:  # the whole screen; its pids are the sandbox's own
                return handle_of(session.bound_window())
            return owners.handle(session.bound_window())

        def emit(frame: Frame) -> None:
            loop.call_soon_threadsafe(self._deliver, frame)

        def seen(what: Seen) -> None:
            loop.call_soon_threadsafe(self._seen, session.id, what)

        backend = (
            session.place.raw.backend
            if session.place is not None
            else registry.choose(self.sessions.settings).name
        )
        capturer = Capturer(session.id, display, mode, target, emit, seen, backend)
        self.capturers[session.id] = capturer
        capturer.start()
        self._update(session.id)

    def _ended(self, session: ConsoleSession) -> None:
        if session.kind == "task":
            return  # its desktop stays open for a follow-up: still shown until it closes
        self._closed(session)

    def _closed(self, session: ConsoleSession) -> None:
        """Stop capturing before the desktop goes (the last thumbnail stays the real one)."""
        capturer = self.capturers.pop(session.id, None)
        if capturer is not None:
            capturer.stop()

    def _seen(self, session_id: str, what: Seen) -> None:
        session = self.sessions.get(session_id)
        if session is not None and (session.title, session.app) != (what.title, what.app):
            session.title, session.app = what.title, what.app
            self.sessions.changed(session_id)

    def _update(self, session_id: str | None = None) -> None:
        """Tell each capturer (or one) what the pages want of it now."""
        for sid, capturer in self.capturers.items():
            if session_id is not None and sid != session_id:
                continue
            full = any(v.watch == sid for v in self.viewers)
            thumbs = any(v.thumbs for v in self.viewers)
            capturer.want(full=full, thumbs=thumbs)

    # -- frames -------------------------------------------------------------------------------

    def _deliver(self, frame: Frame) -> None:
        if frame.session not in self.capturers:
            return  # grabbed as its desktop was closing: the last real picture stays
        if frame.kind == "thumb":
            self.latest[frame.session] = frame
        for viewer in self.viewers:
            if frame.kind == "thumb":
                if viewer.thumbs:
                    viewer.queue.put_nowait(frame)
                continue
            if viewer.watch != frame.session:
                continue
            if viewer.full_queued >= BACKLOG:  # this page lags: skip it ahead to a keyframe
                self._drain(viewer)
                capturer = self.capturers.get(frame.session)
                if capturer is not None:
                    capturer.keyframe.set()
                if frame.kind != "key":
                    continue
            viewer.full_queued += 1
            viewer.queue.put_nowait(frame)

    @staticmethod
    def _drain(viewer: Viewer) -> None:
        kept = []
        while not viewer.queue.empty():
            item = viewer.queue.get_nowait()
            if item is not None and item.kind == "thumb":
                kept.append(item)
        viewer.full_queued = 0
        for item in kept:
            viewer.queue.put_nowait(item)

    async def stream(self, viewer: Viewer) -> AsyncIterator[bytes]:
        self.viewers.add(viewer)
        try:
            if viewer.thumbs:
                for old in list(self.latest.values()):
                    yield pack(old)
            if viewer.watch in self.capturers:
                self.capturers[viewer.watch].keyframe.set()
            self._update()
            while True:
                frame = await viewer.queue.get()
                if frame is None:
                    return
                if frame.kind != "thumb":
                    viewer.full_queued = max(0, viewer.full_queued - 1)
                elif self.latest.get(frame.session) is not frame:
                    continue  # a newer thumbnail of this session is queued: skip this one
                yield pack(frame)
        finally:
            self.viewers.discard(viewer)
            self._update()

    async def __call__(self, request: Request) -> Response:
        watch = request.query_params.get("watch") or None
        thumbs = request.query_params.get("thumbs", "1") not in ("0", "", "false")
        viewer = Viewer(watch, thumbs)
        return StreamingResponse(
            self.stream(viewer),
            media_type="application/octet-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    # -- lifetime -----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self.loop = asyncio.get_running_loop()
        try:
            yield
        finally:
            self.closing()
            for capturer in list(self.capturers.values()):
                capturer.stop()
            for capturer in list(self.capturers.values()):
                await asyncio.to_thread(capturer.join, 5)
            self.capturers.clear()

    def closing(self) -> None:
        """End every page's stream (the server is stopping)."""
        for viewer in list(self.viewers):
            viewer.queue.put_nowait(None)
