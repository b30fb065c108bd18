"""Which backend a desktop is built from: the one place that names them.

A :class:`Backend` is a name, how to tell that it fits the session (``detect``: the reason, or
None), how to find the desktop the settings leave out (``resolve``: discovery) and how to open
its ports (``open``). The built-in ones are listed by module below and imported only when
needed (opening X11 imports python-xlib; listing the backends does not). More can be added
with :func:`register` — a plugin, or a test's toy backend.

The setting ``backend`` (config file ``backend = "x11"``, ``DESKPILOT_BACKEND``,
``--backend``) chooses one by name; ``"auto"`` (the default) takes the first, by priority,
whose ``detect`` says it fits. :func:`open_desktop` then composes the desktop
(:class:`~deskpilot.desktop.facade.DesktopFacade`) from its ports.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from deskpilot.config import Settings
from deskpilot.desktop.base import OpenedDesktop
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import PixelWatch
from deskpilot.errors import ConfigError, DesktopError, DisplayUnavailable

#: Modules of the built-in backends, each with a ``BACKEND``.
BUILTIN = (
    "deskpilot.desktop.x11.backend",
    "deskpilot.desktop.wayland.wlroots",
    "deskpilot.desktop.wayland.gnome",
)


def _as_is(settings: Settings) -> Settings:
    return settings


@dataclass(frozen=True)
class Backend:
    """One way to reach a desktop (see the module docstring)."""

    name: str
    #: open the ports on the desktop the (resolved) settings name
    open: Callable[[Settings], Awaitable[Ports]]
    #: why this backend fits the session the settings describe; None when it does not
    detect: Callable[[Settings], str | None]
    #: the settings with the desktop filled in where they leave it out (discovery)
    resolve: Callable[[Settings], Settings] = field(default=_as_is)
    #: "auto" asks backends with a higher priority first (the fallback has the lowest)
    priority: int = 0
    #: one line for ``--help`` and errors
    summary: str = ""
    #: a live preview's pixels on a display, for the console ("root": the screen is the
    #: session's alone; "window": only the window's own pixels); None: no previews
    preview: Callable[[str, str], PixelWatch] | None = None
    #: the titles of a display's windows over a connection of their own (eval's checkers
    #: read the end state through a channel the agent's tools do not use); None: cannot
    titles: Callable[[str], list[str]] | None = None
    #: the kind of sandbox desktop (``deskpilot.sandbox``: "x11", "sway", "gnome") whose
    #: session this backend drives: what a surface starts when asked for a sandbox with this
    #: backend named
    sandbox: str = "x11"


_REGISTERED: dict[str, Backend] = {}
_loaded = False


def register(backend: Backend) -> None:
    """Add (or replace) a backend by its name."""
    if not backend.name or backend.name == "auto" or not backend.name.isidentifier():
        raise ValueError(f"a backend needs a plain name other than 'auto', not {backend.name!r}")
    _REGISTERED[backend.name] = backend


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def backends() -> list[Backend]:
    """Every backend, the ones "auto" asks first first."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN:
            builtin: Backend = importlib.import_module(module).BACKEND
            _REGISTERED.setdefault(builtin.name, builtin)
    return sorted(_REGISTERED.values(), key=lambda b: -b.priority)


def names() -> list[str]:
    return ["auto", *sorted(b.name for b in backends())]


def choose(settings: Settings) -> Backend:
    """The backend the settings name, or (``auto``) the first that fits the session."""
    known = {b.name: b for b in backends()}
    if settings.backend != "auto":
        if settings.backend not in known:
            raise ConfigError(
                f"backend {settings.backend!r} is not known: use one of {', '.join(names())}"
            )
        return known[settings.backend]
    for backend in known.values():
        if backend.detect(settings) is not None:
            return backend
    raise DisplayUnavailable(
        "no desktop backend fits this session (tried "
        + ", ".join(known)
        + "); set backend in the config file or DESKPILOT_BACKEND"
    )


def sandbox_kind(settings: Settings) -> str:
    """The kind of sandbox to start for these settings: the named backend's ("wlroots" runs on
    a sway sandbox); X11's when none is named (``auto``)."""
    if settings.backend == "auto":
        return "x11"
    return choose(settings).sandbox


def resolve(settings: Settings) -> Settings:
    """The settings with the chosen backend's desktop filled in where they leave it out."""
    return choose(settings).resolve(settings)


def open_preview(backend: str, display: str, mode: str) -> PixelWatch:
    """A pixel watch on ``display`` from the backend named (DesktopError when it has none)."""
    known = {b.name: b for b in backends()}
    chosen = known.get(backend)
    if chosen is None or chosen.preview is None:
        raise DesktopError(f"the {backend} backend has no live preview")
    return chosen.preview(display, mode)


def window_titles(display: str, backend: str = "auto") -> list[str]:
    """The titles of the windows on ``display``, read by the backend that fits it, on a
    connection of its own (CheckBroken when it cannot be reached); a named backend that cannot
    list them on its own leaves it to the one that fits the display (Xwayland's X11 titles)."""
    chosen = choose(Settings(display=display, backend=backend))
    if chosen.titles is None and backend != "auto":
        chosen = choose(Settings(display=display))
    if chosen.titles is None:
        raise DesktopError(f"the {chosen.name} backend cannot list window titles on its own")
    return chosen.titles(display)


async def open_resolved(settings: Settings) -> OpenedDesktop:
    """The desktop the settings name as they are (a sandbox's, or :func:`resolve`'s)."""
    backend = choose(settings)
    return DesktopFacade(await backend.open(settings))


async def open_desktop(settings: Settings) -> OpenedDesktop:
    """The desktop the settings name, found where they name none."""
    backend = choose(settings)
    return DesktopFacade(await backend.open(backend.resolve(settings)))
