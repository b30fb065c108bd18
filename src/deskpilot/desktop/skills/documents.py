"""Opening a document in an app: the window showing *that* document is the answer.

``open_app`` with a file starts the app with the document (its desktop file's command plus the
path or URL). A single-instance app (LibreOffice, many GTK apps) hands the launch to its
running instance and the launcher exits at once; the instance opens a new window, or brings
back the one already showing the document. So the launch waits for a window whose title
names the document (``fruit.ods - LibreOffice Calc``), whichever process owns it, and:

* a window of the app that appeared but does not name the document (a dialog: "Document in
  Use", a format question) is returned once it has stayed DIALOG_GRACE seconds, with a note;
* a window already showing the document before the launch is the answer when no new one
  comes;
* a timeout is reported only when no window of the app appeared at all.
"""

from __future__ import annotations

import os
import time
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import AppEntry, OpenedDocument, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import WindowHandle, is_new
from deskpilot.desktop.ports.launching import Spawned
from deskpilot.desktop.skills.launching import Launching
from deskpilot.errors import DesktopError, InvalidArguments

#: A new window of the app that does not name the document is returned after this long.
DIALOG_GRACE = 8.0
#: With the launcher gone and no new window, the window already showing the document is the
#: answer after this long.
HANDOFF_GRACE = 3.0


def document_names(document: str) -> tuple[str, ...]:
    """The names a window title may show for a document: its file name, then its stem."""
    parsed = urlparse(document)
    raw = unquote(parsed.path) if parsed.scheme and parsed.scheme != "file" else document
    if parsed.scheme == "file":
        raw = unquote(parsed.path)
    name = PurePosixPath(raw.rstrip("/")).name or parsed.netloc
    stem = PurePosixPath(name).stem
    return tuple(dict.fromkeys(n for n in (name, stem) if n))


def shows(window: WindowInfo, names: tuple[str, ...]) -> bool:
    title = window.title.casefold()
    return any(n.casefold() in title for n in names)


def check_document(document: str) -> str:
    """The document as the app gets it: a URL as is, a path made absolute; a missing local
    file is refused before anything starts."""
    parsed = urlparse(document)
    if parsed.scheme and len(parsed.scheme) > 1:  # a URL (not a Windows drive letter)
        if parsed.scheme == "file" and not Path(unquote(parsed.path)).exists():
            raise InvalidArguments(f"there is no file {unquote(parsed.path)!r}")
        return document
    path = Path(os.path.expanduser(document))
    if not path.exists():
        raise InvalidArguments(f"there is no file {document!r} (give an absolute path)")
    return str(path.resolve())


class Documents:
    """Opening documents in apps."""

    def __init__(self, ports: Ports, launching: Launching) -> None:
        self.windows = ports.windows
        self.launcher = ports.launcher
        self.launching = launching

    async def open_document(
        self, app: AppEntry, document: str, *, timeout: float = 60.0
    ) -> OpenedDocument:
        document = check_document(document)
        names = document_names(document)
        before = await self.windows.handles()
        showing = [w for w in await self.launching.list_windows() if shows(w, names)]
        proc = self.launcher.spawn([*self.launcher.argv_for(app), document])
        deadline = time.monotonic() + timeout
        while True:
            found = await self._document_window(app, names, proc, before, showing, deadline)
            await self.launching.readable(found.window, proc, app)
            await self.launching.wait_tree_ready(
                found.window, max(5.0, deadline - time.monotonic())
            )
            current = await self.windows.window(found.window.handle)
            if current is not None:
                found.window = current
                return found
            # LibreOffice may show a first frame, then replace it with the document's
            before[found.window.handle] = found.window.pid
            if time.monotonic() > deadline:
                raise DesktopError(f"{app.name}'s window for {names[0]} closed as it opened")

    async def _document_window(
        self,
        app: AppEntry,
        names: tuple[str, ...],
        proc: Spawned,
        before: dict[WindowHandle, int],
        showing: list[WindowInfo],
        deadline: float,
    ) -> OpenedDocument:
        seen: dict[
            WindowHandle, float
        ] = {}  # new windows of the app that do not name it: first seen
        gone: list[float] = []

        async def opened() -> OpenedDocument | None:
            now = time.monotonic()
            windows = await self.launching.list_windows()
            fresh = [w for w in windows if is_new(before, w.handle, w.pid) and w.title]
            titled = [w for w in fresh if shows(w, names)]
            if titled:
                return OpenedDocument(titled[-1])
            mine = [w for w in fresh if self._of_app(w, app, proc.pid)]
            for w in mine:
                seen.setdefault(w.handle, now)
            settled = [w for w in mine if now - seen[w.handle] >= DIALOG_GRACE]
            if settled:
                return OpenedDocument(
                    settled[-1],
                    f'A window "{settled[-1].title}" opened instead of one showing '
                    f"{names[0]}: read it (a question or an error about the document).",
                )
            code = proc.poll()
            if code is not None and not gone:
                gone.append(now)
            if code not in (None, 0) and not mine:
                raise DesktopError(
                    f"{app.name} exited with code {code} without opening {names[0]}; see "
                    f"{self.launcher.logs}"
                )
            if gone and showing and not mine and now - gone[0] >= HANDOFF_GRACE:
                current = [w for w in windows if w.handle in {s.handle for s in showing}]
                if current:
                    return OpenedDocument(
                        current[0], f"{names[0]} was already open in this window."
                    )
            return None

        try:
            return await async_wait_for(
                opened, timeout=max(0.1, deadline - time.monotonic()), what=f"{names[0]}'s window"
            )
        except WaitTimeout as exc:
            windows = await self.launching.list_windows()
            late = [
                w
                for w in windows
                if is_new(before, w.handle, w.pid) and self._of_app(w, app, proc.pid)
            ]
            if not late:
                raise DesktopError(
                    f"{app.name} did not open a window for {names[0]} in time; see "
                    f"{self.launcher.logs}"
                ) from exc
            return OpenedDocument(
                late[-1], f'Its window "{late[-1].title}" does not name {names[0]}.'
            )

    def _of_app(self, window: WindowInfo, app: AppEntry, launcher: int) -> bool:
        names = {n.casefold() for n in (app.wm_class, app.executable, app.app_id) if n}
        return (
            window.pid in self.launcher.family([launcher])
            or bool(names & window.app.match_keys())
            or window.app.app_id == app.app_id
        )
